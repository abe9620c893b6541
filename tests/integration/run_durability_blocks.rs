//! Durability inside blocks, through the real binary: a run SIGKILLed at many instants
//! inside a subgraph, nested subgraphs, a 100-item for-each, a race and loops inside
//! parallel branches resumes to exactly the state of an uninterrupted run, and no step that
//! had completed runs again — only the steps in flight at the kill may (one in a sequence,
//! at most `max-concurrency` in a parallel).
//!
//! Each step is a tool that appends its own line to `out.txt`, so the file is the record
//! of which steps' side effects happened, and how often.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::support::cli_project::{CliProject, stderr};

/// A workflow and the files it calls, with the lines an uninterrupted run writes.
struct Case {
    files: Vec<(&'static str, String)>,
    /// The most steps that can be in flight at once.
    in_flight: usize,
}

impl Case {
    fn project(&self) -> CliProject {
        let project = CliProject::new();
        for (name, text) in &self.files {
            project.write(name, text);
        }
        project
    }

    /// Runs to the end undisturbed: the reference state and lines.
    fn reference(&self) -> (Value, Vec<String>) {
        let project = self.project();
        let output = project
            .atomic()
            .args(["run", "main.kdl", "--quiet"])
            .output()
            .expect("atomic run");
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        (final_state(&project), lines(&project))
    }

    /// Kills the run once `out.txt` has `at` lines, resumes it, and checks the result
    /// against the reference. Returns whether the kill interrupted the run.
    fn kill_at(&self, at: usize, reference: &(Value, Vec<String>)) -> bool {
        let project = self.project();
        let interrupted = project.kill_at_lines_and_resume("main.kdl", "out.txt", at);
        assert_eq!(
            final_state(&project),
            reference.0,
            "state after a kill at {at} lines"
        );
        // Every step's line is there, and only steps in flight at the kill wrote twice.
        let written = lines(&project);
        let counts = tally(&written);
        assert_eq!(
            counts.keys().collect::<Vec<_>>(),
            tally(&reference.1).keys().collect::<Vec<_>>(),
            "kill at {at}: {written:?}"
        );
        let repeats: usize = counts.values().map(|n| n - 1).sum();
        assert!(
            counts.values().all(|&n| n <= 2) && repeats <= self.in_flight,
            "a kill at {at} lines re-ran {repeats} steps (at most {} were in flight): {written:?}",
            self.in_flight
        );
        interrupted
    }

    /// Kills at each of `points` in turn; most kills must land mid-run.
    fn kill_at_each(&self, points: &[usize]) {
        let reference = self.reference();
        let interrupted = points
            .iter()
            .filter(|&&at| self.kill_at(at, &reference))
            .count();
        assert!(
            interrupted + 1 >= points.len(),
            "only {interrupted} of {} kills interrupted the run",
            points.len()
        );
    }
}

fn lines(project: &CliProject) -> Vec<String> {
    project.read("out.txt").lines().map(str::to_owned).collect()
}

fn tally(lines: &[String]) -> BTreeMap<&str, usize> {
    let mut counts = BTreeMap::new();
    for line in lines {
        *counts.entry(line.as_str()).or_insert(0) += 1;
    }
    counts
}

fn final_state(project: &CliProject) -> Value {
    project.show(&project.last_run())["state"].clone()
}

/// A tool step that appends `line` to `out.txt` and prints `value` (its output).
fn step(id: &str, line: &str, value: &str, output: &str) -> String {
    format!(
        r#"tool "{id}" idempotent=#true {{
            run "sh" "-c" "echo {line} >> out.txt; echo {value}"
            output "{output}" parse="json"
        }}"#
    )
}

/// A workflow counting `field` to `n` in a loop of tool steps writing `<tag>-<i>`.
fn counter(name: &str, tag: &str, field: &str, n: u32) -> String {
    format!(
        r#"workflow "{name}" {{
    state {{
        field "{field}" type="integer" default=0
        field "seen" type="array" reduce="append" default="[]"
    }}
    loop "count" max={max} until="state.{field} >= {n}" {{
        {step}
        set "seen" expr="state.{field}"
    }}
}}
"#,
        max = n + 2,
        step = step(
            "tick",
            &format!("{tag}-{{{{ state.{field} }}}}"),
            &format!("{{{{ state.{field} + 1 }}}}"),
            field
        ),
    )
}

#[test]
fn killed_inside_a_ten_step_subgraph_and_resumed() {
    let main = format!(
        r#"workflow "main" {{
    state {{
        field "total" type="integer" default=0
        field "seen" type="array" default="[]"
        field "done" type="integer" default=0
    }}
    {before}
    subgraph "inner" workflow="sub.kdl" {{
        output "total" from="n"
        output "seen" from="seen"
    }}
    {after}
}}
"#,
        before = step("before", "before", "1", "done"),
        after = step("after", "after", "2", "done"),
    );
    let case = Case {
        files: vec![
            ("main.kdl", main),
            ("sub.kdl", counter("sub", "s", "n", 10)),
        ],
        in_flight: 1,
    };
    let (state, written) = case.reference();
    assert_eq!(state["total"], 10);
    assert_eq!(state["seen"].as_array().map(Vec::len), Some(10));
    assert_eq!(written.len(), 12);
    case.kill_at_each(&(1..=12).collect::<Vec<_>>());
}

