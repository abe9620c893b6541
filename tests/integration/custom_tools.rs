//! Custom tools (`.atomic/tools/*.kdl`) end to end through `atomic run`: an `anthropic`
//! agent calling one against the scripted Messages API fake on 127.0.0.1, an `openai`
//! agent against the Chat Completions fake, a `tool use=`
//! node getting its arguments as JSON on stdin, and an undefined tool refused before
//! anything runs.

use std::time::Duration;

use serde_json::{Value, json};

use crate::support::cli_project::{CliProject, stderr};
use crate::support::fake_openai::{FakeOpenAi, Turn};
use crate::support::scripted_anthropic::{ScriptedAnthropic, Step};
use crate::support::within;

/// A tool whose command is a small `sh` script that replaces `notes.txt` with its `text`
/// argument (read from the JSON object on stdin).
const EDIT_TOOL: &str = r#"tool "edit" description="Replaces the text of notes.txt" {
    argument "text" description="The new text"
    command "sh" ".atomic/tools/edit.sh"
    timeout "20s"
}
"#;

const EDIT_SCRIPT: &str = r#"input=$(cat)
text=$(printf '%s' "$input" | sed -n 's/.*"text":"\([^"]*\)".*/\1/p')
printf '%s\n' "$text" > notes.txt
echo "wrote notes.txt"
"#;

fn edit_flow(base_url: &str) -> String {
    format!(
        r#"workflow "edit-notes" {{
    state {{ field "summary" type="string" default=""; }}
    provider "claude" adapter="anthropic" model="claude-sonnet-4-5" api-key-env="TEST_ANTHROPIC_KEY" base-url="{base_url}"
    agent "edit" provider="claude" {{
        prompt "Rewrite notes.txt to say: new notes"
        tools "edit"
        output "summary"
    }}
}}
"#
    )
}

/// The text of every `tool_result` block in a request body.
fn tool_results(body: &Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|message| message["content"].as_array())
        .flatten()
        .filter(|block| block["type"] == "tool_result")
        .map(|block| match &block["content"] {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_anthropic_agent_edits_a_file_with_a_custom_tool() {
    let fake = ScriptedAnthropic::start(vec![
        Step::Tool {
            name: "edit".to_owned(),
            input: json!({"text": "new notes"}),
        },
        Step::Text("Done: notes.txt now says new notes.".to_owned()),
    ])
    .await;
    let project = CliProject::new();
    project.write(".atomic/tools/edit.kdl", EDIT_TOOL);
    project.write(".atomic/tools/edit.sh", EDIT_SCRIPT);
    project.write("notes.txt", "old notes\n");
    project.write("flow.kdl", &edit_flow(&fake.base_url()));

    let mut command = project.atomic();
    command
        .args(["run", "flow.kdl"])
        .env("TEST_ANTHROPIC_KEY", "test-key");
    let output = within(
        Duration::from_secs(90),
        tokio::task::spawn_blocking(move || command.output().expect("atomic run")),
    )
    .await
    .expect("the run finished");
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(0), "{err}");
    assert_eq!(project.read("notes.txt"), "new notes\n");

    let shown = project.show(&project.last_run());
    assert_eq!(
        shown["state"]["summary"],
        "Done: notes.txt now says new notes."
    );

    // The model was offered the tool with its description and schema, and got its answer.
    let requests = fake.requests();
    let first = requests
        .iter()
        .find(|r| r.has_tools())
        .expect("a tool-use turn");
    let tool = &first.body["tools"][0];
    assert_eq!(tool["name"], "edit");
    assert_eq!(tool["description"], "Replaces the text of notes.txt");
    assert_eq!(tool["input_schema"]["required"], json!(["text"]));
    assert!(
        requests.iter().any(|r| tool_results(&r.body)
            .iter()
            .any(|t| t.contains("wrote notes.txt"))),
        "the tool's stdout went back to the model: {requests:?}"
    );
}

/// The same edit through an `openai` agent: the Chat Completions fake asks for the tool
/// call, the custom tool runs, and its stdout goes back as a `tool` message.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_openai_agent_edits_a_file_with_a_custom_tool() {
    let fake = FakeOpenAi::start();
    fake.push(Turn::tool_call("edit", json!({"text": "newer notes"})))
        .push(Turn::text("Done: notes.txt now says newer notes."));
    let project = CliProject::new();
    project.write(".atomic/tools/edit.kdl", EDIT_TOOL);
    project.write(".atomic/tools/edit.sh", EDIT_SCRIPT);
    project.write("notes.txt", "old notes\n");
    let flow = edit_flow("unused")
        .replace(
            r#"provider "claude" adapter="anthropic" model="claude-sonnet-4-5" api-key-env="TEST_ANTHROPIC_KEY" base-url="unused""#,
            &format!(
                r#"provider "claude" adapter="openai" model="local-model" api-key-env="TEST_OPENAI_KEY" base-url="{}""#,
                fake.url()
            ),
        );
    assert!(flow.contains("adapter=\"openai\""), "{flow}");
    project.write("flow.kdl", &flow);

    let mut command = project.atomic();
    command
        .args(["run", "flow.kdl"])
        .env("TEST_OPENAI_KEY", "test-key");
    let output = within(
        Duration::from_secs(90),
        tokio::task::spawn_blocking(move || command.output().expect("atomic run")),
    )
    .await
    .expect("the run finished");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(project.read("notes.txt"), "newer notes\n");
    let shown = project.show(&project.last_run());
    assert_eq!(
        shown["state"]["summary"],
        "Done: notes.txt now says newer notes."
    );

    let bodies = fake.completion_bodies();
    let tool = &bodies[0]["tools"][0];
    assert_eq!(tool["type"], "function");
    assert_eq!(tool["function"]["name"], "edit");
    assert_eq!(tool["function"]["parameters"]["required"], json!(["text"]));
    let answered = bodies.iter().any(|body| {
        body["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|message| {
                message["role"] == "tool"
                    && message["content"]
                        .as_str()
                        .is_some_and(|text| text.contains("wrote notes.txt"))
            })
    });
    assert!(
        answered,
        "the tool's stdout went back to the model: {bodies:#?}"
    );
}

