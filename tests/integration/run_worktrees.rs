//! `parallel … isolation="worktree"` through the binary with real git: each branch works in
//! a git worktree of its own and never sees its siblings' edits, the branches' changes are
//! merged back in branch order, a conflict fails the parallel with class `conflict` and the
//! paths (for an `on-error` route) while keeping every branch's files, and a run killed
//! inside a branch resumes to the files of an uninterrupted run with no worktree left.

use std::process::Stdio;
use std::time::Duration;

use crate::support::cli_project::{CliProject, stderr, stdout};

/// Whether git is here; the tests that need it skip loudly without.
fn git() -> bool {
    crate::support::tools::required_tool("git", "install git to test worktree isolation").is_some()
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

const NOTES: &str = "one\ntwo\nthree\nfour\nfive\nsix\n";

/// The worktrees left under `.atomic/worktrees/` (none once every parallel ended).
fn worktrees_left(project: &CliProject) -> Vec<std::path::PathBuf> {
    let dir = project.path().join(".atomic/worktrees");
    let Ok(runs) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    runs.flatten()
        .flat_map(|run| {
            std::fs::read_dir(run.path())
                .into_iter()
                .flatten()
                .flatten()
        })
        .map(|entry| entry.path())
        .collect()
}

/// The paths a step of `node` changed, as `runs show --json` lists them.
fn changed(shown: &serde_json::Value, node: &str) -> Vec<String> {
    shown["files"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|step| step["node"] == node)
        .flat_map(|step| {
            step["files"]["changed"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .filter_map(|change| Some(change["path"].as_str()?.to_owned()))
        .collect()
}

#[test]
fn each_branch_works_apart_and_their_changes_are_merged_in_branch_order() {
    if !git() {
        return;
    }
    let project = CliProject::new();
    project.write("notes.txt", NOTES);
    // Each branch edits its own line of one file and adds a file; each checks, after the
    // other has surely written, that it cannot see the other's file, and says where it is.
    project.write(
        "apart.kdl",
        r#"workflow "apart" {
    state { field "places" type="array" reduce="append" default="[]"; }
    parallel "fan" isolation="worktree" {
        tool "first" {
            run "sh" "-c" "sed -i 's/^one$/ONE/' notes.txt; echo a > a.txt; sleep 0.4; test ! -e b.txt && pwd"
            output "places" parse="lines"
        }
        tool "second" {
            run "sh" "-c" "sed -i 's/^six$/SIX/' notes.txt; echo b > b.txt; sleep 0.4; test ! -e a.txt && pwd"
            output "places" parse="lines"
        }
    }
    tool "after" { run "sh" "-c" "cat a.txt b.txt"; }
}
"#,
    );
    run_ok(&project, &["run", "apart.kdl", "--quiet"]);
    assert_eq!(
        project.read("notes.txt"),
        "ONE\ntwo\nthree\nfour\nfive\nSIX\n"
    );
    assert_eq!(project.read("a.txt"), "a\n");
    assert_eq!(project.read("b.txt"), "b\n");
    let run = project.last_run();
    let shown = project.show(&run);
    let places = shown["state"]["places"].as_array().expect("places").clone();
    assert_eq!(places.len(), 2, "{places:?}");
    let root = std::fs::canonicalize(project.path()).expect("the project");
    for place in &places {
        let place = std::path::Path::new(place.as_str().expect("a path"));
        assert!(
            place.starts_with(root.join(".atomic/worktrees").join(&run)),
            "a branch ran in {}",
            place.display()
        );
    }
    assert_ne!(places[0], places[1]);
    assert!(
        worktrees_left(&project).is_empty(),
        "{:?}",
        worktrees_left(&project)
    );
    // Each branch's step recorded its own files; the parallel, what they did together.
    assert_eq!(changed(&shown, "first"), ["a.txt", "notes.txt"]);
    assert_eq!(changed(&shown, "second"), ["b.txt", "notes.txt"]);
    assert_eq!(changed(&shown, "fan"), ["a.txt", "b.txt", "notes.txt"]);
    let diff = run_ok(&project, &["runs", "diff", &run, "fan"]);
    let diff = stdout(&diff);
    assert!(
        diff.contains("-one\n+ONE") && diff.contains("-six\n+SIX"),
        "{diff}"
    );
    // The branches' files stay in the store with the run, and go with it.
    let refs = std::process::Command::new("git")
        .args([
            "for-each-ref",
            "--format=%(refname)",
            "refs/atomic/branches/",
        ])
        .current_dir(project.path().join(".atomic/snapshots.git"))
        .output()
        .expect("git");
    let refs = String::from_utf8_lossy(&refs.stdout).into_owned();
    assert_eq!(refs.lines().count(), 3, "base and two branches: {refs}");
    run_ok(&project, &["runs", "delete", &run]);
    let refs = std::process::Command::new("git")
        .args(["for-each-ref", "refs/atomic/"])
        .current_dir(project.path().join(".atomic/snapshots.git"))
        .output()
        .expect("git");
    assert!(
        refs.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&refs.stdout)
    );
}

#[test]
fn a_for_each_of_command_agents_edits_in_worktrees() {
    if !git() {
        return;
    }
    let project = CliProject::new();
    project.write("notes.txt", NOTES);
    // Each agent is told a line number and marks that line; all run at once.
    project.write(
        "each.kdl",
        r#"workflow "each" {
    provider "local" adapter="command" {
        command "sh" "-c" "n=$(cat | tr -dc 0-9); sed -i \"${n}s/$/ edited/\" notes.txt; echo $n > item-$n.txt; echo marked $n"
    }
    input "lines" type="array" default="[1, 3, 5]"
    parallel "mark" for-each="input.lines" as="line" max-concurrency=3 isolation="worktree" {
        agent "marker" provider="local" { prompt "{{ line }}"; }
    }
}
"#,
    );
    run_ok(&project, &["run", "each.kdl", "--quiet"]);
    assert_eq!(
        project.read("notes.txt"),
        "one edited\ntwo\nthree edited\nfour\nfive edited\nsix\n"
    );
    for n in [1, 3, 5] {
        assert_eq!(project.read(&format!("item-{n}.txt")), format!("{n}\n"));
    }
    assert!(worktrees_left(&project).is_empty());
}

#[test]
fn a_conflict_fails_the_parallel_with_its_paths_and_keeps_every_change() {
    if !git() {
        return;
    }
    let project = CliProject::new();
    project.write("notes.txt", NOTES);
    project.write(
        "clash.kdl",
        r#"workflow "clash" {
    parallel "fan" isolation="worktree" {
        tool "first" { run "sh" "-c" "sed -i 's/^one$/FIRST/' notes.txt; echo a > a.txt"; }
        tool "second" { run "sh" "-c" "sed -i 's/^one$/SECOND/' notes.txt; echo b > b.txt"; }
        on-error "goto" "resolve"
    }
    tool "never" { run "true"; }
    tool "resolve" recovery=#true {
        run "sh" "-c" "printf '%s\n' '{{ error.class }}' '{{ error.paths | join(\",\") }}' > seen.txt"
    }
}
"#,
    );
    run_ok(&project, &["run", "clash.kdl", "--quiet"]);
    assert_eq!(project.read("seen.txt"), "conflict\nnotes.txt\n");
    // What merged is there, and the conflict with git's markers, for the resolver.
    assert_eq!(project.read("a.txt"), "a\n");
    assert_eq!(project.read("b.txt"), "b\n");
    let notes = project.read("notes.txt");
    assert!(
        notes.contains("<<<<<<<") && notes.contains("FIRST") && notes.contains("SECOND"),
        "{notes}"
    );
    assert!(worktrees_left(&project).is_empty());

    // Without a route, the run fails naming the class and the file.
    project.write(
        "clash.kdl",
        r#"workflow "clash" {
    parallel "fan" isolation="worktree" {
        tool "first" { run "sh" "-c" "echo FIRST > notes.txt"; }
        tool "second" { run "sh" "-c" "echo SECOND > notes.txt"; }
    }
}
"#,
    );
    let output = project
        .atomic()
        .args(["run", "clash.kdl"])
        .output()
        .expect("atomic");
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let said = format!("{}{}", stdout(&output), stderr(&output));
    assert!(
        said.contains("conflict") && said.contains("notes.txt"),
        "{said}"
    );
}

