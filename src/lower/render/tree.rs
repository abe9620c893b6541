//! The nesting the renderers draw: steps inside clusters for loops, parallels and their
//! branches, in source order.

use crate::ir::{Block, NodeIdx, NodeKind, Workflow};
use crate::lower::{Plan, StepIdx, StepKind};

use super::label::cut;

/// One thing to draw at some nesting level.
#[derive(Debug)]
pub(super) enum Item {
    /// A step.
    Step(StepIdx),
    /// A box around steps.
    Cluster(Cluster),
}

/// A loop, a parallel, or a parallel's branch.
#[derive(Debug)]
pub(super) struct Cluster {
    /// Stable id: `n<node>` for a loop or parallel, `n<node>_b<branch>` for a branch.
    pub(super) id: String,
    /// What the box says.
    pub(super) label: String,
    /// Whether it is a loop (drawn differently from parallels).
    pub(super) is_loop: bool,
    /// What is inside.
    pub(super) items: Vec<Item>,
}

/// `Start`, every statement (nested), then `End`.
pub(super) fn tree(plan: &Plan) -> Vec<Item> {
    let mut emitted = vec![false; plan.workflow().nodes.len()];
    let mut items = vec![Item::Step(plan.start())];
    items.extend(block(
        plan,
        plan.workflow(),
        &plan.workflow().body,
        &mut emitted,
    ));
    items.push(Item::Step(plan.end()));
    items
}

/// The cluster id of a loop or parallel node.
pub(super) fn cluster_id(node: NodeIdx) -> String {
    format!("n{}", node.0)
}

fn block(plan: &Plan, workflow: &Workflow, block: &Block, emitted: &mut [bool]) -> Vec<Item> {
    let mut items = Vec::new();
    for &idx in &block.nodes {
        match emitted.get_mut(idx.index()) {
            Some(done) if !*done => *done = true,
            _ => continue, // unknown, or listed twice in a malformed IR
        }
        let Some(entry) = plan.step_of(idx) else {
            continue;
        };
        let node = workflow.node(idx);
        match (&node.kind, plan.step(entry).kind) {
            (NodeKind::Loop(ir), StepKind::LoopHead { tail, .. }) => {
                let mut inner = vec![Item::Step(entry)];
                inner.extend(self::block(plan, workflow, &ir.body, emitted));
                inner.push(Item::Step(tail));
                items.push(Item::Cluster(Cluster {
                    id: cluster_id(idx),
                    label: format!("loop {}", node.id.value),
                    is_loop: true,
                    items: inner,
                }));
            }
            (NodeKind::Parallel(ir), StepKind::Fork { join }) => {
                let mut inner = vec![Item::Step(entry)];
                for (index, branch) in ir.branches.iter().enumerate() {
                    let label = match &ir.for_each {
                        Some(each) if ir.tasks.is_some() => {
                            format!(
                                "for each ready {} of {}",
                                each.as_.value,
                                cut(&each.items.source)
                            )
                        }
                        Some(each) => {
                            format!("for each {} in {}", each.as_.value, cut(&each.items.source))
                        }
                        None => format!("branch {}", branch.name.value),
                    };
                    inner.push(Item::Cluster(Cluster {
                        id: format!("{}_b{index}", cluster_id(idx)),
                        label,
                        is_loop: false,
                        items: self::block(plan, workflow, &branch.body, emitted),
                    }));
                }
                inner.push(Item::Step(join));
                items.push(Item::Cluster(Cluster {
                    id: cluster_id(idx),
                    label: format!("parallel {}", node.id.value),
                    is_loop: false,
                    items: inner,
                }));
            }
            _ => items.push(Item::Step(entry)),
        }
    }
    items
}
