//! The behaviours every adapter is held to, each written once over a [`Subject`].

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::model::{Brain, Exchange, Move, script};
use super::subjects::{KEY, Subject, shown};
use super::{Kit, stderr, stdout};
use crate::support::tools::required_tool;

/// The agent's closing text.
const DONE: &str = "Done: the kit's step is finished.";
/// What `target.txt` holds before the agent acts: nothing (it does not exist), so every
/// CLI's write tool may create it without reading it first.
const ORIGINAL: &str = "";
const EDITED: &str = "status: edited by the agent\n";
/// What atomic's continuation prompt says for each answer (`runtime::exec::permission`).
const APPROVED: &str = "approved your request";
const REFUSED: &str = "refused your request";

/// How the agent is let act.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Grant {
    /// Change files and run commands without asking.
    Act,
    /// Nothing said: the adapter's defaults.
    Default,
    /// `permission="ask"`.
    Ask,
}

/// A state field `summary` and one agent `act` on the subject's provider with `grant`,
/// `attributes` and `children`, its reply in `summary`.
fn agent_flow(subject: Subject, grant: Grant, attributes: &str, children: &str) -> String {
    let (permission, tools) = match (grant, subject.model_api()) {
        (Grant::Act | Grant::Default, true) => ("", "tools \"shell\" \"write-file\""),
        (Grant::Act, false) => subject.act(),
        (Grant::Default, false) => ("", ""),
        (Grant::Ask, true) => ("permission=\"ask\"", "tools \"shell\" \"write-file\""),
        (Grant::Ask, false) => ("permission=\"ask\"", ""),
    };
    format!(
        r#"    state {{ field "summary" type="string" default=""; }}
    agent "act" provider="model" {permission} {attributes} {{
        prompt "Do what the kit asks."
        {tools}
        output "summary"
{children}
    }}"#
    )
}

/// A kit for `subject` thinking with `brain`, or a loud skip.
fn kit(subject: Subject, brain: Brain) -> Option<Kit> {
    Kit::new(subject, brain)
}

pub(super) async fn a_text_reply_reaches_state(subject: Subject) {
    let Some(kit) = kit(subject, script(vec![Move::Say(DONE.to_owned())])) else {
        return;
    };
    kit.flow(&agent_flow(subject, Grant::Default, "", ""));
    kit.run(&[], 0).await;
    assert_eq!(kit.state()["summary"], DONE, "`{}`", subject.adapter());
    kit.agent_events(&kit.last_run());
}

pub(super) async fn json_output_follows_its_schema(subject: Subject) {
    let verdict = json!({"verdict": "pass", "count": 3});
    let Some(kit) = kit(subject, script(vec![Move::Say(verdict.to_string())])) else {
        return;
    };
    kit.project.write(
        "verdict.json",
        &json!({"type": "object", "properties": {
            "verdict": {"type": "string", "enum": ["pass", "fail"]},
            "count": {"type": "integer"}},
            "required": ["verdict", "count"]})
        .to_string(),
    );
    // A model API's agent gets the kit's tools (its turns are told apart by them).
    let tools = if subject.model_api() {
        "tools \"shell\" \"write-file\""
    } else {
        ""
    };
    kit.flow(&format!(
        r#"    state {{ field "verdict" schema="verdict.json"; }}
    agent "judge" provider="model" {{
        prompt "Judge the kit's work."
        {tools}
        output "verdict" parse="json" schema="verdict.json"
    }}"#
    ));
    kit.run(&[], 0).await;
    assert_eq!(kit.state()["verdict"], verdict, "`{}`", subject.adapter());
    kit.agent_events(&kit.last_run());
}

/// A brain that writes [`EDITED`] to `file` with the subject's own tool, then says [`DONE`].
fn edit_brain(subject: Subject, file: &str) -> Brain {
    script(vec![
        subject.write(file, EDITED),
        Move::Say(DONE.to_owned()),
    ])
}

