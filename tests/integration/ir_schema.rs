//! `schemas/workflow.schema.json` describes the serialised IR exactly: every example, ok
//! fixture and (partial) workflow of an error fixture validates against it and round-trips
//! through serde; documents that serde would never write are rejected.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::OnceLock;

use atomic::ir::Workflow;
use serde_json::{Value, json};

use crate::support;

/// The schema's validator, compiled once for every test.
pub(crate) fn validator() -> &'static jsonschema::Validator {
    static VALIDATOR: OnceLock<jsonschema::Validator> = OnceLock::new();
    VALIDATOR.get_or_init(|| {
        let path = support::root().join("schemas/workflow.schema.json");
        let text = std::fs::read_to_string(&path).expect("schemas/workflow.schema.json exists");
        let schema: Value = serde_json::from_str(&text).expect("the schema is JSON");
        jsonschema::meta::validate(&schema).expect("the schema is a valid JSON Schema");
        jsonschema::draft202012::new(&schema).expect("the schema compiles")
    })
}

/// Why `document` does not validate, one line per error.
fn errors(document: &Value) -> Vec<String> {
    validator()
        .iter_errors(document)
        .map(|error| format!("at {}: {error}", error.instance_path()))
        .collect()
}

fn serialised(path: &std::path::Path) -> Option<Value> {
    let (_, compiled) = support::compile_file(path);
    let workflow = compiled.workflow()?;
    let value = serde_json::to_value(workflow).expect("the IR serialises");
    let back: Workflow = serde_json::from_value(value.clone()).expect("the IR deserialises");
    if &back != workflow {
        let (before, after) = (format!("{workflow:?}"), format!("{back:?}"));
        let at = before
            .bytes()
            .zip(after.bytes())
            .position(|(a, b)| a != b)
            .unwrap_or(before.len().min(after.len()));
        let start = before.floor_char_boundary(at.saturating_sub(200));
        panic!(
            "{} does not round-trip through JSON:\n  before: …{}\n  after:  …{}",
            path.display(),
            &before[start..before.ceil_char_boundary((at + 100).min(before.len()))],
            &after[start..after.ceil_char_boundary((at + 100).min(after.len()))]
        );
    }
    Some(value)
}

fn valid_workflows() -> Vec<PathBuf> {
    let mut files = support::kdl_files(&support::fixture("check/ok"));
    files.extend(support::kdl_files(&support::root().join("examples")));
    files.extend(support::kdl_files(
        &support::root().join("examples/subgraphs"),
    ));
    files
}

/// The node kinds and `on-error` actions of a serialised workflow.
fn tags(document: &Value, kinds: &mut BTreeSet<String>, actions: &mut BTreeSet<String>) {
    for node in document["nodes"].as_array().expect("nodes is an array") {
        kinds.extend(node["kind"]["kind"].as_str().map(str::to_owned));
        actions.extend(node["on_error"]["action"].as_str().map(str::to_owned));
    }
}

#[test]
fn examples_and_ok_fixtures_validate() {
    let files = valid_workflows();
    assert!(files.len() >= 10, "too few workflows: {files:?}");
    let mut kinds = BTreeSet::new();
    let mut actions = BTreeSet::new();
    for path in files {
        let document = serialised(&path)
            .unwrap_or_else(|| panic!("{} resolves to no workflow", path.display()));
        let problems = errors(&document);
        assert!(
            problems.is_empty(),
            "{} does not match the schema:\n{}",
            path.display(),
            problems.join("\n")
        );
        tags(&document, &mut kinds, &mut actions);
    }
    // The valid workflows exercise every node kind and error action, so each branch of the
    // schema's tagged unions has been matched by real serde output.
    let expected = [
        "agent", "tool", "decision", "wait", "subgraph", "parallel", "loop", "set",
    ];
    assert_eq!(
        kinds,
        expected.iter().map(|s| (*s).to_owned()).collect(),
        "node kinds seen"
    );
    assert_eq!(
        actions,
        ["abort", "goto", "retry", "skip"]
            .iter()
            .map(|s| (*s).to_owned())
            .collect(),
        "on-error actions seen"
    );
}

#[test]
fn partial_workflows_of_error_fixtures_validate() {
    let mut checked = 0;
    for path in support::kdl_files(&support::fixture("check/err")) {
        let Some(document) = serialised(&path) else {
            continue;
        };
        let problems = errors(&document);
        assert!(
            problems.is_empty(),
            "{} (partial) does not match the schema:\n{}",
            path.display(),
            problems.join("\n")
        );
        checked += 1;
    }
    assert!(checked >= 20, "only {checked} error fixtures resolved");
}

/// A serialised workflow with at least one node of each kind.
fn every_construct() -> Value {
    serialised(&support::fixture("check/ok/every-construct.kdl")).expect("it resolves")
}

/// The first node whose kind is `kind`.
fn node_mut<'a>(document: &'a mut Value, kind: &str) -> &'a mut Value {
    document["nodes"]
        .as_array_mut()
        .expect("nodes is an array")
        .iter_mut()
        .find(|node| node["kind"]["kind"] == kind)
        .unwrap_or_else(|| panic!("no {kind} node"))
}

/// A change that makes a serialised workflow one serde would never write.
type Breakage = fn(&mut Value);

#[test]
fn broken_documents_are_rejected() {
    let original = every_construct();
    assert!(errors(&original).is_empty());
    let breakages: Vec<(&str, Breakage)> = vec![
        ("a node of an unknown kind", |d| {
            node_mut(d, "agent")["kind"]["kind"] = json!("robot");
        }),
        ("a node without its span", |d| {
            node_mut(d, "tool")
                .as_object_mut()
                .expect("object")
                .remove("span");
        }),
        ("a spanned value without its span", |d| {
            d["name"].as_object_mut().expect("object").remove("span");
        }),
        ("a span with a negative offset", |d| {
            d["span"]["start"] = json!(-1);
        }),
        ("a field serde never writes", |d| {
            node_mut(d, "loop")["kind"]["forever"] = json!(true);
        }),
        ("an agent property on a tool", |d| {
            node_mut(d, "tool")["kind"]["prompt"] = Value::Null;
        }),
        ("a missing Option (written as null, never left out)", |d| {
            d.as_object_mut().expect("object").remove("version");
        }),
        ("an unknown reducer", |d| {
            d["state"][0]["reducer"] = json!({"reducer": "concat"});
        }),
        ("merge-by without its key", |d| {
            d["state"][2]["reducer"] = json!({"reducer": "merge-by"});
        }),
        ("a jump to nowhere", |d| {
            node_mut(d, "decision")["kind"]["routes"][0]["jump"] = json!({"to": "nowhere"});
        }),
        ("an unknown error class", |d| {
            node_mut(d, "agent")["retry"]["on"] = json!(["cosmic-ray"]);
        }),
        ("a kebab-case field name", |d| {
            let limits = d["limits"].as_object_mut().expect("object");
            let steps = limits.remove("max_steps").expect("max_steps");
            limits.insert("max-steps".to_owned(), steps);
        }),
    ];
    for (what, breakage) in breakages {
        let mut document = original.clone();
        breakage(&mut document);
        assert_ne!(document, original, "{what}: the breakage changed nothing");
        assert!(
            !validator().is_valid(&document),
            "the schema accepts {what}"
        );
    }
}
