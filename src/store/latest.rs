//! [`LatestStore`]: `--store memory` (and dry runs), a store that keeps only each run's
//! latest checkpoint. A run stored in memory cannot be inspected or resumed once the
//! process ends, so keeping its step history (as [`MemoryStore`](super::MemoryStore) does,
//! for tests) would only grow the process by every step's delta and cursor.

use std::sync::Mutex;

use rustc_hash::FxHashMap;
use serde_json::Value;

use super::{
    Checkpoint, Json, NewRun, OpenStep, PendingWait, RunAmend, RunDetail, RunFilter, RunId,
    RunRecord, RunStatus, State, StepCommit, Store, StoreError, StoreFuture, Timestamp,
};

#[derive(Debug)]
struct Latest {
    record: RunRecord,
    state: State,
    /// Serialised only if the run is resumed (a paused run in memory cannot be).
    cursor: Option<Json>,
    /// The latest output of each node.
    outputs: State,
    /// Scoped steps since the last unscoped one: (seq, scope, status, cursor).
    open: Vec<(u64, String, super::StepStatus, Json)>,
    /// Progress of calls in flight, by key.
    progress: std::collections::HashMap<String, serde_json::Value>,
}

/// Runs in memory, each only as of its last committed step: `run_detail` has no steps or
/// events, and `load_state` only the latest state.
#[derive(Debug, Default)]
pub struct LatestStore {
    runs: Mutex<FxHashMap<RunId, Latest>>,
}

impl LatestStore {
    /// An empty store.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    fn with<T>(
        &self,
        run: &RunId,
        f: impl FnOnce(&mut Latest) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let mut runs = self
            .runs
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let latest = runs
            .get_mut(run)
            .ok_or_else(|| StoreError::NotFound(run.to_string()))?;
        f(latest)
    }

    fn records(&self) -> Vec<RunRecord> {
        let runs = self
            .runs
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut records: Vec<RunRecord> = runs.values().map(|run| run.record.clone()).collect();
        records.sort_by(|a, b| b.id.cmp(&a.id));
        records
    }
}

fn ready<'a, T: Send + 'a>(result: Result<T, StoreError>) -> StoreFuture<'a, T> {
    Box::pin(std::future::ready(result))
}

