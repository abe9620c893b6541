//! The same workflow, the same result: the example that needs no live model and no person
//! (`hello`, played from its cassette; `approval-gate` waits a day for its auto-approval),
//! a workflow using every kind of block and a wait, and a `task-loop` over a tasks file,
//! run on the local engine and on Temporal, ending in the same state after the same steps,
//! with the same files written.

use serde_json::Value;

use super::Cluster;
use crate::support::cli_project::{CliProject, stderr};

/// A workflow to run on both engines: its files, the file to run, its inputs and the
/// answer to give its waits.
struct Case {
    name: &'static str,
    files: Vec<(String, String)>,
    run: &'static str,
    inputs: Vec<&'static str>,
    answer: Option<&'static str>,
    /// Files the run writes, compared after it.
    written: Vec<&'static str>,
}

impl Case {
    fn project(&self) -> CliProject {
        let project = CliProject::new();
        for (name, text) in &self.files {
            project.write(name, text);
        }
        project
    }

    fn run_args(&self) -> Vec<&str> {
        let mut args = vec!["run", self.run, "--quiet"];
        for input in &self.inputs {
            args.extend(["--input", input]);
        }
        args
    }
}

/// An example's file (and what it reads), as it is in the repository.
fn example(name: &str) -> (String, String) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples")
        .join(name);
    (
        name.to_owned(),
        std::fs::read_to_string(&path).expect("an example"),
    )
}

/// What a finished run ends with: its state, and its steps' nodes in order — the run's own
/// in commit order, each block's (`scope/node`) in its own order after them (concurrent
/// blocks finish in whatever order their work takes, on either engine).
fn ending(shown: &Value) -> (Value, Vec<String>) {
    let mut order: Vec<String> = shown["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .map(|step| {
            format!(
                "{}{}",
                step["scope"]
                    .as_str()
                    .map(|scope| format!("{scope}/"))
                    .unwrap_or_default(),
                step["node_id"].as_str().unwrap_or_default()
            )
        })
        .collect();
    order.sort_by_key(|step| step.rsplit_once('/').map(|(scope, _)| scope.to_owned()));
    (shown["state"].clone(), order)
}

/// A run's ending with the files it wrote.
type Ending = (Value, Vec<String>, Vec<String>);

fn files(project: &CliProject, case: &Case) -> Vec<String> {
    case.written.iter().map(|name| project.read(name)).collect()
}

/// Runs `case` with `atomic` (a command line, run in the case's project): started, then
/// answered when it waits; the ending read with `show`.
fn run_case(
    case: &Case,
    project: &CliProject,
    atomic: impl Fn(&[&str]) -> std::process::Output,
    show: impl Fn(&str) -> Value,
) -> Ending {
    let output = atomic(&case.run_args());
    let id = super::run_id(&output);
    let expected = if case.answer.is_some() { 4 } else { 0 };
    assert_eq!(
        output.status.code(),
        Some(expected),
        "{}: {}",
        case.name,
        stderr(&output)
    );
    if let Some(answer) = case.answer {
        let resumed = atomic(&["resume", &id, "--answer", answer, "--quiet"]);
        assert_eq!(
            resumed.status.code(),
            Some(0),
            "{}: {}",
            case.name,
            stderr(&resumed)
        );
    }
    let (state, order) = ending(&show(&id));
    (state, order, files(project, case))
}

fn run_locally(case: &Case) -> Ending {
    let project = case.project();
    run_case(
        case,
        &project,
        |args| project.atomic().args(args).output().expect("atomic"),
        |id| project.show(id),
    )
}

fn run_on_temporal(cluster: &mut Cluster, case: &Case, queue: &str) -> Ending {
    let project = case.project();
    cluster.worker(&project, queue, queue);
    let cluster = &*cluster;
    run_case(
        case,
        &project,
        |args| cluster.atomic(&project, queue, args),
        |id| cluster.show(&project, queue, id),
    )
}

