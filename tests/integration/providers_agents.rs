//! End-to-end tests of the agent-CLI adapters against the real CLIs (installed at pinned
//! versions by `.ci/install-agents.sh` into `.ci/agents/`, or found on PATH), each pointed at
//! a scripted fake model server on 127.0.0.1. The fake asks for tool calls that edit a file in
//! a temporary workspace, the CLI performs them, and the fake closes with a text; the tests
//! assert the file changed and the adapter's reply is that closing text.
//!
//! A missing CLI skips its test with a loud message locally and fails it under `CI=true`.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use atomic::ir::{PermissionMode, ProviderDecl};
use atomic::providers::{
    AgentEvent, AgentReply, AgentRequest, Environment, OpenCode, Provider, ProviderError, ToolGrant,
};
use atomic::source::{Span, Spanned};
use serde_json::{Value, json};

use crate::support::scripted_anthropic::{ScriptedAnthropic, Step};
use crate::support::tools::agent_cli;
use atomic::providers::{CallId, Continuation, Grants, Limits, Prompt};

/// An `opencode` provider as a run builds it (its own type: tests ask it for its server).
fn opencode(decl: &ProviderDecl, env: &Environment) -> Result<OpenCode, ProviderError> {
    OpenCode::new(
        decl,
        &atomic::providers::ProviderContext::new(Path::new("."), env),
    )
}

/// Upper bound for one agent call (the CLIs answer a scripted turn in a few seconds).
const CALL_LIMIT: Duration = Duration::from_secs(120);

fn spanned(text: &str) -> Spanned<String> {
    Spanned::new(text.to_owned(), Span::default())
}

fn decl(
    adapter: &str,
    model: &str,
    base_url: Option<&str>,
    key_env: Option<&str>,
    options: Value,
) -> ProviderDecl {
    let Value::Object(options) = options else {
        panic!("options must be an object");
    };
    ProviderDecl {
        name: spanned(adapter),
        adapter: spanned(adapter),
        model: Some(spanned(model)),
        base_url: base_url.map(spanned),
        api_key_env: key_env.map(spanned),
        cassette: None,
        command: Vec::new(),
        options,
        span: Span::default(),
    }
}

