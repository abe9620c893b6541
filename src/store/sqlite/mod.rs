//! [`SqliteStore`]: the durable [`Store`](crate::store::Store), one SQLite database
//! (`.atomic/atomic.db`, mode 0600) in WAL mode. Each step commits in one transaction
//! (step row, events, run status, and a keyframe when due) before its future resolves.
//!
//! Files: `open.rs` (file, permissions, pragmas), `schema.rs` (migrations), `db.rs`
//! (writes over one connection), `read.rs` (queries), `rows.rs` (decoding), `implicit.rs`
//! (a plain step's events kept as its row), `worker.rs` (the thread that owns the
//! connection), `checkpointer.rs` (background WAL checkpoints), `store.rs` (the async trait
//! over it), `chat.rs` (`atomic chat`'s saved sessions).

mod chat;
mod checkpointer;
mod db;
mod implicit;
mod leases;
mod open;
mod read;
mod rows;
mod schema;
mod steplog;
mod store;
mod worker;

pub use open::{DB_PATH, Durability, SqliteOptions, project_db_path};
pub use store::SqliteStore;

#[cfg(test)]
mod tests;
