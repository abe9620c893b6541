//! Workflow discovery through the binary: `atomic list`, and `atomic run NAME` finding a
//! workflow by file name, declared name or alias — the project's over the user's over the
//! built-ins.

use serde_json::Value;

use crate::support::cli_project::{CliProject, stderr, stdout};
use crate::support::tools::agent_cli;

/// A small workflow called `name`, with `alias` and a description saying where it is.
fn workflow(name: &str, alias: &str, place: &str) -> String {
    format!(
        r#"workflow "{name}" {{
    description "the {place} one"
    alias "{alias}"
    state {{ field "where" type="string" default=""; }}
    set "where" "{place}"
}}
"#
    )
}

/// A project whose user home (`HOME`) is inside it, so the real one never leaks in.
fn project() -> CliProject {
    let project = CliProject::new();
    project.write("home/.keep", "");
    project
}

fn atomic(project: &CliProject) -> assert_cmd::Command {
    let mut command = project.atomic();
    command.env("HOME", project.path().join("home"));
    command
}

#[test]
fn list_shows_project_over_user_over_built_in() {
    let project = project();
    project.write(
        ".atomic/workflows/ralph.kdl",
        &workflow("ralph", "mine", "project"),
    );
    project.write(
        "home/.atomic/workflows/helper.kdl",
        &workflow("helper", "h", "user"),
    );
    let output = atomic(&project)
        .args(["list", "--json"])
        .output()
        .expect("atomic list");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let list: Vec<Value> = serde_json::from_slice(&output.stdout).expect("JSON");
    let entry = |name: &str| {
        list.iter()
            .find(|entry| entry["name"] == name)
            .unwrap_or_else(|| panic!("`{name}` listed in {list:#?}"))
            .clone()
    };
    // The project's `ralph` hides the built-in one; each name is listed once.
    assert_eq!(entry("ralph")["origin"], "project");
    assert_eq!(entry("ralph")["description"], "the project one");
    assert_eq!(list.iter().filter(|e| e["name"] == "ralph").count(), 1);
    assert_eq!(entry("helper")["origin"], "user");
    assert_eq!(entry("helper")["aliases"], serde_json::json!(["h"]));
    for built_in in ["map-reduce", "review-cycle", "sequential", "task-loop"] {
        assert_eq!(entry(built_in)["origin"], "built-in", "{built_in}");
    }
    let names: Vec<&str> = list.iter().filter_map(|e| e["name"].as_str()).collect();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    assert_eq!(names, sorted, "sorted by name");

    let table = atomic(&project).arg("list").output().expect("atomic list");
    let table = stdout(&table);
    assert!(
        table
            .lines()
            .any(|line| line.starts_with("sequential") && line.contains("built-in")),
        "{table}"
    );
    assert!(table.contains("inputs: goal: string"), "{table}");
}

#[test]
fn run_finds_a_workflow_by_file_name_declared_name_or_alias() {
    let project = project();
    project.write(
        "home/.atomic/workflows/helper-file.kdl",
        &workflow("helper", "h", "user"),
    );
    project.write(
        ".atomic/workflows/review-cycle.kdl",
        &workflow("review-cycle", "rc", "project"),
    );
    for name in ["helper-file", "helper", "h"] {
        let output = atomic(&project)
            .args(["run", name, "--store", "memory"])
            .output()
            .expect("atomic run");
        assert_eq!(output.status.code(), Some(0), "{name}: {}", stderr(&output));
        assert!(
            stderr(&output).contains("\"user\""),
            "{name}: {}",
            stderr(&output)
        );
    }
    // The project's file wins over the built-in of the same name.
    let output = atomic(&project)
        .args(["run", "review-cycle", "--store", "memory"])
        .output()
        .expect("atomic run");
    assert!(
        stderr(&output).contains("\"project\""),
        "{}",
        stderr(&output)
    );

    // A built-in by its alias.
    let output = atomic(&project)
        .args(["run", "tasks", "--dry-run"])
        .output()
        .expect("atomic run");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        stdout(&output).contains("dry run of `ralph`"),
        "{}",
        stdout(&output)
    );

    let output = atomic(&project)
        .args(["run", "ralp"])
        .output()
        .expect("atomic run");
    assert_eq!(output.status.code(), Some(3));
    let message = stderr(&output);
    assert!(message.contains("no workflow named `ralp`"), "{message}");
    assert!(message.contains("did you mean `ralph`?"), "{message}");
}

/// `ralph` for real, with nothing ready to do: its `jq` steps read `tasks.json`, it stops
/// at once and prints the summary; the run records the built-in's path.
#[test]
fn the_built_in_ralph_stops_when_no_task_is_ready() {
    let project = project();
    project.write(
        "tasks.json",
        r#"{"tasks": [
            {"id": "a", "title": "Done already", "status": "passing", "depends_on": []},
            {"id": "b", "title": "Waits on c", "status": "pending", "depends_on": ["c"]},
            {"id": "c", "title": "Broken", "status": "failing", "depends_on": []}
        ]}"#,
    );
    if crate::support::tools::required_tool("jq", "apt-get install jq").is_none() {
        return;
    }
    // The built-in declares a `claude-code` provider, which must be installed to start,
    // even though no task reaches it here.
    let Some(claude) = agent_cli("claude", "@anthropic-ai/claude-code") else {
        return;
    };
    let path = std::env::join_paths(
        claude
            .parent()
            .into_iter()
            .map(std::path::Path::to_path_buf)
            .chain(std::env::split_paths(
                &std::env::var_os("PATH").unwrap_or_default(),
            )),
    )
    .expect("a PATH");
    let output = atomic(&project)
        .args(["run", "ralph", "--stream", "values"])
        .env("PATH", path)
        .output()
        .expect("atomic run");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let runs = project.runs();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0]["path"], "<built-in>/ralph.kdl", "{runs:#?}");
    // `b` depends on a failing task, so nothing is ready: no agent was called.
    let text = stdout(&output);
    assert!(text.contains("\"task\":null"), "{text}");
    assert!(!text.contains("implement"), "{text}");
}
