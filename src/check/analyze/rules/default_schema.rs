//! `invalid-default` (schemas): an input's or state field's `default=` breaks its own
//! `schema=`.
//!
//! ## What it does
//! Validates each default of an input or a state field typed by `schema=` against that
//! schema, read through [`Files`](crate::source::Files) like `schema-file` reads it. A
//! schema that is missing or invalid is that rule's to report; this one then says nothing.
//!
//! ## Why is this bad?
//! The default is the value every run starts with (or every caller that leaves the input
//! out gets): one the schema refuses fails the first write that is validated, or hands the
//! workflow data its own contract says cannot exist.
//!
//! ## Example
//! ```kdl
//! field "findings" schema="schemas/findings.json" default="{}"   // the schema says array
//! ```
//!
//! ## Use instead
//! ```kdl
//! field "findings" schema="schemas/findings.json" default="[]"
//! ```

use std::collections::HashMap;

use crate::diagnostic::{Code, Diagnostic};
use crate::ir::ValueType;
use crate::source::{Span, Spanned};

use super::super::driver::Facts;

/// A declaration with a schema and a default.
struct Typed<'w> {
    /// "input `brief`", "state field `notes`".
    what: String,
    schema: &'w Spanned<String>,
    default: &'w serde_json::Value,
    /// Where the default is written (the declaration when unknown).
    at: Span,
}

/// Reports defaults their schema refuses.
pub(crate) fn check(facts: &Facts<'_>, out: &mut Vec<Diagnostic>) {
    let workflow = facts.workflow;
    let inputs = workflow.inputs.iter().filter_map(|input| {
        typed(
            format!("input `{}`", input.name.value),
            &input.ty,
            input.default.as_ref(),
            input.default_span.unwrap_or(input.span),
        )
    });
    let fields = workflow.state.iter().filter_map(|field| {
        typed(
            format!("state field `{}`", field.name.value),
            &field.ty,
            field.default.as_ref(),
            field.default_span.unwrap_or(field.span),
        )
    });
    let mut validators: HashMap<&str, Option<jsonschema::Validator>> = HashMap::new();
    for declaration in inputs.chain(fields) {
        let validator = validators
            .entry(declaration.schema.value.as_str())
            .or_insert_with(|| compile(facts, &declaration.schema.value));
        let Some(validator) = validator else {
            continue;
        };
        let Some(error) = validator.iter_errors(declaration.default).next() else {
            continue;
        };
        let pointer = error.instance_path().as_str().to_owned();
        let problem = if pointer.is_empty() {
            error.to_string()
        } else {
            format!("{error} (at `{pointer}`)")
        };
        out.push(
            Diagnostic::new(
                Code::InvalidDefault,
                declaration.at,
                format!(
                    "the default of {} does not match its schema",
                    declaration.what
                ),
            )
            .label(problem)
            .with_label(declaration.schema.span, "the schema it breaks")
            .help("change the default to a value the schema accepts, or leave it out"),
        );
    }
}

/// A schema-typed declaration with a default worth validating (`#null` on an optional
/// input means "no value", not a value).
fn typed<'w>(
    what: String,
    ty: &'w ValueType,
    default: Option<&'w serde_json::Value>,
    at: Span,
) -> Option<Typed<'w>> {
    let ValueType::Schema(schema) = ty else {
        return None;
    };
    let default = default.filter(|value| !value.is_null())?;
    Some(Typed {
        what,
        schema,
        default,
        at,
    })
}

/// The schema's validator, or `None` when it cannot be had (`schema-file` reports why).
fn compile(facts: &Facts<'_>, path: &str) -> Option<jsonschema::Validator> {
    let text = facts.files.read(&facts.resolve(path)).ok()?;
    let schema: serde_json::Value = serde_json::from_str(&text).ok()?;
    jsonschema::validator_for(&schema).ok()
}

#[cfg(test)]
mod tests {
    use crate::check::analyze::testing::{Builder, messages, only, run_with};
    use crate::diagnostic::Code;
    use crate::ir::ValueType;
    use crate::source::{MemoryFiles, Spanned};
    use serde_json::json;

    fn schema(b: &mut Builder, path: &str) -> ValueType {
        let span = b.span(path.len());
        ValueType::Schema(Spanned::new(path.to_owned(), span))
    }

    #[test]
    fn a_default_the_schema_refuses_is_reported() {
        let mut b = Builder::new();
        let ty = schema(&mut b, "brief.json");
        b.input("brief", ty, Some(json!({"title": "x"})));
        let ty = schema(&mut b, "list.json");
        b.field("notes", ty, Some(json!({})));
        let ty = schema(&mut b, "list.json");
        b.field("fine", ty, Some(json!([])));
        let mut files = MemoryFiles::new();
        files.insert(
            "brief.json",
            r#"{"type": "object", "required": ["title", "goal"]}"#,
        );
        files.insert("list.json", r#"{"type": "array"}"#);
        let found = run_with(&b.finish(), &files);
        assert_eq!(
            messages(&found, Code::InvalidDefault),
            [
                "the default of input `brief` does not match its schema",
                "the default of state field `notes` does not match its schema"
            ]
        );
        let first = only(found, Code::InvalidDefault).remove(0);
        assert!(
            first.label.as_deref().unwrap().contains("\"goal\""),
            "{:?}",
            first.label
        );
        assert_eq!(first.labels.len(), 1, "the schema is pointed at");
    }

    #[test]
    fn a_missing_schema_or_an_optional_input_is_not_judged_here() {
        let mut b = Builder::new();
        let ty = schema(&mut b, "gone.json");
        b.field("notes", ty, Some(json!({})));
        let ty = schema(&mut b, "list.json");
        b.input("maybe", ty, Some(json!(null)));
        let mut files = MemoryFiles::new();
        files.insert("list.json", r#"{"type": "array"}"#);
        let found = run_with(&b.finish(), &files);
        assert!(
            messages(&found, Code::InvalidDefault).is_empty(),
            "{found:#?}"
        );
        assert_eq!(messages(&found, Code::MissingSchemaFile).len(), 1);
    }
}
