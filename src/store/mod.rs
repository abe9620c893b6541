//! The checkpoint store: runs, their steps as state deltas, periodic keyframes, event logs
//! and pending waits, behind one [`Store`] trait.
//!
//! - [`MemoryStore`]: no persistence, every step kept, for tests.
//! - [`LatestStore`]: no persistence, only each run's latest checkpoint (`--store memory`).
//! - [`SqliteStore`]: one SQLite file, `.atomic/atomic.db`, crash-safe (WAL), the default.
//!
//! The SQLite store also keeps `atomic chat`'s saved conversations ([`ChatSession`]).
//!
//! The store knows nothing of the runtime: inputs, cursors and events are JSON (a step's
//! cursor and events may come still typed, see [`Json`], so a memory store need not
//! serialise them); state is a JSON object changed by [`StateDelta`]s. It does not decide what a step is or when to
//! commit; the runtime commits each step before starting the next.

mod chat;
#[cfg(test)]
pub(crate) mod conformance;
mod contract;
mod delta;
mod error;
mod keyframe;
mod latest;
mod lease;
pub mod live;
mod memory;
mod model;
mod payload;
mod run_id;
mod scrub;
mod sqlite;
mod time;

pub use chat::{ChatSession, ChatSummary};
pub use contract::{Store, StoreFuture};
pub use delta::{Change, DeltaError, State, StateDelta};
pub use error::StoreError;
pub use keyframe::KeyframePolicy;
pub use latest::LatestStore;
pub use lease::{Acquired, Beat, HEARTBEAT_EVERY, Lease, Owner, STALE_AFTER};
pub use memory::{CarriedRun, MemoryStore};
pub use model::{
    Checkpoint, EventRecord, LogPosition, LogTail, NewRun, OpenStep, PendingWait, PermissionPause,
    RunAmend, RunDetail, RunFilter, RunRecord, RunStatus, StepCommit, StepRecord, StepStatus,
    StepTime, Timestamp, WaitChoice,
};
pub use payload::{Json, ToJson};
pub use run_id::RunId;
pub use scrub::Scrub;
pub use sqlite::{DB_PATH, Durability, SqliteOptions, SqliteStore, project_db_path};
pub use time::utc;
