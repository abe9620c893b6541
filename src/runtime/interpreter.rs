//! The walker: follows a [`Plan`](crate::lower::Plan) step by step.
//!
//! A top-level walk is *durable*: every action step (and every parallel, as one step at its
//! join) is committed to the store — delta, cursor, events — before the next step starts,
//! so `resume` re-runs at most the step that was in flight. Structural steps (start,
//! decisions, loop heads and tails, joins) are pure functions of state and counters; they
//! are not committed but re-derived on resume from the committed cursor.
//!
//! A branch walk (a parallel branch, a subgraph's run) commits nothing: a branch records
//! its writes for the join to merge in branch order.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

use tracing::Instrument;

use super::exec;
use super::frame::{Frame, Write};
use super::shared::{OUTPUT_PREFIX, Shared};
use super::state::{Change, Delta, State};
use super::{NodeError, RunEvent};
use crate::ir::{NodeIdx, NodeKind, OnError};
use crate::lower::{StepIdx, StepKind};
use crate::store::{self, PendingWait, RunStatus, StepCommit, StepStatus, StoreError, Timestamp};

/// Why a walk stopped early.
#[derive(Debug)]
pub(crate) enum Stop {
    /// A node failed with no `on-error` route.
    Failed { node: Arc<str>, error: NodeError },
    /// A run limit was reached.
    Limit(String),
    /// The run was cancelled.
    Cancelled,
    /// The store failed.
    Store(StoreError),
}

/// How a walk ended.
#[derive(Debug)]
pub(crate) enum WalkEnd {
    /// The workflow's end.
    End,
    /// The step the walk was told to stop at (a branch's join).
    Reached,
    /// A wait paused the run (already committed).
    Paused(exec::Question, Arc<str>),
}

/// A boxed walk, for spawning branches and running subgraphs.
pub(crate) type BoxedWalk = Pin<Box<dyn Future<Output = Result<Frame, Stop>> + Send>>;

/// One walk over the plan.
pub(crate) struct Walker<'a> {
    pub(crate) shared: &'a Arc<Shared>,
    pub(crate) frame: Frame,
    /// Durable: the last committed step. Otherwise the step number the walk reports.
    pub(crate) seq: u64,
    pub(crate) durable: bool,
    /// A resumed run paused at an `auto-approve` wait: when that wait answers itself.
    pub(crate) resumed_auto_at: Option<u64>,
}

