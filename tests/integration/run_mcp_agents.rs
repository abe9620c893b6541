//! `mcp` declarations through `atomic run` on the agent CLIs that take them in their own
//! configuration: the real OpenCode, Copilot, Codex and Gemini CLIs, each against its fake
//! model server on 127.0.0.1, are given a workflow's MCP server (the small stdio server in
//! `tests/fixtures/mcp/`) and call its `note` tool by the name the CLI gives it; the tool's
//! effect is on disk, the variable the workflow passes through reached that server, and no
//! model key did.

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::cli_project::{CliProject, stderr, stdout};
use crate::support::fake_anthropic::{FakeAnthropic, Turn};
use crate::support::fake_gemini::{FakeGemini, Turn as GeminiTurn};
use crate::support::fake_responses::{FakeResponses, Turn as ResponsesTurn};
use crate::support::http_server::Request;
use crate::support::tools::{agent_cli, required_tool};

/// The model key the provider names with `api-key-env`.
const SECRET: &str = "sk-atomic-test-3f9a1c";
/// What the workflow passes through to the MCP server from atomic's environment.
const MCP_TOKEN: &str = "mcp-t0ken";
/// The model's closing text.
const CLOSING: &str = "Noted.";

/// Upper bound for one `atomic run` here (a CLI's first start unpacks itself).
const COMMAND_LIMIT: Duration = Duration::from_secs(150);

/// The notes server, started by python3 (`None`: the test is skipped).
fn notes_server() -> Option<(String, String)> {
    let python = required_tool("python3", "apt install python3")?;
    let server = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mcp/notes_server.py");
    Some((python.display().to_string(), server.display().to_string()))
}

/// The workflow: `provider` (a `provider "model" …` declaration) and one agent given the
/// notes server by the workflow's `mcp` declaration.
fn write_flow(project: &CliProject, provider: &str, python: &str, server: &str) -> String {
    let notes = project.path().join("notes.txt").display().to_string();
    project.write(
        "flow.kdl",
        &format!(
            r#"workflow "take-note" {{
    state {{ field "summary" type="string" default=""; }}
    {provider}
    mcp "notes" {{
        command {python:?} {server:?}
        env "NOTE_FILE" {notes:?}
        env "MCP_TOKEN"
    }}
    agent "note" provider="model" permission="bypass" {{
        prompt "Take a note."
        output "summary"
    }}
}}
"#
        ),
    );
    // Clean but for the warning that a bypassing agent runs in no sandbox (some of these
    // adapters cannot run in one yet).
    let check = project
        .atomic()
        .args(["check", "flow.kdl", "--format", "json"])
        .output()
        .expect("atomic check");
    let found: Vec<serde_json::Value> =
        serde_json::from_str(&crate::support::cli_project::stdout(&check)).expect("JSON");
    assert!(
        found
            .iter()
            .all(|diagnostic| diagnostic["code"] == "atomic::unsandboxed-bypass"),
        "{found:?}"
    );
    notes
}

/// The environment that keeps a CLI inside `project` (its own home and XDG directories),
/// with the model key, the token the MCP server is given and a stray provider key.
fn isolated_env(project: &CliProject) -> Vec<(&'static str, String)> {
    let home = project.home().to_path_buf();
    std::fs::create_dir_all(&home).expect("home");
    let home = home.display().to_string();
    vec![
        ("TEST_MODEL_KEY", SECRET.to_owned()),
        ("MCP_TOKEN", MCP_TOKEN.to_owned()),
        ("ANTHROPIC_API_KEY", "sk-ant-stray-0004".to_owned()),
        ("XDG_CONFIG_HOME", format!("{home}/.config")),
        ("XDG_DATA_HOME", format!("{home}/.local/share")),
        ("XDG_STATE_HOME", format!("{home}/.local/state")),
        ("XDG_CACHE_HOME", format!("{home}/.cache")),
        ("HOME", home),
    ]
}

