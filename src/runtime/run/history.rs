//! Moving a run's history with its files: [`rewind`] takes a stopped run back to just
//! after one of its steps (state, outputs, events and the workspace's files as they were
//! then), ready for `resume`; [`undo_rewind`] puts back what the last rewind replaced;
//! [`fork`] starts a new run whose history up to a step is the old one's, its files at
//! that step in a git worktree of its own or in place.
//!
//! The store copies runs ([`Store::copy_run`]); the workspace's snapshots hold the files.
//! A rewind first keeps the run as it was under a second id (`undo-RUN`, which no prefix of
//! the run's id names) and the files as they were as a snapshot, so `--undo` loses nothing.
//! Only steps of the run itself can be a rewind or fork point: a step inside a parallel
//! branch or a subgraph is part of a block that resumes as a whole.

use std::path::{Path, PathBuf};

use crate::runtime::Cursor;
use crate::store::{RunAmend, RunDetail, RunId, RunStatus, StepRecord, Store, StoreError};
use crate::workspace::snapshot::{SnapshotError, Snapshots};

/// Why a run cannot be rewound or forked. Each message names the run and what to do.
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    /// The store failed (or has no such run).
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A process is driving the run.
    #[error("run `{run}` is running ({holder}); stop it first with `atomic cancel {run}`")]
    Running {
        /// The run.
        run: RunId,
        /// Who runs it.
        holder: String,
    },
    /// No step of the run itself has that number or node.
    #[error("run `{run}` has no step `{step}` of its own{}", known(steps))]
    NoSuchStep {
        /// The run.
        run: RunId,
        /// What was asked for.
        step: String,
        /// The steps there are (number and node), for the message.
        steps: Vec<String>,
    },
    /// The step ran inside a block.
    #[error(
        "step {seq} of run `{run}` ran inside `{scope}`, which resumes as a whole; name a step of the run itself (the block's own step, or one before it)"
    )]
    InsideBlock {
        /// The run.
        run: RunId,
        /// The step.
        seq: u64,
        /// Its block.
        scope: String,
    },
    /// There is nothing to undo.
    #[error("run `{run}` has no rewind to undo")]
    NothingToUndo {
        /// The run.
        run: RunId,
    },
    /// The workspace's files could not be recorded or put back; nothing was changed.
    #[error("run `{run}`: the workspace's files: {error}")]
    Files {
        /// The run.
        run: RunId,
        /// What git said.
        error: SnapshotError,
    },
    /// A step's cursor cannot be read.
    #[error("run `{run}`: step {seq} has an unreadable cursor: {error}")]
    Cursor {
        /// The run.
        run: RunId,
        /// The step.
        seq: u64,
        /// Why.
        error: serde_json::Error,
    },
}

fn known(steps: &[String]) -> String {
    if steps.is_empty() {
        " (it has committed none)".to_owned()
    } else {
        format!("; its steps: {}", steps.join(", "))
    }
}

/// Where a rewind or fork leaves things.
#[derive(Debug)]
pub struct Moved {
    /// The run now at that point (the rewound run, or the fork).
    pub run: RunId,
    /// The step it is just after.
    pub step: u64,
    /// That step's node.
    pub node: String,
    /// The files put back, by path (`None`: the run recorded no files).
    pub files: Option<Vec<String>>,
    /// The snapshot keeping the files as they were before (a rewind's, for `--undo`).
    pub kept: Option<String>,
    /// Where the fork's files are (its worktree), when not in place.
    pub worktree: Option<PathBuf>,
}

/// The id a rewind keeps the run's previous history under.
#[must_use]
pub fn undo_id(run: &RunId) -> RunId {
    RunId::new(format!("undo-{run}"))
}

/// Whether `id` is the copy a rewind keeps for `--undo` (not a run of its own: listings
/// leave it out, deleting its run deletes it).
#[must_use]
pub fn is_undo_copy(id: &RunId) -> bool {
    id.as_str().starts_with("undo-")
}

/// The ref keeping the files a rewind replaced.
fn undo_ref(run: &RunId) -> String {
    format!("rewind/{run}")
}

