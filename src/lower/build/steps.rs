//! Pass 1: one step per statement (two per block statement), in source order.

use crate::ir::{Block, NodeIdx, NodeKind, Workflow};
use crate::lower::plan::{BranchRef, StepIdx, StepKind};

use super::builder::Builder;

impl Builder {
    /// Creates `Start` (already made), every statement's steps, then `End`.
    pub(super) fn create_steps(&mut self, workflow: &Workflow) {
        self.block_steps(workflow, &workflow.body, None);
        self.end = self.add_step(StepKind::End, None, workflow.span, None, "#end".into());
    }

    fn block_steps(&mut self, workflow: &Workflow, block: &Block, branch: Option<BranchRef>) {
        for &node in &block.nodes {
            self.node_steps(workflow, node, branch);
        }
    }

    fn node_steps(&mut self, workflow: &Workflow, idx: NodeIdx, branch: Option<BranchRef>) {
        let Some(node) = workflow.nodes.get(idx.index()) else {
            return;
        };
        if self.entry(idx).is_some() {
            // A node listed in two blocks (only in a malformed IR): lower it once.
            return;
        }
        if let Some(slot) = self.branches.get_mut(idx.index()) {
            *slot = branch;
        }
        let id = node.id.value.clone();
        let span = node.span;
        let placeholder = StepIdx(u32::MAX);
        let entry = match &node.kind {
            NodeKind::Agent(_) => self.add_step(StepKind::Agent, Some(idx), span, branch, id),
            NodeKind::Tool(_) => self.add_step(StepKind::Tool, Some(idx), span, branch, id),
            NodeKind::Wait(_) => self.add_step(StepKind::Wait, Some(idx), span, branch, id),
            NodeKind::Subgraph(_) => self.add_step(StepKind::Subgraph, Some(idx), span, branch, id),
            NodeKind::Set(_) => self.add_step(StepKind::Set, Some(idx), span, branch, id),
            NodeKind::Emit(_) => self.add_step(StepKind::Emit, Some(idx), span, branch, id),
            NodeKind::Decision(_) => self.add_step(StepKind::Decision, Some(idx), span, branch, id),
            NodeKind::Loop(ir) => {
                let counter = self.new_counter();
                let kind = StepKind::LoopHead {
                    tail: placeholder,
                    counter,
                };
                let head = self.add_step(kind, Some(idx), span, branch, id.clone());
                self.set_entry(idx, head);
                self.block_steps(workflow, &ir.body, branch);
                let tail_kind = StepKind::LoopTail { head };
                let tail = self.add_step(tail_kind, Some(idx), span, branch, format!("{id}#tail"));
                if let StepKind::LoopHead { tail: link, .. } = self.kind_mut(head) {
                    *link = tail;
                }
                self.set_closer(idx, tail);
                head
            }
            NodeKind::Parallel(ir) => {
                let kind = StepKind::Fork { join: placeholder };
                let fork = self.add_step(kind, Some(idx), span, branch, id.clone());
                self.set_entry(idx, fork);
                for (index, body) in ir.branches.iter().enumerate() {
                    let inner = BranchRef {
                        parallel: idx,
                        index: u32::try_from(index).expect("fewer than 2^32 branches"),
                    };
                    self.block_steps(workflow, &body.body, Some(inner));
                }
                let join_kind = StepKind::Join { fork };
                let join = self.add_step(join_kind, Some(idx), span, branch, format!("{id}#join"));
                if let StepKind::Fork { join: link } = self.kind_mut(fork) {
                    *link = join;
                }
                self.set_closer(idx, join);
                fork
            }
        };
        self.set_entry(idx, entry);
    }

    fn set_entry(&mut self, node: NodeIdx, step: StepIdx) {
        if let Some(slot) = self.entries.get_mut(node.index()) {
            *slot = Some(step);
        }
    }

    fn set_closer(&mut self, node: NodeIdx, step: StepIdx) {
        if let Some(slot) = self.closers.get_mut(node.index()) {
            *slot = Some(step);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::lower::testing::plan;
    use crate::lower::{BranchRef, StepKind};

    #[test]
    fn each_action_kind_gets_its_step_kind() {
        let plan = plan(|b| {
            b.agent("a").timeout_ms(5).retry(2, 1).budget_usd(1.0);
            b.tool("t");
            b.wait("w");
            b.subgraph("s");
            b.set("x");
            b.decision("d", &[], Some(("next", None)));
        });
        let kinds: Vec<StepKind> = plan.steps().map(|s| plan.step(s).kind).collect();
        let expected = [
            StepKind::Start,
            StepKind::Agent,
            StepKind::Tool,
            StepKind::Wait,
            StepKind::Subgraph,
            StepKind::Set,
            StepKind::Decision,
            StepKind::End,
        ];
        assert_eq!(kinds, expected);
        assert!(kinds.iter().filter(|kind| kind.is_action()).count() == 5);
    }

    #[test]
    fn steps_follow_source_order_with_stable_keys() {
        let plan = plan(|b| {
            b.agent("a");
            b.loop_("l", Some(2), |b| {
                b.tool("t");
            });
            b.parallel("p", |b| {
                b.agent("x");
                b.branch("two", |b| {
                    b.set("y");
                });
            });
        });
        let keys: Vec<&str> = plan.steps().map(|s| &*plan.step(s).key).collect();
        assert_eq!(
            keys,
            [
                "#start", "a", "l", "t", "l#tail", "p", "x", "y", "p#join", "#end"
            ]
        );
        let head = plan.step_by_key("l").unwrap();
        let tail = plan.step_by_key("l#tail").unwrap();
        assert!(matches!(plan.step(head).kind, StepKind::LoopHead { tail: t, .. } if t == tail));
        assert_eq!(plan.step(tail).kind, StepKind::LoopTail { head });
        let fork = plan.step_by_key("p").unwrap();
        let join = plan.step_by_key("p#join").unwrap();
        assert_eq!(plan.step(fork).kind, StepKind::Fork { join });
        assert_eq!(plan.step(join).kind, StepKind::Join { fork });
        let parallel = plan.step(fork).node.unwrap();
        let y = plan.step_by_key("y").unwrap();
        assert_eq!(plan.step(y).branch, Some(BranchRef { parallel, index: 1 }));
        assert_eq!(plan.step(fork).branch, None);
        assert_eq!(plan.step_of(parallel), Some(fork));
    }
}
