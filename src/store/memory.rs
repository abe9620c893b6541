//! [`MemoryStore`]: the [`Store`] contract without persistence (`--store memory`), for tests
//! and benchmarks. Same checks and keyframe policy as the SQLite store; nothing survives
//! the process.

use std::collections::HashMap;
use std::future::ready;
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::Value;

use super::delta::approx_state_len;
use super::keyframe::LiveState;
use super::{
    Checkpoint, EventRecord, Json, KeyframePolicy, NewRun, OpenStep, PendingWait, RunAmend,
    RunDetail, RunFilter, RunId, RunRecord, RunStatus, State, StateDelta, StepCommit, StepRecord,
    StepStatus, Store, StoreError, StoreFuture, Timestamp,
};

/// An in-memory store. Cloning shares the same data.
#[derive(Clone, Debug, Default)]
pub struct MemoryStore {
    runs: Arc<Mutex<HashMap<RunId, MemoryRun>>>,
    policy: KeyframePolicy,
}

#[derive(Debug)]
struct MemoryRun {
    record: RunRecord,
    steps: Vec<KeptStep>,
    /// Events in log order: (step committed with, 0 outside a step; the run's last step when
    /// it was logged; the event).
    events: Vec<(u64, u64, Json)>,
    /// (step, state after it), ascending; the first is the initial state at 0.
    keyframes: Vec<(u64, Arc<State>)>,
    /// The latest output of each node at the first keyframe (none for a run created here).
    base_outputs: State,
    live: LiveState,
    /// Progress of calls in flight, by key.
    progress: HashMap<String, Value>,
}

/// A [`StepRecord`] whose cursor stays as it came (typed, usually): it is serialised only
/// when someone reads it, which for most steps is never.
#[derive(Clone, Debug)]
struct KeptStep {
    seq: u64,
    scope: Option<String>,
    node_id: String,
    started_at: Timestamp,
    finished_at: Timestamp,
    status: StepStatus,
    attempts: u32,
    delta: StateDelta,
    outputs: State,
    cursor: Json,
    error: Option<String>,
}

impl KeptStep {
    fn record(&self) -> StepRecord {
        StepRecord {
            seq: self.seq,
            scope: self.scope.clone(),
            node_id: self.node_id.clone(),
            started_at: self.started_at,
            finished_at: self.finished_at,
            status: self.status,
            attempts: self.attempts,
            delta: self.delta.clone(),
            outputs: self.outputs.clone(),
            cursor: self.cursor.to_value(),
            error: self.error.clone(),
        }
    }
}

impl MemoryStore {
    /// An empty store with the default keyframe policy.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty store with this keyframe policy.
    #[must_use]
    pub fn with_policy(policy: KeyframePolicy) -> Self {
        Self {
            runs: Arc::default(),
            policy,
        }
    }

