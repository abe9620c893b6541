//! The entry points: [`run`] starts a run, [`resume`] continues one from its last
//! committed step (answering the wait it is paused at, if any).

use std::sync::Arc;

use serde_json::{Map, Value};
use tracing::Instrument;

use super::cursor::Cursor;
use super::frame::Frame;
use super::hooks::{self, HookEvent};
use super::shared::Shared;
use super::state::State;
use super::template::Outputs;
use super::walk::{Recovery, ScopePath, Start, Stop, WalkEnd, Walker};
use super::{FailureClass, RunContext, RunError, RunEvent};
use crate::ir::ErrorClass;
use crate::lower::{Plan, StepKind};
use crate::providers::{PermissionAnswer, Usage};
use crate::store::{NewRun, PendingWait, RunId, RunStatus};

/// The state fields in which runs stored before store schema 5 kept node outputs.
const LEGACY_OUTPUT_PREFIX: &str = "#output:";

/// How a run (or a resumed stretch of it) ended.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "end", rename_all = "kebab-case")]
pub enum RunEnd {
    /// It reached its end (exit code 0).
    Completed,
    /// It is paused at waits (exit code 4): one of the run itself, or one per paused
    /// block (parallel branch, subgraph); resume it with an answer (naming the wait when
    /// several are pending). An `auto-approve` wait says the answer it gives itself, and
    /// when (`atomic resume RUN` waits out the rest).
    Paused {
        /// The pending waits, in branch order.
        waits: Vec<PendingWait>,
    },
    /// A node failed with no `on-error` route (exit code 1).
    Failed {
        /// The node.
        node: String,
        /// The failure's class (`None`: not retryable, like a template error).
        class: Option<ErrorClass>,
        /// What happened.
        message: String,
    },
    /// A run limit (`max-steps`, `timeout`, `max-budget-usd`) stopped it; it can be resumed
    /// (for example after raising the limit).
    LimitReached {
        /// Which limit, and its value.
        message: String,
    },
    /// It was cancelled (exit code 130); committed steps are kept.
    Cancelled,
}

/// The result of [`run`] or [`resume`] (also the result of a run's Temporal workflow).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RunOutcome {
    /// The run.
    pub run_id: RunId,
    /// How it ended.
    pub end: RunEnd,
    /// The state when it ended.
    pub state: Value,
    /// Steps committed so far.
    pub steps: u64,
    /// Tokens used by agent calls.
    pub usage: Usage,
    /// Cost in USD, where known.
    pub cost_usd: f64,
}

/// Starts a new run of `plan` with `inputs` (checked against the declared inputs,
/// defaults applied).
///
/// # Errors
/// When the run cannot be set up (bad inputs, a missing schema file, a template that does
/// not compile) or the store fails. A failing node is not an error: see [`RunEnd::Failed`].
pub async fn run(
    plan: Arc<Plan>,
    inputs: Map<String, Value>,
    ctx: RunContext,
) -> Result<RunOutcome, RunError> {
    run_with_id(plan, RunId::generate(), inputs, ctx).await
}

/// [`run`] with a chosen run id.
///
/// # Errors
/// As [`run`].
pub async fn run_with_id(
    plan: Arc<Plan>,
    run_id: RunId,
    inputs: Map<String, Value>,
    ctx: RunContext,
) -> Result<RunOutcome, RunError> {
    let shared = Arc::new(Shared::new(plan, ctx, run_id.clone(), &inputs, None)?);
    let state = shared.initial_state();
    let initial = match state.to_json() {
        Value::Object(object) => object,
        _ => Map::new(),
    };
    shared
        .ctx
        .store
        .create_run(NewRun {
            id: run_id.clone(),
            workflow: shared.workflow().name.value.clone(),
            path: shared.ctx.workflow_path.clone(),
            hash: shared.ctx.workflow_hash.clone(),
            inputs: shared.program.input_json.clone(),
            state: initial,
        })
        .await?;
    let frame = Frame {
        state: Arc::new(state),
        outputs: Arc::default(),
        counters: shared.program.plan.new_counters(),
        locals: None,
        error: None,
        branch: None,
        log: None,
    };
    let start = shared.program.plan.start();
    drive(&shared, frame, Start::At(start), 0).await
}

