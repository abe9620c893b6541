//! Stage 2: the KDL tree → the typed [`ir::Workflow`](crate::ir::Workflow).
//!
//! - [`grammar`]: the language definition (`grammar/atomic.grammar.json`), loaded once;
//!   the checker, the language server and the docs read the same data.
//! - `structure`: a generic, data-driven pass that validates the tree against the grammar
//!   (unknown, missing, duplicate and mistyped items) and yields a validated view of it.
//! - `resolve`: builds the IR from that view and resolves names (node ids, providers,
//!   state fields, adapters).
//! - `analyze`: the data, safety and lint rules over the resolved IR (templates, definite
//!   assignment, parallel writes, schema files, subgraph calls, taint, unused declarations).
//!
//! It does not check flow: that is `lower` (the graph). The module is pure: files other
//! than the workflow are read only through [`Files`](crate::source::Files).

mod analyze;
pub mod grammar;
pub mod reach;
mod resolve;
mod structure;
#[cfg(test)]
mod testing;
mod value;

pub use analyze::{
    AnalyzeContext, LoadWorkflow, Read, TemplateError, analyze, expression_reads, load_workflow,
    template_reads,
};
pub use resolve::{agent_features, check_models, resolve};
pub(crate) use structure::{Checked, check_custom_tool};
pub use value::template_env;
/// For the language server: where a string literal's text starts (templates), and what
/// counts as a node id or a name (rename). For `registry`: durations and names in
/// declaration files.
pub(crate) use value::{
    TEMPLATE_ROOTS, hidden_by_as, is_name, is_node_id, parse_duration, template as template_at,
};
