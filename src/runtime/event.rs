//! [`RunEvent`]: everything a run reports, and the `--stream` modes that select them.
//!
//! The runtime emits events into a [`RunSink`] and never prints; the CLI renders them
//! (a live tree, plain lines, or JSONL). `schemas/events.schema.json` describes the JSON
//! form of every event (one object per line, tagged by `type`).

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::executor::OutputStream;
use super::{HookEvent, SessionAction};
use crate::ir::{ErrorClass, NodeKeyword};
use crate::providers::{AgentEvent, Usage};
use crate::runtime::state::Delta;

/// One thing that happened in a run. Read back from JSON by a view that follows a run
/// elsewhere (on Temporal) or from a store's log. Its short names (`kind`, `class`, …) are
/// closed vocabularies, typed as enums, so an unknown name does not read. Every name atomic
/// has ever written is still in its enum, so only a newer atomic's event can fail this way;
/// the readers of a run's log skip an event that does not read rather than fail the view.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum RunEvent {
    /// The run started (or resumed).
    RunStarted {
        /// The run id.
        run_id: String,
        /// `workflow "<name>"`.
        workflow: String,
        /// Whether this continues an earlier run.
        resumed: bool,
        /// The last committed step (0 for a new run).
        from_step: u64,
    },
    /// A step began an attempt.
    StepStarted {
        /// The step number (a parallel's branches share their parallel's number).
        step: u64,
        /// The node id.
        node: Arc<str>,
        /// The node kind (`agent`, `tool`, `set`, `parallel`, …).
        kind: NodeKeyword,
        /// The attempt, from 1.
        attempt: u32,
        /// The parallel branch, when inside one.
        #[serde(skip_serializing_if = "Option::is_none")]
        branch: Option<u32>,
    },
    /// A step finished and its changes were applied (and, outside parallel branches,
    /// committed).
    StepFinished {
        /// The step number.
        step: u64,
        /// The node id.
        node: Arc<str>,
        /// `completed`, `skipped` (on-error skip) or `recovered` (on-error goto).
        status: StepOutcome,
        /// What changed.
        delta: Delta,
        /// The files it changed, in a run that keeps snapshots of its workspace.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        files: Option<FilesChanged>,
        /// The parallel branch, when inside one.
        #[serde(skip_serializing_if = "Option::is_none")]
        branch: Option<u32>,
    },
    /// The full state after a step (`--stream values`).
    Values {
        /// The step number.
        step: u64,
        /// Every set field.
        state: Value,
    },
    /// A decision took a route.
    Route {
        /// The decision's id.
        node: Arc<str>,
        /// The step control goes to (its key: a node id, `<id>#tail`, `#end`, …).
        to: String,
    },
    /// An attempt failed and will be retried after `delay_ms`.
    Retrying {
        /// The node id.
        node: Arc<str>,
        /// The attempt that comes next, from 2.
        attempt: u32,
        /// The wait before it.
        delay_ms: u64,
        /// The failure's class: only a classified failure is retried (`retry-on` names
        /// classes), so this is never `error`.
        class: ErrorClass,
        /// The failure.
        message: String,
    },
    /// A node failed for good; `action` says what happens next: `skip`, `recover`,
    /// `fail-branch` or `fail-run`.
    NodeFailed {
        /// The node id.
        node: Arc<str>,
        /// The failure's class (`error` when unclassified; never `limit`).
        class: FailureClass,
        /// The failure.
        message: String,
        /// What happens next.
        action: FailAction,
    },
    /// An event from an agent's provider.
    Agent {
        /// The agent node.
        node: Arc<str>,
        /// The event.
        event: AgentEvent,
    },
    /// An agent call's context window reached its `warn` threshold (once per call).
    ContextWarning {
        /// The agent node.
        node: Arc<str>,
        /// The fraction of the window in use.
        fraction: f64,
        /// The threshold it reached.
        warn: f64,
    },
    /// A session that had reached its `act` threshold is compacted, or replaced by a fresh
    /// one, before an agent continues it.
    ContextAction {
        /// The agent node continuing the session.
        node: Arc<str>,
        /// The node whose session it continues (`session=`).
        session_of: String,
        /// `compact` or `fresh`.
        action: SessionAction,
        /// The fraction the session had reached.
        fraction: f64,
    },
    /// One line a tool printed.
    ToolOutput {
        /// The tool node.
        node: Arc<str>,
        /// `stdout` or `stderr`.
        stream: OutputStream,
        /// The line, without its newline.
        line: String,
    },
    /// A wait is answering itself after its `auto-approve` delay.
    WaitAutoApprove {
        /// The wait's id.
        node: Arc<str>,
        /// The delay.
        after_ms: u64,
        /// The answer it will give.
        answer: String,
    },
    /// A person answered an agent's permission request (`permission="ask"`), and the agent's
    /// call continues with the answer.
    PermissionAnswered {
        /// The agent.
        node: Arc<str>,
        /// The tool it asked to use.
        tool: String,
        /// With what.
        input: serde_json::Value,
        /// `allow`, `allow-run` or `deny`.
        answer: String,
    },
    /// An `on "<event>"` hook failed. A failing `*.before` hook also fails the action it
    /// guards (`blocked`); any other hook's failure changes nothing else.
    HookFailed {
        /// The hook's event (`tool.before`, `run.end`, …).
        event: HookEvent,
        /// The node the event concerns, if any.
        #[serde(skip_serializing_if = "Option::is_none")]
        node: Option<Arc<str>>,
        /// The hook's command line.
        command: String,
        /// What went wrong: exit code, signal, timeout or spawn error, with stderr's tail.
        message: String,
        /// Whether the action was blocked.
        blocked: bool,
    },
    /// An event raised by a workflow or an embedding application.
    Custom {
        /// Where it came from.
        node: Arc<str>,
        /// Its name.
        name: String,
        /// Its data.
        data: Value,
    },
    /// Timings and attempts of a finished step (`--stream debug`).
    Debug {
        /// The step number.
        step: u64,
        /// The node id.
        node: Arc<str>,
        /// Attempts made.
        attempts: u32,
        /// Wall time of the step, in microseconds.
        elapsed_us: u64,
        /// The model an agent used.
        #[serde(skip_serializing_if = "Option::is_none")]
        model: Option<String>,
        /// Tokens an agent used.
        #[serde(skip_serializing_if = "Option::is_none")]
        usage: Option<Usage>,
    },
    /// The run stopped at a wait; `atomic resume RUN --answer …` continues it.
    RunPaused {
        /// The run id.
        run_id: String,
        /// The step number of the wait.
        step: u64,
        /// The wait's id.
        node: Arc<str>,
        /// For a wait inside a block (a parallel branch, a subgraph): how `atomic resume
        /// --wait` names it (`<block path>/<node>`).
        #[serde(skip_serializing_if = "Option::is_none")]
        wait: Option<String>,
        /// The wait's `header=`: a short title shown above the prompt.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        header: Option<String>,
        /// The rendered prompt.
        prompt: String,
        /// The answer type (`yes-no`, `string`, `choice`, `json`, …).
        answer: String,
        /// The choices of a `choice` answer.
        choices: Vec<Choice>,
    },
    /// The run reached its end.
    RunFinished {
        /// The run id.
        run_id: String,
        /// Steps committed.
        steps: u64,
        /// Tokens used by every agent call.
        usage: Usage,
        /// Cost in USD where known.
        cost_usd: f64,
        /// The final state.
        state: Value,
    },
    /// The run failed: a node failed with no `on-error` route, or a limit was reached.
    RunFailed {
        /// The run id.
        run_id: String,
        /// The last committed step.
        step: u64,
        /// The node that failed (none for a run-wide limit).
        #[serde(skip_serializing_if = "Option::is_none")]
        node: Option<Arc<str>>,
        /// The class (`error` when unclassified, `limit` for run limits).
        class: FailureClass,
        /// What happened.
        message: String,
    },
    /// The run was cancelled (Ctrl-C); committed steps are kept and it can be resumed.
    RunCancelled {
        /// The run id.
        run_id: String,
        /// The last committed step.
        step: u64,
    },
    /// On resume: a step was in flight when the run stopped, and the files it had changed
    /// were put back as they were before it (what it left is kept as a snapshot).
    FilesPutBack {
        /// The interrupted step's node.
        #[serde(skip_serializing_if = "Option::is_none")]
        node: Option<Arc<str>>,
        /// The files put back, by path.
        paths: Vec<String>,
        /// The snapshot keeping what the step had left.
        kept: String,
    },
    /// On resume with `--keep-changes`: files changed while the run was stopped are now
    /// the run's.
    FilesKept {
        /// The files, by path.
        paths: Vec<String>,
        /// The snapshot recording them.
        snapshot: String,
    },
    /// A sandboxed step's process tried to reach what its sandbox does not let it (a host
    /// not in its `network` list) and was refused.
    SandboxDenied {
        /// The step's node.
        node: Arc<str>,
        /// What it tried to reach (`host:port`, or the request when it named no host).
        target: String,
        /// Why it was refused, for people.
        reason: String,
    },
    /// An `agent.tool.before` hook refused a tool call of an agent before it ran.
    ToolBlocked {
        /// The agent's node.
        node: Arc<str>,
        /// The tool's name.
        tool: String,
        /// The backend's id of the call.
        tool_id: String,
        /// Why: the hook's failure, as the model read it.
        reason: String,
    },
}

