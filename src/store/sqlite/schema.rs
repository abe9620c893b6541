//! The database schema and its migrations, versioned by SQLite's `user_version`.
//!
//! Each entry of [`MIGRATIONS`] moves the schema one version up; a database is migrated in
//! one transaction on open. Never edit a released migration: append a new one.

use rusqlite::Connection;

use crate::store::StoreError;

/// Migration `i` takes the schema from version `i` to `i + 1`.
const MIGRATIONS: &[&str] = &[
    // 1: runs, steps (deltas and cursors), snapshots, events.
    "
    CREATE TABLE runs (
        id          TEXT PRIMARY KEY,
        workflow    TEXT NOT NULL,
        path        TEXT NOT NULL,
        hash        TEXT NOT NULL,
        inputs      TEXT NOT NULL,
        status      TEXT NOT NULL,
        created_at  INTEGER NOT NULL,
        updated_at  INTEGER NOT NULL,
        last_seq    INTEGER NOT NULL DEFAULT 0,
        error       TEXT,
        wait        TEXT
    ) STRICT;
    CREATE INDEX runs_by_workflow ON runs (workflow);
    CREATE TABLE steps (
        run_id      TEXT NOT NULL,
        seq         INTEGER NOT NULL,
        node_id     TEXT NOT NULL,
        started_at  INTEGER NOT NULL,
        finished_at INTEGER NOT NULL,
        status      TEXT NOT NULL,
        attempts    INTEGER NOT NULL,
        delta       TEXT NOT NULL,
        cursor      TEXT NOT NULL,
        error       TEXT,
        PRIMARY KEY (run_id, seq)
    ) STRICT;
    CREATE TABLE snapshots (
        run_id      TEXT NOT NULL,
        seq         INTEGER NOT NULL,
        state       TEXT NOT NULL,
        PRIMARY KEY (run_id, seq)
    ) STRICT;
    CREATE TABLE events (
        id          INTEGER PRIMARY KEY,
        run_id      TEXT NOT NULL,
        step        INTEGER NOT NULL,
        event       TEXT NOT NULL
    ) STRICT;
    CREATE INDEX events_by_run ON events (run_id, id);
    ",
];

/// The schema version this build writes.
pub(super) const VERSION: i64 = MIGRATIONS.len() as i64;

/// Brings the schema up to [`VERSION`].
pub(super) fn migrate(conn: &mut Connection, path: &str) -> Result<(), StoreError> {
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let found: i64 = tx.query_row("PRAGMA user_version", [], |row| row.get(0))?;
    if found > VERSION {
        return Err(StoreError::TooNew {
            path: path.to_owned(),
            found,
            supported: VERSION,
        });
    }
    for migration in &MIGRATIONS[found as usize..] {
        tx.execute_batch(migration)?;
    }
    if found < VERSION {
        tx.pragma_update(None, "user_version", VERSION)?;
    }
    tx.commit()?;
    Ok(())
}
