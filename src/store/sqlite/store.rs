//! The [`Store`] trait over the writer thread.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde_json::Value;

use super::checkpointer::Checkpointer;
use super::db::{Db, Poison};
use super::open::{self, Durability, SqliteOptions};
use super::steplog::{Encoded, RESET_AFTER, StepLog, log_dir};
use super::worker::Worker;
use crate::store::{
    Acquired, Beat, Checkpoint, Lease, LogPosition, LogTail, NewRun, Owner, PendingWait, RunAmend,
    RunDetail, RunFilter, RunId, RunRecord, RunStatus, State, StepCommit, Store, StoreError,
    StoreFuture,
};

/// A checkpoint store in one SQLite file. Several stores (in one or several processes) may
/// share a file: writers wait up to [`SqliteOptions::busy_timeout`] for each other.
#[derive(Debug)]
pub struct SqliteStore {
    pub(super) worker: Worker,
    path: PathBuf,
    /// Where each committed step is appended before its commit returns.
    log: StepLog,
    /// The next step number of each run this store commits to.
    next_seq: Mutex<HashMap<RunId, u64>>,
    /// A batch the writer thread could not fold into the database.
    poisoned: Poison,
    /// Keeps the writer's queue short (see [`Backlog`]).
    backlog: Mutex<Backlog>,
}

/// Steps committed faster than the writer thread folds them would queue without bound,
/// and a long run of quick steps would grow the process by every step it is ahead. So every
/// [`BARRIER_EVERY`] commits a barrier job is queued, and the commit first waits for the
/// barrier queued the time before: at most two batches wait, and the writer is never left
/// idle while the walker waits.
#[derive(Default)]
struct Backlog {
    since_barrier: u32,
    barrier: Option<StoreFuture<'static, ()>>,
}

impl std::fmt::Debug for Backlog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Backlog")
            .field("since_barrier", &self.since_barrier)
            .finish_non_exhaustive()
    }
}

/// Commits between two barriers of the writer's queue.
const BARRIER_EVERY: u32 = 256;

impl SqliteStore {
    /// Opens (creating if needed) the database at `path`.
    ///
    /// # Errors
    /// If the file or its directory cannot be created, the database cannot be opened in WAL
    /// mode, or it was written by a newer atomic.
    pub fn open(path: &Path, options: SqliteOptions) -> Result<Self, StoreError> {
        let conn = open::open(path, &options)?;
        let checkpointer = if options.background_checkpoints {
            Some(Checkpointer::spawn(path, options.busy_timeout)?)
        } else {
            None
        };
        let logs = log_dir(path);
        let db = Db::new(conn, options.keyframes, checkpointer, logs.clone());
        let poisoned = db.poisoned.clone();
        let worker = Worker::spawn(db)?;
        Ok(Self {
            worker,
            path: path.to_owned(),
            log: StepLog::new(logs, options.durability == Durability::Full),
            next_seq: Mutex::default(),
            poisoned,
            backlog: Mutex::default(),
        })
    }

    /// Opens `<project>/.atomic/atomic.db`.
    ///
    /// # Errors
    /// As [`SqliteStore::open`].
    pub fn open_project(project: &Path, options: SqliteOptions) -> Result<Self, StoreError> {
        Self::open(&open::project_db_path(project), options)
    }