/// What a step did to the workspace's files: the snapshots before and after it (git
/// commits in the run's chain, for `atomic runs diff`) and the paths that differ.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FilesChanged {
    /// The snapshot before its first attempt.
    pub before: String,
    /// The snapshot after it succeeded.
    pub after: String,
    /// The files that differ, by path.
    pub changed: Vec<crate::workspace::snapshot::Change>,
}

/// A `choice` of a wait.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Choice {
    /// The answer's value.
    pub value: String,
    /// What the person sees.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Longer text shown under the label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

impl From<&crate::store::WaitChoice> for Choice {
    fn from(choice: &crate::store::WaitChoice) -> Self {
        Self {
            value: choice.value.clone(),
            label: choice.label.clone(),
            description: choice.description.clone(),
        }
    }
}

impl RunEvent {
    /// The event's `type` tag.
    #[must_use]
    pub fn kind(&self) -> &'static str {
        match self {
            Self::RunStarted { .. } => "run-started",
            Self::StepStarted { .. } => "step-started",
            Self::StepFinished { .. } => "step-finished",
            Self::Values { .. } => "values",
            Self::Route { .. } => "route",
            Self::Retrying { .. } => "retrying",
            Self::NodeFailed { .. } => "node-failed",
            Self::Agent { .. } => "agent",
            Self::ContextWarning { .. } => "context-warning",
            Self::ContextAction { .. } => "context-action",
            Self::ToolOutput { .. } => "tool-output",
            Self::WaitAutoApprove { .. } => "wait-auto-approve",
            Self::PermissionAnswered { .. } => "permission-answered",
            Self::HookFailed { .. } => "hook-failed",
            Self::Custom { .. } => "custom",
            Self::Debug { .. } => "debug",
            Self::RunPaused { .. } => "run-paused",
            Self::RunFinished { .. } => "run-finished",
            Self::RunFailed { .. } => "run-failed",
            Self::RunCancelled { .. } => "run-cancelled",
            Self::FilesPutBack { .. } => "files-put-back",
            Self::FilesKept { .. } => "files-kept",
            Self::SandboxDenied { .. } => "sandbox-denied",
            Self::ToolBlocked { .. } => "tool-blocked",
        }
    }

    /// Whether `modes` select this event. Run start and end events are in every mode.
    #[must_use]
    pub fn selected_by(&self, modes: StreamModes) -> bool {
        match self {
            Self::RunStarted { .. }
            | Self::RunPaused { .. }
            | Self::RunFinished { .. }
            | Self::RunFailed { .. }
            | Self::RunCancelled { .. }
            | Self::FilesPutBack { .. }
            | Self::FilesKept { .. }
            | Self::SandboxDenied { .. }
            | Self::ToolBlocked { .. } => true,
            Self::Values { .. } => modes.values,
            Self::StepFinished { .. } => modes.updates || modes.events || modes.debug,
            Self::Debug { .. } => modes.debug,
            _ => modes.events || modes.debug,
        }
    }

    /// Whether the event goes into the run's log in the store: everything but the
    /// high-volume ones (text and thinking deltas, tool output lines, full-state values),
    /// which the log summarises (message-complete, step-finished).
    #[must_use]
    pub fn is_logged(&self) -> bool {
        match self {
            Self::Values { .. } | Self::ToolOutput { .. } | Self::Debug { .. } => false,
            Self::Agent { event, .. } => !matches!(
                event,
                AgentEvent::TextDelta { .. } | AgentEvent::ThinkingDelta { .. }
            ),
            _ => true,
        }
    }

    /// One JSON line (no trailing newline).
    #[must_use]
    pub fn to_jsonl(&self) -> String {
        serde_json::to_string(self).expect("events serialise: all keys are strings")
    }
}