/// [`isolated_env`] for Claude Code: its own config directory, no non-essential traffic,
/// and the test key in `ATOMIC_TEST_KEY` (the `api-key-env` the tests name).
fn claude_env(root: &Path) -> Environment {
    isolated_env(root)
        .with(
            "CLAUDE_CONFIG_DIR",
            root.join("claude").display().to_string(),
        )
        .with("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .with("ATOMIC_TEST_KEY", SECRET)
}

/// A clean environment: the real PATH, everything else inside `root`.
fn isolated_env(root: &Path) -> Environment {
    let home = root.join("home");
    std::fs::create_dir_all(&home).expect("home dir");
    let path = std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".to_owned());
    Environment::default()
        .with("PATH", path)
        .with("HOME", home.display().to_string())
        .with(
            "XDG_CONFIG_HOME",
            home.join(".config").display().to_string(),
        )
        .with(
            "XDG_DATA_HOME",
            home.join(".local/share").display().to_string(),
        )
        .with("XDG_CACHE_HOME", home.join(".cache").display().to_string())
        .with(
            "XDG_STATE_HOME",
            home.join(".local/state").display().to_string(),
        )
}

/// The isolated environment plus Copilot's own home. Copilot unpacks its 235 MB runtime into
/// `$XDG_CACHE_HOME/copilot/pkg` on first start; one cache shared by every test (keyed by the
/// CLI's version, unpacked atomically by the CLI) keeps that to once per build directory
/// instead of once per test, which filled CI's disk.
fn copilot_env(root: &Path) -> Environment {
    let cache = Path::new(env!("CARGO_TARGET_TMPDIR")).join("copilot-cache");
    std::fs::create_dir_all(&cache).expect("copilot cache dir");
    isolated_env(root)
        .with("COPILOT_HOME", root.join("copilot").display().to_string())
        .with("XDG_CACHE_HOME", cache.display().to_string())
}

fn tools(names: &[&str]) -> Vec<ToolGrant> {
    names
        .iter()
        .map(|name| ToolGrant {
            name: (*name).to_owned(),
            description: None,
            input_schema: None,
            command: Vec::new(),
            timeout: None,
        })
        .collect()
}

/// Runs one call with a time limit, collecting its events.
async fn call(
    provider: &dyn Provider,
    request: &AgentRequest,
) -> (Result<AgentReply, ProviderError>, Vec<AgentEvent>) {
    let events = Mutex::new(Vec::new());
    let sink = |event: AgentEvent| events.lock().expect("events lock").push(event);
    let result = tokio::time::timeout(CALL_LIMIT, provider.run(request, &sink))
        .await
        .unwrap_or_else(|_| {
            panic!(
                "`{}` did not answer within {CALL_LIMIT:?}",
                provider.adapter()
            )
        });
    let events = events.into_inner().expect("events lock");
    crate::support::assert_contract(provider.adapter(), &events, &result);
    (result, events)
}

fn tool_starts(events: &[AgentEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|event| match event {
            AgentEvent::ToolStart { name, .. } => Some(name.clone()),
            _ => None,
        })
        .collect()
}

/// The fractions of the context-window events, in order.
fn context_fractions(events: &[AgentEvent]) -> Vec<f64> {
    events
        .iter()
        .filter_map(|event| match event {
            AgentEvent::ContextWindow { fraction } => Some(*fraction),
            _ => None,
        })
        .collect()
}

/// The context window the OpenCode test configures for its model.
const OPENCODE_CONTEXT: u32 = 1000;

/// Prompt tokens the scripted fake reports for every model call (`input_tokens` 12, no cache).
const FAKE_PROMPT_TOKENS: f64 = 12.0;

/// The secret the provider names with `api-key-env`; the fake checks it arrives.
const SECRET: &str = "sk-atomic-test-3f9a1c";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_edits_a_file_through_the_real_cli() {
    let Some(bin) = agent_cli("claude", "@anthropic-ai/claude-code") else {
        return;
    };
    let root = tempfile::tempdir().expect("temp dir");
    let workspace = root.path().join("workspace");
    std::fs::create_dir_all(&workspace).expect("workspace");
    let target = workspace.join("target.txt");
    std::fs::write(&target, "status: original\n").expect("write target");
    let file = target.display().to_string();

    let fake = ScriptedAnthropic::start(read_edit_close(
        "Read",
        "Edit",
        &file,
        "status: original",
        "status: edited by claude",
        "Claude Code closing text: target.txt is edited.",
    ))
    .await;

    let env = claude_env(root.path())
        // Never handed to the CLI: only the variable named by `api-key-env` is.
        .with("ANTHROPIC_API_KEY", "sk-wrong-key");
    let provider = crate::support::adapter(
        &decl(
            "claude-code",
            "claude-sonnet-4-5",
            Some(&fake.base_url()),
            Some("ATOMIC_TEST_KEY"),
            json!({"bin": bin.display().to_string()}),
        ),
        &env,
    )
    .expect("configured");

    let request = AgentRequest {
        call: CallId {
            node_id: "edit".to_owned(),
            ..CallId::default()
        },
        prompt: Prompt {
            text: "Change the status line of target.txt to `edited`.".to_owned(),
            system: Some("You are terse.".to_owned()),
        },
        workspace: atomic::workspace::Workspace::new(workspace.clone()),
        grants: Grants {
            tools: tools(&["Read", "Edit"]),
            permission: Some(PermissionMode::AcceptEdits),
            ..Grants::default()
        },
        limits: Limits {
            max_turns: Some(6),
            ..Limits::default()
        },
        ..AgentRequest::default()
    };
    let (reply, events) = call(provider.as_ref(), &request).await;
    let reply = reply.expect("the call succeeds");

    assert_eq!(
        reply.text,
        "Claude Code closing text: target.txt is edited."
    );
    assert_eq!(
        std::fs::read_to_string(&target).expect("read target"),
        "status: edited by claude\n"
    );
    let session = reply.session_id.clone().expect("a session id");
    assert_eq!(tool_starts(&events), ["Read", "Edit"]);
    assert!(
        events.iter().any(|event| matches!(event,
            AgentEvent::ToolComplete { name, is_error: false, .. } if name == "Edit")),
        "{events:#?}"
    );
    assert!(events.contains(&AgentEvent::SessionStart {
        session_id: Some(session.clone()),
        model: Some("claude-sonnet-4-5".to_owned()),
    }));
    let main: Vec<_> = fake
        .requests()
        .into_iter()
        .filter(|r| r.has_tools())
        .collect();
    assert_eq!(main.len(), 3, "three model calls: Read, Edit, closing text");
    assert!(main.iter().all(|r| r.header("x-api-key") == Some(SECRET)));
    let system = main[0].body["system"].to_string();
    assert!(
        system.contains("You are terse."),
        "system prompt appended: {system}"
    );

    // Resume the session: the next call carries the earlier conversation.
    let again = AgentRequest {
        call: CallId {
            index: 1,
            ..request.call.clone()
        },
        prompt: Prompt {
            text: "Anything else?".to_owned(),
            ..request.prompt.clone()
        },
        session: Continuation {
            resume: Some(session.clone()),
            ..request.session.clone()
        },
        ..request
    };
    let (reply, _) = call(provider.as_ref(), &again).await;
    let reply = reply.expect("the resumed call succeeds");
    assert_eq!(reply.session_id.as_deref(), Some(session.as_str()));
    let last = fake
        .requests()
        .into_iter()
        .rfind(|r| r.has_tools())
        .expect("a resumed model call");
    let history = last.body["messages"].to_string();
    assert!(
        history.contains("Change the status line") && history.contains("Anything else?"),
        "the resumed call sends the first turn too: {history}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn opencode_edits_a_file_through_a_started_server() {
    let Some(bin) = agent_cli("opencode", "opencode-ai") else {
        return;
    };
    let root = tempfile::tempdir().expect("temp dir");
    let workspace = root.path().join("workspace");
    std::fs::create_dir_all(&workspace).expect("workspace");
    let target = workspace.join("target.txt");
    std::fs::write(&target, "status: original\n").expect("write target");
    let file = target.display().to_string();

    let fake = ScriptedAnthropic::start(read_edit_close(
        "read",
        "edit",
        &file,
        "status: original",
        "status: edited by opencode",
        "OpenCode closing text: target.txt is edited.",
    ))
    .await;

    // The model's context window is shrunk to OPENCODE_CONTEXT tokens (OpenCode's bundled
    // catalogue says 1M), so the reported fraction shows which limit the adapter used.
    let config = json!({
        "autoupdate": false,
        "share": "disabled",
        "provider": {"anthropic": {
            "options": {
                "baseURL": format!("{}/v1", fake.base_url()),
                "apiKey": "{env:ATOMIC_TEST_KEY}",
            },
            "models": {"claude-sonnet-4-5": {"limit": {"context": OPENCODE_CONTEXT, "output": 500}}},
        }},
    });
    let env = isolated_env(root.path())
        .with("OPENCODE_DISABLE_MODELS_FETCH", "1")
        .with("OPENCODE_DISABLE_LSP_DOWNLOAD", "1")
        .with("ATOMIC_TEST_KEY", SECRET)
        .with("ANTHROPIC_API_KEY", "sk-wrong-key");
    let provider = opencode(
        &decl(
            "opencode",
            "anthropic/claude-sonnet-4-5",
            None,
            Some("ATOMIC_TEST_KEY"),
            json!({"bin": bin.display().to_string(), "config": config.to_string()}),
        ),
        &env,
    )
    .expect("configured");

    let request = AgentRequest {
        call: CallId {
            node_id: "edit".to_owned(),
            ..CallId::default()
        },
        prompt: Prompt {
            text: "Change the status line of target.txt to `edited`.".to_owned(),
            system: Some("You are terse.".to_owned()),
        },
        workspace: atomic::workspace::Workspace::new(workspace.clone()),
        grants: Grants {
            tools: tools(&["read"]),
            permission: Some(PermissionMode::AcceptEdits),
            ..Grants::default()
        },
        ..AgentRequest::default()
    };
    let (reply, events) = call(&provider, &request).await;
    let reply = reply.expect("the call succeeds");

    assert_eq!(reply.text, "OpenCode closing text: target.txt is edited.");
    assert_eq!(
        std::fs::read_to_string(&target).expect("read target"),
        "status: edited by opencode\n"
    );
    let session = reply.session_id.clone().expect("a session id");
    assert!(session.starts_with("ses"), "{session}");
    assert_eq!(tool_starts(&events), ["read", "edit"]);
    assert!(
        events.iter().any(|event| matches!(event,
            AgentEvent::ToolComplete { name, is_error: false, .. } if name == "edit")),
        "{events:#?}"
    );
    assert_eq!(
        context_fractions(&events),
        [FAKE_PROMPT_TOKENS / f64::from(OPENCODE_CONTEXT)],
        "one context-window event per call, the last model call's prompt over the window"
    );
    let main: Vec<_> = fake
        .requests()
        .into_iter()
        .filter(|r| r.has_tools())
        .collect();
    assert_eq!(main.len(), 3, "three model calls: read, edit, closing text");
    assert!(main.iter().all(|r| r.header("x-api-key") == Some(SECRET)));
    assert!(
        main[0].body["system"]
            .to_string()
            .contains("You are terse.")
    );

    // The session continues on the same server.
    let again = AgentRequest {
        call: CallId {
            index: 1,
            ..request.call.clone()
        },
        prompt: Prompt {
            text: "Anything else?".to_owned(),
            ..request.prompt.clone()
        },
        session: Continuation {
            resume: Some(session.clone()),
            ..request.session.clone()
        },
        ..request
    };
    let (reply, events) = call(&provider, &again).await;
    assert_eq!(
        reply.expect("the resumed call succeeds").session_id,
        Some(session)
    );
    assert_eq!(
        context_fractions(&events),
        [FAKE_PROMPT_TOKENS / f64::from(OPENCODE_CONTEXT)],
        "the cached window serves the resumed call"
    );
    let last = fake
        .requests()
        .into_iter()
        .rfind(|r| r.has_tools())
        .expect("a resumed model call");
    let history = last.body["messages"].to_string();
    assert!(history.contains("Change the status line") && history.contains("Anything else?"));

    // Dropping the provider shuts the server down.
    let url = provider.server_url().expect("a started server").to_owned();
    drop(provider);
    let client = atomic::tls::client();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while client
        .get(format!("{url}/global/health"))
        .send()
        .await
        .is_ok()
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the server outlived its provider"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copilot_edits_a_file_with_a_byok_model() {
    let Some(bin) = agent_cli("copilot", "@github/copilot") else {
        return;
    };
    let root = tempfile::tempdir().expect("temp dir");
    let workspace = root.path().join("workspace");
    std::fs::create_dir_all(&workspace).expect("workspace");
    let target = workspace.join("target.txt");
    std::fs::write(&target, "status: original\n").expect("write target");
    let file = target.display().to_string();

    let fake = ScriptedAnthropic::start(read_edit_close(
        "view",
        "edit",
        &file,
        "status: original",
        "status: edited by copilot",
        "Copilot closing text: target.txt is edited.",
    ))
    .await;

    let env = copilot_env(root.path())
        .with("ATOMIC_TEST_KEY", SECRET)
        // Never handed to the CLI: the GitHub token is a secret it is not given.
        .with("GITHUB_TOKEN", "ghp-wrong-token");
    let provider = crate::support::adapter(
        &decl(
            "copilot",
            "claude-sonnet-4-5",
            Some(&fake.base_url()),
            Some("ATOMIC_TEST_KEY"),
            json!({"bin": bin.display().to_string(), "provider-type": "anthropic"}),
        ),
        &env,
    )
    .expect("configured");

    let request = AgentRequest {
        call: CallId {
            node_id: "edit".to_owned(),
            ..CallId::default()
        },
        prompt: Prompt {
            text: "Change the status line of target.txt to `edited`.".to_owned(),
            system: Some("You are terse.".to_owned()),
        },
        workspace: atomic::workspace::Workspace::new(workspace.clone()),
        grants: Grants {
            permission: Some(PermissionMode::AcceptEdits),
            ..Grants::default()
        },
        ..AgentRequest::default()
    };
    let (reply, events) = call(provider.as_ref(), &request).await;
    let reply = reply.expect("the call succeeds");

    assert_eq!(reply.text, "Copilot closing text: target.txt is edited.");
    assert_eq!(
        std::fs::read_to_string(&target).expect("read target"),
        "status: edited by copilot\n"
    );
    let session = reply.session_id.clone().expect("a session id");
    assert_eq!(tool_starts(&events), ["view", "edit"]);
    assert!(
        events.iter().any(|event| matches!(event,
            AgentEvent::ToolComplete { name, is_error: false, .. } if name == "edit")),
        "{events:#?}"
    );
    assert!(
        reply.usage.input_tokens > 0 && reply.usage.output_tokens > 0,
        "{:?}",
        reply.usage
    );
    let main: Vec<_> = fake
        .requests()
        .into_iter()
        .filter(|r| r.has_tools())
        .collect();
    assert_eq!(main.len(), 3, "three model calls: view, edit, closing text");
    assert!(main.iter().all(|r| r.header("x-api-key") == Some(SECRET)));
    assert!(
        main[0].body["messages"]
            .to_string()
            .contains("You are terse.")
    );

    // Resume the session: the next call carries the earlier conversation.
    let again = AgentRequest {
        call: CallId {
            index: 1,
            ..request.call.clone()
        },
        prompt: Prompt {
            text: "Anything else?".to_owned(),
            ..request.prompt.clone()
        },
        session: Continuation {
            resume: Some(session.clone()),
            ..request.session.clone()
        },
        ..request
    };
    let (reply, _) = call(provider.as_ref(), &again).await;
    assert_eq!(
        reply.expect("the resumed call succeeds").session_id,
        Some(session)
    );
    let last = fake
        .requests()
        .into_iter()
        .rfind(|r| r.has_tools())
        .expect("a resumed model call");
    let history = last.body["messages"].to_string();
    assert!(history.contains("Change the status line") && history.contains("Anything else?"));
}

/// Processes whose working directory is inside `dir` (Linux `/proc`).
fn processes_in(dir: &Path) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|cwd| cwd.starts_with(dir))
        })
        .collect()
}

