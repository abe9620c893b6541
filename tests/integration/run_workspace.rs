//! The workspace is part of the run, through the binary with real git: each agent and
//! tool step's files are recorded around it (`runs show` lists them, `runs diff` shows
//! them), a retried step starts from the files before its first attempt, a run killed
//! (SIGKILL) in the middle of a step that writes several files in pieces resumes to the
//! very files of an uninterrupted run — the dead attempt's processes ended first — files
//! changed while a run was stopped are refused unless kept, and `rewind` / `fork` move a
//! run's state and files together.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::cli_project::{CliProject, stderr, stdout};

/// Whether git is here; the tests that need it skip loudly without.
fn git() -> bool {
    crate::support::tools::required_tool("git", "install git to test workspace snapshots").is_some()
}

/// A step that writes three files in five pieces each, 150 ms apart, then a step after
/// it: the files of an uninterrupted run are known exactly.
const PIECES: &str = r#"workflow "pieces" {
    tool "write" {
        run "sh" "-c" "mkdir -p a; for i in 1 2 3 4 5; do echo line-$i >> log.txt; echo part-$i >> a/b.txt; printf x >> c.bin; sleep 0.15; done"
    }
    tool "after" {
        run "sh" "-c" "echo done >> log.txt; rm c.bin; echo new > d.txt"
    }
}
"#;

/// The files of `project` a step may have written (name → text; absent ones left out).
fn files(project: &CliProject) -> Vec<(String, String)> {
    ["log.txt", "a/b.txt", "c.bin", "d.txt"]
        .iter()
        .filter(|name| project.path().join(name).exists())
        .map(|name| ((*name).to_owned(), project.read(name)))
        .collect()
}

fn run_ok(project: &CliProject, args: &[&str]) -> std::process::Output {
    let output = project.atomic().args(args).output().expect("atomic");
    assert_eq!(
        output.status.code(),
        Some(0),
        "atomic {args:?}: {}{}",
        stdout(&output),
        stderr(&output)
    );
    output
}

fn uninterrupted() -> Vec<(String, String)> {
    let project = CliProject::new();
    project.write("pieces.kdl", PIECES);
    run_ok(&project, &["run", "pieces.kdl", "--quiet"]);
    files(&project)
}

#[test]
fn each_step_records_the_files_it_changed_and_runs_diff_shows_them() {
    if !git() {
        return;
    }
    let project = CliProject::new();
    project.write("keep.txt", "kept\n");
    project.write("pieces.kdl", PIECES);
    run_ok(&project, &["run", "pieces.kdl", "--quiet"]);
    let run = project.last_run();

    let shown = project.show(&run);
    let steps = shown["files"].as_array().expect("files per step");
    assert_eq!(steps.len(), 2, "{shown}");
    let paths = |index: usize| -> Vec<(String, String)> {
        steps[index]["files"]["changed"]
            .as_array()
            .expect("changed")
            .iter()
            .map(|change| {
                (
                    change["path"].as_str().expect("path").to_owned(),
                    change["status"].as_str().expect("status").to_owned(),
                )
            })
            .collect()
    };
    let added = |path: &str| (path.to_owned(), "added".to_owned());
    assert_eq!(
        paths(0),
        [added("a/b.txt"), added("c.bin"), added("log.txt")]
    );
    assert_eq!(
        paths(1),
        [
            ("c.bin".to_owned(), "deleted".to_owned()),
            added("d.txt"),
            ("log.txt".to_owned(), "modified".to_owned()),
        ]
    );
    // The store and its snapshots are never part of the files.
    assert!(!format!("{shown}").contains(".atomic/"), "{shown}");

    let text = run_ok(&project, &["runs", "show", &run]);
    assert!(
        stdout(&text).contains("files  A a/b.txt, A c.bin, A log.txt"),
        "{}",
        stdout(&text)
    );

    let one = stdout(&run_ok(&project, &["runs", "diff", &run, "after"]));
    assert!(one.contains("diff --git a/log.txt b/log.txt"), "{one}");
    assert!(one.contains("+done"), "{one}");
    assert!(one.contains("deleted file mode"), "{one}");
    assert!(!one.contains("\u{1b}["), "no colour off a terminal: {one}");

    let whole = stdout(&run_ok(&project, &["runs", "diff", &run, "--stat"]));
    assert!(whole.contains("a/b.txt"), "{whole}");
    assert!(whole.contains("d.txt"), "{whole}");
    assert!(!whole.contains("c.bin"), "added then deleted: {whole}");
    assert!(
        whole.contains("3 files changed, 12 insertions(+), 0 deletions(-)"),
        "{whole}"
    );

    let json: Value = serde_json::from_str(&stdout(&run_ok(
        &project,
        &["runs", "diff", &run, "1", "--json"],
    )))
    .expect("JSON");
    assert_eq!(json["files"].as_array().map(Vec::len), Some(3), "{json}");
    assert!(json["patch"].as_str().expect("patch").contains("+part-5"));

    let missing = project
        .atomic()
        .args(["runs", "diff", &run, "nope"])
        .output()
        .expect("atomic");
    assert_eq!(missing.status.code(), Some(1));
    assert!(
        stderr(&missing)
            .contains("no step `nope` that recorded files; steps that did: 1 `write`, 2 `after`"),
        "{}",
        stderr(&missing)
    );
}