/// `atomic run flow.kdl` in `project` with `env`, off the async runtime, bounded in time.
async fn atomic_run(project: &CliProject, env: &[(&'static str, String)]) -> std::process::Output {
    project
        .atomic_async(&["run", "flow.kdl"], env, COMMAND_LIMIT)
        .await
}

/// A main-turn request (the agent's, with tools) as JSON.
fn main_turn(request: &Request) -> Option<Value> {
    let body = request.json();
    body.get("tools")
        .and_then(Value::as_array)
        .is_some_and(|tools| !tools.is_empty())
        .then_some(body)
}

/// The names of the tools a request offers.
fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .filter_map(|tool| tool["name"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// The fake Anthropic model: calls `tool` with a note once it is offered, closes with
/// [`CLOSING`] after the tool's result; the CLI's side requests get a short text.
fn notes_model(tool: &'static str) -> FakeAnthropic {
    let fake = FakeAnthropic::start();
    fake.require_key(SECRET);
    fake.set_fallback(Turn::text("A note."));
    fake.push_when(
        move |request| {
            main_turn(request).is_some_and(|body| {
                tool_names(&body).iter().any(|name| name == tool)
                    && !body["messages"].to_string().contains("tool_result")
            })
        },
        Turn::tool_use(tool, json!({"text": "hello from the agent"})),
    );
    fake.push_when(
        |request| {
            main_turn(request).is_some_and(|body| body["messages"].to_string().contains("noted"))
        },
        Turn::text(CLOSING),
    );
    fake
}

/// The run succeeded, the tool's line is in the notes file (the token passed through, no
/// key leaked) and the closing text is the agent's output.
fn assert_noted(project: &CliProject, output: &std::process::Output, notes: &str) {
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}{}",
        stdout(output),
        stderr(output)
    );
    assert_eq!(
        std::fs::read_to_string(notes).expect("the tool ran"),
        format!("hello from the agent token={MCP_TOKEN} leaked=False\n")
    );
    assert_eq!(
        project.show(&project.last_run())["state"]["summary"],
        CLOSING
    );
}

/// The tool names of the agent's model calls, for a failure message.
fn offered(fake: &FakeAnthropic) -> Vec<Vec<String>> {
    fake.requests()
        .iter()
        .filter_map(main_turn)
        .map(|body| tool_names(&body))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn opencode_calls_a_tool_of_a_declared_mcp_server() {
    let Some(bin) = agent_cli("opencode", "opencode-ai") else {
        return;
    };
    let Some((python, server)) = notes_server() else {
        return;
    };
    let project = CliProject::new();
    let fake = notes_model("notes_note");
    let config = json!({
        "autoupdate": false,
        "share": "disabled",
        "provider": {"anthropic": {"options": {
            "baseURL": format!("{}/v1", fake.url()),
            "apiKey": "{env:TEST_MODEL_KEY}",
        }}},
    });
    let provider = format!(
        r#"provider "model" adapter="opencode" model="anthropic/claude-sonnet-4-5" api-key-env="TEST_MODEL_KEY" {{
        option "bin" {:?}
        option "config" {:?}
    }}"#,
        bin.display().to_string(),
        config.to_string(),
    );
    let notes = write_flow(&project, &provider, &python, &server);
    let mut env = isolated_env(&project);
    env.extend([
        ("OPENCODE_DISABLE_MODELS_FETCH", "1".to_owned()),
        ("OPENCODE_DISABLE_LSP_DOWNLOAD", "1".to_owned()),
    ]);
    let output = atomic_run(&project, &env).await;
    assert!(fake.remaining() == 0, "tools offered: {:?}", offered(&fake));
    assert_noted(&project, &output, &notes);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copilot_calls_a_tool_of_a_declared_mcp_server() {
    let Some(bin) = agent_cli("copilot", "@github/copilot") else {
        return;
    };
    let Some((python, server)) = notes_server() else {
        return;
    };
    let project = CliProject::new();
    let fake = notes_model("notes-note");
    let provider = format!(
        r#"provider "model" adapter="copilot" model="claude-sonnet-4-5" api-key-env="TEST_MODEL_KEY" base-url="{}" {{
        option "bin" {:?}
        option "provider-type" "anthropic"
    }}"#,
        fake.url(),
        bin.display().to_string(),
    );
    let notes = write_flow(&project, &provider, &python, &server);
    let mut env = isolated_env(&project);
    // Copilot unpacks its runtime into the cache on first start: one cache for every test.
    let cache = Path::new(env!("CARGO_TARGET_TMPDIR")).join("copilot-cache");
    std::fs::create_dir_all(&cache).expect("copilot cache dir");
    env.retain(|(name, _)| *name != "XDG_CACHE_HOME");
    env.extend([
        ("XDG_CACHE_HOME", cache.display().to_string()),
        (
            "COPILOT_HOME",
            project.path().join("copilot").display().to_string(),
        ),
    ]);
    let output = atomic_run(&project, &env).await;
    assert!(fake.remaining() == 0, "tools offered: {:?}", offered(&fake));
    assert_noted(&project, &output, &notes);
}

