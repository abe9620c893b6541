//! `permission="ask"` through `atomic run`: an agent's permission request nobody has
//! decided pauses the run (exit 4) with the request on record; `atomic resume RUN --answer
//! allow|allow-run|deny` continues the agent with the answer, recorded as an event. Driven
//! by the in-process model (`option "asks"`), then the real Claude Code against the
//! scripted fake Anthropic server on 127.0.0.1, where the request is held through its
//! control protocol and the file it wants to write is written only once allowed.

use std::time::Duration;

use serde_json::{Value, json};

use crate::support::cli_project::{CliProject, stderr, stdout};
use crate::support::scripted_anthropic::{ScriptedAnthropic, Step};
use crate::support::tools::agent_cli;
use crate::support::within;

/// Two asking agents on the in-process model (each asks to use `Bash`), in a row or, with
/// `parallel`, side by side.
fn flow(parallel: bool) -> String {
    let agents = r#"agent "fix" provider="bot" permission="ask" {
            prompt "fix it"
            output "fixed"
        }
        agent "check" provider="bot" permission="ask" {
            prompt "check it"
            output "checked"
        }"#;
    let body = if parallel {
        format!("parallel \"both\" {{\n        {agents}\n    }}")
    } else {
        agents.to_owned()
    };
    format!(
        r#"workflow "ask" {{
    state {{
        field "fixed" type="string" default=""
        field "checked" type="string" default=""
    }}
    provider "bot" adapter="in-process" {{ option "asks" "Bash"; }}
    {body}
}}
"#
    )
}

fn project(parallel: bool) -> CliProject {
    let project = CliProject::new();
    project.write("flow.kdl", &flow(parallel));
    project
}

