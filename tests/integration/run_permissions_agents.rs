//! `permission="ask"` with the real OpenCode and Copilot CLIs against fake model servers.
//!
//! Through `atomic run` and `atomic resume`: an agent (no tools granted) whose fake model
//! asks to edit `target.txt` pauses the run (exit 4) before anything is written, with the
//! request on record in `atomic runs show`; `--answer allow` continues the same session, the
//! model is told, makes the call again and the file is edited; `--answer deny` continues it
//! too, the model is told it was refused, a retry of the same edit is refused without
//! asking again, and the file stays as it was. On an OpenCode server that outlives the run,
//! the pause leaves no request pending there.
//!
//! The fake model answers by what the conversation says, not by counting requests, so the
//! tests hold whatever the CLI did between refusing the edit and being stopped (Copilot,
//! which cannot wait for an answer, refuses first and may already have asked the model
//! what to do next).

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::cli_project::{CliProject, stderr, stdout};
use crate::support::fake_anthropic::{FakeAnthropic, Turn};
use crate::support::http_server::Request;
use crate::support::tools::agent_cli;

const PROMPT: &str = "Change the status line of target.txt to `edited`.";
const ORIGINAL: &str = "status: original\n";
const EDITED: &str = "status: edited\n";
const CLOSING: &str = "target.txt now says edited.";
const LEFT_ALONE: &str = "I left target.txt alone.";
/// What the continuation prompt says for each answer (`runtime::exec::permission`).
const APPROVED: &str = "approved your request";
const REFUSED: &str = "refused your request";
/// The key the provider names with `api-key-env`.
const SECRET: &str = "sk-atomic-test-3f9a1c";

/// Upper bound for one `atomic` command here (a CLI's first start unpacks itself).
const COMMAND_LIMIT: Duration = Duration::from_secs(120);

/// A main-turn request (the agent's, with tools) as JSON.
fn main_turn(request: &Request) -> Option<Value> {
    let body = request.json();
    body.get("tools")
        .and_then(Value::as_array)
        .is_some_and(|tools| !tools.is_empty())
        .then_some(body)
}

/// The last message of a request's conversation, as text.
fn last_message(body: &Value) -> String {
    body["messages"]
        .as_array()
        .and_then(|messages| messages.last())
        .map(Value::to_string)
        .unwrap_or_default()
}

/// Whether the conversation's last message carries a tool result.
fn ends_with_tool_result(body: &Value) -> bool {
    body["messages"]
        .as_array()
        .and_then(|messages| messages.last())
        .and_then(|message| message["content"].as_array())
        .is_some_and(|blocks| blocks.iter().any(|block| block["type"] == "tool_result"))
}

/// The fake model: asks for `edit` (the CLI's file-edit tool with `input`) on a fresh
/// conversation and again once told its request was approved, closing with [`CLOSING`]
/// after the tool result that follows. Told it was refused, it stubbornly asks once more,
/// and closes with [`LEFT_ALONE`] after that call's result. Anything else (the CLI's side
/// requests, or what it asks right after refusing the first edit, before it is stopped)
/// gets a short text.
fn fake_model(edit: &str, input: &Value) -> FakeAnthropic {
    let fake = FakeAnthropic::start();
    fake.require_key(SECRET);
    fake.set_fallback(Turn::text("I could not do that."));
    fake.push_when(
        |request| {
            main_turn(request).is_some_and(|body| {
                let text = body["messages"].to_string();
                !text.contains("tool_result") && !text.contains(APPROVED) && !text.contains(REFUSED)
            })
        },
        Turn::tool_use(edit, input.clone()),
    );
    fake.push_when(
        |request| main_turn(request).is_some_and(|body| last_message(&body).contains(APPROVED)),
        Turn::tool_use(edit, input.clone()),
    );
    fake.push_when(
        |request| {
            main_turn(request).is_some_and(|body| {
                body["messages"].to_string().contains(APPROVED) && ends_with_tool_result(&body)
            })
        },
        Turn::text(CLOSING),
    );
    fake.push_when(
        |request| main_turn(request).is_some_and(|body| last_message(&body).contains(REFUSED)),
        Turn::tool_use(edit, input.clone()),
    );
    fake.push_when(
        |request| {
            main_turn(request).is_some_and(|body| {
                body["messages"].to_string().contains(REFUSED) && ends_with_tool_result(&body)
            })
        },
        Turn::text(LEFT_ALONE),
    );
    fake
}

