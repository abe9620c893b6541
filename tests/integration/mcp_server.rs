//! `atomic mcp`: the project's custom tools served over MCP (stdio). An rmcp client spawns
//! the binary, lists the tools and calls them (a file written, a bad argument refused, a
//! provider key kept from the tool and out of its output, a broken tool file not served);
//! then the real Claude Code, against the scripted Messages API fake on 127.0.0.1, calls the
//! served tools from a workflow agent, given the server by `option "mcp-config"` or by an
//! `mcp` declaration.

use std::process::Stdio;
use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, CallToolResult, JsonObject};
use rmcp::service::{RoleClient, RunningService, ServiceError};
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};
use tokio::io::AsyncReadExt;

use crate::support::cli_project::{CliProject, bin, stderr};
use crate::support::scripted_anthropic::{ScriptedAnthropic, Step};
use crate::support::tools::agent_cli;
use crate::support::within;

/// A tool that replaces `notes.txt` with its `text` argument (read from the JSON object on
/// stdin), like the tool of `custom_tools.rs`.
const EDIT_TOOL: &str = r#"tool "edit" description="Replaces the text of notes.txt" {
    argument "text" type="string" description="The new text"
    command "sh" ".atomic/tools/edit.sh"
    timeout "20s"
}
"#;

const EDIT_SCRIPT: &str = r#"input=$(cat)
text=$(printf '%s' "$input" | sed -n 's/.*"text":"\([^"]*\)".*/\1/p')
printf '%s\n' "$text" > notes.txt
echo "wrote notes.txt"
"#;

/// A tool that prints its whole environment, then a file holding a key.
const ENV_TOOL: &str = r#"tool "show-env" description="Prints the environment" {
    command "sh" "-c" "env; cat key.txt"
}
"#;

/// The provider key the server is started with.
const KEY: &str = "sk-secret-0123456789abcdefghij";

fn project_with_tools() -> CliProject {
    let project = CliProject::new();
    project.write(".atomic/tools/edit.kdl", EDIT_TOOL);
    project.write(".atomic/tools/edit.sh", EDIT_SCRIPT);
    project.write(".atomic/tools/show-env.kdl", ENV_TOOL);
    // Its schema file is missing: the tool must not be served, the others must.
    project.write(
        ".atomic/tools/broken.kdl",
        r#"tool "broken" schema="missing.json" { command "true"; }"#,
    );
    project.write("notes.txt", "old notes\n");
    project.write("key.txt", &format!("the key is {KEY}\n"));
    std::fs::create_dir_all(project.path().join("home")).expect("home");
    project
}

/// `atomic mcp` in `project` as an MCP client's child, its stderr kept.
async fn connect(
    project: &CliProject,
) -> (RunningService<RoleClient, ()>, tokio::process::ChildStderr) {
    let mut command = tokio::process::Command::new(bin());
    command
        .args(["mcp", "--project"])
        .arg(project.path())
        // Somewhere else, so only `--project` can point the server at the tools.
        .current_dir(std::env::temp_dir())
        .env("HOME", project.path().join("home"))
        .env("ANTHROPIC_API_KEY", KEY)
        .env("NO_COLOR", "1")
        .env_remove("RUST_LOG");
    let (transport, stderr) = TokioChildProcess::builder(command)
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn atomic mcp");
    let client = ().serve(transport).await.expect("the MCP session starts");
    (client, stderr.expect("stderr is piped"))
}

async fn call(
    client: &RunningService<RoleClient, ()>,
    tool: &str,
    arguments: Value,
) -> Result<CallToolResult, ServiceError> {
    let arguments: JsonObject = match arguments {
        Value::Object(map) => map,
        other => panic!("arguments are an object, not {other}"),
    };
    client
        .call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments))
        .await
}