/// Continues run `run_id` of `plan` from its last committed step, and every block (parallel
/// branch, subgraph) it was inside from the block's own last committed step. A run paused
/// at a wait needs `answer`, checked against the wait's type first.
///
/// # Errors
/// [`RunError::BadAnswer`] (the run stays paused), [`RunError::Resume`] when the run has
/// finished, its checkpoint does not fit the workflow, or several waits are pending (see
/// [`resume_wait`]); store errors.
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
    /// subgraphs): its [`PendingWait::key`], or its node id when that is unique.
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
    let answer = options.answer.as_deref();
    let wait = options.wait.as_deref();
    let mut checkpoint = ctx.store.checkpoint(run_id).await?;
    let status = checkpoint.run.status;
    if !status.is_resumable() {
        return Err(RunError::Resume(format!(
            "run `{run_id}` has {} and cannot be resumed",
            status.as_str()
        )));
    }
    let inputs = match &checkpoint.run.inputs {
        Value::Object(inputs) => inputs.clone(),
        _ => Map::new(),
    };
    let mut shared = Shared::new(plan, ctx, run_id.clone(), &inputs, None)?;
    let mut fields = Map::new();
    let mut outputs = Outputs::default();
    for (name, value) in std::mem::take(&mut checkpoint.state) {
        // Runs stored before outputs were kept as outputs have them as state fields.
        match name.strip_prefix(LEGACY_OUTPUT_PREFIX) {
            Some(node) => outputs.insert(Arc::from(node), value),
            None => {
                fields.insert(name, value);
            }
        }
    }
    for (node, value) in std::mem::take(&mut checkpoint.outputs) {
        outputs.insert(Arc::from(node.as_str()), value);
    }
    let mut cursor: Cursor = match checkpoint.cursor.take() {
        Some(cursor) => serde_json::from_value(cursor).map_err(|error| {
            RunError::Resume(format!("run `{run_id}` has an unreadable cursor: {error}"))
        })?,
        None => Cursor {
            next: Some(shared.program.plan.start()),
            counters: shared.program.plan.new_counters(),
            ..Cursor::default()
        },
    };
    if let Some(next) = cursor.next {
        let fits = next.index() < shared.program.plan.len()
            && cursor
                .next_key
                .as_ref()
                .is_none_or(|key| *key == shared.program.plan.step(next).key);
        if !fits {
            let key = cursor.next_key.as_deref().unwrap_or("?");
            return Err(RunError::Resume(format!(
                "run `{run_id}` continues at `{key}`, which this version of the workflow does not have at that place{}\nundo the edit, or start a new run",
                edited_steps(&shared, run_id, key).await
            )));
        }
    }
    let stored_version = cursor.state_version.unwrap_or(1);
    let version = shared
        .workflow()
        .state_version
        .as_ref()
        .map_or(1, |v| v.value);
    let changes = fit_state(&shared, run_id, &mut fields, stored_version, &options.reset)?;
    let state = State::from_json(shared.program.schema.clone(), &Value::Object(fields)).map_err(
        |error| {
            RunError::Resume(format!(
                "run `{run_id}` does not fit this workflow: {error}"
            ))
        },
    )?;
    let migrates = stored_version != version || !changes.0.is_empty();
    if migrates && !checkpoint.open.is_empty() {
        return Err(RunError::Resume(format!(
            "run `{run_id}` is inside a parallel or subgraph, whose steps hold state of the old version: resume it with the workflow it ran with until that block ends, then migrate or reset"
        )));
    }
    let recovery = Recovery::new(std::mem::take(&mut checkpoint.open))
        .map_err(|message| RunError::Resume(format!("run `{run_id}`: {message}")))?;
    let start = start_of(
        &shared,
        run_id,
        &checkpoint,
        &cursor,
        &recovery,
        answer,
        wait,
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

/// Fits stored `fields` to this version of the workflow: migrates them when the workflow's
/// `state version` is above the stored one, resets the fields named in `reset`, and refuses
/// with every field that still does not fit, before any step runs (rather than failing at
/// the first write). Returns the changes made.
fn fit_state(
    shared: &Shared,
    run_id: &RunId,
    fields: &mut Map<String, Value>,
    stored_version: u32,
    reset: &[String],
) -> Result<crate::store::StateDelta, RunError> {
    let mut changes = crate::store::StateDelta::new();
    let version = shared
        .workflow()
        .state_version
        .as_ref()
        .map_or(1, |v| v.value);
    if stored_version > version {
        return Err(RunError::Resume(format!(
            "run `{run_id}` stored its state at `state version={stored_version}`, newer than this workflow's {version}: resume it with the workflow it ran with"
        )));
    }
    if stored_version < version {
        migrate(shared, run_id, fields, stored_version, &mut changes)?;
    }
    for name in reset {
        let Some(idx) = shared.program.schema.find(name) else {
            // A field the workflow no longer declares is dropped.
            if fields.remove(name).is_some() {
                changes.0.insert(name.clone(), crate::store::Change::Unset);
                continue;
            }
            return Err(RunError::Resume(format!(
                "the workflow has no state field `{name}` to reset"
            )));
        };
        match &shared.program.schema.spec(idx).default {
            Some(default) => {
                fields.insert(name.clone(), default.clone());
                changes
                    .0
                    .insert(name.clone(), crate::store::Change::Set(default.clone()));
            }
            None => {
                fields.remove(name);
                changes.0.insert(name.clone(), crate::store::Change::Unset);
            }
        }
    }
    let misfits = shared.program.schema.misfits(fields);
    if !misfits.is_empty() {
        return Err(RunError::Resume(format!(
            "run `{run_id}` cannot continue with this version of the workflow; its saved state no longer fits:\n  - {}\nundo the edit to those fields, reset them (`atomic resume {run_id} --force --reset FIELD`, losing what they hold), migrate them (`state version=N` and `migrate=` on each field), or start a new run",
            misfits.join("\n  - ")
        )));
    }
    Ok(changes)
}

/// Commits a migration or reset as a step of its own (`resume`), with the new version in
/// its cursor; a paused run stays paused.
async fn commit_fitted(
    shared: &Shared,
    run_id: &RunId,
    checkpoint: &crate::store::Checkpoint,
    cursor: &Cursor,
    changes: crate::store::StateDelta,
) -> Result<(), RunError> {
    let paused = checkpoint.run.status == RunStatus::Paused;
    let now = shared.ctx.executor.now();
    let commit = crate::store::StepCommit {
        seq: checkpoint.seq + 1,
        scope: None,
        node_id: "resume".to_owned(),
        started_at: now,
        finished_at: now,
        status: crate::store::StepStatus::Completed,
        attempts: 1,
        delta: changes,
        outputs: crate::store::State::new(),
        cursor: crate::store::Json::lazy(Arc::new(cursor.clone())),
        events: Vec::new(),
        error: None,
        run_status: if paused {
            RunStatus::Paused
        } else {
            RunStatus::Running
        },
        wait: checkpoint.run.waits.first().cloned().filter(|_| paused),
    };
    shared.ctx.store.commit_step(run_id, commit).await?;
    Ok(())
}

/// Where a resumed run starts: at its own wait with the answer, at an `auto-approve` wait
/// that answers itself, or at its next step (the answer, if any, handed to the paused block
/// it is for, checked first). Refuses an answer nothing waits for, and a run paused at
/// waits that gets none.
fn start_of(
    shared: &Shared,
    run_id: &RunId,
    checkpoint: &crate::store::Checkpoint,
    cursor: &Cursor,
    recovery: &Recovery,
    answer: Option<&str>,
    wait: Option<&str>,
) -> Result<Start, RunError> {
    let plan = &shared.program.plan;
    let node_at = |at| plan.node(at).map_or("?", |node| node.id.value.as_str());
    let block_waits = recovery.waiting();
    Ok(match (cursor.next, cursor.waiting, answer) {
        (Some(at), true, Some(answer)) => {
            if let Some(wait) = wait
                && node_at(at) != wait
            {
                return Err(RunError::Resume(format!(
                    "run `{run_id}` is paused at `{}`, not at `{wait}`",
                    node_at(at)
                )));
            }
            Start::Answer(at, answer.to_owned())
        }
        // An `auto-approve` wait answers itself at the deadline it was first given.
        (Some(at), true, None) if let Some(answer_at) = cursor.auto_answer_at => {
            Start::AutoWait(at, answer_at)
        }
        (Some(at), true, None) => {
            return Err(RunError::Resume(format!(
                "run `{run_id}` is paused at `{}`: pass an answer (`atomic resume {run_id} --answer …`)",
                node_at(at)
            )));
        }
        // An agent paused at a permission request: its next call gets the answer.
        (Some(at), false, Some(answer))
            if let Some(pending) = permission_wait(run_id, &checkpoint.run.waits, wait)? =>
        {
            let pause = pending.permission.clone().expect("a permission wait");
            let answer =
                PermissionAnswer::parse(answer).map_err(|message| RunError::BadAnswer {
                    node: pending.node_id.clone(),
                    message,
                })?;
            recovery.set_permission(pending.key(), *pause, answer);
            Start::At(at)
        }
        (Some(at), false, Some(answer)) if !block_waits.is_empty() => {
            let (scope, node) =
                pick_wait(recovery, run_id, &checkpoint.run.waits, &block_waits, wait)?;
            check_block_answer(&shared.program.plan, &shared.ctx, &scope, &node, answer)?;
            recovery.set_answer(scope, answer.to_owned());
            Start::At(at)
        }
        (_, false, Some(_)) => {
            return Err(RunError::Resume(format!(
                "run `{run_id}` is not paused at a wait; it takes no answer"
            )));
        }
        (Some(at), false, None) => {
            let stuck = checkpoint.run.status == RunStatus::Paused
                && checkpoint
                    .run
                    .waits
                    .iter()
                    .all(|wait| wait.auto_answer_at.is_none());
            let asking = checkpoint.run.waits.iter().any(|w| w.permission.is_some());
            if stuck && (!block_waits.is_empty() || asking) {
                return Err(RunError::Resume(format!(
                    "run `{run_id}` is paused at {}: pass an answer (`atomic resume {run_id} --answer …`)",
                    PendingWait::list(&checkpoint.run.waits)
                )));
            }
            Start::At(at)
        }
        (None, _, _) => Start::At(plan.end()),
    })
}

/// The permission request (an agent's pause, see `exec::permission`) an answer is for: the
/// one `wait` names, or the only pending wait when it is one. `None` when the answer is for
/// a `wait`; an error when `wait` is needed and missing, or names nothing.
fn permission_wait<'w>(
    run_id: &RunId,
    recorded: &'w [PendingWait],
    wait: Option<&str>,
) -> Result<Option<&'w PendingWait>, RunError> {
    if recorded.iter().all(|pending| pending.permission.is_none()) {
        return Ok(None);
    }
    let chosen: Vec<&PendingWait> = match wait {
        Some(wait) => PendingWait::named(recorded, wait),
        None => recorded.iter().collect(),
    };
    match chosen.as_slice() {
        [one] => Ok(Some(*one).filter(|one| one.permission.is_some())),
        [] => Err(RunError::Resume(format!(
            "run `{run_id}` has no pending wait `{}`; it is paused at {}",
            wait.unwrap_or_default(),
            PendingWait::list(recorded)
        ))),
        _ => Err(RunError::Resume(format!(
            "run `{run_id}` is paused at {}: name the one to answer with `--wait`",
            PendingWait::list(recorded)
        ))),
    }
}

