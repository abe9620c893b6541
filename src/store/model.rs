//! The records a store keeps: runs, steps, events, pending waits. Payloads the runtime owns
//! (inputs, cursors, events) are plain JSON, so the store knows nothing of runtime internals;
//! a step's cursor and events may arrive as [`Json`] still to be serialised.

use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Json, RunId, State, StateDelta};

/// Milliseconds since the Unix epoch.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Timestamp(pub u64);

impl Timestamp {
    /// The current wall-clock time.
    #[must_use]
    pub fn now() -> Self {
        Self(
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |elapsed| elapsed.as_millis() as u64),
        )
    }

    /// Milliseconds from `earlier` to `self` (0 if `earlier` is later).
    #[must_use]
    pub fn millis_since(self, earlier: Timestamp) -> u64 {
        self.0.saturating_sub(earlier.0)
    }
}

/// Where a run stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RunStatus {
    /// Started and not finished (or crashed: a running run nobody drives can be resumed).
    Running,
    /// Stopped at a `wait`, see [`RunRecord::wait`].
    Paused,
    /// Reached the end.
    Completed,
    /// Stopped by an error, see [`RunRecord::error`].
    Failed,
    /// Stopped by Ctrl-C or a limit.
    Cancelled,
}

impl RunStatus {
    /// The stored spelling.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::Paused => "paused",
            Self::Completed => "completed",
            Self::Failed => "failed",
            Self::Cancelled => "cancelled",
        }
    }

    /// Parses the stored spelling.
    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        [
            Self::Running,
            Self::Paused,
            Self::Completed,
            Self::Failed,
            Self::Cancelled,
        ]
        .into_iter()
        .find(|status| status.as_str() == text)
    }

    /// Whether the run can be continued with `atomic resume`.
    #[must_use]
    pub fn is_resumable(self) -> bool {
        matches!(self, Self::Running | Self::Paused | Self::Cancelled)
    }
}

/// How a step ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StepStatus {
    /// Done; its delta is applied.
    Completed,
    /// Failed after its attempts; its delta (usually empty, or `on-error` fallbacks) applies.
    Failed,
    /// Skipped by `on-error "skip"`; its delta holds the fallback writes.
    Skipped,
    /// A `wait` that paused the run; the answer arrives as a later step.
    Waiting,
}

impl StepStatus {
    /// The stored spelling.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Completed => "completed",
            Self::Failed => "failed",
            Self::Skipped => "skipped",
            Self::Waiting => "waiting",
        }
    }

    /// Parses the stored spelling.
    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        [Self::Completed, Self::Failed, Self::Skipped, Self::Waiting]
            .into_iter()
            .find(|status| status.as_str() == text)
    }
}

/// Changes to a run's record before it goes on: a fork's own inputs, or the edited
/// workflow file it continues with.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunAmend {
    /// The run's inputs from now on (a JSON object); `None`: unchanged.
    pub inputs: Option<Value>,
    /// The workflow file it runs and the file's hash; `None`: unchanged.
    pub workflow: Option<(String, String)>,
}

impl RunAmend {
    /// Applies the changes to a record kept in memory.
    pub fn apply(self, record: &mut RunRecord) {
        if let Some(inputs) = self.inputs {
            record.inputs = inputs;
        }
        if let Some((path, hash)) = self.workflow {
            record.path = path;
            record.hash = hash;
        }
        record.updated_at = Timestamp::now();
    }
}

/// What `atomic run` knows when a run starts.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NewRun {
    /// The id; [`RunId::generate`] unless the caller needs a fixed one.
    pub id: RunId,
    /// `workflow "<name>"`.
    pub workflow: String,
    /// The workflow file as given (or the discovered name's file).
    pub path: String,
    /// A hash of the workflow file's content, to warn when resuming an edited workflow.
    pub hash: String,
    /// The inputs, as a JSON object.
    pub inputs: Value,
    /// The state before the first step (defaults and inputs applied): stored as the
    /// keyframe at sequence 0.
    pub state: State,
}

impl NewRun {
    /// The record of this run as it starts at `now` (running, no step yet), and the state it
    /// starts from: what the in-memory stores keep.
    #[must_use]
    pub fn into_record(self, now: Timestamp) -> (RunRecord, State) {
        let record = RunRecord {
            id: self.id,
            workflow: self.workflow,
            path: self.path,
            hash: self.hash,
            inputs: self.inputs,
            status: RunStatus::Running,
            created_at: now,
            updated_at: now,
            steps: 0,
            error: None,
            waits: Vec::new(),
            origin: None,
        };
        (record, self.state)
    }
}