#[test]
fn killed_inside_nested_subgraphs_and_resumed() {
    let main = format!(
        r#"workflow "main" {{
    state {{
        field "mid" type="array" default="[]"
        field "done" type="integer" default=0
    }}
    subgraph "outer" workflow="mid.kdl" {{
        output "mid" from="leaf"
    }}
    {after}
}}
"#,
        after = step("after", "after", "1", "done"),
    );
    let mid = format!(
        r#"workflow "mid" {{
    state {{
        field "leaf" type="array" default="[]"
        field "m" type="integer" default=0
    }}
    {first}
    subgraph "deep" workflow="leaf.kdl" {{
        output "leaf" from="seen"
    }}
    {last}
}}
"#,
        first = step("m0", "m-0", "1", "m"),
        last = step("m1", "m-1", "2", "m"),
    );
    let case = Case {
        files: vec![
            ("main.kdl", main),
            ("mid.kdl", mid),
            ("leaf.kdl", counter("leaf", "l", "k", 5)),
        ],
        in_flight: 1,
    };
    let (state, written) = case.reference();
    assert_eq!(state["mid"].as_array().map(Vec::len), Some(5), "{state}");
    assert_eq!(
        written,
        ["m-0", "l-0", "l-1", "l-2", "l-3", "l-4", "m-1", "after"]
    );
    case.kill_at_each(&(1..=8).collect::<Vec<_>>());
}

#[test]
fn killed_inside_a_for_each_of_100_items_and_resumed() {
    let items: Vec<String> = (0..100).map(|i| i.to_string()).collect();
    let main = format!(
        r#"workflow "main" {{
    state {{
        field "items" type="array" default="[{items}]"
        field "out" type="array" reduce="append" default="[]"
        field "done" type="integer" default=0
    }}
    parallel "fan" for-each="state.items" as="it" max-concurrency=8 {{
        {work}
    }}
    {after}
}}
"#,
        items = items.join(", "),
        work = step("work", "item-{{ it }}", "{{ it * 2 }}", "out"),
        after = step("after", "after", "1", "done"),
    );
    let case = Case {
        files: vec![("main.kdl", main)],
        in_flight: 8,
    };
    let (state, written) = case.reference();
    let doubled: Vec<Value> = (0..100).map(|i| Value::from(i * 2)).collect();
    assert_eq!(state["out"], Value::Array(doubled), "merged in item order");
    assert_eq!(written.len(), 101);
    case.kill_at_each(&[3, 15, 30, 50, 70, 90, 99]);
}

#[test]
fn killed_inside_a_race_and_resumed() {
    let main = format!(
        r#"workflow "main" {{
    state {{
        field "q" type="integer" default=0
        field "done" type="integer" default=0
    }}
    parallel "first" strategy="race" {{
        branch "quick" {{
            {q0}
            {q1}
            {q2}
            {q3}
        }}
        branch "slow" {{
            tool "dawdle" idempotent=#true {{
                run "sleep" "5"
            }}
        }}
    }}
    {after}
}}
"#,
        q0 = step("q0", "q-0", "1", "q"),
        q1 = step("q1", "q-1", "2", "q"),
        q2 = step("q2", "q-2", "3", "q"),
        q3 = step("q3", "q-3", "4", "q"),
        after = step("after", "after", "1", "done"),
    );
    let case = Case {
        files: vec![("main.kdl", main)],
        in_flight: 1,
    };
    let (state, written) = case.reference();
    assert_eq!(state["q"], 4);
    assert_eq!(written, ["q-0", "q-1", "q-2", "q-3", "after"]);
    case.kill_at_each(&[1, 2, 3, 4, 5]);
}

#[test]
fn killed_inside_loops_in_parallel_branches_and_resumed() {
    let branch = |tag: &str, field: &str| {
        format!(
            r#"branch "{tag}" {{
            loop "{tag}-loop" max=8 until="state.{field} >= 5" {{
                {step}
            }}
        }}"#,
            step = step(
                &format!("{tag}-tick"),
                &format!("{tag}-{{{{ state.{field} }}}}"),
                &format!("{{{{ state.{field} + 1 }}}}"),
                field
            ),
        )
    };
    let main = format!(
        r#"workflow "main" {{
    state {{
        field "li" type="integer" default=0
        field "ri" type="integer" default=0
    }}
    parallel "both" {{
        {left}
        {right}
    }}
}}
"#,
        left = branch("left", "li"),
        right = branch("right", "ri"),
    );
    let case = Case {
        files: vec![("main.kdl", main)],
        in_flight: 2,
    };
    let (state, written) = case.reference();
    assert_eq!(
        (state["li"].clone(), state["ri"].clone()),
        (5.into(), 5.into())
    );
    assert_eq!(written.len(), 10);
    case.kill_at_each(&(1..=10).collect::<Vec<_>>());
}