    /// How many keyframes `run` has (the initial state counts), for tests.
    #[must_use]
    pub fn keyframe_count(&self, run: &RunId) -> usize {
        self.lock().get(run).map_or(0, |data| data.keyframes.len())
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<RunId, MemoryRun>> {
        // A panic while holding the lock cannot leave a run half-updated in a way later
        // calls depend on more than the data itself, so a poisoned lock is recovered.
        self.runs
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn with_run<T>(
        &self,
        run: &RunId,
        f: impl FnOnce(&mut MemoryRun) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let mut runs = self.lock();
        let data = runs
            .get_mut(run)
            .ok_or_else(|| StoreError::NotFound(run.to_string()))?;
        f(data)
    }

    fn create(&self, new: NewRun) -> Result<(), StoreError> {
        let mut runs = self.lock();
        if runs.contains_key(&new.id) {
            return Err(StoreError::AlreadyExists(new.id.to_string()));
        }
        let bytes = approx_state_len(&new.state);
        let (record, state) = new.into_record(Timestamp::now());
        let keyframes = vec![(0, Arc::new(state.clone()))];
        let live = LiveState::from_keyframe(state, State::new(), 0, bytes);
        let run = MemoryRun {
            record,
            steps: Vec::new(),
            events: Vec::new(),
            keyframes,
            base_outputs: State::new(),
            live,
            progress: HashMap::new(),
        };
        runs.insert(run.record.id.clone(), run);
        Ok(())
    }

    fn commit(&self, run: &RunId, step: StepCommit) -> Result<(), StoreError> {
        let policy = self.policy;
        self.with_run(run, |data| {
            let expected = data.record.steps + 1;
            if step.seq != expected {
                return Err(StoreError::Conflict {
                    run: run.to_string(),
                    expected,
                    got: step.seq,
                });
            }
            // A scoped step's delta and outputs are its block's, not the run's.
            let (empty, no_outputs) = (StateDelta::new(), State::new());
            let (applied, outputs) = if step.scope.is_some() {
                (&empty, &no_outputs)
            } else {
                (&step.delta, &step.outputs)
            };
            let due = data
                .live
                .advance(step.seq, applied, outputs, applied.approx_len(), policy)
                .map_err(|error| corrupt(run, &error))?;
            if due {
                data.keyframes
                    .push((step.seq, Arc::new(data.live.state.clone())));
                let bytes = approx_state_len(&data.live.state);
                data.live.keyframe_written(bytes);
            }
            push_events(data, step.seq, step.seq, step.events);
            let record = &mut data.record;
            record.steps = step.seq;
            record.status = step.run_status;
            record.updated_at = Timestamp::now();
            if step.run_status == RunStatus::Failed {
                record.error.clone_from(&step.error);
            }
            record.waits = match (step.run_status, &step.wait) {
                (RunStatus::Paused, Some(wait)) => vec![wait.clone()],
                _ => Vec::new(),
            };
            data.steps.push(KeptStep {
                seq: step.seq,
                scope: step.scope,
                node_id: step.node_id,
                started_at: step.started_at,
                finished_at: step.finished_at,
                status: step.status,
                attempts: step.attempts,
                delta: step.delta,
                outputs: step.outputs,
                cursor: step.cursor,
                error: step.error,
            });
            Ok(())
        })
    }

    fn state_at(&self, run: &RunId, upto: u64) -> Result<State, StoreError> {
        self.with_run(run, |data| state_after(data, run, upto))
    }

    fn resolve_prefix(&self, prefix: &str) -> Result<RunId, StoreError> {
        let runs = self.lock();
        let exact = RunId::new(prefix);
        if runs.contains_key(&exact) {
            return Ok(exact);
        }
        let mut matches: Vec<&RunId> = runs
            .keys()
            .filter(|id| id.as_str().starts_with(prefix))
            .collect();
        matches.sort();
        match matches.as_slice() {
            [] => Err(StoreError::NotFound(prefix.to_owned())),
            [one] => Ok((*one).clone()),
            many => Err(StoreError::Ambiguous {
                prefix: prefix.to_owned(),
                matches: many.iter().take(5).map(ToString::to_string).collect(),
            }),
        }
    }

    /// [`Store::copy_run`]: the steps, events and keyframes up to `upto`, and the live
    /// state rebuilt as of the last step copied.
    fn copy(
        &self,
        from: &RunId,
        to: &RunId,
        upto: Option<u64>,
        status: RunStatus,
        origin: Option<String>,
    ) -> Result<(), StoreError> {
        let upto = upto.unwrap_or(u64::MAX);
        let mut runs = self.lock();
        let source = runs
            .get(from)
            .ok_or_else(|| StoreError::NotFound(from.to_string()))?;
        if runs.contains_key(to) {
            return Err(StoreError::AlreadyExists(to.to_string()));
        }
        let steps: Vec<KeptStep> = source
            .steps
            .iter()
            .filter(|step| step.seq <= upto)
            .cloned()
            .collect();
        let last = steps.last().map_or(0, |step| step.seq);
        let live = if last == source.live.seq {
            source.live.clone()
        } else {
            let state = state_after(source, from, last)?;
            let bytes = approx_state_len(&state);
            LiveState::from_keyframe(state, outputs_at(source, last), last, bytes)
        };
        let record = RunRecord {
            id: to.clone(),
            status,
            updated_at: Timestamp::now(),
            steps: last,
            error: None,
            waits: Vec::new(),
            origin,
            ..source.record.clone()
        };
        let copy = MemoryRun {
            record,
            steps,
            events: source
                .events
                .iter()
                .filter(|(_, at, _)| *at <= upto)
                .cloned()
                .collect(),
            keyframes: source
                .keyframes
                .iter()
                .filter(|(seq, _)| *seq <= upto)
                .cloned()
                .collect(),
            base_outputs: source.base_outputs.clone(),
            live,
            progress: HashMap::new(),
        };
        runs.insert(to.clone(), copy);
        Ok(())
    }
}

/// The state of `run` (kept as `data`) after step `upto`: its latest keyframe at or before
/// it, then the later unscoped steps' deltas.
fn state_after(data: &MemoryRun, run: &RunId, upto: u64) -> Result<State, StoreError> {
    if upto >= data.live.seq {
        return Ok(data.live.state.clone());
    }
    // A run adopted from a carry keeps no state before the step it was carried at.
    let Some((base_seq, base)) = data.keyframes.iter().rev().find(|(seq, _)| *seq <= upto) else {
        return Err(StoreError::NotFound(format!(
            "the state of run `{run}` after step {upto} (this copy of the run starts at step {})",
            data.keyframes.first().map_or(0, |(seq, _)| *seq)
        )));
    };
    let mut state = State::clone(base);
    for step in data
        .steps
        .iter()
        .filter(|s| s.scope.is_none() && s.seq > *base_seq && s.seq <= upto)
    {
        step.delta
            .apply(&mut state)
            .map_err(|error| corrupt(run, &error))?;
    }
    Ok(state)
}

/// The latest output of each node after step `upto` of `run`: its outputs at its first
/// keyframe, then each later unscoped step's.
fn outputs_at(run: &MemoryRun, upto: u64) -> State {
    let base = run.keyframes.first().map_or(0, |(seq, _)| *seq);
    let mut outputs = run.base_outputs.clone();
    for step in run
        .steps
        .iter()
        .filter(|step| step.scope.is_none() && step.seq > base && step.seq <= upto)
    {
        outputs.extend(
            step.outputs
                .iter()
                .map(|(node, value)| (node.clone(), value.clone())),
        );
    }
    outputs
}

/// A run taken out of one [`MemoryStore`] to go on in another (a Temporal workflow that
/// continues as new): its record, its state and outputs at its last unscoped step, the steps
/// since (the blocks it is inside), the progress of its calls, and a summary of each
/// earlier step (no delta, outputs or cursor). Its event log is not carried.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CarriedRun {
    /// The run.
    pub record: RunRecord,
    /// The last unscoped step.
    pub seq: u64,
    /// The state after it.
    pub state: State,
    /// The node outputs after it.
    pub outputs: State,
    /// Every step: the last unscoped one and those after it whole, earlier ones summarised.
    pub steps: Vec<StepRecord>,
    /// Progress of calls in flight, by key.
    pub progress: HashMap<String, Value>,
}

impl MemoryStore {
    /// Takes run `run` out as a [`CarriedRun`] (it stays in this store too).
    ///
    /// # Errors
    /// [`StoreError::NotFound`] when the store has no such run.
    pub fn carry(&self, run: &RunId) -> Result<CarriedRun, StoreError> {
        self.with_run(run, |data| {
            let top = data.steps.iter().rposition(|step| step.scope.is_none());
            let whole_from = top.unwrap_or(0);
            let steps = data
                .steps
                .iter()
                .enumerate()
                .map(|(index, step)| {
                    let mut record = step.record();
                    if index < whole_from {
                        record.delta = StateDelta::new();
                        record.outputs = State::new();
                        record.cursor = Value::Null;
                    }
                    record
                })
                .collect();
            Ok(CarriedRun {
                record: data.record.clone(),
                seq: data.live.seq,
                state: data.live.state.clone(),
                outputs: data.live.outputs.clone(),
                steps,
                progress: data.progress.clone(),
            })
        })
    }

