//! Executing one step: one file per node kind. Each returns the step's [`Write`]s; the
//! walker applies them through the reducers, so executing never touches the frame.

mod agent;
mod canned;
mod mapping;
mod parallel;
mod set;
mod subgraph;
mod tool;
mod wait;

use std::sync::Arc;

use super::NodeError;
use super::frame::{Frame, Write};
use super::shared::Shared;
use crate::ir::{NodeIdx, NodeKind};
use crate::lower::StepIdx;

pub(crate) use canned::answer as canned_answer;
pub(crate) use set::eval_sets;
pub(crate) use wait::{Question, answer_writes, pending_wait};

/// Runs the node of step `at` once.
pub(crate) async fn execute(
    shared: &Arc<Shared>,
    frame: &Frame,
    at: StepIdx,
    node: NodeIdx,
    seq: u64,
) -> Result<Vec<Write>, NodeError> {
    let ir = shared.workflow().node(node);
    match &ir.kind {
        NodeKind::Set(set) => set::execute(shared, frame, node, set, seq),
        NodeKind::Agent(_) => agent::execute(shared, frame, node, seq).await,
        NodeKind::Tool(tool) => tool::execute(shared, frame, node, tool, seq).await,
        NodeKind::Subgraph(subgraph) => subgraph::execute(shared, frame, node, subgraph, seq).await,
        NodeKind::Parallel(parallel) => {
            parallel::execute(shared, frame, at, node, parallel, seq).await
        }
        NodeKind::Wait(_) => Err(NodeError::fatal(format!(
            "`{}` waits for an answer, which only the top level of a run can do (not a parallel branch or a subgraph)",
            ir.id.value
        ))),
        NodeKind::Decision(_) | NodeKind::Loop(_) => Err(NodeError::fatal(format!(
            "`{}` is not an action step",
            ir.id.value
        ))),
    }
}
