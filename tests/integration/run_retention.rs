//! `atomic runs delete` and `atomic runs prune` through the binary, on the durable default
//! store: runs deleted by prefix (gone from the listing, `runs show` refusing them, their
//! snapshot refs gone), prune's filters (`--keep`, `--status`, `--older-than`, all at once,
//! `--dry-run`, none refused), a run a live process drives left alone, and the store's size
//! under `atomic runs`'s table shrinking as runs go.

use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::support::cli_project::{CliProject, stderr, stdout};

/// Three `set` steps, completed.
const SETS: &str = r#"workflow "sets" {
    state {
        field "a" type="integer" default=0
        field "b" type="integer" default=0
        field "c" type="integer" default=0
    }
    set "a" expr="1"
    set "b" expr="state.a + 1"
    set "c" expr="state.b + 1"
}
"#;

/// One `set` step, then paused at a `wait`.
const GATE: &str = r#"workflow "gate" {
    state {
        field "n" type="integer" default=0
        field "ok" type="boolean" default=#false
    }
    set "n" expr="state.n + 1"
    wait "approve" prompt="Go?" answer="yes-no" {
        output "ok"
    }
}
"#;

/// A tool that sleeps: a run a live process holds for as long as the test needs.
const SLOW: &str = r#"workflow "slow" {
    tool "nap" {
        run "sleep" "60"
    }
}
"#;

/// A project with `sets.kdl`, `gate.kdl` and `slow.kdl`.
fn project() -> CliProject {
    let project = CliProject::new();
    project.write("sets.kdl", SETS);
    project.write("gate.kdl", GATE);
    project.write("slow.kdl", SLOW);
    project
}

/// Runs `file` to its end (or its wait) and returns the new run's id.
fn run(project: &CliProject, file: &str, code: i32) -> String {
    let output = project
        .atomic()
        .args(["run", file, "--quiet"])
        .output()
        .expect("atomic run");
    assert_eq!(output.status.code(), Some(code), "{}", stderr(&output));
    project.last_run()
}

/// `atomic ARGS`: its exit code, stdout and stderr.
fn atomic(project: &CliProject, args: &[&str]) -> (Option<i32>, String, String) {
    let output = project.atomic().args(args).output().expect("atomic");
    (output.status.code(), stdout(&output), stderr(&output))
}

/// The ids `atomic runs --json` lists, newest first.
fn ids(project: &CliProject) -> Vec<String> {
    project
        .runs()
        .iter()
        .map(|run| run["id"].as_str().expect("an id").to_owned())
        .collect()
}

/// The last line of `atomic runs`: how many runs, and the store's size in bytes (as
/// rounded for people).
fn size_line(project: &CliProject) -> (String, f64) {
    let (code, out, err) = atomic(project, &["runs"]);
    assert_eq!(code, Some(0), "{err}");
    let line = out.lines().last().expect("a last line").to_owned();
    let rest = line
        .strip_prefix("store: ")
        .and_then(|rest| rest.strip_suffix(" in .atomic/"))
        .unwrap_or_else(|| panic!("not a size line: {line:?} in\n{out}"));
    let (runs, size) = rest.split_once(" · ").expect("runs · size");
    let (number, unit) = size.split_once(' ').expect("a number and a unit");
    let scale = match unit {
        "B" => 1.0,
        "KB" => 1024.0,
        "MB" => 1024.0 * 1024.0,
        other => panic!("unit {other:?} in {line:?}"),
    };
    let number: f64 = number.parse().expect("a number");
    (runs.to_owned(), number * scale)
}

/// The snapshot refs naming `run` in the project's private snapshot repository (none
/// where the runs recorded no files, or git is missing).
fn snapshot_refs(project: &CliProject, run: &str) -> Vec<String> {
    let git_dir = project.path().join(".atomic/snapshots.git");
    if !git_dir.exists() {
        return Vec::new();
    }
    let Ok(output) = std::process::Command::new("git")
        .arg("--git-dir")
        .arg(&git_dir)
        .args(["for-each-ref", "--format=%(refname)", "refs/atomic/"])
        .output()
    else {
        return Vec::new();
    };
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter(|name| name.contains(run))
        .map(str::to_owned)
        .collect()
}

