//! `--format json`: one object per diagnostic, in an array.

use serde::Serialize;

use super::{Location, locate};
use crate::diagnostic::{Diagnostic, Severity};
use crate::source::Sources;

#[derive(Serialize)]
struct JsonDiagnostic<'a> {
    code: String,
    severity: Severity,
    message: &'a str,
    #[serde(flatten)]
    location: Location,
    label: Option<&'a str>,
    labels: Vec<JsonLabel<'a>>,
    help: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    fix: Option<JsonFix<'a>>,
}

/// A repair: replace each edit's place with its `replacement`.
#[derive(Serialize)]
struct JsonFix<'a> {
    title: &'a str,
    edits: Vec<JsonEdit<'a>>,
}

#[derive(Serialize)]
struct JsonEdit<'a> {
    replacement: &'a str,
    #[serde(flatten)]
    location: Location,
}

#[derive(Serialize)]
struct JsonLabel<'a> {
    message: &'a str,
    #[serde(flatten)]
    location: Location,
}

/// The JSON text for `diagnostics` (pretty-printed, with a trailing newline).
#[must_use]
pub fn render(sources: &Sources, diagnostics: &[Diagnostic]) -> String {
    let items: Vec<JsonDiagnostic<'_>> = diagnostics
        .iter()
        .map(|diagnostic| JsonDiagnostic {
            code: diagnostic.code.to_string(),
            severity: diagnostic.severity,
            message: &diagnostic.message,
            location: locate(sources, diagnostic.span),
            label: diagnostic.label.as_deref(),
            labels: diagnostic
                .labels
                .iter()
                .map(|label| JsonLabel {
                    message: &label.message,
                    location: locate(sources, label.span),
                })
                .collect(),
            help: diagnostic.help.as_deref(),
            fix: diagnostic.fix.as_ref().map(|fix| JsonFix {
                title: &fix.title,
                edits: fix
                    .edits
                    .iter()
                    .map(|edit| JsonEdit {
                        replacement: &edit.replacement,
                        location: locate(sources, edit.span),
                    })
                    .collect(),
            }),
        })
        .collect();
    let mut text = serde_json::to_string_pretty(&items).expect("diagnostics serialise to JSON");
    text.push('\n');
    text
}
