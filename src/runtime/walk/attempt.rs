//! Running an action step: the run's limits, its attempts under the node's retry policy and
//! timeout, and applying what it wrote.

use std::sync::atomic::Ordering;
use std::time::Instant;

use futures_util::FutureExt;
use tracing::Instrument;

use super::commit::Ended;
use super::files::StepFiles;
use super::{Stop, Walker};
use crate::ir::{NodeIdx, NodeKind, ValueType};
use crate::lower::StepIdx;
use crate::runtime::event::FilesChanged;
use crate::runtime::exec::{self, Halt, Place};
use crate::runtime::frame::Write;
use crate::runtime::shared::Deadline;
use crate::runtime::state::Delta;
use crate::runtime::{NodeError, RunEvent, StepOutcome};

/// A step's successful attempt.
pub(super) struct Succeeded {
    /// What it wrote.
    pub(super) writes: Vec<Write>,
    /// How many attempts it took.
    pub(super) attempts: u32,
    /// The files it changed (when the run keeps snapshots).
    pub(super) files: Option<FilesChanged>,
}

impl Walker<'_> {
    /// Checks the run limits before an action step.
    pub(super) fn check_limits(&self) -> Result<(), Stop> {
        let shared = self.shared;
        let limits = &shared.workflow().limits;
        let taken = shared.tallies.steps_taken.fetch_add(1, Ordering::Relaxed) + 1;
        if let Some(max) = &limits.max_steps
            && taken > max.value
        {
            return Err(Stop::Limit(format!(
                "the run reached its limit of {} steps (`max-steps`)",
                max.value
            )));
        }
        if let Some(deadline) = &shared.program.deadline
            && deadline.clone().now_or_never().is_some()
        {
            return Err(Stop::Limit(self.timeout_message()));
        }
        if let Some(budget) = &limits.max_budget_usd {
            let spent = shared.tally().cost_usd;
            if spent >= budget.value {
                return Err(Stop::Limit(format!(
                    "the run spent ${spent:.4}, reaching its budget of ${:.4} (`max-budget-usd`)",
                    budget.value
                )));
            }
        }
        Ok(())
    }

    pub(super) fn timeout_message(&self) -> String {
        let timeout = self
            .shared
            .workflow()
            .limits
            .timeout
            .as_ref()
            .map_or(0, |t| t.value.0);
        format!("the run reached its time limit of {timeout} ms (`limits timeout`)")
    }

    /// Runs an action, parallel or subgraph step with its retries, applies and commits its
    /// writes.
    pub(super) async fn run_step(&mut self, at: StepIdx) -> Result<StepIdx, Stop> {
        self.check_limits()?;
        let node = self
            .shared
            .program
            .plan
            .step(at)
            .node
            .expect("action and fork steps have nodes");
        let started = Instant::now();
        let started_at = self.shared.ctx.executor.now();
        let span = tracing::debug_span!(
            "node",
            id = &*self.shared.id(node).clone(),
            step = self.step_no()
        );
        let outcome = self.attempts(at, node).instrument(span).await?;
        match outcome {
            Ok(done) => {
                let attempts = done.attempts;
                match self.complete(at, node, done, started, started_at).await? {
                    Ok(next) => Ok(next),
                    Err(error) => self.fail(at, node, error, attempts, started_at).await,
                }
            }
            Err((error, attempts)) => self.fail(at, node, error, attempts, started_at).await,
        }
    }

    /// Applies a succeeded step's writes and commits it (with the files it changed); the
    /// inner error is a write the
    /// state refused (nothing applied, nothing committed).
    pub(super) async fn complete(
        &mut self,
        at: StepIdx,
        node: NodeIdx,
        done: Succeeded,
        started: Instant,
        started_at: crate::store::Timestamp,
    ) -> Result<Result<StepIdx, NodeError>, Stop> {
        let Succeeded {
            writes,
            attempts,
            files,
        } = done;
        let kept = self.keeps_writes().then(|| writes.clone());
        let mut delta = Delta::default();
        if let Err(error) = self.apply_checked(writes, &mut delta) {
            return Ok(Err(error));
        }
        let next = self.after(at);
        self.finish(Ended {
            node,
            outcome: StepOutcome::Completed,
            files,
            delta,
            writes: kept.unwrap_or_default(),
            attempts,
            started,
            started_at,
            next,
            error: None,
        })
        .await?;
        Ok(Ok(next))
    }

    /// Applies `writes` through the reducers and checks every field declared with a schema
    /// that they changed, whatever statement or reducer wrote it. All or nothing: a write
    /// refused, or a value its schema rejects, leaves the frame as it was.
    pub(super) fn apply_checked(
        &mut self,
        writes: Vec<Write>,
        delta: &mut Delta,
    ) -> Result<(), NodeError> {
        let checked = {
            let schema = self.frame.state.schema();
            writes.iter().any(|write| {
                matches!(write, Write::Field(idx, _)
                    if matches!(schema.spec(*idx).ty, ValueType::Schema(_)))
            })
        };
        if !checked {
            return self.frame.apply(writes, delta);
        }
        let schema = self.frame.state.schema().clone();
        // Only now is the state shared, so only such steps copy it on write.
        let before = (
            self.frame.state.clone(),
            self.frame.outputs.clone(),
            self.frame.log.as_ref().map(Vec::len),
        );
        self.frame.apply(writes, delta)?;
        let mismatch = delta.fields.iter().find_map(|entry| {
            let idx = schema.find(&entry.field)?;
            let ValueType::Schema(path) = &schema.spec(idx).ty else {
                return None;
            };
            let value = self
                .frame
                .state
                .get_by_name(&entry.field)
                .cloned()
                .unwrap_or_default();
            self.shared
                .program
                .schemas
                .validate_as(&format!("field `{}`", entry.field), &path.value, &value)
                .err()
        });
        if let Some(error) = mismatch {
            let (state, outputs, logged) = before;
            self.frame.state = state;
            self.frame.outputs = outputs;
            if let (Some(log), Some(logged)) = (&mut self.frame.log, logged) {
                log.truncate(logged);
            }
            return Err(error);
        }
        Ok(())
    }

    /// Whether this walk's commits carry their writes: a block's do, since its state is
    /// rebuilt from them on resume.
    pub(super) fn keeps_writes(&self) -> bool {
        self.durable && !self.scope.is_top()
    }

    /// Runs attempts of a step until one succeeds, the policy gives up, or the run stops;
    /// a step that can change files starts each attempt from the files as they were
    /// before the first (see `files`).
    async fn attempts(
        &mut self,
        at: StepIdx,
        node: NodeIdx,
    ) -> Result<Result<Succeeded, (NodeError, u32)>, Stop> {
        let files = self.files_before(node).await?;
        let result = self.attempt_until_done(at, node, files.as_ref()).await;
        let Some(files) = files else {
            return result.map(|outcome| {
                outcome.map(|(writes, attempts)| Succeeded {
                    writes,
                    attempts,
                    files: None,
                })
            });
        };
        match result {
            Ok(Ok((writes, attempts))) => {
                let changed = files.after(self.shared).await?;
                Ok(Ok(Succeeded {
                    writes,
                    attempts,
                    files: Some(changed),
                }))
            }
            Ok(Err(failure)) => {
                files.failed(self.shared).await?;
                Ok(Err(failure))
            }
            Err(Stop::Paused(waits)) => {
                files.paused(self.shared).await?;
                Err(Stop::Paused(waits))
            }
            // Cancelled or out of time: the next resume puts the files back before the step
            // runs again.
            Err(stop @ (Stop::Cancelled | Stop::Limit(_))) => {
                files.stopped().await;
                Err(stop)
            }
            Err(stop) => Err(stop),
        }
    }

    async fn attempt_until_done(
        &mut self,
        at: StepIdx,
        node: NodeIdx,
        files: Option<&StepFiles>,
    ) -> Result<Result<(Vec<Write>, u32), (NodeError, u32)>, Stop> {
        let shared = self.shared;
        let ir = shared.workflow().node(node);
        let policy = crate::runtime::retry::RetryPolicy::of(ir);
        let inline = matches!(ir.kind, NodeKind::Set(_)) && ir.timeout.is_none();
        let mut attempt = 1;
        loop {
            if shared.wants_events() {
                shared.emit(RunEvent::StepStarted {
                    step: self.step_no(),
                    node: shared.id(node).clone(),
                    kind: ir.kind.keyword(),
                    attempt,
                    branch: self.frame.branch,
                });
            }
            let place = Place {
                scope: &self.scope,
                local: self.local,
                attempt,
            };
            let run = exec::execute(shared, &self.frame, at, node, self.step_no(), &place);
            let result = if inline {
                run.await
            } else {
                let timed = async {
                    match ir.timeout.as_ref() {
                        // Dropping `run` at the limit ends whatever it started.
                        // Biased: the order futures are first polled is the order their
                        // effects are asked for, which an engine replaying a run relies on.
                        Some(timeout) => tokio::select! {
                            biased;
                            result = run => result,
                            () = shared.ctx.executor.timer(timeout.value.to_std()) => {
                                Err(Halt::Failed(NodeError::new(
                                    crate::ir::ErrorClass::Timeout,
                                    format!(
                                        "`{}` timed out after {} ms",
                                        ir.id.value, timeout.value.0
                                    ),
                                )))
                            }
                        },
                        None => run.await,
                    }
                };
                tokio::select! {
                    biased;
                    () = shared.ctx.cancel.cancelled() => return Err(Stop::Cancelled),
                    () = deadline(shared.program.deadline.as_ref()) => return Err(Stop::Limit(self.timeout_message())),
                    result = timed => result,
                }
            };
            let error = match result {
                Ok(writes) => return Ok(Ok((writes, attempt))),
                Err(Halt::Paused(waits)) => return Err(Stop::Paused(waits)),
                Err(Halt::Failed(error)) => error,
            };
            let Some(delay) = policy.as_ref().and_then(|policy| {
                let unit = shared.ctx.executor.random_unit();
                crate::runtime::retry::delay(policy, &error, attempt, unit)
            }) else {
                return Ok(Err((error, attempt)));
            };
            attempt += 1;
            shared.emit(RunEvent::Retrying {
                node: shared.id(node).clone(),
                attempt,
                delay_ms: u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
                class: error
                    .class
                    .expect("`retry::delay` retries only classified failures"),
                message: error.message.clone(),
            });
            tokio::select! {
                biased;
                () = shared.ctx.cancel.cancelled() => return Err(Stop::Cancelled),
                () = deadline(shared.program.deadline.as_ref()) => return Err(Stop::Limit(self.timeout_message())),
                () = shared.ctx.executor.timer(delay) => {}
            }
            if let Some(files) = files {
                files.before_retry(attempt).await?;
            }
        }
    }
}