    /// Puts a carried run in this store, as it was when carried.
    ///
    /// # Errors
    /// [`StoreError::AlreadyExists`] when the store has a run of that id.
    pub fn adopt(&self, carried: CarriedRun) -> Result<(), StoreError> {
        let mut runs = self.lock();
        if runs.contains_key(&carried.record.id) {
            return Err(StoreError::AlreadyExists(carried.record.id.to_string()));
        }
        let bytes = approx_state_len(&carried.state);
        let keyframes = vec![(carried.seq, Arc::new(carried.state.clone()))];
        let live = LiveState::from_keyframe(carried.state, carried.outputs, carried.seq, bytes);
        let steps = carried
            .steps
            .into_iter()
            .map(|step| KeptStep {
                seq: step.seq,
                scope: step.scope,
                node_id: step.node_id,
                started_at: step.started_at,
                finished_at: step.finished_at,
                status: step.status,
                attempts: step.attempts,
                delta: step.delta,
                outputs: step.outputs,
                cursor: Json::from(step.cursor),
                error: step.error,
            })
            .collect();
        let run = MemoryRun {
            record: carried.record,
            steps,
            events: Vec::new(),
            keyframes,
            base_outputs: live.outputs.clone(),
            live,
            progress: carried.progress,
        };
        runs.insert(run.record.id.clone(), run);
        Ok(())
    }
}

fn corrupt(run: &RunId, error: &impl ToString) -> StoreError {
    StoreError::Corrupt {
        run: run.to_string(),
        message: error.to_string(),
    }
}

/// Logs `events` as committed with `step` (0: outside a step) after the run's step `at`.
fn push_events(data: &mut MemoryRun, step: u64, at: u64, events: impl IntoIterator<Item = Json>) {
    data.events
        .extend(events.into_iter().map(|event| (step, at, event)));
}

impl Store for MemoryStore {
    fn create_run(&self, run: NewRun) -> StoreFuture<'_, ()> {
        Box::pin(ready(self.create(run)))
    }

