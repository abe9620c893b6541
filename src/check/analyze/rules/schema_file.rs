//! `missing-schema-file` and `invalid-schema`: a `schema=` file that cannot be used.
//!
//! ## What it does
//! Every `schema=` (on an `output`, an `input` or state `field`, a `wait` with
//! `answer="json"`) names a JSON Schema file relative to the workflow's directory. This
//! rule reads each file once through [`Files`](crate::source::Files) and reports it at
//! every reference when it does not exist (`missing-schema-file`), is not JSON, is not a
//! valid JSON Schema by its meta-schema, or does not compile (a bad `pattern` regex)
//! (`invalid-schema`). `$ref`s to other files are not followed (checks stay hermetic).
//!
//! ## Why is this bad?
//! Outputs are validated against the schema at run time: a missing or broken schema fails
//! the run after the agent has already been paid for.
//!
//! ## Example
//! ```kdl
//! agent "review" { prompt "…"; output "findings" parse="json" schema="schemas/finding.json"; }
//! ```
//!
//! ## Use instead
//! Point `schema=` at an existing file holding a JSON Schema, e.g. `{"type": "array"}`.

use std::collections::HashMap;
use std::path::PathBuf;

use crate::diagnostic::{Code, Diagnostic};
use crate::ir::{AnswerType, NodeKind, ValueType};
use crate::source::{ReadError, Spanned};

use super::super::driver::Facts;

/// What is wrong with one schema file.
enum Verdict {
    Missing(PathBuf),
    Unreadable(PathBuf, ReadError),
    Invalid(String),
}

/// Reports missing, unreadable and invalid schema files.
pub(crate) fn check(facts: &Facts<'_>, out: &mut Vec<Diagnostic>) {
    let mut verdicts: HashMap<String, Option<Verdict>> = HashMap::new();
    for schema in references(facts) {
        let verdict = verdicts
            .entry(schema.value.clone())
            .or_insert_with(|| judge(facts, &schema.value));
        let diagnostic = match verdict {
            None => continue,
            Some(Verdict::Missing(path)) => Diagnostic::new(
                Code::MissingSchemaFile,
                schema.span,
                format!("schema file `{}` does not exist", schema.value),
            )
            .label(format!("no file at `{}`", path.display()))
            .help("create it, or fix the path: it is relative to the directory of this workflow"),
            Some(Verdict::Unreadable(path, error)) => {
                Diagnostic::unreadable(schema.span, "schema file", path, error)
            }
            Some(Verdict::Invalid(problem)) => Diagnostic::new(
                Code::InvalidSchema,
                schema.span,
                format!("schema file `{}` is not a valid JSON Schema", schema.value),
            )
            .label(problem.clone())
            .help("fix the file; it must be a JSON Schema (draft 2020-12, 2019-09, 7, 6 or 4)"),
        };
        out.push(diagnostic);
    }
}

/// Every `schema=` in the workflow, in source order.
fn references<'w>(facts: &Facts<'w>) -> Vec<&'w Spanned<String>> {
    let workflow = facts.workflow;
    let mut found = Vec::new();
    let typed = workflow
        .inputs
        .iter()
        .map(|input| &input.ty)
        .chain(workflow.state.iter().map(|field| &field.ty));
    for ty in typed {
        if let ValueType::Schema(path) = ty {
            found.push(path);
        }
    }
    for node in &workflow.nodes {
        found.extend(
            node.kind
                .outputs()
                .iter()
                .filter_map(|output| output.schema.as_ref()),
        );
        if let NodeKind::Wait(wait) = &node.kind
            && let AnswerType::Json(Some(path)) = &wait.answer
        {
            found.push(path);
        }
    }
    found.sort_by_key(|path| path.span);
    found
}

/// `None` when the schema is usable; otherwise what is wrong.
fn judge(facts: &Facts<'_>, path: &str) -> Option<Verdict> {
    let resolved = facts.resolve(path);
    let text = match facts.files.read(&resolved) {
        Ok(text) => text,
        Err(ReadError::NotFound) => return Some(Verdict::Missing(resolved)),
        Err(error) => return Some(Verdict::Unreadable(resolved, error)),
    };
    let schema: serde_json::Value = match serde_json::from_str(&text) {
        Ok(schema) => schema,
        Err(error) => return Some(Verdict::Invalid(format!("not JSON: {error}"))),
    };
    if let Err(error) = jsonschema::meta::validate(&schema) {
        return Some(Verdict::Invalid(located(
            &error.to_string(),
            error.instance_path().as_str(),
        )));
    }
    match jsonschema::validator_for(&schema) {
        Err(error)
            if !matches!(
                error.kind(),
                jsonschema::error::ValidationErrorKind::Referencing(_)
            ) =>
        {
            Some(Verdict::Invalid(located(
                &error.to_string(),
                error.instance_path().as_str(),
            )))
        }
        _ => None,
    }
}

