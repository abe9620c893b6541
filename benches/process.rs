//! Whole-process benchmarks of the `atomic` binary (issue 3):
//!
//! - startup to ready: `atomic --version`, and a one-step workflow run end to end with the
//!   memory store (compile, runtime, summary). Target ≤ 10 ms.
//! - W6 (the process): `atomic resume RUN --answer yes` of a run paused at a `wait` —
//!   start, open the store, recompile the workflow, resume, commit, exit. Target ≤ 20 ms.
//! - Peak RSS of W1–W3 run by the binary (`--store memory`), from `/usr/bin/time`.
//!   Target ≤ 20 MB.
//!
//! `cargo bench --bench process` (builds the binary in the bench profile). Prints medians.

#![allow(clippy::print_stdout, reason = "a benchmark reports its figures")]

#[path = "support/flows.rs"]
mod flows;
#[path = "support/process.rs"]
mod process;

use process::{atomic, bin, median, ms};

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

fn timed(command: &mut Command, expect: i32) -> Duration {
    let started = Instant::now();
    let status = command.status().expect("atomic runs");
    let elapsed = started.elapsed();
    assert_eq!(status.code(), Some(expect), "{command:?}");
    elapsed
}

fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temporary directory");
    std::fs::create_dir_all(dir.path().join(".atomic")).expect("create .atomic");
    dir
}

fn startup() {
    let dir = project();
    let version: Vec<Duration> = (0..30)
        .map(|_| timed(atomic(dir.path()).arg("--version"), 0))
        .collect();
    std::fs::write(
        dir.path().join("one.kdl"),
        "workflow \"one\" {\n    state { field \"n\" type=\"integer\" default=0 }\n    set \"n\" expr=\"state.n + 1\"\n}\n",
    )
    .expect("write one.kdl");
    let one: Vec<Duration> = (0..30)
        .map(|_| {
            timed(
                atomic(dir.path()).args(["run", "one.kdl", "--store", "memory", "--quiet"]),
                0,
            )
        })
        .collect();
    println!(
        "startup: `atomic --version` median {:.2} ms; `atomic run` of a one-step workflow (memory store) median {:.2} ms",
        ms(median(version)),
        ms(median(one))
    );
}

fn last_run(dir: &Path) -> String {
    let output = Command::new(bin())
        .current_dir(dir)
        .args(["runs", "--json", "--limit", "1"])
        .output()
        .expect("atomic runs");
    let runs: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
    runs[0]["id"].as_str().expect("a run id").to_owned()
}

fn w6() {
    let dir = project();
    std::fs::write(dir.path().join("w6.kdl"), flows::w6()).expect("write w6.kdl");
    let mut resumes = Vec::new();
    let mut runs = Vec::new();
    for _ in 0..30 {
        runs.push(timed(
            atomic(dir.path()).args(["run", "w6.kdl", "--quiet"]),
            4,
        ));
        let id = last_run(dir.path());
        resumes.push(timed(
            atomic(dir.path()).args(["resume", &id, "--answer", "yes", "--quiet"]),
            0,
        ));
    }
    let mut sorted = resumes.clone();
    sorted.sort();
    println!(
        "W6 process: `atomic resume RUN --answer yes` median {:.2} ms (p90 {:.2}, min {:.2}); `atomic run` to the wait median {:.2} ms (SQLite store, 30 runs)",
        ms(median(resumes)),
        ms(sorted[sorted.len() * 9 / 10]),
        ms(sorted[0]),
        ms(median(runs))
    );
}

/// Peak RSS in KB of `atomic run FILE --store memory --quiet`, from GNU time.
fn peak_rss(dir: &Path, file: &str) -> Option<u64> {
    let output = Command::new("/usr/bin/time")
        .current_dir(dir)
        .args(["-f", "%M"])
        .arg(bin())
        .args(["run", file, "--store", "memory", "--quiet"])
        .env("NO_COLOR", "1")
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&output.stderr);
    text.lines().last()?.trim().parse().ok()
}

fn rss() {
    let dir = project();
    for (name, text) in [
        ("w1", flows::w1()),
        ("w2", flows::w2()),
        ("w3", flows::w3()),
    ] {
        let file = format!("{name}.kdl");
        std::fs::write(dir.path().join(&file), text).expect("write the workflow");
        let started = Instant::now();
        let status = atomic(dir.path())
            .args(["run", &file, "--store", "memory", "--quiet"])
            .status()
            .expect("atomic runs");
        let elapsed = started.elapsed();
        assert!(status.success(), "{name} completes");
        match peak_rss(dir.path(), &file) {
            Some(kb) => println!(
                "{}: peak RSS {:.1} MB, whole process {:.1} ms (memory store)",
                name.to_uppercase(),
                kb as f64 / 1024.0,
                ms(elapsed)
            ),
            None => println!("{name}: /usr/bin/time is not available; peak RSS not measured"),
        }
    }
}

fn main() {
    startup();
    w6();
    rss();
}