/// The run's paused requests, from `atomic runs show RUN --json`.
fn waits(project: &CliProject, run: &str) -> Vec<Value> {
    project.show(run)["run"]["waits"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// The run's logged events of `kind`.
fn events_of(project: &CliProject, run: &str, kind: &str) -> Vec<Value> {
    let output = project
        .atomic()
        .args(["runs", "show", run, "--events"])
        .output()
        .expect("atomic runs show --events");
    stdout(&output)
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .filter(|event| event["type"] == kind)
        .collect()
}

fn resume(project: &CliProject, run: &str, args: &[&str]) -> std::process::Output {
    project
        .atomic()
        .args(["resume", run])
        .args(args)
        .output()
        .expect("atomic resume")
}

#[test]
fn an_undecided_request_pauses_the_run_and_allow_continues_it() {
    let project = project(false);
    let output = project
        .atomic()
        .args(["run", "flow.kdl"])
        .output()
        .expect("atomic run");
    assert_eq!(output.status.code(), Some(4), "{}", stderr(&output));
    let said = stderr(&output);
    assert!(
        said.contains("`fix` asks to use `Bash` with {\"for\":\"fix\"}")
            && said.contains("allow-run")
            && said.contains("--answer allow"),
        "{said}"
    );
    let run = project.last_run();
    let pending = waits(&project, &run);
    assert_eq!(pending.len(), 1, "{pending:#?}");
    assert_eq!(pending[0]["node_id"], "fix");
    assert_eq!(
        pending[0]["permission"],
        json!({"tool": "Bash", "input": {"for": "fix"}, "session_id": "in-process-fix"})
    );
    assert_eq!(project.show(&run)["steps"], json!([]), "nothing committed");

    // An answer that is none of the three is refused; the run stays paused as it was.
    let refused = resume(&project, &run, &["--answer", "maybe"]);
    assert_eq!(refused.status.code(), Some(4), "{}", stderr(&refused));
    assert!(
        stderr(&refused).contains("`allow-run`"),
        "{}",
        stderr(&refused)
    );
    assert_eq!(waits(&project, &run), pending);

    // Allowed once: `fix` goes ahead, and `check` asks again.
    let allowed = resume(&project, &run, &["--answer", "allow"]);
    assert_eq!(allowed.status.code(), Some(4), "{}", stderr(&allowed));
    let show = project.show(&run);
    assert_eq!(show["state"]["fixed"], "Bash: allowed", "{show}");
    let pending = waits(&project, &run);
    assert_eq!(pending.len(), 1, "{pending:#?}");
    assert_eq!(pending[0]["node_id"], "check");

    let denied = resume(&project, &run, &["--answer", "deny"]);
    assert_eq!(denied.status.code(), Some(0), "{}", stderr(&denied));
    let show = project.show(&run);
    assert_eq!(show["run"]["status"], "completed");
    assert_eq!(show["state"]["checked"], "Bash: denied", "{show}");

    // Both decisions are in the run's log, the agents' own reports beside them.
    let answered = events_of(&project, &run, "permission-answered");
    assert_eq!(
        answered,
        [
            json!({"type": "permission-answered", "node": "fix", "tool": "Bash", "input": {"for": "fix"}, "answer": "allow"}),
            json!({"type": "permission-answered", "node": "check", "tool": "Bash", "input": {"for": "check"}, "answer": "deny"}),
        ]
    );
    let reported: Vec<(Value, Value)> = events_of(&project, &run, "agent")
        .into_iter()
        .filter(|event| event["event"]["type"] == "permission-request")
        .map(|event| (event["node"].clone(), event["event"]["granted"].clone()))
        .collect();
    assert_eq!(
        reported,
        [(json!("fix"), json!(true)), (json!("check"), json!(false))]
    );
}

#[test]
fn allow_run_covers_the_tool_for_every_later_request_and_a_resume_without_an_answer_is_refused() {
    let project = project(false);
    let output = project
        .atomic()
        .args(["run", "flow.kdl"])
        .output()
        .expect("atomic run");
    assert_eq!(output.status.code(), Some(4), "{}", stderr(&output));
    let run = project.last_run();

    let unanswered = resume(&project, &run, &[]);
    assert_eq!(unanswered.status.code(), Some(4), "{}", stderr(&unanswered));
    assert!(
        stderr(&unanswered).contains("needs an answer"),
        "{}",
        stderr(&unanswered)
    );

    let allowed = resume(&project, &run, &["--answer", "allow-run"]);
    assert_eq!(allowed.status.code(), Some(0), "{}", stderr(&allowed));
    let show = project.show(&run);
    assert_eq!(show["state"]["fixed"], "Bash: allowed");
    assert_eq!(show["state"]["checked"], "Bash: allowed", "not asked again");
    assert_eq!(events_of(&project, &run, "permission-answered").len(), 1);
}

#[test]
fn requests_in_parallel_branches_are_answered_one_at_a_time_by_name() {
    let project = project(true);
    let output = project
        .atomic()
        .args(["run", "flow.kdl"])
        .output()
        .expect("atomic run");
    assert_eq!(output.status.code(), Some(4), "{}", stderr(&output));
    let run = project.last_run();
    let pending = waits(&project, &run);
    let nodes: Vec<&str> = pending
        .iter()
        .map(|wait| wait["node_id"].as_str().unwrap_or("?"))
        .collect();
    assert_eq!(nodes, ["fix", "check"], "{pending:#?}");

    // Two are pending: an answer must say which.
    let ambiguous = resume(&project, &run, &["--answer", "allow"]);
    assert_eq!(ambiguous.status.code(), Some(4), "{}", stderr(&ambiguous));
    assert!(
        stderr(&ambiguous).contains("--wait both@1#1/check --answer"),
        "{}",
        stderr(&ambiguous)
    );

    // Named by its node, as it is the only `check` pending.
    let first = resume(&project, &run, &["--answer", "deny", "--wait", "check"]);
    assert_eq!(first.status.code(), Some(4), "{}", stderr(&first));
    let pending = waits(&project, &run);
    assert_eq!(pending.len(), 1, "{pending:#?}");
    assert_eq!(pending[0]["node_id"], "fix");

    let second = resume(&project, &run, &["--answer", "allow"]);
    assert_eq!(second.status.code(), Some(0), "{}", stderr(&second));
    let state = &project.show(&run)["state"];
    assert_eq!(state["fixed"], "Bash: allowed", "{state}");
    assert_eq!(state["checked"], "Bash: denied", "{state}");
}

#[test]
fn check_refuses_ask_where_the_adapter_cannot_stop_for_a_person() {
    let project = CliProject::new();
    project.write(
        "flow.kdl",
        r#"workflow "w" {
    provider "tape" adapter="replay" { option "cassette" "c.jsonl"; }
    agent "a" provider="tape" permission="ask" { prompt "x"; }
}
"#,
    );
    let output = project
        .atomic()
        .args(["check", "flow.kdl"])
        .output()
        .expect("atomic check");
    let said = format!("{}{}", stdout(&output), stderr(&output));
    assert_eq!(output.status.code(), Some(1), "{said}");
    assert!(
        said.contains("unsupported-feature") && said.contains("permission=\"ask\""),
        "{said}"
    );
}

/// On a terminal the request is asked right there (by number here: 2 is `allow-run`), and
/// the run goes on to its end in the same process.
#[test]
fn on_a_terminal_the_request_is_asked_at_once() {
    let project = project(false);
    let Some(output) = crate::run_terminal::on_a_terminal(&project, "run flow.kdl", "2\n") else {
        return;
    };
    let said = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{said}");
    assert!(said.contains("`fix` asks to use `Bash`"), "{said}");
    assert!(
        !said.contains("`check` asks"),
        "allowed for the run: {said}"
    );
    let run = project.last_run();
    let state = &project.show(&run)["state"];
    assert_eq!(state["checked"], "Bash: allowed", "{state}");
    let answered = events_of(&project, &run, "permission-answered");
    assert_eq!(answered.len(), 1, "{answered:#?}");
    assert_eq!(answered[0]["answer"], "allow-run");
}

/// A project whose agent, on the real Claude Code at `bin` against `fake`, is asked to
/// write `done.txt` under `permission="ask"`; with the environment that isolates the CLI.
fn claude_project(
    bin: &std::path::Path,
    fake: &ScriptedAnthropic,
) -> (CliProject, Vec<(&'static str, String)>) {
    let project = CliProject::new();
    project.write(
        "flow.kdl",
        &format!(
            r#"workflow "write-done" {{
    state {{ field "summary" type="string" default=""; }}
    provider "model" adapter="claude-code" model="claude-sonnet-4-5" api-key-env="TEST_ANTHROPIC_KEY" base-url="{}" {{
        option "bin" {:?}
    }}
    agent "write" provider="model" permission="ask" {{
        prompt "Write done.txt saying done."
        output "summary"
    }}
}}
"#,
            fake.base_url(),
            bin.display().to_string(),
        ),
    );
    let home = project.home().to_path_buf();
    std::fs::create_dir_all(&home).expect("home");
    let home = home.display().to_string();
    let env = vec![
        ("TEST_ANTHROPIC_KEY", "sk-atomic-test-3f9a1c".to_owned()),
        ("XDG_CONFIG_HOME", format!("{home}/.config")),
        ("XDG_CACHE_HOME", format!("{home}/.cache")),
        ("HOME", home),
        (
            "CLAUDE_CONFIG_DIR",
            project.path().join("claude").display().to_string(),
        ),
        ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".to_owned()),
    ];
    (project, env)
}

