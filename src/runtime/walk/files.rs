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
//! siblings at work, so their retries record the files but do not put them back — unless
//! the branch works in a git worktree of its own (`isolation="worktree"`): its steps record
//! that tree on the branch's chain, and put it back like the run's own steps do.

use std::sync::Arc;

use super::{Stop, Walker};
use crate::ir::{Isolation, NodeIdx, NodeKind, Workflow};
use crate::runtime::event::FilesChanged;
use crate::runtime::frame::BranchTree;
use crate::runtime::shared::Shared;
use crate::workspace::snapshot::{Mark, Snapshot, Snapshots};

/// A step's workspace while it runs.
pub(super) struct StepFiles {
    snapshots: Arc<Snapshots>,
    /// The chain it records on: the run's, or its branch's.
    chain: String,
    /// How the chain names the step: its node id.
    label: Arc<str>,
    /// The files before its first attempt.
    before: Snapshot,
    /// Whether a retry puts the files back: not in a parallel branch or a task of a
    /// task-loop, whose siblings work in the same tree at the same time.
    puts_back: bool,
    /// The branch worktree it works in, if any: its files are the branch's, not the run's.
    tree: Option<Arc<BranchTree>>,
}

/// Whether any step of `workflow` can change files (see [`changes_files`]): a run of one
/// that cannot records nothing at all.
pub(crate) fn any_changes_files(workflow: &Workflow) -> bool {
    workflow
        .nodes
        .iter()
        .any(|node| changes_files(workflow, &node.kind))
}

/// Whether a step of this node can change files: a tool, an agent whose backend can (not
/// one answering in this process or playing a recording back), or a parallel whose
/// branches' work in worktrees is merged into the files when it ends.
fn changes_files(workflow: &Workflow, kind: &NodeKind) -> bool {
    match kind {
        NodeKind::Tool(_) => true,
        NodeKind::Parallel(parallel) => parallel.isolation == Isolation::Worktree,
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
        let Some((snapshots, chain)) = shared.recorder(&self.frame) else {
            return Ok(None);
        };
        let label = shared.id(node).clone();
        let before = {
            let (snapshots, chain, label) = (Arc::clone(&snapshots), chain.clone(), label.clone());
            blocking(move || snapshots.take(&chain, Mark::Before, Some(&label), "before attempt 1"))
                .await?
        };
        let tree = self.frame.tree.clone();
        let own_levels = tree.as_ref().map_or(0, |tree| tree.depth);
        let levels = self
            .scope
            .as_str()
            .map_or(0, |scope| scope.matches('#').count());
        Ok(Some(StepFiles {
            snapshots,
            chain,
            label,
            before,
            puts_back: levels == own_levels,
            tree,
        }))
    }
}

impl StepFiles {
    /// Puts the files back as they were before the first attempt, ahead of attempt
    /// `attempt`; what the failed attempt left is kept in the chain.
    pub(super) async fn before_retry(&self, attempt: u32) -> Result<(), Stop> {
        let (snapshots, chain, label) = self.parts();
        let tree = self.before.tree.clone();
        let puts_back = self.puts_back;
        blocking(move || {
            if puts_back {
                snapshots.restore(
                    &chain,
                    &tree,
                    Some(&label),
                    &format!("put back before attempt {attempt}"),
                )?;
            } else {
                snapshots.take(
                    &chain,
                    Mark::Abandoned,
                    Some(&label),
                    &format!("attempt {} failed; siblings share the files", attempt - 1),
                )?;
            }
            snapshots.take(
                &chain,
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
        let (snapshots, chain, label) = self.parts();
        let before = self.before;
        let changed = blocking(move || {
            let after = snapshots.take(&chain, Mark::After, Some(&label), "succeeded")?;
            let changed = snapshots.changes(&before.tree, &after.tree)?;
            Ok(FilesChanged {
                before: before.commit,
                after: after.commit,
                changed,
            })
        })
        .await?;
        match &self.tree {
            Some(tree) => tree.set_committed(changed.after.clone()),
            None => shared.tally().files = Some(changed.after.clone()),
        }
        Ok(changed)
    }

    /// After the step failed for good: what it left stays for whatever the run does next
    /// (a step `on-error` routes to, a person looking) and is the run's files now.
    pub(super) async fn failed(self, shared: &Shared) -> Result<(), Stop> {
        let kept = self
            .take(Mark::Kept, "failed; what it left is kept")
            .await?;
        self.now_committed(shared, kept.commit);
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
        self.now_committed(shared, kept.commit);
        Ok(())
    }

    /// One snapshot of the step's files, marked `mark`.
    async fn take(&self, mark: Mark, note: &'static str) -> Result<Snapshot, Stop> {
        let (snapshots, chain, label) = self.parts();
        blocking(move || snapshots.take(&chain, mark, Some(&label), note)).await
    }

    /// `commit` is the files the next commit names: the run's, or its branch's.
    fn now_committed(&self, shared: &Shared, commit: String) {
        match &self.tree {
            Some(tree) => tree.set_committed(commit),
            None => shared.tally().files = Some(commit),
        }
    }

    fn parts(&self) -> (Arc<Snapshots>, String, Arc<str>) {
        (
            Arc::clone(&self.snapshots),
            self.chain.clone(),
            self.label.clone(),
        )
    }
}
