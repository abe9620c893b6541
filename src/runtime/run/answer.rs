//! Answers: where a resumed run starts given the answer it brings (its own wait, a
//! paused block's wait, an agent's permission request), and the check every answer gets
//! against its wait's type before anything runs, so a refused answer leaves the run paused
//! as it was. [`check_pending_answer`] makes the same judgement without running anything,
//! for an engine that must refuse an answer before it records it (Temporal's validator).

use std::borrow::Cow;
use std::sync::Arc;

use super::ResumeError;
use super::wait_choice::{choose_wait, keys, unrecorded_wait};
use crate::ir::NodeKind;
use crate::lower::Plan;
use crate::providers::PermissionAnswer;
use crate::runtime::cursor::Cursor;
use crate::runtime::shared::Shared;
use crate::runtime::walk::{Recovery, ScopePath, Start};
use crate::runtime::{RunContext, RunError};
use crate::store::{Checkpoint, PendingWait, RunId, RunStatus};

/// Where a resumed run starts: at its own wait with the answer, at an `auto-approve` wait
/// that answers itself, or at its next step (the answer, if any, handed to the paused block
/// or asking agent it is for, checked first). Refuses an answer nothing waits for, and a
/// run paused at waits that gets none.
pub(super) fn start_of(
    shared: &Shared,
    run_id: &RunId,
    checkpoint: &Checkpoint,
    cursor: &Cursor,
    recovery: &Recovery,
    answer: Option<&str>,
    wait: Option<&str>,
) -> Result<Start, RunError> {
    let plan = &shared.program.plan;
    let node_at = |at| plan.node(at).map_or("?", |node| node.id.value.as_str());
    let recorded = &checkpoint.run.waits;
    let block_waits = recovery.waiting();
    let asking = recorded.iter().any(|pending| pending.permission.is_some());
    let not_paused = || ResumeError::NotPaused {
        run: Some(run_id.clone()),
    };
    Ok(match (cursor.next, cursor.waiting, answer) {
        // Paused at its own wait, nothing else can be pending: `--wait` may only name it.
        (Some(at), true, Some(answer)) => {
            let own = [unrecorded_wait(node_at(at).to_owned(), None)];
            choose_wait(Some(run_id), &own, wait)?;
            Start::Answer(at, answer.to_owned())
        }
        // An `auto-approve` wait answers itself at the deadline it was first given.
        (Some(at), true, None) if let Some(answer_at) = cursor.auto_answer_at => {
            Start::AutoWait(at, answer_at)
        }
        (Some(at), true, None) => {
            return Err(ResumeError::AnswerNeeded {
                run: run_id.clone(),
                waits: vec![node_at(at).to_owned()],
            }
            .into());
        }
        (Some(at), false, Some(answer)) if asking || !block_waits.is_empty() => {
            let pending = pending_elsewhere(recorded, recovery, &block_waits);
            let chosen = choose_wait(Some(run_id), &pending, wait)?;
            match &chosen.permission {
                // An agent paused at a permission request: its next call gets the answer.
                Some(pause) => {
                    let answer = parse_permission(chosen, answer)?;
                    recovery.set_permission(chosen.key(), (**pause).clone(), answer);
                }
                None if !block_waits.is_empty() => {
                    let scope = chosen.scope.clone().unwrap_or_default();
                    check_block_answer(plan, &shared.ctx, &scope, &chosen.node_id, answer)?;
                    recovery.set_answer(scope, answer.to_owned());
                }
                None => return Err(not_paused().into()),
            }
            Start::At(at)
        }
        (_, false, Some(_)) => return Err(not_paused().into()),
        (Some(at), false, None) => {
            // Waits that answer themselves need nobody; the others do.
            let stuck = checkpoint.run.status == RunStatus::Paused
                && recorded
                    .iter()
                    .all(|pending| pending.auto_answer_at.is_none());
            if stuck && (!block_waits.is_empty() || asking) {
                return Err(ResumeError::AnswerNeeded {
                    run: run_id.clone(),
                    waits: keys(recorded),
                }
                .into());
            }
            Start::At(at)
        }
        (None, _, _) => Start::At(plan.end()),
    })
}