/// A `wait` the run is paused at: what to ask and what answer is acceptable.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingWait {
    /// The `wait` node's id.
    pub node_id: String,
    /// `header=`: a short title shown above the prompt. Absent in runs stored before
    /// waits had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub header: Option<String>,
    /// The rendered prompt.
    pub prompt: String,
    /// The `answer=` type's KDL spelling (`yes-no`, `string`, `choice`, `json`, …).
    pub answer: String,
    /// The choices, for `choice` answers.
    pub choices: Vec<WaitChoice>,
    /// The JSON Schema file of a `json` answer, resolved to a path.
    pub schema: Option<String>,
    /// `auto-approve`: the answer the wait gives itself if nobody answers first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auto_answer: Option<String>,
    /// When it does (Unix milliseconds); `atomic resume` without an answer waits until then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auto_answer_at: Option<Timestamp>,
    /// The block the wait is in (a parallel branch, a subgraph), as its step's
    /// [`StepCommit::scope`]; `None` at the top level.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    /// Set when this is no `wait` node but an agent (`node_id`) stopped at a permission
    /// request under `permission="ask"`; answered `allow`, `allow-run` or `deny`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permission: Option<Box<PermissionPause>>,
}

/// What an agent paused at a permission request asked, and what its continuation needs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PermissionPause {
    /// The tool it asked to use.
    pub tool: String,
    /// With what.
    pub input: serde_json::Value,
    /// The backend's session, continued once the request is answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// Tools a person had allowed for the run when it paused (kept here, as the step that
    /// would carry them never committed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allowed_tools: Vec<String>,
}

impl PendingWait {
    /// How `atomic resume --wait` names this wait: the node id at the top level, else
    /// `<scope>/<node id>`.
    #[must_use]
    pub fn key(&self) -> String {
        match &self.scope {
            Some(scope) => format!("{scope}/{}", self.node_id),
            None => self.node_id.clone(),
        }
    }

    /// The waits among `waits` that `name` names: the one with that key, else those with
    /// that node id (one is an answer; several mean the name is ambiguous).
    #[must_use]
    pub fn named<'w>(waits: &'w [PendingWait], name: &str) -> Vec<&'w PendingWait> {
        let by_key: Vec<&PendingWait> = waits.iter().filter(|wait| wait.key() == name).collect();
        if by_key.is_empty() {
            waits.iter().filter(|wait| wait.node_id == name).collect()
        } else {
            by_key
        }
    }

    /// `waits` for messages: `` `a`, `fan@3#1/b` ``.
    #[must_use]
    pub fn list(waits: &[PendingWait]) -> String {
        waits
            .iter()
            .map(|wait| format!("`{}`", wait.key()))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// One choice of a [`PendingWait`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WaitChoice {
    /// The answer's value when chosen.
    pub value: String,
    /// What the person sees.
    pub label: Option<String>,
    /// Longer text shown under the label. Absent in runs stored before choices had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// One finished step, committed atomically with its events and the run's new status.
///
/// Steps are numbered from 1, consecutively per run; committing any other number than the
/// next fails with [`StoreError::Conflict`](super::StoreError::Conflict).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepCommit {
    /// The step's sequence number.
    pub seq: u64,
    /// The block the step ran in (a parallel branch, a subgraph: a path the runtime
    /// chooses), `None` for a step of the run itself. A scoped step is kept in the history
    /// but its delta belongs to its block, not to the run's state: the run's state changes
    /// only by unscoped steps, and [`Checkpoint::open`] returns the scoped steps committed
    /// since the last unscoped one, so a resume continues each block where it stopped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    /// The node that ran.
    pub node_id: String,
    /// When it started.
    pub started_at: Timestamp,
    /// When it finished.
    pub finished_at: Timestamp,
    /// How it ended.
    pub status: StepStatus,
    /// Attempts made (1 without retries).
    pub attempts: u32,
    /// The fields it changed.
    pub delta: StateDelta,
    /// The node outputs it recorded (`outputs.<node>` in templates), by node id: each
    /// replaces the node's previous output. Like the delta, a scoped step's are its block's.
    #[serde(default, skip_serializing_if = "State::is_empty")]
    pub outputs: State,
    /// Opaque continuation data: where the runtime goes next, loop counters, route counts.
    pub cursor: Json,
    /// Events to keep in the run's log, in order.
    pub events: Vec<Json>,
    /// The error of a failed step (and of the run, when `run_status` is `Failed`).
    pub error: Option<String>,
    /// The run's status after this step.
    pub run_status: RunStatus,
    /// The wait this step paused at (status `Waiting`). It becomes the run's pending wait
    /// when `run_status` is `Paused`; any commit with another run status clears the run's
    /// pending waits.
    pub wait: Option<PendingWait>,
}

