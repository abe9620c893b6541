//! `on "<event>" { run "prog" "arg"… }`: commands the run starts on its events.
//!
//! A hook gets the event as one JSON object on stdin and in `ATOMIC_HOOK_EVENT`,
//! `ATOMIC_RUN_ID` and `ATOMIC_NODE`; it runs in the run's working directory, in its own
//! process group, for at most [`HOOK_TIMEOUT`]. A non-zero exit (or a timeout) of a
//! blocking hook (`tool.before`, and `agent.tool.before` where the adapter lets atomic
//! answer the tool call) blocks the action; any other hook's failure is reported and the
//! run goes on, because a notification must not change what the workflow computes.
//!
//! Which actions atomic can see, and so block: its own `tool` nodes (`tool.before` /
//! `tool.after`, each attempt), agent calls (`session.start` / `session.end`), steps
//! (`node.start` / `node.end`) and the run (`run.start` / `run.end`). What an agent does
//! inside its call (`agent.tool.before` / `agent.tool.after`, `permission.request`,
//! `message.complete`, `subagent.start` / `subagent.end`, `session.error`) comes from the
//! adapter's events (`runtime::agent_hooks`); an agent's tool call is blocked only where
//! atomic runs it or answers its permission request.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::executor::{CommandError, CommandSpec, Executor};
use super::shared::Shared;
use super::{NodeError, RunEvent};
use crate::ir::{NodeIdx, Workflow};
use crate::providers::Environment;

/// Longest a hook may run before it is killed (and, for a `*.before` hook, blocks).
pub(crate) const HOOK_TIMEOUT: Duration = Duration::from_secs(60);

/// Most bytes of a hook's stderr kept for its failure message.
const STDERR_TAIL: usize = 2_000;

/// The events a hook can be attached to (the grammar's `on` choices). Serialised as the
/// dotted name a workflow writes (`tool.before`), as `hook-failed` events carry it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HookEvent {
    /// `run.start`: the run starts or resumes.
    RunStart,
    /// `run.end`: the run completes, fails or is stopped (not when it pauses).
    RunEnd,
    /// `node.start`: an attempt of an action step begins.
    NodeStart,
    /// `node.end`: an attempt of an action step ends.
    NodeEnd,
    /// `session.start`: an agent call begins.
    SessionStart,
    /// `session.end`: an agent call ends.
    SessionEnd,
    /// `tool.before`: an attempt of a `tool` node is about to run; a failing hook blocks it.
    ToolBefore,
    /// `tool.after`: an attempt of a `tool` node ended.
    ToolAfter,
    /// `agent.tool.before`: an agent is about to make a tool call; a failing hook blocks it
    /// where atomic runs the tool.
    AgentToolBefore,
    /// `agent.tool.after`: an agent's tool call ended (not a blocked one).
    AgentToolAfter,
    /// `permission.request`: an agent asked for a permission, and it was answered.
    PermissionRequest,
    /// `message.complete`: an assistant message of an agent is complete.
    MessageComplete,
    /// `subagent.start`: a sub-agent of an agent starts.
    SubagentStart,
    /// `subagent.end`: a sub-agent of an agent ends.
    SubagentEnd,
    /// `session.error`: an agent call failed (before any retry of the step).
    SessionError,
}

/// How many hook events there are.
const EVENTS: usize = 15;

impl HookEvent {
    /// Every event, in the grammar's order.
    pub const ALL: [Self; EVENTS] = [
        Self::RunStart,
        Self::RunEnd,
        Self::NodeStart,
        Self::NodeEnd,
        Self::SessionStart,
        Self::SessionEnd,
        Self::ToolBefore,
        Self::ToolAfter,
        Self::AgentToolBefore,
        Self::AgentToolAfter,
        Self::PermissionRequest,
        Self::MessageComplete,
        Self::SubagentStart,
        Self::SubagentEnd,
        Self::SessionError,
    ];