/// A workflow with a loop, a decision, a parallel of branches, a for-each, a subgraph,
/// tools, `set`s and a retried failure taking its `on-error` path.
fn every_block() -> Vec<(String, String)> {
    let main = r#"workflow "blocks" {
    input "rounds" type="integer" default=3
    state {
        field "n" type="integer" default=0
        field "log" type="array" reduce="append" default="[]"
        field "items" type="array" default="[1, 2, 3, 4]"
        field "squares" type="array" reduce="append" default="[]"
        field "sub" type="integer" default=0
        field "note" type="string" default=""
        field "fine" type="boolean" default=#false
    }
    loop "count" max=10 until="state.n >= input.rounds" {
        tool "tick" idempotent=#true {
            run "echo" "{{ state.n + 1 }}"
            output "n" parse="json"
        }
        set "log" expr="['tick ' ~ state.n]"
    }
    decision "which" {
        when "state.n > 2" goto="fan"
        otherwise goto="end"
    }
    parallel "fan" {
        branch "a" {
            set "log" expr="['branch a']"
        }
        branch "b" {
            tool "b-tool" {
                run "sh" "-c" "echo '\"branch b\"'"
                output "log" parse="json"
            }
        }
    }
    parallel "each" for-each="state.items" as="it" max-concurrency=2 {
        tool "square" {
            run "echo" "{{ it * it }}"
            output "squares" parse="json"
        }
    }
    subgraph "inner" workflow="inner.kdl" {
        input "base" "{{ state.n }}"
        output "sub" from="total"
    }
    tool "flaky" {
        run "sh" "-c" "exit 2"
        retry "tool-exit" attempts=2 backoff="50ms" jitter=#false
        on-error "skip" {
            set "note" "skipped"
        }
    }
    wait "ok" prompt="Fine after {{ state.n }} rounds?" answer="yes-no" {
        output "fine"
    }
}
"#;
    let inner = r#"workflow "inner" {
    input "base" type="integer"
    state {
        field "total" type="integer" default=0
    }
    tool "add" {
        run "echo" "{{ input.base + 10 }}"
        output "total" parse="json"
    }
}
"#;
    vec![
        ("blocks.kdl".to_owned(), main.to_owned()),
        ("inner.kdl".to_owned(), inner.to_owned()),
    ]
}

/// A `task-loop` over a tasks file with a dependency and priorities (its file is read and
/// written through the executor: on Temporal, by the `file` activity).
fn task_loop() -> Vec<(String, String)> {
    let flow = r#"workflow "tasks" {
    state {
        field "log" type="array" reduce="append" default="[]"
    }
    task-loop "work" file="tasks.json" as="task" {
        tool "do" {
            run "echo" "\"{{ task.id }}\""
            output "log" parse="json"
        }
    }
}
"#;
    let tasks = r#"{"tasks": [
    {"id": "a", "priority": 2},
    {"id": "b", "dependencies": ["a"]},
    {"id": "c", "priority": 1}
]}
"#;
    vec![
        ("tasks.kdl".to_owned(), flow.to_owned()),
        ("tasks.json".to_owned(), tasks.to_owned()),
    ]
}

#[test]
fn examples_and_every_block_end_alike_on_both_engines() {
    let cases = [
        Case {
            name: "hello",
            files: vec![example("hello.kdl"), example("hello.cassette.json")],
            run: "hello.kdl",
            inputs: Vec::new(),
            answer: None,
            written: Vec::new(),
        },
        Case {
            name: "blocks",
            files: every_block(),
            run: "blocks.kdl",
            inputs: vec!["rounds=4"],
            answer: Some("yes"),
            written: Vec::new(),
        },
        Case {
            name: "tasks",
            files: task_loop(),
            run: "tasks.kdl",
            inputs: Vec::new(),
            answer: None,
            written: vec!["tasks.json"],
        },
    ];
    let Some(mut cluster) = Cluster::start() else {
        return;
    };
    for case in &cases {
        let local = run_locally(case);
        let remote = run_on_temporal(&mut cluster, case, case.name);
        assert_eq!(remote.0, local.0, "{}: the same final state", case.name);
        assert_eq!(
            remote.1, local.1,
            "{}: the same steps in the same order",
            case.name
        );
    }
}
