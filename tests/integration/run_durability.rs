//! Durability through the real binary: a run SIGKILLed at every step boundary in turn and
//! resumed ends in exactly the state of an uninterrupted run, with every completed step
//! run once (the one in flight at most twice); Ctrl-C (SIGINT) cancels cleanly — the
//! running tool's process is killed, the run is saved, exit 130 — and the run resumes.

use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::cli_project::{CliProject, stderr};

/// 16 iterations of two tool steps: 32 steps, each appending its own line to `out.txt`.
/// `a` writes `a-<i>` and records it in `log`; `b` writes `b-<i>` and advances `i`.
const CRASH: &str = r#"workflow "crash" {
    state {
        field "i" type="integer" default=0
        field "log" type="array" reduce="append" default="[]"
    }
    loop "steps" max=40 until="state.i >= 16" {
        tool "a" idempotent=#true {
            run "sh" "-c" "echo a-{{ state.i }} >> out.txt; echo a-{{ state.i }}"
            output "log" parse="lines"
        }
        tool "b" idempotent=#true {
            run "sh" "-c" "echo b-{{ state.i }} >> out.txt; echo {{ state.i + 1 }}"
            output "i" parse="json"
        }
    }
}
"#;

const STEPS: usize = 32;

fn expected_lines() -> Vec<String> {
    (0..STEPS / 2)
        .flat_map(|i| [format!("a-{i}"), format!("b-{i}")])
        .collect()
}

/// The final state of the run in `project` (node outputs aside).
fn final_state(project: &CliProject) -> Value {
    project.show(&project.last_run())["state"].clone()
}

fn uninterrupted_state() -> Value {
    let project = CliProject::new();
    project.write("crash.kdl", CRASH);
    let output = project
        .atomic()
        .args(["run", "crash.kdl", "--quiet"])
        .output()
        .expect("atomic run");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let lines: Vec<String> = project.read("out.txt").lines().map(str::to_owned).collect();
    assert_eq!(lines, expected_lines());
    final_state(&project)
}

/// Kills the run with SIGKILL once `out.txt` has `lines` lines (polling), resumes it,
/// and checks the outcome against the uninterrupted run.
fn crash_after(lines: usize, reference: &Value) -> (bool, usize) {
    let project = CliProject::new();
    project.write("crash.kdl", CRASH);
    let resumed = project.kill_at_lines_and_resume("crash.kdl", "out.txt", lines);
    assert_eq!(
        &final_state(&project),
        reference,
        "state after a kill at {lines} lines"
    );

    // Every step ran once, except the one in flight at the kill, at most twice.
    let written: Vec<String> = project.read("out.txt").lines().map(str::to_owned).collect();
    let mut deduplicated = written.clone();
    deduplicated.dedup();
    assert_eq!(
        deduplicated,
        expected_lines(),
        "kill at {lines} lines: {written:?}"
    );
    let repeats = written.len() - deduplicated.len();
    assert!(
        repeats <= 1,
        "kill at {lines} lines re-ran {repeats} steps: {written:?}"
    );
    if repeats == 1 {
        // The repeated step is the one that was running: at or after the kill point.
        let at = written
            .windows(2)
            .position(|pair| pair[0] == pair[1])
            .expect("a repeat");
        assert!(
            at + 1 >= lines,
            "kill at {lines} lines re-ran step {}",
            at + 1
        );
    }
    (resumed, repeats)
}

