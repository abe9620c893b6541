//! What changed in the steps of an edited workflow, for a resume refused because the run's
//! resume point is no longer where it was.

use std::collections::BTreeSet;

use crate::runtime::shared::Shared;
use crate::store::RunId;

/// The changes between the steps run `run_id` ran and this version of the workflow, one
/// line each: steps the run completed that the workflow no longer has, and steps now
/// before the resume point `resume_at` (a step key) that never ran. Empty when the run's
/// steps cannot be read.
pub(super) async fn changes(shared: &Shared, run_id: &RunId, resume_at: &str) -> Vec<String> {
    let Ok(detail) = shared.ctx.store.run_detail(run_id).await else {
        return Vec::new();
    };
    let ran: BTreeSet<&str> = detail
        .steps
        .iter()
        .map(|step| step.node_id.as_str())
        .collect();
    let workflow = shared.workflow();
    let mut lines = Vec::new();
    for id in &ran {
        // `resume` is the step a migration or reset commits, not a node.
        if *id != "resume" && !workflow.nodes.iter().any(|node| node.id.value == *id) {
            lines.push(format!("`{id}` ran and is no longer in the workflow"));
        }
    }
    let plan = &shared.program.plan;
    let steps: Vec<_> = plan.steps().map(|idx| plan.step(idx)).collect();
    if let Some(at) = steps.iter().position(|step| &*step.key == resume_at) {
        for step in &steps[..at] {
            if let Some(node) = step.node
                && step.kind.is_action()
                && !ran.contains(workflow.node(node).id.value.as_str())
            {
                lines.push(format!(
                    "`{}` is now before `{resume_at}` and never ran",
                    workflow.node(node).id.value
                ));
            }
        }
    } else {
        lines.push(format!("`{resume_at}` is no longer in the workflow"));
    }
    lines
}
