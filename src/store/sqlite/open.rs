//! Opening the database file: where it lives, its permissions, and the connection settings
//! that make commits durable.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rusqlite::Connection;
use rusqlite::config::DbConfig;

use super::schema;
use crate::store::{KeyframePolicy, StoreError};

/// The database file under a project directory.
pub const DB_PATH: &str = ".atomic/atomic.db";

/// What survives a crash.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Durability {
    /// A committed step survives a crash of the process (kill -9) at any instant, not
    /// necessarily a power loss (WAL, `synchronous=NORMAL`). The default.
    #[default]
    Process,
    /// A committed step also survives power loss: fsync per commit (`synchronous=FULL`,
    /// `--durability full`).
    Full,
}

/// How a [`SqliteStore`](super::SqliteStore) is opened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SqliteOptions {
    /// What survives a crash.
    pub durability: Durability,
    /// How long a write waits for another process holding the database.
    pub busy_timeout: Duration,
    /// When keyframes (full copies of the state) are written.
    pub keyframes: KeyframePolicy,
    /// Checkpoint the write-ahead log on a background thread (default), rather than in
    /// the commit that fills it.
    pub background_checkpoints: bool,
    /// WAL pages after which a commit checkpoints the log itself (SQLite's
    /// `wal_autocheckpoint`): with background checkpoints, the backstop that lets the log
    /// restart from its beginning under continuous writes.
    pub wal_checkpoint_pages: u32,
}

impl Default for SqliteOptions {
    fn default() -> Self {
        Self {
            durability: Durability::Process,
            busy_timeout: Duration::from_secs(5),
            keyframes: KeyframePolicy::default(),
            background_checkpoints: true,
            wal_checkpoint_pages: 1000,
        }
    }
}

/// Creates (mode 0700 / 0600 on Unix) or opens the database at `path`, configures the
/// connection and migrates the schema.
pub(super) fn open(path: &Path, options: &SqliteOptions) -> Result<Connection, StoreError> {
    let io = |error: std::io::Error| StoreError::Io {
        path: path.display().to_string(),
        message: error.to_string(),
    };
    if let Some(dir) = path.parent().filter(|dir| !dir.as_os_str().is_empty()) {
        create_private_dir(dir).map_err(io)?;
    }
    create_private_file(path).map_err(io)?;
    // Several processes may open a fresh database at once. Switching it to WAL takes an
    // exclusive lock that SQLite's busy handler does not wait for, so set-up is retried
    // on "busy"/"locked", within the busy timeout.
    let deadline = Instant::now() + options.busy_timeout;
    let mut pause = Duration::from_millis(2);
    loop {
        match configure(path, options) {
            Err(error) if is_busy(&error) && Instant::now() < deadline => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(50));
            }
            result => return result.map_err(|error| error.at(path)),
        }
    }
}

/// Whether SQLite said another connection holds the lock it needs.
fn is_busy(error: &StoreError) -> bool {
    matches!(error, StoreError::Busy)
}

/// Opens one connection, sets the pragmas and migrates the schema.
fn configure(path: &Path, options: &SqliteOptions) -> Result<Connection, StoreError> {
    let mut conn = Connection::open(path)?;
    conn.busy_timeout(options.busy_timeout)?;
    schema::refuse_foreign(&conn, &path.display().to_string())?;
    let mode: String = conn.query_row("PRAGMA journal_mode = WAL", [], |row| row.get(0))?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(StoreError::Io {
            path: path.display().to_string(),
            message: format!("cannot use write-ahead logging (journal mode is `{mode}`)"),
        });
    }
    let synchronous = match options.durability {
        Durability::Process => "NORMAL",
        Durability::Full => "FULL",
    };
    conn.pragma_update(None, "synchronous", synchronous)?;
    // Keep the WAL file from staying large after a checkpoint.
    conn.pragma_update(None, "journal_size_limit", 4 * 1024 * 1024)?;
    conn.pragma_update(None, "wal_autocheckpoint", options.wal_checkpoint_pages)?;
    // Steps are appended at the right edge of their b-tree and read back rarely: SQLite's
    // default page cache (2 MB) only filled with pages never read again, the biggest part
    // of a long durable run's own memory. 512 KB keeps every page a commit touches.
    conn.pragma_update(None, "cache_size", -512)?;
    // A short-lived `atomic resume` should not pay for a checkpoint on close (an fsync of
    // the WAL and of the database) and then, in the next process, for recreating the WAL
    // (an fsync of it and of its directory): together most of a resume's wall time. So a
    // small WAL stays when the connection closes; a large one is folded back by
    // `Db::close` (see `WAL_KEPT_ON_CLOSE`). Committed steps are as durable either way:
    // they are in the WAL.
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, true)?;
    // The bundled SQLite has STAT4, which makes a cached statement whose parameter meets an
    // index re-prepare itself whenever that parameter is bound again: every step's lookup
    // of its run was parsed and planned anew (a fifth of the writer thread's time). The
    // plans here do not depend on the values.
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)?;
    schema::migrate(&mut conn, &path.display().to_string())?;
    Ok(conn)
}

/// The database file of a project: `<project>/.atomic/atomic.db`.
#[must_use]
pub fn project_db_path(project: &Path) -> PathBuf {
    project.join(DB_PATH)
}

#[cfg(unix)]
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    if dir.is_dir() {
        return Ok(());
    }
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

#[cfg(not(unix))]
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    fs::create_dir_all(dir)
}

/// Creates the file with mode 0600 (SQLite gives its `-wal` and `-shm` files the same
/// mode), or tightens an existing one readable by others: checkpoints hold prompts,
/// replies and inputs.
#[cfg(unix)]
fn create_private_file(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let file = fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .open(path)?;
    let mut permissions = file.metadata()?.permissions();
    if permissions.mode() & 0o077 != 0 {
        permissions.set_mode(permissions.mode() & 0o700);
        file.set_permissions(permissions)?;
    }
    Ok(())
}

#[cfg(not(unix))]
fn create_private_file(path: &Path) -> std::io::Result<()> {
    fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .map(drop)
}
