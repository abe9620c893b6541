//! Hooks on what agents do (`agent.tool.before` / `agent.tool.after`, `message.complete`,
//! `session.error`) through `atomic run`: the HTTP adapters against the fake Anthropic and
//! OpenAI servers on 127.0.0.1, where a failing `agent.tool.before` hook refuses the tool
//! (it does not run, and the model is told why), and the real Claude Code against the
//! scripted fake, where the hooks see its tool calls as they happen but cannot block them.
//! Every hook appends its stdin (one JSON object) to `hooks.jsonl`.

use std::time::Duration;

use serde_json::{Value, json};

use crate::support::cli_project::{CliProject, stderr};
use crate::support::fake_openai::{FakeOpenAi, Turn};
use crate::support::scripted_anthropic::{ScriptedAnthropic, Step};
use crate::support::tools::agent_cli;
use crate::support::within;

/// Appends the hook's stdin to `hooks.jsonl`.
const LOG: &str = "cat >> hooks.jsonl";

/// Logs, then refuses: a guard that blocks.
const REFUSE: &str = "cat >> hooks.jsonl; echo 'edits are frozen' >&2; exit 1";

const EDIT_TOOL: &str = r#"tool "edit" description="Replaces the text of notes.txt" {
    argument "text" description="The new text"
    command "sh" "-c" "sed -n 's/.*\"text\":\"\\([^\"]*\\)\".*/\\1/p' > notes.txt; echo wrote notes.txt"
}
"#;

/// A workflow whose one agent, on `provider` (a full `provider` line named `model`), may
/// call the custom tool `edit`, with `hooks` (`(event, sh script)`) declared.
fn flow(provider: &str, hooks: &[(&str, &str)]) -> String {
    let hooks: String = hooks
        .iter()
        .map(|(event, script)| format!("    on \"{event}\" {{ run \"sh\" \"-c\" {script:?} }}\n"))
        .collect();
    format!(
        r#"workflow "edit-notes" {{
{hooks}    state {{ field "summary" type="string" default=""; }}
    {provider}
    agent "edit" provider="model" {{
        prompt "Rewrite notes.txt to say: new notes"
        tools "edit"
        output "summary"
    }}
}}
"#
    )
}

fn anthropic(base_url: &str) -> String {
    format!(
        r#"provider "model" adapter="anthropic" model="claude-sonnet-4-5" api-key-env="TEST_ANTHROPIC_KEY" base-url="{base_url}""#
    )
}

fn openai(base_url: &str) -> String {
    format!(
        r#"provider "model" adapter="openai" model="local-model" api-key-env="TEST_OPENAI_KEY" base-url="{base_url}""#
    )
}

/// A project with the `edit` tool, `notes.txt` saying `old notes`, and `flow.kdl`.
fn project(flow: &str) -> CliProject {
    let project = CliProject::new();
    project.write(".atomic/tools/edit.kdl", EDIT_TOOL);
    project.write("notes.txt", "old notes\n");
    project.write("flow.kdl", flow);
    project
}

/// Runs `atomic run flow.kdl` with `env`, off the async runtime (the fakes live on it).
async fn run(project: &CliProject, env: &[(&str, &str)]) -> std::process::Output {
    let mut command = project.atomic();
    command.args(["run", "flow.kdl", "--stream", "events"]);
    for (name, value) in env {
        command.env(name, value);
    }
    within(
        Duration::from_secs(120),
        tokio::task::spawn_blocking(move || command.output().expect("atomic run")),
    )
    .await
    .expect("the run finished")
}

/// What the hooks read on stdin, in the order they ran.
fn payloads(project: &CliProject) -> Vec<Value> {
    project
        .read("hooks.jsonl")
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect()
}

fn events(payloads: &[Value]) -> Vec<&str> {
    payloads
        .iter()
        .map(|payload| payload["event"].as_str().unwrap_or("?"))
        .collect()
}

/// The events of type `kind` the run printed (`--stream events` on stdout).
fn events_of(output: &std::process::Output, kind: &str) -> Vec<Value> {
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|event| event["type"] == kind)
        .collect()
}

