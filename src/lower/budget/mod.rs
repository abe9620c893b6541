//! Worst-case budget of a plan: agent calls, tool runs, steps, wall time and cost, from
//! loop bounds × route bounds × fan-out × retries × timeouts (`atomic check --budget`).
//!
//! Input: a [`Plan`](super::Plan). Output: a [`Budget`] (human `Display`, serde JSON).
//! Every figure is an upper bound computed on its own: the worst path for agent calls and
//! the worst path for wall time may differ. Not here: subgraph contents (a subgraph's own
//! budget is its workflow's; runs are counted, their contents are not) and actual spend.
//!
//! How (see `estimate.rs`): each block is a region whose statements are collapsed into
//! super-nodes (a `loop` costs `max ×` one iteration of its body region, a `parallel`
//! combines its branch regions); within a region, the worst path is a longest path over
//! the strongly connected components, and a component held together by bounded jumps
//! costs `(1 + Σ max)` × its longest acyclic path.

mod cost;
mod estimate;
mod report;

pub use cost::Dims;
pub use estimate::budget;
pub(super) use report::duration;
pub use report::{Budget, Limits, PerItem};
