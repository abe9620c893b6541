//! The Temporal workflow: atomic's interpreter, run as workflow code. Its effects come to
//! the driver here as [`Effect`]s and leave as activities and timers; its steps are
//! committed to a store that lives in the workflow (rebuilt by replay, read by the
//! `progress` query); a wait becomes the `answer` update, checked by its validator with
//! the same judgement `atomic resume` makes, so a refused answer never enters the history.
//! A long run continues as new when its history grows long: it stops starting effects,
//! lets those in flight finish and commit, and carries its store to the next execution,
//! which resumes it from its checkpoint.

use std::collections::{HashSet, VecDeque};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, SystemTime};

use serde_json::{Map, Value};

use futures::channel::{mpsc, oneshot};
use futures_util::{FutureExt, StreamExt};
use temporalio_macros::{workflow, workflow_methods};
use temporalio_sdk::{
    ActivityExecutionError, ActivityOptions, CancellableFuture, ContinueAsNewOptions,
    LocalActivityOptions, SyncWorkflowContext, TimerResult, WorkflowContext, WorkflowContextView,
    WorkflowResult, WorkflowTermination,
};

use super::activities::Activities;
use super::engine::Engine;
use super::executor::{Effect, TemporalExecutor};
use super::wire::{
    AgentDone, Answer, CommandDone, Detail, FileDone, Progress, RemoteFailure, RunStart,
};
use crate::ir::ErrorClass;
use crate::lower::Plan;
use crate::runtime::executor::CommandError;
use crate::runtime::{
    self, RedactingStore, ResumeOptions, RunContext, RunEnd, RunError, RunEvent, RunOutcome,
    RunSink, StreamModes,
};
use crate::store::{MemoryStore, PendingWait, RunId, RunStatus, Store};

/// Continue as new once the history has this many events (Temporal warns at 10,240 and
/// stops at 51,200), or when the server suggests it.
const HISTORY_LIMIT: u32 = 8_000;

/// The patch under which instant effects are local activities (see [`InFlight::start`]).
const LOCAL_INSTANT_EFFECTS: &str = "atomic-local-instant-effects";

/// How long an activity may go without a heartbeat before Temporal gives it to another
/// worker (activities beat every [`super::activities::BEAT_EVERY`]).
const HEARTBEAT_TIMEOUT: Duration = Duration::from_secs(10);

/// About the most bytes of events one `progress` query returns (a follower asks again for
/// the rest): a bound by size, not count, keeps the answer far below gRPC's 4 MB message
/// limit whatever the events hold, and lets a follower that fell behind (the events of
/// many local activities arrive with one workflow task) catch up in few queries — a
/// closed workflow's query is answered by replaying its history.
const EVENT_BYTES_PER_QUERY: usize = 1 << 20;

/// The workflow. Its fields are what the queries and the update read; the run itself is
/// driven by [`AtomicRun::run`].
#[workflow]
pub struct AtomicRun {
    engine: Arc<Engine>,
    run: Option<Live>,
    answers: VecDeque<Answer>,
}

/// What the queries and the validator read of a run in progress.
struct Live {
    id: RunId,
    store: Arc<MemoryStore>,
    events: Arc<EventLog>,
    /// While paused: the plan and context to check answers with, and the pending waits.
    paused: Option<Paused>,
}

struct Paused {
    plan: Arc<Plan>,
    ctx: RunContext,
    waits: Vec<PendingWait>,
}

impl Live {
    /// The state after the last committed step.
    fn state(&self) -> Map<String, Value> {
        self.store
            .load_state(&self.id, u64::MAX)
            .now_or_never()
            .and_then(Result::ok)
            .unwrap_or_default()
    }
}

/// Every event the run emits, numbered from the first execution's first event.
#[derive(Default)]
struct EventLog {
    before: u64,
    events: Mutex<Vec<RunEvent>>,
}

impl RunSink for EventLog {
    fn emit(&self, event: &RunEvent) {
        // Text pieces are folded into the messages the activity reports; nothing to drop.
        self.events
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(event.clone());
    }
}

impl AtomicRun {
    /// A workflow instance of a worker with `engine`.
    pub(super) fn new(engine: Arc<Engine>) -> Self {
        Self {
            engine,
            run: None,
            answers: VecDeque::new(),
        }
    }
}

/// The interpreter, running (or resuming) the run.
type Interpreting = Pin<Box<dyn Future<Output = Result<RunOutcome, RunError>> + Send>>;

