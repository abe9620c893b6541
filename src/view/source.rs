//! Where a [`RunView`] comes from when the run is not this process's: the store. Its log has
//! each step's events once the step commits; its checkpoint has the exact state and, while
//! the run goes on, the step that comes next — shown running, since an agent call commits
//! only when it ends. Reading never blocks a running `atomic run` (SQLite in WAL mode).

use serde_json::Value;

use super::run::{NodeState, RunPhase, RunView};
use crate::lower::Outline;
use crate::store::{RunId, Store, StoreError};

/// The view of `run` as `store` has it now.
///
/// # Errors
/// The store cannot be read, or has no such run.
pub async fn load(
    store: &dyn Store,
    run: &RunId,
    outline: &Outline,
) -> Result<RunView, StoreError> {
    let detail = store.run_detail(run).await?;
    let mut view = RunView::from_detail(&detail, outline);
    let checkpoint = store.checkpoint(run).await?;
    view.state = checkpoint.state.clone();
    if view.phase != RunPhase::Running {
        return Ok(view);
    }
    // Before its first commit a run has no cursor: it is at the step after the start.
    let next = match &checkpoint.cursor {
        Some(cursor) => cursor
            .get("next_key")
            .and_then(Value::as_str)
            .map(str::to_owned),
        None => outline
            .steps
            .iter()
            .find(|step| step.kind == "start")
            .and_then(|start| outline.edges.iter().find(|edge| edge.from == start.key))
            .map(|edge| edge.to.clone()),
    };
    if let Some(next) = next
        && let Some(node) = view.nodes.iter_mut().find(|node| node.key == next)
        && node.state != NodeState::Failed
    {
        node.state = NodeState::Running;
    }
    Ok(view)
}