#[test]
fn a_project_under_git_keeps_its_head_index_branches_and_stash() {
    if !git() {
        return;
    }
    let project = CliProject::new();
    let git = |args: &[&str]| {
        let output = std::process::Command::new("git")
            .args(args)
            .current_dir(project.path())
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@t")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@t")
            .output()
            .expect("git");
        assert!(output.status.success(), "git {args:?}: {}", stderr(&output));
        stdout(&output)
    };
    git(&["init", "-q", "-b", "main"]);
    project.write(".gitignore", ".atomic/\nbuild/\n");
    project.write("log.txt", "tracked\n");
    project.write("build/out.o", "ignored\n");
    git(&["add", "-A"]);
    git(&["commit", "-q", "-m", "first"]);
    project.write("staged.txt", "staged\n");
    git(&["add", "staged.txt"]);
    let before = (
        git(&["rev-parse", "HEAD"]),
        git(&["status", "--porcelain"]),
        std::fs::read(project.path().join(".git/index")).expect("index"),
        git(&["branch", "--list"]),
        git(&["stash", "list"]),
    );
    project.write("pieces.kdl", PIECES);
    run_ok(&project, &["run", "pieces.kdl", "--quiet"]);
    let run = project.last_run();
    let after = (
        git(&["rev-parse", "HEAD"]),
        git(&["status", "--porcelain"]),
        std::fs::read(project.path().join(".git/index")).expect("index"),
        git(&["branch", "--list"]),
        git(&["stash", "list"]),
    );
    assert_eq!(before.0, after.0, "HEAD");
    assert_eq!(before.2, after.2, "the index, byte for byte");
    assert_eq!(before.3, after.3, "branches");
    assert_eq!(before.4, after.4, "stash");
    assert!(
        git(&["for-each-ref", "refs/atomic/"]).contains(&run),
        "the run's snapshots are under refs/atomic"
    );
    let diff = stdout(&run_ok(&project, &["runs", "diff", &run, "--stat"]));
    assert!(
        !diff.contains("build/"),
        "ignored files are not recorded: {diff}"
    );
}

#[test]
fn a_retried_step_starts_from_the_files_before_its_first_attempt() {
    if !git() {
        return;
    }
    let project = CliProject::new();
    // The attempt count lives outside the workspace, so putting files back keeps it.
    let counter = tempfile::NamedTempFile::new().expect("a counter file");
    let flow = format!(
        r#"workflow "retry" {{
    tool "flaky" {{
        run "sh" "-c" "echo attempt >> log.txt; echo x >> {counter}; test $(wc -l < {counter}) -ge 3"
        retry "tool-exit" attempts=3 backoff="10ms"
    }}
}}
"#,
        counter = counter.path().display()
    );
    project.write("retry.kdl", &flow);
    project.write("log.txt", "start\n");
    run_ok(&project, &["run", "retry.kdl", "--quiet"]);
    assert_eq!(
        project.read("log.txt"),
        "start\nattempt\n",
        "one attempt's line"
    );
    assert_eq!(
        std::fs::read_to_string(counter.path())
            .expect("counter")
            .lines()
            .count(),
        3,
        "three attempts ran"
    );
}

