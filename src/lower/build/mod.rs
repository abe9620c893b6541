//! IR → graph: creates the steps of every statement in source order, then the edges.
//!
//! Input: a resolved [`Workflow`](crate::ir::Workflow), possibly partial. Output: a
//! [`Plan`](super::Plan). It reports nothing: a partial or invalid IR still lowers (missing
//! targets fall through, a loop without `max` never enters its body) and the flow checks
//! report what is wrong. The shape of the result is documented in `lower/plan.rs`.

mod builder;
mod edges;
mod errors;
mod steps;

pub(super) use builder::build;