/// `atomic ARGS` in `project` with `env`, off the async runtime (the fake lives on it).
async fn atomic_with(
    project: &CliProject,
    env: &[(&'static str, String)],
    args: &[&str],
) -> std::process::Output {
    let mut command = project.atomic();
    command.args(args);
    for (name, value) in env {
        command.env(name, value);
    }
    within(
        Duration::from_secs(120),
        tokio::task::spawn_blocking(move || command.output().expect("atomic")),
    )
    .await
    .expect("atomic ran")
}

/// The fake model that asks to write `file` (told after the pause what the person said, it
/// asks again: the fake answers by the tool results it sees, and the interrupted call has
/// none), then ends with `closing`.
async fn writer(file: &str, closing: &str) -> ScriptedAnthropic {
    ScriptedAnthropic::start(vec![
        Step::Tool {
            name: "Write".to_owned(),
            input: json!({"file_path": file, "content": "done\n"}),
        },
        Step::Text(closing.to_owned()),
    ])
    .await
}

/// The last main-turn request's conversation, as text.
fn last_conversation(fake: &ScriptedAnthropic) -> String {
    fake.requests()
        .into_iter()
        .rfind(|request| request.has_tools())
        .expect("model requests")
        .body["messages"]
        .to_string()
}

/// The real Claude Code wants to write a file: the request reaches atomic through the
/// CLI's control protocol, the run pauses before anything is written, and once allowed
/// the same session goes on and writes it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_writes_only_once_a_person_allows_it() {
    let Some(bin) = agent_cli("claude", "@anthropic-ai/claude-code") else {
        return;
    };
    let scratch = tempfile::tempdir().expect("temp dir");
    let target = scratch.path().join("done.txt");
    let file = target.display().to_string();
    let fake = writer(&file, "done.txt is written.").await;
    let (project, env) = claude_project(&bin, &fake);

    let output = atomic_with(&project, &env, &["run", "flow.kdl"]).await;
    assert_eq!(output.status.code(), Some(4), "{}", stderr(&output));
    assert!(
        !target.exists(),
        "nothing is written before a person answers"
    );
    let run = project.last_run();
    let pending = waits(&project, &run);
    assert_eq!(pending.len(), 1, "{pending:#?}");
    let permission = &pending[0]["permission"];
    assert_eq!(permission["tool"], "Write", "{permission}");
    assert_eq!(
        permission["input"]["file_path"],
        file.as_str(),
        "{permission}"
    );
    assert!(permission["session_id"].is_string(), "{permission}");

    let output = atomic_with(&project, &env, &["resume", &run, "--answer", "allow"]).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(std::fs::read_to_string(&target).expect("written"), "done\n");
    let show = project.show(&run);
    assert_eq!(show["state"]["summary"], "done.txt is written.", "{show}");

    // The continuation carried the conversation and told the model the answer.
    let conversation = last_conversation(&fake);
    assert!(
        conversation.contains("Write done.txt saying done.")
            && conversation.contains("approved your request"),
        "{conversation}"
    );
    let answered = events_of(&project, &run, "permission-answered");
    assert_eq!(answered.len(), 1, "{answered:#?}");
    assert_eq!(answered[0]["answer"], "allow");
}

/// Denied: the session goes on, the CLI refuses the write with atomic's reason, and the
/// model is told.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_is_told_when_a_person_refuses() {
    let Some(bin) = agent_cli("claude", "@anthropic-ai/claude-code") else {
        return;
    };
    let scratch = tempfile::tempdir().expect("temp dir");
    let target = scratch.path().join("done.txt");
    let file = target.display().to_string();
    let fake = writer(&file, "I did not write done.txt.").await;
    let (project, env) = claude_project(&bin, &fake);

    let output = atomic_with(&project, &env, &["run", "flow.kdl"]).await;
    assert_eq!(output.status.code(), Some(4), "{}", stderr(&output));
    let run = project.last_run();
    let output = atomic_with(&project, &env, &["resume", &run, "--answer", "deny"]).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(!target.exists(), "refused: nothing written");
    assert_eq!(
        project.show(&run)["state"]["summary"],
        "I did not write done.txt."
    );
    let conversation = last_conversation(&fake);
    assert!(
        conversation.contains("refused your request")
            && conversation.contains("do not try it again"),
        "{conversation}"
    );
}
