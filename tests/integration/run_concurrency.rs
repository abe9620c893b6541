//! Several `atomic` processes against one project, as users run them from several
//! terminals or CI jobs: concurrent first use of the store never fails.

use std::process::Stdio;

use crate::support::cli_project::{CliProject, stderr};

const FLOW: &str = r#"workflow "count" {
    state { field "n" type="integer" default=0; }
    loop "up" max=5 until="state.n >= 5" {
        set "n" expr="state.n + 1"
    }
}
"#;

/// Eight `atomic run`s started at once in a fresh project (no `.atomic/atomic.db` yet), 50
/// times: every one completes, none sees "database is locked".
#[test]
fn simultaneous_first_runs_never_fail() {
    for round in 0..50 {
        let project = CliProject::new();
        project.write("flow.kdl", FLOW);
        let children: Vec<_> = (0..8)
            .map(|_| {
                project
                    .spawn_command()
                    .args(["run", "flow.kdl", "--quiet"])
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .expect("start atomic")
            })
            .collect();
        for child in children {
            let output = child.wait_with_output().expect("atomic ran");
            assert!(
                output.status.success(),
                "round {round}: exit {:?}: {}",
                output.status.code(),
                stderr(&output)
            );
        }
        let listed = project
            .atomic()
            .args(["runs", "--json"])
            .output()
            .expect("atomic runs");
        let runs: serde_json::Value = serde_json::from_slice(&listed.stdout).expect("JSON");
        assert_eq!(runs.as_array().map(Vec::len), Some(8), "round {round}");
    }
}