/// Starts a call whose model never answers, waits until the CLI is talking to the fake, drops
/// the call, and checks every process it started (the CLI and its children) is gone.
async fn cancelling_kills_the_cli(
    provider: &dyn Provider,
    fake: &ScriptedAnthropic,
    workspace: &Path,
) {
    let request = AgentRequest {
        call: CallId {
            node_id: "hang".to_owned(),
            ..CallId::default()
        },
        prompt: Prompt {
            text: "Wait forever.".to_owned(),
            ..Prompt::default()
        },
        workspace: atomic::workspace::Workspace::new(workspace.to_path_buf()),
        grants: Grants {
            permission: Some(PermissionMode::AcceptEdits),
            ..Grants::default()
        },
        limits: Limits {
            max_turns: Some(2),
            ..Limits::default()
        },
        ..AgentRequest::default()
    };
    let sink = |_: AgentEvent| {};
    let mut call = provider.run(&request, &sink);
    let waiting = async {
        while !fake.requests().iter().any(|r| r.has_tools()) {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    tokio::select! {
        result = &mut call => panic!("the call ended although the model never answered: {result:?}"),
        () = waiting => {}
        () = tokio::time::sleep(CALL_LIMIT) => panic!("the CLI never called the model"),
    }
    assert!(
        !processes_in(workspace).is_empty(),
        "the CLI runs in the workspace"
    );
    drop(call);
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let left = processes_in(workspace);
        if left.is_empty() {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "processes survived the cancelled call: {left:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_cancellation_kills_the_process_group() {
    let Some(bin) = agent_cli("claude", "@anthropic-ai/claude-code") else {
        return;
    };
    let root = tempfile::tempdir().expect("temp dir");
    let workspace = root.path().join("workspace");
    std::fs::create_dir_all(&workspace).expect("workspace");
    let fake = ScriptedAnthropic::start(vec![Step::Hang]).await;
    let env = claude_env(root.path());
    let provider = crate::support::adapter(
        &decl(
            "claude-code",
            "claude-sonnet-4-5",
            Some(&fake.base_url()),
            Some("ATOMIC_TEST_KEY"),
            json!({"bin": bin.display().to_string()}),
        ),
        &env,
    )
    .expect("configured");
    cancelling_kills_the_cli(provider.as_ref(), &fake, &workspace).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copilot_cancellation_kills_the_process_group() {
    let Some(bin) = agent_cli("copilot", "@github/copilot") else {
        return;
    };
    let root = tempfile::tempdir().expect("temp dir");
    let workspace = root.path().join("workspace");
    std::fs::create_dir_all(&workspace).expect("workspace");
    let fake = ScriptedAnthropic::start(vec![Step::Hang]).await;
    let env = copilot_env(root.path()).with("ATOMIC_TEST_KEY", SECRET);
    let provider = crate::support::adapter(
        &decl(
            "copilot",
            "claude-sonnet-4-5",
            Some(&fake.base_url()),
            Some("ATOMIC_TEST_KEY"),
            json!({"bin": bin.display().to_string(), "provider-type": "anthropic"}),
        ),
        &env,
    )
    .expect("configured");
    cancelling_kills_the_cli(provider.as_ref(), &fake, &workspace).await;
}

/// Builds an adapter, keeping only whether it could be configured.
type Build = fn(&ProviderDecl, &Environment) -> Result<(), ProviderError>;

#[test]
fn a_missing_cli_is_a_config_error_naming_the_npm_package() {
    let env = Environment::default().with("PATH", "/nonexistent-atomic-bin");
    let cases: [(&str, Build, &str); 3] = [
        (
            "claude-code",
            |d, e| crate::support::adapter(d, e).map(drop),
            "@anthropic-ai/claude-code",
        ),
        ("opencode", |d, e| opencode(d, e).map(drop), "opencode-ai"),
        (
            "copilot",
            |d, e| crate::support::adapter(d, e).map(drop),
            "@github/copilot",
        ),
    ];
    for (adapter, build, package) in cases {
        let error =
            build(&decl(adapter, "m/m", None, None, json!({})), &env).expect_err("no CLI on PATH");
        assert!(matches!(error, ProviderError::Config { .. }), "{error}");
        assert!(
            error
                .to_string()
                .contains(&format!("npm install -g {package}")),
            "{error}"
        );
    }
}

/// Runs `examples/<example>` through the library pipeline (compile → lower → runtime on the
/// memory store) with its one provider rebuilt by `providers::build` from the example's own
/// declaration, pointed at the fake (`base-url`, the CLI's path, extra `options`). The
/// workspace holds `notes.txt` saying `draft`; returns the final state.
async fn run_example(
    example: &str,
    fake: &ScriptedAnthropic,
    root: &Path,
    workspace: &Path,
    env: &Environment,
    bin: &Path,
    options: Value,
) -> Value {
    run_example_with(example, Some(fake), root, workspace, env, bin, options).await
}

/// [`run_example`], with `fake: None` leaving the example's `base-url` alone (OpenCode: the
/// fake goes into the config passed with `options`).
async fn run_example_with(
    example: &str,
    fake: Option<&ScriptedAnthropic>,
    root: &Path,
    workspace: &Path,
    env: &Environment,
    bin: &Path,
    options: Value,
) -> Value {
    use std::sync::Arc;

    use atomic::providers::ProviderContext;
    use atomic::runtime::{Providers, RunContext, RunEnd};
    use atomic::store::MemoryStore;

    // `example` is a file in `examples/`, or a built-in workflow's `<built-in>/` path.
    let compiled = if example.starts_with(atomic::cli::builtin::BUILT_IN) {
        let mut sources = atomic::source::Sources::new();
        atomic::compile::compile_path(
            &mut sources,
            Path::new(example),
            &atomic::cli::disk::Disk,
            &atomic::compile::Config::new(),
        )
        .expect("the built-in is readable")
    } else {
        crate::support::compile_file(&crate::support::root().join("examples").join(example)).1
    };
    let plan = compiled
        .plan
        .unwrap_or_else(|| panic!("{example} compiles"));
    let workflow = plan.workflow();
    assert_eq!(
        workflow.providers.len(),
        1,
        "{example} declares one provider"
    );
    let mut declared = workflow.providers[0].clone();
    if let Some(fake) = fake {
        declared.base_url = Some(spanned(&fake.base_url()));
    }
    declared.api_key_env = Some(spanned("ATOMIC_TEST_KEY"));
    declared
        .options
        .insert("bin".to_owned(), Value::String(bin.display().to_string()));
    if let Value::Object(extra) = options {
        declared.options.extend(extra);
    }
    let provider = atomic::providers::build(&declared, &ProviderContext::new(root, env))
        .expect("the example's provider builds");
    let mut ctx = RunContext::new(Arc::new(MemoryStore::new()));
    ctx.providers = Providers::new().with(declared.name.value.clone(), provider);
    ctx.workspace = atomic::workspace::Workspace::new(workspace.to_path_buf());
    let outcome = tokio::time::timeout(
        CALL_LIMIT,
        atomic::runtime::run(Arc::new(plan), serde_json::Map::new(), ctx),
    )
    .await
    .unwrap_or_else(|_| panic!("{example} did not finish within {CALL_LIMIT:?}"))
    .expect("the run starts");
    assert_eq!(outcome.end, RunEnd::Completed, "{example}: {outcome:?}");
    outcome.state
}

/// The scripted turn for the examples: read `notes.txt`, replace `draft`, close.
fn example_script(workspace: &Path, read: &str, edit: &str, closing: &str) -> Vec<Step> {
    let file = workspace.join("notes.txt").display().to_string();
    read_edit_close(read, edit, &file, "draft", "final", closing)
}

/// A scripted turn: the CLI's `read` tool on `file`, its `edit` tool replacing `old` with
/// `new`, then `closing`. Inputs follow each CLI's tool vocabulary: Claude Code's `Edit`
/// (`file_path`, `old_string`), OpenCode's `read`/`edit` (`filePath`, `oldString`), and
/// Copilot's `view`/`edit` (`path`, `old_str`).
fn read_edit_close(
    read: &str,
    edit: &str,
    file: &str,
    old: &str,
    new: &str,
    closing: &str,
) -> Vec<Step> {
    let (read_input, edit_input) = match edit {
        "Edit" => (
            json!({"file_path": file}),
            json!({"file_path": file, "old_string": old, "new_string": new}),
        ),
        "edit" if read == "read" => (
            json!({"filePath": file}),
            json!({"filePath": file, "oldString": old, "newString": new}),
        ),
        _ => (
            json!({"path": file}),
            json!({"path": file, "old_str": old, "new_str": new}),
        ),
    };
    vec![
        Step::Tool {
            name: read.to_owned(),
            input: read_input,
        },
        Step::Tool {
            name: edit.to_owned(),
            input: edit_input,
        },
        Step::Text(closing.to_owned()),
    ]
}

fn example_workspace(root: &Path) -> PathBuf {
    let workspace = root.join("workspace");
    std::fs::create_dir_all(&workspace).expect("workspace");
    std::fs::write(workspace.join("notes.txt"), "status: draft\n").expect("write notes");
    workspace
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn example_agent_claude_code_runs_to_its_closing_text() {
    let Some(bin) = agent_cli("claude", "@anthropic-ai/claude-code") else {
        return;
    };
    let root = tempfile::tempdir().expect("temp dir");
    let workspace = example_workspace(root.path());
    let closing = "Replaced `draft` with `final` in notes.txt.";
    let fake = ScriptedAnthropic::start(example_script(&workspace, "Read", "Edit", closing)).await;
    let env = claude_env(root.path());
    let state = run_example(
        "agent-claude-code.kdl",
        &fake,
        root.path(),
        &workspace,
        &env,
        &bin,
        json!({}),
    )
    .await;
    assert_eq!(state["summary"], closing, "{state}");
    let notes = std::fs::read_to_string(workspace.join("notes.txt")).expect("notes");
    assert_eq!(notes, "status: final\n");
}

/// Runs the built-in `ralph` with the real Claude Code over a workspace whose `tasks.json`
/// holds `tasks`, the fake model following `script` (`None`: the edit that marks the task in
/// progress as passing). Returns the run's final state and each task's final status; `None`
/// when the CLI is not installed (the test skips, or fails in CI).
async fn run_ralph(tasks: &str, script: Option<Vec<Step>>) -> Option<(Value, Vec<String>)> {
    let bin = agent_cli("claude", "@anthropic-ai/claude-code")?;
    let root = tempfile::tempdir().expect("temp dir");
    let workspace = root.path().join("workspace");
    std::fs::create_dir_all(&workspace).expect("workspace");
    let file = workspace.join("tasks.json");
    std::fs::write(&file, tasks).expect("write tasks.json");
    let script = script.unwrap_or_else(|| {
        read_edit_close(
            "Read",
            "Edit",
            &file.display().to_string(),
            "\"status\": \"in_progress\"",
            "\"status\": \"passing\"",
            "Done, and its tests pass.",
        )
    });
    let fake = ScriptedAnthropic::start(script).await;
    let env = claude_env(root.path());
    let state = run_example(
        "<built-in>/ralph.kdl",
        &fake,
        root.path(),
        &workspace,
        &env,
        &bin,
        json!({}),
    )
    .await;
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&file).expect("tasks.json"))
        .expect("tasks.json stays JSON");
    let statuses = written["tasks"]
        .as_array()
        .expect("tasks")
        .iter()
        .filter_map(|task| task["status"].as_str().map(str::to_owned))
        .collect();
    Some((state, statuses))
}

/// The built-in `ralph` end to end with the real Claude Code. `t1` is ready first; the
/// model marks it passing in tasks.json through Claude Code's Read and Edit tools. `t2`,
/// which waited on `t1`, is then ready and done the same way (the fake model scripts each
/// conversation alike). `t3` waits on the failing `t4`, so nothing is left and the loop stops.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn built_in_ralph_works_through_tasks_with_the_real_claude_code() {
    let tasks = r#"{"tasks": [
        {"id": "t1", "title": "First", "status": "pending", "depends_on": []},
        {"id": "t2", "title": "Second", "status": "pending", "depends_on": ["t1"]},
        {"id": "t3", "title": "Blocked", "status": "pending", "depends_on": ["t4"]},
        {"id": "t4", "title": "Broken", "status": "failing", "depends_on": []}
    ]}"#;
    let Some((state, statuses)) = run_ralph(tasks, None).await else {
        return;
    };
    assert_eq!(
        state["done"],
        json!([{"id": "t1", "status": "passing"}, {"id": "t2", "status": "passing"}]),
        "{state}"
    );
    assert_eq!(state["task"], Value::Null, "{state}");
    assert_eq!(statuses, ["passing", "passing", "pending", "failing"]);
}