impl Walker<'_> {
    fn step_no(&self) -> u64 {
        if self.durable { self.seq + 1 } else { self.seq }
    }

    /// Walks from `at` until the end, a pause, or `stop_at`.
    pub(crate) async fn walk(
        &mut self,
        mut at: crate::lower::StepIdx,
        stop_at: Option<StepIdx>,
    ) -> Result<WalkEnd, Stop> {
        let plan = self.shared.plan.clone();
        loop {
            if Some(at) == stop_at {
                return Ok(WalkEnd::Reached);
            }
            if self.shared.ctx.cancel.is_cancelled() {
                return Err(Stop::Cancelled);
            }
            match plan.step(at).kind {
                StepKind::End => return Ok(WalkEnd::End),
                StepKind::Start
                | StepKind::Decision
                | StepKind::LoopHead { .. }
                | StepKind::LoopTail { .. }
                | StepKind::Join { .. } => at = self.navigate(at).await?,
                StepKind::Wait if self.durable => match self.wait(at).await? {
                    Ok(next) => at = next,
                    Err((question, node)) => return Ok(WalkEnd::Paused(question, node)),
                },
                _ => at = self.run_step(at).await?,
            }
        }
    }

    /// Moves on from a structural step, evaluating its condition if it has one.
    async fn navigate(&mut self, at: StepIdx) -> Result<StepIdx, Stop> {
        let shared = self.shared;
        let plan = &shared.plan;
        let step = plan.step(at);
        let needs_scope = match (
            step.kind,
            step.node.map(|node| &shared.workflow().node(node).kind),
        ) {
            (StepKind::Decision, _) => true,
            (StepKind::LoopHead { .. }, Some(NodeKind::Loop(ir))) => ir.while_.is_some(),
            (StepKind::LoopTail { .. }, Some(NodeKind::Loop(ir))) => ir.until.is_some(),
            _ => false,
        };
        let scope = needs_scope.then(|| shared.scope(&self.frame, step.node, self.step_no()));
        let mut eval = |expr: &crate::ir::Expr| -> Result<bool, NodeError> {
            let scope = scope
                .as_ref()
                .expect("a scope is built for steps with conditions");
            Ok(shared.templates.truthy(expr, scope)?)
        };
        match plan.next(at, &mut self.frame.counters, &mut eval) {
            Ok(Some(next)) => {
                if step.kind == StepKind::Decision && shared.wants_events() {
                    let node = step.node.expect("a decision has a node");
                    shared.emit(RunEvent::Route {
                        node: shared.id(node).clone(),
                        to: plan.step(next).key.clone(),
                    });
                }
                Ok(next)
            }
            Ok(None) => Err(Stop::Failed {
                node: Arc::from(step.key.as_str()),
                error: NodeError::fatal(format!("no step follows `{}`", step.key)),
            }),
            Err(error) => {
                let node = step.node.expect("steps with conditions have nodes");
                self.fail(at, node, error, 1, Timestamp::now()).await
            }
        }
    }

    /// Checks the run limits before an action step.
    fn check_limits(&self) -> Result<(), Stop> {
        let shared = self.shared;
        let limits = &shared.workflow().limits;
        let taken = shared.steps_taken.fetch_add(1, Ordering::Relaxed) + 1;
        if let Some(max) = &limits.max_steps
            && taken > max.value
        {
            return Err(Stop::Limit(format!(
                "the run reached its limit of {} steps (`max-steps`)",
                max.value
            )));
        }
        if let Some(deadline) = shared.deadline
            && tokio::time::Instant::now() >= deadline
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

    fn timeout_message(&self) -> String {
        let timeout = self
            .shared
            .workflow()
            .limits
            .timeout
            .as_ref()
            .map_or(0, |t| t.value.0);
        format!("the run reached its time limit of {timeout} ms (`limits timeout`)")
    }

    /// Runs an action or parallel step with its retries, applies and commits its writes.
    async fn run_step(&mut self, at: StepIdx) -> Result<StepIdx, Stop> {
        self.check_limits()?;
        let node = self
            .shared
            .plan
            .step(at)
            .node
            .expect("action and fork steps have nodes");
        let started = Instant::now();
        let started_at = if self.durable {
            Timestamp::now()
        } else {
            Timestamp(0)
        };
        let span = tracing::debug_span!(
            "node",
            id = &*self.shared.id(node).clone(),
            step = self.step_no()
        );
        let outcome = self.attempts(at, node).instrument(span).await?;
        match outcome {
            Ok((writes, attempts)) => {
                let mut delta = Delta::default();
                if let Err(error) = self.frame.apply(writes, &mut delta) {
                    return self.fail(at, node, error, attempts, started_at).await;
                }
                let next = self.after(at);
                self.finish(
                    node,
                    "completed",
                    delta,
                    attempts,
                    started,
                    started_at,
                    next,
                )
                .await?;
                Ok(next)
            }
            Err((error, attempts)) => self.fail(at, node, error, attempts, started_at).await,
        }
    }

    /// The successor of a finished action step.
    fn after(&mut self, at: StepIdx) -> StepIdx {
        let mut never = |_: &crate::ir::Expr| Ok::<bool, NodeError>(false);
        self.shared
            .plan
            .next(at, &mut self.frame.counters, &mut never)
            .ok()
            .flatten()
            .unwrap_or_else(|| self.shared.plan.end())
    }

    /// Emits `step-finished` (and `values`/`debug`), then commits.
    #[allow(clippy::too_many_arguments)]
    async fn finish(
        &mut self,
        node: NodeIdx,
        status: &'static str,
        delta: Delta,
        attempts: u32,
        started: Instant,
        started_at: Timestamp,
        next: StepIdx,
    ) -> Result<(), Stop> {
        let shared = self.shared;
        let id = shared.id(node).clone();
        let step = self.step_no();
        let store_status = match status {
            "skipped" => StepStatus::Skipped,
            "recovered" => StepStatus::Failed,
            _ => StepStatus::Completed,
        };
        let commit_delta = self.durable.then(|| store_delta(&delta, &self.frame.state));
        if shared.wants_events() || (shared.ctx.sink.is_some() && shared.ctx.stream.updates) {
            shared.emit(RunEvent::StepFinished {
                step,
                node: id.clone(),
                status,
                delta,
                branch: self.frame.branch,
            });
        }
        if shared.ctx.sink.is_some() && shared.ctx.stream.debug {
            shared.emit(RunEvent::Debug {
                step,
                node: id.clone(),
                attempts,
                elapsed_us: u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX),
                model: None,
                usage: None,
            });
        }
        if let Some(delta) = commit_delta {
            self.commit(
                &id,
                delta,
                store_status,
                attempts,
                started_at,
                Some(next),
                false,
                None,
                None,
            )
            .await?;
            if shared.ctx.sink.is_some() && shared.ctx.stream.values {
                shared.emit(RunEvent::Values {
                    step: self.seq,
                    state: self.frame.state.to_json(),
                });
            }
        }
        Ok(())
    }

    /// Commits one step (durable walks only).
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn commit(
        &mut self,
        node: &str,
        delta: store::StateDelta,
        status: StepStatus,
        attempts: u32,
        started_at: Timestamp,
        next: Option<StepIdx>,
        waiting: bool,
        error: Option<String>,
        wait: Option<PendingWait>,
    ) -> Result<(), Stop> {
        if !self.durable {
            return Ok(());
        }
        let shared = self.shared;
        let mut cursor = shared.cursor(&self.frame, next, waiting);
        cursor.auto_answer_at = wait
            .as_ref()
            .and_then(|wait| wait.auto_answer_at)
            .map(|at| at.0);
        let commit = StepCommit {
            seq: self.seq + 1,
            node_id: node.to_owned(),
            started_at,
            finished_at: Timestamp::now(),
            status,
            attempts,
            delta,
            cursor: store::Json::lazy(Arc::new(cursor)),
            events: shared.take_log(),
            error,
            run_status: if wait.is_some() {
                RunStatus::Paused
            } else {
                RunStatus::Running
            },
            wait,
        };
        shared
            .ctx
            .store
            .commit_step(&shared.run_id, commit)
            .await
            .map_err(Stop::Store)?;
        self.seq += 1;
        Ok(())
    }

    /// Runs attempts of a step until one succeeds, the policy gives up, or the run stops.
    async fn attempts(
        &mut self,
        at: StepIdx,
        node: NodeIdx,
    ) -> Result<Result<(Vec<Write>, u32), (NodeError, u32)>, Stop> {
        let shared = self.shared;
        let ir = shared.workflow().node(node);
        let policy = super::retry::RetryPolicy::of(ir);
        let inline = matches!(ir.kind, NodeKind::Set(_)) && ir.timeout.is_none();
        let mut attempt = 1;
        loop {
            if shared.wants_events() {
                shared.emit(RunEvent::StepStarted {
                    step: self.step_no(),
                    node: shared.id(node).clone(),
                    kind: ir.kind.name(),
                    attempt,
                    branch: self.frame.branch,
                });
            }
            let run = exec::execute(shared, &self.frame, at, node, self.step_no());
            let result = if inline {
                run.await
            } else {
                let timed = async {
                    match ir.timeout.as_ref() {
                        Some(timeout) => {
                            let limit = timeout.value.to_std();
                            tokio::time::timeout(limit, run).await.unwrap_or_else(|_| {
                                Err(NodeError::new(
                                    crate::ir::ErrorClass::Timeout,
                                    format!(
                                        "`{}` timed out after {} ms",
                                        ir.id.value, timeout.value.0
                                    ),
                                ))
                            })
                        }
                        None => run.await,
                    }
                };
                tokio::select! {
                    biased;
                    () = shared.ctx.cancel.cancelled() => return Err(Stop::Cancelled),
                    () = deadline(shared.deadline) => return Err(Stop::Limit(self.timeout_message())),
                    result = timed => result,
                }
            };
            let error = match result {
                Ok(writes) => return Ok(Ok((writes, attempt))),
                Err(error) => error,
            };
            let Some(delay) = policy
                .as_ref()
                .and_then(|policy| super::retry::delay(policy, &error, attempt))
            else {
                return Ok(Err((error, attempt)));
            };
            attempt += 1;
            shared.emit(RunEvent::Retrying {
                node: shared.id(node).clone(),
                attempt,
                delay_ms: u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
                class: error.class_name(),
                message: error.message.clone(),
            });
            tokio::select! {
                biased;
                () = shared.ctx.cancel.cancelled() => return Err(Stop::Cancelled),
                () = deadline(shared.deadline) => return Err(Stop::Limit(self.timeout_message())),
                () = tokio::time::sleep(delay) => {}
            }
        }
    }

    /// Routes a failure: `on-error "skip"` (fallback writes), `"goto"` (with `error`
    /// bound), or the walk stops.
    async fn fail(
        &mut self,
        at: StepIdx,
        node: NodeIdx,
        error: NodeError,
        attempts: u32,
        started_at: Timestamp,
    ) -> Result<StepIdx, Stop> {
        let shared = self.shared;
        let id = shared.id(node).clone();
        let Some(route) = shared.plan.on_error(at, &mut self.frame.counters) else {
            let action = if self.frame.branch.is_some() {
                "fail-branch"
            } else {
                "fail-run"
            };
            shared.emit(RunEvent::NodeFailed {
                node: id.clone(),
                class: error.class_name(),
                message: error.message.clone(),
                action,
            });
            return Err(Stop::Failed { node: id, error });
        };
        shared.emit(RunEvent::NodeFailed {
            node: id.clone(),
            class: error.class_name(),
            message: error.message.clone(),
            action: if route.recover { "recover" } else { "skip" },
        });
        let mut delta = Delta::default();
        if route.recover {
            self.frame.error = Some(error.to_json(&id));
        } else if let Some(OnError::Skip { fallback, .. }) =
            shared.workflow().node(route.handler).on_error.as_deref()
        {
            let writes = exec::eval_sets(shared, &self.frame, Some(node), fallback, self.step_no())
                .and_then(|writes| self.frame.apply(writes, &mut delta));
            if let Err(fallback_error) = writes {
                return Err(Stop::Failed {
                    node: id,
                    error: fallback_error,
                });
            }
        }
        let status = if route.recover {
            "recovered"
        } else {
            "skipped"
        };
        let store_status = if route.recover {
            StepStatus::Failed
        } else {
            StepStatus::Skipped
        };
        if shared.wants_events() {
            shared.emit(RunEvent::StepFinished {
                step: self.step_no(),
                node: id.clone(),
                status,
                delta: delta.clone(),
                branch: self.frame.branch,
            });
        }
        if self.durable {
            let commit = store_delta(&delta, &self.frame.state);
            self.commit(
                &id,
                commit,
                store_status,
                attempts,
                started_at,
                Some(route.target),
                false,
                Some(error.message),
                None,
            )
            .await?;
        }
        Ok(route.target)
    }

    /// At a wait: answers it itself after `auto-approve`'s delay (returning where to go
    /// next), or commits the pause (returning `None`).
    async fn wait(
        &mut self,
        at: StepIdx,
    ) -> Result<Result<StepIdx, (exec::Question, Arc<str>)>, Stop> {
        let shared = self.shared;
        let node = shared.plan.step(at).node.expect("a wait step has a node");
        let NodeKind::Wait(wait) = &shared.workflow().node(node).kind else {
            return Err(Stop::Failed {
                node: shared.id(node).clone(),
                error: NodeError::fatal("not a wait"),
            });
        };
        self.check_limits()?;
        // A dry run answers at once, with the auto-approve answer or a canned one.
        if shared.ctx.dry_run {
            let answer = exec::canned_answer(wait);
            shared.emit(RunEvent::WaitAutoApprove {
                node: shared.id(node).clone(),
                after_ms: 0,
                answer: answer.clone(),
            });
            return self.give_answer(at, node, &answer).await.map(Ok);
        }
        let question = match exec::pending_wait(shared, &self.frame, node, self.step_no()) {
            Ok(question) => question,
            Err(error) => {
                return self
                    .fail(at, node, error, 1, Timestamp::now())
                    .await
                    .map(Ok);
            }
        };
        let id = shared.id(node).clone();
        if let Some(auto) = &wait.auto_approve {
            return self.auto_answer(at, node, id, question, auto).await;
        }
        self.emit_paused(self.seq + 1, &id, &question);
        self.commit_pause(at, &id, pending_record(shared, &id, &question))
            .await?;
        Ok(Err((question, id)))
    }

    /// Tells the sinks the run is paused at `id` (step `step`) with `question`.
    fn emit_paused(&self, step: u64, id: &Arc<str>, question: &exec::Question) {
        self.shared.emit(RunEvent::RunPaused {
            run_id: self.shared.run_id.to_string(),
            step,
            node: id.clone(),
            prompt: question.prompt.clone(),
            answer: question.answer.clone(),
            choices: question.choices.clone(),
        });
    }

    /// Commits the pause at the wait `at` as its own step, with what `atomic resume` needs.
    async fn commit_pause(
        &mut self,
        at: StepIdx,
        id: &str,
        pending: PendingWait,
    ) -> Result<(), Stop> {
        self.commit(
            id,
            store::StateDelta::new(),
            StepStatus::Waiting,
            1,
            Timestamp::now(),
            Some(at),
            true,
            None,
            Some(pending),
        )
        .await
    }

    /// Answers the wait at `at` with `answer` given by the workflow itself (auto-approve or a
    /// dry run); an answer the wait's type refuses fails the node.
    async fn give_answer(
        &mut self,
        at: StepIdx,
        node: NodeIdx,
        answer: &str,
    ) -> Result<StepIdx, Stop> {
        match self.answer(at, node, answer).await? {
            Ok(next) => Ok(next),
            Err(message) => {
                self.fail(at, node, NodeError::fatal(message), 1, Timestamp::now())
                    .await
            }
        }
    }

    /// An `auto-approve` wait: the pause is committed first, with its deadline, so a run
    /// stopped while it waits (a crash, Ctrl-C) is still paused there, answers itself at
    /// the first deadline when resumed, and can be answered sooner with `atomic resume
    /// RUN --answer …`. This process then waits out the delay and gives the answer;
    /// Ctrl-C while it waits leaves the run paused (exit 4) rather than cancelled.
    async fn auto_answer(
        &mut self,
        at: StepIdx,
        node: NodeIdx,
        id: Arc<str>,
        mut question: exec::Question,
        auto: &crate::ir::AutoApprove,
    ) -> Result<Result<StepIdx, (exec::Question, Arc<str>)>, Stop> {
        let shared = self.shared;
        let answer = auto.answer.value.clone();
        let answer_at = match self.resumed_auto_at.take() {
            Some(answer_at) => answer_at,
            None => {
                let answer_at = Timestamp::now().0.saturating_add(auto.after.value.0);
                let mut pending = pending_record(shared, &id, &question);
                pending.auto_answer = Some(answer.clone());
                pending.auto_answer_at = Some(Timestamp(answer_at));
                self.commit_pause(at, &id, pending).await?;
                answer_at
            }
        };
        let after_ms = answer_at.saturating_sub(Timestamp::now().0);
        shared.emit(RunEvent::WaitAutoApprove {
            node: id.clone(),
            after_ms,
            answer: answer.clone(),
        });
        tokio::select! {
            biased;
            () = shared.ctx.cancel.cancelled() => {
                self.emit_paused(self.seq, &id, &question);
                question.auto_answer = Some((answer, Timestamp(answer_at)));
                return Ok(Err((question, id)));
            }
            () = deadline(shared.deadline) => return Err(Stop::Limit(self.timeout_message())),
            () = tokio::time::sleep(std::time::Duration::from_millis(after_ms)) => {}
        }
        self.give_answer(at, node, &answer).await.map(Ok)
    }

    /// Applies an answer to the wait at `at` and commits it as its own step. The inner
    /// error is a bad answer (nothing was applied).
    pub(crate) async fn answer(
        &mut self,
        at: StepIdx,
        node: NodeIdx,
        answer: &str,
    ) -> Result<Result<StepIdx, String>, Stop> {
        let shared = self.shared;
        let writes = match exec::answer_writes(shared, node, answer) {
            Ok(writes) => writes,
            Err(message) => return Ok(Err(message)),
        };
        let mut delta = Delta::default();
        if let Err(error) = self.frame.apply(writes, &mut delta) {
            return Ok(Err(error.message));
        }
        let next = self.after(at);
        self.finish(
            node,
            "completed",
            delta,
            1,
            Instant::now(),
            Timestamp::now(),
            next,
        )
        .await?;
        Ok(Ok(next))
    }
}