#[test]
fn a_step_that_fails_for_good_leaves_its_last_attempts_files_for_what_follows() {
    if !git() {
        return;
    }
    let project = CliProject::new();
    project.write(
        "fail.kdl",
        r#"workflow "fail" {
    tool "breaks" {
        run "sh" "-c" "echo half >> log.txt; rm keep.txt; exit 3"
        retry "tool-exit" attempts=3 backoff="10ms"
        on-error "skip"
    }
    tool "after" { run "sh" "-c" "cat log.txt >> seen.txt"; }
}
"#,
    );
    project.write("keep.txt", "kept\n");
    run_ok(&project, &["run", "fail.kdl", "--quiet"]);
    // Three attempts, each from the files before the first: one line, not three.
    assert_eq!(project.read("log.txt"), "half\n");
    assert!(!project.path().join("keep.txt").exists());
    assert_eq!(
        project.read("seen.txt"),
        "half\n",
        "the next step sees what it left"
    );
}

/// Kills `atomic run` after `after`, then resumes: the files must equal `reference`.
fn kill_and_resume(after: Duration, reference: &[(String, String)]) {
    let project = CliProject::new();
    project.write("pieces.kdl", PIECES);
    let mut child = project
        .spawn_command()
        .args(["run", "pieces.kdl", "--quiet"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn atomic run");
    std::thread::sleep(after);
    let _ = child.kill();
    let _ = child.wait();
    let run = project.last_run();
    let status = project.runs()[0]["status"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    if status != "completed" {
        let output = project
            .atomic()
            .args(["resume", &run, "--quiet"])
            .output()
            .expect("atomic resume");
        assert_eq!(
            output.status.code(),
            Some(0),
            "resume after a kill at {after:?}: {}",
            stderr(&output)
        );
    }
    // Anything the dead attempt left running would go on writing: give it the time.
    std::thread::sleep(Duration::from_millis(400));
    assert_eq!(
        files(&project),
        reference,
        "files after a kill at {after:?}"
    );
}

#[test]
fn a_run_killed_in_a_step_that_writes_in_pieces_resumes_to_the_uninterrupted_files() {
    if !git() {
        return;
    }
    let reference = uninterrupted();
    assert_eq!(reference.len(), 3, "{reference:?}");
    let started = Instant::now();
    for ms in [150, 300, 450, 600, 800, 950, 1200] {
        kill_and_resume(Duration::from_millis(ms), &reference);
    }
    assert!(started.elapsed() < Duration::from_secs(120));
}

#[test]
fn an_appending_tool_killed_with_its_atomic_does_not_go_on_writing() {
    if !git() {
        return;
    }
    let project = CliProject::new();
    project.write(
        "append.kdl",
        r#"workflow "append" {
    tool "items" {
        run "sh" "-c" "for i in 1 2 3 4 5; do echo item-$i >> items.txt; sleep 0.3; done"
    }
}
"#,
    );
    let mut child = project
        .spawn_command()
        .args(["run", "append.kdl", "--quiet"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn atomic run");
    std::thread::sleep(Duration::from_millis(800));
    let _ = child.kill();
    let _ = child.wait();
    let run = project.last_run();
    let output = project
        .atomic()
        .args(["resume", &run])
        .output()
        .expect("atomic resume");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("process(es) that pid"),
        "the takeover ended the dead owner's shell: {}",
        stderr(&output)
    );
    std::thread::sleep(Duration::from_millis(700));
    let items: Vec<String> = project
        .read("items.txt")
        .lines()
        .map(str::to_owned)
        .collect();
    assert_eq!(
        items,
        (1..=5).map(|i| format!("item-{i}")).collect::<Vec<_>>(),
        "five lines, not the dead attempt's and the resumed one's"
    );
}

#[test]
fn files_changed_while_a_run_waits_are_refused_unless_kept() {
    if !git() {
        return;
    }
    let project = CliProject::new();
    project.write(
        "pause.kdl",
        r#"workflow "pause" {
    tool "first" { run "sh" "-c" "echo one > notes.txt"; }
    wait "ok" prompt="go on?" answer="boolean"
    tool "second" { run "sh" "-c" "echo two >> notes.txt"; }
}
"#,
    );
    let paused = project
        .atomic()
        .args(["run", "pause.kdl", "--quiet"])
        .output()
        .expect("atomic");
    assert_eq!(paused.status.code(), Some(4), "{}", stderr(&paused));
    let run = project.last_run();
    project.write("notes.txt", "edited by a person\n");
    project.write("new.txt", "mine\n");

    let refused = project
        .atomic()
        .args(["resume", &run, "--answer", "true"])
        .output()
        .expect("atomic");
    assert_ne!(refused.status.code(), Some(0));
    let message = stderr(&refused);
    assert!(
        message.contains("these files changed since the run stopped"),
        "{message}"
    );
    assert!(
        message.contains("- new.txt") && message.contains("- notes.txt"),
        "{message}"
    );
    assert!(message.contains("--keep-changes"), "{message}");
    assert_eq!(
        project.read("notes.txt"),
        "edited by a person\n",
        "nothing was touched"
    );

    let kept = run_ok(
        &project,
        &["resume", &run, "--answer", "true", "--keep-changes"],
    );
    assert!(
        stderr(&kept).contains("2 files changed while the run was stopped"),
        "{}",
        stderr(&kept)
    );
    assert_eq!(project.read("notes.txt"), "edited by a person\ntwo\n");
}

const THREE: &str = r#"workflow "three" {
    state { field "n" type="integer" default=0 }
    tool "one" { run "sh" "-c" "echo 1 > one.txt; echo 1"; output "n" parse="number"; }
    tool "two" { run "sh" "-c" "echo 2 > two.txt; echo 1 >> one.txt; echo 2"; output "n" parse="number"; }
    tool "three" { run "sh" "-c" "echo 3 > three.txt; rm two.txt; echo 3"; output "n" parse="number"; }
}
"#;

fn state_n(project: &CliProject, run: &str) -> Value {
    project.show(run)["state"]["n"].clone()
}

#[test]
fn rewind_takes_state_and_files_back_and_undo_puts_them_again() {
    if !git() {
        return;
    }
    let project = CliProject::new();
    project.write("three.kdl", THREE);
    run_ok(&project, &["run", "three.kdl", "--quiet"]);
    let run = project.last_run();
    let done = files_of(project.path(), &["one.txt", "two.txt", "three.txt"]);
    assert_eq!(state_n(&project, &run), 3);

    run_ok(&project, &["rewind", &run, "--to", "one"]);
    assert_eq!(state_n(&project, &run), 1);
    assert_eq!(
        project.show(&run)["steps"].as_array().map(Vec::len),
        Some(1)
    );
    assert_eq!(
        files_of(project.path(), &["one.txt", "two.txt", "three.txt"]),
        [("one.txt", "1\n".to_owned())]
    );
    let record = project
        .runs()
        .into_iter()
        .find(|record| record["id"] == run.as_str())
        .expect("the run is listed");
    assert_eq!(record["status"], "paused");
    assert!(
        project.runs().iter().all(|record| !record["id"]
            .as_str()
            .unwrap_or_default()
            .starts_with("undo-")),
        "the copy kept for --undo is not listed"
    );

    // A prefix of the run's id names the run, not the copy kept for `--undo`.
    run_ok(&project, &["rewind", &run[..6], "--undo"]);
    assert_eq!(state_n(&project, &run), 3);
    assert_eq!(
        files_of(project.path(), &["one.txt", "two.txt", "three.txt"]),
        done
    );

    // Rewound again, it resumes to the same end.
    run_ok(&project, &["rewind", &run, "--to", "2"]);
    assert_eq!(
        files_of(project.path(), &["one.txt", "two.txt", "three.txt"]).len(),
        2
    );
    run_ok(&project, &["resume", &run, "--quiet"]);
    assert_eq!(state_n(&project, &run), 3);
    assert_eq!(
        files_of(project.path(), &["one.txt", "two.txt", "three.txt"]),
        done
    );
}

#[test]
fn fork_starts_a_new_run_in_a_worktree_of_its_own() {
    if !git() {
        return;
    }
    let project = CliProject::new();
    project.write("three.kdl", THREE);
    run_ok(&project, &["run", "three.kdl", "--quiet"]);
    let run = project.last_run();
    let done = files_of(project.path(), &["one.txt", "two.txt", "three.txt"]);

    let forked = run_ok(&project, &["fork", &run, "--at", "two"]);
    let fork = stdout(&forked).trim().to_owned();
    let worktree = project.path().join(".atomic/worktrees").join(&fork);
    assert_eq!(
        files_of(&worktree, &["one.txt", "two.txt", "three.txt"]),
        [
            ("one.txt", "1\n1\n".to_owned()),
            ("two.txt", "2\n".to_owned())
        ],
        "{}",
        stderr(&forked)
    );
    assert_eq!(
        files_of(project.path(), &["one.txt", "two.txt", "three.txt"]),
        done,
        "the original's files are untouched"
    );
    let record = project
        .runs()
        .into_iter()
        .find(|record| record["id"] == fork.as_str())
        .expect("the fork is listed");
    assert_eq!(record["origin"], format!("{run}@2"));

    let output = assert_cmd::Command::new(crate::support::cli_project::bin())
        .current_dir(&worktree)
        .env("NO_COLOR", "1")
        .args(["resume", &fork, "--quiet"])
        .timeout(Duration::from_secs(60))
        .output()
        .expect("atomic resume in the worktree");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(
        files_of(&worktree, &["one.txt", "two.txt", "three.txt"]),
        [
            ("one.txt", "1\n1\n".to_owned()),
            ("three.txt", "3\n".to_owned())
        ]
    );
    assert_eq!(state_n(&project, &fork), 3);
    assert_eq!(
        files_of(project.path(), &["one.txt", "two.txt", "three.txt"]),
        done
    );
}

/// Two steps greeting an input: a fork's own inputs and workflow reach the steps after
/// its fork point.
const GREET: &str = r#"workflow "greet" {
    input "name" type="string" default="world"
    input "count" type="integer" default=1
    tool "first" { run "sh" "-c" "echo \"hello $1\" > greeting.txt" "sh" "{{ input.name }}"; }
    tool "second" { run "sh" "-c" "echo \"$1 x{{ input.count }}\" >> greeting.txt" "sh" "{{ input.name }}"; }
}
"#;