/// The text of a tool result.
fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|block| block.as_text().map(|text| text.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn an_mcp_client_lists_and_calls_the_projects_tools() {
    let project = project_with_tools();
    within(Duration::from_secs(60), async {
        let (client, mut server_stderr) = connect(&project).await;

        let tools = client.list_all_tools().await.expect("tools/list");
        let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_ref()).collect();
        assert_eq!(names, ["edit", "show-env"], "the broken tool is not served");
        let edit = &tools[0];
        assert_eq!(
            edit.description.as_deref(),
            Some("Replaces the text of notes.txt")
        );
        assert_eq!(
            Value::Object((*edit.input_schema).clone()),
            json!({
                "type": "object",
                "properties": {"text": {"type": "string", "description": "The new text"}},
                "required": ["text"],
                "additionalProperties": false,
            })
        );

        // A good call runs the command in the project.
        let done = call(&client, "edit", json!({"text": "new notes"}))
            .await
            .expect("tools/call");
        assert_eq!(done.is_error, Some(false), "{done:?}");
        assert_eq!(text(&done).trim(), "wrote notes.txt");
        assert_eq!(project.read("notes.txt"), "new notes\n");

        // A bad argument is a tool error naming it; the command does not run.
        let wrong = call(&client, "edit", json!({"text": 42}))
            .await
            .expect("a tool error is a result, not a protocol error");
        assert_eq!(wrong.is_error, Some(true), "{wrong:?}");
        assert!(
            text(&wrong).contains("argument `text`: 42 is not of type \"string\""),
            "{}",
            text(&wrong)
        );
        let missing = call(&client, "edit", json!({"txt": "x"}))
            .await
            .expect("tools/call");
        assert_eq!(missing.is_error, Some(true));
        assert!(
            text(&missing).contains("\"text\" is a required property"),
            "{}",
            text(&missing)
        );
        assert_eq!(project.read("notes.txt"), "new notes\n", "no bad call ran");

        // The provider key the server was started with never reaches the tool, and the
        // same key read from a file is redacted from what the tool printed.
        let shown = call(&client, "show-env", json!({}))
            .await
            .expect("tools/call");
        assert_eq!(shown.is_error, Some(false), "{shown:?}");
        let shown = text(&shown);
        assert!(
            shown.contains("PATH="),
            "the tool got an environment: {shown}"
        );
        assert!(!shown.contains("ANTHROPIC_API_KEY"), "{shown}");
        assert!(!shown.contains(KEY), "{shown}");
        assert!(shown.contains("the key is [REDACTED]"), "{shown}");

        // A name the server does not have is the protocol's invalid-params error.
        match call(&client, "nope", json!({})).await {
            Err(ServiceError::McpError(error)) => {
                assert!(
                    error.message.contains("unknown tool `nope`")
                        && error.message.contains("edit, show-env"),
                    "{error:?}"
                );
            }
            other => panic!("expected an MCP error, got {other:?}"),
        }

        // Closing the session ends the server; its stderr names the broken file.
        client.cancel().await.expect("the session closes");
        let mut logged = String::new();
        server_stderr
            .read_to_string(&mut logged)
            .await
            .expect("read stderr");
        assert!(
            logged.contains("missing.json") && logged.contains("broken.kdl"),
            "{logged}"
        );
    })
    .await;
}

/// The real Claude Code, started by a workflow agent with `atomic mcp` as its MCP server,
/// calls the served tools `mcp__atomic__edit` and `mcp__atomic__show-env` when the scripted
/// model asks for them. Claude Code starts its MCP servers with its own environment, which
/// holds its key: the tool must not see it.
#[tokio::test]
async fn claude_code_calls_a_tool_served_by_atomic_mcp() {
    claude_code_with_atomic_mcp(|project| {
        let mcp_config = json!({"mcpServers": {"atomic": {
            "command": bin().display().to_string(),
            "args": ["mcp", "--project", project.path().display().to_string()],
        }}})
        .to_string();
        format!("option \"mcp-config\" {mcp_config:?}\n        option \"strict-mcp-config\" #true")
    })
    .await;
}