/// A run as stored.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// The id.
    pub id: RunId,
    /// `workflow "<name>"`.
    pub workflow: String,
    /// The workflow file.
    pub path: String,
    /// The workflow file's content hash when the run started.
    pub hash: String,
    /// The inputs.
    pub inputs: Value,
    /// Where it stands.
    pub status: RunStatus,
    /// When it was created.
    pub created_at: Timestamp,
    /// When it last changed.
    pub updated_at: Timestamp,
    /// Steps committed (the last step's sequence number).
    pub steps: u64,
    /// Why it failed.
    pub error: Option<String>,
    /// The waits it is paused at (one at the top level; one per paused branch or subgraph
    /// otherwise).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub waits: Vec<PendingWait>,
    /// The run and step this run was forked from or rewound to a copy of: `RUN@STEP`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
}

impl RunRecord {
    /// Wall-clock time from creation to the last change.
    #[must_use]
    pub fn duration_millis(&self) -> u64 {
        self.updated_at.millis_since(self.created_at)
    }
}

/// Everything `atomic resume` needs: the run, its state after the last committed step, and
/// that step's cursor.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Checkpoint {
    /// The run.
    pub run: RunRecord,
    /// The last committed step's number (0: none yet).
    pub seq: u64,
    /// The run's state after it (scoped steps do not change it).
    pub state: State,
    /// The latest output of each node, as of the same step.
    #[serde(default, skip_serializing_if = "State::is_empty")]
    pub outputs: State,
    /// The cursor of the last unscoped step (`None` when none was committed).
    pub cursor: Option<Value>,
    /// The scoped steps committed after the last unscoped one, in order: the progress of
    /// the blocks the run was inside when it stopped.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub open: Vec<OpenStep>,
}

/// A scoped step committed since the run's last unscoped step (see [`Checkpoint::open`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OpenStep {
    /// Its sequence number.
    pub seq: u64,
    /// Its block.
    pub scope: String,
    /// How it ended.
    pub status: StepStatus,
    /// Its cursor.
    pub cursor: Value,
}

/// One step as stored, for `atomic runs show`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepRecord {
    /// Sequence number.
    pub seq: u64,
    /// The block it ran in (`None`: the run itself).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    /// The node.
    pub node_id: String,
    /// When it started.
    pub started_at: Timestamp,
    /// When it finished.
    pub finished_at: Timestamp,
    /// How it ended.
    pub status: StepStatus,
    /// Attempts made.
    pub attempts: u32,
    /// The fields it changed.
    pub delta: StateDelta,
    /// The node outputs it recorded.
    #[serde(default, skip_serializing_if = "State::is_empty")]
    pub outputs: State,
    /// Its cursor.
    pub cursor: Value,
    /// Its error.
    pub error: Option<String>,
}

/// One logged event.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EventRecord {
    /// Position in the run's log, from 1.
    pub seq: u64,
    /// The step it was committed with (0: logged outside a step).
    pub step: u64,
    /// The event.
    pub event: Value,
}

/// A run with its history, for `atomic runs show`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunDetail {
    /// The run.
    pub run: RunRecord,
    /// Its steps, in order.
    pub steps: Vec<StepRecord>,
    /// Its event log, in order.
    pub events: Vec<EventRecord>,
}

/// How far a reader has read a run's event log: what [`Store::log_after`] goes on from.
/// Start from [`LogPosition::default`] (nothing read).
///
/// [`Store::log_after`]: super::Store::log_after
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LogPosition {
    /// Events read (the last one's [`EventRecord::seq`]).
    pub events: u64,
    /// The last step whose events were read.
    pub(crate) step: u64,
    /// The last event logged outside a step that was read (the store's own id for it).
    pub(crate) loose: u64,
}

/// When one step ran, as its commit recorded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StepTime {
    /// The step.
    pub seq: u64,
    /// The node it ran.
    pub node_id: String,
    /// When its first attempt started.
    pub started_at: Timestamp,
    /// When it finished.
    pub finished_at: Timestamp,
}

/// A run's record and the events logged after a [`LogPosition`].
#[derive(Clone, Debug, PartialEq)]
pub struct LogTail {
    /// The run as it is now.
    pub run: RunRecord,
    /// Events logged since the position, in order.
    pub events: Vec<EventRecord>,
    /// When the steps committed since the position ran (empty where a source does not
    /// know).
    pub steps: Vec<StepTime>,
    /// Where the next read goes on from.
    pub position: LogPosition,
}

/// Which runs `atomic runs` lists: newest first.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunFilter {
    /// Only runs of this workflow name.
    pub workflow: Option<String>,
    /// Only runs with this status.
    pub status: Option<RunStatus>,
    /// At most this many (all when `None`).
    pub limit: Option<usize>,
}

impl RunFilter {
    /// Whether `run` passes the filter (limit aside).
    #[must_use]
    pub fn matches(&self, run: &RunRecord) -> bool {
        self.workflow
            .as_ref()
            .is_none_or(|name| *name == run.workflow)
            && self.status.is_none_or(|status| status == run.status)
    }
}
