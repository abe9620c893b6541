//! The SQLite store: the shared conformance suite, plus what only a file can show —
//! permissions, crash safety, two stores on one file, and size after a long loop.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

use super::db::WAL_KEPT_ON_CLOSE;
use super::*;
use crate::store::conformance::{self, expected_state, new_run, step};
use crate::store::{Change, KeyframePolicy, RunId, RunStatus, StateDelta, Store, StoreError};

fn store_in(dir: &Path) -> SqliteStore {
    SqliteStore::open_project(dir, SqliteOptions::default()).unwrap()
}

#[tokio::test]
async fn round_trip() {
    let dir = tempfile::tempdir().unwrap();
    conformance::round_trip(&store_in(dir.path())).await;
}

#[tokio::test]
async fn following_the_log_reads_each_event_once() {
    let dir = tempfile::tempdir().unwrap();
    conformance::following_the_log_reads_each_event_once(&store_in(dir.path())).await;
}

#[tokio::test]
async fn out_of_order_steps_conflict() {
    let dir = tempfile::tempdir().unwrap();
    conformance::out_of_order_steps_conflict(&store_in(dir.path())).await;
}

#[tokio::test]
async fn progress_is_kept_by_key() {
    let dir = tempfile::tempdir().unwrap();
    conformance::progress_is_kept_by_key(&store_in(dir.path())).await;
}

#[tokio::test]
async fn keyframes_and_deltas_reconstruct() {
    let dir = tempfile::tempdir().unwrap();
    let options = SqliteOptions {
        keyframes: KeyframePolicy {
            every_steps: 7,
            min_bytes: 0,
        },
        ..SqliteOptions::default()
    };
    let store = SqliteStore::open_project(dir.path(), options).unwrap();
    conformance::keyframes_and_deltas_reconstruct(&store, 50).await;
    drop(store);
    let conn = rusqlite::Connection::open(dir.path().join(DB_PATH)).unwrap();
    let keyframes: i64 = conn
        .query_row("SELECT count(*) FROM keyframes", [], |row| row.get(0))
        .unwrap();
    assert!((2..=8).contains(&keyframes), "{keyframes} keyframes");
}

#[tokio::test]
async fn pause_fail_and_list() {
    let dir = tempfile::tempdir().unwrap();
    conformance::pause_fail_and_list(&store_in(dir.path())).await;
}

#[tokio::test]
async fn resolves_prefixes_and_deletes() {
    let dir = tempfile::tempdir().unwrap();
    conformance::resolves_prefixes_and_deletes(&store_in(dir.path())).await;
}

#[tokio::test]
async fn scoped_steps_stay_open_until_the_block_ends() {
    let dir = tempfile::tempdir().unwrap();
    conformance::scoped_steps_stay_open_until_the_block_ends(&store_in(dir.path())).await;
    // Read again by a new process (the steps folded from the log into the database).
    let store = store_in(dir.path());
    let checkpoint = store
        .checkpoint(&RunId::new("01ffffffffffff"))
        .await
        .unwrap();
    assert!(checkpoint.open.is_empty());
    assert_eq!(checkpoint.run.steps, 5);
}

#[tokio::test]
async fn amends_a_run() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open_project(dir.path(), SqliteOptions::default()).unwrap();
    conformance::amends_a_run(&store).await;
}

