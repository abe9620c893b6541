//! `adapter="codex"`: the real Codex CLI against a fake OpenAI Responses API on 127.0.0.1.
//!
//! The CLI is the pinned `@openai/codex` (`.ci/install-agents.sh` installs it into
//! `.ci/agents/`); a missing one skips these tests loudly, and fails them under `CI=true`.
//! Every environment points `HTTPS_PROXY` at a trap on 127.0.0.1 that records any connection
//! the CLI tries to make elsewhere (without the adapter's settings it reaches github.com,
//! api.github.com, chatgpt.com and ab.chatgpt.com); the tests require the trap to stay empty.

use std::io::Read;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use atomic::ir::{PermissionMode, ProviderDecl};
use atomic::providers::{
    AgentEvent, AgentReply, AgentRequest, Environment, Provider, ProviderError, Usage,
};
use atomic::source::{Span, Spanned};
use serde_json::{Value, json};

use crate::support::cli_project::{CliProject, stderr, stdout};
use crate::support::fake_responses::{FakeResponses, TURN_CACHED, TURN_INPUT, TURN_OUTPUT, Turn};
use crate::support::tools::agent_cli;
use crate::support::within;
use atomic::providers::{CallId, Continuation, Grants, Prompt};

/// Upper bound for one call (the CLI answers a scripted turn in about a second).
const CALL_LIMIT: Duration = Duration::from_secs(60);

/// The key the provider names with `api-key-env`; the fake checks it arrives.
const SECRET: &str = "sk-atomic-codex-7c41e0";

/// One turn's usage as the adapter reports it (cached tokens apart from the others).
const TURN_USAGE: Usage = Usage {
    input_tokens: TURN_INPUT - TURN_CACHED,
    output_tokens: TURN_OUTPUT,
    cache_read_tokens: TURN_CACHED,
    cache_write_tokens: 0,
};

fn spanned(text: &str) -> Spanned<String> {
    Spanned::new(text.to_owned(), Span::default())
}

/// A `provider "codex" adapter="codex"` pointed at `fake` with the key in `ATOMIC_TEST_KEY`.
fn decl(bin: &Path, fake: &FakeResponses) -> ProviderDecl {
    let Value::Object(options) = json!({"bin": bin.display().to_string()}) else {
        unreachable!("an object");
    };
    ProviderDecl {
        name: spanned("codex"),
        adapter: spanned("codex"),
        model: Some(spanned("fake-model")),
        base_url: Some(spanned(&fake.base_url())),
        api_key_env: Some(spanned("ATOMIC_TEST_KEY")),
        cassette: None,
        command: Vec::new(),
        options,
        span: Span::default(),
    }
}

/// Records every connection made to it, by its first line (`CONNECT host:443 …`).
struct ProxyTrap {
    port: u16,
    seen: Arc<Mutex<Vec<String>>>,
}

impl ProxyTrap {
    fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the trap");
        let port = listener.local_addr().expect("an address").port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let record = Arc::clone(&seen);
        // Runs until the test process ends; a test only reads what it saw.
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let mut stream = stream;
                let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
                let mut head = [0_u8; 256];
                let read = stream.read(&mut head).unwrap_or(0);
                let text = String::from_utf8_lossy(&head[..read]);
                let line = text.lines().next().unwrap_or("(nothing)").to_owned();
                record.lock().expect("trap lock").push(line);
            }
        });
        Self { port, seen }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn assert_untouched(&self) {
        let seen = self.seen.lock().expect("trap lock").clone();
        assert!(seen.is_empty(), "the CLI reached for the network: {seen:?}");
    }
}

/// A clean environment: the real PATH, a home inside `root`, the key, every proxy the
/// trap (loopback excepted, where the fake is).
fn codex_env(root: &Path, trap: &ProxyTrap) -> Environment {
    let home = root.join("home");
    std::fs::create_dir_all(&home).expect("home dir");
    let path = std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".to_owned());
    let mut env = Environment::default()
        .with("PATH", path)
        .with("HOME", home.display().to_string())
        .with("TMPDIR", root.display().to_string())
        .with("ATOMIC_TEST_KEY", SECRET)
        .with("NO_PROXY", "127.0.0.1,localhost")
        .with("no_proxy", "127.0.0.1,localhost");
    for name in ["HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy"] {
        env = env.with(name, trap.url());
    }
    env
}