/// `ralph` reads a tasks file written with the seed's field names: `name` stands for a
/// missing id and title, `dependencies` for `depends_on`, and the lowest `priority` goes
/// first. `b` depends on the failing `c`, so it never runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn built_in_ralph_reads_the_seed_task_format() {
    let tasks = r#"{"version": "1.0", "tasks": [
        {"id": "a", "name": "Alpha", "status": "pending", "priority": 2, "dependencies": []},
        {"id": "b", "name": "Beta", "status": "pending", "dependencies": ["c"]},
        {"id": "c", "name": "Gamma", "status": "failing"},
        {"name": "delta", "status": "pending", "priority": 1}
    ]}"#;
    let Some((state, statuses)) = run_ralph(tasks, None).await else {
        return;
    };
    assert_eq!(
        state["done"],
        json!([{"id": "delta", "status": "passing"}, {"id": "a", "status": "passing"}]),
        "{state}"
    );
    assert_eq!(statuses, ["passing", "pending", "failing", "passing"]);
}

/// A task whose agent step fails (the model refuses every request) is marked failing, not
/// left in progress, and the run goes on to its end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn built_in_ralph_marks_a_task_whose_agent_failed() {
    let tasks = r#"{"tasks": [{"id": "x", "title": "Doomed", "status": "pending"}]}"#;
    let Some((state, statuses)) = run_ralph(tasks, Some(vec![Step::Reject])).await else {
        return;
    };
    assert_eq!(
        state["done"],
        json!([{"id": "x", "status": "failing"}]),
        "{state}"
    );
    assert_eq!(statuses, ["failing"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn example_agent_opencode_runs_to_its_closing_text() {
    let Some(bin) = agent_cli("opencode", "opencode-ai") else {
        return;
    };
    let root = tempfile::tempdir().expect("temp dir");
    let workspace = example_workspace(root.path());
    let closing = "OpenCode replaced `draft` with `final`.";
    let fake = ScriptedAnthropic::start(example_script(&workspace, "read", "edit", closing)).await;
    let config = json!({
        "autoupdate": false,
        "share": "disabled",
        "provider": {"anthropic": {"options": {
            "baseURL": format!("{}/v1", fake.base_url()),
            "apiKey": "{env:ATOMIC_TEST_KEY}",
        }}},
    });
    let env = isolated_env(root.path())
        .with("OPENCODE_DISABLE_MODELS_FETCH", "1")
        .with("OPENCODE_DISABLE_LSP_DOWNLOAD", "1")
        .with("ATOMIC_TEST_KEY", SECRET);
    // The example reaches Anthropic through OpenCode's own config; a `base-url` would mean
    // "connect to a running server", so the fake goes into the config instead.
    let state = run_example_with(
        "agent-opencode.kdl",
        None,
        root.path(),
        &workspace,
        &env,
        &bin,
        json!({"config": config.to_string()}),
    )
    .await;
    assert_eq!(state["summary"], closing, "{state}");
    let notes = std::fs::read_to_string(workspace.join("notes.txt")).expect("notes");
    assert_eq!(notes, "status: final\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn example_agent_copilot_runs_to_its_closing_text() {
    let Some(bin) = agent_cli("copilot", "@github/copilot") else {
        return;
    };
    let root = tempfile::tempdir().expect("temp dir");
    let workspace = example_workspace(root.path());
    let closing = "Copilot replaced `draft` with `final`.";
    let fake = ScriptedAnthropic::start(example_script(&workspace, "view", "edit", closing)).await;
    let env = copilot_env(root.path()).with("ATOMIC_TEST_KEY", SECRET);
    let state = run_example(
        "agent-copilot.kdl",
        &fake,
        root.path(),
        &workspace,
        &env,
        &bin,
        json!({"provider-type": "anthropic"}),
    )
    .await;
    assert_eq!(state["summary"], closing, "{state}");
    let notes = std::fs::read_to_string(workspace.join("notes.txt")).expect("notes");
    assert_eq!(notes, "status: final\n");
}

/// A session past its `act` threshold is compacted by OpenCode (`POST …/summarize`, one model
/// call without tools) before the next node continues it; the session id stays the same.
/// OpenCode's own automatic compaction is switched off, so every compaction is atomic's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn opencode_compacts_a_full_session_before_it_is_continued() {
    use std::sync::Arc;

    use atomic::compile::{Config, compile};
    use atomic::runtime::{Providers, RunContext, RunEnd, RunEvent, StreamModes};
    use atomic::source::{MemoryFiles, Sources};

    let Some(bin) = agent_cli("opencode", "opencode-ai") else {
        return;
    };
    let root = tempfile::tempdir().expect("temp dir");
    let workspace = root.path().join("workspace");
    std::fs::create_dir_all(&workspace).expect("workspace");
    let fake = ScriptedAnthropic::start(vec![Step::Text("Noted.".to_owned())]).await;
    // 12 prompt tokens of a 16-token window: 0.75, past `act`.
    let config = json!({
        "autoupdate": false,
        "share": "disabled",
        "provider": {"anthropic": {
            "options": {
                "baseURL": format!("{}/v1", fake.base_url()),
                "apiKey": "{env:ATOMIC_TEST_KEY}",
            },
            "models": {"claude-sonnet-4-5": {"limit": {"context": 16, "output": 8}}},
        }},
    });
    let env = isolated_env(root.path())
        .with("OPENCODE_DISABLE_MODELS_FETCH", "1")
        .with("OPENCODE_DISABLE_LSP_DOWNLOAD", "1")
        .with("OPENCODE_DISABLE_AUTOCOMPACT", "1")
        .with("ATOMIC_TEST_KEY", SECRET);
    let provider = opencode(
        &decl(
            "opencode",
            "anthropic/claude-sonnet-4-5",
            None,
            Some("ATOMIC_TEST_KEY"),
            json!({"bin": bin.display().to_string(), "config": config.to_string()}),
        ),
        &env,
    )
    .expect("configured");

    let text = r#"workflow "compact" {
    provider "oc" adapter="opencode" model="anthropic/claude-sonnet-4-5"
    agent "plan" provider="oc" {
        prompt "Remember the word pelican."
        context warn=0.5 act=0.7 action="compact"
    }
    agent "recall" provider="oc" session="plan" {
        prompt "Which word did I ask you to remember?"
    }
}
"#;
    let mut sources = Sources::new();
    let file = sources.add(Path::new("compact.kdl"), text.to_owned());
    let compiled = compile(&mut sources, file, &MemoryFiles::new(), &Config::new());
    let plan = compiled
        .plan
        .unwrap_or_else(|| panic!("the workflow compiles: {:#?}", compiled.diagnostics));
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&events);
    let mut ctx = RunContext::in_memory();
    ctx.providers = Providers::new().with("oc", Arc::new(provider));
    ctx.workspace = atomic::workspace::Workspace::new(workspace.clone());
    ctx.stream = StreamModes::ALL;
    ctx.sink = Some(Arc::new(move |event: &RunEvent| {
        sink.lock()
            .expect("events lock")
            .push(serde_json::to_value(event).expect("events serialise"));
    }));
    let outcome = tokio::time::timeout(
        CALL_LIMIT,
        atomic::runtime::run(Arc::new(plan), serde_json::Map::new(), ctx),
    )
    .await
    .expect("the run finishes in time")
    .expect("the run starts");
    assert_eq!(outcome.end, RunEnd::Completed, "{outcome:?}");

    let events = events.lock().expect("events lock").clone();
    let of_type = |kind: &str| -> Vec<Value> {
        events
            .iter()
            .filter(|event| event["type"] == kind)
            .cloned()
            .collect()
    };
    assert_eq!(
        of_type("context-warning")[0],
        json!({"type": "context-warning", "node": "plan", "fraction": 0.75, "warn": 0.5})
    );
    assert_eq!(
        of_type("context-action"),
        [
            json!({"type": "context-action", "node": "recall", "session_of": "plan", "action": "compact", "fraction": 0.75})
        ]
    );
    let session = |node: &str| {
        of_type("step-finished")
            .iter()
            .find(|step| step["node"] == node)
            .map(|step| step["delta"]["outputs"][node]["session_id"].clone())
    };
    assert!(
        session("plan").is_some_and(|id| id.is_string()),
        "{events:#?}"
    );
    assert_eq!(
        session("recall"),
        session("plan"),
        "compaction keeps the session"
    );

    // The model saw: plan's turn, then one summarising call (no tools) over that turn, then
    // recall's turn over the summary instead of the original history.
    let requests = fake.requests();
    let kinds: Vec<bool> = requests.iter().map(|r| r.has_tools()).collect();
    assert_eq!(kinds, [true, false, true], "{requests:#?}");
    let summarise = requests[1].body["messages"].to_string();
    assert!(
        summarise.contains("summary") && summarise.contains("Remember the word pelican."),
        "{summarise}"
    );
    let recall = requests[2].body["messages"].to_string();
    assert!(
        recall.contains("Which word did I ask you to remember?")
            && !recall.contains("Remember the word pelican."),
        "the compacted history replaces the first turn: {recall}"
    );
}