/// Branch `slow` writes three files in pieces in its worktree while `quick` writes one.
const PIECES: &str = r#"workflow "pieces" {
    parallel "fan" isolation="worktree" {
        tool "slow" {
            run "sh" "-c" "mkdir -p a; for i in 1 2 3 4 5; do echo line-$i >> log.txt; echo part-$i >> a/b.txt; sleep 0.15; done"
        }
        tool "quick" { run "sh" "-c" "echo quick > quick.txt"; }
    }
    tool "after" { run "sh" "-c" "echo done >> log.txt"; }
}
"#;

fn files(project: &CliProject) -> Vec<(String, String)> {
    ["log.txt", "a/b.txt", "quick.txt"]
        .iter()
        .filter(|name| project.path().join(name).exists())
        .map(|name| ((*name).to_owned(), project.read(name)))
        .collect()
}

#[test]
fn a_run_killed_inside_a_branch_resumes_to_the_uninterrupted_files() {
    if !git() {
        return;
    }
    let reference = {
        let project = CliProject::new();
        project.write("pieces.kdl", PIECES);
        run_ok(&project, &["run", "pieces.kdl", "--quiet"]);
        files(&project)
    };
    assert_eq!(reference.len(), 3, "{reference:?}");
    for after in [250, 500] {
        let project = CliProject::new();
        project.write("pieces.kdl", PIECES);
        let mut child = project
            .spawn_command()
            .args(["run", "pieces.kdl", "--quiet"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn atomic run");
        std::thread::sleep(Duration::from_millis(after));
        let _ = child.kill();
        let _ = child.wait();
        let run = project.last_run();
        let stopped = project.runs()[0]["status"] != "completed";
        // The slow branch takes 750 ms: a kill at 250 ms finds it half done.
        assert!(
            stopped || after > 250,
            "the run ended before the kill at {after} ms"
        );
        if stopped {
            run_ok(&project, &["resume", &run, "--quiet"]);
        }
        std::thread::sleep(Duration::from_millis(300));
        assert_eq!(
            files(&project),
            reference,
            "files after a kill at {after} ms"
        );
        assert!(
            worktrees_left(&project).is_empty(),
            "after a kill at {after} ms"
        );
    }
}
