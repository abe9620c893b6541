//! `no-path-to-end`: reachable statements from which the end can never be reached — the
//! run would be trapped in a cycle of jumps with no way out.
//!
//! Steps that cannot reach the end form a region closed under successors; it is reported
//! once per trap (a strongly connected component with no edge leaving it), at its first
//! statement, not once per step leading into it. In a lowered plan every trap is a cycle of
//! unbounded jumps (bounded edges always have a fall-back), so `unbounded-cycle` skips the
//! cycles reported here.

use std::collections::HashSet;

use petgraph::algo::kosaraju_scc;

use crate::diagnostic::{Code, Diagnostic};
use crate::lower::{Plan, StepIdx};

use super::Facts;
use super::describe::{list, step_name};

pub(super) fn check_path_to_end(plan: &Plan, facts: &Facts, diagnostics: &mut Vec<Diagnostic>) {
    let graph = plan.graph();
    if plan.steps().all(|step| !facts.is_trapped(step)) {
        return;
    }
    let components = kosaraju_scc(graph);
    let mut component_of = vec![usize::MAX; graph.node_count()];
    for (index, component) in components.iter().enumerate() {
        for step in component {
            if let Some(slot) = component_of.get_mut(step.index()) {
                *slot = index;
            }
        }
    }
    for (index, component) in components.iter().enumerate() {
        let mut steps: Vec<StepIdx> = component.iter().map(|&step| step.into()).collect();
        steps.sort();
        let Some(&first) = steps.iter().find(|&&step| plan.node(step).is_some()) else {
            continue;
        };
        if !facts.is_trapped(first) {
            continue;
        }
        let is_sink = component.iter().all(|&step| {
            graph
                .neighbors(step)
                .all(|next| component_of.get(next.index()) == Some(&index))
        });
        if is_sink {
            diagnostics.push(trap(plan, first, &steps));
        }
    }
}

fn trap(plan: &Plan, first: StepIdx, steps: &[StepIdx]) -> Diagnostic {
    let mut seen = HashSet::new();
    let names: Vec<String> = steps
        .iter()
        .filter_map(|&step| plan.node(step))
        .filter(|node| seen.insert(node.id.value.as_str()))
        .map(|node| format!("`{}`", node.id.value))
        .collect();
    let span = plan
        .node(first)
        .map_or(plan.step(first).span, |node| node.id.span);
    let mut diagnostic = Diagnostic::new(
        Code::NoPathToEnd,
        span,
        format!(
            "no path from {} reaches the end of the workflow",
            step_name(plan, first)
        ),
    )
    .label(if names.len() > 1 {
        format!(
            "a run that gets here cycles through {} forever",
            list(&names)
        )
    } else {
        "a run that gets here repeats it forever".to_owned()
    })
    .help(
        "give the cycle a way out: bound a jump with `goto-max=N` or `max=N`, or add a \
         `decision` route to `end` or past the cycle",
    );
    for &step in steps {
        for &edge in plan.out_edges(step) {
            let weight = plan.edge(edge);
            let target = plan.target(edge);
            if weight.kind.is_jump() && steps.binary_search(&target).is_ok() {
                diagnostic = diagnostic
                    .with_label(weight.span, format!("jumps to {}", step_name(plan, target)));
            }
        }
    }
    diagnostic
}

#[cfg(test)]
mod tests {
    use crate::lower::lower;
    use crate::lower::testing::{codes, workflow};

    #[test]
    fn a_cycle_of_unbounded_gotos_is_reported_once_as_a_trap() {
        let flow = workflow(|b| {
            b.agent("first");
            b.agent("a").goto("b", None);
            b.agent("b").goto("a", None);
        });
        let outcome = lower(flow);
        let codes: Vec<_> = outcome.diagnostics.iter().map(|d| d.code.name()).collect();
        assert_eq!(codes, ["no-path-to-end"]);
        let diagnostic = &outcome.diagnostics[0];
        assert_eq!(
            diagnostic.message,
            "no path from `a` reaches the end of the workflow"
        );
        assert_eq!(diagnostic.labels.len(), 2, "both jumps are labelled");
    }

    #[test]
    fn a_bounded_goto_always_leaves_a_way_out() {
        let flow = workflow(|b| {
            b.agent("a").goto("a", Some(3));
        });
        assert!(codes(flow).is_empty());
    }
}
