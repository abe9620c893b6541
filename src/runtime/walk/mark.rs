//! A step committed by the step that runs a block rather than by a walk: a task-loop's
//! record that one task ended, and with which status, committed under a scope of its own
//! next to the task's block once the status is written back to the tasks file. A resumed
//! task-loop finds these records and neither runs nor marks those tasks again.

use std::sync::Arc;

use super::commit::Record;
use super::{ScopePath, Stop, Walker};
use crate::lower::StepIdx;
use crate::runtime::frame::{Frame, Write};
use crate::runtime::shared::Shared;
use crate::store::{StateDelta, StepStatus};

/// What [`commit_mark`] records.
pub(crate) struct Mark {
    /// The node committing it (the task-loop).
    pub(crate) node: Arc<str>,
    /// What it keeps, read back on resume.
    pub(crate) writes: Vec<Write>,
    /// Why the task failed, when it did.
    pub(crate) error: Option<String>,
    /// Where the block it marks ends (the loop's join).
    pub(crate) next: StepIdx,
}

/// Commits `mark` as one step of the block at `scope`, numbered next in the run.
///
/// # Errors
/// When the store fails.
pub(crate) async fn commit_mark(
    shared: &Arc<Shared>,
    frame: &Frame,
    scope: ScopePath,
    number: u64,
    mark: Mark,
) -> Result<(), Stop> {
    let mut walker = Walker {
        shared,
        frame: frame.clone(),
        scope,
        number: Some(number),
        local: 0,
        durable: true,
        resumed_auto_at: None,
    };
    let started_at = shared.ctx.executor.now();
    walker
        .commit(Record {
            node: mark.node,
            status: if mark.error.is_some() {
                StepStatus::Failed
            } else {
                StepStatus::Completed
            },
            attempts: 1,
            started_at,
            delta: StateDelta::default(),
            outputs: crate::store::State::new(),
            writes: mark.writes,
            next: Some(mark.next),
            waiting: false,
            error: mark.error,
            wait: None,
        })
        .await
}
