//! atomic's KDL v2 parser: text → [`Document`] with a span on every node, entry, value and
//! comment. It recovers from errors, so a half-typed file still yields a partial tree.
//! The `kdl` crate is its reference: differential tests run the official conformance cases
//! through both.
//!
//! Which KDL: v2.0.0 as the official test suite shipped with the `kdl` crate 6.7 encodes
//! it. So `node "a"/-b` is rejected (a slashdash needs whitespace before it; later spec
//! drafts relax this), while `node{}` and `node {}/-{}` are accepted like the reference
//! does. Where the reference departs from the spec (bare `-inf`, `/- /-x`, `#"""x"""#`,
//! `0X10`, U+007F and control characters in comments accepted; `/-node;` rejected) we follow
//! the spec; `tests/integration/kdl_conformance.rs` lists each case. Integers are kept as
//! `i128` (larger ones are reported), floats as `f64`; at most [`MAX_DEPTH`] nested blocks.
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

pub use escape::simple_escape;
pub use parser::{KdlParse, MAX_DEPTH, parse};
pub use tree::{Comment, CommentKind, CompactString, Document, Entry, Ident, Node, Value};