/// Migrates stored `fields` from `from` to the workflow's state version: each field with
/// `migrate=` gets the value of its expression (reading `old`, `state`, `version`, `input`).
fn migrate(
    shared: &Shared,
    run_id: &RunId,
    fields: &mut Map<String, Value>,
    from: u32,
    changes: &mut crate::store::StateDelta,
) -> Result<(), RunError> {
    let stored = minijinja::Value::from(minijinja::value::Serde(Value::Object(fields.clone())));
    for field in &shared.workflow().state {
        let Some(expr) = &field.migrate else {
            continue;
        };
        let name = &field.name.value;
        let old = fields.get(name).cloned().unwrap_or(Value::Null);
        let scope = minijinja::context! {
            old => minijinja::Value::from(minijinja::value::Serde(&old)),
            state => stored.clone(),
            version => from,
            input => shared.program.input.clone(),
        };
        let failed = |message: String| {
            RunError::Resume(format!(
                "run `{run_id}`: migrating `{name}` from state version {from} failed: {message}"
            ))
        };
        let value = shared
            .program
            .templates
            .eval_json(expr, &scope)
            .map_err(|error| failed(error.to_string()))?;
        let value = crate::ir::value::coerce(&field.ty, value).map_err(failed)?;
        fields.insert(name.clone(), value.clone());
        changes
            .0
            .insert(name.clone(), crate::store::Change::Set(value));
    }
    Ok(())
}

