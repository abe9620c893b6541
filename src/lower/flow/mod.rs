//! The flow checks: what must hold of a lowered plan for the interpreter to run it safely
//! (see the invariants in `lower/plan.rs`). Each check is one file; [`check`] runs them all.
//!
//! Input: a [`Plan`](super::Plan) (which owns its IR). Output: diagnostics. Not here:
//! building the plan (`lower/build`) or data-flow checks over templates (`check::analyze`).

mod blocks;
mod cycles;
mod describe;
mod facts;
mod parallel;
mod reachability;
mod shadowing;
mod termination;
mod walk;

use facts::Facts;

use crate::diagnostic::Diagnostic;

use super::Plan;

/// Runs every flow check, returning what they found sorted by position then code.
pub(super) fn check(plan: &Plan) -> Vec<Diagnostic> {
    let facts = Facts::compute(plan);
    let mut diagnostics = Vec::new();
    blocks::check_decisions_total(plan, &mut diagnostics);
    blocks::check_loops_bounded(plan, &mut diagnostics);
    blocks::check_blocks_not_empty(plan, &mut diagnostics);
    shadowing::check_goto_shadows_next(plan, &mut diagnostics);
    reachability::check_reachable(plan, &facts, &mut diagnostics);
    termination::check_path_to_end(plan, &facts, &mut diagnostics);
    cycles::check_cycles_bounded(plan, &facts, &mut diagnostics);
    parallel::check_jumps_stay_in_branch(plan, &mut diagnostics);
    diagnostics.sort_by_key(|diagnostic| (diagnostic.span, diagnostic.code));
    diagnostics
}