#[test]
fn a_tool_node_passes_its_args_as_json_on_stdin() {
    let project = CliProject::new();
    project.write(
        ".atomic/tools/echo-args.kdl",
        r#"tool "echo-args" description="Prints its input" {
    argument "word"
    argument "times" type="integer"
    argument "note" required=#false
    command "sh" "-c" "cat; echo"
}
"#,
    );
    project.write(
        "flow.kdl",
        r#"workflow "args" {
    input "word" type="string"
    state {
        field "n" type="integer" default=3
        field "got" type="object" default="{}"
    }
    tool "echo" use="echo-args" idempotent=#true {
        arg "word" "{{ input.word }}!"
        arg "times" "{{ state.n }}"
        output "got" parse="json"
    }
}
"#,
    );
    let output = project
        .atomic()
        .args(["run", "flow.kdl", "--input", "word=hi"])
        .output()
        .expect("atomic run");
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(0), "{err}");
    let shown = project.show(&project.last_run());
    assert_eq!(shown["state"]["got"], json!({"word": "hi!", "times": 3}));
}

#[test]
fn a_custom_tool_times_out_and_an_undefined_one_never_runs() {
    let project = CliProject::new();
    project.write(
        ".atomic/tools/slow.kdl",
        r#"tool "slow" { command "sleep" "30"; timeout "300ms"; }"#,
    );
    project.write(
        "slow.kdl",
        r#"workflow "slow" { tool "wait" use="slow" idempotent=#true; }"#,
    );
    let started = std::time::Instant::now();
    let output = project
        .atomic()
        .args(["run", "slow.kdl", "--store", "memory"])
        .output()
        .expect("atomic run");
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{err}");
    assert!(err.contains("timed out"), "{err}");
    assert!(started.elapsed() < Duration::from_secs(20), "{err}");

    // Checked before anything runs: the first tool would create `ran.txt`.
    project.write(
        "undefined.kdl",
        r#"workflow "undefined" {
    provider "claude" adapter="anthropic" api-key-env="TEST_ANTHROPIC_KEY" base-url="http://127.0.0.1:9"
    tool "first" idempotent=#true { run "touch" "ran.txt"; }
    agent "fix" provider="claude" { prompt "Fix it"; tools "slo"; }
}
"#,
    );
    let output = project
        .atomic()
        .args(["run", "undefined.kdl", "--store", "memory"])
        .env("TEST_ANTHROPIC_KEY", "test-key")
        .output()
        .expect("atomic run");
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{err}");
    assert!(err.contains("atomic::undefined-tool"), "{err}");
    assert!(err.contains("did you mean `slow`?"), "{err}");
    assert!(!project.path().join("ran.txt").exists());
}