    fn commit_step<'a>(&'a self, run: &'a RunId, step: StepCommit) -> StoreFuture<'a, ()> {
        Box::pin(ready(self.commit(run, step)))
    }

    fn log_events<'a>(&'a self, run: &'a RunId, events: Vec<Value>) -> StoreFuture<'a, ()> {
        Box::pin(ready(self.with_run(run, |data| {
            let at = data.record.steps;
            push_events(data, 0, at, events.into_iter().map(Json::from));
            Ok(())
        })))
    }

    fn set_status<'a>(
        &'a self,
        run: &'a RunId,
        status: RunStatus,
        error: Option<String>,
    ) -> StoreFuture<'a, ()> {
        Box::pin(ready(self.with_run(run, |data| {
            data.record.status = status;
            data.record.error = error;
            data.record.updated_at = Timestamp::now();
            if status != RunStatus::Paused {
                data.record.waits.clear();
            }
            Ok(())
        })))
    }

    fn pause<'a>(&'a self, run: &'a RunId, waits: Vec<PendingWait>) -> StoreFuture<'a, ()> {
        Box::pin(ready(self.with_run(run, |data| {
            data.record.status = RunStatus::Paused;
            data.record.updated_at = Timestamp::now();
            data.record.waits = waits;
            Ok(())
        })))
    }

    fn checkpoint<'a>(&'a self, run: &'a RunId) -> StoreFuture<'a, Checkpoint> {
        Box::pin(ready(self.with_run(run, |data| {
            let top = data.steps.iter().rposition(|step| step.scope.is_none());
            let open = data.steps[top.map_or(0, |top| top + 1)..]
                .iter()
                .map(|step| OpenStep {
                    seq: step.seq,
                    scope: step.scope.clone().unwrap_or_default(),
                    status: step.status,
                    cursor: step.cursor.to_value(),
                })
                .collect();
            Ok(Checkpoint {
                run: data.record.clone(),
                seq: data.live.seq,
                state: data.live.state.clone(),
                outputs: data.live.outputs.clone(),
                cursor: top.map(|top| data.steps[top].cursor.to_value()),
                open,
            })
        })))
    }

    fn load_state<'a>(&'a self, run: &'a RunId, upto_seq: u64) -> StoreFuture<'a, State> {
        Box::pin(ready(self.state_at(run, upto_seq)))
    }

    fn run<'a>(&'a self, run: &'a RunId) -> StoreFuture<'a, RunRecord> {
        Box::pin(ready(self.with_run(run, |data| Ok(data.record.clone()))))
    }

    fn resolve<'a>(&'a self, prefix: &'a str) -> StoreFuture<'a, RunId> {
        Box::pin(ready(self.resolve_prefix(prefix)))
    }

    fn list_runs<'a>(&'a self, filter: &'a RunFilter) -> StoreFuture<'a, Vec<RunRecord>> {
        let mut runs: Vec<RunRecord> = self
            .lock()
            .values()
            .map(|data| data.record.clone())
            .filter(|record| filter.matches(record))
            .collect();
        runs.sort_by(|a, b| b.id.cmp(&a.id));
        runs.truncate(filter.limit.unwrap_or(usize::MAX));
        Box::pin(ready(Ok(runs)))
    }

    fn run_detail<'a>(&'a self, run: &'a RunId) -> StoreFuture<'a, RunDetail> {
        Box::pin(ready(self.with_run(run, |data| {
            Ok(RunDetail {
                run: data.record.clone(),
                steps: data.steps.iter().map(KeptStep::record).collect(),
                events: (1..)
                    .zip(&data.events)
                    .map(|(seq, (step, _, event))| EventRecord {
                        seq,
                        step: *step,
                        event: event.to_value(),
                    })
                    .collect(),
            })
        })))
    }

    fn delete_run<'a>(&'a self, run: &'a RunId) -> StoreFuture<'a, ()> {
        let removed = self.lock().remove(run);
        Box::pin(ready(
            removed
                .map(drop)
                .ok_or_else(|| StoreError::NotFound(run.to_string())),
        ))
    }

    fn amend_run<'a>(&'a self, run: &'a RunId, amend: RunAmend) -> StoreFuture<'a, ()> {
        Box::pin(ready(self.with_run(run, |data| {
            amend.apply(&mut data.record);
            Ok(())
        })))
    }

    fn copy_run<'a>(
        &'a self,
        from: &'a RunId,
        to: &'a RunId,
        upto: Option<u64>,
        status: RunStatus,
        origin: Option<String>,
    ) -> StoreFuture<'a, ()> {
        Box::pin(ready(self.copy(from, to, upto, status, origin)))
    }

    fn save_progress<'a>(
        &'a self,
        run: &'a RunId,
        key: &'a str,
        progress: Value,
    ) -> StoreFuture<'a, ()> {
        let mut runs = self.lock();
        Box::pin(ready(match runs.get_mut(run) {
            Some(kept) => {
                kept.progress.insert(key.to_owned(), progress);
                Ok(())
            }
            None => Err(StoreError::NotFound(run.to_string())),
        }))
    }

    fn load_progress<'a>(&'a self, run: &'a RunId, key: &'a str) -> StoreFuture<'a, Option<Value>> {
        let runs = self.lock();
        Box::pin(ready(match runs.get(run) {
            Some(kept) => Ok(kept.progress.get(key).cloned()),
            None => Err(StoreError::NotFound(run.to_string())),
        }))
    }

    fn clear_progress<'a>(&'a self, run: &'a RunId, key: &'a str) -> StoreFuture<'a, ()> {
        if let Some(kept) = self.lock().get_mut(run) {
            kept.progress.remove(key);
        }
        Box::pin(ready(Ok(())))
    }
}