#[tokio::test]
async fn copies_a_run_up_to_a_step() {
    let dir = tempfile::tempdir().unwrap();
    let options = SqliteOptions {
        keyframes: KeyframePolicy {
            every_steps: 2,
            min_bytes: usize::MAX,
        },
        ..SqliteOptions::default()
    };
    let store = SqliteStore::open_project(dir.path(), options).unwrap();
    conformance::copies_a_run_up_to_a_step(&store).await;
    drop(store);
    let conn = rusqlite::Connection::open(dir.path().join(DB_PATH)).unwrap();
    let keyframes: Vec<i64> = conn
        .prepare("SELECT seq FROM keyframes WHERE run_id = '01copytotototo' ORDER BY seq")
        .unwrap()
        .query_map([], |row| row.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(
        keyframes,
        [0, 2],
        "the keyframes up to step 3, not the one at 4"
    );
}

/// Steps a process acknowledged that are still only in the run's step log (its writer
/// thread had not folded them) are copied too, and the copy reads back from a new store.
#[tokio::test]
async fn a_copy_includes_the_steps_only_in_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(dir.path());
    let from = RunId::new("01logloglogfrom");
    store.create_run(new_run(from.as_str(), "x")).await.unwrap();
    for seq in 1..=3 {
        store.commit_step(&from, step(seq)).await.unwrap();
    }
    // Steps 4 and 5 as the driving process logged them before it died.
    let db = dir.path().join(DB_PATH);
    let log = steplog::StepLog::new(steplog::log_dir(&db), false);
    for seq in 4..=5 {
        log.append(&from, &steplog::Encoded::new(step(seq)))
            .unwrap();
    }
    let to = RunId::new("01loglogloguntil");
    store
        .copy_run(
            &from,
            &to,
            Some(4),
            RunStatus::Paused,
            Some(format!("{from}@4")),
        )
        .await
        .unwrap();
    let all = RunId::new("01logloglogall");
    store
        .copy_run(&from, &all, None, RunStatus::Cancelled, None)
        .await
        .unwrap();
    drop(store);

    let store = store_in(dir.path());
    let copy = store.checkpoint(&to).await.unwrap();
    assert_eq!((copy.seq, copy.state), (4, expected_state(4, "x")));
    assert_eq!(copy.run.origin, Some(format!("{from}@4")));
    assert_eq!(copy.run.status, RunStatus::Paused);
    let copy = store.checkpoint(&all).await.unwrap();
    assert_eq!((copy.seq, copy.state), (5, expected_state(5, "x")));
    assert_eq!(copy.run.origin, None);
    assert!(
        !steplog::log_path(&steplog::log_dir(&db), &to).exists(),
        "a copy has no step log of its own"
    );
    store.commit_step(&to, step(5)).await.unwrap();
    assert_eq!(
        store.load_state(&to, 5).await.unwrap(),
        expected_state(5, "x")
    );
}

#[tokio::test]
async fn reopened_store_continues_a_run() {
    let dir = tempfile::tempdir().unwrap();
    let id = RunId::new("01gggggggggggg");
    let store = store_in(dir.path());
    store.create_run(new_run(id.as_str(), "x")).await.unwrap();
    for seq in 1..=3 {
        store.commit_step(&id, step(seq)).await.unwrap();
    }
    drop(store);
    let store = store_in(dir.path());
    let checkpoint = store.checkpoint(&id).await.unwrap();
    assert_eq!(
        (checkpoint.seq, checkpoint.state),
        (3, expected_state(3, "x"))
    );
    store.commit_step(&id, step(4)).await.unwrap();
    assert_eq!(
        store.load_state(&id, 4).await.unwrap(),
        expected_state(4, "x")
    );
}

#[cfg(unix)]
#[tokio::test]
async fn files_are_private() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(dir.path());
    let id = RunId::new("01hhhhhhhhhhhh");
    store
        .create_run(new_run(id.as_str(), "secret prompt"))
        .await
        .unwrap();
    store.commit_step(&id, step(1)).await.unwrap();
    let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    let db = dir.path().join(DB_PATH);
    assert_eq!(mode(&dir.path().join(".atomic")), 0o700);
    assert_eq!(mode(&db), 0o600);
    for suffix in ["-wal", "-shm"] {
        let side = db.with_file_name(format!("atomic.db{suffix}"));
        assert_eq!(mode(&side), 0o600, "{}", side.display());
    }
    drop(store);

    // An existing database readable by others is tightened on open.
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o644)).unwrap();
    drop(store_in(dir.path()));
    assert_eq!(mode(&db), 0o600);
}

#[test]
fn newer_schema_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    drop(store_in(dir.path()));
    let db = dir.path().join(DB_PATH);
    rusqlite::Connection::open(&db)
        .unwrap()
        .pragma_update(None, "user_version", 99)
        .unwrap();
    let error = SqliteStore::open(&db, SqliteOptions::default()).unwrap_err();
    assert!(
        matches!(
            error,
            StoreError::TooNew {
                found: 99,
                supported: schema::VERSION,
                ..
            }
        ),
        "{error}"
    );
}

