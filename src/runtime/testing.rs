//! Test support for the interpreter: plans compiled from inline KDL, and a [`Harness`] —
//! a memory store and a [`ScriptedExecutor`] on a [`ManualClock`] — that hands out run
//! contexts over them. A context is what one process has, so a test crashes a run by
//! dropping its future and resumes it with a fresh context over the same store, as
//! `atomic resume` would after `kill -9`.

use std::future::Future;
use std::path::Path;
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::time::Duration;

use serde_json::Map;

use super::executor::{ManualClock, ScriptedExecutor};
use super::{ResumeOptions, RunContext, RunError, RunOutcome};
use crate::lower::Plan;
use crate::store::{MemoryStore, RunId};

/// The plan of the workflow `kdl`. Compiled through the whole static pipeline (test code
/// only: the runtime itself never imports `compile`), so tests read like workflows.
///
/// # Panics
/// When the workflow does not compile, listing its errors.
pub(crate) fn plan(kdl: &str) -> Arc<Plan> {
    let mut sources = crate::source::Sources::new();
    let file = sources.add(Path::new("test.kdl"), kdl);
    let files = crate::source::MemoryFiles::new();
    let compiled =
        crate::compile::compile(&mut sources, file, &files, &crate::compile::Config::new());
    let errors: Vec<String> = compiled
        .diagnostics
        .iter()
        .filter(|diagnostic| diagnostic.is_error())
        .map(|diagnostic| format!("{}: {}", diagnostic.code.name(), diagnostic.message))
        .collect();
    let plan = compiled
        .plan
        .unwrap_or_else(|| panic!("the test workflow does not compile: {errors:#?}"));
    Arc::new(plan)
}

/// The id every harness run has, so messages are the same in every test.
pub(crate) fn run_id() -> RunId {
    RunId::new("r1")
}

/// A store, a clock and a scripted executor shared by every context a test makes.
pub(crate) struct Harness {
    pub(crate) store: Arc<MemoryStore>,
    pub(crate) clock: Arc<ManualClock>,
    pub(crate) executor: Arc<ScriptedExecutor>,
}

/// How far [`Harness::until_timer`] got.
#[derive(Debug)]
pub(crate) enum Progress<T> {
    /// The run ended.
    Ended(T),
    /// The run waits on the clock; the first timer is due in this long.
    Waiting(Duration),
}

impl Harness {
    pub(crate) fn new() -> Self {
        let clock = ManualClock::new();
        Self {
            store: Arc::new(MemoryStore::new()),
            executor: Arc::new(ScriptedExecutor::new(clock.clone())),
            clock,
        }
    }

    /// A fresh context (one process's) over the shared store and executor.
    pub(crate) fn context(&self) -> RunContext {
        let mut ctx = RunContext::new(self.store.clone());
        ctx.executor = self.executor.clone();
        ctx
    }

    /// Starts run [`run_id`] of `plan` with no inputs.
    pub(crate) fn start(
        &self,
        plan: &Arc<Plan>,
    ) -> impl Future<Output = Result<RunOutcome, RunError>> + use<> {
        super::run_with_id(plan.clone(), run_id(), Map::new(), self.context())
    }

    /// Resumes run [`run_id`] of `plan` with `answer` (for the wait `wait` names).
    pub(crate) fn resume(
        &self,
        plan: &Arc<Plan>,
        answer: Option<&str>,
        wait: Option<&str>,
    ) -> impl Future<Output = Result<RunOutcome, RunError>> + use<> {
        self.resume_with(
            plan,
            ResumeOptions {
                answer: answer.map(str::to_owned),
                wait: wait.map(str::to_owned),
                reset: Vec::new(),
                keep_changes: false,
            },
        )
    }

    /// Resumes run [`run_id`] of `plan` with `options`.
    pub(crate) fn resume_with(
        &self,
        plan: &Arc<Plan>,
        options: ResumeOptions,
    ) -> impl Future<Output = Result<RunOutcome, RunError>> + use<> {
        let plan = plan.clone();
        let ctx = self.context();
        async move { super::resume_with(plan, &run_id(), &options, ctx).await }
    }

    /// Runs `run` until a call scripted to hang is in flight, then drops it: what `kill -9`
    /// leaves (every step committed before, nothing of the one in flight).
    ///
    /// # Panics
    /// When the run ends first.
    pub(crate) async fn crash<T: std::fmt::Debug>(&self, run: impl Future<Output = T>) {
        tokio::select! {
            biased;
            () = self.executor.hung() => {}
            ended = run => panic!("the run ended before it reached the hang: {ended:?}"),
        }
    }

    /// Polls `run` until it ends or waits on the clock.
    pub(crate) async fn until_timer<F: Future>(&self, run: Pin<&mut F>) -> Progress<F::Output> {
        tokio::select! {
            biased;
            ended = run => Progress::Ended(ended),
            due = self.clock.next_timer() => Progress::Waiting(due),
        }
    }

    /// Runs `run` to its end, moving the clock to each timer's deadline whenever the run
    /// waits on one (time passes only when nothing else can happen).
    pub(crate) async fn with_time<F: Future>(&self, run: F) -> F::Output {
        let mut run = pin!(run);
        loop {
            match self.until_timer(run.as_mut()).await {
                Progress::Ended(ended) => return ended,
                Progress::Waiting(due) => self.clock.advance(due),
            }
        }
    }
}
