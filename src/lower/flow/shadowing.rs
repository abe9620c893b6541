//! `goto-shadows-next`: a node whose `goto=` always fires, followed by more statements in
//! its block. The lowering is unambiguous — the `goto` wins and the fall-through edge is
//! not created — but the statement after it never runs from here, which is rarely meant.
//!
//! A `goto` with `goto-max=N` does not shadow: once used up, control falls through. A
//! `goto` naming the very next statement is redundant, not shadowing. A `recovery=#true`
//! statement after a `goto` is not shadowed either: placing recovery nodes after the main
//! flow (ending in `goto="end"`) is the intended way to reach them only on failure.

use crate::diagnostic::{Code, Diagnostic};
use crate::ir::{Jump, NodeIdx, Workflow};
use crate::lower::Plan;

use super::describe::jump_name;
use super::walk::blocks;

pub(super) fn check_goto_shadows_next(plan: &Plan, diagnostics: &mut Vec<Diagnostic>) {
    let workflow = plan.workflow();
    for (idx, next_idx) in shadowed(workflow) {
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
pub(super) fn shadowed(workflow: &Workflow) -> Vec<(NodeIdx, NodeIdx)> {
    let mut pairs = Vec::new();
    for block in blocks(workflow) {
        for pair in block.nodes.windows(2) {
            let [idx, next] = *pair else {
                continue;
            };
            if workflow
                .nodes
                .get(next.index())
                .is_none_or(|node| node.recovery)
            {
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
