//! The stage function: build the plan, then check it.

use crate::diagnostic::Outcome;
use crate::ir::Workflow;

use super::{Plan, build, flow};

/// Lowers a resolved workflow to its executable [`Plan`] and runs the flow checks.
///
/// The plan is always returned (so the language server and `atomic graph` can show a
/// workflow with problems), but the interpreter may run it only when no diagnostic is an
/// error: the invariants documented in `lower/plan.rs` hold exactly then.
#[must_use]
pub fn lower(workflow: Workflow) -> Outcome<Plan> {
    let plan = build::build(workflow);
    let diagnostics = flow::check(&plan);
    Outcome::new(Some(plan), diagnostics)
}
