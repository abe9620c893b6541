//! `goto-across-parallel`: a `goto`, route, `otherwise` or `on-error "goto"` that jumps
//! into or out of a `parallel` branch. Branches are single-entry regions that end at the
//! parallel's join: the interpreter runs each as its own walk from its first statement to
//! the join, so a jump across the boundary has no meaning (which walk continues? which
//! branch's writes count?). Falling off the end of a branch to its join is not a jump.

use std::collections::HashSet;

use crate::diagnostic::{Code, Diagnostic};
use crate::lower::{BranchRef, EdgeKind, Plan, StepIdx, StepKind};
use crate::source::Span;

use super::describe::step_name;

pub(super) fn check_jumps_stay_in_branch(plan: &Plan, diagnostics: &mut Vec<Diagnostic>) {
    let mut reported: HashSet<Span> = HashSet::new();
    for source in plan.steps() {
        for &edge in plan.out_edges(source) {
            let weight = plan.edge(edge);
            if !weight.kind.is_jump() || reported.contains(&weight.span) {
                continue;
            }
            let target = plan.target(edge);
            let from = chain(plan, source);
            if leaves_to_own_join(plan, &from, target) {
                continue;
            }
            let to = chain(plan, target);
            if from == to {
                continue;
            }
            reported.insert(weight.span);
            diagnostics.push(crossing(
                plan,
                source,
                target,
                weight.kind,
                weight.span,
                &from,
                &to,
            ));
        }
    }
}

/// The branches containing `step`, innermost first.
fn chain(plan: &Plan, step: StepIdx) -> Vec<BranchRef> {
    let mut chain = Vec::new();
    let mut current = plan.step(step).branch;
    while let Some(branch) = current {
        if chain.contains(&branch) {
            break; // cannot happen in a built plan; guards the loop
        }
        chain.push(branch);
        current = plan
            .step_of(branch.parallel)
            .and_then(|fork| plan.step(fork).branch);
    }
    chain
}

/// Whether `target` is the join of the parallel whose branch immediately contains the
/// source (a bare `otherwise` at the end of a branch).
fn leaves_to_own_join(plan: &Plan, from: &[BranchRef], target: StepIdx) -> bool {
    let (Some(innermost), StepKind::Join { fork }) = (from.first(), plan.step(target).kind) else {
        return false;
    };
    plan.step(fork).node == Some(innermost.parallel)
}

fn branch_name(plan: &Plan, branch: BranchRef) -> String {
    let parallel = plan.workflow().node(branch.parallel);
    let name = match &parallel.kind {
        crate::ir::NodeKind::Parallel(ir) => ir
            .branches
            .get(branch.index as usize)
            .map_or_else(|| format!("#{}", branch.index), |b| b.name.value.clone()),
        _ => format!("#{}", branch.index),
    };
    format!("branch `{name}` of parallel `{}`", parallel.id.value)
}

fn crossing(
    plan: &Plan,
    source: StepIdx,
    target: StepIdx,
    kind: EdgeKind,
    span: Span,
    from: &[BranchRef],
    to: &[BranchRef],
) -> Diagnostic {
    let what = match kind {
        EdgeKind::Goto => "`goto`",
        EdgeKind::Route { .. } => "route",
        EdgeKind::Otherwise => "`otherwise`",
        _ => "`on-error \"goto\"`",
    };
    let source_name = step_name(plan, source);
    let target_name = step_name(plan, target);
    let entered = to.iter().rev().find(|branch| !from.contains(branch));
    let (message, target_label) = if let Some(&branch) = entered {
        (
            format!(
                "{what} of {source_name} jumps into {}",
                branch_name(plan, branch)
            ),
            format!("{target_name} is inside {}", branch_name(plan, branch)),
        )
    } else {
        let left = from
            .iter()
            .find(|branch| !to.contains(branch))
            .copied()
            .or_else(|| from.first().copied());
        let left = left.map_or_else(|| "a parallel branch".to_owned(), |b| branch_name(plan, b));
        (
            format!("{what} of {source_name} jumps out of {left}"),
            format!("{target_name} is outside the branch"),
        )
    };
    let mut diagnostic = Diagnostic::new(Code::GotoAcrossParallel, span, message)
        .label(format!("jumps to {target_name}"))
        .help(
            "a `parallel` branch runs from its first statement to the parallel's join; keep \
             jumps inside one branch, or jump after the parallel finishes with `goto=` on \
             the `parallel` itself",
        );
    if let Some(node) = plan.node(target)
        && plan.step(target).kind != StepKind::End
    {
        diagnostic = diagnostic.with_label(node.id.span, target_label);
    }
    diagnostic
}

#[cfg(test)]
mod tests {
    use crate::lower::lower;
    use crate::lower::testing::{codes, workflow};

    #[test]
    fn a_goto_out_of_a_branch_is_an_error() {
        let flow = workflow(|b| {
            b.parallel("p", |b| {
                b.agent("x").goto("after", None);
            });
            b.agent("after");
        });
        let outcome = lower(flow);
        assert_eq!(outcome.diagnostics.len(), 1);
        assert_eq!(
            outcome.diagnostics[0].message,
            "`goto` of `x` jumps out of branch `x` of parallel `p`"
        );
    }

    #[test]
    fn a_route_into_a_branch_is_an_error() {
        let flow = workflow(|b| {
            b.decision("d", &[("c", "y", None)], Some(("next", None)));
            b.parallel("p", |b| {
                b.branch("one", |b| {
                    b.agent("x");
                    b.agent("y");
                });
            });
        });
        let outcome = lower(flow);
        assert_eq!(outcome.diagnostics.len(), 1);
        assert_eq!(
            outcome.diagnostics[0].message,
            "route of `d` jumps into branch `one` of parallel `p`"
        );
        assert_eq!(
            outcome.diagnostics[0].labels[0].message,
            "`y` is inside branch `one` of parallel `p`"
        );
    }

    #[test]
    fn jumps_to_the_end_or_a_sibling_branch_cross_the_boundary() {
        let flow = workflow(|b| {
            b.parallel("p", |b| {
                b.agent("x").goto("end", None);
                b.agent("y").goto("z", None);
                b.agent("z");
            });
        });
        assert_eq!(
            codes(flow),
            ["goto-across-parallel", "goto-across-parallel"]
        );
    }

    #[test]
    fn jumps_inside_a_branch_and_bare_otherwise_at_its_end_are_fine() {
        let flow = workflow(|b| {
            b.parallel("p", |b| {
                b.branch("one", |b| {
                    b.agent("x");
                    b.decision("d", &[("again", "x", Some(2))], Some(("next", None)));
                });
            })
            .goto("end", None);
        });
        assert!(codes(flow).is_empty());
    }
}
