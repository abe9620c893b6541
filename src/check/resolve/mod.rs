//! Builds the IR from the [structure](super::structure)-checked tree and resolves names:
//! node ids (`goto`, `use`, `session`, recovery targets), providers and adapters, state
//! fields written by outputs and `set`s. One file per node kind or concern.
//!
//! Recovery: every item is resolved on its own, so one bad item never hides the rest, and
//! the workflow is returned (partial) whenever a `workflow` node exists. Unresolved jumps
//! are left as [`Jump::Next`](crate::ir::Jump::Next) in that partial value.

mod agent;
mod common;
mod decision;
mod default;
mod emit;
mod features;
mod ids;
mod input;
mod looping;
mod mcp;
mod models;
mod names;
mod output;
mod parallel;
mod provider;
mod resolver;
mod sandbox;
mod set;
mod state;
mod statement;
mod subgraph;
mod task_loop;
mod tool;
mod version;
mod wait;
mod workflow;

pub use features::agent_features;
pub use models::check_models;
pub use workflow::resolve;
