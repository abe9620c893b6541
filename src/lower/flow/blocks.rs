//! Checks on single statements that the graph's shape depends on: every `decision` has an
//! `otherwise` (routing is total), every `loop` has a `max` (iteration is bounded), and no
//! block is empty.

use crate::diagnostic::{Code, Diagnostic};
use crate::ir::NodeKind;
use crate::lower::Plan;

/// `missing-otherwise`: a decision whose `when`s may all be false has nowhere to go. The
/// plan lowers a missing `otherwise` as a bare one, but the interpreter may only run plans
/// whose routing was written out.
pub(super) fn check_decisions_total(plan: &Plan, diagnostics: &mut Vec<Diagnostic>) {
    for node in &plan.workflow().nodes {
        let NodeKind::Decision(decision) = &node.kind else {
            continue;
        };
        if decision.otherwise.is_some() {
            continue;
        }
        let mut diagnostic = Diagnostic::new(
            Code::MissingOtherwise,
            node.id.span,
            format!("decision `{}` has no `otherwise`", node.id.value),
        )
        .label("when no `when` holds, this decision has nowhere to go")
        .help(
            "add `otherwise goto=\"…\"`, or a bare `otherwise` to continue with the next statement",
        );
        if let Some(last) = decision.routes.last() {
            diagnostic = diagnostic.with_label(last.span, "the last route");
        }
        diagnostics.push(diagnostic);
    }
}

/// `missing-loop-max`: every loop must be bounded, whatever its `until` or `while` says.
pub(super) fn check_loops_bounded(plan: &Plan, diagnostics: &mut Vec<Diagnostic>) {
    for node in &plan.workflow().nodes {
        let NodeKind::Loop(ir) = &node.kind else {
            continue;
        };
        if ir.max.is_some() {
            continue;
        }
        diagnostics.push(
            Diagnostic::new(
                Code::MissingLoopMax,
                node.id.span,
                format!("loop `{}` has no `max`", node.id.value),
            )
            .label("this loop could run forever")
            .help(
                "add `max=N`: the loop stops after N iterations even if its condition never holds",
            ),
        );
    }
}

/// `empty-block`: a `loop`, `parallel` or branch without statements does nothing.
pub(super) fn check_blocks_not_empty(plan: &Plan, diagnostics: &mut Vec<Diagnostic>) {
    for node in &plan.workflow().nodes {
        let id = &node.id.value;
        match &node.kind {
            NodeKind::Loop(ir) if ir.body.nodes.is_empty() => diagnostics.push(
                Diagnostic::new(
                    Code::EmptyBlock,
                    ir.body.span,
                    format!("loop `{id}` has no statements"),
                )
                .label("nothing to repeat")
                .help("add statements to the loop, or remove it"),
            ),
            NodeKind::Parallel(ir) if ir.branches.is_empty() => diagnostics.push(
                Diagnostic::new(
                    Code::EmptyBlock,
                    node.span,
                    format!("parallel `{id}` has no branches"),
                )
                .label("nothing to run")
                .help("add statements (each one is a branch) or `branch` blocks, or remove it"),
            ),
            NodeKind::Parallel(ir) => {
                for branch in ir
                    .branches
                    .iter()
                    .filter(|branch| branch.body.nodes.is_empty())
                {
                    diagnostics.push(
                        Diagnostic::new(
                            Code::EmptyBlock,
                            branch.body.span,
                            format!("branch `{}` of `{id}` has no statements", branch.name.value),
                        )
                        .label("this branch does nothing")
                        .help("add statements to the branch, or remove it"),
                    );
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::lower::testing::{codes, workflow};

    #[test]
    fn a_decision_without_otherwise_is_an_error() {
        let flow = workflow(|b| {
            b.decision("d", &[("x", "end", None)], None);
        });
        assert_eq!(codes(flow), ["missing-otherwise"]);
        let flow = workflow(|b| {
            b.decision("d", &[("x", "end", None)], Some(("next", None)));
        });
        assert!(codes(flow).is_empty());
    }

    #[test]
    fn a_loop_without_max_is_an_error_and_not_also_an_unbounded_cycle() {
        let flow = workflow(|b| {
            b.loop_("l", None, |b| {
                b.agent("x");
            });
        });
        assert_eq!(codes(flow), ["missing-loop-max"]);
    }

    #[test]
    fn empty_blocks_are_warned_about() {
        let flow = workflow(|b| {
            b.loop_("l", Some(1), |_| {});
            b.parallel("p", |b| {
                b.branch("nothing", |_| {});
                b.agent("x");
            });
            b.parallel("q", |_| {});
        });
        assert_eq!(codes(flow), ["empty-block", "empty-block", "empty-block"]);
    }
}
