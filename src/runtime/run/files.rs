//! The workspace when a run is resumed: the files must be as if each committed step ran
//! once and the step the run continues at never started.
//!
//! The run's snapshot chain says which: its newest snapshot was taken *before* a step (or
//! keeps what a step left when the run stopped in it, or *after* a step the store never
//! committed) when a step was in flight as the run stopped — killed, cancelled, out of time
//! — and its partial edits are put back to the files before it (kept in the chain).
//! Otherwise the newest snapshot is the run's files. Anything that differs from the newest
//! snapshot now was changed while the run was stopped, by no step of it (a run killed
//! mid-step has no record of where its step stopped, so there every difference is the
//! step's): the resume refuses, listing the files, unless told to keep them — then it goes
//! on with the files as they are, and they become the run's.

use std::path::PathBuf;
use std::sync::Arc;

use crate::ir::NodeKind;
use crate::runtime::RunError;
use crate::runtime::event::RunEvent;
use crate::runtime::hooks::HookEvent;
use crate::runtime::shared::Shared;
use crate::store::RunId;
use crate::workspace::snapshot::{Mark, Restored, SnapshotError, Snapshots};

use super::ResumeError;

/// How far back the chain is read for the snapshot before an interrupted step (a step's
/// retries add three entries each).
const LOOK_BACK: usize = 256;

/// What the workspace was found in on resume.
#[derive(Debug)]
enum Found {
    /// As the run left it.
    Settled,
    /// A step was in flight: put back to this tree, the step's name if known.
    InFlight { tree: String, step: Option<String> },
    /// Changed while the run was stopped, by no step.
    Changed(Vec<String>),
}

/// Makes the workspace fit the run about to resume (see the module), telling the run's
/// sink what was put back or kept. `committed`: the snapshots the run's committed cursors
/// name (the last step that recorded files).
///
/// # Errors
/// [`ResumeError::WorkspaceChanged`] when files changed while the run was stopped and
/// `keep_changes` is not set; [`ResumeError::Workspace`] when git fails.
pub(super) async fn settle(
    shared: &Shared,
    run_id: &RunId,
    committed: Vec<String>,
    keep_changes: bool,
) -> Result<Option<RunEvent>, ResumeError> {
    let ctx = &shared.ctx;
    let Some(snapshots) = ctx.executor.snapshots(ctx) else {
        return Ok(None);
    };
    let own = own_files(shared);
    let run = run_id.to_string();
    let failed = |error: SnapshotError| ResumeError::Workspace {
        run: run_id.clone(),
        message: error.to_string(),
    };
    let job = {
        let run = run.clone();
        let snapshots = Arc::clone(&snapshots);
        move || -> Result<Option<RunEvent>, Result<Vec<String>, SnapshotError>> {
            match inspect(&snapshots, &run, &committed, &own).map_err(Err)? {
                Found::Settled => Ok(None),
                Found::InFlight { tree, step } => {
                    // The run's own files (task-loop statuses) are where its committed
                    // steps left them: read before, written back after.
                    let kept_own: Vec<(PathBuf, Vec<u8>)> = own
                        .iter()
                        .filter_map(|(path, _)| Some((path.clone(), std::fs::read(path).ok()?)))
                        .collect();
                    let Restored { kept, paths, .. } = snapshots
                        .restore(
                            &run,
                            &tree,
                            step.as_deref(),
                            "put back on resume: the step was interrupted",
                        )
                        .map_err(Err)?;
                    for (path, text) in kept_own {
                        std::fs::write(&path, text).map_err(|error| {
                            Err(SnapshotError::NotWritable {
                                path,
                                reason: error.to_string(),
                            })
                        })?;
                    }
                    let paths = paths
                        .into_iter()
                        .filter(|path| !own.iter().any(|(_, relative)| relative == path))
                        .collect();
                    Ok(Some(RunEvent::FilesPutBack {
                        node: step.map(Arc::from),
                        paths,
                        kept: kept.commit,
                    }))
                }
                Found::Changed(paths) if keep_changes => {
                    let kept = snapshots
                        .take(
                            &run,
                            Mark::Kept,
                            None,
                            "changed while the run was stopped; kept on resume",
                        )
                        .map_err(Err)?;
                    Ok(Some(RunEvent::FilesKept {
                        paths,
                        snapshot: kept.commit,
                    }))
                }
                Found::Changed(paths) => Err(Ok(paths)),
            }
        }
    };
    match tokio::task::spawn_blocking(job).await {
        Ok(Ok(event)) => Ok(event),
        Ok(Err(Ok(paths))) => Err(ResumeError::WorkspaceChanged {
            run: run_id.clone(),
            paths,
        }),
        Ok(Err(Err(error))) => Err(failed(error)),
        Err(join) => Err(ResumeError::Workspace {
            run: run_id.clone(),
            message: join.to_string(),
        }),
    }
}