impl Store for LatestStore {
    fn create_run(&self, run: NewRun) -> StoreFuture<'_, ()> {
        let mut runs = self
            .runs
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if runs.contains_key(&run.id) {
            return ready(Err(StoreError::AlreadyExists(run.id.to_string())));
        }
        let (record, state) = run.into_record(Timestamp::now());
        runs.insert(
            record.id.clone(),
            Latest {
                record,
                state,
                cursor: None,
                outputs: State::new(),
                open: Vec::new(),
                progress: std::collections::HashMap::new(),
            },
        );
        ready(Ok(()))
    }

    fn commit_step<'a>(&'a self, run: &'a RunId, step: StepCommit) -> StoreFuture<'a, ()> {
        ready(self.with(run, |latest| {
            let expected = latest.record.steps + 1;
            if step.seq != expected {
                return Err(StoreError::Conflict {
                    run: run.to_string(),
                    expected,
                    got: step.seq,
                });
            }
            if step.scope.is_none() {
                step.delta
                    .apply(&mut latest.state)
                    .map_err(|error| StoreError::Corrupt {
                        run: run.to_string(),
                        message: error.to_string(),
                    })?;
                latest.outputs.extend(step.outputs);
            }
            latest.record.steps = step.seq;
            latest.record.status = step.run_status;
            latest.record.updated_at = step.finished_at;
            latest.record.waits = match (step.run_status, step.wait) {
                (RunStatus::Paused, Some(wait)) => vec![wait],
                _ => Vec::new(),
            };
            if step.run_status == RunStatus::Failed {
                latest.record.error = step.error;
            }
            match step.scope {
                Some(scope) => latest
                    .open
                    .push((step.seq, scope, step.status, step.cursor)),
                None => {
                    latest.cursor = Some(step.cursor);
                    latest.open.clear();
                }
            }
            Ok(())
        }))
    }

    fn log_events<'a>(&'a self, run: &'a RunId, _events: Vec<Value>) -> StoreFuture<'a, ()> {
        ready(self.with(run, |_| Ok(())))
    }

    fn set_status<'a>(
        &'a self,
        run: &'a RunId,
        status: RunStatus,
        error: Option<String>,
    ) -> StoreFuture<'a, ()> {
        ready(self.with(run, |latest| {
            latest.record.status = status;
            latest.record.updated_at = Timestamp::now();
            if error.is_some() {
                latest.record.error = error;
            }
            if status != RunStatus::Paused {
                latest.record.waits.clear();
            }
            Ok(())
        }))
    }

    fn pause<'a>(&'a self, run: &'a RunId, waits: Vec<PendingWait>) -> StoreFuture<'a, ()> {
        ready(self.with(run, |latest| {
            latest.record.status = RunStatus::Paused;
            latest.record.updated_at = Timestamp::now();
            latest.record.waits = waits;
            Ok(())
        }))
    }

    fn checkpoint<'a>(&'a self, run: &'a RunId) -> StoreFuture<'a, Checkpoint> {
        ready(self.with(run, |latest| {
            Ok(Checkpoint {
                run: latest.record.clone(),
                seq: latest.record.steps,
                state: latest.state.clone(),
                outputs: latest.outputs.clone(),
                cursor: latest.cursor.as_ref().map(Json::to_value),
                open: latest
                    .open
                    .iter()
                    .map(|(seq, scope, status, cursor)| OpenStep {
                        seq: *seq,
                        scope: scope.clone(),
                        status: *status,
                        cursor: cursor.to_value(),
                    })
                    .collect(),
            })
        }))
    }

    fn load_state<'a>(&'a self, run: &'a RunId, upto_seq: u64) -> StoreFuture<'a, State> {
        ready(self.with(run, |latest| {
            if upto_seq >= latest.record.steps {
                Ok(latest.state.clone())
            } else {
                Err(StoreError::Corrupt {
                    run: run.to_string(),
                    message: format!(
                        "the state after step {upto_seq} was not kept (in-memory runs keep only their latest state)"
                    ),
                })
            }
        }))
    }

    fn run<'a>(&'a self, run: &'a RunId) -> StoreFuture<'a, RunRecord> {
        ready(self.with(run, |latest| Ok(latest.record.clone())))
    }

    fn resolve<'a>(&'a self, prefix: &'a str) -> StoreFuture<'a, RunId> {
        let matches: Vec<RunId> = self
            .records()
            .into_iter()
            .map(|record| record.id)
            .filter(|id| id.as_str().starts_with(prefix))
            .collect();
        ready(match matches.as_slice() {
            [] => Err(StoreError::NotFound(prefix.to_owned())),
            [only] => Ok(only.clone()),
            _ if matches.iter().any(|id| id.as_str() == prefix) => Ok(RunId::new(prefix)),
            _ => Err(StoreError::Ambiguous {
                prefix: prefix.to_owned(),
                matches: matches.iter().take(5).map(ToString::to_string).collect(),
            }),
        })
    }

    fn list_runs<'a>(&'a self, filter: &'a RunFilter) -> StoreFuture<'a, Vec<RunRecord>> {
        let mut records: Vec<RunRecord> = self
            .records()
            .into_iter()
            .filter(|record| filter.matches(record))
            .collect();
        if let Some(limit) = filter.limit {
            records.truncate(limit);
        }
        ready(Ok(records))
    }

    fn run_detail<'a>(&'a self, run: &'a RunId) -> StoreFuture<'a, RunDetail> {
        ready(self.with(run, |latest| {
            Ok(RunDetail {
                run: latest.record.clone(),
                steps: Vec::new(),
                events: Vec::new(),
            })
        }))
    }

    fn delete_run<'a>(&'a self, run: &'a RunId) -> StoreFuture<'a, ()> {
        let mut runs = self
            .runs
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        ready(match runs.remove(run) {
            Some(_) => Ok(()),
            None => Err(StoreError::NotFound(run.to_string())),
        })
    }

    fn amend_run<'a>(&'a self, run: &'a RunId, amend: RunAmend) -> StoreFuture<'a, ()> {
        let mut runs = self
            .runs
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        ready(match runs.get_mut(run) {
            Some(kept) => {
                amend.apply(&mut kept.record);
                Ok(())
            }
            None => Err(StoreError::NotFound(run.to_string())),
        })
    }

    /// Copies only the latest checkpoint: a copy up to an earlier step is refused (those
    /// states were not kept).
    fn copy_run<'a>(
        &'a self,
        from: &'a RunId,
        to: &'a RunId,
        upto: Option<u64>,
        status: RunStatus,
        origin: Option<String>,
    ) -> StoreFuture<'a, ()> {
        let mut runs = self
            .runs
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let Some(source) = runs.get(from) else {
            return ready(Err(StoreError::NotFound(from.to_string())));
        };
        if runs.contains_key(to) {
            return ready(Err(StoreError::AlreadyExists(to.to_string())));
        }
        if let Some(upto) = upto.filter(|upto| *upto < source.record.steps) {
            return ready(Err(StoreError::NotFound(format!(
                "the state of run `{from}` after step {upto} (in-memory runs keep only their latest state)"
            ))));
        }
        let copy = Latest {
            record: RunRecord {
                id: to.clone(),
                status,
                updated_at: Timestamp::now(),
                error: None,
                waits: Vec::new(),
                origin,
                ..source.record.clone()
            },
            state: source.state.clone(),
            cursor: source.cursor.clone(),
            outputs: source.outputs.clone(),
            open: source.open.clone(),
            progress: std::collections::HashMap::new(),
        };
        runs.insert(to.clone(), copy);
        ready(Ok(()))
    }

    fn save_progress<'a>(
        &'a self,
        run: &'a RunId,
        key: &'a str,
        progress: serde_json::Value,
    ) -> StoreFuture<'a, ()> {
        let mut runs = self
            .runs
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        ready(match runs.get_mut(run) {
            Some(latest) => {
                latest.progress.insert(key.to_owned(), progress);
                Ok(())
            }
            None => Err(StoreError::NotFound(run.to_string())),
        })
    }

    fn load_progress<'a>(
        &'a self,
        run: &'a RunId,
        key: &'a str,
    ) -> StoreFuture<'a, Option<serde_json::Value>> {
        let runs = self
            .runs
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        ready(match runs.get(run) {
            Some(latest) => Ok(latest.progress.get(key).cloned()),
            None => Err(StoreError::NotFound(run.to_string())),
        })
    }

    fn clear_progress<'a>(&'a self, run: &'a RunId, key: &'a str) -> StoreFuture<'a, ()> {
        if let Some(latest) = self
            .runs
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get_mut(run)
        {
            latest.progress.remove(key);
        }
        ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::store::{Change, StateDelta, StepStatus};

    fn step(seq: u64, n: i64) -> StepCommit {
        let mut delta = StateDelta::new();
        delta.record("n", Change::Set(json!(n)), &json!(n));
        StepCommit {
            seq,
            scope: None,
            node_id: "inc".into(),
            outputs: State::new(),
            started_at: Timestamp(0),
            finished_at: Timestamp(0),
            status: StepStatus::Completed,
            attempts: 1,
            delta,
            cursor: json!({"next": seq}).into(),
            events: Vec::new(),
            error: None,
            run_status: RunStatus::Running,
            wait: None,
        }
    }

    #[tokio::test]
    async fn amends_a_run() {
        crate::store::conformance::amends_a_run(&LatestStore::new()).await;
    }

    #[tokio::test]
    async fn keeps_the_latest_checkpoint_only() {
        let store = LatestStore::new();
        let id = RunId::new("01abc");
        store
            .create_run(NewRun {
                id: id.clone(),
                workflow: "w".into(),
                path: "w.kdl".into(),
                hash: "0".into(),
                inputs: json!({}),
                state: json!({"n": 0}).as_object().unwrap().clone(),
            })
            .await
            .unwrap();
        for seq in 1..=3 {
            store
                .commit_step(&id, step(seq, seq as i64 * 10))
                .await
                .unwrap();
        }
        assert!(matches!(
            store.commit_step(&id, step(5, 0)).await,
            Err(StoreError::Conflict {
                expected: 4,
                got: 5,
                ..
            })
        ));
        let checkpoint = store.checkpoint(&id).await.unwrap();
        assert_eq!(checkpoint.seq, 3);
        assert_eq!(checkpoint.state["n"], 30);
        assert_eq!(checkpoint.cursor, Some(json!({"next": 3})));
        assert!(store.load_state(&id, 1).await.is_err());
        store
            .set_status(&id, RunStatus::Completed, None)
            .await
            .unwrap();
        assert_eq!(store.resolve("01").await.unwrap(), id);
        assert_eq!(
            store.list_runs(&RunFilter::default()).await.unwrap()[0].status,
            RunStatus::Completed
        );
        assert!(store.run_detail(&id).await.unwrap().steps.is_empty());

        // A copy of the latest checkpoint; none of an earlier step.
        let copy = RunId::new("01copy");
        store
            .copy_run(&id, &copy, None, RunStatus::Paused, Some("01abc@3".into()))
            .await
            .unwrap();
        let checkpoint = store.checkpoint(&copy).await.unwrap();
        assert_eq!(
            (checkpoint.seq, &checkpoint.state),
            (3, &json!({"n": 30}).as_object().unwrap().clone())
        );
        assert_eq!(checkpoint.run.origin.as_deref(), Some("01abc@3"));
        store.commit_step(&copy, step(4, 40)).await.unwrap();
        assert!(matches!(
            store
                .copy_run(
                    &id,
                    &RunId::new("01early"),
                    Some(2),
                    RunStatus::Paused,
                    None
                )
                .await,
            Err(StoreError::NotFound(_))
        ));
        assert!(matches!(
            store
                .copy_run(&id, &copy, None, RunStatus::Paused, None)
                .await,
            Err(StoreError::AlreadyExists(_))
        ));
    }
}
