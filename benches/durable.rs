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

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn w4(rt: &tokio::runtime::Runtime, durability: Durability, label: &str) {
    let plan = plan(&flows::w4());
    let mut times = Vec::new();
    let mut sizes = Vec::new();
    let mut steps = 0;
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
    let total = median(times);
    let size = sizes.iter().max().copied().unwrap_or(0);
    println!(
        "W4 [{label}] 2,000 iterations, {steps} committed steps: {:.1} ms total, {:.1} µs per committed step, {:.1} µs per step counting the loop check (2 per iteration); store {:.2} MB",
        total.as_secs_f64() * 1e3,
        total.as_secs_f64() * 1e6 / steps as f64,
        total.as_secs_f64() * 1e6 / 4_000.0,
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

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` passes nothing we need.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    for (durability, label) in [(Durability::Process, "normal"), (Durability::Full, "full")] {
        w4(&rt, durability, label);
        w6(&rt, durability, label);
    }
}