    /// The name a workflow writes: `on "tool.before"`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::RunStart => "run.start",
            Self::RunEnd => "run.end",
            Self::NodeStart => "node.start",
            Self::NodeEnd => "node.end",
            Self::SessionStart => "session.start",
            Self::SessionEnd => "session.end",
            Self::ToolBefore => "tool.before",
            Self::ToolAfter => "tool.after",
            Self::AgentToolBefore => "agent.tool.before",
            Self::AgentToolAfter => "agent.tool.after",
            Self::PermissionRequest => "permission.request",
            Self::MessageComplete => "message.complete",
            Self::SubagentStart => "subagent.start",
            Self::SubagentEnd => "subagent.end",
            Self::SessionError => "session.error",
        }
    }

    fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|event| event.name() == name)
    }

    /// Whether a failing hook stops the action it precedes (`agent.tool.before` only
    /// where atomic answers the tool call: see [`fire_as`]).
    pub(crate) fn blocks(self) -> bool {
        matches!(self, Self::ToolBefore | Self::AgentToolBefore)
    }

    fn index(self) -> usize {
        self as usize
    }
}

impl std::fmt::Display for HookEvent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.name())
    }
}

impl serde::Serialize for HookEvent {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

impl<'de> serde::Deserialize<'de> for HookEvent {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        super::event::deserialize_name(
            deserializer,
            "a hook event (`run.start`, `tool.before`, …)",
            Self::parse,
        )
    }
}

/// Why a hook did not succeed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct HookFailure {
    /// The event it ran on.
    pub(crate) event: HookEvent,
    /// Its command line, for the message.
    pub(crate) command: String,
    /// What went wrong: exit code, signal, timeout or spawn error, with stderr's tail.
    pub(crate) reason: String,
}

impl std::fmt::Display for HookFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the `{}` hook `{}` {}",
            self.event.name(),
            self.command,
            self.reason
        )
    }
}

/// The workflow's hooks, by event; empty for most workflows, which then pay nothing.
#[derive(Debug, Default)]
pub(crate) struct Hooks {
    by_event: [Vec<Arc<[String]>>; EVENTS],
    /// No hook at all: checked on every step, so worked out once.
    none: bool,
}

impl Hooks {
    pub(crate) fn new(workflow: &Workflow) -> Self {
        let mut hooks = Self::default();
        for hook in &workflow.hooks {
            // The checker rejects unknown events and empty commands; a plan built without
            // it simply has no hook for them.
            let Some(event) = HookEvent::parse(&hook.event.value) else {
                continue;
            };
            if hook.run.is_empty() {
                continue;
            }
            let argv: Arc<[String]> = hook.run.iter().map(|arg| arg.value.clone()).collect();
            hooks.by_event[event.index()].push(argv);
        }
        hooks.none = hooks.by_event.iter().all(Vec::is_empty);
        hooks
    }

    /// Whether the workflow declares no hook at all (the common case, kept free).
    pub(crate) fn is_empty(&self) -> bool {
        self.none
    }

    /// Whether any hook listens to `event` (so callers can skip building the payload).
    pub(crate) fn wants(&self, event: HookEvent) -> bool {
        !self.by_event[event.index()].is_empty()
    }

    /// Runs the hooks of `event` in declaration order. When `blocks`, the first
    /// failure stops and is returned; otherwise every hook runs and the failures are
    /// returned for the caller to report.
    pub(crate) async fn fire(
        &self,
        executor: &dyn Executor,
        (event, blocks): (HookEvent, bool),
        payload: &Value,
        (dir, env): (&Path, &Environment),
    ) -> Vec<HookFailure> {
        let mut failures = Vec::new();
        for argv in &self.by_event[event.index()] {
            let ran = run_one(executor, event, argv, payload, (dir, env), HOOK_TIMEOUT).await;
            if let Err(failure) = ran {
                failures.push(failure);
                if blocks {
                    break;
                }
            }
        }
        failures
    }
}

/// Fires `event`'s hooks for the run (and `node`, when the event concerns one), with
/// `fields` added to the payload. Failures are emitted as `hook-failed` events; for a
/// blocking event the first failure is returned as the guarded action's error. Free when
/// the workflow declares no hook for `event`, and in a dry run, which starts no process.
pub(crate) async fn fire(
    shared: &Shared,
    event: HookEvent,
    node: Option<NodeIdx>,
    fields: serde_json::Map<String, Value>,
) -> Result<(), NodeError> {
    match fire_as(shared, event, node, fields, event.blocks()).await {
        Some(failure) => {
            let what = node.map_or_else(String::new, |node| format!(" `{}`", shared.id(node)));
            Err(NodeError::fatal(format!("{failure}, so{what} did not run")))
        }
        None => Ok(()),
    }
}

