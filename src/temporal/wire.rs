//! What crosses Temporal: the workflow's input and result, the activities' inputs and
//! results, the answer update and the progress query. Plain data only; every type is JSON
//! (Temporal's default payload converter).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::ir::ErrorClass;
use crate::providers::{AgentEvent, AgentReply, AgentRequest, PermissionAsk, ProviderError};
use crate::runtime::RunEvent;
use crate::runtime::executor::{CommandError, CommandOutput, CommandSpec, OutputStream};
use crate::store::{CarriedRun, RunDetail, RunRecord};

/// Which workflow a run runs, as every worker finds it: workers share the project's files.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct WorkflowRef {
    /// The workflow file, absolute (or a built-in's `<built-in>/…` path).
    pub path: String,
    /// The hash of what the starter compiled: a worker that compiles something else (the
    /// file was edited since) refuses the run instead of running another workflow.
    pub hash: String,
    /// The adapter every agent provider was swapped to (`--provider`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adapter: Option<String>,
}

/// The workflow's input: a new run, or one continued as new.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunStart {
    /// The run id (also the Temporal workflow id).
    pub run_id: String,
    /// The workflow.
    pub workflow: WorkflowRef,
    /// The run's inputs, as given (checked and defaulted by the run).
    pub inputs: Map<String, Value>,
    /// The directory agents and tools work in.
    pub working_dir: String,
    /// The run so far, when this execution continues an earlier one (continue-as-new).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub carried: Option<Box<CarriedRun>>,
    /// Events of the earlier executions that are not carried (only counted).
    #[serde(default)]
    pub events_before: u64,
}

/// The `answer` update: the answer to a pending wait.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Answer {
    /// The answer, as `atomic resume --answer` takes it.
    pub answer: String,
    /// Which wait, when several are pending (`--wait`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait: Option<String>,
}

/// The `progress` query, asked several times a second by a follower, so it stays small:
/// the run's record, its events from `since` on, and its state once it is paused or over.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Progress {
    /// The run's record (`None` before it started).
    pub run: Option<RunRecord>,
    /// The events (all of them, as the run's sink saw them) from the asked index on, as
    /// JSON ([`Progress::run_events`] reads them).
    pub events: Vec<Value>,
    /// The index after the last event returned.
    pub next: u64,
    /// The index after the last event the run has emitted so far.
    pub total: u64,
    /// The state after the last committed step, once the run is paused or over (empty
    /// while it runs).
    pub state: Map<String, Value>,
    /// Whether the run is paused at waits, waiting for an answer (`run.waits`).
    pub paused: bool,
}

/// The `detail` query (`atomic runs show`): the run with its steps and stored events, and
/// its state.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Detail {
    /// The run, its steps and events (`None` before it started).
    pub detail: Option<RunDetail>,
    /// The state after the last committed step.
    pub state: Map<String, Value>,
}

impl Progress {
    /// The events, read back; one that does not read (a newer worker's) is left out.
    #[must_use]
    pub fn run_events(&self) -> Vec<RunEvent> {
        self.events
            .iter()
            .filter_map(|event| RunEvent::deserialize(event.clone()).ok())
            .collect()
    }
}

/// The `agent` activity's input: one agent call.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct AgentCall {
    /// The workflow whose provider declarations the call uses.
    pub workflow: WorkflowRef,
    /// The provider's declaration name.
    pub provider: String,
    /// The request, rendered by the interpreter.
    pub request: AgentRequest,
}

/// The `agent` activity's result: the reply or the failure, and the events the call
/// reported (text pieces folded into their messages).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct AgentDone {
    /// The reply, or why there is none.
    pub result: Result<AgentReply, RemoteFailure>,
    /// The call's events, in order.
    pub events: Vec<AgentEvent>,
}

/// A provider failure as data.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RemoteFailure {
    /// Its `retry-on` class.
    pub class: ErrorClass,
    /// Its text.
    pub message: String,
    /// The wait the backend asked for, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after_ms: Option<u64>,
    /// Whether the adapter retried it already.
    #[serde(default)]
    pub retried: bool,
    /// Set when the call stopped at a permission request for a person
    /// ([`ProviderError::AwaitingPermission`]): what was asked, and the session to continue.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub awaiting: Option<(PermissionAsk, Option<String>)>,
}

impl RemoteFailure {
    /// The failure of `error`.
    #[must_use]
    pub fn of(error: &ProviderError) -> Self {
        Self {
            class: error.class(),
            message: error.to_string(),
            retry_after_ms: error
                .retry_after()
                .map(|after| u64::try_from(after.as_millis()).unwrap_or(u64::MAX)),
            retried: error.was_retried(),
            awaiting: match error {
                ProviderError::AwaitingPermission {
                    ask, session_id, ..
                } => Some(((**ask).clone(), session_id.clone())),
                _ => None,
            },
        }
    }

    /// Back to a provider error.
    #[must_use]
    pub fn error(self) -> ProviderError {
        if let Some((ask, session_id)) = self.awaiting {
            return ProviderError::awaiting_permission("worker", ask, session_id);
        }
        ProviderError::Remote {
            class: self.class,
            message: self.message,
            retry_after: self.retry_after_ms.map(std::time::Duration::from_millis),
            retried: self.retried,
        }
    }
}

/// The `file` activity's input: a file the run keeps its work in (a tasks file), on the
/// workers' shared project files.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "kebab-case")]
pub enum FileCall {
    /// Read it.
    Read {
        /// The file.
        path: String,
    },
    /// Replace it.
    Write {
        /// The file.
        path: String,
        /// Its new text.
        text: String,
    },
}

/// The `file` activity's result: the text read (`None` for a write), or why not.
pub type FileDone = Result<Option<String>, String>;

/// The `command` activity's input: a tool's, a custom tool's or a hook's command. Its
/// environment holds only what the workflow set; the worker adds its own tool environment
/// (atomic's without provider keys) beneath it, so no worker's variables enter the history.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CommandCall {
    /// The workflow (whose redactor and tool environment the worker applies).
    pub workflow: WorkflowRef,
    /// The command.
    pub spec: CommandSpec,
    /// Whether the interpreter wants its output lines (as events).
    pub lines: bool,
}

/// The `command` activity's result.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CommandDone {
    /// What it left, or why it did not finish.
    pub result: Result<CommandOutput, CommandError>,
    /// Its output lines, when asked for.
    pub lines: Vec<(OutputStream, String)>,
}
