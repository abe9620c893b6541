//! Resuming a run: [`resume`] and [`resume_with`] load its checkpoint, refuse what cannot
//! go on (a finished run, a cursor or state the workflow no longer fits), fit the state
//! (see `migrate`), decide where it starts with the answer it brings (see `answer`), and
//! walk on from there, each block it was inside continuing from its own last committed
//! step.

use std::collections::BTreeSet;
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
    /// Go on with the workspace's files as they are when some changed while the run was
    /// stopped (by a person, by no step of the run); otherwise such a resume is refused.
    pub keep_changes: bool,
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
    if let Some(origin) = &checkpoint.run.origin {
        shared.journal.inherited_sessions =
            Arc::new(inherited_sessions(&shared, run_id, origin).await);
    }
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
    // Only now that the resume will go ahead: the files as the run left them, then the
    // migration or reset, once, as a step.
    let committed = cursor
        .files
        .iter()
        .chain(recovery.files())
        .cloned()
        .collect();
    let files = super::files::settle(&shared, run_id, committed, options.keep_changes).await?;
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
    if let Some(event) = files {
        shared.emit(event);
    }
    let frame = Frame {
        state: Arc::new(state),
        outputs: Arc::new(outputs),
        counters: cursor.counters.clone(),
        locals: None,
        error: cursor.error.clone(),
        branch: None,
        log: None,
        tree: None,
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
/// The sessions a fork's agents inherited: those its cursor named at the fork point (`origin`
/// is `<run>@<step>`; the fork's own copy of that step, or its last before it once rewound
/// further back). Empty when they cannot be read: the fork's agents then go on as any run's.
async fn inherited_sessions(shared: &Shared, run_id: &RunId, origin: &str) -> BTreeSet<String> {
    let Some(at) = origin
        .rsplit_once('@')
        .and_then(|(_, seq)| seq.parse::<u64>().ok())
    else {
        return BTreeSet::new();
    };
    let Ok(detail) = shared.ctx.store.run_detail(run_id).await else {
        return BTreeSet::new();
    };
    detail
        .steps
        .iter()
        .rev()
        .find(|step| step.seq <= at && step.scope.is_none())
        .and_then(|step| serde_json::from_value::<Cursor>(step.cursor.clone()).ok())
        .map(|cursor| cursor.sessions.into_values().collect())
        .unwrap_or_default()
}

/// Whether run `run_id` could go on with `plan` and its recorded inputs — a fork given new
/// inputs or an edited workflow file — as a resume with `--force` would judge it: the
/// inputs fit the workflow, the step it continues at is still there, and its state fits
/// (migrated if the workflow's `state version` is newer). Changes nothing.
///
/// # Errors
/// What such a resume would refuse with.
pub async fn check_fits(plan: Arc<Plan>, run_id: &RunId, ctx: RunContext) -> Result<(), RunError> {
    let mut checkpoint = ctx.store.checkpoint(run_id).await?;
    let inputs = match &checkpoint.run.inputs {
        Value::Object(inputs) => inputs.clone(),
        _ => Map::new(),
    };
    let shared = Shared::new(plan, ctx, run_id.clone(), &inputs, None)?;
    let (mut fields, _) = split_outputs(
        std::mem::take(&mut checkpoint.state),
        std::mem::take(&mut checkpoint.outputs),
    );
    let cursor = read_cursor(&shared, run_id, checkpoint.cursor.take())?;
    check_resume_point(&shared, run_id, &cursor).await?;
    let stored_version = cursor.state_version.unwrap_or(1);
    fit_state(&shared, run_id, &mut fields, stored_version, &[])?;
    State::from_json(shared.program.schema.clone(), &Value::Object(fields)).map_err(|error| {
        ResumeError::StateDoesNotFit {
            run: run_id.clone(),
            error,
        }
    })?;
    Ok(())
}

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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::runtime::executor::Scripted;
    use crate::runtime::testing::{Harness, plan};
    use crate::runtime::{ResumeError, RunEnd, RunError};
    use crate::store::RunStatus;

    /// Three agents in a row, each writing its reply to a field; `second` reads `first`'s.
    const THREE: &str = r#"workflow "w" {
    provider "p" adapter="in-process"
    state {
        field "a" type="string" default=""
        field "b" type="string" default=""
        field "c" type="string" default=""
    }
    agent "first" provider="p" prompt="one" { output "a"; }
    agent "second" provider="p" prompt="two after {{ state.a }}" { output "b"; }
    agent "third" provider="p" prompt="three" { output "c"; }
}"#;

    #[tokio::test]
    async fn a_crash_mid_step_reruns_only_the_step_in_flight() {
        let plan = plan(THREE);
        let h = Harness::new();
        h.executor
            .reply("first", "A")
            .agent("second", Scripted::Hangs);
        h.crash(h.start(&plan)).await;
        assert_eq!(h.executor.trace(), ["first", "second"]);

        h.executor.reply("second", "B").reply("third", "C");
        let outcome = h.resume(&plan, None, None).await.unwrap();
        assert_eq!(outcome.end, RunEnd::Completed);
        assert_eq!(
            h.executor.trace(),
            ["first", "second", "second", "third"],
            "one extra call: the step in flight, and nothing committed before it"
        );
        let second: Vec<_> = h
            .executor
            .agent_calls()
            .into_iter()
            .filter(|request| request.call.node_id == "second")
            .map(|request| (request.call.index, request.prompt.text))
            .collect();
        assert_eq!(
            second,
            [(0, "two after A".to_owned()), (0, "two after A".to_owned())],
            "the re-run is the same call: same state, same call index"
        );
        assert_eq!(outcome.state, json!({"a": "A", "b": "B", "c": "C"}));
        assert_eq!(outcome.steps, 3, "each step committed once");
    }

    #[tokio::test]
    async fn a_finished_run_is_not_resumed_and_nothing_runs() {
        let plan = plan(THREE);
        let h = Harness::new();
        h.executor
            .reply("first", "A")
            .reply("second", "B")
            .reply("third", "C");
        assert_eq!(h.start(&plan).await.unwrap().end, RunEnd::Completed);

        let error = h.resume(&plan, None, None).await.unwrap_err();
        assert!(
            matches!(
                error,
                RunError::Resume(ResumeError::Finished {
                    status: RunStatus::Completed,
                    ..
                })
            ),
            "{error}"
        );
        assert_eq!(
            error.to_string(),
            "run `r1` has completed and cannot be resumed"
        );
        assert_eq!(h.executor.trace(), ["first", "second", "third"]);
    }

    #[tokio::test]
    async fn a_resume_point_the_edited_workflow_moved_is_refused_with_what_changed() {
        let before = plan(THREE);
        let h = Harness::new();
        h.executor
            .reply("first", "A")
            .agent("second", Scripted::Hangs);
        h.crash(h.start(&before)).await;

        // `check` now runs where `second` was.
        let edited = plan(&THREE.replace(
            r#"agent "second""#,
            r#"agent "check" provider="p" prompt="check" { output "c"; }
    agent "second""#,
        ));
        let error = h.resume(&edited, None, None).await.unwrap_err();
        assert_eq!(
            error.to_string(),
            "run `r1` continues at `second`, which this version of the workflow does not have at that place:\n  - `check` is now before `second` and never ran\nundo the edit, or start a new run"
        );
        assert_eq!(h.executor.trace(), ["first", "second"], "nothing ran");
    }
}
