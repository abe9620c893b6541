//! Test helpers: resolving a snippet of KDL and looking at what it reports.

use crate::diagnostic::{Code, Diagnostic, Outcome};
use crate::ir::Workflow;
use crate::source::{SourceId, Sources};
use crate::syntax::kdl::Document;

/// Parses `text`, which must be valid KDL v2.
pub(crate) fn parse(text: &str, source: SourceId) -> Document {
    let parsed = crate::syntax::kdl::parse(text, source);
    assert_eq!(parsed.diagnostics, vec![], "test KDL parses");
    parsed.document
}

/// Resolves `text`, returning the outcome and the sources.
pub(crate) fn resolve_text(text: &str) -> (Outcome<Workflow>, Sources) {
    let mut sources = Sources::new();
    let file = sources.add("test.kdl", text);
    let document = parse(text, file);
    (super::resolve(&sources, file, document), sources)
}

/// The codes `text` produces, in order.
pub(crate) fn codes(text: &str) -> Vec<Code> {
    resolve_text(text)
        .0
        .diagnostics
        .iter()
        .map(|d| d.code)
        .collect()
}

/// The diagnostics, asserting there is exactly one with `code`, and the text at its span.
pub(crate) fn only(text: &str, code: Code) -> (Diagnostic, String) {
    let (outcome, sources) = resolve_text(text);
    let found: Vec<&Diagnostic> = outcome.diagnostics.iter().collect();
    assert_eq!(found.len(), 1, "expected one diagnostic, got {found:#?}");
    assert_eq!(found[0].code, code, "{found:#?}");
    let at = sources.text(found[0].span).to_owned();
    (found[0].clone(), at)
}
