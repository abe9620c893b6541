//! `--format sarif`: SARIF 2.1.0 for code-scanning UIs. Every rule atomic has is listed in
//! the driver, so viewers can show its description even for rules that did not fire.

use serde_json::{Value, json};

use super::locate;
use crate::diagnostic::{Code, Diagnostic, Fix, Severity};
use crate::source::{Sources, Span};

const SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";

/// The SARIF log for `diagnostics`.
#[must_use]
pub fn render(sources: &Sources, diagnostics: &[Diagnostic]) -> String {
    let rules: Vec<Value> = Code::ALL
        .iter()
        .map(|code| {
            json!({
                "id": code.qualified(),
                "name": code.name(),
                "shortDescription": { "text": code.summary() },
                "properties": { "group": code.group() },
                "defaultConfiguration": { "level": level(code.default_severity()) },
            })
        })
        .collect();
    let results: Vec<Value> = diagnostics
        .iter()
        .map(|diagnostic| {
            let mut text = diagnostic.message.clone();
            if let Some(help) = &diagnostic.help {
                text.push_str("\nhelp: ");
                text.push_str(help);
            }
            let related: Vec<Value> = diagnostic
                .labels
                .iter()
                .enumerate()
                .map(|(index, label)| {
                    let mut location = physical(sources, label.span);
                    location["id"] = json!(index);
                    location["message"] = json!({ "text": label.message });
                    location
                })
                .collect();
            let mut result = json!({
                "ruleId": diagnostic.code.qualified(),
                "ruleIndex": Code::ALL.iter().position(|code| *code == diagnostic.code),
                "level": level(diagnostic.severity),
                "message": { "text": text },
                "locations": [physical(sources, diagnostic.span)],
                "relatedLocations": related,
            });
            if let Some(fix) = &diagnostic.fix {
                result["fixes"] = json!([fix_object(sources, fix)]);
            }
            result
        })
        .collect();
    let log = json!({
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": { "driver": {
                "name": "atomic",
                "version": env!("CARGO_PKG_VERSION"),
                "informationUri": "https://github.com/atomic-workflows/atomic",
                "rules": rules,
            }},
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    });
    let mut text = serde_json::to_string_pretty(&log).expect("SARIF serialises to JSON");
    text.push('\n');
    text
}

fn physical(sources: &Sources, span: Span) -> Value {
    let location = locate(sources, span);
    json!({
        "physicalLocation": {
            "artifactLocation": { "uri": location.file.replace('\\', "/") },
            "region": region(sources, span),
        },
    })
}

/// A region in the run's `columnKind` (Unicode code points), offsets included.
fn region(sources: &Sources, span: Span) -> Value {
    let location = locate(sources, span);
    let text = &sources.get(span.source).text;
    let chars = |offset: u32| {
        text.get(..offset as usize)
            .map_or(0, |before| before.chars().count())
    };
    let start = chars(span.start);
    json!({
        "startLine": location.line,
        "startColumn": location.column,
        "endLine": location.end_line,
        "endColumn": location.end_column,
        "charOffset": start,
        "charLength": chars(span.end) - start,
    })
}

/// A SARIF `fix`: the repair's edits grouped by file.
fn fix_object(sources: &Sources, fix: &Fix) -> Value {
    let mut changes: Vec<(String, Vec<Value>)> = Vec::new();
    for edit in &fix.edits {
        let uri = locate(sources, edit.span).file.replace('\\', "/");
        let replacement = json!({
            "deletedRegion": region(sources, edit.span),
            "insertedContent": { "text": edit.replacement },
        });
        match changes.iter_mut().find(|(file, _)| *file == uri) {
            Some((_, replacements)) => replacements.push(replacement),
            None => changes.push((uri, vec![replacement])),
        }
    }
    json!({
        "description": { "text": fix.title },
        "artifactChanges": changes
            .into_iter()
            .map(|(uri, replacements)| json!({
                "artifactLocation": { "uri": uri },
                "replacements": replacements,
            }))
            .collect::<Vec<_>>(),
    })
}

fn level(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Note => "note",
    }
}
