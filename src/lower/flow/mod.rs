//! The flow checks: what must hold of a lowered plan for the interpreter to run it safely
//! (see the invariants in `lower/plan.rs`). Each check is one file; [`check`] runs them all.
//!
//! Input: a [`Plan`](super::Plan) (which owns its IR). Output: diagnostics. Not here:
//! building the plan (`lower/build`), data-flow checks over templates (`check::analyze`),
//! and the per-statement rules `check::resolve` reports while reading the IR
//! (`missing-otherwise`, `missing-loop-max`, `empty-block`). Those cannot break the plan's
//! invariants anyway: a missing `otherwise` is lowered as a bare one (routing stays total)
//! and a loop without `max` never enters its body.

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
    shadowing::check_goto_shadows_next(plan, &mut diagnostics);
    reachability::check_reachable(plan, &facts, &mut diagnostics);
    termination::check_path_to_end(plan, &facts, &mut diagnostics);
    cycles::check_cycles_bounded(plan, &facts, &mut diagnostics);
    parallel::check_jumps_stay_in_branch(plan, &mut diagnostics);
    diagnostics.sort_by_key(|diagnostic| (diagnostic.span, diagnostic.code));
    diagnostics
}
