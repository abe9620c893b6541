//! `adapter="acp"`: real ACP agents — the Gemini CLI in ACP mode (`gemini --acp`),
//! `claude-code-acp` and `codex-acp`, pinned by `.ci/install-agents.sh` — each against a
//! fake model server on 127.0.0.1, with every proxy variable at a trap that must stay
//! untouched. A missing agent skips its tests locally and fails them under `CI=true`.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use atomic::ir::{PermissionMode, ProviderDecl};
use atomic::providers::{
    AgentEvent, AgentReply, AgentRequest, Environment, Provider, ProviderError,
};
use atomic::source::{Span, Spanned};
use serde_json::{Value, json};

use crate::providers_gemini::{ProxyTrap, processes_in};
use crate::support::cli_project::{CliProject, stderr};
use crate::support::fake_anthropic::{FakeAnthropic, Turn as AnthropicTurn};
use crate::support::fake_gemini::{FakeGemini, OUTPUT_TOKENS, PROMPT_TOKENS, Turn};
use crate::support::fake_responses::{FakeResponses, Turn as ResponsesTurn};
use crate::support::tools::agent_cli;
use crate::support::within;
use atomic::providers::{CallId, Prompt};

/// Upper bound for one agent call.
const CALL_LIMIT: Duration = Duration::from_secs(90);

/// The key every agent is given (under its own variable's name).
const SECRET: &str = "acp-atomic-test-5e0b91";

fn spanned(text: &str) -> Spanned<String> {
    Spanned::new(text.to_owned(), Span::default())
}

/// A clean environment inside `root` with the key in `key_var` and the proxy trap.
fn acp_env(root: &Path, key_var: &str, trap: &ProxyTrap) -> Environment {
    let home = root.join("home");
    std::fs::create_dir_all(&home).expect("home dir");
    let path = std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".to_owned());
    let env = Environment::default()
        .with("PATH", path)
        .with("HOME", home.display().to_string())
        .with(
            "XDG_CONFIG_HOME",
            home.join(".config").display().to_string(),
        )
        .with("XDG_STATE_HOME", home.join(".state").display().to_string())
        .with(key_var, SECRET);
    trap.variables()
        .into_iter()
        .fold(env, |env, (name, value)| env.with(name, value))
}

fn decl(command: &[String], key_var: &str, options: Value) -> ProviderDecl {
    let Value::Object(options) = options else {
        unreachable!("an object");
    };
    ProviderDecl {
        name: spanned("agent"),
        adapter: spanned("acp"),
        model: None,
        base_url: None,
        api_key_env: Some(spanned(key_var)),
        cassette: None,
        command: command.iter().map(|arg| spanned(arg)).collect(),
        options,
        span: Span::default(),
    }
}

/// A temporary root with a `workspace/` holding `notes.txt` saying `draft`.
fn workspace() -> (tempfile::TempDir, PathBuf) {
    let root = tempfile::tempdir().expect("temp dir");
    let workspace = root.path().join("workspace");
    std::fs::create_dir_all(&workspace).expect("workspace");
    std::fs::write(workspace.join("notes.txt"), "status: draft\n").expect("notes");
    (root, workspace)
}

fn request(prompt: &str, workspace: &Path) -> AgentRequest {
    AgentRequest {
        call: CallId {
            node_id: "agent".to_owned(),
            ..CallId::default()
        },
        prompt: Prompt {
            text: prompt.to_owned(),
            ..Prompt::default()
        },
        workspace: atomic::workspace::Workspace::new(workspace.to_path_buf()),
        ..AgentRequest::default()
    }
}

async fn call(
    provider: &dyn Provider,
    request: &AgentRequest,
) -> (Result<AgentReply, ProviderError>, Vec<AgentEvent>) {
    let events = Mutex::new(Vec::new());
    let sink = |event: AgentEvent| events.lock().expect("events lock").push(event);
    let result = within(CALL_LIMIT, provider.run(request, &sink)).await;
    // The agent's group is ending (its node children may outlive it by a moment): wait
    // until it is gone, so its private temp directory is removed before the test exits.
    atomic::process::ended().await;
    let events = events.into_inner().expect("events lock");
    crate::support::assert_contract(provider.adapter(), &events, &result);
    (result, events)
}

// ---- Gemini CLI in ACP mode ----