    /// The database file.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Counts a queued step; every [`BARRIER_EVERY`] of them, queues a new barrier and
    /// returns the previous one, for the commit to wait on.
    fn pass_barrier(&self) -> Option<StoreFuture<'static, ()>> {
        let mut backlog = self
            .backlog
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        backlog.since_barrier += 1;
        if backlog.since_barrier < BARRIER_EVERY {
            return None;
        }
        backlog.since_barrier = 0;
        let barrier = self.worker.call(|_| Ok(()));
        backlog.barrier.replace(barrier)
    }

    fn next_seq(&self) -> std::sync::MutexGuard<'_, HashMap<RunId, u64>> {
        self.next_seq
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl Store for SqliteStore {
    fn create_run(&self, run: NewRun) -> StoreFuture<'_, ()> {
        self.worker.call(move |db| db.create_run(run))
    }

    /// Appends the step to the run's log (durable at the store's level when this returns)
    /// and queues it for the writer thread, which folds the steps that queue up into the
    /// database in one transaction.
    fn commit_step<'a>(&'a self, run: &'a RunId, step: StepCommit) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            if let Some(error) = self
                .poisoned
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .take()
            {
                return Err(error);
            }
            let known = self.next_seq().get(run).copied();
            let expected = match known {
                Some(next) => next,
                None => {
                    let key = run.clone();
                    self.worker.call(move |db| db.last_seq(&key)).await? + 1
                }
            };
            if step.seq != expected {
                return Err(StoreError::Conflict {
                    run: run.to_string(),
                    expected,
                    got: step.seq,
                });
            }
            let step = Encoded::new(step);
            let logged = self.log.append(run, &step)?;
            let stops = step.step.run_status != RunStatus::Running;
            if stops {
                // The run stopped (finished or paused): its log goes once folded, and a
                // later resume starts a new one.
                self.log.forget(run);
                self.next_seq().remove(run);
            } else {
                self.next_seq().insert(run.clone(), step.step.seq + 1);
            }
            let key = run.clone();
            if !self.worker.send(move |db| db.enqueue(key, step)) {
                return Err(StoreError::Closed);
            }
            let behind = self.pass_barrier();
            if let Some(barrier) = behind {
                barrier.await?;
            }
            if !stops && logged > RESET_AFTER {
                // A long run: once its steps are in the database, empty its log (if they
                // cannot go in now, the log keeps them and a later commit tries again).
                if self.worker.call(|_| Ok(())).await.is_ok() {
                    self.log.reset(run)?;
                }
            }
            Ok(())
        })
    }

    fn log_events<'a>(&'a self, run: &'a RunId, events: Vec<Value>) -> StoreFuture<'a, ()> {
        let run = run.clone();
        self.worker.call(move |db| db.log_events(&run, &events))
    }

    fn set_status<'a>(
        &'a self,
        run: &'a RunId,
        status: RunStatus,
        error: Option<String>,
    ) -> StoreFuture<'a, ()> {
        if status != RunStatus::Running {
            self.log.forget(run);
            self.next_seq().remove(run);
        }
        let run = run.clone();
        self.worker.call(move |db| {
            db.set_status(&run, status, error)?;
            if status != RunStatus::Running {
                db.remove_log(&run);
            }
            Ok(())
        })
    }

    fn pause<'a>(&'a self, run: &'a RunId, waits: Vec<PendingWait>) -> StoreFuture<'a, ()> {
        self.log.forget(run);
        self.next_seq().remove(run);
        let _ = std::fs::remove_file(crate::store::live::live_path(&self.path, run));
        let run = run.clone();
        self.worker.call(move |db| {
            db.pause(&run, &waits)?;
            db.remove_log(&run);
            Ok(())
        })
    }

    fn checkpoint<'a>(&'a self, run: &'a RunId) -> StoreFuture<'a, Checkpoint> {
        let run = run.clone();
        self.worker.call(move |db| {
            db.fold(&run, false)?;
            db.checkpoint(&run)
        })
    }

    fn load_state<'a>(&'a self, run: &'a RunId, upto_seq: u64) -> StoreFuture<'a, State> {
        let run = run.clone();
        self.worker.call(move |db| {
            db.fold(&run, false)?;
            db.load_state(&run, upto_seq)
        })
    }

    fn run<'a>(&'a self, run: &'a RunId) -> StoreFuture<'a, RunRecord> {
        let run = run.clone();
        self.worker.call(move |db| {
            db.fold(&run, false)?;
            db.run(&run)
        })
    }

    fn resolve<'a>(&'a self, prefix: &'a str) -> StoreFuture<'a, RunId> {
        let prefix = prefix.to_owned();
        self.worker.call(move |db| db.resolve(&prefix))
    }

    fn list_runs<'a>(&'a self, filter: &'a RunFilter) -> StoreFuture<'a, Vec<RunRecord>> {
        let filter = filter.clone();
        self.worker.call(move |db| db.list_runs(&filter))
    }

    fn run_detail<'a>(&'a self, run: &'a RunId) -> StoreFuture<'a, RunDetail> {
        let run = run.clone();
        self.worker.call(move |db| {
            db.fold(&run, false)?;
            db.run_detail(&run)
        })
    }

    fn live_feed(&self, run: &RunId) -> Option<PathBuf> {
        Some(crate::store::live::live_path(&self.path, run))
    }

    fn log_after<'a>(&'a self, run: &'a RunId, after: LogPosition) -> StoreFuture<'a, LogTail> {
        let run = run.clone();
        self.worker.call(move |db| {
            db.fold(&run, false)?;
            db.log_after(&run, after)
        })
    }

    fn delete_run<'a>(&'a self, run: &'a RunId) -> StoreFuture<'a, ()> {
        self.log.forget(run);
        self.next_seq().remove(run);
        let run = run.clone();
        self.worker.call(move |db| {
            db.delete_run(&run)?;
            db.remove_log(&run);
            Ok(())
        })
    }

    /// Rewrites the database without its free pages (`VACUUM`, when it has any) and
    /// empties its write-ahead log.
    fn compact(&self) -> StoreFuture<'_, ()> {
        self.worker.call(Db::compact)
    }

    fn amend_run<'a>(&'a self, run: &'a RunId, amend: RunAmend) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let run = run.clone();
            self.worker.call(move |db| db.amend_run(&run, &amend)).await
        })
    }

    /// Folds `from`'s step log into the database first, then copies in one transaction;
    /// the copy's next step is counted from the database.
    fn copy_run<'a>(
        &'a self,
        from: &'a RunId,
        to: &'a RunId,
        upto: Option<u64>,
        status: RunStatus,
        origin: Option<String>,
    ) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let (source, copy) = (from.clone(), to.clone());
            self.worker
                .call(move |db| db.copy_run(&source, &copy, upto, status, origin))
                .await?;
            self.log.forget(to);
            self.next_seq().remove(to);
            Ok(())
        })
    }

    fn save_progress<'a>(
        &'a self,
        run: &'a RunId,
        key: &'a str,
        progress: Value,
    ) -> StoreFuture<'a, ()> {
        let (run, key) = (run.clone(), key.to_owned());
        self.worker
            .call(move |db| db.save_progress(&run, &key, &progress))
    }

    fn load_progress<'a>(&'a self, run: &'a RunId, key: &'a str) -> StoreFuture<'a, Option<Value>> {
        let (run, key) = (run.clone(), key.to_owned());
        self.worker.call(move |db| db.load_progress(&run, &key))
    }

    fn clear_progress<'a>(&'a self, run: &'a RunId, key: &'a str) -> StoreFuture<'a, ()> {
        let (run, key) = (run.clone(), key.to_owned());
        self.worker.call(move |db| db.clear_progress(&run, &key))
    }

    /// Takes the run, then folds whatever its log holds beyond the database (steps a
    /// process that died had acknowledged), so the run continues from its last step.
    fn acquire<'a>(&'a self, run: &'a RunId, owner: &'a Owner) -> StoreFuture<'a, Acquired> {
        self.next_seq().remove(run);
        let (run, owner) = (run.clone(), owner.clone());
        self.worker.call(move |db| {
            let acquired = db.acquire(&run, &owner)?;
            db.fold(&run, true)?;
            Ok(acquired)
        })
    }

    fn heartbeat<'a>(&'a self, run: &'a RunId, owner: &'a Owner) -> StoreFuture<'a, Beat> {
        let (run, owner) = (run.clone(), owner.clone());
        self.worker.call(move |db| db.heartbeat(&run, &owner))
    }

    fn release<'a>(&'a self, run: &'a RunId, owner: &'a Owner) -> StoreFuture<'a, ()> {
        let (run, owner) = (run.clone(), owner.clone());
        self.worker.call(move |db| db.release(&run, &owner))
    }

    fn lease<'a>(&'a self, run: &'a RunId) -> StoreFuture<'a, Option<Lease>> {
        let run = run.clone();
        self.worker.call(move |db| db.lease(&run))
    }

    fn request_cancel<'a>(&'a self, run: &'a RunId) -> StoreFuture<'a, bool> {
        let run = run.clone();
        self.worker.call(move |db| db.request_cancel(&run))
    }
}
