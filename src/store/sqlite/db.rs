//! [`Db`]: the synchronous store over one connection, owned by the writer thread. Writes
//! live here; reads are in `read.rs`.
//!
//! Each run's live state (after its last step) is cached so a commit can tell when a
//! keyframe is due and write it without reading the database. The cache is checked against
//! the run's last step inside each transaction, so another process committing to the same
//! run makes it reload rather than diverge.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use rusqlite::{Connection, OptionalExtension, Transaction, TransactionBehavior, params};
use serde_json::Value;

use super::checkpointer::{Checkpointer, NUDGE_EVERY};
use super::implicit;
use super::rows::corrupt;
use super::steplog::{self, Encoded};
use crate::store::keyframe::LiveState;
use crate::store::{
    KeyframePolicy, NewRun, PendingWait, RunAmend, RunId, RunStatus, StoreError, Timestamp,
};

/// A failure folding queued steps into the database, kept for the next caller.
pub(super) type Poison = Arc<Mutex<Option<StoreError>>>;

/// One connection, the live states of the runs it committed to, and the steps queued to be
/// folded into the database (they are in the step logs already).
#[derive(Debug)]
pub(super) struct Db {
    pub(super) conn: Connection,
    pub(super) live: HashMap<RunId, LiveState>,
    pub(super) policy: KeyframePolicy,
    checkpointer: Option<Checkpointer>,
    commits: u32,
    /// Steps logged but not yet in the database, in commit order.
    pending: Vec<(RunId, Encoded)>,
    /// Where the step logs are.
    log_dir: PathBuf,
    /// A fold that failed, reported to the committing side.
    pub(super) poisoned: Poison,
}

/// A WAL at most this large is left in place when the store closes (the next process
/// appends to it); a larger one is checkpointed into the database and truncated, so a long
/// run does not leave megabytes of WAL behind.
pub(super) const WAL_KEPT_ON_CLOSE: u64 = 256 * 1024;

impl Db {
    pub(super) fn new(
        conn: Connection,
        policy: KeyframePolicy,
        checkpointer: Option<Checkpointer>,
        log_dir: PathBuf,
    ) -> Self {
        Self {
            conn,
            live: HashMap::new(),
            policy,
            checkpointer,
            commits: 0,
            pending: Vec::new(),
            log_dir,
            poisoned: Poison::default(),
        }
    }

    /// Steps queued and not yet in the database.
    pub(super) fn pending_len(&self) -> usize {
        self.pending.len()
    }

    /// Queues a logged step to be folded into the database with the others that queue up.
    pub(super) fn enqueue(&mut self, run: RunId, step: Encoded) {
        self.pending.push((run, step));
    }

