//! The [`Store`] trait: what the runtime and the CLI ask of a checkpoint store.

use std::future::Future;
use std::pin::Pin;

use serde_json::Value;

use super::{
    Acquired, Beat, Checkpoint, Lease, LogPosition, LogTail, NewRun, Owner, PendingWait, RunAmend,
    RunDetail, RunFilter, RunId, RunRecord, RunStatus, State, StepCommit, StepTime, StoreError,
};

/// The future a store operation returns.
pub type StoreFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, StoreError>> + Send + 'a>>;

/// A checkpoint store: runs, their steps (as state deltas), events and pending waits.
///
/// Contract:
/// - [`commit_step`](Store::commit_step) is atomic (step, events and run status together) and
///   durable at the store's durability level when its future resolves; the runtime starts
///   the next step only after that.
/// - Steps are numbered 1, 2, … per run; out-of-order commits fail with
///   [`StoreError::Conflict`] (another process is driving the run).
/// - The state after step `n` is the [`NewRun::state`] with the deltas of the unscoped
///   steps 1..=n applied; stores keep periodic keyframes so this is cheap to load. A
///   scoped step's delta belongs to its block ([`StepCommit::scope`]).
/// - Operations on one store from one task complete in the order they were issued.
pub trait Store: Send + Sync + std::fmt::Debug {
    /// Records a new run (status `running`) and its initial state.
    fn create_run(&self, run: NewRun) -> StoreFuture<'_, ()>;

    /// Commits one finished step with its events and the run's new status.
    fn commit_step<'a>(&'a self, run: &'a RunId, step: StepCommit) -> StoreFuture<'a, ()>;

    /// Appends events outside a step (run start, cancellation), durably.
    fn log_events<'a>(&'a self, run: &'a RunId, events: Vec<Value>) -> StoreFuture<'a, ()>;