/// A database written by an atomic before the progress table (schema 1) is migrated on
/// open, its runs kept; so is one before leases (schema 2), and so on up to now.
#[tokio::test]
async fn a_version_1_database_gains_the_progress_table() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(dir.path());
    store.create_run(new_run("old", "")).await.unwrap();
    store
        .commit_step(&crate::store::RunId::new("old"), step(1))
        .await
        .unwrap();
    drop(store);
    let db = dir.path().join(DB_PATH);
    let conn = rusqlite::Connection::open(&db).unwrap();
    // As version 1 left it: no progress, leases or step scopes, and a paused run's wait
    // as one object.
    conn.execute_batch(
        r#"DROP TABLE progress; DROP TABLE leases; ALTER TABLE steps DROP COLUMN scope;
        ALTER TABLE steps DROP COLUMN outputs; ALTER TABLE keyframes DROP COLUMN outputs;
        ALTER TABLE keyframes RENAME TO snapshots; ALTER TABLE runs DROP COLUMN origin;
        DROP TABLE chat_sessions;
        UPDATE runs SET status = 'paused',
            wait = '{"node_id":"ask","prompt":"Go?","answer":"yes-no","choices":[],"schema":null}';
        PRAGMA user_version = 1;"#,
    )
    .unwrap();
    drop(conn);
    let store = SqliteStore::open(&db, SqliteOptions::default()).unwrap();
    let id = crate::store::RunId::new("old");
    let run = store.run(&id).await.expect("the run survived");
    assert_eq!(run.waits.len(), 1, "{:?}", run.waits);
    assert_eq!(run.waits[0].key(), "ask");
    let detail = store.run_detail(&id).await.unwrap();
    assert_eq!(detail.steps[0].scope, None);
    store
        .save_progress(&id, "a#0", serde_json::json!({"ok": true}))
        .await
        .expect("the progress table exists");
    let me = crate::store::Owner::this_process();
    store
        .acquire(&id, &me)
        .await
        .expect("the leases table exists");
}