/// Which events `--stream` prints (combinable: `--stream updates,events`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StreamModes {
    /// `values`: the full state after each step.
    pub values: bool,
    /// `updates`: each step's delta.
    pub updates: bool,
    /// `events`: node start/finish, retries, errors, provider and tool events, custom.
    pub events: bool,
    /// `debug`: everything, plus timings, attempts, model and tokens.
    pub debug: bool,
}

impl StreamModes {
    /// Every mode.
    pub const ALL: Self = Self {
        values: true,
        updates: true,
        events: true,
        debug: true,
    };

    /// Parses `values,updates,events,debug` (any subset, comma-separated).
    ///
    /// # Errors
    /// The unknown mode's name.
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut modes = Self::default();
        for mode in text
            .split(',')
            .map(str::trim)
            .filter(|mode| !mode.is_empty())
        {
            match mode {
                "values" => modes.values = true,
                "updates" => modes.updates = true,
                "events" => modes.events = true,
                "debug" => modes.debug = true,
                other => {
                    return Err(format!(
                        "unknown stream mode `{other}`: expected one of `values`, `updates`, `events`, `debug`"
                    ));
                }
            }
        }
        Ok(modes)
    }
}

/// Receives a run's events. Must not block (it is called on the runtime's tasks).
pub trait RunSink: Send + Sync {
    /// Takes one event.
    fn emit(&self, event: &RunEvent);
}

