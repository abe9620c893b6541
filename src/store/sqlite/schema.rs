//! The database schema and its migrations, versioned by SQLite's `user_version`.
//!
//! Each entry of [`MIGRATIONS`] moves the schema one version up; a database is migrated in
//! one transaction on open. Never edit a released migration: append a new one.

use rusqlite::Connection;

use crate::store::StoreError;

/// Migration `i` takes the schema from version `i` to `i + 1`.
const MIGRATIONS: &[&str] = &[
    // 1: runs, steps (deltas, cursors and the events committed with them), snapshots
    // (keyframes since 6), and events logged between steps. A step commit writes one b-tree
    // (steps, keyed by run and sequence, its events inline) and touches `runs` only when the
    // run's status changes: a run's step count and last change are read from its last step.
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
        events      TEXT NOT NULL,
        error       TEXT,
        PRIMARY KEY (run_id, seq)
    ) STRICT, WITHOUT ROWID;
    CREATE TABLE snapshots (
        run_id      TEXT NOT NULL,
        seq         INTEGER NOT NULL,
        state       TEXT NOT NULL,
        PRIMARY KEY (run_id, seq)
    ) STRICT;
    CREATE TABLE run_events (
        id          INTEGER PRIMARY KEY,
        run_id      TEXT NOT NULL,
        after_step  INTEGER NOT NULL,
        event       TEXT NOT NULL
    ) STRICT;
    CREATE INDEX run_events_by_run ON run_events (run_id, id);
    ",
    // 2: the progress of calls in flight (an agent's conversation after each round of tool
    // calls), so a resumed run continues a call instead of repeating its tools.
    "
    CREATE TABLE progress (
        run_id      TEXT NOT NULL,
        key         TEXT NOT NULL,
        value       TEXT NOT NULL,
        PRIMARY KEY (run_id, key)
    ) STRICT, WITHOUT ROWID;
    ",
    // 3: who is running a run (one process at a time), its heartbeat, and a cancellation
    // request from another process.
    "
    CREATE TABLE leases (
        run_id            TEXT PRIMARY KEY,
        owner             TEXT NOT NULL,
        since_ms          INTEGER NOT NULL,
        heartbeat_ms      INTEGER NOT NULL,
        cancel_requested  INTEGER NOT NULL DEFAULT 0
    ) STRICT, WITHOUT ROWID;
    ",
    // 4: steps inside blocks (parallel branches, subgraphs): the block a step ran in, whose
    // delta is the block's and not the run's. A run's pending waits become a JSON list
    // (one per paused block); a lone object is still read as one wait.
    "
    ALTER TABLE steps ADD COLUMN scope TEXT;
    ",
    // 5: node outputs kept as outputs, beside the state: the outputs a step recorded, and
    // the latest output of each node at a snapshot (keyframe since 6; NULL: none). Runs
    // stored before keep theirs as `#output:<node>` state fields, which the runtime still
    // reads.
    "
    ALTER TABLE steps ADD COLUMN outputs TEXT;
    ALTER TABLE snapshots ADD COLUMN outputs TEXT;
    ",
    // 6: the full copies of a run's state are called keyframes (the steps' deltas being the
    // frames between them), freeing "snapshot" for snapshots of a workspace's files.
    // Renaming the table renames its primary key's index with it
    // (`sqlite_autoindex_keyframes_1`); no other index, trigger or view names it.
    "
    ALTER TABLE snapshots RENAME TO keyframes;
    ",
    // 7: where a run came from when it is a copy of another (`atomic fork`, `atomic
    // rewind`): `RUN@STEP`. NULL for every run stored before, and for runs started afresh.
    "
    ALTER TABLE runs ADD COLUMN origin TEXT;
    ",
    // 8: `atomic chat`'s saved conversations, beside the runs: who it talked to, the
    // backend's session to continue, the tools allowed for the session, and the
    // transcript (JSON, secrets redacted). Stores written before simply gain the table.
    "
    CREATE TABLE chat_sessions (
        id               TEXT PRIMARY KEY,
        created_at       INTEGER NOT NULL,
        updated_at       INTEGER NOT NULL,
        adapter          TEXT NOT NULL,
        model            TEXT,
        backend_session  TEXT,
        allowed_tools    TEXT NOT NULL,
        title            TEXT NOT NULL,
        turns            INTEGER NOT NULL,
        transcript       TEXT NOT NULL
    ) STRICT;
    CREATE INDEX chat_sessions_by_update ON chat_sessions (updated_at);
    ",
    // 9: a plain step's events (`step-started` and `step-finished`, all but the node's kind
    // in the row already) are stored as the kind alone, a JSON string, and rebuilt from the
    // row when read (`implicit.rs`). No table changes; the version keeps an older atomic,
    // which would read `"set"` as a corrupt list of events, from opening such a store.
    "",
];

/// The schema version this build writes.
pub(super) const VERSION: i64 = MIGRATIONS.len() as i64;

/// Creates the schema exactly as version `version` of atomic left it, by its migrations
/// only: a database written before a later migration, for that migration's tests.
#[cfg(test)]
pub(super) fn create_at_version(conn: &mut Connection, version: i64) -> rusqlite::Result<()> {
    let tx = conn.transaction()?;
    for migration in &MIGRATIONS[..version as usize] {
        tx.execute_batch(migration)?;
    }
    tx.pragma_update(None, "user_version", version)?;
    tx.commit()
}

/// Refuses a database that belongs to another program: tables, none of them atomic's. Runs
/// before anything writes to the file (switching it to WAL rewrites its header).
pub(super) fn refuse_foreign(conn: &Connection, path: &str) -> Result<(), StoreError> {
    let mut tables = conn.prepare(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
    )?;
    let names: Vec<String> = tables
        .query_map([], |row| row.get(0))?
        .collect::<Result<_, _>>()?;
    if names.is_empty() || names.iter().any(|name| name == "runs") {
        return Ok(());
    }
    Err(StoreError::Damaged {
        path: path.to_owned(),
        reason: format!(
            "it is another program's SQLite database (tables {})",
            names
                .iter()
                .take(5)
                .map(|name| format!("`{name}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    })
}

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
