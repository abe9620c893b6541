//! Error edges: which `on-error` applies to a step, and where it leads.

use crate::ir::{NodeIdx, NodeKind, OnError, Workflow};
use crate::lower::plan::{EdgeKind, StepIdx};

use super::builder::Builder;

impl Builder {
    /// Adds `from`'s error edge, if any. The handler is the `on-error` of `owner` or, when
    /// it has none, of the nearest enclosing block statement — never past a `parallel`
    /// branch, since a failure inside a branch fails the branch and the parallel's
    /// strategy decides. `retry` and `abort` give no edge (the run fails).
    pub(super) fn error_edge(&mut self, workflow: &Workflow, from: StepIdx, owner: NodeIdx) {
        let mut current = owner;
        // Bounded by the nesting depth: every step goes to a parent, and parents nest.
        for _ in 0..=workflow.nodes.len() {
            let Some(node) = workflow.nodes.get(current.index()) else {
                return;
            };
            if let Some(on_error) = node.on_error.as_deref() {
                match on_error {
                    OnError::Skip { span, .. } => {
                        let fall = self.fall(current);
                        let kind = EdgeKind::Skip { handler: current };
                        self.add_edge(from, fall, kind, None, *span);
                    }
                    OnError::Goto { jump, span, .. } => {
                        let target = self.resolve(*jump, current);
                        let kind = EdgeKind::Recover { handler: current };
                        self.add_edge(from, target, kind, None, *span);
                    }
                    OnError::Retry { .. } | OnError::Abort { .. } => {}
                }
                return;
            }
            let Some(parent) = node.parent else {
                return;
            };
            let leaves_branch = workflow
                .nodes
                .get(parent.index())
                .is_some_and(|parent| matches!(parent.kind, NodeKind::Parallel(_)));
            if leaves_branch {
                return;
            }
            current = parent;
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::lower::testing::{plan, sketch};

    #[test]
    fn skip_goes_to_the_fall_through_and_recover_to_the_recovery_node() {
        let plan = plan(|b| {
            b.tool("a").on_error_skip();
            b.tool("b").on_error_goto("fix");
            b.agent("c").goto("end", None);
            b.agent("fix").recovery();
        });
        let sketch = sketch(&plan);
        assert!(sketch.contains("a -next-> b\na -skip-> b\n"), "{sketch}");
        assert!(
            sketch.contains("b -next-> c\nb -recover-> fix\n"),
            "{sketch}"
        );
    }

    #[test]
    fn statements_inherit_the_enclosing_loops_handler() {
        let plan = plan(|b| {
            b.loop_("l", Some(3), |b| {
                b.tool("t");
                b.tool("u").on_error_abort();
            })
            .on_error_skip();
            b.agent("after");
        });
        let sketch = sketch(&plan);
        assert!(sketch.contains("t -skip-> after\n"), "{sketch}");
        assert!(
            !sketch.contains("u -skip"),
            "explicit abort does not inherit: {sketch}"
        );
        // No `while`/`until`: head and tail cannot fail.
        assert!(!sketch.contains("l -skip"), "{sketch}");
    }

    #[test]
    fn failures_do_not_propagate_past_a_parallel_branch() {
        let plan = plan(|b| {
            b.parallel("p", |b| {
                b.tool("t");
            })
            .on_error_skip();
            b.agent("after");
        });
        let sketch = sketch(&plan);
        assert!(!sketch.contains("t -skip"), "{sketch}");
        assert!(sketch.contains("p -skip-> after\n"), "{sketch}");
    }
}
