//! The [`Store`] trait over the writer thread.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::checkpointer::Checkpointer;
use super::db::Db;
use super::open::{self, SqliteOptions};
use super::worker::Worker;
use crate::store::{
    Acquired, Beat, Checkpoint, Lease, NewRun, Owner, RunDetail, RunFilter, RunId, RunRecord,
    RunStatus, State, StepCommit, Store, StoreError, StoreFuture,
};

/// A checkpoint store in one SQLite file. Several stores (in one or several processes) may
/// share a file: writers wait up to [`SqliteOptions::busy_timeout`] for each other.
#[derive(Debug)]
pub struct SqliteStore {
    worker: Worker,
    path: PathBuf,
}

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
        let worker = Worker::spawn(Db::new(conn, options.snapshots, checkpointer))?;
        Ok(Self {
            worker,
            path: path.to_owned(),
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
}

impl Store for SqliteStore {
    fn create_run(&self, run: NewRun) -> StoreFuture<'_, ()> {
        self.worker.call(move |db| db.create_run(run))
    }

    fn commit_step<'a>(&'a self, run: &'a RunId, step: StepCommit) -> StoreFuture<'a, ()> {
        let run = run.clone();
        self.worker.call(move |db| db.commit_step(&run, step))
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
        let run = run.clone();
        self.worker
            .call(move |db| db.set_status(&run, status, error))
    }

    fn checkpoint<'a>(&'a self, run: &'a RunId) -> StoreFuture<'a, Checkpoint> {
        let run = run.clone();
        self.worker.call(move |db| db.checkpoint(&run))
    }

    fn load_state<'a>(&'a self, run: &'a RunId, upto_seq: u64) -> StoreFuture<'a, State> {
        let run = run.clone();
        self.worker.call(move |db| db.load_state(&run, upto_seq))
    }

    fn run<'a>(&'a self, run: &'a RunId) -> StoreFuture<'a, RunRecord> {
        let run = run.clone();
        self.worker.call(move |db| db.run(&run))
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
        self.worker.call(move |db| db.run_detail(&run))
    }

    fn delete_run<'a>(&'a self, run: &'a RunId) -> StoreFuture<'a, ()> {
        let run = run.clone();
        self.worker.call(move |db| db.delete_run(&run))
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

    fn acquire<'a>(&'a self, run: &'a RunId, owner: &'a Owner) -> StoreFuture<'a, Acquired> {
        let (run, owner) = (run.clone(), owner.clone());
        self.worker.call(move |db| db.acquire(&run, &owner))
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
