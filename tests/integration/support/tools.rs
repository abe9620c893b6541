//! The outside tools some tests need: graphviz, Neovim, jq and the pinned agent CLIs. The
//! README's test command (`./test`) installs them where it can, the agent CLIs into the
//! project-local prefix `.ci/agents`. A test whose tool is missing skips with one loud line
//! naming what to install; under `CI=true` the skip is a failure, so CI proves every test ran.

use std::io::Write;
use std::path::{Path, PathBuf};

/// The CLI's executable: `.ci/agents/node_modules/.bin/<program>`, else PATH. `None` skips
/// the test locally and fails it in CI.
pub fn agent_cli(program: &str, package: &str) -> Option<PathBuf> {
    let local = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(".ci/agents/node_modules/.bin")
        .join(program);
    if local.is_file() {
        return Some(local);
    }
    required_tool(
        program,
        &format!("npm package {package}; `./test` installs the pinned version into .ci/agents"),
    )
}

/// `program` on PATH. `None` skips the test locally (saying `install`) and fails it in CI.
pub fn required_tool(program: &str, install: &str) -> Option<PathBuf> {
    let found = on_path(program);
    if found.is_none() {
        skip(&format!("`{program}` is not installed ({install})"));
    }
    found
}

fn on_path(program: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|dir| dir.join(program))
            .find(|candidate| candidate.is_file())
    })
}

/// Says loudly that the running test skips, or fails it under `CI=true`. The line also goes
/// to `$ATOMIC_TEST_SKIPS` when set: `./test` prints that file after the run, because the
/// test runner hides what passing tests print.
#[allow(clippy::print_stderr, reason = "a skipped test must say so loudly")]
pub fn skip(reason: &str) {
    let test = std::thread::current().name().unwrap_or("a test").to_owned();
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "{test}: {reason} (a skipped test fails under CI=true)"
    );
    let line = format!("SKIPPED {test}: {reason}");
    eprintln!("\n!!!!!!!! {line} !!!!!!!!\n");
    if let Some(log) = std::env::var_os("ATOMIC_TEST_SKIPS")
        && let Ok(mut file) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
    {
        let _ = writeln!(file, "{line}");
    }
}