/// What the store keeps about a pause, for `atomic resume` and `atomic runs`.
fn pending_record(shared: &Shared, id: &str, question: &exec::Question) -> PendingWait {
    PendingWait {
        node_id: id.to_owned(),
        prompt: question.prompt.clone(),
        answer: question.answer.clone(),
        choices: question
            .choices
            .iter()
            .map(|choice| store::WaitChoice {
                value: choice.value.clone(),
                label: choice.label.clone(),
            })
            .collect(),
        schema: question
            .schema
            .as_ref()
            .map(|schema| shared.ctx.base_dir.join(schema).display().to_string()),
        auto_answer: None,
        auto_answer_at: None,
    }
}

/// Sleeps until the run's deadline (forever without one).
async fn deadline(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// The store's form of a delta: outputs become `#output:<node>` fields, `merge-by` a `set`
/// of the merged list (the store has no merge-by change).
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
        out.0.insert(entry.field.to_string(), change);
    }
    for (node, value) in &delta.outputs {
        out.0.insert(
            format!("{OUTPUT_PREFIX}{node}"),
            store::Change::Set(value.clone()),
        );
    }
    out
}

/// Runs one parallel branch (or a subgraph) as a walk of its own, boxed so walks can nest.
pub(crate) fn walk_detached(
    shared: Arc<Shared>,
    frame: Frame,
    from: StepIdx,
    stop_at: Option<StepIdx>,
    seq: u64,
) -> BoxedWalk {
    Box::pin(async move {
        let mut walker = Walker {
            shared: &shared,
            frame,
            seq,
            durable: false,
            resumed_auto_at: None,
        };
        match walker.walk(from, stop_at).await? {
            WalkEnd::End | WalkEnd::Reached => Ok(walker.frame),
            WalkEnd::Paused(_, node) => Err(Stop::Failed {
                node,
                error: NodeError::fatal(
                    "a wait cannot pause inside a parallel branch or a subgraph",
                ),
            }),
        }
    })
}