/// [`fire`], saying whether a failure blocks the action (an agent's tool call blocks only
/// where atomic answers it); the blocking failure, if any, is returned.
pub(crate) async fn fire_as(
    shared: &Shared,
    event: HookEvent,
    node: Option<NodeIdx>,
    fields: serde_json::Map<String, Value>,
    blocked: bool,
) -> Option<HookFailure> {
    if !shared.program.hooks.wants(event) || shared.ctx.dry_run {
        return None;
    }
    let node = node.map(|node| shared.id(node).clone());
    let mut payload = serde_json::Map::new();
    payload.insert("event".into(), event.name().into());
    payload.insert("run_id".into(), shared.program.run_id_str.as_ref().into());
    payload.insert(
        "workflow".into(),
        shared.workflow().name.value.clone().into(),
    );
    if let Some(node) = &node {
        payload.insert("node".into(), node.as_ref().into());
    }
    payload.extend(fields);
    let failures = shared
        .program
        .hooks
        .fire(
            shared.ctx.executor.as_ref(),
            (event, blocked),
            &Value::Object(payload),
            (shared.ctx.workspace.root(), &shared.ctx.tool_env),
        )
        .await;
    for failure in &failures {
        tracing::debug!(%failure, "hook failed");
        shared.emit(RunEvent::HookFailed {
            event,
            node: node.clone(),
            command: failure.command.clone(),
            message: failure.reason.clone(),
            blocked,
        });
    }
    failures.into_iter().next().filter(|_| blocked)
}

/// Runs one hook to its end through `executor`, or ends it (and all it started) at
/// `limit`. It gets `env` (the run's environment without provider keys) and the event's
/// variables, and the payload on standard input.
async fn run_one(
    executor: &dyn Executor,
    event: HookEvent,
    argv: &[String],
    payload: &Value,
    (dir, env): (&Path, &Environment),
    limit: Duration,
) -> Result<(), HookFailure> {
    let fail = |reason: String| HookFailure {
        event,
        command: argv.join(" "),
        reason,
    };
    if argv.is_empty() {
        return Ok(());
    }
    let mut vars: Vec<(String, String)> = env
        .iter()
        .map(|(name, value)| (name.to_owned(), value.to_owned()))
        .collect();
    vars.push(("ATOMIC_HOOK_EVENT".into(), event.name().into()));
    vars.push(("ATOMIC_RUN_ID".into(), field(payload, "run_id").into()));
    vars.push(("ATOMIC_NODE".into(), field(payload, "node").into()));
    let spec = CommandSpec {
        confine: None,
        argv: argv.to_vec(),
        shell: false,
        cwd: dir.to_path_buf(),
        env: vars,
        stdin: Some(format!("{payload}\n")),
        capture_stdout: false,
        limit: Some(limit),
    };
    let output = executor
        .run_command(&spec, None)
        .await
        .map_err(|error| match error {
            CommandError::Start { reason, .. } => fail(format!("could not start: {reason}")),
            other => fail(other.to_string()),
        })?;
    if output.code == Some(0) {
        return Ok(());
    }
    let how = output.code.map_or_else(
        || "was killed by a signal".to_owned(),
        |code| format!("exited with code {code}"),
    );
    let err = output.stderr.trim();
    let tail = match err.char_indices().rev().nth(STDERR_TAIL) {
        Some((at, _)) => &err[at..],
        None => err,
    };
    Err(fail(if tail.is_empty() {
        how
    } else {
        format!("{how}: {tail}")
    }))
}

fn field<'a>(payload: &'a Value, name: &str) -> &'a str {
    payload.get(name).and_then(Value::as_str).unwrap_or("")
}

#[cfg(test)]
mod tests {
    use crate::runtime::LocalExecutor;
    use serde_json::json;

    use super::*;

