//! Pass 2: fall-through targets, then every step's out-edges in priority order.

use crate::ir::{Block, Jump, Node, NodeIdx, NodeKind, Route, Workflow};
use crate::lower::plan::{Bound, CounterIdx, EdgeKind, StepIdx};

use super::builder::Builder;

impl Builder {
    /// Computes fall-throughs, then adds the edges of `Start` and of every statement.
    pub(super) fn create_edges(&mut self, workflow: &Workflow) {
        let end = self.end;
        self.block_falls(workflow, &workflow.body, end);
        let first = self.block_entry(&workflow.body, end);
        self.add_edge(self.start, first, EdgeKind::Next, None, workflow.span);
        for (index, node) in workflow.nodes.iter().enumerate() {
            let idx = NodeIdx(u32::try_from(index).expect("fewer than 2^32 nodes"));
            if self.entry(idx).is_some() {
                self.node_edges(workflow, idx, node);
            }
        }
    }

    /// The first step of a block, or `cont` when it is empty.
    fn block_entry(&self, block: &Block, cont: StepIdx) -> StepIdx {
        block
            .nodes
            .iter()
            .find_map(|&node| self.entry(node))
            .unwrap_or(cont)
    }

    /// Records where each statement of `block` (recursively) falls through to: the entry
    /// of the next statement that has one, else `cont`. One backward pass per block.
    fn block_falls(&mut self, workflow: &Workflow, block: &Block, cont: StepIdx) {
        let mut fall = cont;
        let mut falls = Vec::with_capacity(block.nodes.len());
        for &idx in block.nodes.iter().rev() {
            falls.push((idx, fall));
            if let Some(entry) = self.entry(idx) {
                fall = entry;
            }
        }
        for (idx, fall) in falls.into_iter().rev() {
            if let Some(slot) = self.falls.get_mut(idx.index()) {
                if slot.is_some() {
                    continue; // listed twice in a malformed IR: keep the first
                }
                *slot = Some(fall);
            }
            let Some(node) = workflow.nodes.get(idx.index()) else {
                continue;
            };
            let Some(closer) = self.closer(idx) else {
                continue;
            };
            match &node.kind {
                NodeKind::Loop(ir) => self.block_falls(workflow, &ir.body, closer),
                NodeKind::Parallel(ir) => {
                    for branch in &ir.branches {
                        self.block_falls(workflow, &branch.body, closer);
                    }
                }
                _ => {}
            }
        }
    }

    fn node_edges(&mut self, workflow: &Workflow, idx: NodeIdx, node: &Node) {
        let Some(entry) = self.entry(idx) else {
            return;
        };
        let goto_counter = node
            .goto
            .as_ref()
            .and_then(|goto| goto.max.as_ref())
            .map(|_| self.new_counter());
        match &node.kind {
            NodeKind::Agent(_)
            | NodeKind::Tool(_)
            | NodeKind::Wait(_)
            | NodeKind::Subgraph(_)
            | NodeKind::Set(_)
            | NodeKind::Emit(_) => {
                self.exits(entry, idx, node, goto_counter, EdgeKind::Next);
                self.error_edge(workflow, entry, idx);
            }
            NodeKind::Decision(decision) => {
                for (index, route) in decision.routes.iter().enumerate() {
                    let target = self.resolve(route.jump, idx);
                    let bound = self.bound(route.max.as_ref().map(|max| max.value), None);
                    let index = u32::try_from(index).expect("fewer than 2^32 routes");
                    self.add_edge(entry, target, EdgeKind::Route { index }, bound, route.span);
                }
                self.otherwise(entry, idx, node, decision.otherwise.as_ref(), goto_counter);
                self.error_edge(workflow, entry, idx);
            }
            NodeKind::Loop(ir) => {
                let Some(tail) = self.closer(idx) else {
                    return;
                };
                let body = self.block_entry(&ir.body, tail);
                self.add_edge(entry, body, EdgeKind::LoopBody, None, ir.body.span);
                self.exits(entry, idx, node, goto_counter, EdgeKind::LoopExit);
                if ir.while_.is_some() {
                    self.error_edge(workflow, entry, idx);
                }
                let counter = match self.step_kind(entry) {
                    Some(crate::lower::plan::StepKind::LoopHead { counter, .. }) => Some(counter),
                    _ => None,
                };
                let bound = ir.max.as_ref().zip(counter).map(|(max, counter)| Bound {
                    max: max.value,
                    counter,
                });
                let back_span = ir.max.as_ref().map_or(node.span, |max| max.span);
                self.add_edge(tail, entry, EdgeKind::LoopBack, bound, back_span);
                self.exits(tail, idx, node, goto_counter, EdgeKind::LoopExit);
                if ir.until.is_some() {
                    self.error_edge(workflow, tail, idx);
                }
            }
            NodeKind::Parallel(ir) => {
                let Some(join) = self.closer(idx) else {
                    return;
                };
                for (index, branch) in ir.branches.iter().enumerate() {
                    let first = self.block_entry(&branch.body, join);
                    let index = u32::try_from(index).expect("fewer than 2^32 branches");
                    self.add_edge(
                        entry,
                        first,
                        EdgeKind::Branch { index },
                        None,
                        branch.name.span,
                    );
                }
                if ir.branches.is_empty() {
                    self.add_edge(entry, join, EdgeKind::Next, None, node.span);
                }
                self.error_edge(workflow, entry, idx);
                self.exits(join, idx, node, goto_counter, EdgeKind::Next);
            }
        }
    }

