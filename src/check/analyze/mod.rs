//! The data, safety and lint rules of `atomic check`, over the resolved IR.
//!
//! Input: a resolved [`Workflow`](crate::ir::Workflow) and an [`AnalyzeContext`] (its
//! path, a [`Files`](crate::source::Files) view for schema files and called workflows).
//! Output: diagnostics. It does not report what the resolver reports (undefined nodes,
//! state fields, providers; wrong value types) nor what `lower` reports about the graph
//! (reachability, bounded cycles, total routing).
//!
//! Shared facts are computed once ([`model`], [`flow`], [`assigned`], [`taint`], [`callees`]);
//! each rule is one file under `rules/`, documented as *What it does / Why is this bad? /
//! Example / Use instead*. Pure: files are read only through `Files`.
//!
//! [`template_reads`] and [`expression_reads`] are public: the runtime and the language
//! server use them to know what a template reads.

mod assigned;
mod callees;
mod context;
mod driver;
mod edges_by_point;
mod flow;
mod infer;
mod interpreter;
mod model;
mod read_cache;
mod reads;
mod rules;
mod taint;
#[cfg(test)]
mod testing;
mod undeclared;

pub use context::{AnalyzeContext, LoadWorkflow, load_workflow};
pub use driver::analyze;
pub use reads::{Read, TemplateError, expression_reads, template_reads};
