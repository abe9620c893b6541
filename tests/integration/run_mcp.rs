//! `mcp` declarations through `atomic run`: the real Claude Code, against the scripted fake
//! Anthropic server on 127.0.0.1, is given a workflow's MCP server (a small stdio server in
//! `tests/fixtures/mcp/`) and calls its tool; the tool's effect is on disk, the variable the
//! workflow passes through reached that server, and no provider key did. The HTTP adapters
//! (`anthropic`, `openai`, against their fake APIs) start the server themselves and offer its
//! tool as `notes__note`, with the same checks.

use std::time::Duration;

use serde_json::json;

use crate::support::cli_project::{CliProject, stderr};
use crate::support::fake_anthropic::{FakeAnthropic, Turn as AnthropicTurn};
use crate::support::fake_openai::{FakeOpenAi, Turn as OpenAiTurn};
use crate::support::http_server::{HttpServer, Reply, Request};
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

    let home = project.home().to_path_buf();
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

/// The notes server, started by python3 (`None`: the test is skipped).
fn notes_server() -> Option<(String, String)> {
    let python = required_tool("python3", "apt install python3")?;
    let server =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mcp/notes_server.py");
    Some((python.display().to_string(), server.display().to_string()))
}

/// A workflow with `provider` (a declaration) whose agent is given the notes server.
fn notes_flow(provider: &str, python: &str, server: &str, notes: &std::path::Path) -> String {
    format!(
        r#"workflow "take-note" {{
    state {{ field "summary" type="string" default=""; }}
    {provider}
    mcp "notes" {{
        command {python:?} {server:?}
        env "NOTE_FILE" {notes:?}
        env "MCP_TOKEN"
    }}
    agent "note" provider="model" {{
        prompt "Take a note."
        output "summary"
    }}
}}
"#,
        notes = notes.display().to_string(),
    )
}

