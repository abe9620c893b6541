//! `mcp` declarations through `atomic run`: the real Claude Code, against the scripted fake
//! Anthropic server on 127.0.0.1, is given a workflow's MCP server (a small stdio server in
//! `tests/fixtures/mcp/`) and calls its tool; the tool's effect is on disk, the variable the
//! workflow passes through reached that server, and no provider key did.

use std::time::Duration;

use serde_json::json;

use crate::support::cli_project::{CliProject, stderr};
use crate::support::scripted_anthropic::{ScriptedAnthropic, Step};
use crate::support::tools::{agent_cli, required_tool};
use crate::support::within;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_calls_a_tool_of_a_declared_mcp_server() {
    let Some(bin) = agent_cli("claude", "@anthropic-ai/claude-code") else {
        return;
    };
    let Some(python) = required_tool("python3", "apt install python3") else {
        return;
    };
    let server =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mcp/notes_server.py");
    let project = CliProject::new();
    let notes = project.path().join("notes.txt");
    let fake = ScriptedAnthropic::start(vec![
        Step::Tool {
            name: "mcp__notes__note".to_owned(),
            input: json!({"text": "hello from the agent"}),
        },
        Step::Text("Noted.".to_owned()),
    ])
    .await;
    project.write(
        "flow.kdl",
        &format!(
            r#"workflow "take-note" {{
    state {{ field "summary" type="string" default=""; }}
    provider "model" adapter="claude-code" model="claude-sonnet-4-5" api-key-env="TEST_ANTHROPIC_KEY" base-url="{base}" {{
        option "bin" {bin:?}
    }}
    mcp "notes" {{
        command {python:?} {server:?}
        env "NOTE_FILE" {notes:?}
        env "MCP_TOKEN"
    }}
    agent "note" provider="model" {{
        prompt "Take a note."
        tools "mcp__notes__note"
        output "summary"
    }}
}}
"#,
            base = fake.base_url(),
            bin = bin.display().to_string(),
            python = python.display().to_string(),
            server = server.display().to_string(),
            notes = notes.display().to_string(),
        ),
    );
    let check = project
        .atomic()
        .args(["check", "flow.kdl"])
        .output()
        .expect("atomic check");
    assert_eq!(check.status.code(), Some(0), "{}", stderr(&check));

    let home = project.path().join("home");
    std::fs::create_dir_all(&home).expect("home");
    let home = home.display().to_string();
    let mut command = project.atomic();
    command.args(["run", "flow.kdl"]);
    for (name, value) in [
        ("TEST_ANTHROPIC_KEY", "sk-atomic-test-3f9a1c".to_owned()),
        ("MCP_TOKEN", "mcp-t0ken".to_owned()),
        ("XDG_CONFIG_HOME", format!("{home}/.config")),
        ("XDG_CACHE_HOME", format!("{home}/.cache")),
        ("HOME", home.clone()),
        (
            "CLAUDE_CONFIG_DIR",
            project.path().join("claude").display().to_string(),
        ),
        ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".to_owned()),
    ] {
        command.env(name, value);
    }
    let output = within(
        Duration::from_secs(120),
        tokio::task::spawn_blocking(move || command.output().expect("atomic run")),
    )
    .await
    .expect("ran");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(
        std::fs::read_to_string(&notes).expect("the tool ran"),
        "hello from the agent token=mcp-t0ken leaked=False\n"
    );
    assert_eq!(
        project.show(&project.last_run())["state"]["summary"],
        "Noted."
    );
    // The tool's result reached the model. (Claude Code lists MCP tools as deferred, so
    // they are not in the first request's `tools`.)
    let results = fake
        .requests()
        .into_iter()
        .rev()
        .find(|request| request.has_tools())
        .expect("a main request")
        .body["messages"]
        .to_string();
    assert!(results.contains("noted"), "{results}");
}

/// A variable the workflow passes through that atomic does not have stops the agent with
/// the server and the variable named, before anything starts.
#[test]
fn an_unset_passed_through_variable_is_named() {
    let project = CliProject::new();
    project.write(
        "flow.kdl",
        r#"workflow "w" {
    provider "model" adapter="claude-code" { option "bin" "/bin/true"; }
    mcp "notes" {
        command "notes-server"
        env "ATOMIC_TEST_UNSET_TOKEN"
    }
    agent "note" provider="model" { prompt "x"; }
}
"#,
    );
    let output = project
        .atomic()
        .args(["run", "flow.kdl"])
        .env_remove("ATOMIC_TEST_UNSET_TOKEN")
        .output()
        .expect("atomic run");
    let said = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{said}");
    assert!(
        said.contains("MCP server `notes`") && said.contains("`ATOMIC_TEST_UNSET_TOKEN`"),
        "{said}"
    );
}