/// Reads the chain and the work tree (see [`Found`]).
fn inspect(
    snapshots: &Snapshots,
    run: &str,
    committed: &[String],
    own: &[(PathBuf, String)],
) -> Result<Found, SnapshotError> {
    let others = |changed: Vec<String>| -> Vec<String> {
        changed
            .into_iter()
            .filter(|path| !own.iter().any(|(_, relative)| relative == path))
            .collect()
    };
    let entries = snapshots.entries(run, LOOK_BACK)?;
    let Some(head) = entries.first() else {
        return Ok(Found::Settled);
    };
    let in_flight = match head.mark {
        Mark::Before | Mark::Abandoned => true,
        Mark::After => !committed.contains(&head.snapshot.commit),
        _ => false,
    };
    if in_flight && let Some(before) = entries.iter().find(|entry| entry.mark == Mark::Before) {
        // A run that stopped mid-step recorded what the step left: what differs from that
        // was changed since, by someone else, and is theirs to keep or not.
        if head.mark == Mark::Abandoned {
            let changed = others(snapshots.changed_since(&head.snapshot.tree)?);
            if !changed.is_empty() {
                return Ok(Found::Changed(changed));
            }
        }
        return Ok(Found::InFlight {
            tree: before.snapshot.tree.clone(),
            step: before.step.clone(),
        });
    }
    let changed = others(snapshots.changed_since(&head.snapshot.tree)?);
    Ok(if changed.is_empty() {
        Found::Settled
    } else {
        Found::Changed(changed)
    })
}

/// Records what a run-level hook (`run.start`, `run.end`) left, when the workflow has one
/// and the run keeps snapshots: a hook's command (a formatter, a code generator) changes
/// files outside any step, and a later resume, rewind or fork must not take its changes
/// for a person's. The hooks of a step run inside the step's own snapshots. Best effort,
/// like the hook itself: a failure is logged.
pub(super) async fn record_hook(shared: &Shared, event: HookEvent) {
    if !shared.program.hooks.wants(event) {
        return;
    }
    let Some(snapshots) = shared.ctx.executor.snapshots(&shared.ctx) else {
        return;
    };
    if !crate::runtime::walk::any_changes_files(shared.workflow()) {
        return;
    }
    let run = shared.program.run_id.to_string();
    let note = format!("what the {} hook left", event.name());
    let taken =
        tokio::task::spawn_blocking(move || snapshots.take(&run, Mark::Kept, None, &note)).await;
    match taken {
        Ok(Ok(kept)) => shared.tally().files = Some(kept.commit),
        Ok(Err(error)) => tracing::warn!(
            "could not record what a {} hook left: {error}",
            event.name()
        ),
        Err(error) => tracing::warn!(
            "could not record what a {} hook left: {error}",
            event.name()
        ),
    }
}

/// Records the workspace as a new run found it: what its first step starts from, and what
/// a resume before any step compares the files with. The run's files from then on.
///
/// # Errors
/// When git fails: the run does not start without the record it was asked to keep.
pub(super) async fn record_start(shared: &Shared) -> Result<(), RunError> {
    let Some(snapshots) = shared.ctx.executor.snapshots(&shared.ctx) else {
        return Ok(());
    };
    // A workflow of `set`s and waits has no files to keep (its subgraphs record their own
    // steps' files, each with a snapshot before it).
    if !crate::runtime::walk::any_changes_files(shared.workflow()) {
        return Ok(());
    }
    let run = shared.program.run_id.to_string();
    let start = tokio::task::spawn_blocking(move || {
        snapshots.take(&run, Mark::Start, None, "the files the run started with")
    })
    .await
    .map_err(|join| RunError::Workspace(join.to_string()))?
    .map_err(|error| RunError::Workspace(error.to_string()))?;
    shared.tally().files = Some(start.commit);
    Ok(())
}

/// The files the run itself keeps its work in, written between steps rather than by them:
/// the tasks files of its task-loops (where the file is named plainly, not by a template),
/// as absolute paths and relative to the workspace's root.
fn own_files(shared: &Shared) -> Vec<(PathBuf, String)> {
    let workspace = &shared.ctx.workspace;
    shared
        .workflow()
        .nodes
        .iter()
        .filter_map(|node| match &node.kind {
            NodeKind::Parallel(parallel) if parallel.tasks.is_some() => parallel.for_each.as_ref(),
            _ => None,
        })
        .map(|each| each.items.source.trim())
        .filter(|file| !file.contains("{{") && !file.contains("{%"))
        .filter_map(|file| {
            let path = workspace.resolve(file);
            let relative = path
                .strip_prefix(workspace.root())
                .ok()?
                .to_str()?
                .to_owned();
            Some((path, relative))
        })
        .collect()
}