/// Runs `atomic run flow.kdl` with `env` and a stray provider key in atomic's environment.
async fn run(project: &CliProject, env: &[(&str, &str)]) -> std::process::Output {
    let mut command = project.atomic();
    command
        .args(["run", "flow.kdl"])
        .env("ANTHROPIC_API_KEY", "sk-ant-stray-0004");
    for (name, value) in env {
        command.env(name, value);
    }
    within(
        Duration::from_secs(60),
        tokio::task::spawn_blocking(move || command.output().expect("atomic run")),
    )
    .await
    .expect("ran")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_anthropic_agent_calls_a_tool_of_a_declared_mcp_server() {
    let Some((python, server)) = notes_server() else {
        return;
    };
    let fake = FakeAnthropic::start();
    fake.push(AnthropicTurn::tool_use(
        "notes__note",
        json!({"text": "hello from claude"}),
    ));
    fake.push(AnthropicTurn::text("Noted."));
    let project = CliProject::new();
    let notes = project.path().join("notes.txt");
    let provider = format!(
        r#"provider "model" adapter="anthropic" model="claude-sonnet-4-5" api-key-env="TEST_ANTHROPIC_KEY" base-url="{}""#,
        fake.url()
    );
    project.write("flow.kdl", &notes_flow(&provider, &python, &server, &notes));
    let check = project
        .atomic()
        .args(["check", "flow.kdl"])
        .output()
        .expect("atomic check");
    assert_eq!(check.status.code(), Some(0), "{}", stderr(&check));
    let output = run(
        &project,
        &[
            ("TEST_ANTHROPIC_KEY", "sk-atomic-test-3f9a1c"),
            ("MCP_TOKEN", "mcp-t0ken"),
        ],
    )
    .await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(
        std::fs::read_to_string(&notes).expect("the tool ran"),
        "hello from claude token=mcp-t0ken leaked=False\n"
    );
    assert_eq!(
        project.show(&project.last_run())["state"]["summary"],
        "Noted."
    );
    let bodies = fake.message_bodies();
    assert_eq!(bodies.len(), 2);
    // Offered with the server's description and input schema …
    assert_eq!(
        bodies[0]["tools"],
        json!([{
            "name": "notes__note",
            "description": "Appends a line to the notes file",
            "input_schema": {
                "type": "object",
                "properties": {"text": {"type": "string"}},
                "required": ["text"],
            },
        }])
    );
    // … and its result is what the model saw.
    let result = &bodies[1]["messages"][2]["content"][0];
    assert_eq!(result["type"], "tool_result", "{result}");
    assert_eq!(result["content"], "noted", "{result}");
    assert!(result.get("is_error").is_none(), "{result}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_openai_agent_calls_a_tool_of_a_declared_mcp_server() {
    let Some((python, server)) = notes_server() else {
        return;
    };
    let fake = FakeOpenAi::start();
    // A call whose input breaks the tool's schema never reaches the server: the model is
    // told, and tries again.
    fake.push(OpenAiTurn::tool_call("notes__note", json!({"txt": "oops"})));
    fake.push(OpenAiTurn::tool_call(
        "notes__note",
        json!({"text": "hello from gpt"}),
    ));
    fake.push(OpenAiTurn::text("Noted."));
    let project = CliProject::new();
    let notes = project.path().join("notes.txt");
    let provider = format!(
        r#"provider "model" adapter="openai" model="gpt-test" api-key-env="TEST_MODEL_KEY" base-url="{}/v1""#,
        fake.url()
    );
    project.write("flow.kdl", &notes_flow(&provider, &python, &server, &notes));
    let output = run(
        &project,
        &[
            ("TEST_MODEL_KEY", "sk-test-openai-0002"),
            ("MCP_TOKEN", "mcp-t0ken"),
        ],
    )
    .await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(
        std::fs::read_to_string(&notes).expect("the tool ran"),
        "hello from gpt token=mcp-t0ken leaked=False\n"
    );
    assert_eq!(
        project.show(&project.last_run())["state"]["summary"],
        "Noted."
    );
    let bodies = fake.completion_bodies();
    assert_eq!(bodies.len(), 3);
    let tools = &bodies[0]["tools"];
    assert_eq!(tools[0]["type"], "function", "{tools}");
    assert_eq!(tools[0]["function"]["name"], "notes__note", "{tools}");
    assert_eq!(
        tools[0]["function"]["description"],
        "Appends a line to the notes file"
    );
    let results: Vec<String> = bodies[2]["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .filter(|message| message["role"] == "tool")
        .map(|message| message["content"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(results.len(), 2, "{results:?}");
    assert!(
        results[0].contains("invalid input for tool `notes__note`"),
        "{results:?}"
    );
    assert_eq!(results[1], "noted");
}

/// A server whose command does not exist stops the agent, the server named, before the
/// model is asked anything.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_cannot_start_is_named() {
    let fake = FakeAnthropic::start();
    fake.push(AnthropicTurn::text("never asked"));
    let project = CliProject::new();
    project.write(
        "flow.kdl",
        &format!(
            r#"workflow "w" {{
    provider "model" adapter="anthropic" model="claude-sonnet-4-5" api-key-env="TEST_ANTHROPIC_KEY" base-url="{}"
    agent "note" provider="model" {{
        prompt "x"
        mcp "ghost" {{ command "/nonexistent/mcp-ghost-server"; }}
    }}
}}
"#,
            fake.url()
        ),
    );
    let output = run(&project, &[("TEST_ANTHROPIC_KEY", "sk-atomic-test-3f9a1c")]).await;
    let said = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{said}");
    assert!(
        said.contains("MCP server `ghost` could not be started")
            && said.contains("/nonexistent/mcp-ghost-server"),
        "{said}"
    );
    assert!(fake.message_bodies().is_empty(), "the model was asked");
}

/// A streamable-HTTP MCP server on 127.0.0.1 answering in JSON: one tool, `search`, that
/// records the `Authorization` header of its call in `seen` and fails (`isError`).
fn docs_server(seen: std::path::PathBuf) -> HttpServer {
    HttpServer::start(std::sync::Arc::new(move |request: &Request| {
        if request.method != "POST" {
            return Reply::Full {
                status: 405,
                headers: Vec::new(),
                body: Vec::new(),
            };
        }
        let message = request.json();
        let Some(id) = message.get("id").cloned() else {
            // A notification.
            return Reply::Full {
                status: 202,
                headers: Vec::new(),
                body: Vec::new(),
            };
        };
        let result = match message["method"].as_str() {
            Some("initialize") => json!({
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "docs", "version": "1.0.0"},
            }),
            Some("tools/list") => json!({"tools": [{
                "name": "search",
                "description": "Searches the docs",
                "inputSchema": {
                    "type": "object",
                    "properties": {"query": {"type": "string"}},
                    "required": ["query"],
                },
            }]}),
            Some("tools/call") => {
                let line = format!(
                    "{} {}\n",
                    message["params"]["arguments"]["query"],
                    request.header("authorization").unwrap_or("-")
                );
                let mut file = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(&seen)
                    .expect("seen file");
                std::io::Write::write_all(&mut file, line.as_bytes()).expect("written");
                json!({"content": [{"type": "text", "text": "the docs are offline"}], "isError": true})
            }
            _ => json!({}),
        };
        Reply::json(200, &json!({"jsonrpc": "2.0", "id": id, "result": result}))
    }))
}

/// An HTTP server (`url=`) is reached with the bearer token from `bearer-env=`; its tool's
/// `isError` result is a tool error the model sees.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_anthropic_agent_calls_a_tool_of_an_http_mcp_server() {
    let project = CliProject::new();
    let seen = project.path().join("seen.txt");
    let docs = docs_server(seen.clone());
    let fake = FakeAnthropic::start();
    fake.push(AnthropicTurn::tool_use(
        "docs__search",
        json!({"query": "install"}),
    ));
    fake.push(AnthropicTurn::text("The docs are offline."));
    project.write(
        "flow.kdl",
        &format!(
            r#"workflow "w" {{
    provider "model" adapter="anthropic" model="claude-sonnet-4-5" api-key-env="TEST_ANTHROPIC_KEY" base-url="{}"
    mcp "docs" url="{}/mcp" bearer-env="DOCS_TOKEN"
    agent "ask" provider="model" {{ prompt "How do I install it?"; }}
}}
"#,
            fake.url(),
            docs.url()
        ),
    );
    let output = run(
        &project,
        &[
            ("TEST_ANTHROPIC_KEY", "sk-atomic-test-3f9a1c"),
            ("DOCS_TOKEN", "docs-t0ken"),
        ],
    )
    .await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(
        std::fs::read_to_string(&seen).expect("the tool was called"),
        "\"install\" Bearer docs-t0ken\n"
    );
    let bodies = fake.message_bodies();
    assert_eq!(bodies.len(), 2);
    assert_eq!(bodies[0]["tools"][0]["name"], "docs__search");
    let result = &bodies[1]["messages"][2]["content"][0];
    assert_eq!(result["content"], "the docs are offline", "{result}");
    assert_eq!(result["is_error"], true, "{result}");
}

/// An HTTP server that is not there stops the agent, the server named.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http_server_that_cannot_be_reached_is_named() {
    let fake = FakeOpenAi::start();
    fake.push(OpenAiTurn::text("never asked"));
    let project = CliProject::new();
    project.write(
        "flow.kdl",
        &format!(
            r#"workflow "w" {{
    provider "model" adapter="openai" model="gpt-test" api-key-env="TEST_MODEL_KEY" base-url="{}/v1"
    mcp "docs" url="http://127.0.0.1:9/mcp"
    agent "ask" provider="model" {{ prompt "x"; }}
}}
"#,
            fake.url()
        ),
    );
    let output = run(&project, &[("TEST_MODEL_KEY", "sk-test-openai-0002")]).await;
    let said = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{said}");
    assert!(
        said.contains("MCP server `docs` at `http://127.0.0.1:9/mcp` did not initialize"),
        "{said}"
    );
    assert!(fake.completion_bodies().is_empty(), "the model was asked");
}