/// Claude Code's own retry loop is bounded by the node's retry policy: against a server
/// that fails every message request, the real CLI gives up after the policy's attempts
/// (two retries by default, none under `retry attempts=1`) instead of its own ten, and
/// an auth failure ends the call at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_retries_are_bounded_by_the_node_policy() {
    use crate::support::fake_anthropic::{FakeAnthropic, Turn};
    use atomic::providers::RetryPolicy;

    let Some(bin) = agent_cli("claude", "@anthropic-ai/claude-code") else {
        return;
    };
    let one_attempt = RetryPolicy {
        attempts: 1,
        ..RetryPolicy::model_requests()
    };
    for (failure, retry, most_requests) in [
        (Turn::server_error(), None, 3),
        (Turn::server_error(), Some(one_attempt), 1),
        (
            Turn::error(401, "authentication_error", "invalid x-api-key"),
            None,
            3,
        ),
    ] {
        let root = tempfile::tempdir().expect("temp dir");
        let workspace = root.path().join("workspace");
        std::fs::create_dir_all(&workspace).expect("workspace");
        let fake = FakeAnthropic::start();
        fake.set_fallback(failure.clone());
        let provider = crate::support::adapter(
            &decl(
                "claude-code",
                "claude-sonnet-4-5",
                Some(&fake.url()),
                Some("ATOMIC_TEST_KEY"),
                json!({"bin": bin.display().to_string()}),
            ),
            &claude_env(root.path()),
        )
        .expect("configured");
        let request = AgentRequest {
            call: CallId {
                node_id: "fails".to_owned(),
                ..CallId::default()
            },
            prompt: Prompt {
                text: "Say hello.".to_owned(),
                ..Prompt::default()
            },
            workspace: atomic::workspace::Workspace::new(workspace),
            limits: Limits {
                retry: retry.clone(),
                ..Limits::default()
            },
            ..AgentRequest::default()
        };
        let started = std::time::Instant::now();
        let (reply, _) = call(provider.as_ref(), &request).await;
        let elapsed = started.elapsed();
        let error = reply.expect_err("every request fails");
        let messages = fake
            .requests()
            .iter()
            .filter(|request| request.path() == "/v1/messages")
            .count();
        assert!(
            (1..=most_requests).contains(&messages),
            "{failure:?} {retry:?}: {messages} message requests in {elapsed:?}: {error}"
        );
        assert!(
            elapsed < Duration::from_secs(60),
            "{failure:?}: {elapsed:?}: {error}"
        );
    }
}