/// A broken tool file the workflow does not use is a warning, and the workflow runs; while
/// a tool the workflow names is missing, the same problem is an error (the broken file may
/// be the one meant to declare it).
#[test]
fn an_unused_broken_tool_file_warns_and_does_not_block_the_run() {
    let project = CliProject::new();
    project.write(
        ".atomic/tools/echo.kdl",
        r#"tool "echo" { command "sh" "-c" "cat"; }"#,
    );
    project.write(
        ".atomic/tools/broken.kdl",
        r#"tool "broken" { comand "true"; }"#,
    );
    project.write(
        "uses-echo.kdl",
        r#"workflow "w" { tool "say" use="echo" idempotent=#true; }"#,
    );
    let output = project
        .atomic()
        .args(["run", "uses-echo.kdl", "--store", "memory"])
        .output()
        .expect("atomic run");
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(0), "{err}");
    assert!(
        err.contains("2 warnings"),
        "the problems are still counted: {err}"
    );
    let check = project
        .atomic()
        .args(["check", "uses-echo.kdl"])
        .output()
        .expect("atomic check");
    let shown = String::from_utf8_lossy(&check.stdout).into_owned() + &stderr(&check);
    assert!(
        shown.contains("0 errors, 2 warnings") && shown.contains("broken.kdl"),
        "{shown}"
    );

    project.write(
        "uses-missing.kdl",
        r#"workflow "w" { tool "say" use="brokn" idempotent=#true; }"#,
    );
    let output = project
        .atomic()
        .args(["check", "uses-missing.kdl"])
        .output()
        .expect("atomic check");
    let err = String::from_utf8_lossy(&output.stdout).into_owned() + &stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{err}");
    assert!(err.contains("atomic::undefined-tool"), "{err}");
    assert!(err.contains("broken.kdl"), "{err}");
}

/// A transient failure in the middle of an agent's tool loop, through `atomic run`: the
/// failed model request is retried under the node's `retry` with the conversation so far,
/// and when it keeps failing the step is not run again as a whole, so the custom tool
/// (whose side effect is a line in `runs.log`) ran exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retried_tool_loop_never_runs_a_tool_twice() {
    use crate::support::fake_anthropic::{FakeAnthropic, Turn as Reply};

    for (retry, failures, requests) in [
        // The node's policy: two attempts of the failing request, no step retry after.
        (r#"retry attempts=2 backoff="10ms""#, 2, 3),
        // No `retry`: the SDKs' default, two request retries.
        ("", 3, 4),
    ] {
        let fake = FakeAnthropic::start();
        fake.push(Reply::tool_use("bump", json!({})));
        for _ in 0..failures {
            fake.push(Reply::server_error());
        }
        let project = CliProject::new();
        project.write(
            ".atomic/tools/bump.kdl",
            r#"tool "bump" description="Records that it ran" { command "sh" "-c" "echo ran >> runs.log; echo bumped"; }"#,
        );
        project.write(
            "flow.kdl",
            &format!(
                r#"workflow "bump" {{
    provider "claude" adapter="anthropic" model="claude-sonnet-4-5" api-key-env="TEST_ANTHROPIC_KEY" base-url="{}"
    agent "bumper" provider="claude" {{
        prompt "Bump once"
        tools "bump"
        {retry}
    }}
}}
"#,
                fake.url()
            ),
        );
        let mut command = project.atomic();
        command
            .args(["run", "flow.kdl"])
            .env("TEST_ANTHROPIC_KEY", "test-key");
        let output = within(
            Duration::from_secs(60),
            tokio::task::spawn_blocking(move || command.output().expect("atomic run")),
        )
        .await
        .expect("the run finished");
        let err = stderr(&output);
        assert_eq!(output.status.code(), Some(1), "{err}");
        assert!(err.contains("gave up after"), "{err}");
        assert_eq!(fake.requests().len(), requests, "{retry:?}: {err}");
        assert_eq!(
            project.read("runs.log"),
            "ran\n",
            "{retry:?}: the tool ran once"
        );
    }
}