    fn sh(script: &str) -> Vec<String> {
        vec!["sh".into(), "-c".into(), script.into()]
    }

    fn payload() -> Value {
        json!({"event": "tool.before", "run_id": "r1", "node": "build"})
    }

    #[test]
    fn the_grammar_offers_exactly_the_events_hooks_fire_on() {
        let grammar: Value =
            serde_json::from_str(include_str!("../../grammar/atomic.grammar.json")).unwrap();
        let on = grammar["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|node| node["id"] == "on")
            .expect("the grammar has `on`");
        let choices: Vec<&str> = on["arguments"][0]["choices"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        let names: Vec<&str> = HookEvent::ALL.iter().map(|event| event.name()).collect();
        assert_eq!(choices, names);
        for event in HookEvent::ALL {
            assert_eq!(HookEvent::parse(event.name()), Some(event));
            assert_eq!(
                event.index(),
                HookEvent::ALL.iter().position(|e| *e == event).unwrap()
            );
        }
    }

    #[tokio::test]
    async fn a_hook_reads_the_event_on_stdin_and_in_its_environment() {
        let dir = tempfile::tempdir().unwrap();
        let script =
            "cat > seen.json; echo \"$ATOMIC_HOOK_EVENT $ATOMIC_RUN_ID $ATOMIC_NODE\" > env.txt";
        run_one(
            &LocalExecutor::default(),
            HookEvent::ToolBefore,
            &sh(script),
            &payload(),
            (dir.path(), &Environment::default()),
            HOOK_TIMEOUT,
        )
        .await
        .unwrap();
        let seen: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.path().join("seen.json")).unwrap())
                .unwrap();
        assert_eq!(seen, payload());
        assert_eq!(
            std::fs::read_to_string(dir.path().join("env.txt")).unwrap(),
            "tool.before r1 build\n"
        );
    }

    #[tokio::test]
    async fn a_failing_hook_reports_its_exit_code_and_stderr() {
        let dir = tempfile::tempdir().unwrap();
        let failure = run_one(
            &LocalExecutor::default(),
            HookEvent::ToolBefore,
            &sh("echo 'rm -rf is not allowed' >&2; exit 3"),
            &payload(),
            (dir.path(), &Environment::default()),
            HOOK_TIMEOUT,
        )
        .await
        .unwrap_err();
        assert_eq!(
            failure.to_string(),
            "the `tool.before` hook `sh -c echo 'rm -rf is not allowed' >&2; exit 3` \
             exited with code 3: rm -rf is not allowed"
        );
    }

    #[tokio::test]
    async fn a_hook_past_its_limit_is_killed_with_its_children() {
        let dir = tempfile::tempdir().unwrap();
        let started = std::time::Instant::now();
        let failure = run_one(
            &LocalExecutor::default(),
            HookEvent::NodeEnd,
            &sh("sleep 30 & echo $! > child.pid; wait"),
            &payload(),
            (dir.path(), &Environment::default()),
            Duration::from_millis(300),
        )
        .await
        .unwrap_err();
        assert!(failure.reason.contains("timed out"), "{failure}");
        assert!(started.elapsed() < Duration::from_secs(10));
        let pid: i32 = std::fs::read_to_string(dir.path().join("child.pid"))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        // The grandchild died with the group (give the kernel a moment to reap it).
        let gone = (0..50).any(|_| {
            std::thread::sleep(Duration::from_millis(20));
            !Path::new(&format!("/proc/{pid}")).exists()
                || std::fs::read_to_string(format!("/proc/{pid}/stat"))
                    .is_ok_and(|stat| stat.contains(") Z "))
        });
        assert!(gone, "the hook's child {pid} outlived the timeout");
    }

    #[tokio::test]
    async fn a_missing_program_is_a_failure_not_a_panic() {
        let dir = tempfile::tempdir().unwrap();
        let failure = run_one(
            &LocalExecutor::default(),
            HookEvent::RunStart,
            &["./no-such-hook".to_owned()],
            &payload(),
            (dir.path(), &Environment::default()),
            HOOK_TIMEOUT,
        )
        .await
        .unwrap_err();
        assert!(failure.reason.starts_with("could not start"), "{failure}");
    }
}
