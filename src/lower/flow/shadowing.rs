//! `goto-shadows-next`: a node whose `goto=` always fires, followed by a statement that
//! nothing else leads to. The lowering is unambiguous — the `goto` wins and the fall-through
//! edge is not created — but that statement can never run, which is rarely meant.
//!
//! Not reported: a `goto` with `goto-max=N` (once used up, control falls through); a `goto`
//! naming the very next statement (redundant, not shadowing); a next statement that some
//! other edge leads to — a jump, a route, an `on-error` — since a statement placed after a
//! `goto` as a jump target (`goto="end"` then the recovery or retry steps) is intended.

use petgraph::Direction;

use crate::diagnostic::{Code, Diagnostic};
use crate::ir::{Jump, NodeIdx};
use crate::lower::Plan;

use super::describe::jump_name;
use super::walk::blocks;

pub(super) fn check_goto_shadows_next(plan: &Plan, diagnostics: &mut Vec<Diagnostic>) {
    let workflow = plan.workflow();
    for (idx, next_idx) in shadowed(plan) {
        let node = workflow.node(idx);
        let next = workflow.node(next_idx);
        if let Some(goto) = &node.goto {
            let target = jump_name(plan, goto.jump);
            diagnostics.push(
                Diagnostic::new(
                    Code::GotoShadowsNext,
                    goto.span,
                    format!(
                        "`goto` on `{}` shadows the next statement `{}`",
                        node.id.value, next.id.value
                    ),
                )
                .label(format!(
                    "after `{}`, control always jumps to {target}",
                    node.id.value
                ))
                .with_label(
                    next.id.span,
                    format!("`{}` never runs after `{}`", next.id.value, node.id.value),
                )
                .help(format!(
                    "a node's `goto` wins over falling through to the next statement; remove the \
                     `goto`, move `{}` elsewhere, or add `goto-max=N` to fall through once the \
                     jump has been taken N times",
                    next.id.value
                )),
            );
        }
    }
}

/// Pairs `(node, next)` where `node`'s unbounded `goto` shadows the statement `next`.
pub(super) fn shadowed(plan: &Plan) -> Vec<(NodeIdx, NodeIdx)> {
    let workflow = plan.workflow();
    let reached = |node: NodeIdx| {
        plan.step_of(node).is_some_and(|step| {
            plan.graph()
                .neighbors_directed(step.into(), Direction::Incoming)
                .next()
                .is_some()
        })
    };
    let mut pairs = Vec::new();
    for block in blocks(workflow) {
        for pair in block.nodes.windows(2) {
            let [idx, next] = *pair else {
                continue;
            };
            if workflow.nodes.get(next.index()).is_none() || reached(next) {
                continue;
            }
            let Some(goto) = workflow
                .nodes
                .get(idx.index())
                .and_then(|node| node.goto.as_ref())
            else {
                continue;
            };
            if goto.max.is_none() && goto.jump != Jump::Node(next) {
                pairs.push((idx, next));
            }
        }
    }
    pairs
}

#[cfg(test)]
mod tests {
    use crate::lower::lower;
    use crate::lower::testing::{codes, workflow};

    #[test]
    fn an_unbounded_goto_before_more_statements_warns_once() {
        let flow = workflow(|b| {
            b.agent("a").goto("c", None);
            b.agent("b");
            b.agent("c");
        });
        let outcome = lower(flow);
        let codes: Vec<_> = outcome.diagnostics.iter().map(|d| d.code.name()).collect();
        assert_eq!(
            codes,
            ["goto-shadows-next"],
            "the shadowed `b` is not also unreachable"
        );
        let diagnostic = &outcome.diagnostics[0];
        assert_eq!(
            diagnostic.message,
            "`goto` on `a` shadows the next statement `b`"
        );
        assert_eq!(diagnostic.labels.len(), 1);
        assert!(diagnostic.help.as_deref().unwrap().contains("wins"));
    }

    #[test]
    fn a_next_statement_reached_by_a_jump_is_not_shadowed() {
        let flow = workflow(|b| {
            b.decision("d", &[("x", "retry", Some(2))], Some(("next", None)));
            b.agent("a").goto("end", None);
            b.agent("retry");
        });
        assert!(codes(flow).is_empty());
    }

    #[test]
    fn bounded_redundant_and_final_gotos_do_not_warn() {
        let flow = workflow(|b| {
            b.agent("a").on_error_goto("fix");
            b.agent("b").goto("a", Some(2));
            b.agent("c").goto("d", None);
            b.agent("d").goto("end", None);
            b.agent("fix").recovery();
        });
        assert!(codes(flow).is_empty());
    }
}
