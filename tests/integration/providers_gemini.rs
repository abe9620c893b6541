//! `adapter="gemini"`: the real Gemini CLI against a fake Gemini API on 127.0.0.1.
//!
//! The CLI (pinned by `.ci/install-agents.sh`) is pointed at [`FakeGemini`] with
//! `GOOGLE_GEMINI_BASE_URL`; its own home, usage statistics and update checks are off (the
//! adapter's settings), so it reaches nothing but the fake: every proxy variable points at
//! a trap that must stay untouched. A missing CLI skips the tests that need it locally and
//! fails them under `CI=true`.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use atomic::ir::{PermissionMode, ProviderDecl};
use atomic::providers::{
    AgentEvent, AgentReply, AgentRequest, Environment, Provider, ProviderError, Usage,
};
use atomic::source::{Span, Spanned};
use serde_json::{Value, json};

use crate::support::cli_project::{CliProject, stderr};
use crate::support::fake_gemini::{CACHED_TOKENS, FakeGemini, OUTPUT_TOKENS, PROMPT_TOKENS, Turn};
use crate::support::http_server::{HttpServer, Reply, Request};
use crate::support::tools::agent_cli;
use crate::support::within;
use atomic::providers::{CallId, Prompt};

/// Upper bound for one agent call. The CLI answers a scripted turn in a few seconds, but
/// in a loaded full run two calls once took over 90 s (and 16–30 s in 3 of ~50 runs alone),
/// the time spent inside the CLI (its two model requests answered at once, its exit
/// prompt): the bound catches a hang, not slowness.
const CALL_LIMIT: Duration = Duration::from_secs(180);

/// The model the tests name (any name: the fake serves every model).
const MODEL: &str = "gemini-2.5-flash";

/// The secret the provider names with `api-key-env`; the fake sees it as `x-goog-api-key`.
const SECRET: &str = "gm-atomic-test-7c21d0";

fn spanned(text: &str) -> Spanned<String> {
    Spanned::new(text.to_owned(), Span::default())
}

/// A proxy every proxy variable points at, loopback excepted (where the fake is): whatever
/// the CLI would send elsewhere (its usage statistics to `play.googleapis.com`, which the
/// adapter switches off, would arrive as `CONNECT`s) reaches this server instead, and the
/// tests require it to stay untouched.
pub(crate) struct ProxyTrap(HttpServer);

impl ProxyTrap {
    pub(crate) fn start() -> Self {
        Self(HttpServer::start(Arc::new(|_: &Request| {
            Reply::json(502, &json!({"error": "no traffic may leave 127.0.0.1"}))
        })))
    }

