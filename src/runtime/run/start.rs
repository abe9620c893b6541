//! Starting a run: [`run`] and [`run_with_id`] record the new run with its initial state
//! and walk from the plan's start.

use std::sync::Arc;

use serde_json::{Map, Value};

use super::RunOutcome;
use super::drive::drive;
use crate::lower::Plan;
use crate::runtime::frame::Frame;
use crate::runtime::shared::Shared;
use crate::runtime::walk::Start;
use crate::runtime::{RunContext, RunError};
use crate::store::{NewRun, RunId};

/// Starts a new run of `plan` with `inputs` (checked against the declared inputs,
/// defaults applied).
///
/// # Errors
/// When the run cannot be set up (bad inputs, a missing schema file, a template that does
/// not compile) or the store fails. A failing node is not an error: see
/// [`RunEnd::Failed`](super::RunEnd::Failed).
pub async fn run(
    plan: Arc<Plan>,
    inputs: Map<String, Value>,
    ctx: RunContext,
) -> Result<RunOutcome, RunError> {
    run_with_id(plan, RunId::generate(), inputs, ctx).await
}

/// [`run`] with a chosen run id.
///
/// # Errors
/// As [`run`].
pub async fn run_with_id(
    plan: Arc<Plan>,
    run_id: RunId,
    inputs: Map<String, Value>,
    ctx: RunContext,
) -> Result<RunOutcome, RunError> {
    let shared = Arc::new(Shared::new(plan, ctx, run_id.clone(), &inputs, None)?);
    let state = shared.initial_state();
    let initial = match state.to_json() {
        Value::Object(object) => object,
        _ => Map::new(),
    };
    shared
        .ctx
        .store
        .create_run(NewRun {
            id: run_id.clone(),
            workflow: shared.workflow().name.value.clone(),
            path: shared.ctx.workflow_path.clone(),
            hash: shared.ctx.workflow_hash.clone(),
            inputs: shared.program.input_json.clone(),
            state: initial,
        })
        .await?;
    super::files::record_start(&shared).await?;
    let frame = Frame {
        state: Arc::new(state),
        outputs: Arc::default(),
        counters: shared.program.plan.new_counters(),
        locals: None,
        error: None,
        branch: None,
        log: None,
        tree: None,
    };
    let start = shared.program.plan.start();
    drive(&shared, frame, Start::At(start), 0).await
}