fn gemini_acp(
    bin: &Path,
    fake: &FakeGemini,
    root: &Path,
    trap: &ProxyTrap,
) -> std::sync::Arc<dyn Provider> {
    let home = crate::support::fake_gemini::acp_home(root);
    let command = [
        bin.display().to_string(),
        "--acp".to_owned(),
        "-m".to_owned(),
        "gemini-2.5-flash".to_owned(),
    ];
    let options = json!({
        "env.GOOGLE_GEMINI_BASE_URL": fake.url(),
        "env.GEMINI_CLI_HOME": home.display().to_string(),
        "env.GEMINI_CLI_NO_RELAUNCH": "true",
    });
    let env = acp_env(root, "GEMINI_API_KEY", trap);
    crate::support::adapter(&decl(&command, "GEMINI_API_KEY", options), &env).expect("configured")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gemini_over_acp_answers_and_reports_usage() {
    let Some(bin) = agent_cli("gemini", "@google/gemini-cli") else {
        return;
    };
    let (root, workspace) = workspace();
    let trap = ProxyTrap::start();
    let fake = FakeGemini::start(vec![Turn::text("Hello over ACP.")]);
    let agent = gemini_acp(&bin, &fake, root.path(), &trap);
    let mut request = request("Say hello.", &workspace);
    request.prompt.system = Some("Answer in one sentence.".to_owned());
    let (reply, events) = call(agent.as_ref(), &request).await;
    let reply = reply.expect("the call succeeds");
    assert_eq!(reply.text, "Hello over ACP.");
    assert!(reply.session_id.is_some(), "{reply:?}");
    // The Gemini CLI reports the turn's tokens in the prompt response's `_meta`.
    assert_eq!(
        (reply.usage.input_tokens, reply.usage.output_tokens),
        (PROMPT_TOKENS, OUTPUT_TOKENS),
        "{reply:?}"
    );
    assert!(
        events.contains(&AgentEvent::Usage {
            usage: reply.usage,
            cost_usd: None
        }),
        "{events:?}"
    );
    let streamed: String = events
        .iter()
        .filter_map(|event| match event {
            AgentEvent::TextDelta { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(streamed, "Hello over ACP.", "{events:?}");
    let turn = fake
        .turn_bodies()
        .into_iter()
        .next()
        .expect("a turn reached the fake");
    let sent = turn["contents"].to_string();
    assert!(
        sent.contains("Answer in one sentence.") && sent.contains("Say hello."),
        "{sent}"
    );
    let key = fake
        .requests()
        .iter()
        .find_map(|r| r.header("x-goog-api-key").map(str::to_owned));
    assert_eq!(key.as_deref(), Some(SECRET));
    trap.assert_untouched();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gemini_over_acp_writes_a_file_when_edits_are_accepted() {
    let Some(bin) = agent_cli("gemini", "@google/gemini-cli") else {
        return;
    };
    let (root, workspace) = workspace();
    let trap = ProxyTrap::start();
    let target = workspace.join("docs/hello.txt");
    let fake = FakeGemini::start(vec![
        Turn::call(
            "write_file",
            json!({"file_path": target.display().to_string(), "content": "hi from the agent\n"}),
        ),
        Turn::text("Wrote docs/hello.txt."),
    ]);
    let agent = gemini_acp(&bin, &fake, root.path(), &trap);
    let mut request = request("Write docs/hello.txt.", &workspace);
    request.grants.permission = Some(PermissionMode::AcceptEdits);
    let (reply, events) = call(agent.as_ref(), &request).await;
    let reply = reply.expect("the call succeeds");
    assert_eq!(
        std::fs::read_to_string(&target).unwrap_or_else(|e| panic!("{e}: {events:?}")),
        "hi from the agent\n"
    );
    assert_eq!(reply.text, "Wrote docs/hello.txt.");
    assert!(
        events.iter().any(|event| matches!(
            event,
            AgentEvent::ToolComplete {
                is_error: false,
                ..
            }
        )),
        "{events:?}"
    );
    assert!(
        events
            .iter()
            .any(|event| matches!(event, AgentEvent::ToolStart { .. })),
        "{events:?}"
    );
    trap.assert_untouched();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gemini_over_acp_is_refused_a_shell_command_under_the_default_mode() {
    let Some(bin) = agent_cli("gemini", "@google/gemini-cli") else {
        return;
    };
    let (root, workspace) = workspace();
    let trap = ProxyTrap::start();
    let fake = FakeGemini::start(vec![
        Turn::call(
            "run_shell_command",
            json!({"command": "echo hi > shell.txt", "description": "write a file"}),
        ),
        Turn::text("The command was refused."),
    ]);
    let agent = gemini_acp(&bin, &fake, root.path(), &trap);
    let (reply, events) = call(agent.as_ref(), &request("Run it.", &workspace)).await;
    let reply = reply.expect("the call ends normally");
    assert!(!workspace.join("shell.txt").exists(), "the command ran");
    assert!(
        events
            .iter()
            .any(|event| matches!(event, AgentEvent::PermissionRequest { granted: false, .. })),
        "{events:?}"
    );
    // The refused tool starts with what it was asked and is completed as an error (the
    // contract, checked by `call`, wants the completion).
    let started = events.iter().find_map(|event| match event {
        AgentEvent::ToolStart { input, .. } => Some(input),
        _ => None,
    });
    assert!(
        started.is_some_and(|input| input.to_string().contains("echo hi > shell.txt")),
        "{events:?}"
    );
    assert!(
        events
            .iter()
            .any(|event| matches!(event, AgentEvent::ToolComplete { is_error: true, .. })),
        "{events:?}"
    );
    assert_eq!(reply.text, "The command was refused.");
    // With `execute` granted, the same request is allowed.
    let fake = FakeGemini::start(vec![
        Turn::call(
            "run_shell_command",
            json!({"command": "echo hi > shell.txt", "description": "write a file"}),
        ),
        Turn::text("Ran it."),
    ]);
    let agent = gemini_acp(&bin, &fake, root.path(), &trap);
    let mut granted = request("Run it.", &workspace);
    granted.grants.tools = vec![atomic::providers::ToolGrant {
        name: "execute".to_owned(),
        description: None,
        input_schema: None,
        command: Vec::new(),
        timeout: None,
    }];
    let (reply, events) = call(agent.as_ref(), &granted).await;
    reply.expect("the call succeeds");
    assert!(workspace.join("shell.txt").exists(), "{events:?}");
    assert!(
        events
            .iter()
            .any(|event| matches!(event, AgentEvent::PermissionRequest { granted: true, .. })),
        "{events:?}"
    );
    trap.assert_untouched();
}

#[test]
fn a_timed_out_acp_agent_is_killed_with_its_process_group() {
    let Some(bin) = agent_cli("gemini", "@google/gemini-cli") else {
        return;
    };
    let project = CliProject::new();
    let trap = ProxyTrap::start();
    let fake = FakeGemini::start(vec![Turn::Hang]);
    let home = crate::support::fake_gemini::acp_home(project.path());
    project.write(
        "flow.kdl",
        &format!(
            r#"workflow "acp-timeout" {{
    state {{ field "answer" type="string" default=""; }}
    provider "gemini" adapter="acp" api-key-env="GEMINI_API_KEY" {{
        command "{bin}" "--acp"
        option "env.GOOGLE_GEMINI_BASE_URL" "{url}"
        option "env.GEMINI_CLI_HOME" "{home}"
    }}
    agent "ask" provider="gemini" timeout="20s" {{
        prompt "Answer."
        output "answer"
    }}
}}
"#,
            bin = bin.display(),
            url = fake.url(),
            home = home.display(),
        ),
    );
    let started = std::time::Instant::now();
    let mut command = project.atomic();
    command
        .args(["run", "flow.kdl", "--quiet"])
        .env("GEMINI_API_KEY", SECRET);
    for (name, value) in trap.variables() {
        command.env(name, value);
    }
    let output = command.output().expect("atomic runs");
    assert_ne!(output.status.code(), Some(0), "the node timed out");
    assert!(stderr(&output).contains("timed out"), "{}", stderr(&output));
    assert!(started.elapsed() < Duration::from_secs(60));
    assert!(
        !fake.turn_bodies().is_empty(),
        "the agent reached the model"
    );
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let left = processes_in(project.path());
        if left.is_empty() {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "processes survived the timed-out node: {left:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_missing_acp_agent_names_its_npm_package() {
    let env = Environment::default().with("PATH", "/nonexistent-atomic-bin");
    let error = crate::support::adapter(
        &decl(&["codex-acp".to_owned()], "CODEX_API_KEY", json!({})),
        &env.clone().with("CODEX_API_KEY", "k"),
    )
    .expect_err("not on PATH");
    assert!(matches!(error, ProviderError::Config { .. }), "{error}");
    assert!(
        error
            .to_string()
            .contains("npm install -g @zed-industries/codex-acp"),
        "{error}"
    );
}

// ---- claude-code-acp ----

fn claude_acp(
    bin: &Path,
    fake: &FakeAnthropic,
    root: &Path,
    trap: &ProxyTrap,
) -> std::sync::Arc<dyn Provider> {
    let options = json!({
        "env.ANTHROPIC_BASE_URL": fake.url(),
        "env.CLAUDE_CONFIG_DIR": root.join("claude").display().to_string(),
        "env.CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    });
    let env = acp_env(root, "ANTHROPIC_API_KEY", trap);
    crate::support::adapter(
        &decl(&[bin.display().to_string()], "ANTHROPIC_API_KEY", options),
        &env,
    )
    .expect("configured")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_acp_answers_and_continues_its_session() {
    let Some(bin) = agent_cli("claude-code-acp", "@zed-industries/claude-code-acp") else {
        return;
    };
    let (root, workspace) = workspace();
    let trap = ProxyTrap::start();
    let fake = FakeAnthropic::start();
    fake.set_fallback(AnthropicTurn::text("ok"));
    fake.push(AnthropicTurn::text("The code word is PELICAN."));
    let agent = claude_acp(&bin, &fake, root.path(), &trap);
    let (first, _) = call(agent.as_ref(), &request("Pick a code word.", &workspace)).await;
    let first = first.expect("the first call succeeds");
    assert_eq!(first.text, "The code word is PELICAN.");
    fake.push(AnthropicTurn::text("You asked for a code word."));
    let mut next = request("What did I ask before?", &workspace);
    next.session.resume = first.session_id.clone();
    let (second, _) = call(agent.as_ref(), &next).await;
    let second = second.expect("the continued call succeeds");
    assert_eq!(second.text, "You asked for a code word.");
    assert_eq!(second.session_id, first.session_id);
    let history = fake.message_bodies().last().expect("a second turn")["messages"].to_string();
    assert!(
        history.contains("Pick a code word.")
            && history.contains("PELICAN")
            && history.contains("What did I ask before?"),
        "{history}"
    );
    // Claude Code (inside the SDK) also tries api.anthropic.com beside the configured base
    // URL, as the `claude-code` adapter's does; the trap receives those CONNECTs, so nothing
    // leaves the machine, but they are not asserted away here.
}

// ---- codex-acp ----

fn codex_acp(
    bin: &Path,
    fake: &FakeResponses,
    root: &Path,
    trap: &ProxyTrap,
) -> std::sync::Arc<dyn Provider> {
    let home = root.join("codex-home");
    std::fs::create_dir_all(&home).expect("codex home");
    let mut command = vec![bin.display().to_string()];
    for item in [
        "check_for_update_on_startup=false".to_owned(),
        "analytics.enabled=false".to_owned(),
        "features.plugins=false".to_owned(),
        "features.remote_plugin=false".to_owned(),
        "features.apps=false".to_owned(),
        // A model the pinned agent knows (it warns in its reply about others).
        "model=\"gpt-5.4\"".to_owned(),
        "model_provider=\"atomic\"".to_owned(),
        "model_providers.atomic.name=\"atomic\"".to_owned(),
        format!("model_providers.atomic.base_url=\"{}\"", fake.base_url()),
        "model_providers.atomic.wire_api=\"responses\"".to_owned(),
        "model_providers.atomic.env_key=\"CODEX_API_KEY\"".to_owned(),
    ] {
        command.extend(["-c".to_owned(), item]);
    }
    let options = json!({"env.CODEX_HOME": home.display().to_string()});
    let env = acp_env(root, "CODEX_API_KEY", trap);
    crate::support::adapter(&decl(&command, "CODEX_API_KEY", options), &env).expect("configured")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_acp_answers_with_the_models_text() {
    let Some(bin) = agent_cli("codex-acp", "@zed-industries/codex-acp") else {
        return;
    };
    let (root, workspace) = workspace();
    let trap = ProxyTrap::start();
    let fake = FakeResponses::start();
    fake.require_key(SECRET);
    fake.push(ResponsesTurn::text("Hello from Codex over ACP."));
    let agent = codex_acp(&bin, &fake, root.path(), &trap);
    let (reply, events) = call(agent.as_ref(), &request("Say hello.", &workspace)).await;
    let reply = reply.expect("the call succeeds");
    assert_eq!(reply.text, "Hello from Codex over ACP.", "{events:?}");
    assert!(!fake.responses_requests().is_empty());
    trap.assert_untouched();
}

// ---- the Copilot CLI's own ACP mode ----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copilot_over_acp_answers_and_asks_before_it_edits() {
    let Some(bin) = agent_cli("copilot", "@github/copilot") else {
        return;
    };
    let (root, workspace) = workspace();
    let trap = ProxyTrap::start();
    let fake = FakeAnthropic::start();
    fake.push(AnthropicTurn::text("Hello from Copilot over ACP."));
    fake.set_fallback(AnthropicTurn::text("ok"));
    // One unpacked runtime per build directory, as the `copilot` adapter's tests share.
    let cache = Path::new(env!("CARGO_TARGET_TMPDIR")).join("copilot-cache");
    std::fs::create_dir_all(&cache).expect("copilot cache dir");
    let options = json!({
        "env.COPILOT_OFFLINE": "true",
        "env.COPILOT_PROVIDER_BASE_URL": fake.url(),
        "env.COPILOT_PROVIDER_TYPE": "anthropic",
        "env.COPILOT_MODEL": "claude-sonnet-4-5",
        "env.COPILOT_HOME": root.path().join("copilot").display().to_string(),
        "env.XDG_CACHE_HOME": cache.display().to_string(),
    });
    let env = acp_env(root.path(), "COPILOT_PROVIDER_API_KEY", &trap);
    let agent = crate::support::adapter(
        &decl(
            &[bin.display().to_string(), "--acp".to_owned()],
            "COPILOT_PROVIDER_API_KEY",
            options,
        ),
        &env,
    )
    .expect("configured");
    let (reply, events) = call(agent.as_ref(), &request("Say hello.", &workspace)).await;
    let reply = reply.unwrap_or_else(|error| panic!("{error}: {events:?}"));
    assert_eq!(reply.text, "Hello from Copilot over ACP.", "{events:?}");
    // It reports the turn's tokens in the prompt response's `usage`.
    assert!(
        reply.usage.input_tokens > 0 && reply.usage.output_tokens > 0,
        "{reply:?}"
    );
    assert!(!fake.message_bodies().is_empty());
    // Unlike its `-p` mode, the CLI asks before an edit runs, and is refused under the
    // default mode: the file is untouched.
    let notes = workspace.join("notes.txt");
    fake.push(AnthropicTurn::tool_use(
        "edit",
        json!({"path": notes.display().to_string(), "old_str": "draft", "new_str": "final"}),
    ));
    fake.push(AnthropicTurn::text("The edit was refused."));
    let (reply, events) = call(
        agent.as_ref(),
        &request("Mark the notes final.", &workspace),
    )
    .await;
    reply.unwrap_or_else(|error| panic!("{error}: {events:?}"));
    assert!(
        events
            .iter()
            .any(|event| matches!(event, AgentEvent::PermissionRequest { granted: false, .. })),
        "{events:?}"
    );
    assert_eq!(
        std::fs::read_to_string(&notes).expect("notes"),
        "status: draft\n"
    );
    trap.assert_untouched();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gemini_over_acp_refused_credentials_are_an_auth_failure_naming_the_key_variable() {
    let Some(bin) = agent_cli("gemini", "@google/gemini-cli") else {
        return;
    };
    let (root, workspace) = workspace();
    let trap = ProxyTrap::start();
    let fake = FakeGemini::start(Vec::new());
    fake.fail_with(401);
    let agent = gemini_acp(&bin, &fake, root.path(), &trap);
    let (result, events) = call(agent.as_ref(), &request("Hello?", &workspace)).await;
    let error = result.expect_err("the key is refused");
    assert_eq!(error.class().name(), "auth", "{error:?}: {events:?}");
    assert!(
        matches!(error, ProviderError::Auth { status: 401, .. }),
        "{error:?}"
    );
    let text = error.to_string();
    assert!(text.contains("`GEMINI_API_KEY`"), "{text}");
    assert!(!text.contains(SECRET), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_that_dies_is_a_process_exit_with_its_stderr() {
    let (root, workspace) = workspace();
    let command = [
        "sh".to_owned(),
        "-c".to_owned(),
        "echo 'no ACP here' >&2; exit 3".to_owned(),
    ];
    let env = Environment::default()
        .with("PATH", std::env::var("PATH").unwrap_or_default())
        .with("AGENT_KEY", SECRET);
    let agent =
        crate::support::adapter(&decl(&command, "AGENT_KEY", json!({})), &env).expect("configured");
    let (result, _) = call(agent.as_ref(), &request("Hello?", &workspace)).await;
    let error = result.expect_err("the agent died");
    assert!(
        matches!(&error, ProviderError::ProcessExit { code: Some(3), stderr, .. } if stderr.contains("no ACP here")),
        "{error:?}"
    );
    drop(root);
}