/// `option "effort"` reaches Claude Code as `CLAUDE_CODE_EFFORT_LEVEL`, an agent's value
/// over its provider's. A stand-in `claude` (a shell script answering one stream-json
/// result) records the variable, so no real CLI or model is needed.
#[tokio::test]
async fn claude_code_effort_is_passed_per_call() {
    use std::os::unix::fs::PermissionsExt;

    let root = tempfile::tempdir().expect("temp dir");
    let workspace = root.path().join("workspace");
    std::fs::create_dir_all(&workspace).expect("workspace");
    let seen = root.path().join("effort.txt");
    let bin = root.path().join("claude");
    std::fs::write(
        &bin,
        "#!/bin/sh\ncat > /dev/null\nprintf '%s' \"$CLAUDE_CODE_EFFORT_LEVEL\" > \"$EFFORT_OUT\"\n\
         echo '{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s1\",\"model\":\"m\"}'\n\
         echo '{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"result\":\"done\",\"session_id\":\"s1\"}'\n",
    )
    .expect("write the stand-in");
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let provider = crate::support::adapter(
        &decl(
            "claude-code",
            "claude-sonnet-4-5",
            None,
            None,
            json!({
                "bin": bin.display().to_string(),
                "effort": "low",
                "env.EFFORT_OUT": seen.display().to_string(),
            }),
        ),
        &claude_env(root.path()),
    )
    .expect("configured");
    let mut request = AgentRequest {
        call: CallId {
            node_id: "think".to_owned(),
            ..CallId::default()
        },
        prompt: Prompt {
            text: "Think.".to_owned(),
            ..Prompt::default()
        },
        workspace: atomic::workspace::Workspace::new(workspace),
        ..AgentRequest::default()
    };
    let (reply, _) = call(provider.as_ref(), &request).await;
    assert_eq!(reply.expect("answers").text, "done");
    assert_eq!(std::fs::read_to_string(&seen).expect("recorded"), "low");

    request.options = json!({"effort": "max"})
        .as_object()
        .cloned()
        .unwrap_or_default();
    let (reply, _) = call(provider.as_ref(), &request).await;
    reply.expect("answers");
    assert_eq!(std::fs::read_to_string(&seen).expect("recorded"), "max");
}

