//! The validated view of one KDL node: its spec, and only the arguments, properties and
//! children that passed the structure checks.

use crate::check::grammar::NodeSpec;
use crate::source::Span;
use crate::syntax::kdl::{Entry, Node};

/// A node whose structure was checked. Invalid items are left out (they were reported), so
/// code reading this view never reports them again.
#[derive(Debug)]
pub(crate) struct Checked<'a> {
    /// The node's kind.
    pub(crate) spec: &'static NodeSpec,
    /// The KDL node.
    pub(crate) node: &'a Node,
    /// Arguments by position; `None` where invalid.
    pub(crate) args: Vec<Option<&'a Entry>>,
    /// Valid properties, first occurrence of each key.
    pub(crate) props: Vec<&'a Entry>,
    /// Known children, in order, each checked.
    pub(crate) children: Vec<Checked<'a>>,
}

impl<'a> Checked<'a> {
    /// The valid argument at `position`.
    pub(crate) fn arg(&self, position: usize) -> Option<&'a Entry> {
        self.args.get(position).copied().flatten()
    }

    /// The valid arguments from `position` on (a variadic argument).
    pub(crate) fn args_from(&self, position: usize) -> impl Iterator<Item = &'a Entry> + '_ {
        self.args.iter().skip(position).filter_map(|arg| *arg)
    }

    /// Whether an argument was written at `position`, valid or not.
    pub(crate) fn has_arg(&self, position: usize) -> bool {
        self.args.len() > position
    }

    /// The valid property `key`.
    pub(crate) fn prop(&self, key: &str) -> Option<&'a Entry> {
        self.props
            .iter()
            .copied()
            .find(|entry| entry.key.as_ref().is_some_and(|k| k.value == key))
    }

    /// Whether property `key` was written, valid or not.
    pub(crate) fn wrote(&self, key: &str) -> bool {
        self.node
            .entries
            .iter()
            .any(|entry| entry.key.as_ref().is_some_and(|k| k.value == key))
    }

    /// The written property `key`'s whole entry span, valid or not.
    pub(crate) fn entry_span(&self, key: &str) -> Option<Span> {
        self.node
            .entries
            .iter()
            .find(|entry| entry.key.as_ref().is_some_and(|k| k.value == key))
            .map(|entry| entry.span)
    }

    /// Children of kind `id` (a [`NodeSpec::id`]).
    pub(crate) fn children_of<'s>(&'s self, id: &'s str) -> impl Iterator<Item = &'s Checked<'a>> {
        self.children
            .iter()
            .filter(move |child| child.spec.id == id)
    }

    /// The first child of kind `id`.
    pub(crate) fn child(&self, id: &str) -> Option<&Checked<'a>> {
        self.children.iter().find(|child| child.spec.id == id)
    }

    /// The node name's span.
    pub(crate) fn name_span(&self) -> Span {
        self.node.name.span
    }

    /// The node's KDL name.
    pub(crate) fn name(&self) -> &str {
        &self.node.name.value
    }
}