/// What changed in the steps of an edited workflow, for a refused resume: steps the run
/// completed that it no longer has, and steps now before the resume point that never ran.
async fn edited_steps(shared: &Shared, run_id: &RunId, resume_at: &str) -> String {
    let Ok(detail) = shared.ctx.store.run_detail(run_id).await else {
        return String::new();
    };
    let ran: std::collections::BTreeSet<&str> = detail
        .steps
        .iter()
        .map(|step| step.node_id.as_str())
        .collect();
    let workflow = shared.workflow();
    let mut lines = Vec::new();
    for id in &ran {
        if *id != "resume" && !workflow.nodes.iter().any(|node| node.id.value == *id) {
            lines.push(format!("`{id}` ran and is no longer in the workflow"));
        }
    }
    let plan = &shared.program.plan;
    let steps: Vec<_> = plan.steps().map(|idx| plan.step(idx)).collect();
    if let Some(at) = steps.iter().position(|step| step.key == resume_at) {
        for step in &steps[..at] {
            if let Some(node) = step.node
                && step.kind.is_action()
                && !ran.contains(workflow.node(node).id.value.as_str())
            {
                lines.push(format!(
                    "`{}` is now before `{resume_at}` and never ran",
                    workflow.node(node).id.value
                ));
            }
        }
    } else {
        lines.push(format!("`{resume_at}` is no longer in the workflow"));
    }
    if lines.is_empty() {
        String::new()
    } else {
        format!(":\n  - {}", lines.join("\n  - "))
    }
}