/// The waits an answer may be for other than the run's own: those on record; for a run
/// stopped before it recorded its pause (a crash), the waits its paused blocks' cursors
/// stand at.
fn pending_elsewhere<'w>(
    recorded: &'w [PendingWait],
    recovery: &Recovery,
    block_waits: &[&str],
) -> Cow<'w, [PendingWait]> {
    if !recorded.is_empty() {
        return Cow::Borrowed(recorded);
    }
    let found = block_waits
        .iter()
        .filter_map(|scope| {
            let node = recovery
                .steps_of(&ScopePath::parse(scope))
                .last()
                .and_then(|cursor| cursor.next_key.clone())?;
            Some(unrecorded_wait(node, Some((*scope).to_owned())))
        })
        .collect();
    Cow::Owned(found)
}

/// `answer` to the permission request `pending`, if it is one of its answers.
fn parse_permission(pending: &PendingWait, answer: &str) -> Result<PermissionAnswer, RunError> {
    PermissionAnswer::parse(answer).map_err(|message| RunError::BadAnswer {
        node: pending.node_id.clone(),
        message,
    })
}

/// Checks `answer` for one of a paused run's `waits` (the one `wait` names, or the only
/// one) against its type, running nothing: for an engine that must refuse an answer before
/// it records it (Temporal's update validator), with the error `resume` would give.
///
/// # Errors
/// [`RunError::BadAnswer`] for an answer that does not fit; [`RunError::Resume`] when no
/// wait, or several, fit `wait`.
pub fn check_pending_answer(
    plan: &Arc<Plan>,
    ctx: &RunContext,
    waits: &[PendingWait],
    answer: &str,
    wait: Option<&str>,
) -> Result<(), RunError> {
    let chosen = choose_wait(None, waits, wait)?;
    if chosen.permission.is_some() {
        return parse_permission(chosen, answer).map(drop);
    }
    check_block_answer(
        plan,
        ctx,
        chosen.scope.as_deref().unwrap_or_default(),
        &chosen.node_id,
        answer,
    )
}

/// Checks an answer for the wait `node` in the block at `scope` (empty: the run's own)
/// before anything runs, so a refused answer leaves the run paused as it was.
fn check_block_answer(
    plan: &Arc<Plan>,
    ctx: &RunContext,
    scope: &str,
    node: &str,
    answer: &str,
) -> Result<(), RunError> {
    // Follow the path through the subgraphs it enters to the workflow the wait is in.
    let mut plan = plan.clone();
    let mut base = ctx.base_dir.clone();
    for level in scope.split('/').filter(|level| !level.is_empty()) {
        // A parallel branch runs in the workflow it is part of.
        if level.contains('#') {
            continue;
        }
        let name = level.split('@').next().unwrap_or_default();
        let Some(NodeKind::Subgraph(subgraph)) = kind_of(&plan, name) else {
            return Err(ResumeError::NotASubgraph {
                scope: scope.to_owned(),
                node: name.to_owned(),
            }
            .into());
        };
        let loader = ctx
            .subgraphs
            .as_ref()
            .ok_or(ResumeError::NoSubgraphLoader)?;
        let path = base.join(subgraph.file());
        plan = loader
            .load(&path)
            .map_err(|message| ResumeError::SubgraphUnloadable { message })?;
        if let Some(dir) = path.parent() {
            base = dir.to_path_buf();
        }
    }
    let Some(NodeKind::Wait(wait)) = kind_of(&plan, node) else {
        return Err(ResumeError::NoSuchWaitNode {
            node: node.to_owned(),
            scope: scope.to_owned(),
        }
        .into());
    };
    crate::runtime::exec::check_answer(wait, &base, ctx.files.as_ref(), answer).map_err(|message| {
        RunError::BadAnswer {
            node: node.to_owned(),
            message,
        }
    })
}

/// The kind of the node `id` of `plan`'s workflow.
fn kind_of<'p>(plan: &'p Plan, id: &str) -> Option<&'p NodeKind> {
    plan.workflow()
        .nodes
        .iter()
        .find(|node| node.id.value == id)
        .map(|node| &node.kind)
}
