//! Stage 3: IR → executable graph. [`lower`] turns an [`ir::Workflow`](crate::ir::Workflow)
//! into a [`Plan`] (a petgraph graph of [`Step`]s and [`Edge`]s) and runs the flow checks
//! the interpreter relies on: reachability, a path to the end, bounded cycles, no jumps
//! across parallel branches, no `goto` shadowing the next statement. Also: the worst-case
//! [`budget`] of a plan and its [`dot`] and [`mermaid`] renderings.
//!
//! Pure: no IO, no environment, no async. Not here: name resolution and data checks
//! (`check`), executing a plan (`runtime`).

mod budget;
mod build;
mod flow;
mod navigate;
mod plan;
mod render;
mod stage;
#[cfg(test)]
pub(crate) mod testing;

pub use budget::{Budget, Dims, Limits, PerItem, budget};
pub use navigate::{BranchEntry, ErrorRoute, LoopParts, RouteEdge};
pub use plan::{
    Bound, BranchRef, CounterIdx, Counters, Edge, EdgeIdx, EdgeKind, Plan, Step, StepIdx, StepKind,
};
pub use render::{Outline, OutlineEdge, OutlineStep, dot, mermaid, outline};
pub use stage::lower;
