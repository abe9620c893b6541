//! The resolver's state (the node arena and the diagnostics found) and the conversions from
//! checked KDL values to IR values.

use crate::diagnostic::{Code, Diagnostic};
use crate::ir::{Duration, Node, NodeIdx, Template};
use crate::source::{Sources, Spanned};
use crate::syntax::kdl::{Entry, Value};

use crate::check::value::{parse_duration, template};

/// What the resolver builds and reports while it walks the tree.
pub(super) struct Resolver<'a> {
    /// The files, for literal offsets.
    pub(super) sources: &'a Sources,
    /// Everything found so far.
    pub(super) out: Vec<Diagnostic>,
    /// Every node, in source order.
    pub(super) nodes: Vec<Node>,
    /// Every `option` child written, checked against its adapter once providers are known.
    pub(super) option_sites: Vec<OptionSite>,
    /// The `as=` names of the for-each parallels and task-loops being resolved, outermost
    /// first: a body inside them reads each.
    pub(super) items_in_scope: Vec<Spanned<String>>,
}

/// One `option "name" value` child, and whose it is.
#[derive(Debug)]
pub(super) struct OptionSite {
    /// The span of the provider or agent node it belongs to.
    pub(super) owner: crate::source::Span,
    /// The option's name as written.
    pub(super) name: Spanned<String>,
    /// Its value.
    pub(super) value: serde_json::Value,
    /// Where the value is written.
    pub(super) value_span: crate::source::Span,
}

/// Collects IR items without spare room. A filtered iterator's `collect` reserves space for
/// four items where one is usual, and the IR of a large file is held through checking and
/// the whole run.
pub(super) fn exact<T>(items: impl Iterator<Item = T>) -> Vec<T> {
    let mut items: Vec<T> = items.collect();
    items.shrink_to_fit();
    items
}

impl<'a> Resolver<'a> {
    /// A resolver starting with the diagnostics found so far.
    pub(super) fn new(sources: &'a Sources, out: Vec<Diagnostic>) -> Self {
        Self {
            sources,
            out,
            nodes: Vec::new(),
            option_sites: Vec::new(),
            items_in_scope: Vec::new(),
        }
    }

    /// Records a diagnostic.
    pub(super) fn report(&mut self, diagnostic: Diagnostic) {
        self.out.push(diagnostic);
    }

    /// A string value.
    pub(super) fn string(&self, entry: Option<&Entry>) -> Option<Spanned<String>> {
        let entry = entry?;
        match &entry.value {
            Value::String(text) => Some(Spanned::new(text.as_str().to_owned(), entry.value_span)),
            _ => None,
        }
    }

    /// A string value as a template (or expression).
    pub(super) fn template(&self, entry: Option<&Entry>) -> Option<Template> {
        let entry = entry?;
        match &entry.value {
            Value::String(text) => Some(template(self.sources, text, entry.value_span)),
            _ => None,
        }
    }

    /// A duration value.
    pub(super) fn duration(&self, entry: Option<&Entry>) -> Option<Spanned<Duration>> {
        let text = self.string(entry)?;
        let duration = parse_duration(&text.value).ok()?;
        Some(Spanned::new(duration, text.span))
    }

    /// A boolean value.
    pub(super) fn boolean(&self, entry: Option<&Entry>) -> Option<bool> {
        match entry?.value {
            Value::Bool(value) => Some(value),
            _ => None,
        }
    }

    /// A number value.
    pub(super) fn number(&self, entry: Option<&Entry>) -> Option<Spanned<f64>> {
        let entry = entry?;
        let value = match entry.value {
            Value::Integer(n) => n as f64,
            Value::Float(x) => x,
            _ => return None,
        };
        Some(Spanned::new(value, entry.value_span))
    }

    /// An integer value that must fit `T`; reports `invalid-value` when it does not.
    pub(super) fn integer<T: TryFrom<i128>>(
        &mut self,
        entry: Option<&Entry>,
    ) -> Option<Spanned<T>> {
        let entry = entry?;
        let Value::Integer(n) = entry.value else {
            return None;
        };
        match T::try_from(n) {
            Ok(value) => Some(Spanned::new(value, entry.value_span)),
            Err(_) => {
                self.report(
                    Diagnostic::new(
                        Code::InvalidValue,
                        entry.value_span,
                        format!("`{n}` is out of range"),
                    )
                    .label("too large")
                    .help("write a smaller number"),
                );
                None
            }
        }
    }

    /// A KDL value as JSON (`#nan` and infinities become `null`).
    pub(super) fn json(value: &Value) -> serde_json::Value {
        match value {
            Value::String(text) => serde_json::Value::from(text.as_str()),
            Value::Integer(n) => i64::try_from(*n)
                .map(serde_json::Value::from)
                .unwrap_or_else(|_| serde_json::Value::from(*n as f64)),
            Value::Float(x) => serde_json::Number::from_f64(*x)
                .map_or(serde_json::Value::Null, serde_json::Value::Number),
            Value::Bool(b) => serde_json::Value::Bool(*b),
            Value::Null => serde_json::Value::Null,
        }
    }

    /// The node at `idx`.
    pub(super) fn node(&self, idx: NodeIdx) -> &Node {
        self.nodes
            .get(idx.index())
            .expect("node indices come from this resolver")
    }

    /// The node at `idx`, mutably.
    pub(super) fn node_mut(&mut self, idx: NodeIdx) -> &mut Node {
        self.nodes
            .get_mut(idx.index())
            .expect("node indices come from this resolver")
    }
}