/// A database written at schema 5, when the keyframes were in a table named `snapshots`:
/// its schema made by the migrations up to 5 only, its rows a run's as a store wrote them.
/// Opening it renames the table (and the index of its key), every state of the run reads
/// back from the keyframes it had, and the run goes on writing new ones beside them.
#[tokio::test]
async fn a_version_5_database_keeps_its_keyframes() {
    // A keyframe every 7 steps, never earlier for the deltas' size.
    let options = SqliteOptions {
        keyframes: KeyframePolicy {
            every_steps: 7,
            min_bytes: usize::MAX,
        },
        ..SqliteOptions::default()
    };
    let id = RunId::new("01oldoldoldold");
    let written = tempfile::tempdir().unwrap();
    let store = SqliteStore::open_project(written.path(), options).unwrap();
    store.create_run(new_run(id.as_str(), "x")).await.unwrap();
    for seq in 1..=30 {
        store.commit_step(&id, step(seq)).await.unwrap();
    }
    drop(store);

    let old = tempfile::tempdir().unwrap();
    let db = old.path().join(DB_PATH);
    std::fs::create_dir_all(db.parent().unwrap()).unwrap();
    let mut conn = rusqlite::Connection::open(&db).unwrap();
    schema::create_at_version(&mut conn, 5).unwrap();
    let source = written.path().join(DB_PATH);
    conn.execute("ATTACH DATABASE ?1 AS written", [source.to_str().unwrap()])
        .unwrap();
    conn.execute_batch(
        "INSERT INTO runs SELECT id, workflow, path, hash, inputs, status, created_at,
             updated_at, error, wait FROM written.runs;
         INSERT INTO steps SELECT * FROM written.steps;
         INSERT INTO run_events SELECT * FROM written.run_events;
         INSERT INTO snapshots SELECT * FROM written.keyframes;
         DETACH DATABASE written;",
    )
    .unwrap();
    let seqs = |conn: &rusqlite::Connection, table: &str| -> Vec<i64> {
        conn.prepare(&format!("SELECT seq FROM {table} ORDER BY seq"))
            .unwrap()
            .query_map([], |row| row.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    };
    assert_eq!(seqs(&conn, "snapshots"), [0, 7, 14, 21, 28]);
    drop(conn);

    let store = SqliteStore::open(&db, options).unwrap();
    for upto in 0..=30 {
        assert_eq!(
            store.load_state(&id, upto).await.unwrap(),
            expected_state(upto, "x"),
            "state after step {upto}"
        );
    }
    let checkpoint = store.checkpoint(&id).await.unwrap();
    assert_eq!(
        (checkpoint.seq, checkpoint.state),
        (30, expected_state(30, "x"))
    );
    assert_eq!(
        checkpoint.outputs,
        *json!({"node-0": {"text": "reply 30"}, "node-1": {"text": "reply 29"}})
            .as_object()
            .unwrap()
    );
    // The run goes on; a reopened store counts steps from where it resumed (30).
    for seq in 31..=37 {
        store.commit_step(&id, step(seq)).await.unwrap();
    }
    assert_eq!(
        store.load_state(&id, 37).await.unwrap(),
        expected_state(37, "x")
    );
    drop(store);

    let conn = rusqlite::Connection::open(&db).unwrap();
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |row| row.get(0))
        .unwrap();
    assert_eq!(version, schema::VERSION);
    let named: Vec<String> = conn
        .prepare(
            "SELECT name FROM sqlite_master WHERE tbl_name IN ('snapshots', 'keyframes')
             ORDER BY name",
        )
        .unwrap()
        .query_map([], |row| row.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(named, ["keyframes", "sqlite_autoindex_keyframes_1"]);
    assert_eq!(seqs(&conn, "keyframes"), [0, 7, 14, 21, 28, 37]);
}

/// One process holds a run at a time: a second live owner is refused, a dead one's run is
/// taken over, the holder's heartbeat sees a cancellation request, and a holder whose run
/// was taken over learns it at its next heartbeat.
#[tokio::test]
async fn leases_exclude_a_second_live_owner_and_pass_from_a_dead_one() {
    use crate::store::{Acquired, Owner};
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(dir.path());
    let id = RunId::new("01leaseleaselea");
    store.create_run(new_run(id.as_str(), "")).await.unwrap();
    let me = Owner::this_process();
    assert_eq!(store.acquire(&id, &me).await.unwrap(), Acquired::Free);
    assert_eq!(
        store.acquire(&id, &me).await.unwrap(),
        Acquired::Free,
        "re-entrant"
    );

    // Another live process on this machine: the parent of this test process.
    let parent_pid = std::os::unix::process::parent_id();
    let stat = std::fs::read_to_string(format!("/proc/{parent_pid}/stat")).unwrap();
    let start = stat[stat.rfind(')').unwrap() + 1..]
        .split_whitespace()
        .nth(19)
        .unwrap()
        .to_owned();
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap();
    let other = Owner {
        pid: parent_pid,
        started: format!("{}:{start}", boot.trim()),
        ..me.clone()
    };
    let refused = store.acquire(&id, &other).await.unwrap_err();
    assert!(matches!(refused, StoreError::Owned { .. }), "{refused}");
    assert!(
        refused.to_string().contains(&format!("pid {}", me.pid)),
        "{refused}"
    );

    // The holder dies (its start time no longer matches a process): taken over.
    store.release(&id, &me).await.unwrap();
    let dead = Owner {
        started: "another-boot:1".to_owned(),
        ..me.clone()
    };
    assert_eq!(store.acquire(&id, &dead).await.unwrap(), Acquired::Free);
    assert_eq!(
        store.acquire(&id, &me).await.unwrap(),
        Acquired::TakenOver(dead.clone())
    );
    let lost = store.heartbeat(&id, &dead).await.unwrap_err();
    assert!(matches!(lost, StoreError::LeaseLost { .. }), "{lost}");

    assert!(!store.heartbeat(&id, &me).await.unwrap().cancel_requested);
    assert!(store.request_cancel(&id).await.unwrap());
    assert!(store.heartbeat(&id, &me).await.unwrap().cancel_requested);
    store.release(&id, &me).await.unwrap();
    assert_eq!(store.lease(&id).await.unwrap(), None);
    assert!(!store.request_cancel(&id).await.unwrap(), "nobody to ask");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_stores_share_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let a = std::sync::Arc::new(store_in(dir.path()));
    let b = std::sync::Arc::new(store_in(dir.path()));
    let (ida, idb) = (RunId::new("01aaaa00000000"), RunId::new("01bbbb00000000"));
    a.create_run(new_run(ida.as_str(), "")).await.unwrap();
    b.create_run(new_run(idb.as_str(), "")).await.unwrap();
    let drive = |store: std::sync::Arc<SqliteStore>, id: RunId| async move {
        for seq in 1..=150 {
            store.commit_step(&id, step(seq)).await.unwrap();
        }
    };
    let (first, second) = tokio::join!(
        tokio::spawn(drive(a.clone(), ida.clone())),
        tokio::spawn(drive(b.clone(), idb.clone()))
    );
    first.unwrap();
    second.unwrap();
    // Each sees the other's commits.
    assert_eq!(
        a.checkpoint(&idb).await.unwrap().state,
        expected_state(150, "")
    );
    assert_eq!(
        b.checkpoint(&ida).await.unwrap().state,
        expected_state(150, "")
    );
}

/// A commit returns once its step is in the run's step log; another process holding the
/// database delays the step's way into it (busy timeout), and never loses it: a store whose
/// timeout is shorter than the hold reports the failure at its next call, and the step is
/// folded in from the log later. A patient reader waits for the lock.
#[tokio::test]
async fn busy_timeout_waits_for_another_writer() {
    let dir = tempfile::tempdir().unwrap();
    let id = RunId::new("01iiiiiiiiiiii");
    let store = store_in(dir.path());
    store.create_run(new_run(id.as_str(), "")).await.unwrap();
    let impatient = SqliteStore::open_project(
        dir.path(),
        SqliteOptions {
            busy_timeout: Duration::from_millis(20),
            ..SqliteOptions::default()
        },
    )
    .unwrap();

    // Another connection takes the write lock and keeps it until told to let go.
    let hold = || {
        let db = dir.path().join(DB_PATH);
        let (locked, is_locked) = std::sync::mpsc::channel();
        let (release, released) = std::sync::mpsc::channel::<()>();
        let holder = std::thread::spawn(move || {
            let mut conn = rusqlite::Connection::open(db).unwrap();
            let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate);
            let tx = tx.unwrap();
            locked.send(()).unwrap();
            let _ = released.recv_timeout(Duration::from_secs(10));
            tx.commit().unwrap();
        });
        is_locked.recv().unwrap();
        (holder, release)
    };

    let (holder, release) = hold();
    impatient
        .commit_step(&id, step(1))
        .await
        .expect("durable in the log before the database has it");
    let error = impatient.run(&id).await.unwrap_err();
    assert!(matches!(error, StoreError::Busy), "{error}");
    release.send(()).unwrap();
    holder.join().unwrap();
    assert_eq!(
        store.checkpoint(&id).await.unwrap().seq,
        1,
        "folded from the log, nothing lost"
    );

    let (holder, release) = hold();
    store
        .commit_step(&id, step(2))
        .await
        .expect("a commit does not wait for the database");
    let started = Instant::now();
    let let_go = async {
        tokio::time::sleep(Duration::from_millis(200)).await;
        release.send(()).unwrap();
    };
    let (read, ()) = tokio::join!(store.checkpoint(&id), let_go);
    assert_eq!(read.unwrap().seq, 2);
    assert!(
        started.elapsed() >= Duration::from_millis(200),
        "{:?}",
        started.elapsed()
    );
    holder.join().unwrap();
    assert_eq!(impatient.checkpoint(&id).await.unwrap().seq, 2);
}

