//! The KDL document tree our parser produces: every node, entry, value and comment keeps its
//! span. Equality ignores nothing, so tests compare through [`Document::to_canonical`] —
//! the same normalised text the `kdl` crate's conformance suite uses.

pub use compact_str::CompactString;

use crate::source::Span;

/// A whole file, or the children block of a node.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Document {
    /// Nodes in order, slashdash-commented ones removed.
    pub nodes: Vec<Node>,
    /// The whole range (for a children block: from `{` to `}` inclusive).
    pub span: Span,
}

/// A node: `(type)name arg key=value { children }`.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    /// The optional type annotation (boxed: rare, and it would double the size of a node).
    pub ty: Option<Box<Ident>>,
    /// The node name.
    pub name: Ident,
    /// Arguments and properties in source order, slashdashed ones removed. Duplicate
    /// property keys are all kept (KDL says the last wins; atomic reports duplicates).
    pub entries: Vec<Entry>,
    /// The children block, if written (even empty `{}`).
    pub children: Option<Document>,
    /// From the type annotation (or name) to the end of the node's terminator-less text:
    /// the name through the closing `}` or last entry.
    pub span: Span,
}

/// An identifier or string used as a name, key or type annotation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ident {
    /// The decoded value (escapes resolved, quotes removed); short ones are stored inline.
    pub value: CompactString,
    /// Where it was written, quotes included.
    pub span: Span,
}

/// An argument (`key` is `None`) or a property.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    /// The property key, or `None` for an argument.
    pub key: Option<Ident>,
    /// The optional type annotation of the value (boxed: rare).
    pub ty: Option<Box<Ident>>,
    /// The decoded value.
    pub value: Value,
    /// Where the value literal was written (without key or type annotation).
    pub value_span: Span,
    /// The whole entry: key, `=`, annotation and value.
    pub span: Span,
}

/// A KDL value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// Any string form: identifier string, quoted, multi-line or raw.
    String(CompactString),
    /// An integer literal in any base (KDL allows arbitrary size; we keep 128 bits, like
    /// the `kdl` crate).
    Integer(i128),
    /// A decimal or exponent literal, or `#inf`, `#-inf`, `#nan`.
    Float(f64),
    /// `#true` or `#false`.
    Bool(bool),
    /// `#null`.
    Null,
}

/// A comment and where it is. Slashdashed nodes/entries/blocks count as comments too.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Comment {
    /// The whole comment including its delimiters.
    pub span: Span,
    /// Which kind.
    pub kind: CommentKind,
}

/// The kinds of KDL comment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CommentKind {
    /// `// …` to the end of the line.
    Line,
    /// `/* … */`, possibly nested.
    Block,
    /// `/-` and the node, entry or children block it comments out.
    Slashdash,
}

#[cfg(all(test, target_pointer_width = "64"))]
mod tests {
    use super::*;

    /// Every node and entry is written, moved and freed once per parse: their size is
    /// parse speed (BENCHMARKS.md, "KDL parser").
    #[test]
    fn tree_types_stay_small() {
        assert_eq!(size_of::<Ident>(), 40);
        assert_eq!(size_of::<Value>(), 32);
        assert_eq!(size_of::<Entry>(), 112);
        assert_eq!(size_of::<Node>(), 128);
    }
}