impl RunSink for tokio::sync::mpsc::UnboundedSender<RunEvent> {
    fn emit(&self, event: &RunEvent) {
        // A closed receiver means nobody renders any more; the run goes on regardless.
        let _ = self.send(event.clone());
    }
}

impl<F: Fn(&RunEvent) + Send + Sync> RunSink for F {
    fn emit(&self, event: &RunEvent) {
        self(event);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_parse_and_select() {
        let modes = StreamModes::parse("updates, values").unwrap();
        assert!(modes.values && modes.updates && !modes.events && !modes.debug);
        assert!(
            StreamModes::parse("everything")
                .unwrap_err()
                .contains("`everything`")
        );
        let values = RunEvent::Values {
            step: 1,
            state: Value::Null,
        };
        let retry = RunEvent::Retrying {
            node: Arc::from("a"),
            attempt: 2,
            delay_ms: 10,
            class: ErrorClass::Timeout,
            message: String::new(),
        };
        assert!(values.selected_by(modes) && !retry.selected_by(modes));
        assert!(retry.selected_by(StreamModes::parse("events").unwrap()));
        let cancelled = RunEvent::RunCancelled {
            run_id: "r".to_owned(),
            step: 0,
        };
        assert!(cancelled.selected_by(StreamModes::default()));
        assert_eq!(
            cancelled.to_jsonl(),
            r#"{"type":"run-cancelled","run_id":"r","step":0}"#
        );
    }

    fn node(id: &str) -> Arc<str> {
        Arc::from(id)
    }

    /// Each event carrying a short name, as it was written before the names were typed.
    const WRITTEN: [&str; 7] = [
        r#"{"type":"step-started","step":3,"node":"work","kind":"task-loop","attempt":1,"branch":0}"#,
        r#"{"type":"retrying","node":"ask","attempt":2,"delay_ms":10,"class":"rate-limit","message":"slow down"}"#,
        r#"{"type":"node-failed","node":"ask","class":"error","message":"no","action":"fail-run"}"#,
        r#"{"type":"context-action","node":"fix","session_of":"review","action":"compact","fraction":0.7}"#,
        r#"{"type":"tool-output","node":"build","stream":"stderr","line":"warning: unused"}"#,
        r#"{"type":"hook-failed","event":"agent.tool.before","node":"ask","command":"guard","message":"exited with code 1","blocked":true}"#,
        r#"{"type":"run-failed","run_id":"r","step":4,"class":"limit","message":"the run reached its time limit"}"#,
    ];

    #[test]
    fn events_with_short_names_read_and_write_the_same_bytes() {
        let typed = [
            RunEvent::StepStarted {
                step: 3,
                node: node("work"),
                kind: NodeKeyword::TaskLoop,
                attempt: 1,
                branch: Some(0),
            },
            RunEvent::Retrying {
                node: node("ask"),
                attempt: 2,
                delay_ms: 10,
                class: ErrorClass::RateLimit,
                message: "slow down".to_owned(),
            },
            RunEvent::NodeFailed {
                node: node("ask"),
                class: FailureClass::Unclassified,
                message: "no".to_owned(),
                action: FailAction::FailRun,
            },
            RunEvent::ContextAction {
                node: node("fix"),
                session_of: "review".to_owned(),
                action: SessionAction::Compact,
                fraction: 0.7,
            },
            RunEvent::ToolOutput {
                node: node("build"),
                stream: OutputStream::Stderr,
                line: "warning: unused".to_owned(),
            },
            RunEvent::HookFailed {
                event: HookEvent::AgentToolBefore,
                node: Some(node("ask")),
                command: "guard".to_owned(),
                message: "exited with code 1".to_owned(),
                blocked: true,
            },
            RunEvent::RunFailed {
                run_id: "r".to_owned(),
                step: 4,
                node: None,
                class: FailureClass::Limit,
                message: "the run reached its time limit".to_owned(),
            },
        ];
        for (event, line) in typed.iter().zip(WRITTEN) {
            assert_eq!(event.to_jsonl(), line);
            assert_eq!(&serde_json::from_str::<RunEvent>(line).unwrap(), event);
        }
    }

    /// Every name of every vocabulary, in every event that carries it: the field holds the
    /// name, and the line reads back to the same event (from text, which lends the
    /// deserializer its strings, and from a `Value`, which gives them: a Temporal query).
    #[test]
    fn every_short_name_round_trips_in_its_events() {
        let check = |event: RunEvent, field: &str, name: &str| {
            let line = event.to_jsonl();
            let value: Value = serde_json::from_str(&line).unwrap();
            assert_eq!(value[field], name, "{line}");
            assert_eq!(serde_json::from_str::<RunEvent>(&line).unwrap(), event);
            assert_eq!(RunEvent::deserialize(value).unwrap(), event);
        };
        for kind in NodeKeyword::ALL {
            let event = RunEvent::StepStarted {
                step: 1,
                node: node("n"),
                kind,
                attempt: 1,
                branch: None,
            };
            check(event, "kind", kind.name());
        }
        let failures = ErrorClass::ALL
            .iter()
            .copied()
            .map(FailureClass::Class)
            .chain([FailureClass::Unclassified, FailureClass::Limit]);
        for class in failures {
            if let FailureClass::Class(class) = class {
                let event = RunEvent::Retrying {
                    node: node("n"),
                    attempt: 2,
                    delay_ms: 1,
                    class,
                    message: String::new(),
                };
                check(event, "class", class.name());
            }
            if class != FailureClass::Limit {
                let event = RunEvent::NodeFailed {
                    node: node("n"),
                    class,
                    message: String::new(),
                    action: FailAction::Skip,
                };
                check(event, "class", class.name());
            }
            let event = RunEvent::RunFailed {
                run_id: "r".to_owned(),
                step: 1,
                node: None,
                class,
                message: String::new(),
            };
            check(event, "class", class.name());
        }
        for action in [SessionAction::Compact, SessionAction::Fresh] {
            let event = RunEvent::ContextAction {
                node: node("n"),
                session_of: "m".to_owned(),
                action,
                fraction: 0.5,
            };
            check(event, "action", action.name());
        }
        for stream in [OutputStream::Stdout, OutputStream::Stderr] {
            let event = RunEvent::ToolOutput {
                node: node("n"),
                stream,
                line: String::new(),
            };
            check(event, "stream", stream.name());
        }
        for hook in HookEvent::ALL {
            let event = RunEvent::HookFailed {
                event: hook,
                node: None,
                command: String::new(),
                message: String::new(),
                blocked: false,
            };
            check(event, "event", hook.name());
        }
    }

    /// A name no vocabulary has (a newer atomic's) does not read: an error quoting it, which
    /// the readers of a run's log answer by skipping that one event.
    #[test]
    fn an_unknown_short_name_is_an_error_naming_it() {
        let swaps = [
            ("task-loop", "map"),
            ("rate-limit", "cosmic-ray"),
            ("error", "cosmic-ray"),
            ("compact", "summarise"),
            ("stderr", "stdlog"),
            ("agent.tool.before", "tool.sideways"),
            ("limit", "cosmic-ray"),
        ];
        for (line, (known, unknown)) in WRITTEN.iter().zip(swaps) {
            let known = format!("\"{known}\"");
            assert!(line.contains(&known), "{line}");
            let line = line.replace(&known, &format!("\"{unknown}\""));
            let error = serde_json::from_str::<RunEvent>(&line).unwrap_err();
            assert!(error.to_string().contains(unknown), "{line}: {error}");
            let value: Value = serde_json::from_str(&line).unwrap();
            assert!(RunEvent::deserialize(value).is_err(), "{line}");
        }
        // Only classified failures are retried, so a retry never said `error`.
        let unclassified_retry = WRITTEN[1].replace("\"rate-limit\"", "\"error\"");
        assert!(serde_json::from_str::<RunEvent>(&unclassified_retry).is_err());
    }

    /// `schemas/events.schema.json` lists exactly the names each field can hold.
    #[test]
    fn the_events_schema_lists_every_short_name() {
        let schema: Value =
            serde_json::from_str(include_str!("../../schemas/events.schema.json")).unwrap();
        let listed = |event: &str, field: &str| -> Vec<String> {
            let variant = schema["oneOf"]
                .as_array()
                .unwrap()
                .iter()
                .find(|variant| variant["title"] == event)
                .unwrap_or_else(|| panic!("the schema has no `{event}`"));
            variant["properties"][field]["enum"]
                .as_array()
                .unwrap_or_else(|| panic!("`{event}.{field}` is not an enum"))
                .iter()
                .map(|name| name.as_str().unwrap().to_owned())
                .collect()
        };
        let classes = || ErrorClass::ALL.iter().map(|class| class.name());
        let kinds: Vec<_> = NodeKeyword::ALL.iter().map(|kind| kind.name()).collect();
        assert_eq!(listed("step-started", "kind"), kinds);
        assert_eq!(listed("retrying", "class"), classes().collect::<Vec<_>>());
        assert_eq!(
            listed("node-failed", "class"),
            classes().chain(["error"]).collect::<Vec<_>>()
        );
        assert_eq!(
            listed("run-failed", "class"),
            classes().chain(["error", "limit"]).collect::<Vec<_>>()
        );
        assert_eq!(listed("context-action", "action"), ["compact", "fresh"]);
        assert_eq!(listed("tool-output", "stream"), ["stdout", "stderr"]);
        let hooks: Vec<_> = HookEvent::ALL.iter().map(|event| event.name()).collect();
        assert_eq!(listed("hook-failed", "event"), hooks);
    }

    /// What the workspace adds to the events fits the published schema.
    #[test]
    fn the_files_events_fit_the_schema() {
        let schema: Value =
            serde_json::from_str(include_str!("../../schemas/events.schema.json")).unwrap();
        let validator = jsonschema::validator_for(&schema).unwrap();
        let change = crate::workspace::snapshot::Change {
            path: "src/a.rs".to_owned(),
            status: crate::workspace::snapshot::ChangeStatus::Modified,
            added: Some(3),
            removed: None,
        };
        let events = [
            RunEvent::StepFinished {
                step: 2,
                node: node("fix"),
                status: StepOutcome::Completed,
                delta: Delta::default(),
                files: Some(FilesChanged {
                    before: "a".repeat(40),
                    after: "b".repeat(40),
                    changed: vec![change],
                }),
                branch: None,
            },
            RunEvent::FilesPutBack {
                node: Some(node("fix")),
                paths: vec!["src/a.rs".to_owned()],
                kept: "c".repeat(40),
            },
            RunEvent::FilesKept {
                paths: vec!["notes.txt".to_owned()],
                snapshot: "d".repeat(40),
            },
            RunEvent::SandboxDenied {
                node: node("fetch"),
                target: "example.com:443".to_owned(),
                reason: "`example.com` is not allowed".to_owned(),
            },
            RunEvent::ToolBlocked {
                node: node("fix"),
                tool: "Bash".to_owned(),
                tool_id: "toolu_1".to_owned(),
                reason: "the hook `./guard.sh` failed (exit 1): no rm -rf".to_owned(),
            },
        ];
        for event in events {
            let value = serde_json::to_value(&event).unwrap();
            assert!(validator.is_valid(&value), "{value}");
        }
    }

    /// A question's header and its choices' descriptions fit the published schema, and a
    /// pause written before waits had them still reads.
    #[test]
    fn a_pause_with_a_header_and_descriptions_fits_the_schema() {
        let schema: Value =
            serde_json::from_str(include_str!("../../schemas/events.schema.json")).unwrap();
        let validator = jsonschema::validator_for(&schema).unwrap();
        let paused = RunEvent::RunPaused {
            run_id: "r1".to_owned(),
            step: 2,
            node: node("pick"),
            wait: Some("fan@1#0/pick".to_owned()),
            header: Some("Database".to_owned()),
            prompt: "Which database?".to_owned(),
            answer: "choice".to_owned(),
            choices: vec![Choice {
                value: "pg".to_owned(),
                label: Some("PostgreSQL".to_owned()),
                description: Some("Relational, the team knows it".to_owned()),
            }],
        };
        let value = serde_json::to_value(&paused).unwrap();
        assert!(validator.is_valid(&value), "{value}");
        assert_eq!(value["header"], "Database");
        assert_eq!(
            value["choices"][0]["description"],
            "Relational, the team knows it"
        );
        let older = r#"{"type":"run-paused","run_id":"r1","step":2,"node":"pick","prompt":"?","answer":"choice","choices":[{"value":"pg"}]}"#;
        let RunEvent::RunPaused {
            header, choices, ..
        } = serde_json::from_str(older).unwrap()
        else {
            panic!("a run-paused event")
        };
        assert_eq!((header, choices[0].description.clone()), (None, None));
    }
}

/// How an action step ended, as `step-finished` says it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StepOutcome {
    /// It succeeded.
    Completed,
    /// It failed and `on-error "skip"` applied its fallback.
    Skipped,
    /// It failed and `on-error "goto"` routes to a recovery node.
    Recovered,
}