/// OpenCode retries a failing model call by itself (`session.status` `retry`); the node's
/// retry policy bounds it: with one attempt, the first retry it announces ends the call (the
/// session is aborted) instead of OpenCode retrying with growing waits.
#[tokio::test]
async fn opencode_retries_are_bounded_by_the_node_policy() {
    use crate::support::fake_anthropic::{FakeAnthropic, Turn};
    use atomic::providers::RetryPolicy;

    let Some(bin) = agent_cli("opencode", "opencode-ai") else {
        return;
    };
    let root = tempfile::tempdir().expect("temp dir");
    let workspace = root.path().join("workspace");
    std::fs::create_dir_all(&workspace).expect("workspace");
    let fake = FakeAnthropic::start();
    fake.set_fallback(Turn::server_error());
    let config = json!({
        "autoupdate": false,
        "share": "disabled",
        "provider": {"anthropic": {"options": {
            "baseURL": format!("{}/v1", fake.url()),
            "apiKey": "{env:ATOMIC_TEST_KEY}",
        }}},
    });
    let env = isolated_env(root.path())
        .with("OPENCODE_DISABLE_MODELS_FETCH", "1")
        .with("OPENCODE_DISABLE_LSP_DOWNLOAD", "1")
        .with("ATOMIC_TEST_KEY", SECRET);
    let provider = opencode(
        &decl(
            "opencode",
            "anthropic/claude-sonnet-4-5",
            None,
            Some("ATOMIC_TEST_KEY"),
            json!({"bin": bin.display().to_string(), "config": config.to_string()}),
        ),
        &env,
    )
    .expect("configured");
    let request = AgentRequest {
        call: CallId {
            node_id: "fails".to_owned(),
            ..CallId::default()
        },
        prompt: Prompt {
            text: "Say hello.".to_owned(),
            ..Prompt::default()
        },
        workspace: atomic::workspace::Workspace::new(workspace),
        limits: Limits {
            retry: Some(RetryPolicy {
                attempts: 1,
                ..RetryPolicy::model_requests()
            }),
            ..Limits::default()
        },
        ..AgentRequest::default()
    };
    let started = std::time::Instant::now();
    let (reply, _) = call(&provider, &request).await;
    let elapsed = started.elapsed();
    let error = reply.expect_err("every model request fails");
    let messages = fake
        .requests()
        .iter()
        .filter(|request| request.path() == "/v1/messages")
        .count();
    assert!(error.was_retried(), "{error}");
    assert!((1..=2).contains(&messages), "{messages} requests: {error}");
    assert!(elapsed < Duration::from_secs(45), "{elapsed:?}: {error}");
}

