//! Background WAL checkpoints. SQLite checkpoints inside whichever commit pushes the
//! write-ahead log past `wal_autocheckpoint` pages; that commit then copies the log into the
//! database and fsyncs both. Here the writer nudges this thread every [`NUDGE_EVERY`]
//! commits and it runs a `PASSIVE` checkpoint on its own connection, which never blocks the
//! writer, so the copying happens off the commit path. A passive checkpoint cannot restart
//! the log while commits keep arriving, so the writer's own auto-checkpoint stays on as the
//! backstop: it then has little left to copy. Between steps that wait on a model (the
//! normal case) the background checkpoint completes and the log restarts by itself.
//!
//! Under contention the backstop can keep losing the checkpoint lock to this thread, and the
//! log would grow unbounded; so every nudge the writer also looks at the log's size and, past
//! [`WAL_HARD_LIMIT`], checkpoints it in `TRUNCATE` mode itself, waiting if need be.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, SyncSender, TrySendError};
use std::thread::JoinHandle;
use std::time::Duration;

use rusqlite::Connection;
use rusqlite::config::DbConfig;

use crate::store::StoreError;

/// Commits between nudges (a step commit writes one or two pages).
pub(super) const NUDGE_EVERY: u32 = 256;

/// The log size past which the writer checkpoints and truncates it itself.
pub(super) const WAL_HARD_LIMIT: u64 = 8 * 1024 * 1024;

/// The checkpoint thread. Dropping it stops the thread after any running checkpoint.
#[derive(Debug)]
pub(super) struct Checkpointer {
    signal: Option<SyncSender<()>>,
    thread: Option<JoinHandle<()>>,
    wal: PathBuf,
}

impl Checkpointer {
    /// Opens a second connection to `path` and starts the thread.
    pub(super) fn spawn(path: &Path, busy_timeout: Duration) -> Result<Self, StoreError> {
        let conn = Connection::open(path)?;
        conn.busy_timeout(busy_timeout)?;
        // As on the writer's connection (see `open.rs`): closing leaves a small log be.
        conn.set_db_config(DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, true)?;
        let (signal, nudges) = mpsc::sync_channel::<()>(1);
        let thread = std::thread::Builder::new()
            .name("atomic-checkpoint".to_owned())
            .spawn(move || {
                while nudges.recv().is_ok() {
                    // A failed passive checkpoint (busy, I/O) is retried at the next nudge;
                    // the backstop bounds the log meanwhile.
                    let _ = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()));
                }
            })
            .map_err(|error| StoreError::Io {
                path: "atomic-checkpoint thread".to_owned(),
                message: error.to_string(),
            })?;
        let mut wal = OsString::from(path.as_os_str());
        wal.push("-wal");
        Ok(Self {
            signal: Some(signal),
            thread: Some(thread),
            wal: PathBuf::from(wal),
        })
    }

    /// Called by the writer every [`NUDGE_EVERY`] commits: asks for a background checkpoint,
    /// and truncates an oversized log on `writer` itself.
    pub(super) fn tick(&self, writer: &Connection) {
        self.nudge();
        let size = std::fs::metadata(&self.wal).map_or(0, |meta| meta.len());
        if size > WAL_HARD_LIMIT {
            // Failure (busy past the timeout, I/O) leaves the log as it is until the next tick.
            let _ = writer.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()));
        }
    }

    /// Asks for a checkpoint soon; never blocks (nudges while one is pending coalesce).
    fn nudge(&self) {
        if let Some(signal) = &self.signal {
            match signal.try_send(()) {
                Ok(()) | Err(TrySendError::Full(())) | Err(TrySendError::Disconnected(())) => {}
            }
        }
    }
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        drop(self.signal.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
