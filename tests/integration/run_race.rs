//! A race's losers are gone before the step after the race starts, even a loser that
//! ignores SIGTERM (it is killed when its grace runs out, and the race waits for that).

use crate::support::cli_project::{CliProject, stderr};

const FLOW: &str = r#"workflow "race" {
    state { field "seen" type="string" default=""; }
    parallel "first" strategy="race" {
        tool "stubborn" {
            run "sh" "-c" "trap '' TERM; echo $$ > loser.pid; sleep 30 & echo $! > loser-child.pid; wait"
        }
        tool "quick" {
            run "sh" "-c" "while [ ! -s loser-child.pid ]; do sleep 0.05; done"
        }
    }
    tool "after" {
        run "sh" "-c" "for f in loser.pid loser-child.pid; do if kill -0 $(cat $f) 2>/dev/null && ! grep -q '^State:.*Z' /proc/$(cat $f)/status; then printf 'alive '; else printf 'gone '; fi; done"
        output "seen"
    }
}
"#;

#[test]
fn the_step_after_a_race_never_runs_beside_its_losers() {
    let project = CliProject::new();
    project.write("race.kdl", FLOW);
    let output = project
        .atomic()
        .args(["run", "race.kdl", "--quiet"])
        .output()
        .expect("atomic runs");
    assert!(output.status.success(), "{}", stderr(&output));
    let run = project.last_run();
    let shown = project.show(&run);
    assert_eq!(
        shown["state"]["seen"],
        serde_json::json!("gone gone "),
        "{shown:#}"
    );
}
