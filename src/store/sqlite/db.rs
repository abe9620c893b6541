//! [`Db`]: the synchronous store over one connection, owned by the writer thread. Writes
//! live here; reads are in `read.rs`.
//!
//! Each run's live state (after its last step) is cached so a commit can tell when a
//! snapshot is due and write it without reading the database. The cache is checked against
//! the database's `last_seq` inside each transaction, so another process committing to the
//! same run makes it reload rather than diverge.

use std::collections::HashMap;

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use serde_json::Value;

use super::rows::corrupt;
use crate::store::snapshot::LiveState;
use crate::store::{NewRun, RunId, RunStatus, SnapshotPolicy, StepCommit, StoreError, Timestamp};

/// One connection and the live states of the runs it committed to.
#[derive(Debug)]
pub(super) struct Db {
    pub(super) conn: Connection,
    pub(super) live: HashMap<RunId, LiveState>,
    pub(super) policy: SnapshotPolicy,
}

impl Db {
    pub(super) fn new(conn: Connection, policy: SnapshotPolicy) -> Self {
        Self {
            conn,
            live: HashMap::new(),
            policy,
        }
    }

    pub(super) fn create_run(&mut self, run: NewRun) -> Result<(), StoreError> {
        let now = now();
        let state = serde_json::to_string(&run.state).expect("JSON values serialise");
        let inputs = run.inputs.to_string();
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        tx.prepare_cached(
            "INSERT INTO runs (id, workflow, path, hash, inputs, status, created_at, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, 'running', ?6, ?6)",
        )?
        .execute(params![
            run.id.as_str(),
            run.workflow,
            run.path,
            run.hash,
            inputs,
            now
        ])?;
        insert_snapshot(&tx, &run.id, 0, &state)?;
        tx.commit()?;
        let live = LiveState::from_snapshot(run.state, 0, state.len());
        self.live.insert(run.id, live);
        Ok(())
    }

    pub(super) fn commit_step(&mut self, run: &RunId, step: StepCommit) -> Result<(), StoreError> {
        let finished = is_finished(step.run_status);
        let result = self.try_commit_step(run, step);
        // On error the cached state may be ahead of what was committed; a finished run
        // needs no cache (a resume reloads it).
        if result.is_err() || finished {
            self.live.remove(run);
        }
        result
    }

    fn try_commit_step(&mut self, run: &RunId, step: StepCommit) -> Result<(), StoreError> {
        let delta = step.delta.to_json();
        let cursor = step.cursor.to_string();
        let wait = match (&step.wait, step.run_status) {
            (Some(wait), RunStatus::Paused) => {
                Some(serde_json::to_string(wait).expect("a wait serialises"))
            }
            _ => None,
        };
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let last: i64 = tx
            .prepare_cached("SELECT last_seq FROM runs WHERE id = ?1")?
            .query_row([run.as_str()], |row| row.get(0))
            .optional()?
            .ok_or_else(|| StoreError::NotFound(run.to_string()))?;
        let expected = last as u64 + 1;
        if step.seq != expected {
            return Err(StoreError::Conflict {
                run: run.to_string(),
                expected,
                got: step.seq,
            });
        }
        tx.prepare_cached(
            "INSERT INTO steps (run_id, seq, node_id, started_at, finished_at, status, attempts,
                                delta, cursor, error)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
        )?
        .execute(params![
            run.as_str(),
            step.seq as i64,
            step.node_id,
            step.started_at.0 as i64,
            step.finished_at.0 as i64,
            step.status.as_str(),
            step.attempts,
            delta,
            cursor,
            step.error,
        ])?;
        insert_events(&tx, run, step.seq, &step.events)?;
        tx.prepare_cached(
            "UPDATE runs SET last_seq = ?2, status = ?3, updated_at = ?4, wait = ?5,
                    error = CASE WHEN ?3 = 'failed' THEN ?6 ELSE error END
             WHERE id = ?1",
        )?
        .execute(params![
            run.as_str(),
            step.seq as i64,
            step.run_status.as_str(),
            now(),
            wait,
            step.error,
        ])?;

