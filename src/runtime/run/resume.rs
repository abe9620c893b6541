//! Resuming a run: [`resume`] and [`resume_with`] load its checkpoint, refuse what cannot
//! go on (a finished run, a cursor or state the workflow no longer fits), fit the state
//! (see `migrate`), decide where it starts with the answer it brings (see `answer`), and
//! walk on from there, each block it was inside continuing from its own last committed
//! step.

use std::sync::Arc;

use serde_json::{Map, Value};

use super::drive::drive;
use super::migrate::{commit_fitted, fit_state, split_outputs, workflow_version};
use super::{ResumeError, RunOutcome, answer, edited};
use crate::lower::Plan;
use crate::runtime::cursor::Cursor;
use crate::runtime::frame::Frame;
use crate::runtime::shared::Shared;
use crate::runtime::state::State;
use crate::runtime::walk::{Recovery, ScopePath};
use crate::runtime::{RunContext, RunError};
use crate::store::RunId;

/// Continues run `run_id` of `plan` from its last committed step, and every block (parallel
/// branch, subgraph) it was inside from the block's own last committed step. A run paused
/// at a wait needs `answer`, checked against the wait's type first.
///
/// # Errors
/// [`RunError::BadAnswer`] (the run stays paused), [`RunError::Resume`] when the run has
/// finished, its checkpoint does not fit the workflow, or the answer is for no wait or
/// does not say which of several (see [`ResumeError`]); store errors.
pub async fn resume(
    plan: Arc<Plan>,
    run_id: &RunId,
    answer: Option<&str>,
    ctx: RunContext,
) -> Result<RunOutcome, RunError> {
    let options = ResumeOptions {
        answer: answer.map(str::to_owned),
        ..ResumeOptions::default()
    };
    resume_with(plan, run_id, &options, ctx).await
}

/// What a resume does besides continuing the run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ResumeOptions {
    /// The answer to the wait the run is paused at.
    pub answer: Option<String>,
    /// Which wait `answer` is for when several are pending (in parallel branches or
    /// subgraphs): its [`PendingWait::key`](crate::store::PendingWait::key), or its node
    /// id when that is unique.
    pub wait: Option<String>,
    /// State fields to set back to their declared default (unset without one) before
    /// continuing: for a workflow edited so that what they hold no longer fits.
    pub reset: Vec<String>,
}

/// [`resume`] with [`ResumeOptions`]. A workflow whose `state version` is above the one the
/// run's state was stored at migrates it first (each field's `migrate=`); the migration and
/// any reset are committed as one step (`resume`) before the run goes on.
///
/// # Errors
/// As [`resume`]; also when a field to reset is not declared, a migration fails, or the
/// state must change while the run is inside a parallel or subgraph.
pub async fn resume_with(
    plan: Arc<Plan>,
    run_id: &RunId,
    options: &ResumeOptions,
    ctx: RunContext,
) -> Result<RunOutcome, RunError> {
    let mut checkpoint = ctx.store.checkpoint(run_id).await?;
    let status = checkpoint.run.status;
    if !status.is_resumable() {
        return Err(ResumeError::Finished {
            run: run_id.clone(),
            status,
        }
        .into());
    }
    let inputs = match &checkpoint.run.inputs {
        Value::Object(inputs) => inputs.clone(),
        _ => Map::new(),
    };
    let mut shared = Shared::new(plan, ctx, run_id.clone(), &inputs, None)?;
    let (mut fields, outputs) = split_outputs(
        std::mem::take(&mut checkpoint.state),
        std::mem::take(&mut checkpoint.outputs),
    );
    let mut cursor = read_cursor(&shared, run_id, checkpoint.cursor.take())?;
    check_resume_point(&shared, run_id, &cursor).await?;
    let stored_version = cursor.state_version.unwrap_or(1);
    let version = workflow_version(&shared);
    let changes = fit_state(&shared, run_id, &mut fields, stored_version, &options.reset)?;
    let state = State::from_json(shared.program.schema.clone(), &Value::Object(fields)).map_err(
        |error| ResumeError::StateDoesNotFit {
            run: run_id.clone(),
            error,
        },
    )?;
    let migrates = stored_version != version || !changes.0.is_empty();
    if migrates && !checkpoint.open.is_empty() {
        return Err(ResumeError::MigrationInsideBlock {
            run: run_id.clone(),
        }
        .into());
    }
    let recovery =
        Recovery::new(std::mem::take(&mut checkpoint.open)).map_err(|(seq, error)| {
            ResumeError::UnreadableBlockCursor {
                run: run_id.clone(),
                seq,
                error,
            }
        })?;
    let start = answer::start_of(
        &shared,
        run_id,
        &checkpoint,
        &cursor,
        &recovery,
        options.answer.as_deref(),
        options.wait.as_deref(),
    )?;
    // Only now that the resume will go ahead: the migration or reset, once, as a step.
    if migrates {
        cursor.state_version = (version > 1).then_some(version);
        commit_fitted(&shared, run_id, &checkpoint, &cursor, changes).await?;
        checkpoint.seq += 1;
    }
    shared.restore(&cursor);
    if let Some(latest) = recovery.latest_tally(&ScopePath::top()) {
        shared.restore(latest);
    }
    shared.journal.ledger.start_after(checkpoint.seq);
    shared.journal.recovery = Arc::new(recovery);
    let shared = Arc::new(shared);
    let frame = Frame {
        state: Arc::new(state),
        outputs: Arc::new(outputs),
        counters: cursor.counters.clone(),
        locals: None,
        error: cursor.error.clone(),
        branch: None,
        log: None,
    };
    drive(&shared, frame, start, cursor.local).await
}

/// The run's cursor as committed with its last step; a run that committed none starts at
/// the plan's start.
fn read_cursor(
    shared: &Shared,
    run_id: &RunId,
    stored: Option<Value>,
) -> Result<Cursor, ResumeError> {
    match stored {
        Some(cursor) => {
            serde_json::from_value(cursor).map_err(|error| ResumeError::UnreadableCursor {
                run: run_id.clone(),
                error,
            })
        }
        None => Ok(Cursor {
            next: Some(shared.program.plan.start()),
            counters: shared.program.plan.new_counters(),
            ..Cursor::default()
        }),
    }
}

/// Refuses a cursor whose next step this version of the workflow does not have at that
/// place (the workflow was edited), saying what changed.
async fn check_resume_point(
    shared: &Shared,
    run_id: &RunId,
    cursor: &Cursor,
) -> Result<(), ResumeError> {
    let Some(next) = cursor.next else {
        return Ok(());
    };
    let plan = &shared.program.plan;
    let fits = next.index() < plan.len()
        && cursor
            .next_key
            .as_ref()
            .is_none_or(|key| *key == plan.step(next).key);
    if fits {
        return Ok(());
    }
    let step = cursor.next_key.as_deref().unwrap_or("?");
    Err(ResumeError::ResumePointGone {
        run: run_id.clone(),
        step: step.to_owned(),
        changes: edited::changes(shared, run_id, step).await,
    })
}