    /// Folds every queued step into the database in one transaction, then deletes the logs
    /// of runs that stopped (everything in them is in the database now).
    ///
    /// # Errors
    /// The batch does not apply; nothing of it is in the database (the steps are still in
    /// their logs, and a process taking the runs over folds them).
    pub(super) fn flush(&mut self) -> Result<(), StoreError> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let pending = std::mem::take(&mut self.pending);
        let result = self.apply_all(&pending);
        match result {
            Ok(pages) => {
                self.committed(pages);
                for (run, Encoded { step, .. }) in &pending {
                    if is_finished(step.run_status) || step.run_status == RunStatus::Paused {
                        steplog::remove_log(&self.log_dir, run);
                    }
                    if is_finished(step.run_status) {
                        self.live.remove(run);
                    }
                }
                Ok(())
            }
            Err(error) => {
                for (run, _) in &pending {
                    self.live.remove(run);
                }
                Err(error)
            }
        }
    }

    /// [`Db::flush`], keeping a failure for the committing side.
    pub(super) fn flush_or_poison(&mut self) {
        if let Err(error) = self.flush() {
            *self
                .poisoned
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(error);
        }
    }

    fn apply_all(&mut self, steps: &[(RunId, Encoded)]) -> Result<u32, StoreError> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let mut pages = 0;
        for (run, step) in steps {
            pages += apply_step(&tx, &mut self.live, self.policy, run, step)?;
        }
        tx.commit()?;
        Ok(pages)
    }

    /// Folds what `run`'s step log holds beyond the database into it, so no step a process
    /// acknowledged is missed: by the owner taking the run (`owner`: it may also cut a line
    /// a crash left half-written), and by readers (steps the owner's writer thread has not
    /// folded yet; folding twice writes nothing twice).
    pub(super) fn fold(&mut self, run: &RunId, owner: bool) -> Result<(), StoreError> {
        self.flush()?;
        if !steplog::log_path(&self.log_dir, run).exists() {
            return Ok(());
        }
        let last = self.last_seq(run)?;
        let missing: Vec<(RunId, Encoded)> = steplog::read_log(&self.log_dir, run, owner, last)?
            .into_iter()
            .filter(|step| step.seq > last)
            .map(|step| (run.clone(), Encoded::new(step)))
            .collect();
        if !missing.is_empty() {
            self.live.remove(run);
            let pages = self.apply_all(&missing)?;
            self.committed(pages);
        }
        Ok(())
    }

    /// The run's last committed step (0: none).
    pub(super) fn last_seq(&mut self, run: &RunId) -> Result<u64, StoreError> {
        self.flush()?;
        let last: Option<i64> = self
            .conn
            .prepare_cached(
                "SELECT coalesce((SELECT max(seq) FROM steps WHERE run_id = ?1), 0)
                 FROM runs WHERE id = ?1",
            )?
            .query_row([run.as_str()], |row| row.get(0))
            .optional()?;
        let last = last.ok_or_else(|| StoreError::NotFound(run.to_string()))?;
        Ok(u64::try_from(last).unwrap_or(0))
    }

    /// Deletes `run`'s step log (the run stopped, or was deleted).
    pub(super) fn remove_log(&self, run: &RunId) {
        steplog::remove_log(&self.log_dir, run);
    }

    /// Counts a commit; every so many, asks for a background checkpoint.
    fn committed(&mut self, pages_hint: u32) {
        self.commits = self.commits.saturating_add(pages_hint.max(1));
        if self.commits >= NUDGE_EVERY {
            self.commits = 0;
            if let Some(checkpointer) = &self.checkpointer {
                checkpointer.tick(&self.conn);
            }
        }
    }

    /// Runs when the store closes: folds a large WAL back into the database.
    pub(super) fn close(&mut self) {
        // Stop the background checkpoints first, so the last one cannot hold the lock.
        drop(self.checkpointer.take());
        let large = self
            .conn
            .path()
            .filter(|path| !path.is_empty())
            .and_then(|path| std::fs::metadata(format!("{path}-wal")).ok())
            .is_some_and(|wal| wal.len() > WAL_KEPT_ON_CLOSE);
        if large {
            // Another process reading the database may keep this from completing; the WAL
            // then stays until a later checkpoint. Nothing is lost either way.
            let _ = self
                .conn
                .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()));
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
        insert_keyframe(&tx, &run.id, 0, &state, None)?;
        tx.commit()?;
        let live = LiveState::from_keyframe(run.state, crate::store::State::new(), 0, state.len());
        self.live.insert(run.id, live);
        Ok(())
    }

    pub(super) fn log_events(&mut self, run: &RunId, events: &[Value]) -> Result<(), StoreError> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        ensure_run(&tx, run)?;
        let last: i64 = tx
            .prepare_cached("SELECT coalesce(max(seq), 0) FROM steps WHERE run_id = ?1")?
            .query_row([run.as_str()], |row| row.get(0))?;
        let mut insert = tx.prepare_cached(
            "INSERT INTO run_events (run_id, after_step, event) VALUES (?1, ?2, ?3)",
        )?;
        for event in events {
            insert.execute(params![run.as_str(), last, event.to_string()])?;
        }
        drop(insert);
        tx.commit()?;
        Ok(())
    }

    pub(super) fn pause(&mut self, run: &RunId, waits: &[PendingWait]) -> Result<(), StoreError> {
        let waits = serde_json::to_string(waits).expect("waits serialise");
        let changed = self
            .conn
            .prepare_cached(
                "UPDATE runs SET status = 'paused', updated_at = ?2, wait = ?3 WHERE id = ?1",
            )?
            .execute(params![run.as_str(), now(), waits])?;
        if changed == 0 {
            return Err(StoreError::NotFound(run.to_string()));
        }
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

    pub(super) fn amend_run(&mut self, run: &RunId, amend: &RunAmend) -> Result<(), StoreError> {
        let inputs = amend.inputs.as_ref().map(Value::to_string);
        let (path, hash) = amend
            .workflow
            .as_ref()
            .map(|(path, hash)| (path.as_str(), hash.as_str()))
            .unzip();
        let changed = self
            .conn
            .prepare_cached(
                "UPDATE runs SET inputs = COALESCE(?2, inputs), path = COALESCE(?3, path),
                        hash = COALESCE(?4, hash), updated_at = ?5
                 WHERE id = ?1",
            )?
            .execute(params![run.as_str(), inputs, path, hash, now()])?;
        if changed == 0 {
            return Err(StoreError::NotFound(run.to_string()));
        }
        Ok(())
    }

    pub(super) fn delete_run(&mut self, run: &RunId) -> Result<(), StoreError> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        ensure_run(&tx, run)?;
        for table in ["steps", "keyframes", "run_events", "progress", "leases"] {
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

    /// [`Store::compact`](crate::store::Store::compact): the free pages deleted runs left
    /// go back to the file system, and the write-ahead log is emptied (a reader in another
    /// process may keep it from shrinking; nothing is lost then).
    pub(super) fn compact(&mut self) -> Result<(), StoreError> {
        let free: i64 = self
            .conn
            .query_row("PRAGMA freelist_count", [], |row| row.get(0))?;
        if free > 0 {
            self.conn.execute_batch("VACUUM")?;
        }
        self.conn
            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
        Ok(())
    }

    /// [`Store::copy_run`](crate::store::Store::copy_run): first folds what `from`'s step
    /// log holds beyond the database, as a reader does, then copies its row, steps,
    /// keyframes and loose events up to `upto` in one transaction.
    pub(super) fn copy_run(
        &mut self,
        from: &RunId,
        to: &RunId,
        upto: Option<u64>,
        status: RunStatus,
        origin: Option<String>,
    ) -> Result<(), StoreError> {
        self.fold(from, false)?;
        let upto = upto.map_or(i64::MAX, |upto| i64::try_from(upto).unwrap_or(i64::MAX));
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        ensure_run(&tx, from)?;
        if ensure_run(&tx, to).is_ok() {
            return Err(StoreError::AlreadyExists(to.to_string()));
        }
        let ids = params![from.as_str(), to.as_str(), upto];
        tx.prepare_cached(
            "INSERT INTO runs (id, workflow, path, hash, inputs, status, created_at, updated_at,
                               error, wait, origin)
             SELECT ?2, workflow, path, hash, inputs, ?3, created_at, ?4, NULL, NULL, ?5
             FROM runs WHERE id = ?1",
        )?
        .execute(params![
            from.as_str(),
            to.as_str(),
            status.as_str(),
            now(),
            origin
        ])?;
        tx.prepare_cached(
            "INSERT INTO steps (run_id, seq, node_id, started_at, finished_at, status, attempts,
                                delta, cursor, events, error, scope, outputs)
             SELECT ?2, seq, node_id, started_at, finished_at, status, attempts,
                    delta, cursor, events, error, scope, outputs
             FROM steps WHERE run_id = ?1 AND seq <= ?3",
        )?
        .execute(ids)?;
        tx.prepare_cached(
            "INSERT INTO keyframes (run_id, seq, state, outputs)
             SELECT ?2, seq, state, outputs FROM keyframes WHERE run_id = ?1 AND seq <= ?3",
        )?
        .execute(ids)?;
        tx.prepare_cached(
            "INSERT INTO run_events (run_id, after_step, event)
             SELECT ?2, after_step, event FROM run_events
             WHERE run_id = ?1 AND after_step <= ?3 ORDER BY id",
        )?
        .execute(ids)?;
        // A log left by a deleted run of the same id is not this run's.
        steplog::remove_log(&self.log_dir, to);
        tx.commit()?;
        self.live.remove(to);
        Ok(())
    }
}