/// Takes run `run` back to just after its step `to` (a number, or a node id: its last
/// step): the state and outputs after that step, its events up to it, the run paused
/// there, and the workspace's files as that step left them. The run as it was is kept for
/// [`undo_rewind`].
///
/// # Errors
/// See [`HistoryError`]; nothing is changed when one is returned before the files move.
pub async fn rewind(
    store: &dyn Store,
    snapshots: Option<&Snapshots>,
    run: &RunId,
    to: &str,
) -> Result<Moved, HistoryError> {
    check_stopped(store, run).await?;
    let detail = store.run_detail(run).await?;
    let step = find_step(&detail, to)?;
    let (seq, node) = (step.seq, step.node_id.clone());
    let files_at = files_at(run, step)?;
    let backup = undo_id(run);
    if store.run(&backup).await.is_ok() {
        store.delete_run(&backup).await?;
    }
    store
        .copy_run(
            run,
            &backup,
            None,
            detail.run.status,
            detail.run.origin.clone(),
        )
        .await?;
    let (files, kept) = match (snapshots, &files_at) {
        (Some(snapshots), Some(commit)) => {
            let (kept, paths) =
                put_files(snapshots, run, commit, &format!("rewound to step {seq}"))?;
            snapshots
                .set_ref(&undo_ref(run), &kept)
                .map_err(|error| files_error(run, error))?;
            (Some(paths), Some(kept))
        }
        _ => (None, None),
    };
    store.delete_run(run).await?;
    store
        .copy_run(
            &backup,
            run,
            Some(seq),
            RunStatus::Paused,
            detail.run.origin.clone(),
        )
        .await?;
    Ok(Moved {
        run: run.clone(),
        step: seq,
        node,
        files,
        kept,
        worktree: None,
    })
}

/// Puts back the run and the files the last [`rewind`] of `run` replaced.
///
/// # Errors
/// [`HistoryError::NothingToUndo`] when there was no rewind; others as [`rewind`].
pub async fn undo_rewind(
    store: &dyn Store,
    snapshots: Option<&Snapshots>,
    run: &RunId,
) -> Result<Moved, HistoryError> {
    check_stopped(store, run).await?;
    let backup = undo_id(run);
    let kept = match store.run(&backup).await {
        Ok(record) => record,
        Err(StoreError::NotFound(_)) => {
            return Err(HistoryError::NothingToUndo { run: run.clone() });
        }
        Err(error) => return Err(error.into()),
    };
    let mut files = None;
    if let Some(snapshots) = snapshots {
        let undo = snapshots
            .get_ref(&undo_ref(run))
            .map_err(|error| files_error(run, error))?;
        if let Some(commit) = undo {
            let (_, paths) = put_files(snapshots, run, &commit, "rewind undone")?;
            snapshots
                .delete_ref(&undo_ref(run))
                .map_err(|error| files_error(run, error))?;
            files = Some(paths);
        }
    }
    store.delete_run(run).await?;
    store
        .copy_run(&backup, run, None, kept.status, kept.origin.clone())
        .await?;
    store.delete_run(&backup).await?;
    Ok(Moved {
        run: run.clone(),
        step: kept.steps,
        node: String::new(),
        files,
        kept: None,
        worktree: None,
    })
}

/// Where a fork's files go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ForkPlace {
    /// The project's own working tree, put back to the fork point.
    InPlace,
    /// A new git worktree at this path, made from the fork point's files.
    Worktree(PathBuf),
}

