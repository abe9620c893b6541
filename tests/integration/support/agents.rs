//! The real agent CLIs the end-to-end tests drive: installed by `.ci/install-agents.sh`
//! into `.ci/agents`, or found on `PATH`.

use std::path::{Path, PathBuf};

/// The CLI's executable: `.ci/agents/node_modules/.bin/<program>`, else PATH. `None` skips
/// the test locally and fails it in CI.
#[allow(clippy::print_stderr, reason = "a skipped test must say so loudly")]
pub fn agent_cli(program: &str, package: &str) -> Option<PathBuf> {
    let local = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(".ci/agents/node_modules/.bin")
        .join(program);
    let found = if local.is_file() {
        Some(local)
    } else {
        std::env::var_os("PATH").and_then(|path| {
            std::env::split_paths(&path)
                .map(|dir| dir.join(program))
                .find(|candidate| candidate.is_file())
        })
    };
    if found.is_none() {
        let message =
            format!("`{program}` ({package}) is not installed: run `bash .ci/install-agents.sh`");
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "{message} (a missing agent CLI fails the test under CI=true)"
        );
        eprintln!("\n!!!!!!!! SKIPPED: {message} !!!!!!!!\n");
    }
    found
}