/// How driving the interpreter stopped.
enum Driven {
    /// The interpreter returned.
    Returned(Result<RunOutcome, RunError>),
    /// The history is long: everything started has finished and been committed.
    Quiescent,
}

#[workflow_methods(factory_only)]
impl AtomicRun {
    /// Runs (or goes on with) one atomic run.
    #[run(name = "atomic-run")]
    pub async fn run(
        ctx: &mut WorkflowContext<Self>,
        start: RunStart,
    ) -> WorkflowResult<RunOutcome> {
        let engine = ctx.state(|state| Arc::clone(&state.engine));
        let prepared = engine
            .prepared(&start.workflow)
            .map_err(|message| failed(&message))?;
        let run_id = RunId::new(&start.run_id);
        let store = Arc::new(MemoryStore::new());
        let carried = start.carried.is_some();
        if let Some(run) = start.carried.clone() {
            store
                .adopt(*run)
                .map_err(|error| failed(&error.to_string()))?;
        }
        let events = Arc::new(EventLog {
            before: start.events_before,
            events: Mutex::default(),
        });
        ctx.state_mut(|state| {
            state.run = Some(Live {
                id: run_id.clone(),
                store: Arc::clone(&store),
                events: Arc::clone(&events),
                paused: None,
            });
        });

        let (effects_in, mut effects) = mpsc::unbounded();
        let now_ms = Arc::new(AtomicU64::new(workflow_ms(ctx)));
        let compactable = prepared
            .plan
            .workflow()
            .providers
            .iter()
            .map(|declared| {
                let name = declared.name.value.clone();
                let can = prepared
                    .providers
                    .get(&name)
                    .is_some_and(|provider| provider.can_compact());
                (name, can)
            })
            .collect();
        // Calls that only compute inside the worker run as local activities (decided from
        // the plan's providers, alike on every worker, so a replay issues the same commands).
        let instant: HashSet<String> = prepared
            .plan
            .workflow()
            .providers
            .iter()
            .map(|declared| &declared.name.value)
            .filter(|name| {
                prepared
                    .providers
                    .get(name)
                    .is_some_and(|provider| provider.is_instant())
            })
            .cloned()
            .collect();
        let executor = TemporalExecutor::new(
            &start.run_id,
            effects_in,
            start.workflow.clone(),
            Arc::clone(&now_ms),
            compactable,
        );
        let mut run_ctx = RunContext::new(Arc::new(RedactingStore::new(
            Arc::clone(&store) as Arc<dyn Store>,
            prepared.redactor.clone(),
        )));
        run_ctx.sink = Some(Arc::clone(&events) as Arc<dyn RunSink>);
        run_ctx.stream = StreamModes::ALL;
        run_ctx.log_events = true;
        run_ctx.env = prepared.env.clone();
        run_ctx.files = Arc::clone(&prepared.files);
        run_ctx.base_dir = prepared.base_dir.clone();
        run_ctx.workspace = crate::workspace::Workspace::new(&start.working_dir);
        run_ctx.workflow_path = start.workflow.path.clone();
        run_ctx.workflow_hash = start.workflow.hash.clone();
        run_ctx.subgraphs = Some(Arc::clone(&prepared.subgraphs));
        run_ctx.executor = Arc::new(executor);
        let plan = Arc::clone(&prepared.plan);

        let mut next: Interpreting = if carried {
            let (plan, id, run_ctx) = (Arc::clone(&plan), run_id.clone(), run_ctx.clone());
            Box::pin(async move {
                runtime::resume_with(plan, &id, &ResumeOptions::default(), run_ctx).await
            })
        } else {
            Box::pin(runtime::run_with_id(
                Arc::clone(&plan),
                run_id.clone(),
                start.inputs.clone(),
                run_ctx.clone(),
            ))
        };
        loop {
            let driven = drive(ctx, next, &mut effects, &now_ms, &run_ctx, &instant).await;
            let outcome = match driven {
                Driven::Quiescent => {
                    let carried = store
                        .carry(&run_id)
                        .map_err(|error| failed(&error.to_string()))?;
                    let logged = events.before
                        + events
                            .events
                            .lock()
                            .unwrap_or_else(std::sync::PoisonError::into_inner)
                            .len() as u64;
                    let mut again = start.clone();
                    again.carried = Some(Box::new(carried));
                    again.events_before = logged;
                    ctx.continue_as_new(again, ContinueAsNewOptions::default())?;
                    unreachable!("continue_as_new always ends the execution");
                }
                Driven::Returned(Ok(outcome)) => outcome,
                Driven::Returned(Err(error)) => return Err(failed(&error.to_string())),
            };
            // A paused run is not over here: it waits for its answer.
            let RunEnd::Paused { waits } = &outcome.end else {
                return Ok(outcome);
            };
            ctx.state_mut(|state| {
                if let Some(live) = &mut state.run {
                    live.paused = Some(Paused {
                        plan: Arc::clone(&plan),
                        ctx: run_ctx.clone(),
                        waits: waits.clone(),
                    });
                }
            });
            let answered = ctx.wait_condition(|state| !state.answers.is_empty()).await;
            ctx.state_mut(|state| {
                if let Some(live) = &mut state.run {
                    live.paused = None;
                }
            });
            if answered.is_err() {
                // Cancelled while paused: committed steps stay; the run ends cancelled.
                let _ = store.set_status(&run_id, RunStatus::Cancelled, None).await;
                return Ok(RunOutcome {
                    end: RunEnd::Cancelled,
                    ..outcome
                });
            }
            let answer = ctx
                .state_mut(|state| state.answers.pop_front())
                .expect("the condition saw an answer");
            let options = ResumeOptions {
                answer: Some(answer.answer),
                wait: answer.wait,
                reset: Vec::new(),
                keep_changes: false,
            };
            let plan = Arc::clone(&plan);
            let id = run_id.clone();
            let resumed_ctx = run_ctx.clone();
            next = Box::pin(
                async move { runtime::resume_with(plan, &id, &options, resumed_ctx).await },
            );
        }
    }

