//! The walker: follows a [`Plan`](crate::lower::Plan) step by step.
//!
//! Every walk is durable: each action step (and each parallel or subgraph, as one step
//! when it ends) is committed to the store — delta, cursor, events — before the walk's
//! next step starts, so `resume` re-runs at most the steps that were in flight. The run's
//! own walk commits unscoped steps; a parallel branch's or a subgraph's walk commits its
//! steps under its block's scope ([`ScopePath`]), each carrying its writes, so a resumed
//! run continues every block from its own last committed step ([`Recovery`]). Structural
//! steps (start, decisions, loop heads and tails, joins) are pure functions of state and
//! counters: they are not committed but re-derived from the committed cursor.
//!
//! By concern: [`attempt`] runs a step with its retries and limits, [`failure`] routes a
//! failure, [`commit`] records a finished step, [`pause`] handles waits, [`scope`] names
//! blocks and recovers them.

mod attempt;
mod block;
mod commit;
mod failure;
mod files;
mod mark;
mod pause;
mod scope;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use super::frame::Frame;
use super::shared::Shared;
use super::{NodeError, RunEvent};
use crate::ir::NodeKind;
use crate::lower::{StepIdx, StepKind};
use crate::store::{PendingWait, StoreError};

pub(crate) use block::resume_block;
pub(crate) use files::any_changes_files;
pub(crate) use mark::{Mark, commit_mark};
pub(crate) use scope::{Recovery, ScopePath};

/// Why a walk stopped early.
#[derive(Debug)]
pub(crate) enum Stop {
    /// A node failed with no `on-error` route.
    Failed { node: Arc<str>, error: NodeError },
    /// A run limit was reached.
    Limit(String),
    /// The run was cancelled.
    Cancelled,
    /// The store failed.
    Store(StoreError),
    /// The workspace's files could not be recorded or put back.
    Workspace(String),
    /// Waits inside blocks are pending (each already committed in its block); the run
    /// pauses once every sibling that does not wait has ended.
    Paused(Vec<PendingWait>),
}

/// How a walk ended.
#[derive(Debug)]
pub(crate) enum WalkEnd {
    /// The workflow's end, or the step the walk was told to stop at (a branch's join).
    Done,
    /// A wait of the run itself paused the run (already committed with the run paused).
    /// Boxed: a pending wait is far larger than the other variant.
    Paused(Box<PendingWait>),
}

/// Where a walk starts.
#[derive(Debug)]
pub(crate) enum Start {
    /// At a step.
    At(StepIdx),
    /// At a wait it is paused at, with the answer given on resume.
    Answer(StepIdx, String),
    /// At a paused `auto-approve` wait, which answers itself at this Unix-ms deadline.
    AutoWait(StepIdx, u64),
    /// At a wait inside a block that is still paused (resumed without its answer).
    StillWaiting(StepIdx),
}

/// A boxed walk, for spawning branches and running subgraphs.
pub(crate) type BoxedWalk = Pin<Box<dyn Future<Output = Result<Frame, Stop>> + Send>>;

/// One walk over a plan: the run's, a parallel branch's or a subgraph's.
pub(crate) struct Walker<'a> {
    pub(crate) shared: &'a Arc<Shared>,
    pub(crate) frame: Frame,
    /// The block this walk runs in ([`ScopePath::top`] for the run itself).
    pub(crate) scope: ScopePath,
    /// The step number this walk's steps see (`run.step`, events): the run's own walk
    /// numbers its steps as it commits them (`None`); a block's steps see the number of
    /// the step that runs the block.
    pub(crate) number: Option<u64>,
    /// Steps this walk has committed.
    pub(crate) local: u64,
    /// Whether it commits its steps: all walks but the branches of a parallel of plain
    /// `set`s, which run in one go and are committed with the parallel.
    pub(crate) durable: bool,
    /// A resumed walk paused at an `auto-approve` wait: when that wait answers itself.
    pub(crate) resumed_auto_at: Option<u64>,
}