fn find<'a>(payloads: &'a [Value], event: &str) -> &'a Value {
    payloads
        .iter()
        .find(|payload| payload["event"] == event)
        .unwrap_or_else(|| panic!("no `{event}` hook ran: {payloads:#?}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_agent_tool_before_hook_refuses_an_anthropic_agents_tool() {
    let fake = ScriptedAnthropic::start(vec![
        Step::Tool {
            name: "edit".to_owned(),
            input: json!({"text": "new notes"}),
        },
        Step::Text("The edit was refused, so notes.txt is unchanged.".to_owned()),
    ])
    .await;
    let project = project(&flow(
        &anthropic(&fake.base_url()),
        &[
            ("agent.tool.before", REFUSE),
            ("agent.tool.after", LOG),
            ("message.complete", LOG),
        ],
    ));
    let output = run(&project, &[("TEST_ANTHROPIC_KEY", "test-key")]).await;
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(0), "{err}");
    assert_eq!(
        project.read("notes.txt"),
        "old notes\n",
        "the tool never ran"
    );

    // The model was told why, as the tool's (error) result.
    let results: Vec<Value> = fake
        .requests()
        .iter()
        .flat_map(|request| {
            request.body["messages"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .filter_map(|message| message["content"].as_array().cloned())
        .flatten()
        .filter(|block| block["type"] == "tool_result")
        .collect();
    assert_eq!(results.len(), 1, "{results:#?}");
    assert_eq!(results[0]["is_error"], true, "{results:#?}");
    let told = results[0]["content"].to_string();
    assert!(
        told.contains("the tool call `edit` was blocked by a hook")
            && told.contains("edits are frozen"),
        "{told}"
    );

    let seen = payloads(&project);
    // A refused tool has no `agent.tool.after`.
    assert_eq!(
        events(&seen),
        ["message.complete", "agent.tool.before", "message.complete"],
        "{seen:#?}"
    );
    let before = find(&seen, "agent.tool.before");
    let run_id = project.last_run();
    assert_eq!(
        before,
        &json!({
            "event": "agent.tool.before",
            "run_id": run_id,
            "workflow": "edit-notes",
            "node": "edit",
            "kind": "agent",
            "step": before["step"],
            "provider": "model",
            "adapter": "anthropic",
            "tool": "edit",
            "tool_id": "toolu_atomic_0",
            "input": {"text": "new notes"},
            "can_block": true,
        })
    );
    assert!(before["step"].is_u64(), "{before}");
    assert_eq!(
        seen[2]["text"],
        "The edit was refused, so notes.txt is unchanged."
    );

    // The refusal is reported as a blocking hook failure.
    let failed: Vec<Value> = events_of(&output, "hook-failed");
    assert_eq!(failed.len(), 1, "{failed:#?}");
    assert_eq!(failed[0]["event"], "agent.tool.before");
    assert_eq!(failed[0]["node"], "edit");
    assert_eq!(failed[0]["blocked"], true);
    // … and as the tool it blocked.
    let blocked: Vec<Value> = events_of(&output, "tool-blocked");
    assert_eq!(blocked.len(), 1, "{blocked:#?}");
    assert_eq!(blocked[0]["node"], "edit");
    assert_eq!(blocked[0]["tool"], "edit");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agent_tool_hooks_see_an_openai_agents_tool_call_and_its_result() {
    let fake = FakeOpenAi::start();
    fake.push(Turn::tool_call("edit", json!({"text": "newer notes"})))
        .push(Turn::text("Done: notes.txt says newer notes."));
    let project = project(&flow(
        &openai(&fake.url()),
        &[
            ("agent.tool.before", LOG),
            ("agent.tool.after", LOG),
            ("message.complete", LOG),
        ],
    ));
    let output = run(&project, &[("TEST_OPENAI_KEY", "test-key")]).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(
        project.read("notes.txt").trim(),
        "newer notes",
        "the tool ran"
    );

    let seen = payloads(&project);
    assert_eq!(
        events(&seen),
        [
            "message.complete",
            "agent.tool.before",
            "agent.tool.after",
            "message.complete"
        ],
        "{seen:#?}"
    );
    let before = find(&seen, "agent.tool.before");
    assert_eq!(before["adapter"], "openai");
    assert_eq!(before["tool"], "edit");
    assert_eq!(before["input"], json!({"text": "newer notes"}));
    assert_eq!(before["can_block"], true);
    let after = find(&seen, "agent.tool.after");
    assert_eq!(after["node"], "edit");
    assert_eq!(after["tool"], "edit");
    assert_eq!(after["tool_id"], before["tool_id"]);
    assert_eq!(after["ok"], true);
    assert_eq!(after["result"], "wrote notes.txt");
    assert_eq!(seen[3]["text"], "Done: notes.txt says newer notes.");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_call_fires_session_error() {
    let fake = FakeOpenAi::start();
    fake.push(Turn::error(
        400,
        "invalid_request_error",
        "the model `local-model` does not exist",
    ));
    let project = project(&flow(
        &openai(&fake.url()),
        &[("session.error", LOG), ("message.complete", LOG)],
    ));
    let output = run(&project, &[("TEST_OPENAI_KEY", "test-key")]).await;
    assert_ne!(output.status.code(), Some(0), "{}", stderr(&output));

    let seen = payloads(&project);
    assert_eq!(events(&seen), ["session.error"], "{seen:#?}");
    let error = &seen[0];
    assert_eq!(error["node"], "edit");
    assert_eq!(error["adapter"], "openai");
    assert_eq!(error["ok"], false);
    assert_eq!(error["class"], "provider");
    assert!(
        error["error"]
            .as_str()
            .is_some_and(|text| text.contains("does not exist")),
        "{error}"
    );
}

/// `check` knows the new events and suggests the closest for a misspelt one.
#[test]
fn check_suggests_the_closest_agent_event() {
    let project = project(&flow(
        &openai("http://127.0.0.1:9"),
        &[("agent.tool.befor", LOG)],
    ));
    let output = project
        .atomic()
        .args(["check", "flow.kdl"])
        .output()
        .expect("atomic check");
    let err = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        stderr(&output)
    );
    assert_ne!(output.status.code(), Some(0), "{err}");
    assert!(err.contains("agent.tool.before"), "{err}");

    let fine = project.write(
        "fine.kdl",
        &flow(
            &openai("http://127.0.0.1:9"),
            &[
                ("agent.tool.before", LOG),
                ("agent.tool.after", LOG),
                ("permission.request", LOG),
                ("message.complete", LOG),
                ("subagent.start", LOG),
                ("subagent.end", LOG),
                ("session.error", LOG),
            ],
        ),
    );
    let output = project
        .atomic()
        .arg("check")
        .arg(&fine)
        .output()
        .expect("atomic check");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
}

/// The real Claude Code asks atomic before each tool (its control protocol's `PreToolUse`
/// callback): a failing `agent.tool.before` hook refuses the tool before it runs, the model
/// reads why, and the agent goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hooks_see_the_real_claude_codes_tool_calls() {
    let Some(bin) = agent_cli("claude", "@anthropic-ai/claude-code") else {
        return;
    };
    let closing = "notes.txt says old notes.";
    let project = CliProject::new();
    project.write("notes.txt", "old notes\n");
    let file = project.path().join("notes.txt").display().to_string();
    let fake = ScriptedAnthropic::start(vec![
        Step::Tool {
            name: "Read".to_owned(),
            input: json!({"file_path": file}),
        },
        Step::Text(closing.to_owned()),
    ])
    .await;
    let hooks: String = [
        ("agent.tool.before", REFUSE),
        ("agent.tool.after", LOG),
        ("message.complete", LOG),
    ]
    .iter()
    .map(|(event, script)| format!("    on \"{event}\" {{ run \"sh\" \"-c\" {script:?} }}\n"))
    .collect();
    project.write(
        "flow.kdl",
        &format!(
            r#"workflow "read-notes" {{
{hooks}    state {{ field "summary" type="string" default=""; }}
    provider "model" adapter="claude-code" model="claude-sonnet-4-5" api-key-env="TEST_ANTHROPIC_KEY" base-url="{}" {{
        option "bin" {:?}
    }}
    agent "read" provider="model" {{
        prompt "What does notes.txt say?"
        tools "Read"
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
    let config = project.path().join("claude").display().to_string();
    let output = run(
        &project,
        &[
            ("TEST_ANTHROPIC_KEY", "sk-atomic-test-3f9a1c"),
            ("HOME", &home),
            ("XDG_CONFIG_HOME", &format!("{home}/.config")),
            ("XDG_CACHE_HOME", &format!("{home}/.cache")),
            ("CLAUDE_CONFIG_DIR", &config),
            ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
        ],
    )
    .await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));

    let seen = payloads(&project);
    let before = find(&seen, "agent.tool.before");
    assert_eq!(before["adapter"], "claude-code");
    assert_eq!(before["tool"], "Read");
    assert_eq!(before["input"]["file_path"], file.as_str());
    assert_eq!(before["can_block"], true);
    // Refused: the tool did not run, so no `agent.tool.after`, and the model was told why.
    assert!(
        seen.iter()
            .all(|payload| payload["event"] != "agent.tool.after"),
        "{seen:#?}"
    );
    let told = fake
        .requests()
        .iter()
        .filter(|request| request.has_tools())
        .map(|request| request.body.to_string())
        .collect::<Vec<_>>()
        .join("\n");
    assert!(told.contains("blocked by a hook"), "{told}");
    assert!(!told.contains("old notes"), "the tool ran: {told}");
    assert_eq!(
        seen.iter()
            .filter(|payload| payload["event"] == "agent.tool.before")
            .count(),
        1,
        "the hook runs once per tool: {seen:#?}"
    );
    let last = seen
        .iter()
        .rev()
        .find(|payload| payload["event"] == "message.complete")
        .expect("a message.complete");
    assert_eq!(last["text"], closing);

    let failed: Vec<Value> = events_of(&output, "hook-failed");
    assert_eq!(failed.len(), 1, "{failed:#?}");
    assert_eq!(failed[0]["event"], "agent.tool.before");
    assert_eq!(failed[0]["blocked"], true);
    let blocked: Vec<Value> = events_of(&output, "tool-blocked");
    assert_eq!(blocked.len(), 1, "{blocked:#?}");
    assert_eq!(blocked[0]["node"], "read");
    assert_eq!(blocked[0]["tool"], "Read");
    assert_eq!(blocked[0]["tool_id"], before["tool_id"]);
    assert!(
        blocked[0]["reason"]
            .as_str()
            .is_some_and(|reason| reason.contains("edits are frozen")),
        "{blocked:#?}"
    );
}
