//! A broken checkpoint store is an error everywhere: every command that opens
//! `.atomic/atomic.db` reports a file that is not SQLite, cut short, another program's
//! database or not a file, on stderr with the path and what to do, and exits 3. Nothing is
//! created or written in its place.

use crate::support::cli_project::{CliProject, stderr, stdout};

const FLOW: &str = "workflow \"w\" {\n    state { field \"n\" type=\"integer\" default=0; }\n    set \"n\" expr=\"state.n + 1\"\n}\n";

/// Every command that opens the store, each seeing `damage` the same way.
fn assert_refused_everywhere(project: &CliProject, damage: &str) {
    let db = project.path().join(".atomic/atomic.db");
    let before = std::fs::read(&db).ok();
    for args in [
        &["runs"][..],
        &["runs", "--json"],
        &["runs", "show", "01abc"],
        &["run", "flow.kdl"],
        &["resume", "01abc"],
    ] {
        let output = project.atomic().args(args).output().expect("atomic");
        let err = stderr(&output);
        assert_eq!(output.status.code(), Some(3), "{damage}: {args:?}: {err}");
        assert!(stdout(&output).is_empty(), "{damage}: {args:?}: stdout");
        assert!(
            err.contains(&db.display().to_string()) && err.contains("move it aside"),
            "{damage}: {args:?}: {err}"
        );
        assert!(!err.contains("panicked"), "{damage}: {err}");
    }
    assert!(
        std::fs::read(&db).ok() == before,
        "{damage}: the file was changed"
    );
}

fn project_with_runs() -> CliProject {
    let project = CliProject::new();
    project.write("flow.kdl", FLOW);
    for _ in 0..3 {
        let output = project
            .atomic()
            .args(["run", "flow.kdl"])
            .output()
            .expect("run");
        assert!(output.status.success(), "{}", stderr(&output));
    }
    project
}

#[test]
fn a_file_that_is_not_sqlite_is_refused() {
    let project = project_with_runs();
    let db = project.path().join(".atomic/atomic.db");
    let noise: Vec<u8> = (0..4096u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    std::fs::write(&db, noise).expect("overwrite");
    let _ = std::fs::remove_file(project.path().join(".atomic/atomic.db-wal"));
    let _ = std::fs::remove_file(project.path().join(".atomic/atomic.db-shm"));
    assert_refused_everywhere(&project, "noise");
}

#[test]
fn a_truncated_database_is_refused() {
    let project = project_with_runs();
    let db = project.path().join(".atomic/atomic.db");
    // Fold the log into the file first, so cutting the file cuts committed runs.
    let conn = rusqlite::Connection::open(&db).expect("open");
    conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
        .expect("checkpoint");
    drop(conn);
    let bytes = std::fs::read(&db).expect("read");
    std::fs::write(&db, &bytes[..bytes.len() / 2]).expect("truncate");
    let _ = std::fs::remove_file(project.path().join(".atomic/atomic.db-wal"));
    let _ = std::fs::remove_file(project.path().join(".atomic/atomic.db-shm"));
    assert_refused_everywhere(&project, "truncated");
}

#[test]
fn another_programs_database_is_refused_and_left_alone() {
    let project = CliProject::new();
    project.write("flow.kdl", FLOW);
    let db = project.path().join(".atomic/atomic.db");
    let conn = rusqlite::Connection::open(&db).expect("create");
    conn.execute_batch(
        "CREATE TABLE customers (id INTEGER, name TEXT); INSERT INTO customers VALUES (1, 'a');",
    )
    .expect("foreign schema");
    drop(conn);
    assert_refused_everywhere(&project, "foreign");
    let conn = rusqlite::Connection::open(&db).expect("reopen");
    let tables: i64 = conn
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table'",
            [],
            |row| row.get(0),
        )
        .expect("count");
    assert_eq!(tables, 1, "no atomic table was added to it");
}

#[test]
fn a_directory_in_place_of_the_database_is_refused() {
    let project = CliProject::new();
    project.write("flow.kdl", FLOW);
    std::fs::create_dir_all(project.path().join(".atomic/atomic.db")).expect("mkdir");
    for args in [&["runs"][..], &["run", "flow.kdl"]] {
        let output = project.atomic().args(args).output().expect("atomic");
        assert_eq!(
            output.status.code(),
            Some(3),
            "{args:?}: {}",
            stderr(&output)
        );
        assert!(stderr(&output).contains("atomic.db"), "{}", stderr(&output));
    }
}

#[test]
fn no_database_yet_is_not_an_error_and_creates_nothing() {
    let project = CliProject::new();
    let output = project
        .atomic()
        .args(["runs", "--json"])
        .output()
        .expect("atomic");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(stdout(&output).trim(), "[]");
    assert!(!project.path().join(".atomic/atomic.db").exists());
}
