//! `subgraph`: runs another workflow's plan to its end as one step of this one, with
//! `input` mappings in and `output` mappings (caller field ← callee field) out. The callee
//! commits nothing of its own (it is re-run whole if the caller resumes before it).

use std::sync::Arc;

use serde_json::{Map, Value};

use crate::ir::{ErrorClass, NodeIdx, Subgraph};
use crate::runtime::frame::{Frame, Write};
use crate::runtime::interpreter::{Stop, walk_detached};
use crate::runtime::shared::Shared;
use crate::runtime::{NodeError, RunContext};

pub(super) async fn execute(
    shared: &Arc<Shared>,
    frame: &Frame,
    node: NodeIdx,
    subgraph: &Subgraph,
    seq: u64,
) -> Result<Vec<Write>, NodeError> {
    let id = shared.id(node).clone();
    let loader = shared.ctx.subgraphs.as_ref().ok_or_else(|| {
        NodeError::fatal(format!(
            "`{id}` runs a subgraph, but this run cannot load workflows"
        ))
    })?;
    let written = subgraph.path.as_deref().unwrap_or(&subgraph.workflow.value);
    let path = shared.ctx.base_dir.join(written);
    let plan = loader
        .load(&path)
        .map_err(|message| NodeError::new(ErrorClass::Provider, format!("`{id}`: {message}")))?;
    let scope = shared.scope(frame, Some(node), seq);
    let mut inputs = Map::new();
    for (name, template) in &subgraph.inputs {
        inputs.insert(
            name.value.clone(),
            shared.templates.eval_json(template, &scope)?,
        );
    }
    drop(scope);

    let mut ctx: RunContext = shared.ctx.clone();
    if let Some(dir) = path.parent() {
        ctx.base_dir = dir.to_path_buf();
    }
    let callee = super::super::shared::Shared::new(plan, ctx, shared.run_id.clone(), &inputs, true)
        .map_err(|error| NodeError::fatal(format!("`{id}`: {error}")))?;
    let callee = Arc::new(callee);
    let start = callee.plan.start();
    let frame = Frame {
        state: Arc::new(callee.initial_state()),
        outputs: Arc::default(),
        counters: callee.plan.new_counters(),
        locals: None,
        error: None,
        branch: frame.branch,
        log: None,
    };
    let done = walk_detached(callee.clone(), frame, start, None, seq)
        .await
        .map_err(|stop| match stop {
            Stop::Failed { node, error } => NodeError {
                message: format!("`{id}` failed at `{node}`: {}", error.message),
                ..error
            },
            Stop::Limit(message) => NodeError::fatal(format!("`{id}`: {message}")),
            Stop::Cancelled => NodeError::fatal(format!("`{id}` was cancelled")),
            Stop::Store(error) => NodeError::fatal(format!("`{id}`: {error}")),
        })?;
    {
        let theirs = callee.tally();
        let mut ours = shared.tally();
        ours.usage.add(theirs.usage);
        ours.cost_usd += theirs.cost_usd;
    }
    let state = done.state.to_json();
    let mut writes = Vec::with_capacity(subgraph.outputs.len() + 1);
    for (field, from) in &subgraph.outputs {
        let idx = shared.schema.find(&field.value).ok_or_else(|| {
            NodeError::fatal(format!("no state field `{}` is declared", field.value))
        })?;
        let value = state.get(&from.value).cloned().unwrap_or(Value::Null);
        writes.push(Write::Field(idx, value));
    }
    writes.push(Write::Output(id, state));
    Ok(writes)
}
