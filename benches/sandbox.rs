//! The cost of a sandboxed step (issue 26): `atomic run` of a workflow of 20 tool steps
//! (`true`, snapshots off), unsandboxed and with `sandbox`, alternated run by run so load
//! changes hit both alike. The difference per step is what the sandbox adds: the egress
//! proxy and temp directory made for the step, atomic re-executed as the confining helper,
//! the Landlock rules built (a directory walk to every hidden path) and enforced.
//!
//! `cargo bench --bench sandbox`. Prints medians of 15 runs of each; skips (saying why) on a
//! system that cannot sandbox.

#![allow(clippy::print_stdout, reason = "a benchmark reports its figures")]

use std::process::Command;
use std::time::{Duration, Instant};

const RUNS: usize = 15;
const STEPS: usize = 20;

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn workflow(sandboxed: bool) -> String {
    let mut text = String::from("workflow \"steps\" {\n    workspace \"off\"\n");
    if sandboxed {
        text.push_str("    sandbox\n");
    }
    for step in 0..STEPS {
        text.push_str(&format!("    tool \"t{step}\" {{ run \"true\"; }}\n"));
    }
    text.push_str("}\n");
    text
}

fn main() {
    if let Err(error) = atomic::process::Confinement::check() {
        println!("sandbox: skipped: {error}");
        return;
    }
    let project = tempfile::tempdir().expect("a project");
    std::fs::write(project.path().join("plain.kdl"), workflow(false)).expect("write");
    std::fs::write(project.path().join("boxed.kdl"), workflow(true)).expect("write");
    let run = |file: &str| -> Duration {
        let started = Instant::now();
        let status = Command::new(env!("CARGO_BIN_EXE_atomic"))
            .args(["run", file, "--quiet", "--store", "memory"])
            .current_dir(project.path())
            .env("NO_COLOR", "1")
            .status()
            .expect("atomic run");
        assert!(status.success(), "atomic run {file} failed");
        started.elapsed()
    };
    // Warm up both (the page cache, the binary).
    run("plain.kdl");
    run("boxed.kdl");
    let (mut plain, mut boxed) = (Vec::new(), Vec::new());
    for _ in 0..RUNS {
        plain.push(run("plain.kdl"));
        boxed.push(run("boxed.kdl"));
    }
    let (plain, boxed) = (median(plain), median(boxed));
    let per_step = boxed.saturating_sub(plain).as_secs_f64() * 1e3 / STEPS as f64;
    println!(
        "sandbox: {STEPS} tool steps: unsandboxed {:.1} ms, sandboxed {:.1} ms (medians of {RUNS}); the sandbox adds {per_step:.2} ms a step",
        plain.as_secs_f64() * 1e3,
        boxed.as_secs_f64() * 1e3
    );
}