#[test]
fn a_fork_goes_on_with_its_own_inputs_and_an_edited_workflow_that_fits() {
    if !git() {
        return;
    }
    let project = CliProject::new();
    project.write("greet.kdl", GREET);
    run_ok(&project, &["run", "greet.kdl", "--quiet"]);
    let run = project.last_run();
    assert_eq!(project.read("greeting.txt"), "hello world\nworld x1\n");

    // Inputs of its own, typed by the workflow, for the steps after the fork point.
    let forked = run_ok(
        &project,
        &[
            "fork",
            &run,
            "--at",
            "first",
            "--in-place",
            "-i",
            "name=fork",
            "-i",
            "count=3",
        ],
    );
    let fork = stdout(&forked).trim().to_owned();
    run_ok(&project, &["resume", &fork, "--quiet"]);
    assert_eq!(project.read("greeting.txt"), "hello world\nfork x3\n");

    // What does not fit is refused before anything is forked.
    let runs = project.runs().len();
    for (args, said) in [
        (vec!["-i", "count=three"], "declared `integer`"),
        (vec!["-i", "nme=x"], "did you mean `name`"),
    ] {
        let mut all = vec!["fork", run.as_str(), "--at", "first"];
        all.extend(args);
        let output = project.atomic().args(&all).output().expect("atomic fork");
        assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
        assert!(stderr(&output).contains(said), "{}", stderr(&output));
    }
    project.write(
        "renamed.kdl",
        &GREET
            .replace("tool \"first\"", "tool \"start\"")
            .replace("tool \"second\"", "tool \"next\""),
    );
    let output = project
        .atomic()
        .args(["fork", &run, "--at", "first", "renamed.kdl"])
        .output()
        .expect("atomic fork");
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("nothing was forked") && stderr(&output).contains("`second`"),
        "{}",
        stderr(&output)
    );
    assert_eq!(project.runs().len(), runs, "no fork is kept");
    assert!(
        !project
            .path()
            .join(".atomic/worktrees")
            .read_dir()
            .is_ok_and(|mut dir| dir.next().is_some())
    );

    // An edited workflow that fits: the fork goes on with it, without `--force`.
    project.write(
        "edited.kdl",
        &GREET.replace("x{{ input.count }}", "times {{ input.count }}"),
    );
    let forked = run_ok(
        &project,
        &["fork", &run, "--at", "first", "--in-place", "edited.kdl"],
    );
    let fork = stdout(&forked).trim().to_owned();
    assert!(
        project.path().join("edited.kdl").exists(),
        "the fork's workflow stays"
    );
    run_ok(&project, &["resume", &fork, "--quiet"]);
    assert_eq!(project.read("greeting.txt"), "hello world\nworld times 1\n");
}