/// The conversations of the agent's model calls, in order.
fn conversations(fake: &FakeAnthropic) -> Vec<String> {
    fake.requests()
        .iter()
        .filter_map(main_turn)
        .map(|body| body["messages"].to_string())
        .collect()
}

/// A project holding `target.txt`, and the file's absolute path.
fn new_project() -> (CliProject, String) {
    let project = CliProject::new();
    let file = project.write("target.txt", ORIGINAL);
    (project, file.display().to_string())
}

/// Writes the flow: one agent, on `provider` (a `provider "model" …` block), asked to edit
/// `target.txt` under `permission="ask"` with no tools granted.
fn write_flow(project: &CliProject, provider: &str) {
    project.write(
        "flow.kdl",
        &format!(
            r#"workflow "edit-target" {{
    state {{ field "summary" type="string" default=""; }}
    {provider}
    agent "edit" provider="model" permission="ask" {{
        prompt {PROMPT:?}
        output "summary"
    }}
}}
"#
        ),
    );
}

/// The environment that keeps a CLI inside `project`: its own home and XDG directories.
fn isolated_env(project: &CliProject) -> Vec<(&'static str, String)> {
    let home = project.home().to_path_buf();
    std::fs::create_dir_all(&home).expect("home");
    let home = home.display().to_string();
    vec![
        ("TEST_MODEL_KEY", SECRET.to_owned()),
        ("XDG_CONFIG_HOME", format!("{home}/.config")),
        ("XDG_DATA_HOME", format!("{home}/.local/share")),
        ("XDG_STATE_HOME", format!("{home}/.local/state")),
        ("XDG_CACHE_HOME", format!("{home}/.cache")),
        ("HOME", home),
    ]
}

/// OpenCode's config: the fake as its Anthropic provider.
fn opencode_config(fake: &FakeAnthropic) -> Value {
    json!({
        "autoupdate": false,
        "share": "disabled",
        "provider": {"anthropic": {"options": {
            "baseURL": format!("{}/v1", fake.url()),
            "apiKey": "{env:TEST_MODEL_KEY}",
        }}},
    })
}

/// What keeps OpenCode offline and quiet, beside [`isolated_env`].
const OPENCODE_ENV: [(&str, &str); 2] = [
    ("OPENCODE_DISABLE_MODELS_FETCH", "1"),
    ("OPENCODE_DISABLE_LSP_DOWNLOAD", "1"),
];

/// The flow on the real OpenCode (a server atomic starts) with the fake as Anthropic, and
/// the environment to run it in.
fn opencode_flow(
    project: &CliProject,
    bin: &Path,
    fake: &FakeAnthropic,
) -> Vec<(&'static str, String)> {
    let config = opencode_config(fake);
    write_flow(
        project,
        &format!(
            r#"provider "model" adapter="opencode" model="anthropic/claude-sonnet-4-5" api-key-env="TEST_MODEL_KEY" {{
        option "bin" {:?}
        option "config" {:?}
    }}"#,
            bin.display().to_string(),
            config.to_string(),
        ),
    );
    let mut env = isolated_env(project);
    env.extend(OPENCODE_ENV.map(|(name, value)| (name, value.to_owned())));
    env
}

