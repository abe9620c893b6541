//! Recording a finished step: its events, then one commit through the store — the step's
//! delta, its cursor (with its writes, in a block), the events logged since the last
//! commit, and the run's status.

use std::sync::Arc;
use std::time::Instant;

use super::{Stop, Walker};
use crate::ir::{NodeIdx, NodeKind};
use crate::lower::StepIdx;
use crate::runtime::cursor::StoredWrite;
use crate::runtime::event::FilesChanged;
use crate::runtime::frame::Write;
use crate::runtime::state::{Change, Delta, State};
use crate::runtime::{RunEvent, StepOutcome};
use crate::store::{self, PendingWait, RunStatus, StepCommit, StepStatus, Timestamp};

/// The store's status of a step that ended so.
fn store_status(outcome: StepOutcome) -> StepStatus {
    match outcome {
        StepOutcome::Completed => StepStatus::Completed,
        StepOutcome::Skipped => StepStatus::Skipped,
        StepOutcome::Recovered => StepStatus::Failed,
    }
}

/// A finished action step, before it is reported and committed.
pub(super) struct Ended {
    pub(super) node: NodeIdx,
    pub(super) outcome: StepOutcome,
    /// What it changed in this walk's state.
    pub(super) delta: Delta,
    /// The files it changed (a step that can change them, in a run keeping snapshots).
    pub(super) files: Option<FilesChanged>,
    /// What it wrote, kept by a block's commit ([`Walker::keeps_writes`]).
    pub(super) writes: Vec<Write>,
    pub(super) attempts: u32,
    pub(super) started: Instant,
    pub(super) started_at: Timestamp,
    /// Where the walk goes next.
    pub(super) next: StepIdx,
    /// The failure a skipped or recovered step had.
    pub(super) error: Option<String>,
}

/// One step as committed: the typed form of a [`StepCommit`] before the walk adds its
/// cursor, number and events.
pub(super) struct Record {
    pub(super) node: Arc<str>,
    pub(super) status: StepStatus,
    pub(super) attempts: u32,
    pub(super) started_at: Timestamp,
    pub(super) delta: store::StateDelta,
    /// The node outputs it recorded.
    pub(super) outputs: store::State,
    pub(super) writes: Vec<Write>,
    pub(super) next: Option<StepIdx>,
    /// Whether the walk is paused at `next` (a wait).
    pub(super) waiting: bool,
    pub(super) error: Option<String>,
    pub(super) wait: Option<PendingWait>,
}