/// The block wait an answer is for: the one `wait` names (its key, or its node id when that
/// is unique), or the only one pending. Returns its scope and node id.
fn pick_wait(
    recovery: &Recovery,
    run_id: &RunId,
    recorded: &[PendingWait],
    scopes: &[&str],
    wait: Option<&str>,
) -> Result<(String, String), RunError> {
    // The run's record names each wait's node; a run stopped before it paused (a crash)
    // has no record yet, so the node is read from the plan at the block's cursor.
    let pending: Vec<PendingWait> = if recorded.is_empty() {
        scopes
            .iter()
            .filter_map(|scope| {
                let node = recovery
                    .steps_of(&ScopePath::parse(scope))
                    .last()
                    .and_then(|c| c.next_key.clone())?;
                Some(PendingWait {
                    node_id: node,
                    prompt: String::new(),
                    answer: String::new(),
                    choices: Vec::new(),
                    schema: None,
                    auto_answer: None,
                    auto_answer_at: None,
                    scope: Some((*scope).to_owned()),
                    permission: None,
                })
            })
            .collect()
    } else {
        recorded.to_vec()
    };
    let chosen: Vec<&PendingWait> = match wait {
        Some(wait) => PendingWait::named(&pending, wait),
        None => pending.iter().collect(),
    };
    match chosen.as_slice() {
        [one] => Ok((one.scope.clone().unwrap_or_default(), one.node_id.clone())),
        [] => Err(RunError::Resume(format!(
            "run `{run_id}` has no pending wait `{}`; it is paused at {}",
            wait.unwrap_or_default(),
            PendingWait::list(&pending)
        ))),
        _ => Err(RunError::Resume(format!(
            "run `{run_id}` is paused at {}: name the one to answer with `--wait`",
            PendingWait::list(&pending)
        ))),
    }
}

/// Checks `answer` for one of a paused run's `waits` (the one `wait` names, or the only
/// one) against its type, running nothing: for an engine that must refuse an answer before
/// it records it (Temporal's update validator), with the error `resume` would give.
///
/// # Errors
/// [`RunError::BadAnswer`] for an answer that does not fit; [`RunError::Resume`] when no
/// wait, or several, fit `wait`.
pub fn check_pending_answer(
    plan: &Arc<Plan>,
    ctx: &RunContext,
    waits: &[PendingWait],
    answer: &str,
    wait: Option<&str>,
) -> Result<(), RunError> {
    let chosen: Vec<&PendingWait> = match wait {
        Some(wait) => PendingWait::named(waits, wait),
        None => waits.iter().collect(),
    };
    match chosen.as_slice() {
        [one] if one.permission.is_some() => {
            PermissionAnswer::parse(answer)
                .map(drop)
                .map_err(|message| RunError::BadAnswer {
                    node: one.node_id.clone(),
                    message,
                })
        }
        [one] => check_block_answer(
            plan,
            ctx,
            one.scope.as_deref().unwrap_or_default(),
            &one.node_id,
            answer,
        ),
        [] if waits.is_empty() => Err(RunError::Resume(
            "the run is not paused at a wait".to_owned(),
        )),
        [] => Err(RunError::Resume(format!(
            "the run has no pending wait `{}`; it is paused at {}",
            wait.unwrap_or_default(),
            PendingWait::list(waits)
        ))),
        _ => Err(RunError::Resume(format!(
            "the run is paused at {}: name the one to answer with `--wait`",
            PendingWait::list(waits)
        ))),
    }
}

