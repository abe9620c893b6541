//! The checkpoint store: runs, their steps as state deltas, periodic snapshots, event logs
//! and pending waits, behind one [`Store`] trait.
//!
//! - [`MemoryStore`]: no persistence (`--store memory`), for tests and benchmarks.
//! - [`SqliteStore`]: one SQLite file, `.atomic/atomic.db`, crash-safe (WAL), the default.
//!
//! The store knows nothing of the runtime: inputs, cursors and events are JSON; state is a
//! JSON object changed by [`StateDelta`]s. It does not decide what a step is or when to
//! commit; the runtime commits each step before starting the next.

#[cfg(test)]
pub(crate) mod conformance;
mod contract;
mod delta;
mod error;
mod memory;
mod model;
mod run_id;
mod snapshot;
mod sqlite;

pub use contract::{Store, StoreFuture};
pub use delta::{Change, DeltaError, State, StateDelta};
pub use error::StoreError;
pub use memory::MemoryStore;
pub use model::{
    Checkpoint, EventRecord, NewRun, PendingWait, RunDetail, RunFilter, RunRecord, RunStatus,
    StepCommit, StepRecord, StepStatus, Timestamp, WaitChoice,
};
pub use run_id::RunId;
pub use snapshot::SnapshotPolicy;
pub use sqlite::{DB_PATH, Durability, SqliteOptions, SqliteStore, project_db_path};