    /// The run's record, its events from `since` on, and its state once it is paused or
    /// over: what a follower asks several times a second.
    #[query]
    pub fn progress(&self, _ctx: &WorkflowContextView, since: u64) -> Progress {
        let Some(live) = &self.run else {
            return Progress::default();
        };
        let run = live.store.run(&live.id).now_or_never().and_then(Result::ok);
        let events = live
            .events
            .events
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let from = usize::try_from(since.saturating_sub(live.events.before)).unwrap_or(usize::MAX);
        let from = from.min(events.len());
        let mut sent = Vec::new();
        let mut bytes = 0;
        for event in &events[from..] {
            let value = serde_json::to_value(event).unwrap_or_default();
            let mut counted = Counted::default();
            let _ = serde_json::to_writer(&mut counted, &value);
            if !sent.is_empty() && bytes + counted.0 > EVENT_BYTES_PER_QUERY {
                break;
            }
            bytes += counted.0;
            sent.push(value);
        }
        let to = from + sent.len();
        let paused = live.paused.is_some();
        let settled = paused
            || run
                .as_ref()
                .is_some_and(|run| !matches!(run.status, RunStatus::Running));
        Progress {
            run,
            events: sent,
            next: live.events.before + to as u64,
            total: live.events.before + events.len() as u64,
            state: if settled { live.state() } else { Map::new() },
            paused,
        }
    }

    /// The run with its steps and stored events, and its state (`atomic runs show`).
    #[query]
    pub fn detail(&self, _ctx: &WorkflowContextView) -> Detail {
        let Some(live) = &self.run else {
            return Detail::default();
        };
        Detail {
            detail: live
                .store
                .run_detail(&live.id)
                .now_or_never()
                .and_then(Result::ok),
            state: live.state(),
        }
    }

    /// Refuses an answer the wait would refuse, before it is recorded.
    #[update_validator(answer)]
    fn check_answer(
        &self,
        _ctx: &WorkflowContextView,
        answer: &Answer,
    ) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
        let Some(paused) = self.run.as_ref().and_then(|live| live.paused.as_ref()) else {
            return Err("the run is not paused at a wait".into());
        };
        runtime::check_pending_answer(
            &paused.plan,
            &paused.ctx,
            &paused.waits,
            &answer.answer,
            answer.wait.as_deref(),
        )
        .map_err(|error| error.to_string().into())
    }

    /// Answers the wait the run is paused at; the run goes on.
    #[update]
    pub fn answer(&mut self, _ctx: &mut SyncWorkflowContext<Self>, answer: Answer) {
        self.answers.push_back(answer);
        // Answered: no longer paused, for the next query and the next answer's validator.
        if let Some(live) = &mut self.run {
            live.paused = None;
        }
    }
}

/// A writer that only counts the bytes written to it.
#[derive(Default)]
struct Counted(usize);

