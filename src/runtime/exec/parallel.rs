//! `parallel`: branches (or one branch per `for-each` item) run concurrently, at most
//! `max-concurrency` at a time (a semaphore), as futures polled together by the step that
//! runs the parallel — never spawned, so the same code runs as deterministic workflow code
//! on another executor (a branch's work is waiting on its executor's effects; polling
//! them on one task costs nothing). Each branch walks its own
//! copy-on-write frame and records its writes; the join replays them through the reducers
//! in branch order — never completion order — so results are deterministic. `race` and
//! `any` abort the losers and wait for them to be dropped (their tools killed, their
//! provider calls cancelled) before the step ends.
//!
//! Each branch commits its steps under its own scope as they complete, so a resumed run
//! continues every branch from its last committed step: a branch that had finished is not
//! run again (its writes are replayed for the join), and only steps in flight repeat. A
//! branch paused at a wait stops there while its siblings go on; the parallel then pauses
//! with every pending wait, and resumes with the answered branch continuing and the
//! finished ones replayed.
//!
//! With `isolation="worktree"`, each branch works in a git worktree of its own and the
//! branches' changes are merged when the parallel ends (see `worktree`).
//!
//! An `all` parallel whose branches hold only plain `set`s runs them one after another on
//! the current task instead: such a branch never waits, so running it concurrently gains
//! nothing, while a task per branch was most of a small branch's cost (spawn, poll on a
//! worker thread, join). The result is the same, since writes merge in branch order.

use std::sync::Arc;

use futures_util::stream::{FuturesUnordered, StreamExt};
use futures_util::{FutureExt, future::BoxFuture};
use serde_json::{Value, json};
use tokio::sync::Semaphore;

use crate::ir::{Isolation, NodeIdx, NodeKind, Parallel, Strategy};
use crate::lower::StepIdx;
use crate::runtime::NodeError;
use crate::runtime::frame::{Frame, Write};
use crate::runtime::shared::Shared;
use crate::runtime::walk::{Block, Start, Stop, resume_block, walk_block};
use crate::store::PendingWait;

use super::worktree::{ENDED, Worktrees};
use super::{Halt, Place};

struct BranchRun {
    index: u32,
    entry: StepIdx,
    frame: Frame,
}

/// A branch's name in error messages: its `branch` name, or its for-each position (made
/// only when needed: formatting a name per item cost more than running a small branch).
fn branch_name(parallel: &Parallel, index: u32) -> String {
    if parallel.for_each.is_some() {
        return format!("item {index}");
    }
    parallel.branches.get(index as usize).map_or_else(
        || format!("branch {index}"),
        |branch| branch.name.value.clone(),
    )
}