pub(super) async fn a_permitted_edit_changes_the_file(subject: Subject) {
    let Some(kit) = kit_with_target(subject, edit_brain) else {
        return;
    };
    kit.flow(&agent_flow(subject, Grant::Act, "", ""));
    kit.run(&[], 0).await;
    assert_eq!(
        kit.project.read("target.txt"),
        EDITED,
        "`{}` did not edit target.txt",
        subject.adapter()
    );
    assert_eq!(kit.state()["summary"], DONE);
    let run = kit.last_run();
    let events = kit.agent_events(&run);
    assert!(
        events.iter().any(|event| event["type"] == "tool-start"),
        "`{}`: the edit was not reported as a tool: {events:#?}",
        subject.adapter()
    );
    // The workspace records the agent's edit, and only it (no CLI's own files).
    let shown = kit.project.show(&run);
    let changed: Vec<(&str, &str)> = shown["files"][0]["files"]["changed"]
        .as_array()
        .map(|changes| {
            changes
                .iter()
                .filter_map(|change| Some((change["path"].as_str()?, change["status"].as_str()?)))
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(
        changed,
        [("target.txt", "added")],
        "`{}`: the step's recorded files: {}",
        subject.adapter(),
        shown["files"]
    );
}

/// A kit whose brain is made from the absolute path of the project's `target.txt`.
fn kit_with_target(subject: Subject, brain: impl Fn(Subject, &str) -> Brain) -> Option<Kit> {
    // The project (and so the path) exists before the model starts: make the project
    // first, then give the model a brain that knows where the file is.
    let project = crate::support::cli_project::CliProject::new();
    let file = project.path().join("target.txt").display().to_string();
    Kit::in_project(subject, project, brain(subject, &file))
}

pub(super) async fn edits_by_default_only_where_declared(subject: Subject) {
    let Some(kit) = kit_with_target(subject, edit_brain) else {
        return;
    };
    kit.flow(&agent_flow(subject, Grant::Default, "", ""));
    kit.run(&[], 0).await;
    let expected = if subject.info().read_only_by_default {
        ORIGINAL
    } else {
        EDITED
    };
    assert_eq!(
        kit.project.read("target.txt"),
        expected,
        "`{}` declares read_only_by_default={}",
        subject.adapter(),
        subject.info().read_only_by_default
    );
    kit.agent_events(&kit.last_run());
}

/// An agent and a tool in the branches of a `parallel … isolation="worktree"`: the agent
/// edits `target.txt` with its own shell, from its working directory — the branch's git
/// worktree — while the tool writes `other.txt` in its own, neither seeing the other's
/// file; both land in the project's files when the parallel ends, and no worktree stays.
pub(super) async fn isolated_branches_merge_the_agents_edits(subject: Subject) {
    let edit = format!(
        "printf '%s' {} > target.txt",
        super::subjects::quoted(EDITED)
    );
    let brain = script(vec![subject.shell(&edit), Move::Say(DONE.to_owned())]);
    let Some(kit) = kit(subject, brain) else {
        return;
    };
    let (permission, tools) = if subject.model_api() {
        ("", "tools \"shell\" \"write-file\"")
    } else {
        subject.act()
    };
    kit.flow(&format!(
        r#"    state {{ field "summary" type="string" default=""; }}
    parallel "apart" isolation="worktree" {{
        agent "act" provider="model" {permission} {{
            prompt "Do what the kit asks."
            {tools}
            output "summary"
        }}
        tool "other" {{
            run "sh" "-c" "sleep 0.2; test ! -e target.txt && echo other > other.txt"
        }}
    }}"#
    ));
    kit.run(&[], 0).await;
    let adapter = subject.adapter();
    assert_eq!(kit.project.read("target.txt"), EDITED, "`{adapter}`");
    assert_eq!(kit.project.read("other.txt"), "other\n", "`{adapter}`");
    assert_eq!(kit.state()["summary"], DONE, "`{adapter}`");
    let worktrees = kit.project.path().join(".atomic/worktrees");
    let left: Vec<_> = std::fs::read_dir(&worktrees)
        .map(|entries| entries.flatten().map(|entry| entry.path()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "`{adapter}`: worktrees left: {left:?}");
    // The agent's step recorded its edit in its worktree; the parallel, both merged.
    let shown = kit.project.show(&kit.last_run());
    let changed = |node: &str| -> Vec<String> {
        shown["files"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|step| step["node"] == node)
            .flat_map(|step| {
                step["files"]["changed"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default()
            })
            .filter_map(|change| Some(change["path"].as_str()?.to_owned()))
            .collect()
    };
    assert_eq!(
        changed("act"),
        ["target.txt"],
        "`{adapter}`: {}",
        shown["files"]
    );
    assert_eq!(
        changed("apart"),
        ["other.txt", "target.txt"],
        "`{adapter}`: {}",
        shown["files"]
    );
    kit.agent_events(&kit.last_run());
}

/// A fork's agent going on from a session the original run left: where the adapter table
/// says the backend can fork one, the model sees the session's history and the fork works
/// on a copy (a session id of its own); elsewhere it starts afresh. Either way the fork
/// never extends the original's session.
pub(super) async fn a_forks_agent_never_extends_the_original_session(subject: Subject) {
    if !subject.info().sessions {
        return;
    }
    if subject == Subject::Acp {
        // The kit's ACP agent (the Gemini CLI over ACP) cannot load a session it started
        // in another process ("No previous sessions found for this project"), so the
        // original run's `session=` already fails; the fork's side is the generic one.
        #[allow(clippy::print_stderr, reason = "a skipped scenario says so")]
        {
            eprintln!(
                "SKIP: the kit's ACP agent cannot resume a session across processes; forked sessions are not checked for `acp`"
            );
        }
        return;
    }
    const REMEMBER: &str = "Remember the word PERIWINKLE.";
    let brain = script(vec![
        Move::Say("Noted.".to_owned()),
        Move::Say(DONE.to_owned()),
        Move::Say(DONE.to_owned()),
    ]);
    let Some(kit) = kit(subject, brain) else {
        return;
    };
    kit.flow(&format!(
        r#"    agent "first" provider="model" {{ prompt "{REMEMBER}"; }}
    agent "second" provider="model" session="first" {{ prompt "Say the word."; }}"#
    ));
    kit.run(&[], 0).await;
    let adapter = subject.adapter();
    let original = kit.last_run();
    // The sessions its calls started or went on with, in order (a fork's log begins with
    // the original's, up to the fork point).
    let sessions_of = |run: &str| -> Vec<String> {
        kit.agent_events(run)
            .iter()
            .filter(|event| event["type"] == "session-start")
            .filter_map(|event| event["session_id"].as_str().map(str::to_owned))
            .collect()
    };
    let inherited = sessions_of(&original)
        .first()
        .cloned()
        .expect("the first call's session");
    let forked = kit
        .atomic(&["fork", &original, "--at", "first", "--in-place"])
        .await;
    assert_eq!(
        forked.status.code(),
        Some(0),
        "`{adapter}`: {}",
        stderr(&forked)
    );
    let fork = stdout(&forked).trim().to_owned();
    let turns_before = kit.model.turns().len();
    let resumed = kit.atomic(&["resume", &fork, "--quiet"]).await;
    assert_eq!(
        resumed.status.code(),
        Some(0),
        "`{adapter}`: {}",
        stderr(&resumed)
    );
    let turns = kit.model.turns();
    let seen = turns[turns_before..]
        .iter()
        .map(Value::to_string)
        .collect::<String>();
    let forks = subject.info().forks_sessions;
    assert_eq!(
        seen.contains("PERIWINKLE"),
        forks,
        "`{adapter}` (forks_sessions={forks}): the fork's call {} the original's history",
        if forks { "lost" } else { "saw" }
    );
    let continued = sessions_of(&fork)
        .last()
        .cloned()
        .expect("the fork's call's session");
    assert_ne!(
        continued, inherited,
        "`{adapter}`: the fork's agent extended the original run's session"
    );
}

/// A sandboxed agent does its work — it edits `target.txt` in the workspace with its own
/// shell — while a planted `~/.ssh/id_rsa` stays unreadable to it and a file it writes
/// outside the workspace is refused.
pub(super) async fn a_sandboxed_agent_edits_its_workspace_and_nothing_else(subject: Subject) {
    #[allow(clippy::print_stderr, reason = "a skipped scenario says so")]
    if let Err(error) = atomic::process::Confinement::check() {
        eprintln!("SKIP: {error}");
        return;
    }
    let Some(python) = required_tool("python3", "apt install python3") else {
        return;
    };
    let outside = tempfile::tempdir().expect("a directory outside the project");
    let escaped = outside.path().join("escaped.txt");
    // A second server on this machine, not the model: nothing may reach it.
    let trap = std::net::TcpListener::bind("127.0.0.1:0").expect("a trap");
    let port = trap.local_addr().expect("address").port();
    let python = python.display();
    let command = format!(
        "printf '%s' {edited} > target.txt; cat \"$HOME/.ssh/id_rsa\" > leak.txt 2>&1; \
         echo out > {escaped}; env > seen.env; \
         {python} -c \"import socket; open('direct.txt','w').write(str(socket.socket().connect_ex(('127.0.0.1', {port}))))\"; \
         {python} -c \"import urllib.request as u; u.urlopen('http://127.0.0.1:{port}/x', timeout=5); open('proxied.txt','w').write('reached')\" 2> proxied.txt; \
         setsid sh -c 'sleep 2917 > /dev/null 2>&1 & echo $! > daemon.pid'; true",
        edited = super::subjects::quoted(EDITED),
        escaped = escaped.display(),
    );
    let brain = script(vec![subject.shell(&command), Move::Say(DONE.to_owned())]);
    let Some(kit) = kit(subject, brain) else {
        return;
    };
    let home = kit.project.home().to_path_buf();
    std::fs::create_dir_all(home.join(".ssh")).expect("mkdir");
    std::fs::write(home.join(".ssh/id_rsa"), "PRIVATE KEY").expect("plant a key");
    kit.flow(&format!(
        "    sandbox\n{}",
        agent_flow(subject, Grant::Act, "", "")
    ));
    let adapter = subject.adapter();
    if !subject.info().sandboxes {
        // Declared unable: refused by the checker and at run time, never run unconfined.
        let checked = kit.atomic(&["check", "flow.kdl"]).await;
        let said = format!("{}{}", stdout(&checked), stderr(&checked));
        assert!(
            said.contains("unsupported-feature") && said.contains("sandbox"),
            "`{adapter}`: {said}"
        );
        let ran = kit.atomic(&["run", "flow.kdl"]).await;
        assert_ne!(ran.status.code(), Some(0), "`{adapter}` ran sandboxed");
        assert_eq!(
            kit.project.read("target.txt"),
            ORIGINAL,
            "`{adapter}` ran unconfined"
        );
        return;
    }
    kit.run(&[], 0).await;
    assert_eq!(
        kit.project.read("target.txt"),
        EDITED,
        "`{adapter}`: the allowed edit: {}",
        kit.project.show(&kit.last_run())["events"]
    );
    assert!(
        !kit.project.read("leak.txt").contains("PRIVATE KEY"),
        "`{adapter}`: the agent read the planted key"
    );
    assert!(
        !escaped.exists(),
        "`{adapter}`: the agent wrote outside its workspace"
    );
    let seen = kit.project.read("seen.env");
    assert!(
        seen.contains("PATH="),
        "`{adapter}`: the command did not run"
    );
    // The key atomic holds stays out of reach; OpenCode's server reads its own (declared).
    assert_eq!(
        seen.contains(KEY),
        subject.commands_see_key(),
        "`{adapter}`: a sandboxed agent's commands and the model key"
    );
    // The second server: refused directly (Landlock) and through the proxy.
    let direct = kit.project.read("direct.txt");
    assert!(
        !direct.is_empty() && direct != "0",
        "`{adapter}`: connected to another local port ({direct:?})"
    );
    assert!(
        !kit.project.read("proxied.txt").contains("reached"),
        "`{adapter}`: reached another local port through the proxy"
    );
    trap.set_nonblocking(true).expect("nonblocking");
    assert!(
        trap.accept().is_err(),
        "`{adapter}`: the other server saw a connection"
    );
    if seen.contains("HTTP_PROXY=") {
        let shown = kit.project.show(&kit.last_run());
        let denied = shown["events"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|logged| &logged["event"])
            .any(|event| {
                event["type"] == "sandbox-denied" && event["target"] == format!("127.0.0.1:{port}")
            });
        assert!(
            denied,
            "`{adapter}`: no sandbox-denied event for the proxied connection: {}",
            kit.project.read("proxied.txt")
        );
    }
    // The daemon its command left ended with the call.
    let pid = kit.project.read("daemon.pid");
    let pid = pid.trim();
    assert!(!pid.is_empty(), "`{adapter}`: the daemon did not start");
    let waited = Instant::now();
    while Path::new(&format!("/proc/{pid}")).exists() {
        assert!(
            waited.elapsed() < Duration::from_secs(15),
            "`{adapter}`: the daemon {pid} outlived the run"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(kit.state()["summary"], DONE, "`{adapter}`");
}

pub(super) async fn usage_and_cost_are_recorded(subject: Subject) {
    let Some(kit) = kit(subject, script(vec![Move::Say(DONE.to_owned())])) else {
        return;
    };
    kit.flow(&agent_flow(subject, Grant::Default, "", ""));
    kit.run(&[], 0).await;
    let events = kit.agent_events(&kit.last_run());
    let usage = events
        .iter()
        .rev()
        .find(|event| event["type"] == "usage")
        .unwrap_or_else(|| panic!("`{}` reported no usage", subject.adapter()));
    let tokens = |name: &str| usage["usage"][name].as_u64().unwrap_or(0);
    assert!(
        tokens("input_tokens") + tokens("cache_read_tokens") > 0 && tokens("output_tokens") > 0,
        "`{}`: {usage}",
        subject.adapter()
    );
    // Priced from the model the provider names.
    if !subject.priced() {
        assert!(usage["cost_usd"].is_null(), "{usage}");
        return;
    }
    assert!(
        usage["cost_usd"].as_f64().is_some_and(|cost| cost > 0.0),
        "`{}` priced nothing: {usage}",
        subject.adapter()
    );
}

pub(super) async fn a_refused_key_is_auth_naming_the_variable(subject: Subject) {
    let Some(kit) = kit(subject, script(vec![Move::Say(DONE.to_owned())])) else {
        return;
    };
    kit.model.refuse_every_key();
    kit.flow(&agent_flow(subject, Grant::Default, "", ""));
    let started = Instant::now();
    let output = kit.run(&[], 1).await;
    let took = started.elapsed();
    let failed = node_failed(&kit, "act");
    assert_eq!(
        failed["class"],
        "auth",
        "`{}`: {failed}\n{}",
        subject.adapter(),
        stderr(&output)
    );
    let message = failed["message"].as_str().unwrap_or_default();
    assert!(
        message.contains(kit.setup.key_var),
        "`{}` does not name `{}`: {message}",
        subject.adapter(),
        kit.setup.key_var
    );
    assert!(!message.contains(KEY), "the key itself is never shown");
    // A refused key is not retried as if the server were down.
    assert!(
        took < Duration::from_secs(60),
        "`{}` took {took:?} to give up on a refused key",
        subject.adapter()
    );
}

/// The `node-failed` event of `node` in the newest run.
fn node_failed(kit: &Kit, node: &str) -> Value {
    let shown = kit.project.show(&kit.last_run());
    shown["events"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|entry| entry["event"].clone())
        .find(|event| event["type"] == "node-failed" && event["node"] == node)
        .unwrap_or_else(|| panic!("`{node}` did not fail: {shown:#}"))
}

/// A command that leaves a daemon behind: `sleep SECONDS` in a session of its own,
/// detached from every ancestor, as agents' background jobs are. The command returns once
/// the daemon has left the command's process group (it writes its pid from inside its new
/// session), so a CLI ending the command's group afterwards cannot take the daemon with it.
fn daemon(seconds: u32) -> String {
    format!(
        "(setsid sh -c 'echo $$ > daemon-{seconds}.pid; exec sleep {seconds}' > /dev/null 2>&1 < /dev/null &) ; \
         until [ -s daemon-{seconds}.pid ]; do sleep 0.05; done; echo started"
    )
}

/// A `sleep` length no other test uses, to find the subject's daemon by.
fn daemon_seconds(subject: Subject, scenario: u32) -> u32 {
    let index = super::ALL
        .iter()
        .position(|each| *each == subject)
        .unwrap_or(9);
    u32::try_from(index).unwrap_or(9) + 71_000 + scenario * 100
}

/// Pids of live `sleep SECONDS` processes.
fn sleeping(seconds: u32) -> Vec<u32> {
    let wanted = format!("sleep\0{seconds}\0");
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|cmdline| cmdline == wanted.as_bytes())
                && !zombie(*pid)
        })
        .collect()
}

fn zombie(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'))
    })
}

/// Pids of live processes whose working directory is inside `dir`.
fn working_in(dir: &Path) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|cwd| cwd.starts_with(dir))
                && !zombie(*pid)
        })
        .collect()
}