/// W4's shape: 2,000 steps of a loop over a state with a 100 KB constant string; the store
/// must grow by the deltas, not by the state per step.
#[tokio::test]
async fn long_loop_over_large_state_stays_small() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(dir.path());
    let id = RunId::new("01jjjjjjjjjjjj");
    let big = "x".repeat(100 * 1024);
    store.create_run(new_run(id.as_str(), &big)).await.unwrap();
    for seq in 1..=2000u64 {
        let mut delta = StateDelta::new();
        delta.record("n", Change::Set(json!(seq)), &json!(seq));
        let mut commit = step(seq);
        commit.delta = delta;
        commit.node_id = if seq.is_multiple_of(2) {
            "check"
        } else {
            "increment"
        }
        .to_owned();
        commit.events = vec![
            json!({"type": "node-started", "node": commit.node_id}).into(),
            json!({"type": "node-finished", "node": commit.node_id, "ms": 0}).into(),
        ];
        store.commit_step(&id, commit).await.unwrap();
    }
    let state = store.load_state(&id, 2000).await.unwrap();
    assert_eq!(
        (state["n"].clone(), state["big"].as_str().map(str::len)),
        (json!(2000), Some(big.len()))
    );
    // Checkpoints keep the write-ahead log bounded while the run goes on (8 MiB hard limit,
    // checked every 256 commits).
    let db = dir.path().join(DB_PATH);
    let wal = db.with_file_name("atomic.db-wal");
    let live_wal = std::fs::metadata(&wal).map_or(0, |m| m.len());
    assert!(
        live_wal <= 11 * 1024 * 1024,
        "wal {live_wal} B during the run"
    );
    drop(store);
    // A large log is folded back on close (`Db::close`), leaving it empty; a small one
    // stays for the next process (steps written in batches make it small).
    let closed_wal = std::fs::metadata(&wal).map_or(0, |m| m.len());
    assert!(
        closed_wal == 0 || closed_wal <= WAL_KEPT_ON_CLOSE,
        "closing checkpoints and truncates a large log: {closed_wal} B"
    );
    let size = std::fs::metadata(&db).unwrap().len();
    assert!(size <= 2 * 1024 * 1024, "db {size} B");
    // And reconstructing from the database alone still works.
    let store = store_in(dir.path());
    assert_eq!(store.load_state(&id, 1234).await.unwrap()["n"], json!(1234));
}

