//! Stage 2: the KDL tree → the typed [`ir::Workflow`](crate::ir::Workflow).
//!
//! - [`grammar`]: the language definition (`grammar/atomic.grammar.json`), loaded once;
//!   the checker, the language server and the docs read the same data.
//! - `structure`: a generic, data-driven pass that validates the tree against the grammar
//!   (unknown, missing, duplicate and mistyped items) and yields a validated view of it.
//! - `resolve`: builds the IR from that view and resolves names (node ids, providers,
//!   state fields, adapters).
//!
//! It does not check templates, schemas, subgraph files or flow: those are `analyze` (data
//! and safety rules) and `lower` (the graph). The module is pure: no IO.

pub mod grammar;
mod resolve;
mod structure;
#[cfg(test)]
mod testing;
mod value;

pub use resolve::resolve;
