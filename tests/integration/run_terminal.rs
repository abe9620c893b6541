//! `atomic run` on a terminal, through a real pseudo-terminal (util-linux `script`): a
//! `wait` is asked right there, a refused answer asked again, and the run goes on to its
//! end in the same process instead of exiting 4.

use std::io::Write;
use std::process::{Command, Stdio};

use crate::support::cli_project::{CliProject, bin};

/// `atomic ARGS` in `project` under a pseudo-terminal, `input` typed at it; `None` (the
/// test skips, or fails in CI) when `script` is not installed.
pub(crate) fn on_a_terminal(
    project: &CliProject,
    args: &str,
    input: &str,
) -> Option<std::process::Output> {
    if Command::new("script").arg("--version").output().is_err() {
        #[allow(clippy::print_stderr, reason = "a skipped test says so")]
        {
            eprintln!(
                "SKIPPED: `script` (util-linux) is not installed; install it to test `atomic run` on a terminal"
            );
        }
        return None;
    }
    let line = format!("{} {args}", bin().display());
    let mut child = Command::new("script")
        .args(["-qec", &line, "/dev/null"])
        .current_dir(project.path())
        .env("NO_COLOR", "1")
        .env_remove("CI")
        .env_remove("RUST_LOG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn script");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input.as_bytes())
        .expect("type the answers");
    Some(child.wait_with_output().expect("script ends"))
}

#[test]
fn a_wait_is_asked_on_the_terminal_and_the_run_goes_on() {
    let project = CliProject::new();
    project.write(
        "f.kdl",
        r#"workflow "w" {
    state {
        field "ok" type="boolean" default=#false
        field "after" type="string" default=""
    }
    wait "approve" prompt="Ship it?" answer="yes-no" {
        output "ok"
    }
    set "after" expr="'shipped' if state.ok else 'held'"
}
"#,
    );
    // A refused answer first, then a good one.
    let Some(output) = on_a_terminal(&project, "run f.kdl", "perhaps\nyes\n") else {
        return;
    };
    let said = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{said}");
    assert!(said.contains("Ship it?"), "{said}");
    let state = &project.show(&project.last_run())["state"];
    assert_eq!(state["after"], "shipped", "{state}");
}
