//! Completion: node kinds valid in the enclosing block, properties (and enum arguments) of
//! the node being written, values of the property or argument being written (enum choices,
//! node ids, providers, state fields, adapters), and inside `{{ }}` or an expression the
//! variables a template can read (`state.<field>`, `input.<name>`, `outputs.<id>`, `run.…`,
//! `env.…`, and `item`/`index`/`error` where they exist).
//!
//! `context` works out what is being typed from the current line and the KDL tree (the
//! tree alone is not enough: a half-typed property is not a node entry yet); `items` turns
//! that into completion items from the grammar and the file's [`Index`](super::index::Index).

mod complete;
mod context;
mod items;

pub use complete::completion;
