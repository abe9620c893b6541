//! atomic's KDL v2 parser: text → [`Document`] with a span on every node, entry, value and
//! comment. It recovers from errors, so a half-typed file still yields a partial tree.
//! The `kdl` crate is its reference: differential tests run the official conformance cases
//! through both.

mod tree;

pub use tree::{Comment, CommentKind, Document, Entry, Ident, Node, Value};