/// A call Claude Code ends with an `error_during_execution` result (a session it cannot
/// find) is reported with the status the CLI exited with, not as killed by a signal.
#[tokio::test]
async fn claude_code_errors_during_execution_carry_the_exit_status() {
    use std::os::unix::fs::PermissionsExt;

    let root = tempfile::tempdir().expect("temp dir");
    let workspace = root.path().join("workspace");
    std::fs::create_dir_all(&workspace).expect("workspace");
    let bin = root.path().join("claude");
    std::fs::write(
        &bin,
        "#!/bin/sh\ncat > /dev/null\n\
         echo '{\"type\":\"result\",\"subtype\":\"error_during_execution\",\"is_error\":true,\"errors\":[\"No conversation found with session ID: 5d2\"]}'\n\
         exit 1\n",
    )
    .expect("write the stand-in");
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let provider = crate::support::adapter(
        &decl(
            "claude-code",
            "claude-sonnet-4-5",
            None,
            None,
            json!({"bin": bin.display().to_string()}),
        ),
        &claude_env(root.path()),
    )
    .expect("configured");
    let request = AgentRequest {
        prompt: Prompt {
            text: "Go on.".to_owned(),
            ..Prompt::default()
        },
        workspace: atomic::workspace::Workspace::new(workspace),
        ..AgentRequest::default()
    };
    let (reply, _) = call(provider.as_ref(), &request).await;
    let error = reply.expect_err("the CLI failed");
    let message = error.to_string();
    assert_eq!(error.class().name(), "process-exit", "{message}");
    assert!(message.contains("exited with code 1"), "{message}");
    assert!(message.contains("No conversation found"), "{message}");
}
