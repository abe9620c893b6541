//! `task-loop` through the real binary: tasks picked by dependency and priority from a
//! tasks file in either spelling (today's `id`/`depends_on`, the seed's `name`/
//! `dependencies`/`priority`), independent tasks at once, statuses written back, a task
//! left in progress picked up again, the `max-iterations` bound, a bad file reported, and
//! a run killed at many instants resuming without running a finished task again.
//!
//! Each body is tool steps appending their own line to `out.txt`, so the file is the record
//! of which steps' side effects happened, and how often.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::support::cli_project::{CliProject, stderr};

/// A project with `main.kdl` and `tasks.json`.
fn project(flow: &str, tasks: &str) -> CliProject {
    let project = CliProject::new();
    project.write("main.kdl", flow);
    project.write("tasks.json", tasks);
    project
}

fn run(project: &CliProject, args: &[&str]) -> std::process::Output {
    project
        .atomic()
        .args(["run", "main.kdl", "--quiet"])
        .args(args)
        .output()
        .expect("atomic run")
}

fn final_state(project: &CliProject) -> Value {
    project.show(&project.last_run())["state"].clone()
}

/// Each task's status in `tasks.json`, by id (or name).
fn statuses(project: &CliProject) -> BTreeMap<String, String> {
    let file: Value =
        serde_json::from_str(&project.read("tasks.json")).expect("tasks.json is JSON");
    let list = file.get("tasks").unwrap_or(&file);
    list.as_array()
        .expect("a list of tasks")
        .iter()
        .map(|task| {
            let id = task.get("id").or_else(|| task.get("name")).expect("an id");
            (
                id.as_str().map_or_else(|| id.to_string(), str::to_owned),
                task["status"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect()
}

fn lines(project: &CliProject) -> Vec<String> {
    project.read("out.txt").lines().map(str::to_owned).collect()
}

const SEED_TASKS: &str = r#"{"version": "1", "tasks": [
    {"id": "a", "title": "Alpha", "priority": 2},
    {"name": "b", "dependencies": ["a"]},
    {"id": "c", "status": "pending", "depends_on": ["x"]},
    {"id": "d", "priority": 1},
    {"id": "e", "depends_on": ["f"]},
    {"id": "f"}
]}"#;

/// The body fails for task `f` only.
const PICKING: &str = r#"workflow "pick" {
    state {
        field "seen" type="array" reduce="append" default="[]"
        field "summary"
    }
    task-loop "work" file="tasks.json" max-concurrency=1 {
        tool "do" {
            run "sh" "-c" "echo \"$1 $2\" >> out.txt; test \"$1\" != f" "x" "{{ task.id }}" "{{ task.title }}"
        }
        set "seen" expr="[task.id ~ '#' ~ index]"
    }
    set "summary" expr="outputs.work"
}
"#;

#[test]
fn ready_tasks_run_by_dependency_then_priority_and_their_status_is_written_back() {
    let project = project(PICKING, SEED_TASKS);
    let output = run(&project, &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    // `d` (priority 1) before `a` (2); then `b`, ready once `a` passed, before `f` (neither
    // has a priority: file order). `e` waits on the failing `f` and `c` on a task that does not exist.
    assert_eq!(lines(&project), ["d d", "a Alpha", "b b", "f f"]);
    assert_eq!(
        statuses(&project),
        BTreeMap::from(
            [
                ("a", "passing"),
                ("b", "passing"),
                ("c", "pending"),
                ("d", "passing"),
                ("e", ""),
                ("f", "failing"),
            ]
            .map(|(id, status)| (id.to_owned(), status.to_owned()))
        )
    );
    // A failed task's writes are dropped; the others merge in the order they ended.
    assert_eq!(final_state(&project)["seen"], json!(["d#0", "a#1", "b#2"]));
    let state = final_state(&project);
    assert_eq!(
        state["summary"],
        json!({
            "tasks": [
                {"id": "d", "status": "passing"},
                {"id": "a", "status": "passing"},
                {"id": "b", "status": "passing"},
                {"id": "f", "status": "failing"},
            ],
            "blocked": ["c", "e"],
        }),
        "{state}"
    );
    // Only the status changed: the other keys and their order are kept.
    let text = project.read("tasks.json");
    let version = text.find("\"version\"").expect("version kept");
    assert!(version < text.find("\"tasks\"").expect("tasks"), "{text}");
    assert!(
        text.contains(
            "\"title\": \"Alpha\",\n      \"priority\": 2,\n      \"status\": \"passing\""
        ),
        "{text}"
    );
}

/// Two tasks that each wait for the other to have started: they pass only when they run
/// at the same time.
#[test]
fn independent_tasks_run_at_once_up_to_max_concurrency() {
    let flow = r#"workflow "both" {
    task-loop "work" file="tasks.json" max-concurrency=2 {
        tool "meet" {
            run "sh" "-c" "touch started-$1; i=0; while [ ! -e started-$2 ]; do i=$((i+1)); [ $i -gt 100 ] && exit 1; sleep 0.05; done; echo $1 >> out.txt" "x" "{{ task.id }}" "{{ task.other }}"
        }
    }
}
"#;
    let tasks = r#"[{"id": "p", "other": "q"}, {"id": "q", "other": "p"}]"#;
    let project = project(flow, tasks);
    let output = run(&project, &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(
        statuses(&project).into_values().collect::<Vec<_>>(),
        ["passing", "passing"]
    );
    // One at a time, the first waits for a task that cannot start, and fails.
    let project = self::project(
        &flow.replace("max-concurrency=2", "max-concurrency=1"),
        tasks,
    );
    let output = run(&project, &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(statuses(&project)["p"], "failing");
}

/// A task a dead run left `in_progress` is ready again (first, by file order); the loop
/// stops after `max-iterations` tasks, here an expression over an input.
#[test]
fn a_task_left_in_progress_is_picked_up_and_max_iterations_bounds_the_loop() {
    let flow = r#"workflow "bounded" {
    input "max" type="integer" default=2
    task-loop "work" file="{{ 'tasks' ~ '.json' }}" max-iterations="input.max" {
        tool "do" {
            run "sh" "-c" "echo $1 >> out.txt" "x" "{{ task.id }}"
        }
    }
}
"#;
    let tasks = r#"{"tasks": [
        {"id": "t1", "status": "passing"},
        {"id": "t2", "status": "pending"},
        {"id": "t3", "status": "in_progress"},
        {"id": "t4", "status": "pending"}
    ]}"#;
    let project = project(flow, tasks);
    let output = run(&project, &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(lines(&project), ["t2", "t3"]);
    assert_eq!(statuses(&project)["t4"], "pending");
    let output = run(&project, &["--input", "max=5"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(lines(&project), ["t2", "t3", "t4"]);
}

/// A body that sets its task's status keeps it; one that leaves it in progress gets
/// `left-in-progress`.
#[test]
fn the_status_a_body_writes_is_kept() {
    let flow = r#"workflow "own" {
    task-loop "work" file="tasks.json" left-in-progress="failing" {
        tool "do" {
            run "sh" "-c" "if [ $1 = own ]; then sed -i.bak 's/in_progress/skipped/' tasks.json; fi" "x" "{{ task.id }}"
        }
    }
}
"#;
    let project = project(flow, r#"[{"id": "own"}, {"id": "left"}]"#);
    let output = run(&project, &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(statuses(&project)["own"], "skipped");
    assert_eq!(statuses(&project)["left"], "failing");
}

#[test]
fn a_bad_tasks_file_fails_the_step_naming_the_file_the_task_and_the_fix() {
    let project = project(PICKING, r#"{"tasks": [{"id": "a"}, {"title": "no id"}]}"#);
    let output = run(&project, &[]);
    assert_ne!(output.status.code(), Some(0));
    let err = stderr(&output);
    assert!(err.contains("tasks.json"), "{err}");
    assert!(
        err.contains("task 2 has no `id` or `name`: give it one, like `\"id\": \"t2\"`"),
        "{err}"
    );
    let project = self::project(PICKING, "");
    std::fs::remove_file(project.path().join("tasks.json")).expect("remove");
    let output = run(&project, &[]);
    let err = stderr(&output);
    assert!(err.contains("cannot read the tasks file"), "{err}");
}

/// A dry run walks the tasks in memory and leaves the file alone.
#[test]
fn a_dry_run_never_writes_the_tasks_file() {
    let project = project(PICKING, SEED_TASKS);
    let output = project
        .atomic()
        .args(["run", "main.kdl", "--dry-run"])
        .output()
        .expect("atomic run --dry-run");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(project.read("tasks.json"), SEED_TASKS);
}

/// Six tasks, two at a time, each body two steps: killed at every line count and resumed,
/// the run ends with the statuses and state of an uninterrupted one, every step's line is
/// there, and only steps in flight at the kill (at most two) wrote theirs twice.
#[test]
fn a_killed_task_loop_resumes_without_running_a_finished_task_again() {
    let flow = r#"workflow "durable" {
    state {
        field "seen" type="array" reduce="append" default="[]"
    }
    task-loop "work" file="tasks.json" max-concurrency=2 {
        tool "first" idempotent=#true {
            run "sh" "-c" "echo $1-1 >> out.txt; sleep 0.02" "x" "{{ task.id }}"
        }
        tool "second" idempotent=#true {
            run "sh" "-c" "echo $1-2 >> out.txt; test $1 != t5" "x" "{{ task.id }}"
        }
        set "seen" expr="[task.id]"
    }
    tool "after" {
        run "sh" "-c" "echo after >> out.txt"
    }
}
"#;
    let tasks = r#"{"tasks": [
        {"id": "t1"}, {"id": "t2", "depends_on": ["t1"]}, {"id": "t3"},
        {"id": "t4", "depends_on": ["t2", "t3"]}, {"id": "t5"}, {"id": "t6", "depends_on": ["t5"]}
    ]}"#;
    let reference = project(flow, tasks);
    let output = run(&reference, &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let expected_statuses = statuses(&reference);
    let expected_lines = tally(&lines(&reference));
    let seen = |project: &CliProject| {
        let mut seen: Vec<String> = final_state(project)["seen"]
            .as_array()
            .expect("seen")
            .iter()
            .map(|id| id.as_str().expect("an id").to_owned())
            .collect();
        seen.sort();
        seen
    };
    assert_eq!(seen(&reference), ["t1", "t2", "t3", "t4"]);
    let total = lines(&reference).len();
    let mut interrupted = 0;
    for at in 1..total {
        let project = project(flow, tasks);
        if project.kill_at_lines_and_resume("main.kdl", "out.txt", at) {
            interrupted += 1;
        }
        assert_eq!(statuses(&project), expected_statuses, "kill at {at}");
        assert_eq!(seen(&project), seen(&reference), "kill at {at}");
        let written = lines(&project);
        let counts = tally(&written);
        assert_eq!(
            counts.keys().collect::<Vec<_>>(),
            expected_lines.keys().collect::<Vec<_>>(),
            "kill at {at}: {written:?}"
        );
        let repeats: usize = counts.values().map(|n| n - 1).sum();
        assert!(
            counts.values().all(|&n| n <= 2) && repeats <= 2,
            "a kill at {at} lines re-ran {repeats} steps: {written:?}"
        );
    }
    assert!(
        interrupted + 2 >= total - 1,
        "only {interrupted} of {} kills interrupted the run",
        total - 1
    );
}

fn tally(lines: &[String]) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for line in lines {
        *counts.entry(line.clone()).or_insert(0) += 1;
    }
    counts
}