const CRASH_DB: &str = "ATOMIC_TEST_CRASH_DB";
const CRASH_FROM: &str = "ATOMIC_TEST_CRASH_FROM";
const CRASH_RUN: &str = "01kkkkkkkkkkkk";

/// The child of [`a_killed_writer_loses_no_committed_step`]: commits steps forever (bounded)
/// and reports each one on stdout once its commit returned.
#[tokio::test]
#[ignore = "helper process of a_killed_writer_loses_no_committed_step"]
async fn crash_child() {
    let (Ok(db), Ok(from)) = (std::env::var(CRASH_DB), std::env::var(CRASH_FROM)) else {
        panic!("run by a_killed_writer_loses_no_committed_step only");
    };
    let store = SqliteStore::open(Path::new(&db), SqliteOptions::default()).unwrap();
    let id = RunId::new(CRASH_RUN);
    let from: u64 = from.parse().unwrap();
    let mut out = std::io::stdout().lock();
    let started = Instant::now();
    for seq in from..from + 100_000 {
        store.commit_step(&id, step(seq)).await.unwrap();
        writeln!(out, "committed {seq}").unwrap();
        out.flush().unwrap();
        assert!(started.elapsed() < Duration::from_secs(60), "never killed");
    }
}

/// kill -9 a process that is committing steps as fast as it can, three times over, resuming
/// each time from the checkpoint: every step the child reported committed is there, intact,
/// and the state equals an uninterrupted run's.
#[tokio::test]
async fn a_killed_writer_loses_no_committed_step() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join(DB_PATH);
    let id = RunId::new(CRASH_RUN);
    let store = store_in(dir.path());
    store
        .create_run(new_run(CRASH_RUN, "payload"))
        .await
        .unwrap();
    drop(store);
    let mut from = 1;
    for round in 0..3 {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "store::sqlite::tests::crash_child",
                "--ignored",
                "--nocapture",
            ])
            .env(CRASH_DB, &db)
            .env(CRASH_FROM, from.to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let mut reported = 0;
        let started = Instant::now();
        for line in BufReader::new(stdout).lines() {
            if let Some(seq) = line.unwrap().strip_prefix("committed ") {
                reported = seq.parse().unwrap();
            }
            if reported >= from + 40 + round * 17 || started.elapsed() > Duration::from_secs(30) {
                break;
            }
        }
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        assert!(
            reported >= from,
            "round {round}: the child committed nothing"
        );

        let store = store_in(dir.path());
        let checkpoint = store.checkpoint(&id).await.unwrap();
        assert!(
            checkpoint.seq >= reported,
            "round {round}: lost {reported} > {}",
            checkpoint.seq
        );
        assert_eq!(checkpoint.state, expected_state(checkpoint.seq, "payload"));
        assert_eq!(checkpoint.cursor, Some(json!({"next": checkpoint.seq + 1})));
        let detail = store.run_detail(&id).await.unwrap();
        assert_eq!(detail.steps.len() as u64, checkpoint.seq);
        assert_eq!(
            detail.events.len() as u64,
            checkpoint.seq,
            "events commit with steps"
        );
        from = checkpoint.seq + 1;
    }
    let conn = rusqlite::Connection::open(&db).unwrap();
    let check: String = conn
        .query_row("PRAGMA integrity_check", [], |row| row.get(0))
        .unwrap();
    assert_eq!(check, "ok");
}