/// Checks an answer for the wait `node` in the block at `scope` (empty: the run's own)
/// before anything runs, so a refused answer leaves the run paused as it was.
fn check_block_answer(
    plan: &Arc<Plan>,
    ctx: &RunContext,
    scope: &str,
    node: &str,
    answer: &str,
) -> Result<(), RunError> {
    let bad = |message: String| RunError::BadAnswer {
        node: node.to_owned(),
        message,
    };
    // Follow the path through the subgraphs it enters to the workflow the wait is in.
    let mut plan = plan.clone();
    let mut base = ctx.base_dir.clone();
    for level in scope.split('/').filter(|level| !level.is_empty()) {
        if level.contains('#') {
            continue;
        }
        let name = level.split('@').next().unwrap_or_default();
        let Some(crate::ir::NodeKind::Subgraph(subgraph)) = kind_of(&plan, name) else {
            return Err(RunError::Resume(format!(
                "the wait's block `{scope}` names `{name}`, which is not a subgraph of this workflow"
            )));
        };
        let loader = ctx.subgraphs.as_ref().ok_or_else(|| {
            RunError::Resume("this run cannot load the workflows its subgraphs run".to_owned())
        })?;
        let path = base.join(subgraph.file());
        plan = loader.load(&path).map_err(RunError::Resume)?;
        if let Some(dir) = path.parent() {
            base = dir.to_path_buf();
        }
    }
    let Some(crate::ir::NodeKind::Wait(wait)) = kind_of(&plan, node) else {
        return Err(RunError::Resume(format!(
            "the workflow has no wait `{node}` in `{scope}`"
        )));
    };
    super::exec::check_answer(wait, &base, ctx.files.as_ref(), answer).map_err(bad)
}

/// The kind of the node `id` of `plan`'s workflow.
fn kind_of<'p>(plan: &'p Plan, id: &str) -> Option<&'p crate::ir::NodeKind> {
    plan.workflow()
        .nodes
        .iter()
        .find(|node| node.id.value == id)
        .map(|node| &node.kind)
}

