//! Driving a walk to its end: [`drive`] runs the run's own walk from where [`run`] or
//! [`resume`] start it, then records how it ended (the run's status, its last events, the
//! `run.end` hook) and returns the [`RunOutcome`].
//!
//! [`run`]: super::run()
//! [`resume`]: super::resume()

use std::sync::Arc;

use serde_json::Map;
use tracing::Instrument;

use super::{ResumeError, RunEnd, RunOutcome};
use crate::lower::StepKind;
use crate::providers::Usage;
use crate::runtime::frame::Frame;
use crate::runtime::hooks::{self, HookEvent};
use crate::runtime::shared::Shared;
use crate::runtime::walk::{ScopePath, Start, Stop, WalkEnd, Walker};
use crate::runtime::{Choice, FailureClass, RunError, RunEvent};
use crate::store::RunStatus;

/// Walks from `start` and turns how the walk ended into the run's final status and event.
pub(super) async fn drive(
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
    super::files::record_hook(shared, HookEvent::RunStart).await;
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
                    let run = Some(shared.program.run_id.clone());
                    return Ok(Err(ResumeError::NotPaused { run }.into()));
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
        super::files::record_hook(shared, HookEvent::RunEnd).await;
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
        Ok(Ok(WalkEnd::Paused(wait))) => RunEnd::Paused { waits: vec![*wait] },
        Err(Stop::Paused(waits)) => {
            for wait in &waits {
                shared.emit(RunEvent::RunPaused {
                    run_id: run_id.clone(),
                    step: seq,
                    node: Arc::from(wait.node_id.as_str()),
                    wait: Some(wait.key()),
                    header: wait.header.clone(),
                    prompt: wait.prompt.clone(),
                    answer: wait.answer.clone(),
                    choices: wait.choices.iter().map(Choice::from).collect(),
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
        Err(Stop::Workspace(message)) => return Err(RunError::Workspace(message)),
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

/// The run's token usage and cost so far.
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