/// A short-lived process leaves its small WAL in place (no checkpoint, no fsyncs on close,
/// none to recreate it next time); a long run's large WAL is folded back on close.
#[tokio::test]
async fn closing_keeps_a_small_wal_and_folds_a_large_one() {
    let dir = tempfile::tempdir().unwrap();
    let wal = dir.path().join(format!("{DB_PATH}-wal"));
    let store = store_in(dir.path());
    store.create_run(new_run("small", "x")).await.unwrap();
    store
        .commit_step(&RunId::new("small"), step(1))
        .await
        .unwrap();
    drop(store);
    let kept = std::fs::metadata(&wal).map(|m| m.len()).unwrap_or(0);
    assert!(kept > 0, "the small WAL stays");
    assert!(kept <= WAL_KEPT_ON_CLOSE, "{kept}");

    let store = store_in(dir.path());
    let big = "y".repeat(200 * 1024);
    for index in 0..8 {
        let id = format!("big{index}");
        store.create_run(new_run(&id, &big)).await.unwrap();
    }
    let before = std::fs::metadata(&wal).map(|m| m.len()).unwrap_or(0);
    assert!(before > WAL_KEPT_ON_CLOSE, "{before}");
    drop(store);
    let after = std::fs::metadata(&wal).map(|m| m.len()).unwrap_or(0);
    assert_eq!(after, 0, "a large WAL is checkpointed and truncated");
    // Everything is still there.
    let store = store_in(dir.path());
    assert_eq!(store.checkpoint(&RunId::new("small")).await.unwrap().seq, 1);
    assert_eq!(
        store.checkpoint(&RunId::new("big7")).await.unwrap().state["big"],
        json!(big)
    );
}

/// A long run's step log does not grow without bound: once it passes a few megabytes and its
/// steps are in the database, it is emptied; nothing is lost.
#[tokio::test]
async fn a_long_runs_step_log_is_emptied_once_folded() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(dir.path());
    let id = RunId::new("01longlonglonglo");
    store.create_run(new_run(id.as_str(), "")).await.unwrap();
    let chunk = "y".repeat(40 * 1024);
    for seq in 1..=200u64 {
        let mut delta = StateDelta::new();
        delta.record("n", Change::Set(json!(seq)), &json!(seq));
        delta.record("blob", Change::Set(json!(chunk)), &json!(chunk));
        let mut commit = step(seq);
        commit.delta = delta;
        store.commit_step(&id, commit).await.unwrap();
    }
    let log = dir
        .path()
        .join(".atomic/steps")
        .join(format!("{}.log", id.as_str()));
    let size = std::fs::metadata(&log).map_or(0, |meta| meta.len());
    assert!(
        size <= super::steplog::RESET_AFTER + 64 * 1024,
        "the log holds {size} bytes"
    );
    drop(store);
    let store = store_in(dir.path());
    let checkpoint = store.checkpoint(&id).await.unwrap();
    assert_eq!(checkpoint.seq, 200);
    assert_eq!(checkpoint.state["n"], json!(200));
}