    /// A decision's `otherwise` (a missing one acts as a bare `otherwise`; the flow checks
    /// report it). A bare `otherwise` goes to the decision's `goto=` if it has one, else
    /// falls through; a bounded one is followed by a plain fall-through.
    fn otherwise(
        &mut self,
        from: StepIdx,
        idx: NodeIdx,
        node: &Node,
        otherwise: Option<&Route>,
        goto_counter: Option<CounterIdx>,
    ) {
        let jump = otherwise.map_or(Jump::Next, |route| route.jump);
        let max = otherwise.and_then(|route| route.max.as_ref().map(|max| max.value));
        let span = otherwise.map_or(node.span, |route| route.span);
        let (target, bound) = match (&node.goto, jump) {
            (Some(goto), Jump::Next) => {
                let target = self.resolve(goto.jump, idx);
                let goto_max = goto.max.as_ref().map(|max| max.value);
                let bound = match max {
                    Some(max) => self.bound(Some(max), None),
                    None => self.bound(goto_max, goto_counter),
                };
                (target, bound)
            }
            _ => (self.resolve(jump, idx), self.bound(max, None)),
        };
        self.add_edge(from, target, EdgeKind::Otherwise, bound, span);
        if bound.is_some() {
            let fall = self.fall(idx);
            self.add_edge(from, fall, EdgeKind::Next, None, span);
        }
    }

    /// A node's exits: its `goto=` (which wins), then the fall-through unless the goto is
    /// unbounded.
    fn exits(
        &mut self,
        from: StepIdx,
        idx: NodeIdx,
        node: &Node,
        goto_counter: Option<CounterIdx>,
        fall_kind: EdgeKind,
    ) {
        if let Some(goto) = &node.goto {
            let target = self.resolve(goto.jump, idx);
            let bound = self.bound(goto.max.as_ref().map(|max| max.value), goto_counter);
            self.add_edge(from, target, EdgeKind::Goto, bound, goto.span);
            if bound.is_none() {
                return;
            }
        }
        let fall = self.fall(idx);
        self.add_edge(from, fall, fall_kind, None, node.span);
    }

    /// A bound of `max` on `counter`, or on a new counter when none is given.
    fn bound(&mut self, max: Option<u32>, counter: Option<CounterIdx>) -> Option<Bound> {
        let max = max?;
        let counter = counter.unwrap_or_else(|| self.new_counter());
        Some(Bound { max, counter })
    }

    /// The step a jump leads to. An unresolved node (only in a partial IR) falls through.
    pub(super) fn resolve(&self, jump: Jump, owner: NodeIdx) -> StepIdx {
        match jump {
            Jump::Node(target) => self.entry(target).unwrap_or_else(|| self.fall(owner)),
            Jump::End => self.end,
            Jump::Next => self.fall(owner),
        }
    }

    fn step_kind(&self, step: StepIdx) -> Option<crate::lower::plan::StepKind> {
        self.graph.node_weight(step.into()).map(|step| step.kind)
    }
}

#[cfg(test)]
mod tests {
    use crate::lower::testing::{plan, sketch};

    #[test]
    fn statements_fall_through_to_the_end() {
        let plan = plan(|b| {
            b.agent("a");
            b.tool("b");
        });
        assert_eq!(
            sketch(&plan),
            "#start -next-> a\na -next-> b\nb -next-> #end\n"
        );
    }

    #[test]
    fn an_empty_workflow_goes_straight_to_the_end() {
        let plan = plan(|_| {});
        assert_eq!(sketch(&plan), "#start -next-> #end\n");
    }

    #[test]
    fn an_unbounded_goto_replaces_the_fall_through() {
        let plan = plan(|b| {
            b.agent("a").goto("c", None);
            b.agent("b");
            b.agent("c");
        });
        assert!(
            sketch(&plan).contains("a -goto-> c\nb -next-> c\n"),
            "{}",
            sketch(&plan)
        );
    }

