//! The data rules across files, through `compile()` with the real loader: called workflows
//! are read through `Files`, parsed, resolved and checked; schema files resolve next to
//! the workflow; the public `template_reads` API.

use std::path::Path;

use atomic::check::{expression_reads, template_reads};
use atomic::compile::{self, Compiled, Config};
use atomic::diagnostic::Code;
use atomic::ir::Template;
use atomic::source::{MemoryFiles, SourceId, Sources, Span};

fn compile_in(files: &MemoryFiles, path: &str) -> (Sources, Compiled) {
    let mut sources = Sources::new();
    let compiled = compile::compile_path(&mut sources, Path::new(path), files, &Config::new())
        .expect("the workflow is in the files");
    (sources, compiled)
}

fn codes(compiled: &Compiled) -> Vec<Code> {
    compiled.diagnostics.iter().map(|d| d.code).collect()
}

const CALLER: &str = r#"// calls a workflow next to it
workflow "main" {
    input "target" type="string"
    state { field "report" type="string" default=""; }
    subgraph "checks" workflow="lib/checks.kdl" {
        input "target" "{{ input.target }}"
        output "report" from="result"
    }
    tool "show" { run "echo" "{{ state.report }}"; }
}
"#;

#[test]
fn a_clean_callee_is_loaded_relative_to_the_caller_and_checked_against() {
    let mut files = MemoryFiles::new();
    files.insert("flows/main.kdl", CALLER);
    files.insert(
        "flows/lib/checks.kdl",
        r#"workflow "checks" {
    input "target" type="string"
    state { field "result" type="string" default=""; }
    tool "check" { run "cargo" "check" "{{ input.target }}"; output "result"; }
}
"#,
    );
    let (sources, compiled) = compile_in(&files, "flows/main.kdl");
    assert!(
        compiled.diagnostics.is_empty(),
        "{:#?}",
        compiled.diagnostics
    );
    assert!(sources.find(Path::new("flows/lib/checks.kdl")).is_some());
}

#[test]
fn a_broken_callee_reports_its_own_errors_in_its_own_file() {
    let mut files = MemoryFiles::new();
    files.insert("flows/main.kdl", CALLER);
    files.insert(
        "flows/lib/checks.kdl",
        "workflow \"checks\" {\n    agent \"x\" {\n",
    );
    let (sources, compiled) = compile_in(&files, "flows/main.kdl");
    let callee = sources
        .find(Path::new("flows/lib/checks.kdl"))
        .expect("the callee was added to the sources");
    assert!(!compiled.diagnostics.is_empty());
    assert!(
        compiled
            .diagnostics
            .iter()
            .all(|d| d.span.source == callee && d.is_error()),
        "{:#?}",
        compiled.diagnostics
    );
}

#[test]
fn mismatched_mappings_and_missing_files_are_reported() {
    let mut files = MemoryFiles::new();
    files.insert("flows/main.kdl", CALLER);
    files.insert(
        "flows/lib/checks.kdl",
        r#"workflow "checks" {
    input "path" type="string"
    state { field "outcome" type="string" default=""; }
    tool "check" { run "cargo" "check" "{{ input.path }}"; output "outcome"; }
}
"#,
    );
    let (_, compiled) = compile_in(&files, "flows/main.kdl");
    assert_eq!(
        codes(&compiled),
        [
            Code::SubgraphInputMismatch,
            Code::SubgraphInputMismatch,
            Code::SubgraphOutputMismatch
        ],
        "{:#?}",
        compiled.diagnostics
    );

    let mut files = MemoryFiles::new();
    files.insert("flows/main.kdl", CALLER);
    let (_, compiled) = compile_in(&files, "flows/main.kdl");
    assert_eq!(codes(&compiled), [Code::MissingSubgraph]);
}

#[test]
fn schema_files_resolve_next_to_the_workflow() {
    let flow = r#"workflow "review" {
    state { field "findings" type="array" default="[]"; }
    provider "fake" adapter="replay" cassette="r.cassette"
    agent "review" provider="fake" {
        prompt "Review"
        output "findings" parse="json" schema="schemas/findings.json"
    }
    agent "fix" provider="fake" { prompt "Fix {{ state.findings | tojson }}"; }
}
"#;
    let mut files = MemoryFiles::new();
    files.insert("flows/review.kdl", flow);
    files.insert("flows/schemas/findings.json", r#"{"type": "array"}"#);
    let (_, compiled) = compile_in(&files, "flows/review.kdl");
    assert!(
        compiled.diagnostics.is_empty(),
        "{:#?}",
        compiled.diagnostics
    );

    files.insert("flows/schemas/findings.json", r#"{"type": 7}"#);
    let (_, compiled) = compile_in(&files, "flows/review.kdl");
    assert_eq!(codes(&compiled), [Code::InvalidSchema]);
}

#[test]
fn template_reads_is_usable_by_the_runtime_and_the_language_server() {
    let text = "Fix {{ state.findings | tojson }} from {{ outputs[\"re-review\"].text }}";
    let template = Template {
        source: text.to_owned(),
        span: Span::new(SourceId(0), 10, 10 + text.len() + 2),
        exact: true,
        offset: 1,
        shifts: None,
    };
    let reads = template_reads(&template).expect("the template parses");
    let paths: Vec<&str> = reads.iter().map(|read| read.path.as_str()).collect();
    assert_eq!(paths, ["state.findings", "outputs.re-review.text"]);
    assert_eq!(reads[1].member(), Some("re-review"));

    let condition = Template {
        source: "state.rounds <".to_owned(),
        ..template
    };
    assert!(expression_reads(&condition).is_err());
}