        let policy = self.policy;
        let live = match self.live.get_mut(run) {
            Some(live) if live.seq == last as u64 => live,
            _ => {
                let state = super::read::state_at(&tx, run, last as u64)?;
                let bytes = serde_json::to_string(&state).map_or(0, |text| text.len());
                self.live.insert(
                    run.clone(),
                    LiveState::from_snapshot(state, last as u64, bytes),
                );
                self.live.get_mut(run).expect("just inserted")
            }
        };
        let due = live
            .advance(step.seq, &step.delta, delta.len(), policy)
            .map_err(|error| corrupt(run.as_str(), error.to_string()))?;
        if due {
            let state = serde_json::to_string(&live.state).expect("JSON values serialise");
            insert_snapshot(&tx, run, step.seq, &state)?;
            live.snapshotted(state.len());
        }
        tx.commit()?;
        Ok(())
    }

    pub(super) fn log_events(&mut self, run: &RunId, events: &[Value]) -> Result<(), StoreError> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        ensure_run(&tx, run)?;
        insert_events(&tx, run, 0, events)?;
        tx.commit()?;
        Ok(())
    }

    pub(super) fn set_status(
        &mut self,
        run: &RunId,
        status: RunStatus,
        error: Option<String>,
    ) -> Result<(), StoreError> {
        let changed = self
            .conn
            .prepare_cached(
                "UPDATE runs SET status = ?2, error = ?3, updated_at = ?4,
                        wait = CASE WHEN ?2 = 'paused' THEN wait END
                 WHERE id = ?1",
            )?
            .execute(params![run.as_str(), status.as_str(), error, now()])?;
        if changed == 0 {
            return Err(StoreError::NotFound(run.to_string()));
        }
        if is_finished(status) {
            self.live.remove(run);
        }
        Ok(())
    }

    pub(super) fn delete_run(&mut self, run: &RunId) -> Result<(), StoreError> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        ensure_run(&tx, run)?;
        for table in ["steps", "snapshots", "events"] {
            tx.execute(
                &format!("DELETE FROM {table} WHERE run_id = ?1"),
                [run.as_str()],
            )?;
        }
        tx.execute("DELETE FROM runs WHERE id = ?1", [run.as_str()])?;
        tx.commit()?;
        self.live.remove(run);
        Ok(())
    }
}

/// Whether a run with this status will take no more steps unless resumed.
fn is_finished(status: RunStatus) -> bool {
    matches!(
        status,
        RunStatus::Completed | RunStatus::Failed | RunStatus::Cancelled
    )
}

fn ensure_run(conn: &Connection, run: &RunId) -> Result<(), StoreError> {
    conn.prepare_cached("SELECT 1 FROM runs WHERE id = ?1")?
        .query_row([run.as_str()], |_| Ok(()))
        .optional()?
        .ok_or_else(|| StoreError::NotFound(run.to_string()))
}

fn insert_events(
    conn: &Connection,
    run: &RunId,
    step: u64,
    events: &[Value],
) -> Result<(), StoreError> {
    if events.is_empty() {
        return Ok(());
    }
    let mut insert =
        conn.prepare_cached("INSERT INTO events (run_id, step, event) VALUES (?1, ?2, ?3)")?;
    for event in events {
        insert.execute(params![run.as_str(), step as i64, event.to_string()])?;
    }
    Ok(())
}

fn insert_snapshot(
    conn: &Connection,
    run: &RunId,
    seq: u64,
    state: &str,
) -> Result<(), StoreError> {
    conn.prepare_cached("INSERT INTO snapshots (run_id, seq, state) VALUES (?1, ?2, ?3)")?
        .execute(params![run.as_str(), seq as i64, state])?;
    Ok(())
}

fn now() -> i64 {
    Timestamp::now().0 as i64
}
