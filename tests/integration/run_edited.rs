//! Resuming after the workflow file changed, through the binary: state that no longer fits
//! is listed and refused until it is reset (`--reset FIELD`) or migrated (`state version=N`
//! and `migrate=`), the change committed as a step of its own; steps that ran and are gone,
//! or were inserted before the resume point, are listed the same way.

use serde_json::json;

use crate::support::cli_project::{CliProject, stderr};

/// Counts to 3 in `n`, keeps a note, then waits.
const ORIGINAL: &str = r#"workflow "w" {
    state {
        field "n" type="integer" default=0
        field "note" type="string" default="x"
    }
    set "n" expr="state.n + 3" id="count"
    wait "ok" prompt="Go?" answer="yes-no"
    set "note" "after" id="finish"
}
"#;

/// `n` became a list of counts; `note` is gone.
const RETYPED: &str = r#"workflow "w" {
    state {
        field "n" type="array" default="[]"
    }
    set "n" expr="state.n" id="count"
    wait "ok" prompt="Go?" answer="yes-no"
    set "n" expr="state.n + [9]" id="finish"
}
"#;

fn paused(project: &CliProject) -> String {
    project.write("f.kdl", ORIGINAL);
    let output = project
        .atomic()
        .args(["run", "f.kdl", "--quiet"])
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(4), "{}", stderr(&output));
    project.last_run()
}

fn resume(project: &CliProject, args: &[&str]) -> std::process::Output {
    project
        .atomic()
        .arg("resume")
        .args(args)
        .arg("--quiet")
        .output()
        .expect("resume")
}

#[test]
fn state_that_no_longer_fits_is_refused_until_reset() {
    let project = CliProject::new();
    let id = paused(&project);
    project.write("f.kdl", RETYPED);
    let refused = resume(&project, &[&id, "--answer", "yes", "--force"]);
    let err = stderr(&refused);
    assert_eq!(refused.status.code(), Some(1), "{err}");
    assert!(
        err.contains("field `n` holds `3`") && err.contains("`array`"),
        "{err}"
    );
    assert!(
        err.contains("--reset FIELD") && err.contains("migrate="),
        "{err}"
    );
    assert_eq!(project.show(&id)["run"]["status"], "paused", "nothing ran");

    let unknown = resume(
        &project,
        &[&id, "--answer", "yes", "--force", "--reset", "nope"],
    );
    assert_eq!(unknown.status.code(), Some(1));
    assert!(
        stderr(&unknown).contains("no state field `nope`"),
        "{}",
        stderr(&unknown)
    );

    let done = resume(
        &project,
        &[
            &id, "--answer", "yes", "--force", "--reset", "n", "--reset", "note",
        ],
    );
    assert_eq!(done.status.code(), Some(0), "{}", stderr(&done));
    let shown = project.show(&id);
    assert_eq!(
        shown["state"],
        json!({"n": [9]}),
        "reset to the default, then the step ran"
    );
    let names: Vec<&str> = shown["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|step| step["node_id"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["count", "ok", "resume", "ok", "finish"]);
}

#[test]
fn a_state_version_migrates_a_stored_run_once() {
    let project = CliProject::new();
    let id = paused(&project);
    project.write(
        "f.kdl",
        r#"workflow "w" {
    state version=2 {
        field "n" type="array" default="[]" migrate="[old, version]"
        field "note" type="string" default="x" migrate="old ~ '+' ~ (state.n | string)"
    }
    set "n" expr="state.n" id="count"
    wait "ok" prompt="Go?" answer="yes-no"
    set "note" expr="state.note ~ '!'" id="finish"
}
"#,
    );
    let check = project
        .atomic()
        .args(["check", "f.kdl"])
        .output()
        .expect("check");
    assert_eq!(check.status.code(), Some(0), "{}", stderr(&check));
    let done = resume(&project, &[&id, "--answer", "yes", "--force"]);
    assert_eq!(done.status.code(), Some(0), "{}", stderr(&done));
    let shown = project.show(&id);
    assert_eq!(
        shown["state"],
        json!({"n": [3, 1], "note": "x+3!"}),
        "each field migrated from the stored state at version 1"
    );
    let migration = &shown["steps"][2];
    assert_eq!(migration["node_id"], "resume");
    assert_eq!(migration["cursor"]["state_version"], 2);
}