#[test]
fn delete_removes_runs_by_prefix_and_the_store_shrinks() {
    let project = project();
    let first = run(&project, "sets.kdl", 0);
    let paused = run(&project, "gate.kdl", 4);
    let last = run(&project, "sets.kdl", 0);
    let (runs, before) = size_line(&project);
    assert_eq!(runs, "3 runs");
    assert!(before > 0.0);
    let had_refs = !snapshot_refs(&project, &paused).is_empty();

    // A prefix is enough (11 characters: the time part differs between these runs).
    let (code, out, err) = atomic(&project, &["runs", "delete", &paused[..11]]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(out.lines().count(), 1, "{out}");
    assert!(
        out.starts_with(&format!("deleted run {paused}  `gate`  paused")),
        "{out}"
    );
    assert_eq!(ids(&project), [last.clone(), first.clone()]);
    let (code, _, err) = atomic(&project, &["runs", "show", &paused]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains(&format!("no run `{paused}`")), "{err}");
    assert!(
        snapshot_refs(&project, &paused).is_empty(),
        "its snapshot refs went (it had some: {had_refs})"
    );
    assert!(
        !project
            .path()
            .join(format!(".atomic/live/{paused}.jsonl"))
            .exists()
    );
    let (runs, after) = size_line(&project);
    assert_eq!(runs, "2 runs");
    assert!(after < before, "{after} bytes after, {before} before");

    // Several at once; a second delete of one finds nothing and deletes nothing.
    let (code, out, err) = atomic(&project, &["runs", "delete", &first, &last]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(out.lines().count(), 2, "{out}");
    assert!(ids(&project).is_empty());
    let (code, _, err) = atomic(&project, &["runs", "delete", &first]);
    assert_eq!(code, Some(1));
    assert!(err.contains(&format!("no run `{first}`")), "{err}");
    // An empty store lists no table, so no size line either; the JSON is unchanged.
    let (code, out, _) = atomic(&project, &["runs"]);
    assert_eq!((code, out.as_str()), (Some(0), "no runs\n"));
    let (_, out, _) = atomic(&project, &["runs", "--json"]);
    assert_eq!(out.trim(), "[]");
}

#[test]
fn prune_deletes_what_every_filter_given_matches() {
    let project = project();
    let mut completed: Vec<String> = (0..4).map(|_| run(&project, "sets.kdl", 0)).collect();
    completed.reverse(); // newest first, as listed
    let paused = run(&project, "gate.kdl", 4);
    assert_eq!(ids(&project).len(), 5);

    // No filter at all: refused.
    let (code, out, err) = atomic(&project, &["runs", "prune"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(out.is_empty(), "{out}");
    assert!(err.contains("give at least one"), "{err}");
    for (args, wrong) in [
        (["--status", "done"], "unknown status `done`"),
        (["--older-than", "30"], "is not an age"),
        (["--older-than", "3y"], "is not an age"),
    ] {
        let (code, _, err) = atomic(&project, &[&["runs", "prune"][..], &args[..]].concat());
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(err.contains(wrong), "{args:?}: {err}");
    }
    assert_eq!(ids(&project).len(), 5, "nothing went");

    // A dry run lists what would go (all but the 2 newest) and deletes nothing.
    let (code, out, err) = atomic(&project, &["runs", "prune", "--keep", "2", "--dry-run"]);
    assert_eq!(code, Some(0), "{err}");
    let listed: Vec<&str> = out
        .lines()
        .filter_map(|line| line.strip_prefix("would delete run "))
        .map(|line| line.split_whitespace().next().expect("an id"))
        .collect();
    assert_eq!(listed, [&completed[1], &completed[2], &completed[3]]);
    assert!(out.contains("would delete 3 runs of 5"), "{out}");
    assert_eq!(ids(&project).len(), 5, "a dry run deletes nothing");

    // The newest 3 completed runs stay: the oldest completed one goes, the paused one
    // (the newest run) is no completed run.
    let (code, out, err) = atomic(
        &project,
        &["runs", "prune", "--status", "completed", "--keep", "3"],
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(out.starts_with("deleted 1 run, "), "{out}");
    assert!(out.trim_end().ends_with(" freed"), "{out}");
    assert_eq!(
        ids(&project),
        [
            paused.clone(),
            completed[0].clone(),
            completed[1].clone(),
            completed[2].clone()
        ]
    );

    // Nothing is a week old.
    let (code, out, err) = atomic(&project, &["runs", "prune", "--older-than", "1w"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.starts_with("deleted 0 runs"), "{out}");
    assert_eq!(ids(&project).len(), 4);

    // `0d`: every run with the statuses, however recent.
    let (code, out, err) = atomic(
        &project,
        &[
            "runs",
            "prune",
            "--older-than",
            "0d",
            "--status",
            "completed,failed,cancelled",
        ],
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(out.starts_with("deleted 3 runs"), "{out}");
    assert_eq!(ids(&project), [paused.as_str()]);
    let (code, out, err) = atomic(&project, &["runs", "prune", "--older-than", "0d"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.starts_with("deleted 1 run,"), "{out}");
    assert!(ids(&project).is_empty());
}

#[test]
fn a_run_a_live_process_drives_is_neither_deleted_nor_pruned() {
    let project = project();
    let done = run(&project, "sets.kdl", 0);
    let mut child = project
        .spawn_command()
        .args(["run", "slow.kdl", "--quiet"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn atomic run");
    let deadline = Instant::now() + Duration::from_secs(30);
    let running = loop {
        let runs = project.runs();
        if let Some(run) = runs
            .iter()
            .find(|run| run["workflow"] == "slow" && run.get("owner").is_some())
        {
            break run["id"].as_str().expect("an id").to_owned();
        }
        assert!(Instant::now() < deadline, "the slow run never started");
        std::thread::sleep(Duration::from_millis(50));
    };

    let (code, out, err) = atomic(&project, &["runs", "delete", &running, &done]);
    assert_eq!(code, Some(1), "{out}{err}");
    assert!(
        err.contains(&format!(
            "run `{running}` is being run by pid {}",
            child.id()
        )),
        "{err}"
    );
    assert!(err.contains(&format!("atomic cancel {running}")), "{err}");
    assert!(err.contains("nothing was deleted"), "{err}");
    assert_eq!(ids(&project).len(), 2, "not even the other run went");

    let (code, out, err) = atomic(&project, &["runs", "prune", "--older-than", "0d"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.starts_with("deleted 1 run,"), "{out}");
    assert!(err.contains(&format!("kept run `{running}`")), "{err}");
    assert_eq!(ids(&project), [running.as_str()]);

    let (code, _, err) = atomic(&project, &["cancel", &running]);
    assert_eq!(code, Some(0), "{err}");
    let status = child.wait().expect("the run stops");
    assert!(!status.success());
    let (code, out, err) = atomic(&project, &["runs", "delete", &running]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("`slow`  cancelled"), "{out}");
    assert!(ids(&project).is_empty());
}