    /// The proxy variables, for the CLI's environment.
    pub(crate) fn variables(&self) -> Vec<(&'static str, String)> {
        let mut variables: Vec<(&'static str, String)> =
            ["HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy"]
                .into_iter()
                .map(|name| (name, self.0.url()))
                .collect();
        variables.push(("NO_PROXY", "127.0.0.1,localhost".to_owned()));
        variables
    }

    pub(crate) fn assert_untouched(&self) {
        let seen: Vec<String> = self
            .0
            .requests()
            .iter()
            .map(|request| format!("{} {}", request.method, request.target))
            .collect();
        assert!(seen.is_empty(), "the CLI reached past the fake: {seen:?}");
    }
}

/// A clean environment: the real PATH, HOME and state inside `root`, the test key, every
/// proxy variable at `trap`.
fn gemini_env(root: &Path, trap: &ProxyTrap) -> Environment {
    let home = root.join("home");
    std::fs::create_dir_all(&home).expect("home dir");
    let path = std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".to_owned());
    let env = Environment::default()
        .with("PATH", path)
        .with("HOME", home.display().to_string())
        .with(
            "XDG_STATE_HOME",
            home.join(".local/state").display().to_string(),
        )
        .with("ATOMIC_TEST_KEY", SECRET);
    trap.variables()
        .into_iter()
        .fold(env, |env, (name, value)| env.with(name, value))
}

fn provider(bin: &Path, fake: &FakeGemini, env: &Environment) -> std::sync::Arc<dyn Provider> {
    let Value::Object(options) = json!({"bin": bin.display().to_string()}) else {
        unreachable!("an object");
    };
    let decl = ProviderDecl {
        name: spanned("gemini"),
        adapter: spanned("gemini"),
        model: Some(spanned(MODEL)),
        base_url: Some(spanned(&fake.url())),
        api_key_env: Some(spanned("ATOMIC_TEST_KEY")),
        cassette: None,
        command: Vec::new(),
        options,
        span: Span::default(),
    };
    crate::support::adapter(&decl, env).expect("configured")
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
            node_id: "gem".to_owned(),
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

/// Runs one call with a time limit, collecting its events.
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gemini_answers_with_the_models_text() {
    let Some(bin) = agent_cli("gemini", "@google/gemini-cli") else {
        return;
    };
    let (root, workspace) = workspace();
    let trap = ProxyTrap::start();
    let fake = FakeGemini::start(vec![Turn::text("Hello from the fake Gemini.")]);
    let gemini = provider(&bin, &fake, &gemini_env(root.path(), &trap));
    let mut request = request("Say hello.", &workspace);
    request.prompt.system = Some("Answer in one sentence.".to_owned());
    let (reply, events) = call(gemini.as_ref(), &request).await;
    let reply = reply.expect("the call succeeds");
    assert_eq!(reply.text, "Hello from the fake Gemini.");
    assert_eq!(reply.turns, 1);
    let session = reply.session_id.clone().expect("a session id");
    assert!(
        events.contains(&AgentEvent::SessionStart {
            session_id: Some(session),
            model: Some(MODEL.to_owned()),
        }),
        "{events:?}"
    );
    let turn = fake
        .requests()
        .into_iter()
        .find(|r| r.json().get("tools").is_some())
        .expect("an agent turn reached the fake");
    assert_eq!(
        turn.target,
        format!("/v1beta/models/{MODEL}:streamGenerateContent?alt=sse")
    );
    assert_eq!(turn.header("x-goog-api-key"), Some(SECRET));
    let sent = turn.json()["contents"].to_string();
    assert!(
        sent.contains("Answer in one sentence.") && sent.contains("Say hello."),
        "{sent}"
    );
    trap.assert_untouched();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gemini_edits_a_file_with_its_own_replace_tool() {
    let Some(bin) = agent_cli("gemini", "@google/gemini-cli") else {
        return;
    };
    let (root, workspace) = workspace();
    let trap = ProxyTrap::start();
    let notes = workspace.join("notes.txt");
    let fake = FakeGemini::start(vec![
        Turn::call(
            "replace",
            json!({
                "file_path": notes.display().to_string(),
                "instruction": "Mark the notes final.",
                "old_string": "draft",
                "new_string": "final",
            }),
        ),
        Turn::text("Replaced `draft` with `final`."),
    ]);
    let gemini = provider(&bin, &fake, &gemini_env(root.path(), &trap));
    let mut request = request("Mark notes.txt final.", &workspace);
    request.grants.permission = Some(PermissionMode::AcceptEdits);
    let (reply, events) = call(gemini.as_ref(), &request).await;
    let reply = reply.expect("the call succeeds");
    assert_eq!(
        std::fs::read_to_string(&notes).expect("notes"),
        "status: final\n"
    );
    assert_eq!(reply.text, "Replaced `draft` with `final`.");
    assert_eq!(reply.turns, 2);
    let tools: Vec<(&str, bool)> = events
        .iter()
        .filter_map(|event| match event {
            AgentEvent::ToolComplete { name, is_error, .. } => Some((name.as_str(), *is_error)),
            _ => None,
        })
        .collect();
    assert_eq!(tools, [("replace", false)], "{events:?}");
    assert!(
        events.iter().any(|event| matches!(event,
            AgentEvent::ToolStart { name, input, .. }
                if name == "replace" && input["new_string"] == "final")),
        "{events:?}"
    );
    // The CLI sent the tool's result back to the model.
    let bodies = fake.turn_bodies();
    assert_eq!(bodies.len(), 2, "{bodies:?}");
    assert!(
        bodies[1]["contents"]
            .to_string()
            .contains("functionResponse"),
        "{}",
        bodies[1]
    );
    trap.assert_untouched();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gemini_continues_a_session() {
    let Some(bin) = agent_cli("gemini", "@google/gemini-cli") else {
        return;
    };
    let (root, workspace) = workspace();
    let trap = ProxyTrap::start();
    let fake = FakeGemini::start(vec![
        Turn::text("The code word is PELICAN."),
        Turn::text("You asked for the code word."),
    ]);
    let gemini = provider(&bin, &fake, &gemini_env(root.path(), &trap));
    let (first, _) = call(gemini.as_ref(), &request("Pick a code word.", &workspace)).await;
    let first = first.expect("the first call succeeds");
    let mut next = request("What did I ask before?", &workspace);
    next.session.resume = first.session_id.clone();
    let (second, _) = call(gemini.as_ref(), &next).await;
    let second = second.expect("the continued call succeeds");
    assert_eq!(second.text, "You asked for the code word.");
    assert_eq!(second.session_id, first.session_id);
    let bodies = fake.turn_bodies();
    let history = bodies.last().expect("a second turn")["contents"].to_string();
    assert!(
        history.contains("Pick a code word.")
            && history.contains("PELICAN")
            && history.contains("What did I ask before?"),
        "{history}"
    );
    trap.assert_untouched();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gemini_reports_the_usage_of_its_model_calls() {
    let Some(bin) = agent_cli("gemini", "@google/gemini-cli") else {
        return;
    };
    let (root, workspace) = workspace();
    let trap = ProxyTrap::start();
    let fake = FakeGemini::start(vec![Turn::text("Counted.")]);
    let gemini = provider(&bin, &fake, &gemini_env(root.path(), &trap));
    let (reply, events) = call(gemini.as_ref(), &request("Count.", &workspace)).await;
    let reply = reply.expect("the call succeeds");
    let expected = Usage {
        input_tokens: PROMPT_TOKENS - CACHED_TOKENS,
        output_tokens: OUTPUT_TOKENS,
        cache_read_tokens: CACHED_TOKENS,
        cache_write_tokens: 0,
    };
    assert_eq!(reply.usage, expected);
    assert!(
        events.contains(&AgentEvent::Usage {
            usage: expected,
            cost_usd: None
        }),
        "{events:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gemini_refused_credentials_are_an_auth_failure_naming_the_key_variable() {
    let Some(bin) = agent_cli("gemini", "@google/gemini-cli") else {
        return;
    };
    let (root, workspace) = workspace();
    let trap = ProxyTrap::start();
    let fake = FakeGemini::start(Vec::new());
    let gemini = provider(&bin, &fake, &gemini_env(root.path(), &trap));
    for status in [401, 403] {
        fake.fail_with(status);
        let (result, _) = call(gemini.as_ref(), &request("Hello?", &workspace)).await;
        let error = result.expect_err("the key is refused");
        assert_eq!(error.class().name(), "auth", "{status}: {error}");
        let text = error.to_string();
        assert!(
            text.contains(&format!("status {status}")) && text.contains("`ATOMIC_TEST_KEY`"),
            "{text}"
        );
        assert!(!text.contains(SECRET), "{text}");
    }
}

#[test]
fn a_missing_gemini_cli_names_its_npm_package() {
    let env = Environment::default().with("PATH", "/nonexistent-atomic-bin");
    let decl = ProviderDecl::bare("gemini", "gemini");
    let error = crate::support::adapter(&decl, &env).expect_err("no CLI on PATH");
    assert!(matches!(error, ProviderError::Config { .. }), "{error}");
    assert!(
        error
            .to_string()
            .contains("npm install -g @google/gemini-cli"),
        "{error}"
    );
}

/// Processes whose working directory is inside `dir` (Linux `/proc`).
pub(crate) fn processes_in(dir: &Path) -> Vec<u32> {
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

/// A workflow in the style of `examples/agent-gemini.kdl`, pointed at the fake.
fn workflow(bin: &Path, fake: &FakeGemini, timeout: &str) -> String {
    format!(
        r#"workflow "agent-gemini" version="1.0.0" {{
    input "file" type="string" default="notes.txt"
    state {{
        field "summary" type="string" default=""
    }}
    provider "gemini" adapter="gemini" model="{MODEL}" base-url="{url}" api-key-env="ATOMIC_TEST_KEY" {{
        option "bin" "{bin}"
    }}
    agent "edit" provider="gemini" permission="accept-edits" timeout="{timeout}" {{
        system "Make the smallest change that does the job."
        prompt "In {{{{ input.file }}}}, replace the word `draft` with `final`, then say what you changed."
        output "summary"
    }}
}}
"#,
        url = fake.url(),
        bin = bin.display(),
    )
}

/// `atomic run` in `project` with a clean HOME and state directory inside it.
fn run(project: &CliProject, file: &str, trap: &ProxyTrap) -> std::process::Output {
    let home = project.path().join(".home");
    let mut command = project.atomic();
    command
        .args(["run", file, "--quiet"])
        .env("HOME", &home)
        .env("XDG_STATE_HOME", home.join("state"))
        .env("ATOMIC_TEST_KEY", SECRET);
    for (name, value) in trap.variables() {
        command.env(name, value);
    }
    command.output().expect("atomic runs")
}

#[test]
fn the_binary_runs_a_gemini_agent_to_its_closing_text() {
    let Some(bin) = agent_cli("gemini", "@google/gemini-cli") else {
        return;
    };
    let project = CliProject::new();
    let trap = ProxyTrap::start();
    let notes = project.write("notes.txt", "status: draft\n");
    let closing = "Gemini replaced `draft` with `final`.";
    let fake = FakeGemini::start(vec![
        Turn::call(
            "replace",
            json!({
                "file_path": notes.display().to_string(),
                "instruction": "Mark the notes final.",
                "old_string": "draft",
                "new_string": "final",
            }),
        ),
        Turn::text(closing),
    ]);
    project.write("flow.kdl", &workflow(&bin, &fake, "60s"));
    let output = run(&project, "flow.kdl", &trap);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(project.read("notes.txt"), "status: final\n");
    let state = &project.show(&project.last_run())["state"];
    assert_eq!(state["summary"], closing, "{state}");
    assert_eq!(fake.remaining(), 0);
    trap.assert_untouched();
}

#[test]
fn a_node_timeout_kills_the_gemini_process_group() {
    let Some(bin) = agent_cli("gemini", "@google/gemini-cli") else {
        return;
    };
    let project = CliProject::new();
    let trap = ProxyTrap::start();
    project.write("notes.txt", "status: draft\n");
    let fake = FakeGemini::start(vec![Turn::Hang]);
    project.write("flow.kdl", &workflow(&bin, &fake, "15s"));
    let started = std::time::Instant::now();
    let output = run(&project, "flow.kdl", &trap);
    assert_ne!(output.status.code(), Some(0), "the node timed out");
    assert!(stderr(&output).contains("timed out"), "{}", stderr(&output));
    assert!(
        started.elapsed() < Duration::from_secs(45),
        "{:?}",
        started.elapsed()
    );
    assert!(
        !fake.turn_bodies().is_empty(),
        "the CLI reached the model before the timeout"
    );
    // Every process of the call (the CLI, and anything it started) is gone.
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
    assert_eq!(project.read("notes.txt"), "status: draft\n");
}
