//! The entry points: [`run`] starts a run, [`resume`] continues one from its last
//! committed step (answering the wait it is paused at, if any).

use std::sync::Arc;

use serde_json::{Map, Value};
use tracing::Instrument;

use super::cursor::Cursor;
use super::frame::Frame;
use super::hooks::{self, HookEvent};
use super::interpreter::{Stop, WalkEnd, Walker};
use super::shared::{OUTPUT_PREFIX, Shared};
use super::state::State;
use super::template::Outputs;
use super::{Choice, RunContext, RunError, RunEvent};
use crate::ir::ErrorClass;
use crate::lower::{Plan, StepKind};
use crate::providers::Usage;
use crate::store::{NewRun, RunId, RunStatus, Timestamp};

/// How a run (or a resumed stretch of it) ended.
#[derive(Clone, Debug, PartialEq)]
pub enum RunEnd {
    /// It reached its end (exit code 0).
    Completed,
    /// It is paused at a wait (exit code 4); resume it with an answer.
    Paused {
        /// The wait's id.
        node: String,
        /// The rendered prompt.
        prompt: String,
        /// The answer type's KDL name.
        answer: String,
        /// The choices of a `choice` answer.
        choices: Vec<Choice>,
        /// For an `auto-approve` wait: the answer it gives itself, and when (a run stopped
        /// while it waited; `atomic resume RUN` waits out the rest).
        auto_answer: Option<(String, Timestamp)>,
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

/// The result of [`run`] or [`resume`].
#[derive(Clone, Debug, PartialEq)]
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
    let shared = Arc::new(Shared::new(plan, ctx, run_id.clone(), &inputs, false)?);
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
            inputs: shared.input_json.clone(),
            state: initial,
        })
        .await?;
    let frame = Frame {
        state: Arc::new(state),
        outputs: Arc::default(),
        counters: shared.plan.new_counters(),
        locals: None,
        error: None,
        branch: None,
        log: None,
    };
    let start = shared.plan.start();
    drive(&shared, frame, 0, Start::At(start)).await
}

/// Continues run `run_id` of `plan` from its last committed step. A run paused at a wait
/// needs `answer`, which is checked against the wait's type first.
///
/// # Errors
/// [`RunError::BadAnswer`] (the run stays paused), [`RunError::Resume`] when the run has
/// finished or its checkpoint does not fit the workflow, store errors.
pub async fn resume(
    plan: Arc<Plan>,
    run_id: &RunId,
    answer: Option<&str>,
    ctx: RunContext,
) -> Result<RunOutcome, RunError> {
    let checkpoint = ctx.store.checkpoint(run_id).await?;
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
    let shared = Arc::new(Shared::new(plan, ctx, run_id.clone(), &inputs, false)?);
    let mut fields = Map::new();
    let mut outputs = Outputs::default();
    for (name, value) in checkpoint.state {
        match name.strip_prefix(OUTPUT_PREFIX) {
            Some(node) => outputs.insert(Arc::from(node), value),
            None => {
                fields.insert(name, value);
            }
        }
    }
    // An edited workflow (`resume --force`) may no longer take what was stored: say all of
    // it now, before any step runs, rather than fail at the first write.
    let misfits = shared.schema.misfits(&fields);
    if !misfits.is_empty() {
        return Err(RunError::Resume(format!(
            "run `{run_id}` cannot continue with this version of the workflow; its saved state no longer fits:\n  - {}\nundo the edit to those fields, or start a new run",
            misfits.join("\n  - ")
        )));
    }
    let state =
        State::from_json(shared.schema.clone(), &Value::Object(fields)).map_err(|error| {
            RunError::Resume(format!(
                "run `{run_id}` does not fit this workflow: {error}"
            ))
        })?;
    let cursor: Cursor = match checkpoint.cursor {
        Some(cursor) => serde_json::from_value(cursor).map_err(|error| {
            RunError::Resume(format!("run `{run_id}` has an unreadable cursor: {error}"))
        })?,
        None => Cursor {
            next: Some(shared.plan.start()),
            counters: shared.plan.new_counters(),
            ..Cursor::default()
        },
    };
    if let Some(next) = cursor.next {
        let fits = next.index() < shared.plan.len()
            && cursor
                .next_key
                .as_ref()
                .is_none_or(|key| *key == shared.plan.step(next).key);
        if !fits {
            return Err(RunError::Resume(format!(
                "run `{run_id}` continues at `{}`, which this version of the workflow does not have at that place; was the workflow edited?",
                cursor.next_key.as_deref().unwrap_or("?")
            )));
        }
    }
    shared.restore(&cursor);
    let frame = Frame {
        state: Arc::new(state),
        outputs: Arc::new(outputs),
        counters: cursor.counters.clone(),
        locals: None,
        error: cursor.error.clone(),
        branch: None,
        log: None,
    };
    let start = match (cursor.next, cursor.waiting, answer) {
        (Some(at), true, Some(answer)) => Start::Answer(at, answer.to_owned()),
        // An `auto-approve` wait answers itself at the deadline it was first given.
        (Some(at), true, None) if let Some(answer_at) = cursor.auto_answer_at => {
            Start::AutoWait(at, answer_at)
        }
        (Some(at), true, None) => {
            let node = shared
                .plan
                .node(at)
                .map_or("?", |node| node.id.value.as_str());
            return Err(RunError::Resume(format!(
                "run `{run_id}` is paused at `{node}`: pass an answer (`atomic resume {run_id} --answer …`)"
            )));
        }
        (_, false, Some(_)) => {
            return Err(RunError::Resume(format!(
                "run `{run_id}` is not paused at a wait; it takes no answer"
            )));
        }
        (Some(at), false, None) => Start::At(at),
        (None, _, _) => Start::At(shared.plan.end()),
    };
    drive(&shared, frame, checkpoint.seq, start).await
}