impl Walker<'_> {
    /// Emits `step-finished` (and `values`/`debug`), then commits.
    pub(super) async fn finish(&mut self, ended: Ended) -> Result<(), Stop> {
        let shared = self.shared;
        let id = shared.id(ended.node).clone();
        let step = self.step_no();
        let delta = self.durable.then(|| {
            (
                store_delta(&ended.delta, &self.frame.state),
                store_outputs(&ended.delta),
            )
        });
        let debug = shared.ctx.sink.is_some() && shared.ctx.stream.debug;
        let (model, usage) = if debug {
            agent_figures(shared, &ended)
        } else {
            (None, None)
        };
        if shared.wants_events() || (shared.ctx.sink.is_some() && shared.ctx.stream.updates) {
            shared.emit(RunEvent::StepFinished {
                step,
                node: id.clone(),
                status: ended.outcome,
                delta: ended.delta,
                files: ended.files,
                branch: self.frame.branch,
            });
        }
        if debug {
            shared.emit(RunEvent::Debug {
                step,
                node: id.clone(),
                attempts: ended.attempts,
                elapsed_us: u64::try_from(ended.started.elapsed().as_micros()).unwrap_or(u64::MAX),
                model,
                usage,
            });
        }
        let Some((delta, outputs)) = delta else {
            return Ok(());
        };
        self.commit(Record {
            node: id,
            status: store_status(ended.outcome),
            attempts: ended.attempts,
            started_at: ended.started_at,
            delta,
            outputs,
            writes: ended.writes,
            next: Some(ended.next),
            waiting: false,
            error: ended.error,
            wait: None,
        })
        .await?;
        if shared.ctx.sink.is_some() && shared.ctx.stream.values && self.scope.is_top() {
            shared.emit(RunEvent::Values {
                step: shared.journal.ledger.last(),
                state: self.frame.state.to_json(),
            });
        }
        Ok(())
    }

    /// Commits one step of a durable walk, numbered next in the run. A wait of the run
    /// itself pauses the run in the same commit; a wait in a block leaves the run running
    /// while its siblings go on.
    pub(super) async fn commit(&mut self, record: Record) -> Result<(), Stop> {
        if !self.durable {
            return Ok(());
        }
        let shared = self.shared;
        let mut cursor = shared.cursor(&self.frame, record.next, record.waiting);
        cursor.local = self.local + 1;
        cursor.auto_answer_at = record
            .wait
            .as_ref()
            .and_then(|wait| wait.auto_answer_at)
            .map(|at| at.0);
        if self.keeps_writes() {
            let schema = self.frame.state.schema();
            cursor.writes = record
                .writes
                .iter()
                .map(|write| StoredWrite::encode(schema, write))
                .collect();
        }
        let pauses_run = record.wait.is_some() && self.scope.is_top();
        let turn = shared.journal.ledger.turn().await;
        let seq = shared.journal.ledger.last() + 1;
        let commit = StepCommit {
            seq,
            scope: self.scope.as_str().map(str::to_owned),
            node_id: String::from(&*record.node),
            started_at: record.started_at,
            finished_at: self.shared.ctx.executor.now(),
            status: record.status,
            attempts: record.attempts,
            delta: record.delta,
            outputs: record.outputs,
            cursor: store::Json::lazy(Arc::new(cursor)),
            events: shared.take_log(),
            error: record.error,
            run_status: if pauses_run {
                RunStatus::Paused
            } else {
                RunStatus::Running
            },
            wait: record.wait,
        };
        shared
            .ctx
            .store
            .commit_step(&shared.program.run_id, commit)
            .await
            .map_err(Stop::Store)?;
        shared.journal.ledger.committed(seq);
        drop(turn);
        self.local += 1;
        Ok(())
    }
}

/// The model an agent step's reply came from and the tokens it used, from its output.
fn agent_figures(
    shared: &crate::runtime::shared::Shared,
    ended: &Ended,
) -> (Option<String>, Option<crate::providers::Usage>) {
    if !matches!(shared.workflow().node(ended.node).kind, NodeKind::Agent(_)) {
        return (None, None);
    }
    let id = shared.id(ended.node);
    let Some((_, output)) = ended
        .delta
        .outputs
        .iter()
        .rev()
        .find(|(node, _)| node == id)
    else {
        return (None, None);
    };
    let model = output
        .get("model")
        .and_then(|model| model.as_str())
        .map(str::to_owned);
    let usage = output
        .get("usage")
        .and_then(|usage| serde_json::from_value(usage.clone()).ok());
    (model, usage)
}

/// The store's form of a delta's field changes: `merge-by` becomes a `set` of the merged
/// list (the store has no merge-by change).
pub(crate) fn store_delta(delta: &Delta, state: &State) -> store::StateDelta {
    let mut out = store::StateDelta::new();
    for entry in &delta.fields {
        let spec = state
            .schema()
            .find(&entry.field)
            .map(|idx| state.schema().spec(idx));
        let change = match &entry.change {
            Change::Set(value) => store::Change::Set(value.clone()),
            Change::Append(items) => store::Change::Append {
                items: items.clone(),
                keep_last: spec.and_then(|spec| spec.max_items),
            },
            Change::Merge(entries) => store::Change::Merge(entries.clone()),
            Change::MergeBy(_) => {
                store::Change::Set(state.get_by_name(&entry.field).cloned().unwrap_or_default())
            }
        };
        out.0.insert(String::from(&*entry.field), change);
    }
    out
}

/// The node outputs a delta recorded, the last of each node's.
pub(crate) fn store_outputs(delta: &Delta) -> store::State {
    delta
        .outputs
        .iter()
        .map(|(node, value)| (String::from(&**node), value.clone()))
        .collect()
}
