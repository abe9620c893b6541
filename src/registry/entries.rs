//! Reading the entries of one KDL node of a declaration file: its positional arguments and
//! properties, each checked for its type, with unknown properties reported. Problems are
//! collected, never fatal.

use crate::diagnostic::{Code, Diagnostic, did_you_mean, expected_one_of};
use crate::source::Spanned;
use crate::syntax::kdl::{Entry, Node, Value};

/// The entries of `node`, split into arguments and the properties it accepts.
pub(super) struct Entries<'n> {
    node: &'n Node,
    arguments: Vec<&'n Entry>,
}

impl<'n> Entries<'n> {
    /// Reads `node`, reporting properties not in `known`.
    pub(super) fn new(node: &'n Node, known: &[&str], out: &mut Vec<Diagnostic>) -> Self {
        for entry in &node.entries {
            let Some(key) = &entry.key else { continue };
            if !known.contains(&key.value.as_str()) {
                let help = did_you_mean(&key.value, known.iter().copied()).map_or_else(
                    || format!("expected one of {}", expected_one_of(known)),
                    |near| format!("did you mean `{near}`?"),
                );
                out.push(
                    Diagnostic::new(
                        Code::UnknownProperty,
                        key.span,
                        format!("`{}` has no property `{}`", node.name.value, key.value),
                    )
                    .label("unknown property")
                    .help(help),
                );
            }
        }
        let arguments = node
            .entries
            .iter()
            .filter(|entry| entry.key.is_none())
            .collect();
        Self { node, arguments }
    }

    /// The positional arguments.
    pub(super) fn arguments(&self) -> &[&'n Entry] {
        &self.arguments
    }

    /// The one string argument every declaration starts with (`argument "<name>"`);
    /// reports a missing one and any extra.
    pub(super) fn name(&self, what: &str, out: &mut Vec<Diagnostic>) -> Option<Spanned<String>> {
        for extra in self.arguments.iter().skip(1) {
            out.push(
                Diagnostic::new(
                    Code::UnexpectedArgument,
                    extra.span,
                    format!("`{}` takes one argument, its {what}", self.node.name.value),
                )
                .label("extra argument")
                .help("remove it, or write it as a property (`key=value`)"),
            );
        }
        match self.arguments.first() {
            Some(entry) => string(entry, out),
            None => {
                out.push(
                    Diagnostic::new(
                        Code::MissingProperty,
                        self.node.name.span,
                        format!("`{}` needs a {what}", self.node.name.value),
                    )
                    .label(format!("no {what}"))
                    .help(format!(
                        "write it after the node name: `{} \"…\"`",
                        self.node.name.value
                    )),
                );
                None
            }
        }
    }

    /// The property `key`, when written.
    pub(super) fn property(&self, key: &str) -> Option<&'n Entry> {
        self.node
            .entries
            .iter()
            .rev()
            .find(|entry| entry.key.as_ref().is_some_and(|k| k.value == key))
    }

    /// A string property.
    pub(super) fn string(&self, key: &str, out: &mut Vec<Diagnostic>) -> Option<Spanned<String>> {
        string(self.property(key)?, out)
    }

    /// A boolean property.
    pub(super) fn boolean(&self, key: &str, out: &mut Vec<Diagnostic>) -> Option<bool> {
        let entry = self.property(key)?;
        match entry.value {
            Value::Bool(value) => Some(value),
            _ => {
                out.push(wrong_type(entry, "a boolean (`#true` or `#false`)"));
                None
            }
        }
    }
}

/// A string value, or a `wrong-type` report.
pub(super) fn string(entry: &Entry, out: &mut Vec<Diagnostic>) -> Option<Spanned<String>> {
    match &entry.value {
        Value::String(text) => Some(Spanned::new(text.to_string(), entry.value_span)),
        _ => {
            out.push(wrong_type(entry, "a string"));
            None
        }
    }
}

fn wrong_type(entry: &Entry, expected: &str) -> Diagnostic {
    Diagnostic::new(
        Code::WrongType,
        entry.value_span,
        format!("expected {expected}"),
    )
    .label("wrong type")
    .help(format!("write {expected} here"))
}
