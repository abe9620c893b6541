//! Executing one step: one file per node kind. Each returns the step's [`Write`]s; the
//! walker applies them through the reducers, so executing never touches the frame. A
//! block (a parallel, a subgraph) may instead pause, when waits inside it are pending.

mod agent;
mod arguments;
mod canned;
mod emit;
mod mapping;
mod parallel;
pub(crate) mod permission;
mod sandboxed;
mod set;
mod subgraph;
mod task_file;
mod task_loop;
mod tool;
mod wait;
mod worktree;

use std::sync::Arc;

use serde_json::Map;

use super::NodeError;
use super::frame::{Frame, Write};
use super::hooks::{self, HookEvent};
use super::shared::Shared;
use super::walk::ScopePath;
use crate::ir::{NodeIdx, NodeKind};
use crate::lower::StepIdx;
use crate::store::PendingWait;

pub(crate) use canned::answer as canned_answer;
pub(crate) use set::eval_sets;
pub(crate) use wait::{Question, answer_writes, check_answer, pending_wait};

/// Why a step did not produce its writes.
#[derive(Debug)]
pub(crate) enum Halt {
    /// It failed (its retries and `on-error` apply).
    Failed(NodeError),
    /// Waits inside the block it runs are pending, each committed in its own block.
    Paused(Vec<PendingWait>),
}

impl From<NodeError> for Halt {
    fn from(error: NodeError) -> Self {
        Self::Failed(error)
    }
}

impl From<super::template::TemplateError> for Halt {
    fn from(error: super::template::TemplateError) -> Self {
        Self::Failed(error.into())
    }
}

/// Where a step runs, for the blocks it enters: the walk's block, its committed steps and
/// the step's attempt.
pub(crate) struct Place<'a> {
    pub(crate) scope: &'a ScopePath,
    /// Steps the walk has committed.
    pub(crate) local: u64,
    pub(crate) attempt: u32,
}

impl Place<'_> {
    /// How a block started by this step is numbered in its path: the walk's committed
    /// steps plus one (and the attempt, for a retried block). Built only by a block, so
    /// other steps pay nothing for it.
    pub(crate) fn entry(&self) -> String {
        if self.attempt > 1 {
            format!("{}.{}", self.local + 1, self.attempt)
        } else {
            (self.local + 1).to_string()
        }
    }
}

/// Runs the node of step `at` once, inside its hooks when the workflow has any.
pub(crate) async fn execute(
    shared: &Arc<Shared>,
    frame: &Frame,
    at: StepIdx,
    node: NodeIdx,
    seq: u64,
    place: &Place<'_>,
) -> Result<Vec<Write>, Halt> {
    if shared.program.hooks.is_empty() {
        run_node(shared, frame, at, node, seq, place).await
    } else {
        Box::pin(hooked(shared, frame, at, node, seq, place)).await
    }
}

/// One attempt with its hooks: `node.start`, then `tool.before` (which may block) or
/// `session.start`, the node, `tool.after` or `session.end`, and `node.end`.
async fn hooked(
    shared: &Arc<Shared>,
    frame: &Frame,
    at: StepIdx,
    node: NodeIdx,
    seq: u64,
    place: &Place<'_>,
) -> Result<Vec<Write>, Halt> {
    let ir_kind = &shared.workflow().node(node).kind;
    let kind = ir_kind.name();
    let start = || {
        let mut fields = Map::new();
        fields.insert("kind".into(), kind.into());
        fields.insert("step".into(), seq.into());
        fields
    };
    let end = |result: &Result<Vec<Write>, Halt>| {
        let mut fields = start();
        fields.insert("ok".into(), result.is_ok().into());
        if let Err(Halt::Failed(error)) = result {
            fields.insert("error".into(), error.message.clone().into());
        }
        fields
    };
    let around = match ir_kind {
        NodeKind::Tool(_) => Some((HookEvent::ToolBefore, HookEvent::ToolAfter)),
        NodeKind::Agent(_) => Some((HookEvent::SessionStart, HookEvent::SessionEnd)),
        _ => None,
    };
    hooks::fire(shared, HookEvent::NodeStart, Some(node), start()).await?;
    let result = if let Some((before, after)) = around {
        match hooks::fire(shared, before, Some(node), start()).await {
            Ok(()) => {
                let result = run_node(shared, frame, at, node, seq, place).await;
                hooks::fire(shared, after, Some(node), end(&result)).await?;
                result
            }
            Err(blocked) => Err(blocked.into()),
        }
    } else {
        run_node(shared, frame, at, node, seq, place).await
    };
    // A paused block has not ended: its `node.end` fires when it does, after the resume.
    if !matches!(result, Err(Halt::Paused(_))) {
        hooks::fire(shared, HookEvent::NodeEnd, Some(node), end(&result)).await?;
    }
    result
}

/// Runs the node of step `at` once.
async fn run_node(
    shared: &Arc<Shared>,
    frame: &Frame,
    at: StepIdx,
    node: NodeIdx,
    seq: u64,
    place: &Place<'_>,
) -> Result<Vec<Write>, Halt> {
    let ir = shared.workflow().node(node);
    Ok(match &ir.kind {
        NodeKind::Set(set) => set::execute(shared, frame, node, set, seq)?,
        NodeKind::Emit(emit) => emit::execute(shared, frame, node, emit, seq)?,
        NodeKind::Agent(_) => agent::execute(shared, frame, node, seq, place.scope).await?,
        NodeKind::Tool(tool) => tool::execute(shared, frame, node, tool, seq).await?,
        NodeKind::Subgraph(subgraph) => {
            subgraph::execute(shared, frame, node, subgraph, seq, place).await?
        }
        NodeKind::Parallel(parallel) if parallel.tasks.is_some() => {
            task_loop::execute(shared, frame, at, node, parallel, seq, place).await?
        }
        NodeKind::Parallel(parallel) => {
            parallel::execute(shared, frame, at, node, parallel, seq, place).await?
        }
        // The walker pauses at waits itself.
        NodeKind::Wait(_) | NodeKind::Decision(_) | NodeKind::Loop(_) => {
            return Err(
                NodeError::fatal(format!("`{}` is not an action step", ir.id.value)).into(),
            );
        }
    })
}