/// Ends what a failed assertion would leave behind.
struct Sweep(u32);

impl Drop for Sweep {
    fn drop(&mut self) {
        for pid in sleeping(self.0) {
            let _ = std::process::Command::new("kill")
                .args(["-9", &pid.to_string()])
                .status();
        }
    }
}

/// Asserts that nothing the run started is alive (within a short grace for the kernel).
async fn assert_nothing_left(kit: &Kit, seconds: u32, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let daemons = sleeping(seconds);
        let inside = working_in(kit.project.path());
        if daemons.is_empty() && inside.is_empty() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "`{}`: after {what}, the agent's daemon {daemons:?} and processes {inside:?} are alive",
            kit.subject.adapter()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A brain that starts the daemon, then never answers again.
fn daemon_brain(subject: Subject, seconds: u32) -> Brain {
    script(vec![subject.shell(&daemon(seconds)), Move::Hang])
}

pub(super) async fn a_timeout_leaves_no_process_behind(subject: Subject) {
    let seconds = daemon_seconds(subject, 1);
    let _sweep = Sweep(seconds);
    let Some(kit) = kit(subject, daemon_brain(subject, seconds)) else {
        return;
    };
    kit.flow(&agent_flow(subject, Grant::Act, "timeout=\"30s\"", ""));
    let output = kit.run(&[], 1).await;
    let failed = node_failed(&kit, "act");
    assert_eq!(
        failed["class"],
        "timeout",
        "`{}`: {failed}\n{}",
        subject.adapter(),
        stderr(&output)
    );
    assert!(
        kit.model.turns().len() >= 2,
        "`{}` never ran the command before the timeout: {:#?}",
        subject.adapter(),
        kit.model.transcript()
    );
    assert_nothing_left(&kit, seconds, "the timeout").await;
}

pub(super) async fn a_cancel_leaves_no_process_behind(subject: Subject) {
    let seconds = daemon_seconds(subject, 2);
    let _sweep = Sweep(seconds);
    let Some(kit) = kit(subject, daemon_brain(subject, seconds)) else {
        return;
    };
    kit.flow(&agent_flow(subject, Grant::Act, "", ""));
    let mut command = kit.project.spawn_command();
    command
        .args(["run", "flow.kdl", "--quiet"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    for (name, value) in &kit.setup.env {
        command.env(name, value);
    }
    let mut run = command.spawn().expect("spawn atomic run");
    let deadline = Instant::now() + Duration::from_secs(120);
    // The daemon runs once the model's second turn (after the command) is asked for.
    while kit.model.turns().len() < 2 {
        if let Some(status) = run.try_wait().expect("poll atomic run") {
            let mut said = String::new();
            if let Some(mut err) = run.stderr.take() {
                let _ = std::io::Read::read_to_string(&mut err, &mut said);
            }
            panic!(
                "`{}`: the run ended ({status}) before the agent ran its command: {said}\n{:#?}",
                subject.adapter(),
                kit.model.transcript()
            );
        }
        assert!(
            Instant::now() < deadline,
            "`{}`: the agent never ran its command",
            subject.adapter()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // A custom tool's leftovers end when the tool returns (atomic ran it); an agent
    // CLI's command runs on in the background until the call ends.
    if !subject.model_api() {
        assert!(
            !sleeping(seconds).is_empty(),
            "`{}`: the agent's command did not start its daemon: {:#?}",
            subject.adapter(),
            kit.model.transcript()
        );
    }
    let cancel = kit.atomic(&["cancel", &kit.last_run()]).await;
    assert_eq!(cancel.status.code(), Some(0), "{}", stderr(&cancel));
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = run.try_wait().expect("poll atomic run") {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "`{}`: the cancelled run did not stop",
            subject.adapter()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(!status.success(), "a cancelled run does not succeed");
    assert_nothing_left(&kit, seconds, "`atomic cancel`").await;
    assert_eq!(kit.project.runs()[0]["status"], "cancelled");
}

/// The ask brain: asks to write on a fresh conversation and again once told it was
/// approved, closing after that call's result; told it was refused, it closes at once.
fn ask_brain(subject: Subject, file: &str) -> Brain {
    let write = subject.write(file, EDITED);
    std::sync::Arc::new(move |exchange: &Exchange| {
        let last = last_words(exchange);
        if exchange.text.contains(REFUSED) {
            Move::Say("I left it alone.".to_owned())
        } else if last.contains(APPROVED) || exchange.results == 0 {
            write.clone()
        } else if exchange.text.contains(APPROVED) {
            Move::Say(DONE.to_owned())
        } else {
            // Refused by the CLI while it stopped to ask: say so and wait to be resumed.
            Move::Say("I need permission to edit.".to_owned())
        }
    })
}

/// The text of the conversation's last message (any wire).
fn last_words(exchange: &Exchange) -> String {
    let body = &exchange.body;
    ["messages", "input", "contents"]
        .iter()
        .find_map(|key| body[*key].as_array().and_then(|items| items.last()))
        .map(Value::to_string)
        .unwrap_or_default()
}

/// One ask round on a fresh project: the run pauses at the write, `atomic resume --answer
/// allow` continues the same session and the file is written. `Err` says what went wrong.
pub(super) async fn one_ask_round(subject: Subject) -> Result<(), String> {
    let Some(kit) = kit_with_target(subject, ask_brain) else {
        return Err("the CLI is not installed".to_owned());
    };
    kit.flow(&agent_flow(subject, Grant::Ask, "", ""));
    let paused = kit.atomic(&["run", "flow.kdl", "--quiet"]).await;
    if paused.status.code() != Some(4) {
        return Err(format!(
            "run exited {:?}: {}",
            paused.status.code(),
            stderr(&paused)
        ));
    }
    let run = kit.last_run();
    let resumed = kit
        .atomic(&["resume", &run, "--answer", "allow", "--quiet"])
        .await;
    if resumed.status.code() != Some(0) {
        return Err(format!(
            "resume exited {:?}: {}",
            resumed.status.code(),
            stderr(&resumed)
        ));
    }
    if kit.project.read("target.txt") != EDITED {
        return Err("the file was not written after `allow`".to_owned());
    }
    Ok(())
}

pub(super) async fn asking_a_person_pauses_and_continues_or_is_refused(subject: Subject) {
    if !subject.info().asks_people {
        let Some(kit) = kit(subject, script(vec![])) else {
            return;
        };
        kit.flow(&agent_flow(subject, Grant::Ask, "", ""));
        let check = kit.atomic(&["check", "flow.kdl"]).await;
        assert_eq!(check.status.code(), Some(1), "{}", stdout(&check));
        let said = format!("{}{}", stdout(&check), stderr(&check));
        assert!(
            said.contains("unsupported-feature") && said.contains("permission"),
            "`{}`: {said}",
            subject.adapter()
        );
        return;
    }
    for (answer, edited) in [("allow", true), ("deny", false), ("allow-run", true)] {
        let Some(kit) = kit_with_target(subject, ask_brain) else {
            return;
        };
        kit.flow(&agent_flow(subject, Grant::Ask, "", ""));
        kit.run(&[], 4).await;
        assert_eq!(
            kit.project.read("target.txt"),
            ORIGINAL,
            "`{}`: nothing is edited before a person answers",
            subject.adapter()
        );
        let run = kit.last_run();
        let resumed = kit
            .atomic(&["resume", &run, "--answer", answer, "--quiet"])
            .await;
        assert_eq!(
            resumed.status.code(),
            Some(0),
            "`{}` --answer {answer}: {}{}\nturns: {:#?}",
            subject.adapter(),
            stdout(&resumed),
            stderr(&resumed),
            kit.model.transcript()
        );
        let expected = if edited { EDITED } else { ORIGINAL };
        assert_eq!(
            kit.project.read("target.txt"),
            expected,
            "`{}` --answer {answer}",
            subject.adapter()
        );
        // The same session went on: the model was told what the person answered.
        let told = if edited { APPROVED } else { REFUSED };
        assert!(
            kit.model
                .turns()
                .iter()
                .any(|turn| turn.to_string().contains(told)),
            "`{}` --answer {answer}: the model was never told",
            subject.adapter()
        );
        kit.agent_events(&run);
    }
}

pub(super) async fn a_declared_mcp_server_is_reached_without_the_key(subject: Subject) {
    let Some(python) = required_tool("python3", "apt install python3") else {
        return;
    };
    let server = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mcp/notes_server.py");
    let brain = script(vec![
        Move::Call(
            subject.mcp_note().to_owned(),
            json!({"text": "hello from the kit"}),
        ),
        Move::Say(DONE.to_owned()),
    ]);
    let Some(kit) = kit(subject, brain) else {
        return;
    };
    let notes = kit.file("notes.txt");
    kit.flow(&format!(
        "    mcp \"notes\" {{\n        command {:?} {:?}\n        env \"NOTE_FILE\" {notes:?}\n    }}\n{}",
        python.display().to_string(),
        server.display().to_string(),
        agent_flow(subject, Grant::Act, "", "")
    ));
    kit.run(&[], 0).await;
    assert_eq!(
        kit.project.read("notes.txt"),
        "hello from the kit token=- leaked=False\n",
        "`{}`: offered {:?}",
        subject.adapter(),
        kit.model
            .turns()
            .first()
            .map(|turn| turn["tools"].to_string())
    );
    kit.agent_events(&kit.last_run());
}

pub(super) async fn a_recording_replays_to_the_same_state(subject: Subject) {
    let brain = script(vec![
        subject.shell("printf recorded > recorded.txt"),
        Move::Say(DONE.to_owned()),
    ]);
    let Some(kit) = kit(subject, brain) else {
        return;
    };
    let agent = agent_flow(subject, Grant::Act, "", "");
    kit.flow(&agent);
    kit.run(&["--record", "kit.cassette.json"], 0).await;
    let recorded = kit.state();
    let recorded_events = kit.agent_events(&kit.last_run());
    assert_eq!(kit.project.read("recorded.txt"), "recorded");
    // The backend is gone: the replay must not need it.
    let Kit { project, model, .. } = kit;
    drop(model);
    project.write(
        "flow.kdl",
        &format!(
            "workflow \"kit\" {{\n    provider \"model\" adapter=\"replay\" cassette=\"kit.cassette.json\"\n{agent}\n}}\n"
        ),
    );
    let output = project
        .atomic()
        .args(["run", "flow.kdl"])
        .output()
        .expect("atomic run");
    assert_eq!(
        output.status.code(),
        Some(0),
        "`{}` replay: {}{}",
        subject.adapter(),
        stdout(&output),
        stderr(&output)
    );
    let replayed = project.show(&project.last_run())["state"].clone();
    assert_eq!(replayed, recorded, "`{}`", subject.adapter());
    let tools = |events: &[Value]| -> Vec<String> {
        events
            .iter()
            .filter(|event| event["type"] == "tool-start")
            .map(|event| event["name"].as_str().unwrap_or_default().to_owned())
            .collect()
    };
    let replay = super::events_of(&project, &project.last_run(), subject);
    assert_eq!(tools(&replay), tools(&recorded_events));
}

pub(super) async fn swaps_to_it_are_checked_as_swapped(subject: Subject) {
    let project = crate::support::cli_project::CliProject::new();
    // Written for another adapter that can ask (test backends are never swapped).
    let written = if subject == Subject::OpenCode {
        "claude-code"
    } else {
        "opencode"
    };
    project.write(
        "flow.kdl",
        &r#"workflow "kit" {
    provider "model" adapter="WRITTEN"
    state { field "summary" type="string" default=""; }
    agent "act" provider="model" permission="ask" {
        prompt "Do what the kit asks."
        output "summary"
    }
}
"#
        .replace("WRITTEN", written),
    );
    let refused = !subject.info().asks_people;
    let by_flag = project
        .atomic()
        .args([
            "run",
            "flow.kdl",
            "--dry-run",
            "--provider",
            subject.adapter(),
        ])
        .output()
        .expect("atomic run --dry-run");
    project.write(
        ".atomic/config.kdl",
        &format!("adapter {:?}\n", subject.adapter()),
    );
    let by_config = project
        .atomic()
        .args(["check", "flow.kdl"])
        .output()
        .expect("atomic check");
    for (how, output) in [("--provider", by_flag), ("config", by_config)] {
        let said = format!("{}{}", stdout(&output), stderr(&output));
        if refused {
            assert_eq!(
                output.status.code(),
                Some(1),
                "`{}` by {how}: {said}",
                subject.adapter()
            );
            assert!(
                said.contains(&format!("runs on `{}`", subject.adapter())),
                "`{}` by {how}: {said}",
                subject.adapter()
            );
        } else {
            assert_eq!(
                output.status.code(),
                Some(0),
                "`{}` by {how}: {said}",
                subject.adapter()
            );
        }
    }
}

pub(super) async fn a_before_tool_hook_binds_as_declared(subject: Subject) {
    let Some(kit) = kit_with_target(subject, edit_brain) else {
        return;
    };
    let refuse = "cat >> hooks.jsonl; echo; echo 'edits are frozen' >&2; exit 1";
    kit.flow(&format!(
        "    on \"agent.tool.before\" {{ run \"sh\" \"-c\" {refuse:?} }}\n{}",
        agent_flow(subject, Grant::Act, "", "")
    ));
    kit.run(&[], 0).await;
    let blocks = subject.info().hooks_block_tools;
    let seen: Vec<Value> = kit
        .project
        .read("hooks.jsonl")
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect();
    let before = seen
        .first()
        .unwrap_or_else(|| panic!("`{}`: the hook never ran", subject.adapter()));
    assert_eq!(
        before["can_block"],
        blocks,
        "`{}`: {}",
        subject.adapter(),
        shown(before)
    );
    assert!(!before["input"].is_null(), "{before}");
    let expected = if blocks { ORIGINAL } else { EDITED };
    assert_eq!(
        kit.project.read("target.txt"),
        expected,
        "`{}` declares hooks_block_tools={blocks}",
        subject.adapter()
    );
    kit.agent_events(&kit.last_run());
}

pub(super) async fn budgets_bind_priced_calls(subject: Subject) {
    let Some(kit) = kit_with_target(subject, edit_brain) else {
        return;
    };
    kit.flow(&agent_flow(subject, Grant::Act, "budget-usd=0.000001", ""));
    if !subject.priced() {
        // Nothing to price the calls by: the run says so and goes on.
        let output = kit.run(&[], 0).await;
        assert!(
            stderr(&output).contains("no price for this model"),
            "{}",
            stderr(&output)
        );
        return;
    }
    kit.run(&[], 1).await;
    let failed = node_failed(&kit, "act");
    assert_eq!(
        failed["class"],
        "budget",
        "`{}`: {failed}",
        subject.adapter()
    );
}

pub(super) async fn its_commands_see_the_key_only_where_declared(subject: Subject) {
    let brain = script(vec![
        subject.shell("env > seen.env"),
        Move::Say(DONE.to_owned()),
    ]);
    let Some(kit) = kit(subject, brain) else {
        return;
    };
    kit.flow(&agent_flow(subject, Grant::Act, "", ""));
    kit.run(&[], 0).await;
    let seen = kit.project.read("seen.env");
    assert!(
        seen.contains("PATH="),
        "`{}`: the command did not run",
        subject.adapter()
    );
    assert_eq!(
        seen.contains(KEY),
        subject.commands_see_key(),
        "`{}` declares commands_see_key={}",
        subject.adapter(),
        subject.info().commands_see_key
    );
}
