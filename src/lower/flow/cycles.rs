//! `unbounded-cycle`: every cycle in a plan must pass through a bounded edge — a `loop`'s
//! back edge (bounded by `max`), or a `goto`/route/`otherwise` with `goto-max=`/`max=`.
//! The interpreter relies on this to terminate: it never counts anything else.
//!
//! Method: drop the bounded edges; every strongly connected component that still has a
//! cycle is unbounded (Kosaraju's algorithm: iterative, so a 100,000-step plan cannot
//! overflow the stack as a recursive Tarjan would). It is reported at the jump that closes it (the first backward jump),
//! with the node it jumps back to as a second label. Traps already reported by
//! `no-path-to-end` are skipped; a `loop` without `max` is `missing-loop-max`, not this.

use std::collections::HashSet;

use petgraph::algo::kosaraju_scc;
use petgraph::visit::EdgeFiltered;

use crate::diagnostic::{Code, Diagnostic};
use crate::lower::{EdgeIdx, EdgeKind, Plan, StepIdx};

use super::Facts;
use super::describe::{list, step_name};

pub(super) fn check_cycles_bounded(plan: &Plan, facts: &Facts, diagnostics: &mut Vec<Diagnostic>) {
    let forward = EdgeFiltered::from_fn(plan.graph(), |edge| !edge.weight().is_bounded());
    for component in kosaraju_scc(&forward) {
        let mut steps: Vec<StepIdx> = component.iter().map(|&step| step.into()).collect();
        steps.sort();
        let edges = inner_unbounded_edges(plan, &steps);
        if edges.is_empty() {
            continue; // a single step without a self-loop: no cycle
        }
        if steps.first().is_some_and(|&step| facts.is_trapped(step)) {
            continue;
        }
        diagnostics.push(unbounded(plan, &steps, &edges));
    }
}

/// The unbounded edges with both ends in `steps` (sorted).
fn inner_unbounded_edges(plan: &Plan, steps: &[StepIdx]) -> Vec<EdgeIdx> {
    let mut edges = Vec::new();
    for &step in steps {
        for &edge in plan.out_edges(step) {
            if !plan.edge(edge).is_bounded() && steps.binary_search(&plan.target(edge)).is_ok() {
                edges.push(edge);
            }
        }
    }
    edges
}

fn unbounded(plan: &Plan, steps: &[StepIdx], edges: &[EdgeIdx]) -> Diagnostic {
    // The closing jump: a written jump going backward (or to itself), earliest in source.
    let closing = edges
        .iter()
        .copied()
        .filter(|&edge| {
            let kind = plan.edge(edge).kind;
            (kind.is_jump() || kind.is_error()) && plan.target(edge) <= plan.source(edge)
        })
        .min_by_key(|&edge| (plan.edge(edge).span, edge))
        .or_else(|| edges.first().copied())
        .expect("a cycle has an edge");
    let weight = plan.edge(closing);
    let source = plan.source(closing);
    let target = plan.target(closing);
    let mut seen = HashSet::new();
    let names: Vec<String> = steps
        .iter()
        .filter_map(|&step| plan.node(step))
        .filter(|node| seen.insert(node.id.value.as_str()))
        .map(|node| format!("`{}`", node.id.value))
        .collect();
    let from = step_name(plan, source);
    let to = step_name(plan, target);
    let (label, help) = match weight.kind {
        EdgeKind::Goto => (
            format!("this `goto` jumps back to {to} with no `goto-max`"),
            "add `goto-max=N` to stop jumping after N times, or use a `loop` with `max`".to_owned(),
        ),
        EdgeKind::Route { .. } => (
            format!("this route jumps back to {to} with no `max`"),
            "add `max=N` to the route so it is taken at most N times, or use a `loop` with `max`"
                .to_owned(),
        ),
        EdgeKind::Otherwise => (
            format!("this `otherwise` jumps back to {to} with no `max`"),
            "add `max=N` to the `otherwise`, or use a `loop` with `max`".to_owned(),
        ),
        EdgeKind::Recover { .. } => (
            format!("on failure of {from}, this jumps back to {to}"),
            "a failure that keeps recurring would repeat forever; bound the way back with \
             `goto-max=N`, or retry inside a `loop` with `max`"
                .to_owned(),
        ),
        _ => (
            format!("{from} leads back to {to}"),
            "bound one jump of the cycle with `goto-max=N` or `max=N`, or use a `loop` with `max`"
                .to_owned(),
        ),
    };
    let message = if names.len() > 1 {
        format!("cycle through {} has no bound", list(&names))
    } else {
        format!("{from} repeats itself with no bound")
    };
    let mut diagnostic = Diagnostic::new(Code::UnboundedCycle, weight.span, message)
        .label(label)
        .help(help);
    if let Some(node) = plan.node(target) {
        diagnostic = diagnostic.with_label(node.id.span, "the cycle starts here");
    }
    diagnostic
}

#[cfg(test)]
mod tests {
    use crate::lower::lower;
    use crate::lower::testing::{codes, workflow};

    #[test]
    fn a_route_jumping_back_without_max_is_unbounded() {
        let flow = workflow(|b| {
            b.agent("fix");
            b.tool("test");
            b.decision(
                "gate",
                &[("state.failed", "fix", None)],
                Some(("end", None)),
            );
        });
        let outcome = lower(flow);
        let codes: Vec<_> = outcome.diagnostics.iter().map(|d| d.code.name()).collect();
        assert_eq!(codes, ["unbounded-cycle"]);
        let diagnostic = &outcome.diagnostics[0];
        assert_eq!(
            diagnostic.message,
            "cycle through `fix`, `test` and `gate` has no bound"
        );
        assert_eq!(
            diagnostic.label.as_deref(),
            Some("this route jumps back to `fix` with no `max`")
        );
        assert_eq!(diagnostic.labels[0].message, "the cycle starts here");
    }

    #[test]
    fn routes_with_max_and_loops_are_bounded() {
        let flow = workflow(|b| {
            b.agent("fix");
            b.decision(
                "gate",
                &[("state.failed", "fix", Some(3))],
                Some(("next", None)),
            );
            b.loop_("l", Some(2), |b| {
                b.agent("x");
            });
        });
        assert!(codes(flow).is_empty());
    }

    #[test]
    fn a_recovery_that_jumps_back_is_a_cycle_unless_bounded() {
        let unbounded = workflow(|b| {
            b.agent("fix").recovery();
            b.tool("build").on_error_goto("fix");
        });
        assert_eq!(codes(unbounded), ["unbounded-cycle"]);
        let bounded = workflow(|b| {
            b.tool("build").on_error_goto("fix");
            b.agent("done").goto("end", None);
            b.agent("fix").recovery().goto("build", Some(2));
        });
        assert!(codes(bounded).is_empty());
    }

    #[test]
    fn a_loop_without_max_is_not_also_an_unbounded_cycle() {
        // `missing-loop-max` is reported by `check::resolve`; the plan never enters it.
        let flow = workflow(|b| {
            b.loop_("l", None, |b| {
                b.agent("x");
            });
        });
        assert!(codes(flow).is_empty());
    }

    #[test]
    fn a_self_loop_is_a_cycle() {
        let flow = workflow(|b| {
            b.decision("d", &[("x", "d", None)], Some(("next", None)));
        });
        let outcome = lower(flow);
        assert_eq!(outcome.diagnostics.len(), 1);
        assert_eq!(
            outcome.diagnostics[0].message,
            "`d` repeats itself with no bound"
        );
    }
}