/// Starts run `fork` from run `run`'s history up to its step `at`, paused there; its
/// files as that step left them, `place` says where; its own inputs or workflow file as
/// `amend` says (see [`check_fits`](super::check_fits) for whether it can go on so).
///
/// # Errors
/// See [`HistoryError`].
pub async fn fork(
    store: &dyn Store,
    snapshots: Option<&Snapshots>,
    run: &RunId,
    at: &str,
    fork: &RunId,
    place: &ForkPlace,
    amend: RunAmend,
) -> Result<Moved, HistoryError> {
    let detail = store.run_detail(run).await?;
    let step = find_step(&detail, at)?;
    let (seq, node) = (step.seq, step.node_id.clone());
    let files_at = files_at(run, step)?;
    let mut moved = Moved {
        run: fork.clone(),
        step: seq,
        node,
        files: None,
        kept: None,
        worktree: None,
    };
    if let (Some(snapshots), Some(commit)) = (snapshots, &files_at) {
        match place {
            ForkPlace::InPlace => {
                check_stopped(store, run).await?;
                let (kept, paths) = put_files(
                    snapshots,
                    fork,
                    commit,
                    &format!("forked from {run} at step {seq}"),
                )?;
                moved.files = Some(paths);
                moved.kept = Some(kept);
            }
            ForkPlace::Worktree(path) => {
                snapshots
                    .add_worktree(path, commit)
                    .map_err(|error| files_error(run, error))?;
                moved.worktree = Some(path.clone());
            }
        }
    }
    store
        .copy_run(
            run,
            fork,
            Some(seq),
            RunStatus::Paused,
            Some(format!("{run}@{seq}")),
        )
        .await?;
    if amend != RunAmend::default() {
        store.amend_run(fork, amend).await?;
    }
    Ok(moved)
}

/// Refuses a run some live process drives.
async fn check_stopped(store: &dyn Store, run: &RunId) -> Result<(), HistoryError> {
    if let Some(lease) = store.lease(run).await?
        && lease.is_held()
    {
        return Err(HistoryError::Running {
            run: run.clone(),
            holder: lease.owner.describe(),
        });
    }
    Ok(())
}

/// The run's own step `which` names: a number, or a node id (its last step).
fn find_step<'a>(detail: &'a RunDetail, which: &str) -> Result<&'a StepRecord, HistoryError> {
    let run = &detail.run.id;
    let found = match which.parse::<u64>() {
        Ok(seq) => detail.steps.iter().find(|step| step.seq == seq),
        Err(_) => detail
            .steps
            .iter()
            .rev()
            .find(|step| step.node_id == which && step.scope.is_none()),
    };
    let Some(step) = found else {
        return Err(HistoryError::NoSuchStep {
            run: run.clone(),
            step: which.to_owned(),
            steps: detail
                .steps
                .iter()
                .filter(|step| step.scope.is_none())
                .map(|step| format!("{} `{}`", step.seq, step.node_id))
                .collect(),
        });
    };
    if let Some(scope) = &step.scope {
        return Err(HistoryError::InsideBlock {
            run: run.clone(),
            seq: step.seq,
            scope: scope.clone(),
        });
    }
    Ok(step)
}

/// The snapshot of the files just after `step` (its cursor's), if the run recorded them.
fn files_at(run: &RunId, step: &StepRecord) -> Result<Option<String>, HistoryError> {
    let cursor: Cursor =
        serde_json::from_value(step.cursor.clone()).map_err(|error| HistoryError::Cursor {
            run: run.clone(),
            seq: step.seq,
            error,
        })?;
    Ok(cursor.files)
}

/// Makes the work tree the files of snapshot `commit` (in `run`'s chain), keeping what was
/// there: the kept snapshot and the paths put back.
fn put_files(
    snapshots: &Snapshots,
    run: &RunId,
    commit: &str,
    note: &str,
) -> Result<(String, Vec<String>), HistoryError> {
    let tree = snapshots
        .tree_of(commit)
        .map_err(|error| files_error(run, error))?;
    let restored = snapshots
        .restore(run.as_str(), &tree, None, note)
        .map_err(|error| files_error(run, error))?;
    Ok((restored.kept.commit, restored.paths))
}

fn files_error(run: &RunId, error: SnapshotError) -> HistoryError {
    HistoryError::Files {
        run: run.clone(),
        error,
    }
}

/// Where `atomic fork` puts a fork's worktree by default: beside the store, named by the
/// fork.
#[must_use]
pub fn default_worktree(state_dir: &Path, fork: &RunId) -> PathBuf {
    state_dir.join("worktrees").join(fork.as_str())
}
