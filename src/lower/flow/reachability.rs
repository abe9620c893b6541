//! `unreachable-node`: statements no path from the start reaches. Error edges count as
//! paths, so a `recovery=#true` node reached only through `on-error "goto"` is reachable.
//! Only the outermost unreachable statement is reported (not every statement inside an
//! unreachable loop), and not a statement already reported by `goto-shadows-next`.

use crate::diagnostic::{Code, Diagnostic};
use crate::ir::NodeIdx;
use crate::lower::Plan;

use super::Facts;
use super::shadowing::shadowed;

pub(super) fn check_reachable(plan: &Plan, facts: &Facts, diagnostics: &mut Vec<Diagnostic>) {
    let workflow = plan.workflow();
    let mut is_shadowed = vec![false; workflow.nodes.len()];
    for (_, next) in shadowed(plan) {
        if let Some(slot) = is_shadowed.get_mut(next.index()) {
            *slot = true;
        }
    }
    let reached = |idx: NodeIdx| {
        plan.step_of(idx)
            .is_some_and(|step| facts.is_reachable(step))
    };
    for (index, node) in workflow.nodes.iter().enumerate() {
        let idx = NodeIdx(u32::try_from(index).expect("fewer than 2^32 nodes"));
        if plan.step_of(idx).is_none()
            || reached(idx)
            || is_shadowed.get(index).copied().unwrap_or(false)
        {
            continue;
        }
        if node.parent.is_some_and(|parent| !reached(parent)) {
            continue;
        }
        diagnostics.push(
            Diagnostic::new(
                Code::UnreachableNode,
                node.id.span,
                format!("`{}` is unreachable", node.id.value),
            )
            .label(format!(
                "no path from the start of the workflow reaches this `{}`",
                node.kind.name()
            ))
            .help(format!(
                "remove it, or lead to it with `goto=\"{}\"` or a `decision` route",
                node.id.value
            )),
        );
    }
}

#[cfg(test)]
mod tests {
    use crate::lower::lower;
    use crate::lower::testing::{codes, workflow};

    #[test]
    fn a_statement_every_route_jumps_over_is_unreachable() {
        let flow = workflow(|b| {
            b.decision("d", &[("x", "c", None)], Some(("c", None)));
            b.agent("b");
            b.agent("c");
        });
        let outcome = lower(flow);
        assert_eq!(outcome.diagnostics.len(), 1);
        assert_eq!(outcome.diagnostics[0].code.name(), "unreachable-node");
        assert_eq!(outcome.diagnostics[0].message, "`b` is unreachable");
    }

    #[test]
    fn only_the_outermost_unreachable_statement_is_reported() {
        let flow = workflow(|b| {
            b.decision("d", &[("x", "end", None)], Some(("end", None)));
            b.loop_("l", Some(2), |b| {
                b.agent("inner");
            });
        });
        assert_eq!(codes(flow), ["unreachable-node"]);
    }

    #[test]
    fn a_recovery_node_reached_only_on_error_is_reachable() {
        let flow = workflow(|b| {
            b.tool("t").on_error_goto("fix");
            b.agent("done").goto("end", None);
            b.agent("fix").recovery();
        });
        assert!(codes(flow).is_empty());
    }
}