    /// Sets the run's status without a step (finished, cancelled, failed before a step);
    /// `error` replaces the run's error. Clears a pending wait unless `status` is `Paused`.
    fn set_status<'a>(
        &'a self,
        run: &'a RunId,
        status: RunStatus,
        error: Option<String>,
    ) -> StoreFuture<'a, ()>;

    /// Pauses the run at `waits` (the waits of its paused blocks) without a step.
    fn pause<'a>(&'a self, run: &'a RunId, waits: Vec<PendingWait>) -> StoreFuture<'a, ()>;

    /// The run, its state after the last committed step, the last unscoped step's cursor
    /// and the scoped steps since.
    fn checkpoint<'a>(&'a self, run: &'a RunId) -> StoreFuture<'a, Checkpoint>;

    /// The state after step `upto_seq` (0: the initial state); a later `upto_seq` than the
    /// last step gives the latest state.
    fn load_state<'a>(&'a self, run: &'a RunId, upto_seq: u64) -> StoreFuture<'a, State>;

    /// The run with this id.
    fn run<'a>(&'a self, run: &'a RunId) -> StoreFuture<'a, RunRecord>;

    /// The one run whose id is or starts with `prefix` (people type prefixes).
    fn resolve<'a>(&'a self, prefix: &'a str) -> StoreFuture<'a, RunId>;

    /// Runs, newest first (`atomic runs`).
    fn list_runs<'a>(&'a self, filter: &'a RunFilter) -> StoreFuture<'a, Vec<RunRecord>>;

    /// A run with its steps and events (`atomic runs show`).
    fn run_detail<'a>(&'a self, run: &'a RunId) -> StoreFuture<'a, RunDetail>;

    /// The run's record and the events logged after `after`, in the order
    /// [`run_detail`](Store::run_detail) lists them: what a view following a run reads
    /// again and again, so stores that can should make it cost what is new, not the run.
    fn log_after<'a>(&'a self, run: &'a RunId, after: LogPosition) -> StoreFuture<'a, LogTail> {
        Box::pin(async move {
            let detail = self.run_detail(run).await?;
            let events: Vec<_> = detail
                .events
                .into_iter()
                .filter(|event| event.seq > after.events)
                .collect();
            let steps: Vec<StepTime> = detail
                .steps
                .into_iter()
                .filter(|step| step.seq > after.step)
                .map(|step| StepTime {
                    seq: step.seq,
                    node_id: step.node_id,
                    started_at: step.started_at,
                    finished_at: step.finished_at,
                })
                .collect();
            let position = LogPosition {
                events: events.last().map_or(after.events, |event| event.seq),
                step: steps.last().map_or(after.step, |step| step.seq),
                ..after
            };
            Ok(LogTail {
                run: detail.run,
                events,
                steps,
                position,
            })
        })
    }

    /// Where the process driving `run` keeps its live feed (see [`super::live`]), for stores
    /// other processes can watch; none for stores in memory.
    fn live_feed(&self, _run: &RunId) -> Option<std::path::PathBuf> {
        None
    }

    /// Deletes a run and its history.
    fn delete_run<'a>(&'a self, run: &'a RunId) -> StoreFuture<'a, ()>;

    /// Copies run `from` into a new run `to`: its record (with `status`, no error, no waits,
    /// `origin` recorded) and its committed steps, keyframes and events up to step `upto`
    /// (`None`: all). Progress of calls in flight and leases are not copied. `to` must not exist.
    ///
    /// [`StoreError::NotFound`] when `from` does not exist, [`StoreError::AlreadyExists`]
    /// when `to` does. The copy's next step is the one after its last copied step (rewind
    /// and fork resume it there).
    fn copy_run<'a>(
        &'a self,
        from: &'a RunId,
        to: &'a RunId,
        upto: Option<u64>,
        status: RunStatus,
        origin: Option<String>,
    ) -> StoreFuture<'a, ()>;

    /// Changes run `run`'s record as `amend` says (its inputs, its workflow file).
    ///
    /// [`StoreError::NotFound`] when the run does not exist.
    fn amend_run<'a>(&'a self, run: &'a RunId, amend: RunAmend) -> StoreFuture<'a, ()>;

    /// Gives the space deleted runs held back to the file system (after `atomic runs
    /// delete` or `prune`); nothing for stores in memory.
    fn compact(&self) -> StoreFuture<'_, ()> {
        Box::pin(async { Ok(()) })
    }

    /// Saves the progress of a call in flight under `key` (an agent's conversation so far,
    /// after each round of tool calls), replacing what `key` held; durable when the future
    /// resolves, so a run resumed after a crash continues the call instead of repeating
    /// the tools it ran.
    fn save_progress<'a>(
        &'a self,
        run: &'a RunId,
        key: &'a str,
        progress: Value,
    ) -> StoreFuture<'a, ()>;

    /// The progress saved under `key`, if any.
    fn load_progress<'a>(&'a self, run: &'a RunId, key: &'a str) -> StoreFuture<'a, Option<Value>>;

    /// Forgets the progress under `key` (its call ended).
    fn clear_progress<'a>(&'a self, run: &'a RunId, key: &'a str) -> StoreFuture<'a, ()>;

    /// Takes `run` for `owner`, atomically: [`StoreError::Owned`] while another live
    /// process holds it; a dead holder's run is taken over. Stores that live in one process
    /// (memory) have no other process to exclude: they always succeed.
    fn acquire<'a>(&'a self, run: &'a RunId, owner: &'a Owner) -> StoreFuture<'a, Acquired> {
        let _ = (run, owner);
        Box::pin(async { Ok(Acquired::Free) })
    }

    /// Renews `owner`'s lease on `run` and says whether `atomic cancel` asked it to stop;
    /// [`StoreError::LeaseLost`] when another process has taken the run over.
    fn heartbeat<'a>(&'a self, run: &'a RunId, owner: &'a Owner) -> StoreFuture<'a, Beat> {
        let _ = (run, owner);
        Box::pin(async { Ok(Beat::default()) })
    }

    /// Gives up `owner`'s lease on `run` (nothing if another holds it).
    fn release<'a>(&'a self, run: &'a RunId, owner: &'a Owner) -> StoreFuture<'a, ()> {
        let _ = (run, owner);
        Box::pin(async { Ok(()) })
    }

    /// The lease on `run`, if a process holds (or held and died holding) it.
    fn lease<'a>(&'a self, run: &'a RunId) -> StoreFuture<'a, Option<Lease>> {
        let _ = run;
        Box::pin(async { Ok(None) })
    }

    /// Asks the holder of `run` to stop (its next heartbeat sees it); `false` when no
    /// process holds it.
    fn request_cancel<'a>(&'a self, run: &'a RunId) -> StoreFuture<'a, bool> {
        let _ = run;
        Box::pin(async { Ok(false) })
    }
}
