//! Several `atomic` processes against one project, as users run them from several
//! terminals or CI jobs: concurrent first use of the store never fails.

use std::process::Stdio;

use crate::support::cli_project::{CliProject, stderr, stdout};

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

/// Ten steps, each appending its line to `out.txt` and then taking a while, so a test can
/// catch the run in the middle.
const SLOW: &str = r#"workflow "slow" {
    state { field "i" type="integer" default=0; }
    loop "steps" max=20 until="state.i >= 10" {
        tool "step" idempotent=#true {
            run "sh" "-c" "echo step-{{ state.i }} >> out.txt; sleep 0.3; echo {{ state.i + 1 }}"
            output "i" parse="json"
        }
    }
}
"#;

fn lines(project: &CliProject) -> Vec<String> {
    project.read("out.txt").lines().map(str::to_owned).collect()
}

/// Waits (bounded) until `out.txt` has at least `count` lines.
fn wait_for_lines(project: &CliProject, count: usize) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while lines(project).len() < count {
        assert!(
            std::time::Instant::now() < deadline,
            "the run never wrote {count} lines"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

fn start_slow(project: &CliProject) -> std::process::Child {
    project.write("slow.kdl", SLOW);
    project
        .spawn_command()
        .args(["run", "slow.kdl", "--quiet"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start atomic run")
}

/// `atomic resume` of a run another live process is running is refused at once, naming
/// that process; the running one is undisturbed and no step runs twice.
#[test]
fn resuming_a_live_run_is_refused_naming_its_owner() {
    let project = CliProject::new();
    let mut running = start_slow(&project);
    wait_for_lines(&project, 2);
    let run = project.last_run();
    let started = std::time::Instant::now();
    let output = project
        .atomic()
        .args(["resume", &run, "--quiet"])
        .output()
        .expect("atomic resume");
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!("pid {}", running.id())) && err.contains("atomic cancel"),
        "{err}"
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    let listed = project
        .atomic()
        .args(["runs"])
        .output()
        .expect("atomic runs");
    assert!(
        stdout(&listed).contains(&format!("pid {}", running.id())),
        "`atomic runs` shows the owner: {}",
        stdout(&listed)
    );
    assert!(running.wait().expect("the run ends").success());
    let written = lines(&project);
    let expected: Vec<String> = (0..10).map(|i| format!("step-{i}")).collect();
    assert_eq!(written, expected, "every step once");
}

/// Two `atomic resume`s of one crashed run, started at once: one drives it to the end, the
/// other is refused (or, if it came after the end, finds nothing to resume). Only the step
/// in flight at the crash runs again, and only once.
#[test]
fn two_resumers_of_a_crashed_run_never_both_run_it() {
    for _ in 0..3 {
        let project = CliProject::new();
        let mut running = start_slow(&project);
        wait_for_lines(&project, 3);
        running.kill().expect("kill -9");
        running.wait().expect("reaped");
        let run = project.last_run();
        let resumers: Vec<_> = (0..2)
            .map(|_| {
                project
                    .spawn_command()
                    .args(["resume", &run, "--quiet"])
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .expect("start atomic resume")
            })
            .collect();
        let outputs: Vec<_> = resumers
            .into_iter()
            .map(|child| child.wait_with_output().expect("resumed"))
            .collect();
        let succeeded = outputs.iter().filter(|o| o.status.success()).count();
        assert_eq!(
            succeeded, 1,
            "exactly one resumer drives the run: {outputs:?}"
        );
        for output in outputs.iter().filter(|o| !o.status.success()) {
            let err = stderr(output);
            assert!(
                err.contains("is being run by") || err.contains("cannot be resumed"),
                "{err}"
            );
        }
        let written = lines(&project);
        let mut once = written.clone();
        once.dedup();
        let expected: Vec<String> = (0..10).map(|i| format!("step-{i}")).collect();
        assert_eq!(once, expected, "{written:?}");
        assert!(
            written.len() <= 11,
            "only the step in flight repeats: {written:?}"
        );
    }
}

/// `atomic cancel RUN` from another terminal stops a running run as Ctrl-C would: the
/// owner exits 130, its tool is gone, the run is saved as cancelled, and it resumes later
/// without repeating a completed step. A paused run is marked cancelled directly.
#[test]
fn cancel_stops_a_run_from_another_terminal() {
    let project = CliProject::new();
    let running = start_slow(&project);
    wait_for_lines(&project, 2);
    let run = project.last_run();
    let output = project
        .atomic()
        .args(["cancel", &run])
        .output()
        .expect("atomic cancel");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("cancelled run"),
        "{}",
        stderr(&output)
    );
    let ended = running.wait_with_output().expect("the owner ends");
    assert_eq!(ended.status.code(), Some(130), "{}", stderr(&ended));
    assert_eq!(project.runs()[0]["status"], "cancelled");

    let before = lines(&project).len();
    let output = project
        .atomic()
        .args(["resume", &run, "--quiet"])
        .output()
        .expect("atomic resume");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let written = lines(&project);
    let mut once = written.clone();
    once.dedup();
    assert_eq!(once.len(), 10, "{written:?}");
    assert!(
        written.len() <= 11 && before <= written.len(),
        "{written:?}"
    );

    let output = project
        .atomic()
        .args(["cancel", &run])
        .output()
        .expect("atomic cancel");
    assert_eq!(
        output.status.code(),
        Some(1),
        "a completed run: {}",
        stderr(&output)
    );

    // A paused run.
    project.write(
        "ask.kdl",
        "workflow \"ask\" {\n    wait \"ok\" prompt=\"Go?\" answer=\"yes-no\"\n}\n",
    );
    let output = project
        .atomic()
        .args(["run", "ask.kdl"])
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(4), "{}", stderr(&output));
    let paused = project.last_run();
    let output = project
        .atomic()
        .args(["cancel", &paused])
        .output()
        .expect("atomic cancel");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let status = project
        .runs()
        .into_iter()
        .find(|r| r["id"] == paused.as_str())
        .map(|r| r["status"].clone());
    assert_eq!(status, Some("cancelled".into()));
}