/// A crash (kill -9) in the middle of an agent's tool loop, then `atomic resume`: the
/// resumed call continues its saved conversation, so the tool that completed before the
/// crash (`bump`, counted in `runs.log`) is not run again; only the one in flight at the
/// crash (`crash`, which killed atomic) runs again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_tool_loop_does_not_repeat_completed_tools() {
    use crate::support::fake_anthropic::{FakeAnthropic, Turn as Reply};
    use crate::support::http_server::Request;

    fn body(request: &Request) -> String {
        String::from_utf8_lossy(&request.body).into_owned()
    }
    let fake = FakeAnthropic::start();
    let fresh = |r: &Request| !body(r).contains("tool_result");
    let bumped = |r: &Request| body(r).contains("bumped") && !body(r).contains("crash-done");
    fake.push_when(fresh, Reply::tool_use("bump", json!({})));
    fake.push_when(bumped, Reply::tool_use("crash", json!({})));
    fake.push_when(bumped, Reply::tool_use("crash", json!({})));
    fake.push_when(|r| body(r).contains("crash-done"), Reply::text("Done."));
    // What a resume that started the conversation over would get: `bump` again.
    fake.push_when(fresh, Reply::tool_use("bump", json!({})));

    let project = CliProject::new();
    project.write(
        ".atomic/tools/bump.kdl",
        r#"tool "bump" description="Records that it ran" { command "sh" "-c" "echo ran >> runs.log; echo bumped"; }"#,
    );
    // The first time, it kills atomic (its parent) while it is the call in flight. It
    // remembers that in `.atomic/`, which is not the project's files: what it leaves in the
    // workspace is put back on resume, as the files were when the call's progress was saved.
    project.write(
        ".atomic/tools/crash.kdl",
        r#"tool "crash" description="Crashes atomic once" { command "sh" "-c" "echo half >> partial.txt; if [ ! -f .atomic/crashed ]; then touch .atomic/crashed; kill -9 $PPID; sleep 2; fi; echo crash-done"; }"#,
    );
    project.write(
        "flow.kdl",
        &format!(
            r#"workflow "resumable" {{
    state {{ field "answer" type="string" default=""; }}
    provider "claude" adapter="anthropic" model="claude-sonnet-4-5" api-key-env="TEST_ANTHROPIC_KEY" base-url="{}"
    agent "worker" provider="claude" {{
        prompt "Bump, then crash"
        tools "bump" "crash"
        output "answer"
    }}
}}
"#,
            fake.url()
        ),
    );
    let run = |args: Vec<String>| {
        let mut command = project.atomic();
        command.args(args).env("TEST_ANTHROPIC_KEY", "test-key");
        async move {
            within(
                Duration::from_secs(60),
                tokio::task::spawn_blocking(move || command.output().expect("atomic")),
            )
            .await
            .expect("atomic finished")
        }
    };
    let crashed = run(vec!["run".into(), "flow.kdl".into()]).await;
    assert_eq!(crashed.status.code(), None, "killed: {}", stderr(&crashed));
    assert_eq!(project.read("runs.log"), "ran\n");

    let id = project.last_run();
    let resumed = run(vec!["resume".into(), id.clone(), "--quiet".into()]).await;
    assert_eq!(resumed.status.code(), Some(0), "{}", stderr(&resumed));
    assert_eq!(project.read("runs.log"), "ran\n", "`bump` ran once in all");
    assert_eq!(
        project.read("partial.txt"),
        "half\n",
        "the interrupted tool's own edit was put back before it ran again"
    );
    assert_eq!(project.show(&id)["state"]["answer"], "Done.");
    assert_eq!(fake.requests().len(), 4, "bump, crash, crash again, done");
}