fn located(problem: &str, pointer: &str) -> String {
    if pointer.is_empty() {
        problem.to_owned()
    } else {
        format!("{problem} (at `{pointer}`)")
    }
}

#[cfg(test)]
mod tests {
    use crate::check::analyze::testing::{Builder, messages, only, run_with};
    use crate::diagnostic::Code;
    use crate::ir::{NodeKind, ValueType};
    use crate::source::{MemoryFiles, Spanned};

    fn with_schema(b: &mut Builder, id: &str, path: &str) {
        let agent = b.agent_to(id, "x", "out");
        let span = b.span(path.len());
        if let NodeKind::Agent(agent) = &mut b.node_mut(agent).kind {
            agent.outputs[0].schema = Some(Spanned::new(path.to_owned(), span));
        }
    }

    #[test]
    fn reports_missing_unparsable_and_invalid_schemas() {
        let mut b = Builder::new();
        b.field("out", ValueType::Any, None);
        with_schema(&mut b, "ok", "schemas/ok.json");
        with_schema(&mut b, "missing", "schemas/missing.json");
        with_schema(&mut b, "broken", "schemas/broken.json");
        with_schema(&mut b, "wrong", "schemas/wrong.json");
        with_schema(&mut b, "regex", "./schemas/regex.json");
        let mut files = MemoryFiles::new();
        files.insert(
            "schemas/ok.json",
            r#"{"type": "array", "items": {"$ref": "other.json"}}"#,
        );
        files.insert("schemas/broken.json", "{ nope");
        files.insert("schemas/wrong.json", r#"{"type": "strin"}"#);
        files.insert(
            "schemas/regex.json",
            r#"{"type": "string", "pattern": "(["}"#,
        );
        let found = run_with(&b.finish(), &files);
        assert_eq!(
            messages(&found, Code::MissingSchemaFile),
            ["schema file `schemas/missing.json` does not exist"]
        );
        let invalid = only(found, Code::InvalidSchema);
        assert_eq!(invalid.len(), 3, "{invalid:#?}");
        assert!(invalid[0].label.as_deref().unwrap().starts_with("not JSON"));
        assert!(
            invalid[1].label.as_deref().unwrap().contains("strin"),
            "{:?}",
            invalid[1].label
        );
    }

    #[test]
    fn odd_documents_are_judged_without_panicking() {
        let odd = [
            r#"{"$schema": "http://example.com/custom-meta"}"#,
            r#"{"$schema": 5}"#,
            r#"{"$schema": "https://json-schema.org/draft-04/schema#", "type": "object"}"#,
            "42",
            "[]",
            "\"text\"",
            "true",
            r##"{"$ref": "#/definitions/missing"}"##,
            r#"{"properties": {"a": {"pattern": "\\p{Nope}"}}}"#,
        ];
        for (index, text) in odd.iter().enumerate() {
            let mut b = Builder::new();
            b.field("out", ValueType::Any, None);
            with_schema(&mut b, "agent", &format!("s{index}.json"));
            let mut files = MemoryFiles::new();
            files.insert(format!("s{index}.json"), *text);
            let found = run_with(&b.finish(), &files);
            assert!(only(found, Code::MissingSchemaFile).is_empty());
        }
    }

    #[test]
    fn input_and_field_schemas_are_checked_once_per_file() {
        let mut b = Builder::new();
        let span = b.span(10);
        b.input(
            "spec",
            ValueType::Schema(Spanned::new("s.json".into(), span)),
            None,
        );
        let span = b.span(10);
        b.field(
            "spec",
            ValueType::Schema(Spanned::new("s.json".into(), span)),
            None,
        );
        let found = run_with(&b.finish(), &MemoryFiles::new());
        assert_eq!(only(found, Code::MissingSchemaFile).len(), 2);
    }
}