/// The flow on the real Copilot CLI with the fake as its own-key Anthropic model, and the
/// environment to run it in.
fn copilot_flow(
    project: &CliProject,
    bin: &Path,
    fake: &FakeAnthropic,
) -> Vec<(&'static str, String)> {
    write_flow(
        project,
        &format!(
            r#"provider "model" adapter="copilot" model="claude-sonnet-4-5" api-key-env="TEST_MODEL_KEY" base-url="{}" {{
        option "bin" {:?}
        option "provider-type" "anthropic"
    }}"#,
            fake.url(),
            bin.display().to_string(),
        ),
    );
    let mut env = isolated_env(project);
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
    env
}

/// `atomic ARGS` in `project` with `env` and stdin not a terminal, off the async runtime.
async fn atomic_with(
    project: &CliProject,
    env: &[(&'static str, String)],
    args: &[&str],
) -> std::process::Output {
    project.atomic_async(args, env, COMMAND_LIMIT).await
}

/// The run's paused requests, from `atomic runs show RUN --json`.
fn waits(project: &CliProject, run: &str) -> Vec<Value> {
    project.show(run)["run"]["waits"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// The run's logged events of `kind`, from `atomic runs show RUN --events`.
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

/// Runs the flow to its pause at the edit: exit 4, nothing written, one pending request
/// of the agent's session, whose permission `check` inspects. Returns the run's id.
async fn run_to_the_pause(
    project: &CliProject,
    env: &[(&'static str, String)],
    check: impl Fn(&Value),
) -> String {
    let output = atomic_with(project, env, &["run", "flow.kdl"]).await;
    assert_eq!(
        output.status.code(),
        Some(4),
        "{}{}",
        stdout(&output),
        stderr(&output)
    );
    assert_eq!(
        project.read("target.txt"),
        ORIGINAL,
        "nothing is edited before a person answers"
    );
    let run = project.last_run();
    let pending = waits(project, &run);
    assert_eq!(pending.len(), 1, "{pending:#?}");
    assert_eq!(pending[0]["node_id"], "edit");
    let permission = &pending[0]["permission"];
    assert!(permission["session_id"].is_string(), "{permission}");
    check(permission);
    run
}

/// `--answer allow`: the session goes on, the model is told and asks again, and the file is
/// edited; the answer is in the run's log.
async fn allowing_edits(
    project: &CliProject,
    env: &[(&'static str, String)],
    fake: &FakeAnthropic,
    run: &str,
) {
    let before = conversations(fake).len();
    let output = atomic_with(project, env, &["resume", run, "--answer", "allow"]).await;
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}{}",
        stdout(&output),
        stderr(&output)
    );
    assert_eq!(project.read("target.txt"), EDITED);
    let show = project.show(run);
    assert_eq!(show["run"]["status"], "completed", "{show}");
    assert_eq!(show["state"]["summary"], CLOSING, "{show}");

    // The continued session carried the first turn and told the model the answer.
    let later = conversations(fake).split_off(before);
    let told = later
        .iter()
        .find(|conversation| conversation.contains(APPROVED))
        .unwrap_or_else(|| panic!("the model was never told: {later:#?}"));
    assert!(told.contains(PROMPT), "the session continued: {told}");
    let answered = events_of(project, run, "permission-answered");
    assert_eq!(answered.len(), 1, "{answered:#?}");
    assert_eq!(answered[0]["node"], "edit");
    assert_eq!(answered[0]["answer"], "allow");
}

/// `--answer deny`: the session goes on and the model is told it was refused; when it
/// tries the same edit again, the refusal stands without asking again (the model reads
/// `refusal` in that call's result), and the file is not edited.
async fn denying_leaves_the_file(
    project: &CliProject,
    env: &[(&'static str, String)],
    fake: &FakeAnthropic,
    run: &str,
    refusal: &str,
) {
    let before = conversations(fake).len();
    let output = atomic_with(project, env, &["resume", run, "--answer", "deny"]).await;
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}{}",
        stdout(&output),
        stderr(&output)
    );
    assert_eq!(project.read("target.txt"), ORIGINAL, "refused: not edited");
    let show = project.show(run);
    assert_eq!(show["state"]["summary"], LEFT_ALONE, "{show}");
    let later = conversations(fake).split_off(before);
    let told = later.first().expect("the session went on");
    assert!(
        told.contains(REFUSED) && told.contains(PROMPT),
        "the continued session tells the model: {told}"
    );
    let retried = fake
        .requests()
        .iter()
        .rev()
        .find_map(main_turn)
        .map(|body| last_message(&body))
        .unwrap_or_default();
    assert!(
        later.len() >= 2 && retried.contains(refusal),
        "the retried edit is refused with `{refusal}`: {retried}"
    );
    let answered = events_of(project, run, "permission-answered");
    assert_eq!(answered.len(), 1, "{answered:#?}");
    assert_eq!(answered[0]["answer"], "deny");
}

/// OpenCode's `edit` (its own field names) replacing the status line of `file`.
fn opencode_edit(file: &str) -> Value {
    json!({"filePath": file, "oldString": "status: original", "newString": "status: edited"})
}

/// OpenCode asks `edit` with the file's path among its patterns.
fn opencode_asks_to_edit(permission: &Value) {
    assert_eq!(permission["tool"], "edit", "{permission}");
    assert!(
        permission["input"]["patterns"]
            .to_string()
            .contains("target.txt"),
        "{permission}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn opencode_edits_only_once_a_person_allows_it() {
    let Some(bin) = agent_cli("opencode", "opencode-ai") else {
        return;
    };
    let (project, file) = new_project();
    let fake = fake_model("edit", &opencode_edit(&file));
    let env = opencode_flow(&project, &bin, &fake);
    let run = run_to_the_pause(&project, &env, opencode_asks_to_edit).await;
    allowing_edits(&project, &env, &fake, &run).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn opencode_is_told_when_a_person_refuses() {
    let Some(bin) = agent_cli("opencode", "opencode-ai") else {
        return;
    };
    let (project, file) = new_project();
    let fake = fake_model("edit", &opencode_edit(&file));
    let env = opencode_flow(&project, &bin, &fake);
    let run = run_to_the_pause(&project, &env, opencode_asks_to_edit).await;
    // atomic's reason, given with OpenCode's refusal.
    denying_leaves_the_file(&project, &env, &fake, &run, "go on without it").await;
}

/// Copilot's `edit` (its own field names) replacing the status line of `file`.
fn copilot_edit(file: &str) -> Value {
    json!({"path": file, "old_str": "status: original", "new_str": "status: edited"})
}

/// Copilot refused the call for want of a `write` permission; the request names the call.
fn copilot_asks_to_write(file: &str) -> impl Fn(&Value) {
    let file = file.to_owned();
    move |permission: &Value| {
        assert_eq!(permission["tool"], "write", "{permission}");
        assert_eq!(permission["input"]["tool"], "edit", "{permission}");
        assert_eq!(
            permission["input"]["arguments"]["path"],
            file.as_str(),
            "{permission}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copilot_edits_only_once_a_person_allows_it() {
    let Some(bin) = agent_cli("copilot", "@github/copilot") else {
        return;
    };
    let (project, file) = new_project();
    let fake = fake_model("edit", &copilot_edit(&file));
    let env = copilot_flow(&project, &bin, &fake);
    let run = run_to_the_pause(&project, &env, copilot_asks_to_write(&file)).await;
    allowing_edits(&project, &env, &fake, &run).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copilot_is_told_when_a_person_refuses() {
    let Some(bin) = agent_cli("copilot", "@github/copilot") else {
        return;
    };
    let (project, file) = new_project();
    let fake = fake_model("edit", &copilot_edit(&file));
    let env = copilot_flow(&project, &bin, &fake);
    let run = run_to_the_pause(&project, &env, copilot_asks_to_write(&file)).await;
    // The CLI's own refusal: it cannot be given a reason.
    denying_leaves_the_file(&project, &env, &fake, &run, "Permission denied").await;
}

/// An `opencode serve` the test started (a running server atomic is pointed at with
/// `base-url=`), behind a password; its process group is killed when dropped.
struct RunningServer {
    child: std::process::Child,
    url: String,
}

impl RunningServer {
    fn start(
        bin: &Path,
        project: &CliProject,
        env: &[(&'static str, String)],
        config: &Value,
    ) -> Self {
        use std::io::BufRead;
        use std::os::unix::process::CommandExt;

        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .expect("a free port")
            .port();
        let mut child = std::process::Command::new(bin)
            .args([
                "serve",
                "--hostname",
                "127.0.0.1",
                "--port",
                &port.to_string(),
            ])
            .current_dir(project.path())
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .envs(env.iter().map(|(name, value)| (*name, value.as_str())))
            .env("OPENCODE_SERVER_PASSWORD", SERVER_PASSWORD)
            .env("OPENCODE_CONFIG_CONTENT", config.to_string())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .process_group(0)
            .spawn()
            .expect("start opencode serve");
        let stdout = child.stdout.take().expect("its stdout");
        let (listening, started) = std::sync::mpsc::channel();
        // Drains the output for the server's whole life, so it never blocks on the pipe.
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout)
                .lines()
                .map_while(Result::ok)
            {
                if line.contains("listening on") {
                    let _ = listening.send(());
                }
            }
        });
        let server = Self {
            child,
            url: format!("http://127.0.0.1:{port}"),
        };
        started
            .recv_timeout(COMMAND_LIMIT)
            .expect("opencode serve started listening");
        server
    }

    /// The requests the server holds unanswered (`GET /permission`).
    async fn pending_requests(&self, project: &CliProject) -> Value {
        atomic::tls::client()
            .get(format!("{}/permission", self.url))
            .basic_auth("opencode", Some(SERVER_PASSWORD))
            .header("x-opencode-directory", project.path().display().to_string())
            .timeout(Duration::from_secs(10))
            .send()
            .await
            .expect("GET /permission")
            .json()
            .await
            .expect("a JSON list")
    }
}

impl Drop for RunningServer {
    fn drop(&mut self) {
        let group = nix::unistd::Pid::from_raw(i32::try_from(self.child.id()).expect("a pid"));
        let _ = nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGKILL);
        let _ = self.child.wait();
    }
}

/// The password of a [`RunningServer`].
const SERVER_PASSWORD: &str = "opencode-test-password";

/// On a server that outlives the run, the pause leaves nothing behind: the request is
/// refused and the turn stopped before the run pauses (an unanswered request stays pending
/// on the server and holds back later ones), and the session continues there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn opencode_on_a_running_server_leaves_no_request_pending() {
    let Some(bin) = agent_cli("opencode", "opencode-ai") else {
        return;
    };
    let (project, file) = new_project();
    let fake = fake_model("edit", &opencode_edit(&file));
    let mut env = isolated_env(&project);
    env.extend(OPENCODE_ENV.map(|(name, value)| (name, value.to_owned())));
    let server = RunningServer::start(&bin, &project, &env, &opencode_config(&fake));
    write_flow(
        &project,
        &format!(
            r#"provider "model" adapter="opencode" model="anthropic/claude-sonnet-4-5" base-url="{}" api-key-env="TEST_SERVER_PASSWORD""#,
            server.url
        ),
    );
    env.push(("TEST_SERVER_PASSWORD", SERVER_PASSWORD.to_owned()));

    let run = run_to_the_pause(&project, &env, opencode_asks_to_edit).await;
    assert_eq!(server.pending_requests(&project).await, json!([]));
    allowing_edits(&project, &env, &fake, &run).await;
}