/// Sleeps until the run's deadline (forever without one).
pub(super) async fn deadline(deadline: Option<&Deadline>) {
    match deadline {
        Some(timer) => timer.clone().await,
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use std::pin::pin;
    use std::time::Duration;

    use crate::ir::ErrorClass;
    use crate::runtime::RunEnd;
    use crate::runtime::executor::Scripted;
    use crate::runtime::testing::{Harness, Progress, plan};

    #[tokio::test]
    async fn a_retry_waits_exactly_the_policys_back_off_on_the_clock() {
        let plan = plan(
            r#"workflow "w" {
    state { field "out" type="string" default=""; }
    tool "build" idempotent=#true {
        run "make"
        output "out"
        retry "tool-exit" attempts=3 backoff="2s" factor=3
    }
}"#,
        );
        let h = Harness::new();
        h.executor
            .exits("make", 1, "")
            .exits("make", 1, "")
            .exits("make", 0, "built");
        let mut run = pin!(h.start(&plan));
        let ms = Duration::from_millis;

        let Progress::Waiting(first) = h.until_timer(run.as_mut()).await else {
            panic!("the first failure is retried")
        };
        assert_eq!(first, ms(2000));
        h.clock.advance(first - ms(1));
        let Progress::Waiting(rest) = h.until_timer(run.as_mut()).await else {
            panic!("the back-off is not over")
        };
        assert_eq!(rest, ms(1));
        assert_eq!(
            h.executor.trace(),
            ["make"],
            "no retry before the back-off ends"
        );
        h.clock.advance(rest);

        let Progress::Waiting(second) = h.until_timer(run.as_mut()).await else {
            panic!("the second failure is retried")
        };
        assert_eq!(second, ms(6000), "the back-off grows by the factor");
        assert_eq!(h.executor.trace(), ["make", "make"]);
        h.clock.advance(second);

        let Progress::Ended(outcome) = h.until_timer(run.as_mut()).await else {
            panic!("the third attempt succeeds")
        };
        let outcome = outcome.unwrap();
        assert_eq!(outcome.end, RunEnd::Completed);
        assert_eq!(outcome.state["out"], "built");
        assert_eq!(h.executor.timers(), [ms(2000), ms(6000)]);
        assert_eq!(
            h.clock.elapsed(),
            ms(8000),
            "no time passed but the back-off"
        );
    }

    #[tokio::test]
    async fn a_node_timeout_fails_the_step_only_once_the_clock_passes_it() {
        let plan = plan(
            r#"workflow "w" {
    tool "build" timeout="30s" { run "make"; }
}"#,
        );
        let h = Harness::new();
        h.executor.command("make", Scripted::Hangs);
        let mut run = pin!(h.start(&plan));
        let Progress::Waiting(limit) = h.until_timer(run.as_mut()).await else {
            panic!("the step waits for its command")
        };
        assert_eq!(limit, Duration::from_secs(30));
        h.clock.advance(limit - Duration::from_millis(1));
        assert!(matches!(
            h.until_timer(run.as_mut()).await,
            Progress::Waiting(_)
        ));
        h.clock.advance(Duration::from_millis(1));
        let Progress::Ended(outcome) = h.until_timer(run.as_mut()).await else {
            panic!("the timeout ends the step")
        };
        assert_eq!(
            outcome.unwrap().end,
            RunEnd::Failed {
                node: "build".to_owned(),
                class: Some(ErrorClass::Timeout),
                message: "`build` timed out after 30000 ms".to_owned(),
            }
        );
    }
}