impl Walker<'_> {
    /// The number of the step this walk runs next.
    pub(crate) fn step_no(&self) -> u64 {
        self.number
            .unwrap_or_else(|| self.shared.journal.ledger.last() + 1)
    }

    /// Walks from `start` until the end, a pause, or `stop_at`.
    pub(crate) async fn run(
        &mut self,
        start: Start,
        stop_at: Option<StepIdx>,
    ) -> Result<WalkEnd, Stop> {
        let at = match start {
            Start::At(at) => at,
            Start::AutoWait(at, answer_at) => {
                self.resumed_auto_at = Some(answer_at);
                at
            }
            Start::Answer(at, answer) => {
                let node = self.wait_node(at)?;
                self.give_answer(at, node, &answer).await?
            }
            Start::StillWaiting(at) => {
                let node = self.wait_node(at)?;
                return Err(Stop::Paused(vec![self.pending_again(node)?]));
            }
        };
        self.walk(at, stop_at).await
    }

    /// Walks from `at` until the end, a pause, or `stop_at`.
    async fn walk(&mut self, mut at: StepIdx, stop_at: Option<StepIdx>) -> Result<WalkEnd, Stop> {
        let plan = self.shared.program.plan.clone();
        loop {
            if Some(at) == stop_at {
                return Ok(WalkEnd::Done);
            }
            if self.shared.ctx.cancel.is_cancelled() {
                return Err(Stop::Cancelled);
            }
            match plan.step(at).kind {
                StepKind::End => return Ok(WalkEnd::Done),
                StepKind::Start
                | StepKind::Decision
                | StepKind::LoopHead { .. }
                | StepKind::LoopTail { .. }
                | StepKind::Join { .. } => at = self.navigate(at).await?,
                StepKind::Wait => match self.wait(at).await? {
                    Ok(next) => at = next,
                    Err(pending) => return Ok(WalkEnd::Paused(Box::new(pending))),
                },
                _ => at = self.run_step(at).await?,
            }
        }
    }

    /// The node of the wait step `at`.
    fn wait_node(&self, at: StepIdx) -> Result<crate::ir::NodeIdx, Stop> {
        let plan = &self.shared.program.plan;
        plan.step(at)
            .node
            .filter(|_| plan.step(at).kind == StepKind::Wait)
            .ok_or_else(|| Stop::Failed {
                node: plan.step(at).key.clone(),
                error: NodeError::fatal("the walk is not paused at a wait"),
            })
    }

    /// Moves on from a structural step, evaluating its condition if it has one.
    async fn navigate(&mut self, at: StepIdx) -> Result<StepIdx, Stop> {
        let shared = self.shared;
        let plan = &shared.program.plan;
        let step = plan.step(at);
        let needs_scope = match (
            step.kind,
            step.node.map(|node| &shared.workflow().node(node).kind),
        ) {
            (StepKind::Decision, _) => true,
            (StepKind::LoopHead { .. }, Some(NodeKind::Loop(ir))) => ir.while_.is_some(),
            (StepKind::LoopTail { .. }, Some(NodeKind::Loop(ir))) => ir.until.is_some(),
            _ => false,
        };
        let scope = needs_scope.then(|| shared.scope(&self.frame, step.node, self.step_no()));
        let mut eval = |expr: &crate::ir::Expr| -> Result<bool, NodeError> {
            let scope = scope
                .as_ref()
                .expect("a scope is built for steps with conditions");
            Ok(shared.program.templates.truthy(expr, scope)?)
        };
        match plan.next(at, &mut self.frame.counters, &mut eval) {
            Ok(Some(next)) => {
                if step.kind == StepKind::Decision && shared.wants_events() {
                    let node = step.node.expect("a decision has a node");
                    shared.emit(RunEvent::Route {
                        node: shared.id(node).clone(),
                        to: String::from(&*plan.step(next).key),
                    });
                }
                Ok(next)
            }
            Ok(None) => Err(Stop::Failed {
                node: step.key.clone(),
                error: NodeError::fatal(format!("no step follows `{}`", step.key)),
            }),
            Err(error) => {
                let node = step.node.expect("steps with conditions have nodes");
                self.fail(at, node, error, 1, self.shared.ctx.executor.now())
                    .await
            }
        }
    }

    /// The successor of a finished action step.
    fn after(&mut self, at: StepIdx) -> StepIdx {
        let mut never = |_: &crate::ir::Expr| Ok::<bool, NodeError>(false);
        self.shared
            .program
            .plan
            .next(at, &mut self.frame.counters, &mut never)
            .ok()
            .flatten()
            .unwrap_or_else(|| self.shared.program.plan.end())
    }
}

/// A block's walk (a parallel branch, a subgraph) about to start.
pub(crate) struct Block {
    pub(crate) shared: Arc<Shared>,
    pub(crate) frame: Frame,
    pub(crate) scope: ScopePath,
    /// The number of the step that runs the block.
    pub(crate) number: u64,
    /// Steps the block committed before (a resumed block).
    pub(crate) local: u64,
    pub(crate) durable: bool,
}

/// Runs a block's walk from `start` to `stop_at` (or the end), boxed so walks can nest.
pub(crate) fn walk_block(block: Block, start: Start, stop_at: Option<StepIdx>) -> BoxedWalk {
    Box::pin(async move {
        let mut walker = Walker {
            shared: &block.shared,
            frame: block.frame,
            scope: block.scope,
            number: Some(block.number),
            local: block.local,
            durable: block.durable,
            resumed_auto_at: None,
        };
        match walker.run(start, stop_at).await? {
            WalkEnd::Done => Ok(walker.frame),
            WalkEnd::Paused(pending) => Err(Stop::Paused(vec![*pending])),
        }
    })
}