impl Db {
    pub(super) fn save_progress(
        &mut self,
        run: &RunId,
        key: &str,
        progress: &Value,
    ) -> Result<(), StoreError> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        ensure_run(&tx, run)?;
        tx.execute(
            "INSERT INTO progress (run_id, key, value) VALUES (?1, ?2, ?3)
             ON CONFLICT (run_id, key) DO UPDATE SET value = excluded.value",
            params![run.as_str(), key, progress.to_string()],
        )?;
        tx.commit()?;
        Ok(())
    }

    pub(super) fn load_progress(
        &mut self,
        run: &RunId,
        key: &str,
    ) -> Result<Option<Value>, StoreError> {
        let text: Option<String> = self
            .conn
            .query_row(
                "SELECT value FROM progress WHERE run_id = ?1 AND key = ?2",
                params![run.as_str(), key],
                |row| row.get(0),
            )
            .optional()?;
        text.map(|text| {
            serde_json::from_str(&text)
                .map_err(|error| corrupt(run.as_str(), format!("progress `{key}`: {error}")))
        })
        .transpose()
    }

    pub(super) fn clear_progress(&mut self, run: &RunId, key: &str) -> Result<(), StoreError> {
        self.conn.execute(
            "DELETE FROM progress WHERE run_id = ?1 AND key = ?2",
            params![run.as_str(), key],
        )?;
        Ok(())
    }
}

