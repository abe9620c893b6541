//! Checkpoint store benchmarks (W4's store side): the cost of one `commit_step` — a loop
//! step's delta, cursor and two events — on a run whose state holds a 100 KB constant
//! string, for the SQLite store at both durability levels and the memory store; and the
//! round trip of the two ways to call a sync API from async code.
//!
//! `cargo bench --bench store`. Also prints the database size after 2,000 such steps.

#![allow(clippy::print_stderr, reason = "a benchmark reports its figures")]

use std::sync::Arc;
use std::time::{Duration, Instant};

use atomic::store::{
    Change, Durability, MemoryStore, NewRun, RunId, RunStatus, SqliteOptions, SqliteStore,
    StateDelta, StepCommit, StepStatus, Store, Timestamp,
};
use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use tokio::runtime::Runtime;

fn new_run(id: &RunId) -> NewRun {
    let state = json!({"counter": 0, "big": "x".repeat(100 * 1024)});
    NewRun {
        id: id.clone(),
        workflow: "w4".to_owned(),
        path: "w4.kdl".to_owned(),
        hash: "0".to_owned(),
        inputs: json!({}),
        state: state.as_object().expect("an object").clone(),
    }
}

/// Step `seq` of the increment/check loop.
fn step(seq: u64) -> StepCommit {
    let mut delta = StateDelta::new();
    delta.record("counter", Change::Set(json!(seq)), &json!(seq));
    let node = if seq.is_multiple_of(2) {
        "check"
    } else {
        "increment"
    };
    StepCommit {
        seq,
        scope: None,
        outputs: atomic::store::State::new(),
        node_id: node.to_owned(),
        started_at: Timestamp::now(),
        finished_at: Timestamp::now(),
        status: StepStatus::Completed,
        attempts: 1,
        delta,
        cursor: json!({"at": node, "loop": {"iteration": seq / 2}}).into(),
        events: vec![
            json!({"type": "node-started", "node": node}).into(),
            json!({"type": "node-finished", "node": node, "ms": 0}).into(),
        ],
        error: None,
        run_status: RunStatus::Running,
        wait: None,
    }
}

/// Commits `iters` steps, on a fresh run every 2,000 steps (W4's length). Only the commits
/// are timed: the steps are built beforehand.
fn commit_steps(rt: &Runtime, store: &dyn Store, iters: u64, delete: bool) -> Duration {
    rt.block_on(async {
        let mut elapsed = Duration::ZERO;
        let mut done = 0;
        while done < iters {
            let id = RunId::generate();
            store.create_run(new_run(&id)).await.expect("create");
            let batch = (iters - done).min(2000);
            let steps: Vec<StepCommit> = (1..=batch).map(step).collect();
            let start = Instant::now();
            for step in steps {
                store.commit_step(&id, step).await.expect("commit");
            }
            elapsed += start.elapsed();
            done += batch;
            // Keep the store at one run's size, so the memory store measures commits, not
            // the allocator under millions of retained steps.
            if delete {
                store.delete_run(&id).await.expect("delete");
            }
        }
        elapsed
    })
}

fn commits(c: &mut Criterion) {
    let rt = Runtime::new().expect("a tokio runtime");
    let mut group = c.benchmark_group("commit_step");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(4));
    let variants = [
        ("sqlite-normal", Durability::Process, true),
        (
            "sqlite-normal-inline-checkpoints",
            Durability::Process,
            false,
        ),
        ("sqlite-full", Durability::Full, true),
    ];
    for (name, durability, background_checkpoints) in variants {
        let dir = tempfile::tempdir().expect("a temp dir");
        let options = SqliteOptions {
            durability,
            background_checkpoints,
            ..SqliteOptions::default()
        };
        let store = SqliteStore::open_project(dir.path(), options).expect("open");
        group.bench_function(name, |b| {
            b.iter_custom(|iters| commit_steps(&rt, &store, iters, true));
        });
    }
    let memory = MemoryStore::new();
    group.bench_function("memory", |b| {
        b.iter_custom(|iters| commit_steps(&rt, &memory, iters, true));
    });
    group.finish();
}

/// The two ways to run a sync job from async code, with an empty job.
fn round_trips(c: &mut Criterion) {
    let rt = Runtime::new().expect("a tokio runtime");
    let mut group = c.benchmark_group("sync_call");
    let (jobs, queue) = std::sync::mpsc::channel::<tokio::sync::oneshot::Sender<()>>();
    let thread = std::thread::spawn(move || {
        while let Ok(reply) = queue.recv() {
            let _ = reply.send(());
        }
    });
    group.bench_function("writer-thread", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let start = Instant::now();
                for _ in 0..iters {
                    let (reply, done) = tokio::sync::oneshot::channel();
                    jobs.send(reply).expect("thread alive");
                    done.await.expect("reply");
                }
                start.elapsed()
            })
        });
    });
    let mutex = Arc::new(std::sync::Mutex::new(0u64));
    group.bench_function("spawn-blocking", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let start = Instant::now();
                for _ in 0..iters {
                    let mutex = mutex.clone();
                    tokio::task::spawn_blocking(move || *mutex.lock().expect("lock") += 1)
                        .await
                        .expect("join");
                }
                start.elapsed()
            })
        });
    });
    group.finish();
    drop(jobs);
    thread.join().expect("thread ends");
}

/// W4's size bar: the database after 2,000 steps over the 100 KB state.
fn report_size() {
    let rt = Runtime::new().expect("a tokio runtime");
    let dir = tempfile::tempdir().expect("a temp dir");
    let store = SqliteStore::open_project(dir.path(), SqliteOptions::default()).expect("open");
    let elapsed = commit_steps(&rt, &store, 2000, false);
    let path = store.path().to_owned();
    drop(store);
    let size = std::fs::metadata(&path).expect("the database exists").len();
    eprintln!(
        "W4 store: 2000 steps in {elapsed:?} ({:?}/step), database {size} bytes ({:.2} MB)",
        elapsed / 2000,
        size as f64 / 1_048_576.0
    );
}

fn all(c: &mut Criterion) {
    report_size();
    commits(c);
    round_trips(c);
}

criterion_group!(benches, all);
criterion_main!(benches);