enum Start {
    At(crate::lower::StepIdx),
    /// At a paused `auto-approve` wait, which answers itself at this Unix-ms deadline.
    AutoWait(crate::lower::StepIdx, u64),
    Answer(crate::lower::StepIdx, String),
}

/// Walks from `start` and turns how the walk ended into the run's final status and event.
async fn drive(
    shared: &Arc<Shared>,
    frame: Frame,
    seq: u64,
    start: Start,
) -> Result<RunOutcome, RunError> {
    let resumed = seq > 0 || !matches!(start, Start::At(_));
    shared.emit(RunEvent::RunStarted {
        run_id: shared.run_id.to_string(),
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
        id = shared.run_id.as_str(),
        workflow = shared.workflow().name.value.as_str()
    );
    let mut walker = Walker {
        shared,
        frame,
        seq,
        durable: true,
        resumed_auto_at: None,
    };
    let result = async {
        let at = match start {
            Start::At(at) => at,
            Start::AutoWait(at, answer_at) => {
                walker.resumed_auto_at = Some(answer_at);
                at
            }
            Start::Answer(at, answer) => {
                let node = shared
                    .plan
                    .step(at)
                    .node
                    .filter(|_| shared.plan.step(at).kind == StepKind::Wait);
                let Some(node) = node else {
                    return Ok(Err(RunError::Resume(
                        "the run is not paused at a wait".to_owned(),
                    )));
                };
                match walker.answer(at, node, &answer).await? {
                    Ok(next) => next,
                    Err(message) => {
                        return Ok(Err(RunError::BadAnswer {
                            node: shared.id(node).to_string(),
                            message,
                        }));
                    }
                }
            }
        };
        walker.walk(at, None).await.map(Ok)
    }
    .instrument(span)
    .await;
    let seq = walker.seq;
    let state = walker.frame.state.to_json();
    let store = &shared.ctx.store;
    let run_id = shared.run_id.to_string();
    let status = match &result {
        Ok(Ok(WalkEnd::End | WalkEnd::Reached)) => Some("completed"),
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
        Ok(Ok(WalkEnd::End | WalkEnd::Reached)) => {
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
                .set_status(&shared.run_id, RunStatus::Completed, None)
                .await?;
            RunEnd::Completed
        }
        Ok(Ok(WalkEnd::Paused(question, node))) => RunEnd::Paused {
            node: node.to_string(),
            prompt: question.prompt,
            answer: question.answer,
            choices: question.choices,
            auto_answer: question.auto_answer,
        },
        Err(Stop::Failed { node, error }) => {
            shared.emit(RunEvent::RunFailed {
                run_id,
                step: seq,
                node: Some(node.clone()),
                class: error.class_name(),
                message: error.message.clone(),
            });
            flush(shared).await?;
            let message = format!("`{node}` failed: {}", error.message);
            store
                .set_status(&shared.run_id, RunStatus::Failed, Some(message))
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
                class: "limit",
                message: message.clone(),
            });
            flush(shared).await?;
            store
                .set_status(&shared.run_id, RunStatus::Cancelled, Some(message.clone()))
                .await?;
            RunEnd::LimitReached { message }
        }
        Err(Stop::Cancelled) => {
            shared.emit(RunEvent::RunCancelled { run_id, step: seq });
            flush(shared).await?;
            store
                .set_status(&shared.run_id, RunStatus::Cancelled, None)
                .await?;
            RunEnd::Cancelled
        }
        Err(Stop::Store(error)) => return Err(error.into()),
    };
    let (usage, cost_usd) = totals(shared);
    Ok(RunOutcome {
        run_id: shared.run_id.clone(),
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
        shared.ctx.store.log_events(&shared.run_id, events).await?;
    }
    Ok(())
}