/// A `run.end` hook's command changes files after the last step: the run records what it
/// left, so resuming the stopped run does not take the hook's edit for a person's.
#[cfg(unix)]
#[test]
fn what_a_run_end_hook_changes_is_the_runs_not_a_persons() {
    use nix::sys::signal::{Signal, kill};
    use nix::unistd::Pid;

    if !git() {
        return;
    }
    let project = CliProject::new();
    // The slow step waits for a file outside the project: the test lets it go on resume.
    let outside = tempfile::tempdir().expect("a directory outside the project");
    let go = outside.path().join("go");
    project.write(
        "hooked.kdl",
        &r#"workflow "hooked" {
    on "run.end" { run "sh" "-c" "echo ended >> hook.txt"; }
    tool "first" { run "sh" "-c" "echo 1 > first.txt"; }
    tool "slow" { run "sh" "-c" "echo started > slow.txt; while ! test -e GO; do sleep 0.05; done"; }
}
"#
        .replace("GO", &go.display().to_string()),
    );
    let mut child = project
        .spawn_command()
        .args(["run", "hooked.kdl", "--quiet"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn atomic run");
    let started = Instant::now();
    while !project.path().join("slow.txt").exists() {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the slow step never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    kill(
        Pid::from_raw(i32::try_from(child.id()).expect("a pid")),
        Signal::SIGINT,
    )
    .expect("Ctrl-C");
    let _ = child.wait();
    assert_eq!(
        project.read("hook.txt"),
        "ended\n",
        "the hook ran as the run stopped"
    );
    let run = project.last_run();
    assert_eq!(project.runs()[0]["status"], "cancelled");
    // Resumed without --keep-changes: the hook's edit is not a stranger's.
    std::fs::write(&go, "").expect("let the slow step go");
    let output = project
        .atomic()
        .args(["resume", &run, "--quiet"])
        .output()
        .expect("atomic resume");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(project.read("hook.txt"), "ended\nended\n");
}

fn files_of<'a>(dir: &Path, names: &[&'a str]) -> Vec<(&'a str, String)> {
    names
        .iter()
        .filter_map(|name| Some((*name, std::fs::read_to_string(dir.join(name)).ok()?)))
        .collect()
}