impl StepOutcome {
    /// The spelling in events.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Completed => "completed",
            Self::Skipped => "skipped",
            Self::Recovered => "recovered",
        }
    }
}

impl std::fmt::Display for StepOutcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What happens after a node failed for good (`node-failed`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FailAction {
    /// `on-error "skip"`: its fallback is applied and the walk goes on.
    Skip,
    /// `on-error "goto"`: the walk goes to the recovery node.
    Recover,
    /// No route, inside a parallel branch: the branch fails.
    FailBranch,
    /// No route: the run fails.
    FailRun,
}

impl FailAction {
    /// The spelling in events.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Skip => "skip",
            Self::Recover => "recover",
            Self::FailBranch => "fail-branch",
            Self::FailRun => "fail-run",
        }
    }
}

impl std::fmt::Display for FailAction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
/// What a `node-failed` or `run-failed` event says failed. Serialised as one name:
/// the class's (`rate-limit`, `timeout`, …), `error` or `limit`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FailureClass {
    /// An error of a `retry-on` class.
    Class(ErrorClass),
    /// `error`: an error no retry can fix, which has no class (a template that does not
    /// render, a write its reducer refuses).
    Unclassified,
    /// `limit`: a run limit (`max-steps`, `timeout`, `max-budget-usd`) stopped the run.
    /// Only `run-failed` says it: a limit stops the run, not a node.
    Limit,
}

