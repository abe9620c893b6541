//! The canonical print of a [`Document`]: the normalised form of the official KDL test
//! suite's `expected_kdl/` files, so tests can compare parsers through plain text.
//!
//! Rules (from the suite's README): no comments; one node per line, children indented by
//! four spaces and printed only when non-empty; arguments in order, then properties sorted
//! by key with only the last of duplicate keys kept; strings bare when they may be
//! identifiers, otherwise quoted with `\\ \" \n \r \t \b \f` escapes; integers in decimal;
//! floats as Rust's shortest round-trip form (`1e-10`, `10000000000.0`), `#inf`, `#-inf`,
//! `#nan`. Code points that may not appear literally in KDL are written as `\u{…}`, so the
//! output always parses again.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::chars;
use super::ident::is_bare_identifier;
use super::tree::{Document, Entry, Ident, Node, Value};

impl Document {
    /// The canonical text of this document, as in the KDL test suite's `expected_kdl/`.
    #[must_use]
    pub fn to_canonical(&self) -> String {
        let mut out = String::new();
        if self.nodes.is_empty() {
            out.push('\n');
        }
        write_nodes(&mut out, &self.nodes, 0);
        out
    }
}

fn write_nodes(out: &mut String, nodes: &[Node], depth: usize) {
    for node in nodes {
        write_node(out, node, depth);
    }
}

fn write_node(out: &mut String, node: &Node, depth: usize) {
    push_indent(out, depth);
    if let Some(ty) = &node.ty {
        write_type(out, ty);
    }
    write_string(out, &node.name.value);
    let mut properties: BTreeMap<&str, &Entry> = BTreeMap::new();
    for entry in &node.entries {
        match &entry.key {
            Some(key) => {
                properties.insert(&key.value, entry);
            }
            None => {
                out.push(' ');
                write_entry_value(out, entry);
            }
        }
    }
    for (key, entry) in properties {
        out.push(' ');
        write_string(out, key);
        out.push('=');
        write_entry_value(out, entry);
    }
    if let Some(children) = node.children.as_ref().filter(|c| !c.nodes.is_empty()) {
        out.push_str(" {\n");
        write_nodes(out, &children.nodes, depth + 1);
        push_indent(out, depth);
        out.push('}');
    }
    out.push('\n');
}

fn push_indent(out: &mut String, depth: usize) {
    for _ in 0..depth {
        out.push_str("    ");
    }
}

fn write_type(out: &mut String, ty: &Ident) {
    out.push('(');
    write_string(out, &ty.value);
    out.push(')');
}

fn write_entry_value(out: &mut String, entry: &Entry) {
    if let Some(ty) = &entry.ty {
        write_type(out, ty);
    }
    write_value(out, &entry.value);
}

/// Writes a value in canonical form.
pub(super) fn write_value(out: &mut String, value: &Value) {
    match value {
        Value::String(text) => write_string(out, text),
        Value::Integer(number) => {
            let _ = write!(out, "{number}");
        }
        Value::Float(number) if number.is_nan() => out.push_str("#nan"),
        Value::Float(number) if number.is_infinite() => {
            out.push_str(if *number > 0.0 { "#inf" } else { "#-inf" });
        }
        Value::Float(number) => {
            let _ = write!(out, "{number:?}");
        }
        Value::Bool(true) => out.push_str("#true"),
        Value::Bool(false) => out.push_str("#false"),
        Value::Null => out.push_str("#null"),
    }
}

/// Writes a string bare if it may be an identifier, else quoted and escaped.
fn write_string(out: &mut String, text: &str) {
    if is_bare_identifier(text) {
        out.push_str(text);
        return;
    }
    out.push('"');
    for ch in text.chars() {
        match ch {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{C}' => out.push_str("\\f"),
            '\u{B}' | '\u{85}' | '\u{2028}' | '\u{2029}' => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(ch));
            }
            _ if chars::is_disallowed(ch) => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(ch));
            }
            _ => out.push(ch),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::super::parse;
    use crate::source::SourceId;

    fn canonical(text: &str) -> String {
        let parsed = parse(text, SourceId(0));
        assert!(
            parsed.diagnostics.is_empty(),
            "{text:?}: {:?}",
            parsed.diagnostics
        );
        parsed.document.to_canonical()
    }

    #[test]
    fn prints_the_suite_form() {
        assert_eq!(canonical(""), "\n");
        assert_eq!(canonical("// only a comment\n"), "\n");
        assert_eq!(
            canonical("(t)node z=1 \"arg\" a=#\"x\"# z=2 { child 0x10; empty {} }"),
            "(t)node arg a=x z=2 {\n    child 16\n    empty\n}\n"
        );
        assert_eq!(
            canonical("n 1e-10 1e10 1.5 #inf #-inf #nan -0.0"),
            "n 1e-10 10000000000.0 1.5 #inf #-inf #nan -0.0\n"
        );
        assert_eq!(
            canonical("\"0node\" \"a b\" \"\" true_id \"true\""),
            "\"0node\" \"a b\" \"\" true_id \"true\"\n"
        );
        assert_eq!(
            canonical(r#"n "\"\\\b\f\n\r\t\s" "\u{1}\u{85}" key=(ty)#null"#),
            "n \"\\\"\\\\\\b\\f\\n\\r\\t \" \"\\u{1}\\u{85}\" key=(ty)#null\n"
        );
    }

    #[test]
    fn canonical_output_parses_to_itself() {
        let text = "a \"\\u{7f}x\" (\"my type\")1 { b \"\\u{2028}\" }\n";
        let once = canonical(text);
        assert_eq!(canonical(&once), once);
    }
}
