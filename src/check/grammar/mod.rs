//! The language definition as data: every node kind with its arguments, properties and
//! children, loaded once from `grammar/atomic.grammar.json`. The structure checker reports
//! against it, and the language server uses it for hover and completion.

mod load;
mod lookup;
mod markdown;
mod spec;

pub use load::grammar;
pub(crate) use markdown::form;
pub use markdown::reference_markdown;
pub use spec::{ArgumentSpec, ChildSpec, Grammar, NodeSpec, PropertySpec, ValueKind};