impl std::io::Write for Counted {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0 += bytes.len();
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Ends the workflow as failed, for good (a retry would fail the same way).
fn failed(message: &str) -> WorkflowTermination {
    temporalio_sdk::ApplicationFailure::builder(message.to_owned())
        .non_retryable(true)
        .build()
        .into()
}

/// Workflow time, in milliseconds since the epoch.
fn workflow_ms(ctx: &WorkflowContext<AtomicRun>) -> u64 {
    ctx.workflow_time()
        .and_then(|at| at.duration_since(SystemTime::UNIX_EPOCH).ok())
        .map_or(0, |since| {
            u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
        })
}

/// Polls the interpreter and the effects it asks for until it returns, or until the
/// history is long and nothing started is still running.
///
/// The SDK refuses wake-ups that do not come from its own futures, so the interpreter (and
/// the channel it asks through) is polled with a waker of this driver's, which only sets a
/// flag: each of its wake-ups happens while this loop runs (an effect's result delivered,
/// the cancel token set), and the loop polls it again. Only the SDK's futures (activities,
/// timers, the workflow's cancellation) are polled with the SDK's waker.
async fn drive(
    ctx: &WorkflowContext<AtomicRun>,
    mut interpreter: Interpreting,
    effects: &mut mpsc::UnboundedReceiver<Effect>,
    now_ms: &AtomicU64,
    run_ctx: &RunContext,
    instant: &HashSet<String>,
) -> Driven {
    let woken = Arc::new(Flag::default());
    let waker = futures::task::waker(Arc::clone(&woken));
    let mut own = Context::from_waker(&waker);
    let mut in_flight: Vec<InFlight<'_>> = Vec::new();
    let mut held: Vec<Effect> = Vec::new();
    let mut cancelled = Box::pin(ctx.cancelled());
    std::future::poll_fn(|cx| {
        loop {
            woken.0.store(false, Ordering::SeqCst);
            now_ms.store(workflow_ms(ctx), Ordering::Relaxed);
            if let Poll::Ready(returned) = interpreter.as_mut().poll(&mut own) {
                return Poll::Ready(Driven::Returned(returned));
            }
            if !run_ctx.cancel.is_cancelled() && cancelled.as_mut().poll(cx).is_ready() {
                run_ctx.cancel.cancel();
                continue;
            }
            let long = ctx.history_length() >= HISTORY_LIMIT || ctx.continue_as_new_suggested();
            while let Poll::Ready(Some(effect)) = effects.poll_next_unpin(&mut own) {
                if long {
                    held.push(effect);
                } else {
                    in_flight.push(InFlight::start(ctx, effect, instant));
                }
            }
            // Each effect still wanted is polled; one nobody waits for is cancelled.
            in_flight.retain_mut(|effect| effect.poll(cx));
            if woken.0.load(Ordering::SeqCst) {
                continue;
            }
            if long && in_flight.is_empty() && !held.is_empty() {
                return Poll::Ready(Driven::Quiescent);
            }
            return Poll::Pending;
        }
    })
    .await
}

/// The driver's waker: it only records that it was called.
#[derive(Default)]
struct Flag(std::sync::atomic::AtomicBool);

impl futures::task::ArcWake for Flag {
    fn wake_by_ref(arc_self: &Arc<Self>) {
        arc_self.0.store(true, Ordering::SeqCst);
    }
}

/// A future the SDK resolves (an activity, a timer).
type Sdk<'a, T> = Pin<Box<dyn CancellableFuture<Output = T> + 'a>>;

/// An activity or timer started for the interpreter, and where its result goes.
enum InFlight<'a> {
    Agent(
        Sdk<'a, Result<AgentDone, ActivityExecutionError>>,
        Option<oneshot::Sender<AgentDone>>,
    ),
    Command(
        Sdk<'a, Result<CommandDone, ActivityExecutionError>>,
        Option<oneshot::Sender<CommandDone>>,
    ),
    File(
        Sdk<'a, Result<FileDone, ActivityExecutionError>>,
        Option<oneshot::Sender<FileDone>>,
    ),
    Timer(Sdk<'a, TimerResult>, Option<oneshot::Sender<()>>),
}

impl<'a> InFlight<'a> {
    /// Starts `effect`: an activity any worker may pick up, or a local activity on this
    /// worker for what is instant (a file of the run's; a call to an `instant` provider),
    /// whose result is recorded with the workflow task, without the server's round trips to
    /// schedule, start and complete an activity.
    fn start(
        ctx: &'a WorkflowContext<AtomicRun>,
        effect: Effect,
        instant: &HashSet<String>,
    ) -> Self {
        // Runs started before instant effects became local activities replay as they ran:
        // without the patch's marker in their history, `patched` is false for them.
        let local = |ctx: &WorkflowContext<AtomicRun>| ctx.patched(LOCAL_INSTANT_EFFECTS);
        match effect {
            Effect::Agent(call, reply) if instant.contains(&call.provider) && local(ctx) => {
                Self::Agent(
                    Box::pin(ctx.execute_local_activity(
                        Activities::agent,
                        *call,
                        local_activity_options(),
                    )),
                    Some(reply),
                )
            }
            Effect::Agent(call, reply) => Self::Agent(
                Box::pin(ctx.execute_activity(Activities::agent, *call, activity_options())),
                Some(reply),
            ),
            Effect::Command(call, reply) => Self::Command(
                Box::pin(ctx.execute_activity(Activities::command, *call, activity_options())),
                Some(reply),
            ),
            Effect::File(call, reply) if local(ctx) => Self::File(
                Box::pin(ctx.execute_local_activity(
                    Activities::file,
                    call,
                    local_activity_options(),
                )),
                Some(reply),
            ),
            Effect::File(call, reply) => Self::File(
                Box::pin(ctx.execute_activity(Activities::file, call, activity_options())),
                Some(reply),
            ),
            Effect::Timer(duration, reply) => {
                Self::Timer(Box::pin(ctx.timer(duration)), Some(reply))
            }
        }
    }