    #[test]
    fn a_bounded_goto_is_tried_before_the_fall_through() {
        let plan = plan(|b| {
            b.agent("a");
            b.agent("b").goto("a", Some(3));
        });
        assert!(
            sketch(&plan).contains("b -goto≤3-> a\nb -next-> #end\n"),
            "{}",
            sketch(&plan)
        );
    }

    #[test]
    fn decisions_list_routes_then_otherwise() {
        let plan = plan(|b| {
            b.agent("a");
            b.decision(
                "d",
                &[("x", "a", Some(2)), ("y", "end", None)],
                Some(("next", None)),
            );
            b.agent("c");
        });
        assert!(
            sketch(&plan).contains("d -route0≤2-> a\nd -route1-> #end\nd -otherwise-> c\n"),
            "{}",
            sketch(&plan)
        );
    }

    #[test]
    fn a_bounded_otherwise_is_followed_by_the_fall_through() {
        let plan = plan(|b| {
            b.agent("a");
            b.decision("d", &[("x", "end", None)], Some(("a", Some(4))));
            b.agent("c");
        });
        assert!(
            sketch(&plan).contains("d -otherwise≤4-> a\nd -next-> c\n"),
            "{}",
            sketch(&plan)
        );
    }

    #[test]
    fn a_missing_otherwise_falls_through() {
        let plan = plan(|b| {
            b.decision("d", &[("x", "end", None)], None);
            b.agent("c");
        });
        assert!(
            sketch(&plan).contains("d -otherwise-> c\n"),
            "{}",
            sketch(&plan)
        );
    }

    #[test]
    fn a_decision_goto_is_the_target_of_its_bare_otherwise() {
        let plan = plan(|b| {
            b.decision("d", &[("x", "end", None)], Some(("next", None)))
                .goto("z", None);
            b.agent("c");
            b.agent("z");
        });
        assert!(
            sketch(&plan).contains("d -otherwise-> z\n"),
            "{}",
            sketch(&plan)
        );
    }

    #[test]
    fn loops_have_a_head_body_back_edge_and_exits() {
        let plan = plan(|b| {
            b.loop_("l", Some(5), |b| {
                b.agent("x");
                b.agent("y");
            });
            b.agent("after");
        });
        let expected = "#start -next-> l\n\
                        l -body-> x\n\
                        l -exit-> after\n\
                        x -next-> y\n\
                        y -next-> l#tail\n\
                        l#tail -back≤5-> l\n\
                        l#tail -exit-> after\n\
                        after -next-> #end\n";
        assert_eq!(sketch(&plan), expected);
    }

    #[test]
    fn an_empty_loop_body_goes_from_head_to_tail() {
        let plan = plan(|b| {
            b.loop_("l", Some(1), |_| {});
        });
        assert!(
            sketch(&plan).contains("l -body-> l#tail\n"),
            "{}",
            sketch(&plan)
        );
    }

    #[test]
    fn a_loop_goto_leaves_from_head_and_tail_on_one_counter() {
        let plan = plan(|b| {
            b.agent("a");
            b.loop_("l", Some(2), |b| {
                b.agent("x");
            })
            .goto("a", Some(3));
        });
        let sketch = sketch(&plan);
        assert!(
            sketch.contains("l -body-> x\nl -goto≤3-> a\nl -exit-> #end\n"),
            "{sketch}"
        );
        assert!(sketch.contains("l#tail -back≤2-> l\nl#tail -goto≤3-> a\nl#tail -exit-> #end\n"));
        let head = plan.step_by_key("l").unwrap();
        let tail = plan.step_by_key("l#tail").unwrap();
        let goto_bound = |step| {
            plan.out_edges(step)
                .iter()
                .map(|&edge| plan.edge(edge))
                .find(|edge| edge.kind == crate::lower::EdgeKind::Goto)
                .and_then(|edge| edge.bound)
                .unwrap()
        };
        assert_eq!(goto_bound(head).counter, goto_bound(tail).counter);
    }

    #[test]
    fn parallels_fork_into_branches_that_end_at_the_join() {
        let plan = plan(|b| {
            b.parallel("p", |b| {
                b.agent("x");
                b.branch("two", |b| {
                    b.agent("y");
                    b.agent("z");
                });
                b.branch("empty", |_| {});
            });
        });
        let expected = "#start -next-> p\n\
                        p -branch0-> x\n\
                        p -branch1-> y\n\
                        p -branch2-> p#join\n\
                        x -next-> p#join\n\
                        y -next-> z\n\
                        z -next-> p#join\n\
                        p#join -next-> #end\n";
        assert_eq!(sketch(&plan), expected);
    }

    #[test]
    fn a_parallel_without_branches_goes_from_fork_to_join() {
        let plan = plan(|b| {
            b.parallel("p", |_| {});
        });
        assert!(
            sketch(&plan).contains("p -next-> p#join\n"),
            "{}",
            sketch(&plan)
        );
    }
}