/// An agent on the `command` adapter that edits files in pieces: its first two calls fail
/// after a half-made edit, the third finishes.
fn command_agent(counter: &Path) -> String {
    format!(
        r#"workflow "agent" {{
    provider "local" adapter="command" {{
        command "sh" "-c" "cat > /dev/null; echo start >> src.txt; echo x >> {counter}; test $(wc -l < {counter}) -ge 3 || exit 9; echo done >> src.txt; echo edited"
    }}
    agent "edit" provider="local" {{
        prompt "edit src.txt"
        retry "process-exit" attempts=3 backoff="10ms"
    }}
}}
"#,
        counter = counter.display()
    )
}

#[test]
fn a_command_agents_edits_are_recorded_and_its_retries_start_from_the_files_before_it() {
    if !git() {
        return;
    }
    let project = CliProject::new();
    let counter = tempfile::NamedTempFile::new().expect("a counter file");
    project.write("agent.kdl", &command_agent(counter.path()));
    project.write("src.txt", "original\n");
    run_ok(&project, &["run", "agent.kdl", "--quiet"]);
    assert_eq!(
        project.read("src.txt"),
        "original\nstart\ndone\n",
        "one attempt's edit, on the original file"
    );
    let run = project.last_run();
    let diff = stdout(&run_ok(&project, &["runs", "diff", &run, "edit"]));
    assert!(diff.contains("+start\n+done"), "{diff}");
    let stat = stdout(&run_ok(&project, &["runs", "diff", &run, "--stat"]));
    assert!(stat.contains("src.txt  modified +2 -0"), "{stat}");
}
