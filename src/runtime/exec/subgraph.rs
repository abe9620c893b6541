//! `subgraph`: runs another workflow's plan to its end as one step of this one, with
//! `input` mappings in and `output` mappings (caller field ← callee field) out. The callee's
//! steps are committed under the subgraph's scope as they complete, so a resumed run
//! continues the callee from its last committed step; a wait in the callee pauses the run
//! there.

use std::sync::Arc;

use serde_json::{Map, Value};

use super::{Halt, Place};
use crate::ir::{ErrorClass, NodeIdx, Subgraph};
use crate::runtime::frame::{Frame, Write};
use crate::runtime::shared::Shared;
use crate::runtime::walk::{Block, Stop, resume_block, walk_block};
use crate::runtime::{NodeError, RunContext};

pub(super) async fn execute(
    shared: &Arc<Shared>,
    frame: &Frame,
    node: NodeIdx,
    subgraph: &Subgraph,
    seq: u64,
    place: &Place<'_>,
) -> Result<Vec<Write>, Halt> {
    let id = shared.id(node).clone();
    let loader = shared.ctx.subgraphs.as_ref().ok_or_else(|| {
        NodeError::fatal(format!(
            "`{id}` runs a subgraph, but this run cannot load workflows"
        ))
    })?;
    let path = shared.ctx.base_dir.join(subgraph.file());
    let plan = loader
        .load(&path)
        .map_err(|message| NodeError::new(ErrorClass::Provider, format!("`{id}`: {message}")))?;
    let scope = shared.scope(frame, Some(node), seq);
    let mut inputs = Map::new();
    for (name, template) in &subgraph.inputs {
        inputs.insert(
            name.value.clone(),
            shared.program.templates.eval_json(template, &scope)?,
        );
    }
    drop(scope);

    let mut ctx: RunContext = shared.ctx.clone();
    if let Some(dir) = path.parent() {
        ctx.base_dir = dir.to_path_buf();
    }
    let callee = Shared::new(
        plan,
        ctx,
        shared.program.run_id.clone(),
        &inputs,
        Some(shared),
    )
    .map_err(|error| NodeError::fatal(format!("`{id}`: {error}")))?;
    let callee = Arc::new(callee);
    let block_scope = place.scope.subgraph(&id, &place.entry());
    let mut frame = Frame {
        state: Arc::new(callee.initial_state()),
        outputs: Arc::default(),
        counters: callee.program.plan.new_counters(),
        locals: None,
        error: None,
        branch: frame.branch,
        log: None,
        tree: frame.tree.clone(),
    };
    let resumed = resume_block(
        &callee,
        &mut frame,
        &block_scope,
        callee.program.plan.start(),
        None,
    )?;
    if let Some(cursor) = callee.journal.recovery.latest_tally(&block_scope) {
        callee.restore(cursor);
    }
    let done = if resumed.finished {
        frame
    } else {
        let block = Block {
            shared: callee.clone(),
            frame,
            scope: block_scope,
            number: seq,
            local: resumed.local,
            durable: true,
        };
        walk_block(block, resumed.start, None)
            .await
            .map_err(|stop| match stop {
                Stop::Paused(waits) => Halt::Paused(waits),
                Stop::Failed { node, error } => NodeError {
                    message: format!("`{id}` failed at `{node}`: {}", error.message),
                    ..error
                }
                .into(),
                Stop::Limit(message) => NodeError::fatal(format!("`{id}`: {message}")).into(),
                Stop::Cancelled => NodeError::fatal(format!("`{id}` was cancelled")).into(),
                Stop::Store(error) => NodeError::fatal(format!("`{id}`: {error}")).into(),
                Stop::Workspace(message) => NodeError::fatal(format!("`{id}`: {message}")).into(),
            })?
    };
    {
        let theirs = callee.tally();
        let mut ours = shared.tally();
        ours.usage.add(theirs.usage);
        ours.cost_usd += theirs.cost_usd;
    }
    let state = done.state.to_json();
    let mut writes = Vec::with_capacity(subgraph.outputs.len() + 1);
    for (field, from) in &subgraph.outputs {
        let idx = shared.program.schema.find(&field.value).ok_or_else(|| {
            NodeError::fatal(format!("no state field `{}` is declared", field.value))
        })?;
        let value = state.get(&from.value).cloned().unwrap_or(Value::Null);
        writes.push(Write::Field(idx, value));
    }
    writes.push(Write::Output(id, state));
    Ok(writes)
}
