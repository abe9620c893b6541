//! The durable-store benchmarks of issue 3, in process, SQLite store on:
//!
//! - W4: the 2-node loop (increment, check) for 2,000 iterations with a 100 KB constant
//!   string in state. Target ≤ 0.2 ms per step and a store ≤ 2 MB afterwards.
//! - W6 (the resume itself): run to a `wait`, then time `runtime::resume` with the answer
//!   — plan compiled, store open, as `atomic resume` has them. Target ≤ 2 ms.
//!
//! `cargo bench --bench durable`. Prints medians over repeated runs, at both durability
//! levels (`normal`: survives kill -9; `full`: fsync per step, survives power loss).

#![allow(clippy::print_stdout, reason = "a benchmark reports its figures")]

#[path = "support/flows.rs"]
mod flows;
#[path = "support/process.rs"]
mod process;

use process::median;

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use atomic::compile::{self, Config};
use atomic::lower::Plan;
use atomic::runtime::{RunContext, RunEnd, resume, run_with_id};
use atomic::source::{MemoryFiles, Sources};
use atomic::store::{Durability, RunId, SqliteOptions, SqliteStore, Store};
use serde_json::Map;

fn plan(text: &str) -> Arc<Plan> {
    let mut sources = Sources::new();
    let file = sources.add("bench.kdl", text.to_owned());
    let compiled = compile::compile(&mut sources, file, &MemoryFiles::new(), &Config::new());
    Arc::new(compiled.plan.expect("the benchmark workflow compiles"))
}

fn store(dir: &Path, durability: Durability) -> Arc<dyn Store> {
    let options = SqliteOptions {
        durability,
        ..SqliteOptions::default()
    };
    Arc::new(SqliteStore::open(&dir.join("atomic.db"), options).expect("open the store"))
}

fn size_of_store(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .expect("list the store directory")
        .filter_map(Result::ok)
        .filter(|entry| entry.file_name().to_string_lossy().starts_with("atomic.db"))
        .map(|entry| entry.metadata().map_or(0, |m| m.len()))
        .sum()
}

/// CPU time (user + system, every thread) of this process so far, from `/proc/self/stat`
/// (10 ms resolution); `None` off Linux.
fn cpu_time() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name (which may hold spaces) start after the last ')'.
    let rest = stat.rsplit_once(')')?.1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some(Duration::from_millis((utime + stime) * 10))
}

fn w4(rt: &tokio::runtime::Runtime, durability: Durability, label: &str) {
    let plan = plan(&flows::w4());
    let mut times = Vec::new();
    let mut sizes = Vec::new();
    let mut steps = 0;
    let cpu_before = cpu_time();
    for _ in 0..5 {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let ctx = RunContext::new(store(dir.path(), durability));
        let started = Instant::now();
        let outcome = rt
            .block_on(run_with_id(
                plan.clone(),
                RunId::generate(),
                Map::new(),
                ctx,
            ))
            .expect("W4 runs");
        times.push(started.elapsed());
        assert_eq!(outcome.end, RunEnd::Completed);
        steps = outcome.steps;
        sizes.push(size_of_store(dir.path()));
    }
    let cpu = cpu_time()
        .zip(cpu_before)
        .map(|(after, before)| (after - before) / 5);
    let total = median(times);
    let size = sizes.iter().max().copied().unwrap_or(0);
    println!(
        "W4 [{label}] 2,000 iterations, {steps} committed steps: {:.1} ms total, {:.1} µs per committed step, {:.1} µs per step counting the loop check (2 per iteration); CPU {} per committed step; store {:.2} MB (database + WAL)",
        total.as_secs_f64() * 1e3,
        total.as_secs_f64() * 1e6 / steps as f64,
        total.as_secs_f64() * 1e6 / 4_000.0,
        cpu.map_or_else(
            || "unknown".to_owned(),
            |cpu| format!("{:.1} µs", cpu.as_secs_f64() * 1e6 / steps as f64)
        ),
        size as f64 / (1024.0 * 1024.0)
    );
}