/// A temporary root with a workspace holding `notes.txt` (`status: draft`).
fn workspace() -> (tempfile::TempDir, PathBuf) {
    let root = tempfile::tempdir().expect("temp dir");
    let workspace = root.path().join("workspace");
    std::fs::create_dir_all(&workspace).expect("workspace");
    std::fs::write(workspace.join("notes.txt"), "status: draft\n").expect("notes");
    (root, workspace)
}

/// Runs one call within [`CALL_LIMIT`], collecting its events.
async fn call(
    provider: &dyn Provider,
    request: &AgentRequest,
) -> (Result<AgentReply, ProviderError>, Vec<AgentEvent>) {
    let events = Mutex::new(Vec::new());
    let sink = |event: AgentEvent| events.lock().expect("events lock").push(event);
    let result = within(CALL_LIMIT, provider.run(request, &sink)).await;
    let events = events.into_inner().expect("events lock");
    crate::support::assert_contract(provider.adapter(), &events, &result);
    (result, events)
}

fn request(prompt: &str, workspace: &Path) -> AgentRequest {
    AgentRequest {
        call: CallId {
            node_id: "codex".to_owned(),
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_answers_with_text_and_reports_usage() {
    let Some(bin) = agent_cli("codex", "@openai/codex") else {
        return;
    };
    let (root, workspace) = workspace();
    let trap = ProxyTrap::start();
    let fake = FakeResponses::start();
    fake.require_key(SECRET)
        .push(Turn::text("Hello from the fake – über."));
    let provider =
        crate::support::adapter(&decl(&bin, &fake), &codex_env(root.path(), &trap)).expect("built");
    let mut request = request("Say hello.", &workspace);
    request.prompt.system = Some("You are terse.".to_owned());
    let (reply, events) = call(provider.as_ref(), &request).await;
    let reply = reply.expect("the call succeeds");

    assert_eq!(reply.text, "Hello from the fake – über.");
    assert_eq!(reply.usage, TURN_USAGE);
    assert_eq!(reply.turns, 1);
    let session = reply.session_id.clone().expect("a thread id");
    assert!(
        matches!(&events[0],
        AgentEvent::SessionStart { session_id: Some(id), model: Some(model) }
            if *id == session && model == "fake-model"),
        "{events:#?}"
    );
    assert!(events.contains(&AgentEvent::MessageComplete {
        text: "Hello from the fake – über.".to_owned()
    }));
    assert!(events.contains(&AgentEvent::Usage {
        usage: TURN_USAGE,
        cost_usd: None
    }));
    let sent = fake.responses_requests();
    assert_eq!(sent.len(), 1);
    assert_eq!(
        sent[0].header("authorization"),
        Some(format!("Bearer {SECRET}").as_str())
    );
    assert_eq!(sent[0].json()["model"], "fake-model");
    let texts = FakeResponses::input_texts(&sent[0]);
    assert!(texts.iter().any(|t| t == "You are terse."), "{texts:?}");
    assert_eq!(texts.last().map(String::as_str), Some("Say hello."));
    trap.assert_untouched();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_edits_a_file_with_its_patch_and_shell_tools() {
    let Some(bin) = agent_cli("codex", "@openai/codex") else {
        return;
    };
    let (root, workspace) = workspace();
    let trap = ProxyTrap::start();
    let fake = FakeResponses::start();
    fake.push(Turn::shell(
        "apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: notes.txt\n@@\n-status: draft\n+status: final\n*** End Patch\nEOF",
    ))
    .push(Turn::shell("printf 'checked: yes\\n' >> notes.txt"))
    .push(Turn::text("Replaced `draft` with `final`."));
    let provider =
        crate::support::adapter(&decl(&bin, &fake), &codex_env(root.path(), &trap)).expect("built");
    let request = AgentRequest {
        grants: Grants {
            permission: Some(PermissionMode::AcceptEdits),
            ..request("Make notes.txt final.", &workspace).grants.clone()
        },
        ..request("Make notes.txt final.", &workspace)
    };
    let (reply, events) = call(provider.as_ref(), &request).await;
    let reply = reply.expect("the call succeeds");

    assert_eq!(reply.text, "Replaced `draft` with `final`.");
    assert_eq!(
        std::fs::read_to_string(workspace.join("notes.txt")).expect("notes"),
        "status: final\nchecked: yes\n"
    );
    let tools: Vec<(&str, bool)> = events
        .iter()
        .filter_map(|event| match event {
            AgentEvent::ToolComplete { name, is_error, .. } => Some((name.as_str(), *is_error)),
            _ => None,
        })
        .collect();
    assert_eq!(
        tools,
        [("file_change", false), ("command_execution", false)]
    );
    // Three model requests in one turn; the usage is their sum.
    assert_eq!(fake.responses_requests().len(), 3);
    assert_eq!(reply.usage.output_tokens, 3 * TURN_OUTPUT);
    trap.assert_untouched();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_default_permission_keeps_the_workspace_read_only() {
    let Some(bin) = agent_cli("codex", "@openai/codex") else {
        return;
    };
    let (root, workspace) = workspace();
    let trap = ProxyTrap::start();
    let fake = FakeResponses::start();
    fake.push(Turn::shell("printf 'status: final\\n' > notes.txt"))
        .push(Turn::text("Tried."));
    let provider =
        crate::support::adapter(&decl(&bin, &fake), &codex_env(root.path(), &trap)).expect("built");
    let (reply, _) = call(
        provider.as_ref(),
        &request("Make notes.txt final.", &workspace),
    )
    .await;
    assert_eq!(reply.expect("the call succeeds").text, "Tried.");
    assert_eq!(
        std::fs::read_to_string(workspace.join("notes.txt")).expect("notes"),
        "status: draft\n",
        "the read-only sandbox refused the write"
    );
}

/// A patch the read-only sandbox refuses is still a tool the agent used: it starts and
/// completes as an error, and the model is told.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_patch_is_reported_as_a_failed_tool() {
    let Some(bin) = agent_cli("codex", "@openai/codex") else {
        return;
    };
    let (root, workspace) = workspace();
    let trap = ProxyTrap::start();
    let fake = FakeResponses::start();
    fake.push(Turn::shell(
        "apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: notes.txt\n@@\n-status: draft\n+status: final\n*** End Patch\nEOF",
    ))
    .push(Turn::text("Tried."));
    let provider =
        crate::support::adapter(&decl(&bin, &fake), &codex_env(root.path(), &trap)).expect("built");
    let (reply, events) = call(
        provider.as_ref(),
        &request("Make notes.txt final.", &workspace),
    )
    .await;
    assert_eq!(reply.expect("the call succeeds").text, "Tried.");
    assert_eq!(
        std::fs::read_to_string(workspace.join("notes.txt")).expect("notes"),
        "status: draft\n"
    );
    let completed: Vec<(&str, bool)> = events
        .iter()
        .filter_map(|event| match event {
            AgentEvent::ToolComplete { name, is_error, .. } => Some((name.as_str(), *is_error)),
            _ => None,
        })
        .collect();
    assert_eq!(completed.len(), 1, "{events:#?}");
    assert!(completed[0].1, "the refused patch failed: {events:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_session_carries_the_earlier_conversation() {
    let Some(bin) = agent_cli("codex", "@openai/codex") else {
        return;
    };
    let (root, workspace) = workspace();
    let trap = ProxyTrap::start();
    let fake = FakeResponses::start();
    fake.push(Turn::text("The word is pineapple."))
        .push(Turn::text("You asked about a word."));
    let provider =
        crate::support::adapter(&decl(&bin, &fake), &codex_env(root.path(), &trap)).expect("built");
    let (first, _) = call(provider.as_ref(), &request("Pick a word.", &workspace)).await;
    let first = first.expect("the first call succeeds");
    let session = first.session_id.clone().expect("a thread id");

    let again = AgentRequest {
        call: CallId {
            index: 1,
            ..request("What did I ask?", &workspace).call.clone()
        },
        session: Continuation {
            resume: Some(session.clone()),
            ..request("What did I ask?", &workspace).session.clone()
        },
        ..request("What did I ask?", &workspace)
    };
    let (second, _) = call(provider.as_ref(), &again).await;
    let second = second.expect("the resumed call succeeds");
    assert_eq!(second.text, "You asked about a word.");
    assert_eq!(second.session_id, Some(session));
    // The CLI reports the thread's totals; the call's own usage is one turn again.
    assert_eq!(second.usage, TURN_USAGE);
    let sent = fake.responses_requests();
    assert_eq!(sent.len(), 2);
    let history = FakeResponses::input_texts(&sent[1]);
    let at = |text: &str| history.iter().position(|t| t == text);
    assert!(
        at("Pick a word.") < at("The word is pineapple.")
            && at("The word is pineapple.") < at("What did I ask?")
            && at("Pick a word.").is_some(),
        "{history:?}"
    );

    // A session this provider never saw is refused with what to do about it.
    let unknown = AgentRequest {
        session: Continuation {
            resume: Some("01a21a82-0000-7000-8000-000000000000".to_owned()),
            ..again.session.clone()
        },
        ..again
    };
    let (error, _) = call(provider.as_ref(), &unknown).await;
    let error = error.expect_err("an unknown session");
    assert!(
        error.to_string().contains("option \"codex-home\""),
        "{error}"
    );
    trap.assert_untouched();
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

/// The command line of process `pid`, its arguments joined by spaces.
fn command_line(pid: u32) -> String {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|bytes| String::from_utf8_lossy(&bytes).replace('\0', " "))
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_timeout_kills_the_process_group() {
    let Some(bin) = agent_cli("codex", "@openai/codex") else {
        return;
    };
    let (root, workspace) = workspace();
    let trap = ProxyTrap::start();
    let fake = FakeResponses::start();
    // The model starts a command that outlives any node timeout.
    fake.push(Turn::shell("sleep 300")).push(Turn::Hang);
    let provider =
        crate::support::adapter(&decl(&bin, &fake), &codex_env(root.path(), &trap)).expect("built");
    let request = AgentRequest {
        grants: Grants {
            permission: Some(PermissionMode::AcceptEdits),
            ..request("Wait.", &workspace).grants.clone()
        },
        ..request("Wait.", &workspace)
    };
    let sink = |_: AgentEvent| {};
    let mut run = provider.run(&request, &sink);
    let sleeping = || {
        processes_in(&workspace)
            .into_iter()
            .any(|pid| command_line(pid).contains("sleep 300"))
    };
    let waiting = async {
        while !sleeping() {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    // The runtime's node timeout drops the call's future, as this does.
    tokio::select! {
        result = &mut run => panic!("the call ended although its command still runs: {result:?}"),
        () = waiting => {}
        () = tokio::time::sleep(CALL_LIMIT) => panic!("the CLI never started the command"),
    }
    let before = processes_in(&workspace);
    assert!(before.len() >= 2, "codex and its command: {before:?}");
    drop(run);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let left: Vec<(u32, String)> = processes_in(&workspace)
            .into_iter()
            .map(|pid| (pid, command_line(pid)))
            .collect();
        if left.is_empty() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "processes survived the timeout: {left:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    trap.assert_untouched();
}

#[test]
fn a_missing_cli_names_the_npm_package() {
    let fake = FakeResponses::start();
    let mut decl = decl(Path::new("codex"), &fake);
    decl.options.remove("bin");
    let env = Environment::default()
        .with("PATH", "/nonexistent-atomic-bin")
        .with("ATOMIC_TEST_KEY", SECRET);
    let error = crate::support::adapter(&decl, &env).expect_err("no CLI on PATH");
    assert!(matches!(error, ProviderError::Config { .. }), "{error}");
    assert!(
        error.to_string().contains("npm install -g @openai/codex"),
        "{error}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_key_is_an_auth_failure_naming_its_variable() {
    let Some(bin) = agent_cli("codex", "@openai/codex") else {
        return;
    };
    let (root, workspace) = workspace();
    let trap = ProxyTrap::start();
    let fake = FakeResponses::start();
    fake.require_key("sk-the-right-one")
        .push(Turn::text("never"));
    let provider =
        crate::support::adapter(&decl(&bin, &fake), &codex_env(root.path(), &trap)).expect("built");
    let started = Instant::now();
    let (error, _) = call(provider.as_ref(), &request("Hello?", &workspace)).await;
    let error = error.expect_err("the key is refused");
    assert!(
        matches!(error, ProviderError::Auth { status: 401, .. }),
        "{error}"
    );
    assert_eq!(error.class().name(), "auth");
    let text = error.to_string();
    assert!(text.contains("`ATOMIC_TEST_KEY`"), "{text}");
    assert!(!text.contains(SECRET), "the key leaked: {text}");
    // Stopped at the first refusal, not after the CLI's five retries with backoff.
    assert!(fake.responses_requests().len() < 6);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    trap.assert_untouched();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn example_agent_codex_runs_through_the_binary() {
    let Some(bin) = agent_cli("codex", "@openai/codex") else {
        return;
    };
    let trap = ProxyTrap::start();
    let fake = FakeResponses::start();
    fake.require_key(SECRET)
        .push(Turn::shell(
            "apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: notes.txt\n@@\n-status: draft\n+status: final\n*** End Patch\nEOF",
        ))
        .push(Turn::text("Codex replaced `draft` with `final`."));
    let project = CliProject::new();
    project.write("notes.txt", "status: draft\n");
    let example = std::fs::read_to_string(crate::support::root().join("examples/agent-codex.kdl"))
        .expect("the example");
    let workflow = example
        .replace("http://127.0.0.1:8000/v1", &fake.base_url())
        .replace(
            "api-key-env=\"OPENAI_API_KEY\"",
            &format!(
                "api-key-env=\"OPENAI_API_KEY\" {{\n        option \"bin\" \"{}\"\n    }}",
                bin.display()
            ),
        );
    assert_ne!(workflow, example, "the example names its server and key");
    project.write("agent-codex.kdl", &workflow);

    let mut command = project.atomic();
    command
        .args(["run", "agent-codex.kdl"])
        .env("OPENAI_API_KEY", SECRET)
        .env("HOME", project.path().join("home"))
        .env("TMPDIR", project.path())
        .env("NO_PROXY", "127.0.0.1,localhost")
        .env("no_proxy", "127.0.0.1,localhost");
    for name in ["HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy"] {
        command.env(name, trap.url());
    }
    let output = within(
        CALL_LIMIT,
        tokio::task::spawn_blocking(move || command.output().expect("atomic runs")),
    )
    .await
    .expect("atomic ran");
    assert!(
        output.status.success(),
        "{}\n{}",
        stdout(&output),
        stderr(&output)
    );
    assert_eq!(project.read("notes.txt"), "status: final\n");
    let state = &project.show(&project.last_run())["state"];
    assert_eq!(
        state["summary"], "Codex replaced `draft` with `final`.",
        "{state}"
    );
    trap.assert_untouched();
}

/// What `codex exec` cannot do is refused before anything runs: a person answering a
/// permission request, per-tool grants, a turn limit. The rest of an agent is accepted.
#[test]
fn check_refuses_what_codex_exec_cannot_do() {
    let check = |agent: &str| {
        let text = format!(
            "workflow \"w\" {{\n    provider \"c\" adapter=\"codex\" {{ option \"codex-home\" \"/x\"; }}\n    {agent}\n}}\n"
        );
        let (sources, compiled) = crate::support::compile_text(Path::new("w.kdl"), &text);
        crate::support::render(&sources, &compiled)
    };
    let fine = check(concat!(
        "agent \"a\" provider=\"c\" permission=\"accept-edits\" { system \"s\"; prompt \"p\"; }\n",
        "    agent \"b\" provider=\"c\" permission=\"plan\" session=\"a\" { prompt \"q\"; }",
    ));
    assert!(fine.is_empty(), "{fine}");
    for (agent, feature) in [
        (
            "agent \"a\" provider=\"c\" permission=\"ask\" { prompt \"p\"; }",
            "permission=\"ask\"",
        ),
        (
            "agent \"a\" provider=\"c\" { prompt \"p\"; tools \"shell\"; }",
            "tools",
        ),
        (
            "agent \"a\" provider=\"c\" max-turns=3 { prompt \"p\"; }",
            "max-turns",
        ),
    ] {
        let said = check(agent);
        assert!(
            said.contains("unsupported-feature") && said.contains(feature),
            "{agent}: {said}"
        );
    }
}

/// The commands Codex runs for the agent never see the model key (Codex's own
/// `shell_environment_policy`), while the rest of their environment is there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agents_commands_never_see_the_model_key() {
    let Some(bin) = agent_cli("codex", "@openai/codex") else {
        return;
    };
    let (root, workspace) = workspace();
    let trap = ProxyTrap::start();
    let fake = FakeResponses::start();
    fake.require_key(SECRET)
        .push(Turn::shell("env > seen.env"))
        .push(Turn::text("Listed."));
    let provider =
        crate::support::adapter(&decl(&bin, &fake), &codex_env(root.path(), &trap)).expect("built");
    let request = AgentRequest {
        grants: Grants {
            permission: Some(PermissionMode::AcceptEdits),
            ..request("List the environment.", &workspace).grants.clone()
        },
        ..request("List the environment.", &workspace)
    };
    let (reply, _) = call(provider.as_ref(), &request).await;
    reply.expect("the call succeeds");
    let seen = std::fs::read_to_string(workspace.join("seen.env")).expect("the command ran");
    assert!(!seen.contains(SECRET), "the key reached a command:\n{seen}");
    assert!(!seen.contains("CODEX_API_KEY="), "{seen}");
    assert!(
        seen.contains("HOME="),
        "the environment was emptied:\n{seen}"
    );
    trap.assert_untouched();
}