/// Whether a run with this status will take no more steps unless resumed.
/// Writes one step inside `tx`: its row, the run's row when its status changes, and a
/// keyframe when one is due; returns the pages it roughly wrote (for checkpoint pacing).
fn apply_step(
    tx: &Transaction<'_>,
    live: &mut HashMap<RunId, LiveState>,
    policy: KeyframePolicy,
    run: &RunId,
    encoded: &Encoded,
) -> Result<u32, StoreError> {
    let Encoded {
        step,
        delta,
        outputs,
        cursor,
        events,
    } = encoded;
    let wait = match (&step.wait, step.run_status) {
        (Some(wait), RunStatus::Paused) => {
            Some(serde_json::to_string(&[wait]).expect("a wait serialises"))
        }
        _ => None,
    };
    let (status, last): (String, i64) = tx
        .prepare_cached(
            "SELECT status, coalesce((SELECT max(seq) FROM steps WHERE run_id = ?1), 0)
                 FROM runs WHERE id = ?1",
        )?
        .query_row([run.as_str()], |row| Ok((row.get(0)?, row.get(1)?)))
        .optional()?
        .ok_or_else(|| StoreError::NotFound(run.to_string()))?;
    let expected = last as u64 + 1;
    // Folding is idempotent: a step another fold (a reader, or the owner's writer
    // thread) already wrote is skipped.
    if step.seq < expected {
        return Ok(0);
    }
    if step.seq != expected {
        return Err(StoreError::Conflict {
            run: run.to_string(),
            expected,
            got: step.seq,
        });
    }
    let events = implicit::stored(
        &implicit::StepColumns {
            seq: step.seq,
            node_id: &step.node_id,
            status: step.status.as_str(),
            attempts: u64::from(step.attempts),
            delta,
        },
        events,
    );
    tx.prepare_cached(
        "INSERT INTO steps (run_id, seq, node_id, started_at, finished_at, status, attempts,
                                delta, cursor, events, error, scope, outputs)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
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
        events.as_ref(),
        step.error,
        step.scope,
        outputs,
    ])?;
    // The common step (running → running) leaves the run's row alone: its step count
    // and last change come from this step.
    let new_status = step.run_status;
    let changes_run = status != new_status.as_str()
        || matches!(new_status, RunStatus::Paused | RunStatus::Failed);
    if changes_run {
        tx.prepare_cached(
            "UPDATE runs SET status = ?2, updated_at = ?3, wait = ?4,
                        error = CASE WHEN ?2 = 'failed' THEN ?5 ELSE error END
                 WHERE id = ?1",
        )?
        .execute(params![
            run.as_str(),
            new_status.as_str(),
            now(),
            wait,
            step.error
        ])?;
    }

    let cached = live.get(run).is_some_and(|state| state.seq == last as u64);
    if !cached {
        let (state, outputs) = super::read::state_and_outputs_at(tx, run, last as u64)?;
        let bytes = serde_json::to_string(&state).map_or(0, |text| text.len());
        live.insert(
            run.clone(),
            LiveState::from_keyframe(state, outputs, last as u64, bytes),
        );
    }
    let live = live.get_mut(run).expect("cached or just loaded");
    // A scoped step's delta and outputs are its block's, not the run's.
    let (empty, no_outputs) = (crate::store::StateDelta::new(), crate::store::State::new());
    let (applied, applied_outputs, applied_len) = match step.scope {
        Some(_) => (&empty, &no_outputs, 0),
        None => (&step.delta, &step.outputs, delta.len()),
    };
    let due = live
        .advance(step.seq, applied, applied_outputs, applied_len, policy)
        .map_err(|error| corrupt(run.as_str(), error.to_string()))?;
    let mut pages = 1;
    if due {
        let state = serde_json::to_string(&live.state).expect("JSON values serialise");
        let outputs = (!live.outputs.is_empty())
            .then(|| serde_json::to_string(&live.outputs).expect("JSON values serialise"));
        insert_keyframe(tx, run, step.seq, &state, outputs.as_deref())?;
        live.keyframe_written(state.len());
        pages += u32::try_from(state.len() / 4096).unwrap_or(u32::MAX);
    }
    Ok(pages)
}

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

fn insert_keyframe(
    conn: &Connection,
    run: &RunId,
    seq: u64,
    state: &str,
    outputs: Option<&str>,
) -> Result<(), StoreError> {
    conn.prepare_cached(
        "INSERT INTO keyframes (run_id, seq, state, outputs) VALUES (?1, ?2, ?3, ?4)",
    )?
    .execute(params![run.as_str(), seq as i64, state, outputs])?;
    Ok(())
}

fn now() -> i64 {
    Timestamp::now().0 as i64
}
