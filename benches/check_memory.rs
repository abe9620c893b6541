//! Peak memory of `check` on a 100,000-node workflow: compiles once and prints the
//! process's peak resident set (VmHWM) before and after; then runs the `atomic check`
//! binary on the same file under GNU time, the figure a user sees. Target: ≤ 100 MB.
//! Run with `cargo bench --bench check_memory`.

#[path = "support/gen.rs"]
mod generator;

use atomic::compile::{self, Config};
use atomic::source::{MemoryFiles, Sources};

fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[allow(clippy::print_stdout)] // a benchmark report
fn main() {
    // `cargo bench` passes `--bench`; nothing to parse. `ATOMIC_CHECK_NODES=10000` measures
    // one size alone (for callgrind or massif, whose counts are then per size).
    let sizes: Vec<usize> = match std::env::var("ATOMIC_CHECK_NODES") {
        Ok(nodes) => vec![nodes.parse().expect("ATOMIC_CHECK_NODES is a number")],
        Err(_) => vec![1_000, 10_000, 100_000],
    };
    for nodes in sizes {
        let text = generator::generate_workflow(nodes);
        let before = peak_rss_kib().unwrap_or(0);
        let started = std::time::Instant::now();
        let mut sources = Sources::new();
        let file = sources.add("bench.kdl", text.as_str());
        let compiled = compile::compile(&mut sources, file, &MemoryFiles::new(), &Config::new());
        let elapsed = started.elapsed();
        let after = peak_rss_kib().unwrap_or(0);
        assert!(!compiled.has_errors());
        println!(
            "check {nodes:>7} nodes ({:>5.1} MB source): {:>8.2} ms, peak RSS {:.1} MB (was {:.1} MB before)",
            text.len() as f64 / 1e6,
            elapsed.as_secs_f64() * 1e3,
            after as f64 / 1024.0,
            before as f64 / 1024.0,
        );
        drop(compiled);
        whole_process(nodes, &text);
    }
}

/// Peak RSS of `atomic check FILE` as a process (reading the file, compiling, printing), from
/// GNU time's maximum resident set.
#[allow(clippy::print_stdout)] // a benchmark report
fn whole_process(nodes: usize, text: &str) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let file = dir.path().join("bench.kdl");
    std::fs::write(&file, text).expect("write the workflow");
    let output = std::process::Command::new("/usr/bin/time")
        .args(["-f", "%M"])
        .arg(env!("CARGO_BIN_EXE_atomic"))
        .arg("check")
        .arg(&file)
        .env("NO_COLOR", "1")
        .output();
    let Ok(output) = output else {
        println!("  /usr/bin/time is not available; the process peak was not measured");
        return;
    };
    assert!(output.status.success(), "`atomic check` finds no problem");
    let stderr = String::from_utf8_lossy(&output.stderr);
    match stderr
        .lines()
        .last()
        .and_then(|kb| kb.trim().parse::<f64>().ok())
    {
        Some(kb) => println!(
            "  `atomic check` process, {nodes} nodes: peak RSS {:.1} MB",
            kb / 1024.0
        ),
        None => println!("  could not read GNU time's output: {stderr}"),
    }
}