impl FailureClass {
    /// The spelling in events.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Class(class) => class.name(),
            Self::Unclassified => "error",
            Self::Limit => "limit",
        }
    }

    fn parse(name: &str) -> Option<Self> {
        match name {
            "error" => Some(Self::Unclassified),
            "limit" => Some(Self::Limit),
            _ => ErrorClass::ALL
                .iter()
                .copied()
                .find(|class| class.name() == name)
                .map(Self::Class),
        }
    }
}

impl From<Option<ErrorClass>> for FailureClass {
    fn from(class: Option<ErrorClass>) -> Self {
        class.map_or(Self::Unclassified, Self::Class)
    }
}

impl std::fmt::Display for FailureClass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.name())
    }
}

impl Serialize for FailureClass {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for FailureClass {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserialize_name(
            deserializer,
            "an error class (`rate-limit`, `timeout`, …), `error` or `limit`",
            Self::parse,
        )
    }
}

/// Reads one name of a closed vocabulary that `parse` knows, for an enum serialised by a
/// `name()` of its own (so the spelling is written once). The string is only borrowed while
/// it is looked up; an unknown name is an error that quotes it.
pub(super) fn deserialize_name<'de, D, T>(
    deserializer: D,
    expecting: &'static str,
    parse: fn(&str) -> Option<T>,
) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
{
    struct Name<T> {
        expecting: &'static str,
        parse: fn(&str) -> Option<T>,
    }

    impl<T> serde::de::Visitor<'_> for Name<T> {
        type Value = T;

        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(self.expecting)
        }

        fn visit_str<E: serde::de::Error>(self, name: &str) -> Result<T, E> {
            (self.parse)(name)
                .ok_or_else(|| E::invalid_value(serde::de::Unexpected::Str(name), &self))
        }
    }

    deserializer.deserialize_str(Name { expecting, parse })
}