fn crash_range(range: std::ops::RangeInclusive<usize>) {
    let reference = uninterrupted_state();
    assert_eq!(reference["i"], 16);
    assert_eq!(reference["log"].as_array().map(Vec::len), Some(16));
    let mut resumed = 0;
    let mut repeated = 0;
    let points = range.clone().count();
    for lines in range {
        let (was_resumed, repeats) = crash_after(lines, &reference);
        resumed += usize::from(was_resumed);
        repeated += repeats;
    }
    #[allow(
        clippy::print_stderr,
        reason = "the distribution of kill outcomes is worth seeing"
    )]
    {
        eprintln!("{points} kill points: {resumed} resumed, {repeated} in-flight steps re-run");
    }
    // The kills must land mid-run (a run that finished first proves nothing): a step
    // spawns a process and commits to SQLite, far slower than the polling.
    assert!(
        resumed + 1 >= points,
        "only {resumed} of {points} kills interrupted the run"
    );
}

// The 32 kill points, in four tests so they run in parallel.
#[test]
fn killed_at_steps_1_to_8_and_resumed() {
    crash_range(1..=8);
}

#[test]
fn killed_at_steps_9_to_16_and_resumed() {
    crash_range(9..=16);
}

#[test]
fn killed_at_steps_17_to_24_and_resumed() {
    crash_range(17..=24);
}

#[test]
fn killed_at_steps_25_to_32_and_resumed() {
    crash_range(25..=STEPS);
}

/// A tool that records its pid and then sleeps, unless `go.txt` exists.
const SLOW: &str = r#"workflow "slow" {
    state { field "done" type="boolean" default=#false }
    tool "before" { run "sh" "-c" "echo before >> side.txt"; }
    tool "sleepy" {
        run "sh" "-c" "echo $$ > pid.txt; if [ -f go.txt ]; then exit 0; fi; sleep 60"
    }
    set "done" expr="true"
}
"#;

/// Ctrl-C (SIGINT), SIGTERM (a container stop, a CI cancellation) and SIGHUP (a closed
/// terminal) alike: the running tool's process group is ended, the run is saved as
/// cancelled, atomic exits 130, and the run resumes without repeating a completed step.
#[cfg(unix)]
#[test]
fn ctrl_c_kills_the_running_tool_saves_the_run_and_exits_130() {
    use nix::sys::signal::{Signal, kill};
    use nix::unistd::Pid;

    for signal in [Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP] {
        let project = CliProject::new();
        project.write("slow.kdl", SLOW);
        let mut child = project
            .spawn_command()
            .args(["run", "slow.kdl"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn atomic run");
        let tool_pid = wait_for_pid(&project, "pid.txt");
        let atomic_pid = Pid::from_raw(i32::try_from(child.id()).expect("a pid"));
        kill(atomic_pid, signal).expect("send the signal");

        let started = Instant::now();
        let status = loop {
            if let Some(status) = child.try_wait().expect("poll the child") {
                break status;
            }
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "atomic did not stop after {signal}"
            );
            std::thread::sleep(Duration::from_millis(10));
        };
        let mut err = String::new();
        if let Some(mut pipe) = child.stderr.take() {
            use std::io::Read;
            let _ = pipe.read_to_string(&mut err);
        }
        assert_eq!(status.code(), Some(130), "{signal}: {err}");
        assert!(err.contains("cancelling"), "{signal}: {err}");
        assert!(err.contains("`slow` cancelled"), "{signal}: {err}");
        assert!(err.contains("atomic resume"), "{err}");

        // The sleeping tool died with the run.
        let gone = Instant::now();
        while kill(Pid::from_raw(tool_pid), None).is_ok() {
            assert!(
                gone.elapsed() < Duration::from_secs(10),
                "the tool (pid {tool_pid}) outlived the cancelled run"
            );
            std::thread::sleep(Duration::from_millis(10));
        }

        let runs = project.runs();
        assert_eq!(runs[0]["status"], "cancelled");
        assert_eq!(runs[0]["steps"], 1, "only `before` was committed");

        // Resume: the cancelled step runs again (and now finishes); `before` does not. The
        // file that lets it finish is a person's change made while the run was stopped:
        // refused, then kept.
        project.write("go.txt", "");
        let id = runs[0]["id"].as_str().expect("an id").to_owned();
        let refused = project
            .atomic()
            .args(["resume", &id, "--quiet"])
            .output()
            .expect("atomic resume");
        assert_eq!(refused.status.code(), Some(1), "{}", stderr(&refused));
        assert!(
            stderr(&refused).contains("- go.txt"),
            "{}",
            stderr(&refused)
        );
        let output = project
            .atomic()
            .args(["resume", &id, "--quiet", "--keep-changes"])
            .output()
            .expect("atomic resume");
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        assert_eq!(project.read("side.txt"), "before\n");
        assert_eq!(project.show(&id)["state"]["done"], true);
    }
}

const HOOKED: &str = r#"workflow "hooked" {
    on "run.end" { run "sh" "-c" "echo $$ > hook.pid; exec sleep 60"; }
    tool "work" { run "sh" "-c" "echo $$ > tool.pid; exec sleep 60"; }
}
"#;