    /// Polls it; delivers its result when it is done. `false` when it is over (done, or
    /// cancelled because its caller went away: a node timeout, a branch that lost a race).
    fn poll(&mut self, cx: &mut Context<'_>) -> bool {
        match self {
            Self::Agent(future, reply) => step(future, reply, cx, |done| {
                done.unwrap_or_else(|error| AgentDone {
                    result: Err(RemoteFailure {
                        class: ErrorClass::Network,
                        message: format!("the agent call failed on Temporal: {error}"),
                        retry_after_ms: None,
                        retried: false,
                        awaiting: None,
                    }),
                    events: Vec::new(),
                })
            }),
            Self::Command(future, reply) => step(future, reply, cx, |done| {
                done.unwrap_or_else(|error| CommandDone {
                    result: Err(CommandError::Wait(format!(
                        "the command failed on Temporal: {error}"
                    ))),
                    lines: Vec::new(),
                })
            }),
            Self::File(future, reply) => step(future, reply, cx, |done| {
                done.unwrap_or_else(|error| Err(format!("the file failed on Temporal: {error}")))
            }),
            Self::Timer(future, reply) => step(future, reply, cx, |_| ()),
        }
    }
}

/// Polls one SDK future for `reply`: cancels it when nobody waits, delivers when done.
fn step<T, R>(
    future: &mut Sdk<'_, T>,
    reply: &mut Option<oneshot::Sender<R>>,
    cx: &mut Context<'_>,
    deliver: impl FnOnce(T) -> R,
) -> bool {
    if reply.as_ref().is_none_or(oneshot::Sender::is_canceled) {
        future.cancel();
        return false;
    }
    match future.as_mut().poll(cx) {
        Poll::Ready(output) => {
            if let Some(reply) = reply.take() {
                let _ = reply.send(deliver(output));
            }
            false
        }
        Poll::Pending => true,
    }
}

/// Activities run until they end (node timeouts are the interpreter's timers), beating so
/// a dead worker's step moves to another within [`HEARTBEAT_TIMEOUT`]; only such losses
/// are retried by Temporal (a step's own failures come back as results, for its `retry`).
fn activity_options() -> ActivityOptions {
    ActivityOptions::with_start_to_close_timeout(EFFECT_TIMEOUT)
        .heartbeat_timeout(HEARTBEAT_TIMEOUT)
        .retry_policy(retry_policy())
        .build()
}

/// A local activity runs on the worker holding the workflow task, which beats for it; a
/// worker lost mid-task runs it again (it only computes, or rewrites the same file).
fn local_activity_options() -> LocalActivityOptions {
    LocalActivityOptions::builder()
        .start_to_close_timeout(EFFECT_TIMEOUT)
        .retry_policy(retry_policy())
        .build()
}

/// How long an effect may run: node timeouts are the interpreter's own timers.
const EFFECT_TIMEOUT: Duration = Duration::from_secs(7 * 24 * 3600);

/// Retries for an effect whose worker was lost (its own failures are results).
fn retry_policy() -> temporalio_common::RetryPolicy {
    temporalio_common::RetryPolicy::builder()
        .initial_interval(Duration::from_millis(200))
        .maximum_interval(Duration::from_secs(5))
        .maximum_attempts(20)
        .build()
}
