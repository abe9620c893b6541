//! The workspace around a step that can change files (an agent, a tool): a snapshot
//! before its first attempt, the files put back before each retry (what the failed attempt
//! left kept as a snapshot, so nothing is lost), and a snapshot after it succeeded whose
//! changed paths the step's `step-finished` event carries. A step that fails for good
//! leaves its files for what the run does next (an `on-error` route reads them).
//!
//! The run's snapshots form one chain (`refs/atomic/runs/<run>`), each marked with why it
//! was taken; `run::files` reads that chain on resume to tell a step that was in flight
//! (its partial edits are rolled back) from files a person changed while the run was
//! stopped (reported). Steps of parallel branches and task-loop tasks share one tree with
//! siblings at work, so their retries record the files but do not put them back.

use std::sync::Arc;

use super::{Stop, Walker};
use crate::ir::{NodeIdx, NodeKind, Workflow};
use crate::runtime::event::FilesChanged;
use crate::runtime::shared::Shared;
use crate::workspace::snapshot::{Mark, Snapshot, Snapshots};

/// A step's workspace while it runs.
pub(super) struct StepFiles {
    snapshots: Arc<Snapshots>,
    run: String,
    /// How the chain names the step: its node id.
    label: Arc<str>,
    /// The files before its first attempt.
    before: Snapshot,
    /// Whether a retry puts the files back: not in a parallel branch or a task of a
    /// task-loop, whose siblings work in the same tree at the same time.
    puts_back: bool,
}

/// Whether any step of `workflow` can change files (see [`changes_files`]): a run of one
/// that cannot records nothing at all.
pub(crate) fn any_changes_files(workflow: &Workflow) -> bool {
    workflow
        .nodes
        .iter()
        .any(|node| changes_files(workflow, &node.kind))
}

/// Whether a step of this node can change files: a tool, or an agent whose backend can
/// (not one answering in this process or playing a recording back).
fn changes_files(workflow: &Workflow, kind: &NodeKind) -> bool {
    match kind {
        NodeKind::Tool(_) => true,
        NodeKind::Agent(agent) => workflow
            .agent_provider_name(agent)
            .and_then(|name| workflow.provider(&name.value))
            .is_none_or(|provider| {
                !matches!(provider.adapter.value.as_str(), "in-process" | "replay")
            }),
        _ => false,
    }
}

/// Runs `work` on the blocking pool: git is a child process per call.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, crate::workspace::snapshot::SnapshotError> + Send + 'static,
) -> Result<T, Stop> {
    match tokio::task::spawn_blocking(work).await {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(error)) => Err(Stop::Workspace(error.to_string())),
        Err(join) => Err(Stop::Workspace(format!(
            "recording the workspace stopped: {join}"
        ))),
    }
}

impl Walker<'_> {
    /// The snapshot before a step's first attempt; `None` when the step cannot change
    /// files or the run keeps no snapshots.
    pub(super) async fn files_before(&self, node: NodeIdx) -> Result<Option<StepFiles>, Stop> {
        let shared = self.shared;
        let workflow = shared.workflow();
        if !changes_files(workflow, &workflow.node(node).kind) {
            return Ok(None);
        }
        let Some(snapshots) = shared.ctx.executor.snapshots(&shared.ctx) else {
            return Ok(None);
        };
        let label = shared.id(node).clone();
        let run = shared.program.run_id.to_string();
        let before = {
            let (snapshots, run, label) = (Arc::clone(&snapshots), run.clone(), label.clone());
            blocking(move || snapshots.take(&run, Mark::Before, Some(&label), "before attempt 1"))
                .await?
        };
        let shares_tree = self.scope.as_str().is_some_and(|scope| scope.contains('#'));
        Ok(Some(StepFiles {
            snapshots,
            run,
            label,
            before,
            puts_back: !shares_tree,
        }))
    }
}

impl StepFiles {
    /// Puts the files back as they were before the first attempt, ahead of attempt
    /// `attempt`; what the failed attempt left is kept in the chain.
    pub(super) async fn before_retry(&self, attempt: u32) -> Result<(), Stop> {
        let (snapshots, run, label) = self.parts();
        let tree = self.before.tree.clone();
        let puts_back = self.puts_back;
        blocking(move || {
            if puts_back {
                snapshots.restore(
                    &run,
                    &tree,
                    Some(&label),
                    &format!("put back before attempt {attempt}"),
                )?;
            } else {
                snapshots.take(
                    &run,
                    Mark::Abandoned,
                    Some(&label),
                    &format!("attempt {} failed; siblings share the files", attempt - 1),
                )?;
            }
            snapshots.take(
                &run,
                Mark::Before,
                Some(&label),
                &format!("before attempt {attempt}"),
            )
        })
        .await
        .map(drop)
    }

    /// Records the files the step left and what it changed; the run's files are now
    /// those (the snapshot the next commit names as committed).
    pub(super) async fn after(self, shared: &Shared) -> Result<FilesChanged, Stop> {
        let (snapshots, run, label) = self.parts();
        let before = self.before;
        let changed = blocking(move || {
            let after = snapshots.take(&run, Mark::After, Some(&label), "succeeded")?;
            let changed = snapshots.changes(&before.tree, &after.tree)?;
            Ok(FilesChanged {
                before: before.commit,
                after: after.commit,
                changed,
            })
        })
        .await?;
        shared.tally().files = Some(changed.after.clone());
        Ok(changed)
    }

    /// After the step failed for good: what it left stays for whatever the run does next
    /// (a step `on-error` routes to, a person looking) and is the run's files now.
    pub(super) async fn failed(self, shared: &Shared) -> Result<(), Stop> {
        let kept = self
            .take(Mark::Kept, "failed; what it left is kept")
            .await?;
        shared.tally().files = Some(kept.commit);
        Ok(())
    }

    /// The run stopped in the middle of the step (cancelled, out of time): what it left is
    /// recorded, so a resume can tell its partial edits from what people change meanwhile.
    /// Best effort: the stop goes on whatever git says, and a resume without this record
    /// takes every difference since the step began for the step's.
    pub(super) async fn stopped(self) {
        if let Err(Stop::Workspace(error)) =
            self.take(Mark::Abandoned, "the run stopped mid-step").await
        {
            tracing::warn!("could not record the files of a stopped step: {error}");
        }
    }

    /// The step paused mid-way (a permission to ask): its session goes on with the files
    /// as they are, so they are the run's files now.
    pub(super) async fn paused(self, shared: &Shared) -> Result<(), Stop> {
        let kept = self
            .take(Mark::Kept, "paused mid-step to ask a person")
            .await?;
        shared.tally().files = Some(kept.commit);
        Ok(())
    }

    /// One snapshot of the step's files, marked `mark`.
    async fn take(&self, mark: Mark, note: &'static str) -> Result<Snapshot, Stop> {
        let (snapshots, run, label) = self.parts();
        blocking(move || snapshots.take(&run, mark, Some(&label), note)).await
    }

    fn parts(&self) -> (Arc<Snapshots>, String, Arc<str>) {
        (
            Arc::clone(&self.snapshots),
            self.run.clone(),
            self.label.clone(),
        )
    }
}
