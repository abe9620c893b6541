//! Running the `atomic` binary from a benchmark, and reporting its timings.

// Each benchmark uses some of these.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// The binary built for this benchmark.
pub(crate) fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_atomic"))
}

/// `atomic` in `dir`: colourless, no `RUST_LOG`, no input, its output thrown away.
pub(crate) fn atomic(dir: &Path) -> Command {
    let mut command = Command::new(bin());
    command
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    command
}

/// The middle sample.
pub(crate) fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

/// In milliseconds.
pub(crate) fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}