#[cfg(test)]
mod tests {
    use super::super::conformance;
    use super::*;

    #[tokio::test]
    async fn round_trip() {
        conformance::round_trip(&MemoryStore::new()).await;
    }

    #[tokio::test]
    async fn following_the_log_reads_each_event_once() {
        conformance::following_the_log_reads_each_event_once(&MemoryStore::new()).await;
    }

    #[tokio::test]
    async fn out_of_order_steps_conflict() {
        conformance::out_of_order_steps_conflict(&MemoryStore::new()).await;
    }

    #[tokio::test]
    async fn progress_is_kept_by_key() {
        conformance::progress_is_kept_by_key(&MemoryStore::new()).await;
    }

    #[tokio::test]
    async fn keyframes_and_deltas_reconstruct() {
        let policy = KeyframePolicy {
            every_steps: 7,
            min_bytes: 0,
        };
        let store = MemoryStore::with_policy(policy);
        conformance::keyframes_and_deltas_reconstruct(&store, 50).await;
        let keyframes = store.keyframe_count(&RunId::new("01cccccccccccc"));
        assert!((2..=8).contains(&keyframes), "{keyframes} keyframes");
    }

    #[tokio::test]
    async fn pause_fail_and_list() {
        conformance::pause_fail_and_list(&MemoryStore::new()).await;
    }

    #[tokio::test]
    async fn resolves_prefixes_and_deletes() {
        conformance::resolves_prefixes_and_deletes(&MemoryStore::new()).await;
    }

    #[tokio::test]
    async fn scoped_steps_stay_open_until_the_block_ends() {
        conformance::scoped_steps_stay_open_until_the_block_ends(&MemoryStore::new()).await;
    }

    #[tokio::test]
    async fn amends_a_run() {
        conformance::amends_a_run(&MemoryStore::new()).await;
    }

    #[tokio::test]
    async fn copies_a_run_up_to_a_step() {
        let store = MemoryStore::with_policy(KeyframePolicy {
            every_steps: 2,
            min_bytes: usize::MAX,
        });
        conformance::copies_a_run_up_to_a_step(&store).await;
        assert_eq!(
            store.keyframe_count(&RunId::new("01copytotototo")),
            2,
            "the keyframes at 0 and 2 copied, not the one at 4"
        );
    }
}