/// The names of the tools a Responses API request offers (`function` tools, and those in
/// a `namespace`).
fn responses_tool_names(body: &Value) -> Vec<String> {
    let mut names = Vec::new();
    for tool in body["tools"].as_array().into_iter().flatten() {
        if let Some(name) = tool["name"].as_str() {
            names.push(name.to_owned());
        }
        for inner in tool["tools"].as_array().into_iter().flatten() {
            if let Some(name) = inner["name"].as_str() {
                names.push(format!("{}/{name}", tool["name"].as_str().unwrap_or("?")));
            }
        }
    }
    names
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_calls_a_tool_of_a_declared_mcp_server() {
    let Some(bin) = agent_cli("codex", "@openai/codex") else {
        return;
    };
    let Some((python, server)) = notes_server() else {
        return;
    };
    let project = CliProject::new();
    let fake = FakeResponses::start();
    fake.require_key(SECRET)
        .push(ResponsesTurn::call(
            "mcp__notes/note",
            json!({"text": "hello from the agent"}),
        ))
        .push(ResponsesTurn::text(CLOSING));
    let provider = format!(
        r#"provider "model" adapter="codex" model="gpt-5" api-key-env="TEST_MODEL_KEY" base-url="{}" {{
        option "bin" {:?}
    }}"#,
        fake.base_url(),
        bin.display().to_string(),
    );
    let notes = write_flow(&project, &provider, &python, &server);
    let mut env = isolated_env(&project);
    env.extend([
        ("TMPDIR", project.path().display().to_string()),
        ("NO_PROXY", "127.0.0.1,localhost".to_owned()),
        ("no_proxy", "127.0.0.1,localhost".to_owned()),
    ]);
    let output = atomic_run(&project, &env).await;
    let requests = fake.responses_requests();
    let offered: Vec<Vec<String>> = requests
        .iter()
        .map(|request| responses_tool_names(&request.json()))
        .collect();
    // Codex offers a server's tools in a namespace of its own, `mcp__<server>`.
    assert!(
        offered[0].iter().any(|name| name == "mcp__notes/note"),
        "{offered:?}"
    );
    assert_noted(&project, &output, &notes);
    // The tool's result reached the model.
    let last = requests.last().expect("a request").json();
    assert!(
        last["input"].to_string().contains("noted"),
        "{offered:?} {last}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gemini_calls_a_tool_of_a_declared_mcp_server() {
    let Some(bin) = agent_cli("gemini", "@google/gemini-cli") else {
        return;
    };
    let Some((python, server)) = notes_server() else {
        return;
    };
    let project = CliProject::new();
    // Under the system's temporary directory on purpose: the servers reach the CLI however
    // open the directories above its home are.
    let home = tempfile::tempdir().expect("gemini home");
    let fake = FakeGemini::start(vec![
        GeminiTurn::call("mcp_notes_note", json!({"text": "hello from the agent"})),
        GeminiTurn::text(CLOSING),
    ]);
    let provider = format!(
        r#"provider "model" adapter="gemini" model="gemini-2.5-flash" api-key-env="TEST_MODEL_KEY" base-url="{}" {{
        option "bin" {:?}
        option "home" {:?}
    }}"#,
        fake.url(),
        bin.display().to_string(),
        home.path().display().to_string(),
    );
    let notes = write_flow(&project, &provider, &python, &server);
    let mut env = isolated_env(&project);
    env.push(("NO_PROXY", "127.0.0.1,localhost".to_owned()));
    let output = atomic_run(&project, &env).await;
    let bodies = fake.turn_bodies();
    let offered: Vec<String> = bodies
        .first()
        .map(|body| body["tools"].to_string())
        .unwrap_or_default()
        .split('"')
        .filter(|word| word.starts_with("mcp_"))
        .map(str::to_owned)
        .collect();
    // Gemini offers a server's tools as `mcp_<server>_<tool>`.
    assert!(
        offered.iter().any(|name| name == "mcp_notes_note"),
        "{offered:?}{}{}",
        stdout(&output),
        stderr(&output)
    );
    assert_noted(&project, &output, &notes);
    assert_eq!(fake.remaining(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_acp_agent_calls_a_tool_of_a_declared_mcp_server() {
    let Some(bin) = agent_cli("gemini", "@google/gemini-cli") else {
        return;
    };
    let Some((python, server)) = notes_server() else {
        return;
    };
    let project = CliProject::new();
    // The Gemini CLI in ACP mode, its own settings in its own home; the servers reach it in
    // `session/new`, started through `env -u` without the agent's key. It starts no MCP
    // server in a folder it does not trust, hence `--skip-trust`.
    let home = crate::support::fake_gemini::acp_home(project.path());
    let fake = FakeGemini::start(vec![
        GeminiTurn::call("mcp_notes_note", json!({"text": "hello from the agent"})),
        GeminiTurn::text(CLOSING),
    ]);
    let provider = format!(
        r#"provider "model" adapter="acp" api-key-env="GEMINI_API_KEY" {{
        command {:?} "--acp" "--skip-trust"
        option "env.GOOGLE_GEMINI_BASE_URL" {:?}
        option "env.GEMINI_CLI_HOME" {:?}
    }}"#,
        bin.display().to_string(),
        fake.url(),
        home.display().to_string(),
    );
    let notes = write_flow(&project, &provider, &python, &server);
    let mut env = isolated_env(&project);
    env.push(("GEMINI_API_KEY", SECRET.to_owned()));
    env.push(("NO_PROXY", "127.0.0.1,localhost".to_owned()));
    let output = atomic_run(&project, &env).await;
    let offered = fake
        .turn_bodies()
        .first()
        .map(|body| body["tools"].to_string())
        .unwrap_or_default();
    assert!(
        offered.contains("mcp_notes_note"),
        "{offered}{}{}",
        stdout(&output),
        stderr(&output)
    );
    assert_noted(&project, &output, &notes);
}