/// The same through an `mcp` declaration in the workflow file (the agent's own `mcp`
/// child), the other form docs/mcp.md shows.
#[tokio::test]
async fn claude_code_calls_atomic_mcp_declared_in_the_workflow() {
    claude_code_with_atomic_mcp(|project| {
        format!(
            "mcp \"atomic\" {{ command {:?} \"mcp\" \"--project\" {:?}; }}",
            bin().display().to_string(),
            project.path().display().to_string(),
        )
    })
    .await;
}

/// Runs a workflow whose `claude-code` agent gets `atomic mcp` through the KDL `servers`
/// writes inside the agent, and checks what the served tools did.
async fn claude_code_with_atomic_mcp(servers: impl Fn(&CliProject) -> String) {
    let Some(claude) = agent_cli("claude", "@anthropic-ai/claude-code") else {
        return;
    };
    let project = project_with_tools();
    let fake = ScriptedAnthropic::start(vec![
        Step::Tool {
            name: "mcp__atomic__edit".to_owned(),
            input: json!({"text": "edited over MCP"}),
        },
        Step::Tool {
            name: "mcp__atomic__show-env".to_owned(),
            input: json!({}),
        },
        Step::Text("notes.txt now says: edited over MCP".to_owned()),
    ])
    .await;
    let servers = servers(&project);
    project.write(
        "flow.kdl",
        &format!(
            r#"workflow "mcp-edit" {{
    state {{ field "summary" type="string" default=""; }}
    provider "model" adapter="claude-code" model="claude-sonnet-4-5" api-key-env="TEST_ANTHROPIC_KEY" base-url="{}" {{
        option "bin" {:?}
    }}
    agent "edit" provider="model" {{
        prompt "Rewrite notes.txt to say: edited over MCP"
        tools "mcp__atomic__edit" "mcp__atomic__show-env"
        {servers}
        output "summary"
    }}
}}
"#,
            fake.base_url(),
            claude.display().to_string(),
        ),
    );
    // An isolated home and config, as every real CLI run in the tests has.
    let home = project.path().join("home").display().to_string();
    let config = project.path().join("claude").display().to_string();
    let key = "sk-atomic-test-3f9a1c7e5d2b4a6908";
    let mut command = project.atomic();
    command
        .args(["run", "flow.kdl", "--stream", "events"])
        .env("TEST_ANTHROPIC_KEY", key)
        .env("HOME", &home)
        .env("XDG_CONFIG_HOME", format!("{home}/.config"))
        .env("XDG_CACHE_HOME", format!("{home}/.cache"))
        .env("CLAUDE_CONFIG_DIR", &config)
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1");
    let output = within(
        Duration::from_secs(120),
        tokio::task::spawn_blocking(move || command.output().expect("atomic run")),
    )
    .await
    .expect("the run finished");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(project.read("notes.txt"), "edited over MCP\n");
    // The model saw the tools' answers, sent back by Claude Code.
    let results: Vec<String> = fake
        .requests()
        .iter()
        .flat_map(|request| {
            request.body["messages"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|message| message["content"].as_array())
                .flatten()
                .filter(|block| block["type"] == "tool_result")
                .map(|block| block["content"].to_string())
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(
        results
            .iter()
            .any(|result| result.contains("wrote notes.txt")),
        "{results:#?}"
    );
    let env = results
        .iter()
        .find(|result| result.contains("PATH="))
        .unwrap_or_else(|| panic!("no show-env result: {results:#?}"));
    assert!(!env.contains("ANTHROPIC_API_KEY"), "{env}");
    assert!(!env.contains(key), "{env}");
    assert!(env.contains("the key is [REDACTED]"), "{env}");
}

/// A `--project` that is not a directory is a usage error naming it, with nothing on stdout
/// (which belongs to the protocol).
#[test]
fn a_missing_project_is_a_usage_error() {
    let project = CliProject::new();
    let output = project
        .atomic()
        .args(["mcp", "--project", "no-such-dir"])
        .output()
        .expect("atomic mcp");
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(output.stdout.is_empty());
    assert!(
        stderr(&output).contains("`--project no-such-dir` is not a directory"),
        "{}",
        stderr(&output)
    );
}
