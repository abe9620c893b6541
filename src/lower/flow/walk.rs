//! Iteration over the IR's blocks, for checks that look at statement order.

use crate::ir::{Block, NodeKind, Workflow};

/// The top-level body, then every loop body and parallel branch body, in arena order.
pub(super) fn blocks(workflow: &Workflow) -> impl Iterator<Item = &Block> {
    std::iter::once(&workflow.body).chain(workflow.nodes.iter().flat_map(|node| {
        let inner: Vec<&Block> = match &node.kind {
            NodeKind::Loop(ir) => vec![&ir.body],
            NodeKind::Parallel(ir) => ir.branches.iter().map(|branch| &branch.body).collect(),
            _ => Vec::new(),
        };
        inner
    }))
}
