//! Test helpers: KDL text → our tree through the reference `kdl` crate (until atomic's own
//! parser lands), and resolving a snippet.

use crate::diagnostic::{Code, Diagnostic, Outcome};
use crate::ir::Workflow;
use crate::source::{SourceId, Sources, Span};
use crate::syntax::kdl::{Document, Entry, Ident, Node, Value};

/// Parses `text` (valid KDL v2) into our tree.
pub(crate) fn parse(text: &str, source: SourceId) -> Document {
    let document: kdl::KdlDocument = text.parse().expect("test KDL parses");
    convert_document(&document, source)
}

/// Resolves `text`, returning the outcome and the sources.
pub(crate) fn resolve_text(text: &str) -> (Outcome<Workflow>, Sources) {
    let mut sources = Sources::new();
    let file = sources.add("test.kdl", text);
    let document = parse(text, file);
    (super::resolve(&sources, file, &document), sources)
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

fn span(source: SourceId, span: miette::SourceSpan) -> Span {
    Span::new(source, span.offset(), span.offset() + span.len())
}

fn convert_document(document: &kdl::KdlDocument, source: SourceId) -> Document {
    Document {
        nodes: document
            .nodes()
            .iter()
            .map(|node| convert_node(node, source))
            .collect(),
        span: span(source, document.span()),
    }
}

fn ident(ident: &kdl::KdlIdentifier, source: SourceId) -> Ident {
    Ident {
        value: ident.value().to_owned(),
        span: span(source, ident.span()),
    }
}

fn convert_node(node: &kdl::KdlNode, source: SourceId) -> Node {
    Node {
        ty: node.ty().map(|ty| ident(ty, source)),
        name: ident(node.name(), source),
        entries: node
            .entries()
            .iter()
            .map(|entry| convert_entry(entry, source))
            .collect(),
        children: node
            .children()
            .map(|children| convert_document(children, source)),
        span: span(source, node.span()),
    }
}

fn convert_entry(entry: &kdl::KdlEntry, source: SourceId) -> Entry {
    let whole = span(source, entry.span());
    let repr = entry.format().map_or(0, |format| format.value_repr.len());
    let end = whole.end as usize;
    let value = match entry.value() {
        kdl::KdlValue::String(text) => Value::String(text.clone()),
        kdl::KdlValue::Integer(n) => Value::Integer(*n),
        kdl::KdlValue::Float(x) => Value::Float(*x),
        kdl::KdlValue::Bool(b) => Value::Bool(*b),
        kdl::KdlValue::Null => Value::Null,
    };
    Entry {
        key: entry.name().map(|key| ident(key, source)),
        ty: entry.ty().map(|ty| ident(ty, source)),
        value,
        value_span: Span::new(source, end.saturating_sub(repr), end),
        span: whole,
    }
}