fn w6(rt: &tokio::runtime::Runtime, durability: Durability, label: &str) {
    let plan = plan(&flows::w6());
    let dir = tempfile::tempdir().expect("a temporary directory");
    let store = store(dir.path(), durability);
    let mut times = Vec::new();
    for _ in 0..50 {
        let id = RunId::generate();
        let paused = rt
            .block_on(run_with_id(
                plan.clone(),
                id.clone(),
                Map::new(),
                RunContext::new(store.clone()),
            ))
            .expect("W6 runs to its wait");
        assert!(
            matches!(paused.end, RunEnd::Paused { .. }),
            "{:?}",
            paused.end
        );
        let started = Instant::now();
        let resumed = rt
            .block_on(resume(
                plan.clone(),
                &id,
                Some("yes"),
                RunContext::new(store.clone()),
            ))
            .expect("W6 resumes");
        times.push(started.elapsed());
        assert_eq!(resumed.end, RunEnd::Completed);
    }
    let mut sorted = times.clone();
    sorted.sort();
    println!(
        "W6 [{label}] resume with an answer to completion: median {:.3} ms, p90 {:.3} ms, min {:.3} ms (50 runs)",
        median(times).as_secs_f64() * 1e3,
        sorted[sorted.len() * 9 / 10].as_secs_f64() * 1e3,
        sorted[0].as_secs_f64() * 1e3
    );
}

/// W7: a for-each whose 1,000 branch steps are each committed, against the same run kept in
/// memory (`--store memory`), interleaved: what committing a branch's step costs.
fn w7(rt: &tokio::runtime::Runtime, durability: Durability, label: &str) {
    let plan = plan(&flows::w7());
    let context = |store: Arc<dyn Store>| {
        let mut ctx = RunContext::new(store);
        ctx.providers = atomic::runtime::Providers::new()
            .with("echo", Arc::new(atomic::providers::InProcess::new()));
        ctx
    };
    let mut durable = Vec::new();
    let mut memory = Vec::new();
    let mut steps = 0;
    for _ in 0..5 {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let started = Instant::now();
        let outcome = rt
            .block_on(run_with_id(
                plan.clone(),
                RunId::generate(),
                Map::new(),
                context(store(dir.path(), durability)),
            ))
            .expect("W7 runs");
        durable.push(started.elapsed());
        assert_eq!(outcome.end, RunEnd::Completed);
        steps = outcome.steps;
        let started = Instant::now();
        let outcome = rt
            .block_on(run_with_id(
                plan.clone(),
                RunId::generate(),
                Map::new(),
                context(Arc::new(atomic::store::LatestStore::new())),
            ))
            .expect("W7 runs in memory");
        memory.push(started.elapsed());
        assert_eq!(outcome.end, RunEnd::Completed);
    }
    let (durable, memory) = (median(durable), median(memory));
    println!(
        "W7 [{label}] for-each × 1,000 agent calls, 8 at a time, {steps} committed steps: {:.1} ms durable, {:.1} ms in memory; {:.1} µs per committed step over memory",
        durable.as_secs_f64() * 1e3,
        memory.as_secs_f64() * 1e3,
        (durable.as_secs_f64() - memory.as_secs_f64()) * 1e6 / steps as f64,
    );
}

/// One benchmark workload at one durability.
type Workload = fn(&tokio::runtime::Runtime, Durability, &str);

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` passes nothing we need.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    // `cargo bench --bench durable -- w7 normal` runs only what every word matches.
    let filter: Vec<String> = std::env::args()
        .skip(1)
        .filter(|arg| !arg.starts_with("--"))
        .collect();
    let workloads: [(&str, Workload); 3] = [("w4", w4), ("w6", w6), ("w7", w7)];
    for (durability, label) in [(Durability::Process, "normal"), (Durability::Full, "full")] {
        for (name, workload) in workloads {
            if filter.iter().all(|word| word == name || word == label) {
                workload(&rt, durability, label);
            }
        }
    }
}
