//! Schemas hold at run time, through the binary: an input declared with a schema is checked
//! before the first step, and every write to a field declared with one — whatever statement
//! or reducer makes it — is checked as it happens, a mismatch failing the step (through its
//! `on-error`) with the field, the JSON pointer and the rule.

use serde_json::json;

use crate::support::cli_project::{CliProject, stderr};

const SCHEMA: &str = r#"{
    "type": "object",
    "properties": {"x": {"type": "number"}, "tags": {"type": "array", "maxItems": 2}},
    "additionalProperties": false
}"#;

fn project(flow: &str) -> CliProject {
    let project = CliProject::new();
    project.write("cfg.json", SCHEMA);
    project.write("f.kdl", flow);
    project
}

#[test]
fn an_input_that_breaks_its_schema_is_refused_before_any_step() {
    let project = project(
        r#"workflow "w" {
    input "config" schema="cfg.json"
    tool "side" { run "sh" "-c" "touch ran.txt"; }
}
"#,
    );
    let output = project
        .atomic()
        .args(["run", "f.kdl", "--input", r#"config={"x":"not n"}"#])
        .output()
        .expect("run");
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{err}");
    assert!(
        err.contains("input `config` does not match `cfg.json`: at `/x`:")
            && err.contains("is not of type \"number\""),
        "{err}"
    );
    assert!(!project.path().join("ran.txt").exists(), "no step ran");

    let output = project
        .atomic()
        .args(["run", "f.kdl", "--input", r#"config={"x":1}"#, "--quiet"])
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
}

#[test]
fn a_write_that_breaks_a_fields_schema_fails_the_step() {
    let project = project(
        r#"workflow "w" {
    state {
        field "cfg" schema="cfg.json" default="{}"
    }
    set "cfg" expr="{'bogus': 1}" id="bad"
}
"#,
    );
    let output = project
        .atomic()
        .args(["run", "f.kdl"])
        .output()
        .expect("run");
    let err = format!(
        "{}{}",
        crate::support::cli_project::stdout(&output),
        stderr(&output)
    );
    assert_eq!(output.status.code(), Some(1), "{err}");
    assert!(
        err.contains("field `cfg` does not match `cfg.json`") && err.contains("bogus"),
        "{err}"
    );
    let id = project.last_run();
    assert_eq!(
        project.show(&id)["state"]["cfg"],
        json!({}),
        "nothing was stored"
    );
}

#[test]
fn a_reducer_that_breaks_the_schema_takes_the_on_error_path() {
    let project = project(
        r#"workflow "w" {
    state {
        field "cfg" schema="cfg.json" reduce="merge" default="{\"tags\": []}"
        field "note" type="string" default=""
    }
    set "cfg" expr="{'tags': ['a', 'b']}" id="two"
    set "cfg" expr="{'tags': ['a', 'b', 'c']}" id="three" {
        on-error "skip" {
            set "note" "too many tags"
        }
    }
}
"#,
    );
    let output = project
        .atomic()
        .args(["run", "f.kdl", "--quiet"])
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let state = &project.show(&project.last_run())["state"];
    assert_eq!(
        state["cfg"],
        json!({"tags": ["a", "b"]}),
        "the bad write was not kept"
    );
    assert_eq!(state["note"], "too many tags");
}