#[test]
fn a_migration_with_no_version_is_a_warning_and_a_bad_expression_a_check_error() {
    let project = CliProject::new();
    project.write(
        "f.kdl",
        r#"workflow "w" {
    state {
        field "n" type="array" default="[]" migrate="[old"
        field "m" type="array" default="[]" migrate="[stranger]"
    }
    set "n" expr="state.n + state.m"
}
"#,
    );
    let output = project
        .atomic()
        .args(["check", "f.kdl", "--format", "json"])
        .output()
        .expect("check");
    assert_eq!(output.status.code(), Some(1));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
    let codes: Vec<&str> = report
        .as_array()
        .expect("a list of diagnostics")
        .iter()
        .filter_map(|d| d["code"].as_str()?.strip_prefix("atomic::"))
        .collect();
    assert!(codes.contains(&"template-syntax"), "{codes:?}");
    assert!(codes.contains(&"undeclared-variable"), "{codes:?}");
    assert_eq!(
        codes
            .iter()
            .filter(|code| **code == "unused-migration")
            .count(),
        2,
        "each `migrate` needs a state version above 1: {codes:?}"
    );
}

#[test]
fn steps_removed_or_inserted_before_the_resume_point_are_listed() {
    let project = CliProject::new();
    let id = paused(&project);
    // `count` removed, `prepare` inserted before the wait.
    project.write(
        "f.kdl",
        r#"workflow "w" {
    state {
        field "n" type="integer" default=0
        field "note" type="string" default="x"
    }
    set "note" "a" id="prepare"
    set "note" "b" id="prepare2"
    wait "ok" prompt="Go?" answer="yes-no"
    set "note" "after" id="finish"
}
"#,
    );
    let refused = resume(&project, &[&id, "--answer", "yes", "--force"]);
    let err = stderr(&refused);
    assert_eq!(refused.status.code(), Some(1), "{err}");
    assert!(
        err.contains("`count` ran and is no longer in the workflow"),
        "{err}"
    );
    assert!(
        err.contains("`prepare` is now before `ok` and never ran"),
        "{err}"
    );
    assert_eq!(project.show(&id)["run"]["status"], "paused");
}

/// A run stored before node outputs were kept apart from the state (store schema 4 and
/// earlier kept them as `#output:<node>` state fields) resumes with its outputs.
#[test]
fn a_run_stored_with_outputs_as_state_fields_resumes_with_them() {
    let project = CliProject::new();
    project.write(
        "f.kdl",
        r#"workflow "w" {
    state {
        field "said" type="string" default=""
    }
    tool "greet" { run "echo" "hello"; }
    wait "ok" prompt="Go?" answer="yes-no"
    set "said" expr="outputs.greet.stdout | trim"
}
"#,
    );
    let output = project
        .atomic()
        .args(["run", "f.kdl", "--quiet"])
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(4), "{}", stderr(&output));
    let id = project.last_run();
    // Rewrite the stored step as the older schema had it: the output in the delta.
    let conn = rusqlite::Connection::open(project.path().join(".atomic/atomic.db")).expect("open");
    let changed = conn
        .execute(
            r##"UPDATE steps SET
                 delta = json_set(delta, '$."#output:greet"', json_object('set', json_extract(outputs, '$.greet'))),
                 outputs = NULL
               WHERE node_id = 'greet'"##,
            [],
        )
        .expect("rewrite the step");
    assert_eq!(changed, 1);
    drop(conn);
    let done = resume(&project, &[&id, "--answer", "yes"]);
    assert_eq!(done.status.code(), Some(0), "{}", stderr(&done));
    let state = &project.show(&id)["state"];
    assert_eq!(state["said"], "hello");
    assert!(
        state.get("#output:greet").is_none(),
        "not shown as a field: {state}"
    );
}
