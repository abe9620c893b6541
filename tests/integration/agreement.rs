//! `check` and `run` agree, always: on every fixture, example and built-in workflow,
//! `atomic run` refuses ("has errors; nothing was run") exactly when `atomic check` reports
//! an error, and then shows each error `check` shows. Runs use `--dry-run`, so nothing is
//! called or started; both commands see the same project (the fixtures' discovered agents,
//! skills and commands) and an empty home.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::support;
use crate::support::cli_project::{COMMAND_TIMEOUT, bin};

/// Every workflow file the repository holds as a fixture, example or built-in.
fn workflows() -> Vec<PathBuf> {
    let mut files = Vec::new();
    for dir in [
        "tests/fixtures/check/err",
        "tests/fixtures/check/ok",
        "tests/fixtures/check/corpus",
        "examples",
        "examples/subgraphs",
        "workflows",
    ] {
        files.extend(support::kdl_files(&support::root().join(dir)));
    }
    files
}

fn atomic(project: &Path, home: &Path) -> Command {
    let mut command = Command::new(bin());
    command
        .current_dir(project)
        .env("HOME", home)
        .env("NO_COLOR", "1")
        .env_remove("RUST_LOG");
    command
}

#[test]
fn run_refuses_exactly_what_check_reports_as_errors() {
    let project = tempfile::tempdir().expect("tempdir");
    support::copy_tree(&support::fixture("check/support/project"), project.path());
    std::fs::create_dir_all(project.path().join(".atomic")).expect("mkdir");
    let home = tempfile::tempdir().expect("tempdir");
    let files = workflows();
    assert!(files.len() > 200, "{} workflows", files.len());
    let started = std::time::Instant::now();
    let mut disagreements = String::new();
    let (mut refusals, mut runs) = (0, 0);
    for path in &files {
        let check = atomic(project.path(), home.path())
            .arg("check")
            .arg(path)
            .args(["--format", "json"])
            .output()
            .expect("atomic check");
        let items: Vec<Value> = serde_json::from_slice(&check.stdout).unwrap_or_else(|error| {
            panic!(
                "{}: check --format json is not JSON ({error}): {}",
                path.display(),
                String::from_utf8_lossy(&check.stdout)
            )
        });
        let errors: Vec<String> = items
            .iter()
            .filter(|item| item["severity"] == "error")
            .map(|item| item["code"].as_str().unwrap_or_default().to_owned())
            .collect();
        let run = atomic(project.path(), home.path())
            .args(["run", "--dry-run", "--store", "memory"])
            .arg(path)
            .output()
            .expect("atomic run");
        let stderr = String::from_utf8_lossy(&run.stderr);
        let refused = stderr.contains("has errors; nothing was run");
        if refused == errors.is_empty() {
            let _ = writeln!(
                disagreements,
                "{}: check reports errors {errors:?}, run {} (exit {:?}):\n{stderr}",
                path.display(),
                if refused { "refused" } else { "did not refuse" },
                run.status.code()
            );
            continue;
        }
        if refused {
            refusals += 1;
        } else {
            runs += 1;
        }
        if refused {
            assert_eq!(run.status.code(), Some(1), "{}: {stderr}", path.display());
            let unshown: Vec<&String> = errors
                .iter()
                .filter(|code| !stderr.contains(code.as_str()))
                .collect();
            if !unshown.is_empty() {
                let _ = writeln!(
                    disagreements,
                    "{}: run refused without showing {unshown:?}:\n{stderr}",
                    path.display()
                );
            }
        }
        assert!(
            started.elapsed() < COMMAND_TIMEOUT * 4,
            "the agreement sweep is taking too long"
        );
    }
    assert!(disagreements.is_empty(), "{disagreements}");
    // Both sides of the agreement are exercised.
    assert!(
        refusals > 100 && runs > 80,
        "{refusals} refused, {runs} ran"
    );
}