pub(super) async fn execute(
    shared: &Arc<Shared>,
    frame: &Frame,
    at: StepIdx,
    node: NodeIdx,
    parallel: &Parallel,
    seq: u64,
    place: &Place<'_>,
) -> Result<Vec<Write>, Halt> {
    let plan = &shared.program.plan;
    let id = shared.id(node).clone();
    let join = plan
        .join_of(at)
        .ok_or_else(|| NodeError::fatal(format!("`{id}` has no join")))?;
    let branches = plan.branches(at);
    let branch_frame = |counters, locals, index| Frame {
        state: frame.state.clone(),
        outputs: frame.outputs.clone(),
        counters,
        locals,
        error: frame.error.clone(),
        branch: Some(index),
        log: Some(Vec::new()),
        tree: frame.tree.clone(),
    };
    let mut runs = Vec::new();
    if let Some(for_each) = &parallel.for_each {
        let scope = shared.scope(frame, Some(node), seq);
        let items = match shared
            .program
            .templates
            .eval_json(&for_each.items, &scope)?
        {
            Value::Array(items) => items,
            Value::Null => Vec::new(),
            Value::Object(entries) => entries
                .into_iter()
                .map(|(key, value)| json!({"key": key, "value": value}))
                .collect(),
            other => {
                let mut found = other.to_string();
                if found.chars().count() > 60 {
                    found = found.chars().take(57).chain("...".chars()).collect();
                }
                return Err(NodeError::fatal(format!(
                    "`{id}`: `for-each` needs a list (or an object), found `{found}`"
                ))
                .into());
            }
        };
        drop(scope);
        let Some(body) = branches.first() else {
            return Err(NodeError::fatal(format!("`{id}` has no body")).into());
        };
        let name: Arc<str> = Arc::from(for_each.as_.value.as_str());
        let index_name: Arc<str> = Arc::from("index");
        for (position, item) in items.into_iter().enumerate() {
            let index = u32::try_from(position).map_err(|_| NodeError::fatal("too many items"))?;
            let mut counters = frame.counters.clone();
            let entry = plan.take(body.edge, &mut counters);
            let mut locals = frame
                .locals
                .as_ref()
                .map(|locals| locals.as_ref().clone())
                .unwrap_or_default();
            locals.retain(|(local, _)| *local != name && *local != index_name);
            locals.push((
                name.clone(),
                minijinja::Value::from(minijinja::value::Serde(item)),
            ));
            locals.push((index_name.clone(), minijinja::Value::from(position)));
            runs.push(BranchRun {
                index,
                entry,
                frame: branch_frame(counters, Some(Arc::new(locals)), index),
            });
        }
    } else {
        for branch in &branches {
            let mut counters = frame.counters.clone();
            let entry = plan.take(branch.edge, &mut counters);
            runs.push(BranchRun {
                index: branch.index,
                entry,
                frame: branch_frame(counters, frame.locals.clone(), branch.index),
            });
        }
    }
    let count = runs.len();
    if count == 0 {
        return Ok(vec![Write::Output(id, json!({"branches": 0}))]);
    }

    if parallel.strategy == Strategy::All && only_plain_sets(shared, parallel) {
        // Nothing in these branches waits or has effects: they run in turn, in one go,
        // and are committed with the parallel.
        let mut writes = Vec::new();
        for run in runs {
            let block = Block {
                shared: shared.clone(),
                frame: run.frame,
                // Never committed, so never named (a name per item would cost more than
                // running a small branch).
                scope: place.scope.clone(),
                number: seq,
                local: 0,
                durable: false,
            };
            match walk_block(block, Start::At(run.entry), Some(join)).await {
                Ok(done) => writes.extend(done.log.unwrap_or_default()),
                Err(stop) => {
                    return Err(branch_error(&id, &branch_name(parallel, run.index), stop).into());
                }
            }
        }
        writes.push(Write::Output(id, json!({"branches": count})));
        return Ok(writes);
    }

    let entry = place.entry();
    // Branches in worktrees of their own: made as each branch starts, removed as it ends.
    let trees = if parallel.isolation == Isolation::Worktree {
        let at = place.scope.as_str().unwrap_or_default();
        let depth = at.matches('#').count() + 1;
        let where_ = format!("{at}/{id}@{entry}");
        Some(Arc::new(
            Worktrees::begin(shared, frame, &id, &where_, depth).await?,
        ))
    } else {
        None
    };
    let limit = parallel
        .max_concurrency
        .as_ref()
        .map_or(count, |max| (max.value as usize).max(1));
    let semaphore = Arc::new(Semaphore::new(limit));
    let mut set: FuturesUnordered<BoxFuture<'static, (u32, Result<Frame, Stop>)>> =
        FuturesUnordered::new();
    let mut logs: Vec<Option<Vec<Write>>> = vec![None; count];
    // A resumed parallel: branches that had finished are not run again.
    let mut finished_before = None;
    for mut run in runs {
        let scope = place.scope.branch(&id, &entry, run.index);
        let resumed = resume_block(shared, &mut run.frame, &scope, run.entry, Some(join))?;
        if resumed.finished {
            finished_before.get_or_insert(run.index);
            logs[run.index as usize] = Some(run.frame.log.take().unwrap_or_default());
            if let Some(trees) = &trees {
                // It ended as the run stopped, before its worktree went.
                trees.close(&id, run.index, ENDED).await?;
            }
            continue;
        }
        let (shared, trees, semaphore) = (shared.clone(), trees.clone(), semaphore.clone());
        let (id, index) = (id.clone(), run.index);
        set.push(
            async move {
                // The semaphore is never closed; holding the permit bounds concurrency.
                let _permit = semaphore.acquire_owned().await;
                let mut frame = run.frame;
                if let Some(trees) = &trees {
                    match trees.open(&shared, &id, index, &scope).await {
                        Ok(tree) => frame.tree = Some(tree),
                        Err(error) => return (index, Err(Stop::Failed { node: id, error })),
                    }
                }
                let block = Block {
                    shared,
                    frame,
                    scope,
                    number: seq,
                    local: resumed.local,
                    durable: true,
                };
                let walk = walk_block(block, resumed.start, Some(join));
                // A branch that panics fails its parallel, not the process.
                let result = std::panic::AssertUnwindSafe(walk).catch_unwind().await;
                let mut result = result.unwrap_or_else(|_| {
                    Err(Stop::Failed {
                        node: Arc::from("?"),
                        error: NodeError::fatal("the branch panicked"),
                    })
                });
                if let (Some(trees), Ok(_)) = (&trees, &result)
                    && let Err(error) = trees.close(&id, index, ENDED).await
                {
                    result = Err(Stop::Failed { node: id, error });
                }
                (index, result)
            }
            .boxed(),
        );
    }

    let mut last_error = None;
    let mut winner = if matches!(parallel.strategy, Strategy::Race | Strategy::Any) {
        finished_before
    } else {
        None
    };
    let mut paused: Vec<(u32, Vec<PendingWait>)> = Vec::new();
    while winner.is_none()
        && let Some((index, result)) = set.next().await
    {
        let slot = index as usize;
        match result {
            Ok(done) => {
                logs[slot] = Some(done.log.unwrap_or_default());
                if matches!(parallel.strategy, Strategy::Race | Strategy::Any) {
                    winner = Some(index);
                }
            }
            // Its siblings go on; the parallel pauses once they have ended.
            Err(Stop::Paused(waits)) => paused.push((index, waits)),
            Err(stop) => {
                let error = branch_error(&id, &branch_name(parallel, index), stop);
                match parallel.strategy {
                    // The other branches end with what they started before the error
                    // goes on to whatever handles it.
                    Strategy::All | Strategy::Race => {
                        let others = !set.is_empty();
                        drop(set);
                        if others {
                            shared.ctx.executor.dropped_effects_ended().await;
                        }
                        if let Some(trees) = &trees {
                            trees.close_all(&id, count).await;
                        }
                        return Err(error.into());
                    }
                    Strategy::Any => last_error = Some(error),
                }
            }
        }
    }
    // The losers of a race (or `any`) end here, with what they started, and the step
    // ends only once their processes are gone (SIGKILL follows SIGTERM after the grace).
    let losers = !set.is_empty();
    drop(set);
    if losers {
        shared.ctx.executor.dropped_effects_ended().await;
    }
    if let Some(trees) = &trees
        && (winner.is_some() || paused.is_empty())
    {
        // The losers' (and failed branches') work is kept on their chains, not merged.
        trees.close_all(&id, count).await;
    }
    if winner.is_none() && !paused.is_empty() {
        paused.sort_by_key(|(index, _)| *index);
        return Err(Halt::Paused(
            paused.into_iter().flat_map(|(_, waits)| waits).collect(),
        ));
    }
    if parallel.strategy == Strategy::Any && winner.is_none() {
        let error =
            last_error.unwrap_or_else(|| NodeError::fatal(format!("`{id}`: no branch succeeded")));
        return Err(NodeError {
            message: format!("every branch failed; the last: {}", error.message),
            ..error
        }
        .into());
    }
    if let Some(trees) = &trees {
        let merged: Vec<u32> = match winner {
            Some(winner) => vec![winner],
            None => (0..count)
                .filter_map(|index| u32::try_from(index).ok())
                .collect(),
        };
        let named = merged
            .into_iter()
            .map(|index| (index, branch_name(parallel, index)))
            .collect();
        trees.merge(&id, named).await?;
    }
    let mut writes: Vec<Write> = logs.into_iter().flatten().flatten().collect();
    writes.push(Write::Output(
        id,
        match winner {
            Some(winner) => json!({"branches": count, "winner": winner}),
            None => json!({"branches": count}),
        },
    ));
    Ok(writes)
}

/// Whether every branch holds only `set`s with no timeout or retry: branches that never
/// wait, so running them in turn cannot change the result.
fn only_plain_sets(shared: &Shared, parallel: &Parallel) -> bool {
    parallel.branches.iter().all(|branch| {
        branch.body.nodes.iter().all(|&node| {
            let node = shared.workflow().node(node);
            matches!(node.kind, NodeKind::Set(_)) && node.timeout.is_none() && node.retry.is_none()
        })
    })
}

fn branch_error(id: &str, branch: &str, stop: Stop) -> NodeError {
    match stop {
        Stop::Failed { node, error } => NodeError {
            message: format!("`{id}` {branch} failed at `{node}`: {}", error.message),
            ..error
        },
        Stop::Limit(message) => NodeError::fatal(message),
        Stop::Cancelled => NodeError::fatal(format!("`{id}` {branch} was cancelled")),
        Stop::Store(error) => NodeError::fatal(error.to_string()),
        Stop::Workspace(message) => NodeError::fatal(message),
        Stop::Paused(_) => NodeError::fatal(format!("`{id}` {branch} paused where it cannot")),
    }
}