/// Walks from `start` and turns how the walk ended into the run's final status and event.
async fn drive(
    shared: &Arc<Shared>,
    frame: Frame,
    start: Start,
    local: u64,
) -> Result<RunOutcome, RunError> {
    let seq = shared.journal.ledger.last();
    let resumed = seq > 0 || !matches!(start, Start::At(_));
    shared.emit(RunEvent::RunStarted {
        run_id: shared.program.run_id.to_string(),
        workflow: shared.workflow().name.value.clone(),
        resumed,
        from_step: seq,
    });
    let mut fields = Map::new();
    fields.insert("resumed".into(), resumed.into());
    fields.insert("from_step".into(), seq.into());
    // Not a blocking event: a failure is reported and the run goes on.
    let _ = hooks::fire(shared, HookEvent::RunStart, None, fields).await;
    let span = tracing::info_span!(
        "run",
        id = shared.program.run_id.as_str(),
        workflow = shared.workflow().name.value.as_str()
    );
    let mut walker = Walker {
        shared,
        frame,
        scope: ScopePath::top(),
        number: None,
        local,
        durable: true,
        resumed_auto_at: None,
    };
    let result = async {
        let start = match start {
            // The run's own wait: a refused answer leaves it paused (not a failed node).
            Start::Answer(at, answer) => {
                let node = shared
                    .program
                    .plan
                    .step(at)
                    .node
                    .filter(|_| shared.program.plan.step(at).kind == StepKind::Wait);
                let Some(node) = node else {
                    return Ok(Err(RunError::Resume(
                        "the run is not paused at a wait".to_owned(),
                    )));
                };
                match walker.answer(at, node, &answer).await? {
                    Ok(next) => Start::At(next),
                    Err(message) => {
                        return Ok(Err(RunError::BadAnswer {
                            node: shared.id(node).to_string(),
                            message,
                        }));
                    }
                }
            }
            start => start,
        };
        walker.run(start, None).await.map(Ok)
    }
    .instrument(span)
    .await;
    let seq = shared.journal.ledger.last();
    let state = walker.frame.state.to_json();
    let store = &shared.ctx.store;
    let run_id = shared.program.run_id.to_string();
    let status = match &result {
        Ok(Ok(WalkEnd::Done)) => Some("completed"),
        Err(Stop::Failed { .. }) => Some("failed"),
        Err(Stop::Limit(_) | Stop::Cancelled) => Some("cancelled"),
        // A pause is not an end; a store failure ends the process, not the run.
        _ => None,
    };
    if let Some(status) = status {
        let mut fields = Map::new();
        fields.insert("status".into(), status.into());
        fields.insert("steps".into(), seq.into());
        let _ = hooks::fire(shared, HookEvent::RunEnd, None, fields).await;
    }
    let end = match result {
        Ok(Err(error)) => return Err(error),
        Ok(Ok(WalkEnd::Done)) => {
            let (usage, cost_usd) = totals(shared);
            shared.emit(RunEvent::RunFinished {
                run_id,
                steps: seq,
                usage,
                cost_usd,
                state: state.clone(),
            });
            flush(shared).await?;
            store
                .set_status(&shared.program.run_id, RunStatus::Completed, None)
                .await?;
            RunEnd::Completed
        }
        Ok(Ok(WalkEnd::Paused(wait))) => RunEnd::Paused { waits: vec![wait] },
        Err(Stop::Paused(waits)) => {
            for wait in &waits {
                shared.emit(RunEvent::RunPaused {
                    run_id: run_id.clone(),
                    step: seq,
                    node: Arc::from(wait.node_id.as_str()),
                    wait: Some(wait.key()),
                    prompt: wait.prompt.clone(),
                    answer: wait.answer.clone(),
                    choices: wait
                        .choices
                        .iter()
                        .map(|choice| super::Choice {
                            value: choice.value.clone(),
                            label: choice.label.clone(),
                        })
                        .collect(),
                });
            }
            flush(shared).await?;
            store.pause(&shared.program.run_id, waits.clone()).await?;
            RunEnd::Paused { waits }
        }
        Err(Stop::Failed { node, error }) => {
            shared.emit(RunEvent::RunFailed {
                run_id,
                step: seq,
                node: Some(node.clone()),
                class: error.failure_class(),
                message: error.message.clone(),
            });
            flush(shared).await?;
            let message = format!("`{node}` failed: {}", error.message);
            store
                .set_status(&shared.program.run_id, RunStatus::Failed, Some(message))
                .await?;
            RunEnd::Failed {
                node: node.to_string(),
                class: error.class,
                message: error.message,
            }
        }
        Err(Stop::Limit(message)) => {
            shared.emit(RunEvent::RunFailed {
                run_id,
                step: seq,
                node: None,
                class: FailureClass::Limit,
                message: message.clone(),
            });
            flush(shared).await?;
            store
                .set_status(
                    &shared.program.run_id,
                    RunStatus::Cancelled,
                    Some(message.clone()),
                )
                .await?;
            RunEnd::LimitReached { message }
        }
        Err(Stop::Cancelled) => {
            shared.emit(RunEvent::RunCancelled { run_id, step: seq });
            flush(shared).await?;
            store
                .set_status(&shared.program.run_id, RunStatus::Cancelled, None)
                .await?;
            RunEnd::Cancelled
        }
        Err(Stop::Store(error)) => return Err(error.into()),
    };
    let (usage, cost_usd) = totals(shared);
    Ok(RunOutcome {
        run_id: shared.program.run_id.clone(),
        end,
        state,
        steps: seq,
        usage,
        cost_usd,
    })
}

fn totals(shared: &Shared) -> (Usage, f64) {
    let tally = shared.tally();
    (tally.usage, tally.cost_usd)
}

/// Logs events emitted since the last commit.
async fn flush(shared: &Shared) -> Result<(), RunError> {
    let events = shared.take_log();
    if !events.is_empty() {
        let events = events
            .into_iter()
            .map(crate::store::Json::into_value)
            .collect();
        shared
            .ctx
            .store
            .log_events(&shared.program.run_id, events)
            .await?;
    }
    Ok(())
}
