//! atomic's KDL v2 parser: text → [`Document`] with a span on every node, entry, value and
//! comment. It recovers from errors, so a half-typed file still yields a partial tree.
//! The `kdl` crate is its reference: differential tests run the official conformance cases
//! through both.
//!
//! Layout, bottom up: `chars` (character classes on bytes), `cursor` (position, trivia,
//! diagnostics), `escape`, `string`, `multiline`, `number`, `ident` (tokens), `atom`
//! (a token as a value, `(type)` annotations), `parser` (nodes, entries, children,
//! slashdash, recovery) and `canonical` (the test suite's normalised print).

mod atom;
mod canonical;
mod chars;
mod cursor;
mod escape;
mod ident;
mod multiline;
mod number;
mod parser;
mod string;
mod tree;

pub use parser::{KdlParse, MAX_DEPTH, parse};
pub use tree::{Comment, CommentKind, Document, Entry, Ident, Node, Value};