/// Reads a pid a process wrote to `file`, waiting (bounded) for it.
fn wait_for_pid(project: &CliProject, file: &str) -> i32 {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Ok(pid) = project.read(file).trim().parse::<i32>() {
            return pid;
        }
        assert!(Instant::now() < deadline, "{file} was never written");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Ctrl-C, then Ctrl-C again (a forced quit) while the `run.end` hook of the cancelled run
/// is running: atomic exits at once, and the hook's process does not outlive it.
#[cfg(unix)]
#[test]
fn a_forced_quit_leaves_no_hook_behind() {
    use nix::sys::signal::{Signal, kill};
    use nix::unistd::Pid;

    let project = CliProject::new();
    project.write("hooked.kdl", HOOKED);
    let mut child = project
        .spawn_command()
        .args(["run", "hooked.kdl"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn atomic run");
    wait_for_pid(&project, "tool.pid");
    let atomic = Pid::from_raw(i32::try_from(child.id()).expect("a pid"));
    kill(atomic, Signal::SIGINT).expect("first Ctrl-C");
    let hook = wait_for_pid(&project, "hook.pid");
    kill(atomic, Signal::SIGINT).expect("second Ctrl-C");
    let status = child.wait().expect("atomic exits");
    assert_eq!(status.code(), Some(130));
    let gone = Instant::now();
    loop {
        let state = std::fs::read_to_string(format!("/proc/{hook}/stat")).unwrap_or_default();
        let zombie_or_gone = state.is_empty()
            || state[state.rfind(')').map_or(0, |at| at + 1)..]
                .trim_start()
                .starts_with('Z');
        if zombie_or_gone {
            break;
        }
        assert!(
            gone.elapsed() < Duration::from_secs(5),
            "the hook (pid {hook}) outlived atomic"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

const TIDY: &str = r#"workflow "tidy" {
    tool "work" {
        run "sh" "-c" "trap 'echo cleaned > cleaned.txt; exit 0' TERM; echo $$ > pid.txt; sleep 60 & wait"
    }
}
"#;

/// A stopped run ends its tool gracefully: SIGTERM first, so the tool can clean up (here it
/// writes `cleaned.txt`), and SIGKILL only after a grace period.
#[cfg(unix)]
#[test]
fn a_cancelled_tool_gets_sigterm_to_clean_up() {
    use nix::sys::signal::{Signal, kill};
    use nix::unistd::Pid;

    let project = CliProject::new();
    project.write("tidy.kdl", TIDY);
    let mut child = project
        .spawn_command()
        .args(["run", "tidy.kdl"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn atomic run");
    wait_for_pid(&project, "pid.txt");
    kill(
        Pid::from_raw(i32::try_from(child.id()).expect("a pid")),
        Signal::SIGTERM,
    )
    .expect("SIGTERM");
    let status = child.wait().expect("atomic exits");
    assert_eq!(status.code(), Some(130));
    assert_eq!(
        project.read("cleaned.txt"),
        "cleaned\n",
        "the tool cleaned up"
    );
}
