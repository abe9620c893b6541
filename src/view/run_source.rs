//! Where the runs a view reads live: anything that can list runs, name one by a prefix of
//! its id, and give a run's record with its events after a position, its exact state, and
//! the step it goes to next. The project's store is one ([`StoreSource`]); the CLI adds
//! others (runs on a Temporal server) without this module knowing their types.

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::Value;

use crate::store::{LogPosition, LogTail, RunFilter, RunId, RunRecord, State, Store, StoreFuture};

/// A run's exact state and its cursor, as of its last committed step.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunCheckpoint {
    /// The state after the last committed step.
    pub state: State,
    /// The cursor of the last committed (unscoped) step, whose `next_key` is the step the
    /// run goes to next; `None` before the first commit.
    pub cursor: Option<Value>,
}

/// Runs to read, wherever they are kept. Failures are [`StoreError`]s
/// (`crate::store::StoreError`), whatever keeps the runs: the faces treat a missing run
/// (`NotFound`, `Ambiguous`) apart from a source that cannot be read (anything else), and
/// an implementation's message says what failed and what to do.
pub trait RunSource: Send + Sync + std::fmt::Debug {
    /// The newest `limit` runs, newest first.
    fn runs(&self, limit: usize) -> StoreFuture<'_, Vec<RunRecord>>;

    /// The one run whose id is or starts with `prefix`.
    fn resolve<'a>(&'a self, prefix: &'a str) -> StoreFuture<'a, RunId>;

    /// The run's record as it is now.
    fn record<'a>(&'a self, run: &'a RunId) -> StoreFuture<'a, RunRecord>;

    /// The run's record and its events after `after`, in order; reading from the returned
    /// position goes on where this read stopped.
    fn log_after<'a>(&'a self, run: &'a RunId, after: LogPosition) -> StoreFuture<'a, LogTail>;

    /// The run's exact state and cursor.
    fn checkpoint<'a>(&'a self, run: &'a RunId) -> StoreFuture<'a, RunCheckpoint>;

    /// The file of live events of the run's steps not committed yet, where there is one
    /// ([`crate::store::live`]); `None` when this source has none.
    fn live_feed(&self, run: &RunId) -> Option<PathBuf>;
}

/// The runs a [`Store`] keeps (the project's SQLite store for `atomic ui`).
#[derive(Clone, Debug)]
pub struct StoreSource {
    store: Arc<dyn Store>,
}

impl StoreSource {
    /// The runs `store` keeps.
    #[must_use]
    pub fn new(store: Arc<dyn Store>) -> Self {
        Self { store }
    }
}

impl RunSource for StoreSource {
    fn runs(&self, limit: usize) -> StoreFuture<'_, Vec<RunRecord>> {
        Box::pin(async move {
            self.store
                .list_runs(&RunFilter {
                    limit: Some(limit),
                    ..RunFilter::default()
                })
                .await
        })
    }

    fn resolve<'a>(&'a self, prefix: &'a str) -> StoreFuture<'a, RunId> {
        self.store.resolve(prefix)
    }

    fn record<'a>(&'a self, run: &'a RunId) -> StoreFuture<'a, RunRecord> {
        self.store.run(run)
    }

    fn log_after<'a>(&'a self, run: &'a RunId, after: LogPosition) -> StoreFuture<'a, LogTail> {
        self.store.log_after(run, after)
    }

    fn checkpoint<'a>(&'a self, run: &'a RunId) -> StoreFuture<'a, RunCheckpoint> {
        Box::pin(async move {
            let checkpoint = self.store.checkpoint(run).await?;
            Ok(RunCheckpoint {
                state: checkpoint.state,
                cursor: checkpoint.cursor,
            })
        })
    }

    fn live_feed(&self, run: &RunId) -> Option<PathBuf> {
        self.store.live_feed(run)
    }
}
