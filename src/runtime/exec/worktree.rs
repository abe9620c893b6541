//! `parallel … isolation="worktree"`: each branch works in a git worktree of its own, made
//! from the files as they were when the parallel began, so agents editing at once never
//! edit one tree; when the parallel ends, the branches' changes are merged into the files
//! the parallel started from, in branch order, three-way (git's merge of the trees).
//!
//! What stays, in the run's snapshot store: the files the branches started from
//! (`refs/atomic/branches/<run>/<parallel>/base`) and each branch's chain of snapshots
//! (`…/<parallel>/<branch>`, its steps' before and after, ending with what the branch left),
//! so a conflict loses nothing and `atomic runs delete` takes all of it with the run. A
//! worktree lives at `.atomic/worktrees/<run>/<parallel>-<branch>` while its branch runs and
//! is removed once the branch has ended and its files are recorded.
//!
//! Durable like every block: a resumed parallel finds each unfinished branch's worktree
//! (made again from the branch's chain when it is gone), puts back what a step in flight
//! had half done — the branch's committed steps name the snapshot they left — and goes on;
//! a finished branch is not run again, its recorded files are merged. The merge works on
//! recorded trees only, so merging again after a crash gives the same files.
//!
//! The parallel itself is a step that changes the files its walk works in (see
//! `walk::files`): the snapshot before it is what the branches start from, and the one
//! after it holds the merge, so `atomic runs diff` shows what the branches did together and
//! a retry or resume puts the files back to before the merge.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use crate::ir::ErrorClass;
use crate::runtime::NodeError;
use crate::runtime::frame::{BranchTree, Frame};
use crate::runtime::shared::Shared;
use crate::runtime::walk::ScopePath;
use crate::workspace::Workspace;
use crate::workspace::snapshot::{Mark, Merged, SnapshotError, Snapshots};

/// The worktrees of one isolated parallel.
pub(super) struct Worktrees {
    /// Where the parallel's own walk records its files (the run's store, or an enclosing
    /// branch's worktree).
    home: Arc<Snapshots>,
    /// That walk's chain.
    home_chain: String,
    /// The run's id.
    run: String,
    /// Names this parallel (and this entry into it) in refs and paths.
    key: String,
    /// The snapshot the branches start from.
    base: String,
    /// Where the worktrees go: `.atomic/worktrees/<run>/`.
    dir: PathBuf,
    /// The `#` levels of a branch's scope.
    depth: usize,
}

impl Worktrees {
    /// Prepares the parallel `id` entered at `place` (its scope and entry, as the branches'
    /// scopes name it): the files the branches start from are those of the snapshot just
    /// taken before the parallel, kept as the base on first entry.
    ///
    /// # Errors
    /// When the run keeps no snapshots (worktrees are made from them), or git fails.
    pub(super) async fn begin(
        shared: &Shared,
        frame: &Frame,
        id: &str,
        place: &str,
        depth: usize,
    ) -> Result<Self, NodeError> {
        let Some((home, home_chain)) = shared.recorder(frame) else {
            return Err(NodeError::fatal(format!(
                "`{id}` runs its branches in git worktrees (`isolation=\"worktree\"`), which are made from the workspace's snapshots, and this run keeps none: remove `workspace \"off\"`, or install git"
            )));
        };
        let run = shared.program.run_id.to_string();
        let key = parallel_key(id, place);
        let dir = shared
            .ctx
            .workspace
            .root()
            .join(".atomic")
            .join("worktrees")
            .join(&run);
        let base = {
            let (home, home_chain, run, key) = (
                Arc::clone(&home),
                home_chain.clone(),
                run.clone(),
                key.clone(),
            );
            blocking(id, move || {
                let name = format!("branches/{run}/{key}/base");
                if let Some(base) = home.get_ref(&name)? {
                    return Ok(base);
                }
                // The parallel's step took a snapshot just before it: the files now.
                let base = match home.head(&home_chain)? {
                    Some(entry) => entry.snapshot.commit,
                    None => {
                        home.take(&home_chain, Mark::Before, None, "before a parallel")?
                            .commit
                    }
                };
                home.set_ref(&name, &base)?;
                Ok(base)
            })
            .await?
        };
        Ok(Self {
            home,
            home_chain,
            run,
            key,
            base,
            dir,
            depth,
        })
    }

    /// The worktree of branch `index` (whose block is `scope`), ready for it to run or go
    /// on: made from the base, or from what the branch recorded when its worktree is gone;
    /// a step that was in flight in it put back.
    ///
    /// # Errors
    /// When git fails.
    pub(super) async fn open(
        &self,
        shared: &Shared,
        id: &str,
        index: u32,
        scope: &ScopePath,
    ) -> Result<Arc<BranchTree>, NodeError> {
        let chain = self.chain(index);
        let path = self.path(index);
        let committed = shared
            .journal
            .recovery
            .steps_of(scope)
            .last()
            .and_then(|cursor| cursor.files.clone());
        let home = Arc::clone(&self.home);
        let base = self.base.clone();
        let label = format!("{id} {}", branch_label(index));
        let job_chain = chain.clone();
        let job_committed = committed.clone();
        let snapshots = blocking(id, move || {
            let chain = job_chain;
            let head = home.entries(&chain, 1)?.into_iter().next();
            if !path.join(".git").exists() {
                // What a crash left half made (or a record of a worktree since deleted).
                let _ = home.remove_worktree(&path);
                let from = head
                    .as_ref()
                    .map_or(base.as_str(), |entry| entry.snapshot.commit.as_str());
                if let Some(parent) = path.parent() {
                    std::fs::create_dir_all(parent)
                        .map_err(|error| SnapshotError::io(parent, &error))?;
                }
                home.add_worktree(&path, from)?;
            }
            let snapshots = Snapshots::open(&path)?;
            match head {
                None => {
                    snapshots.take(&chain, Mark::Start, Some(&label), "the branch's files")?;
                }
                Some(_) => settle(&snapshots, &chain, job_committed.as_deref(), &label)?,
            }
            Ok(snapshots)
        })
        .await?;
        let root = self.path(index);
        Ok(Arc::new(BranchTree {
            workspace: Workspace::new(root).with_snapshots(Arc::new(snapshots)),
            chain,
            depth: self.depth,
            committed: Mutex::new(committed),
        }))
    }

    /// Branch `index` ended (`note` says how): what its worktree holds is recorded as the
    /// branch's last snapshot and the worktree removed. Nothing when it has none (it ended
    /// before, and was recorded then).
    ///
    /// # Errors
    /// When git fails.
    pub(super) async fn close(
        &self,
        id: &str,
        index: u32,
        note: &'static str,
    ) -> Result<(), NodeError> {
        let path = self.path(index);
        if !path.join(".git").exists() {
            return Ok(());
        }
        let (home, chain) = (Arc::clone(&self.home), self.chain(index));
        let mark = if note == ENDED {
            Mark::After
        } else {
            Mark::Abandoned
        };
        let label = format!("{id} {}", branch_label(index));
        blocking(id, move || {
            let snapshots = Snapshots::open(&path)?;
            snapshots.take(&chain, mark, Some(&label), note)?;
            snapshots.forget_stat_cache();
            home.remove_worktree(&path)
        })
        .await
    }

    /// Closes every branch that still has a worktree (the parallel ended, and they failed,
    /// lost, or it failed), each recorded as abandoned: best effort, since the parallel's
    /// own outcome is the one to report.
    pub(super) async fn close_all(&self, id: &str, count: usize) {
        for index in 0..count {
            let Ok(index) = u32::try_from(index) else {
                break;
            };
            if let Err(error) = self.close(id, index, ABANDONED).await {
                tracing::warn!(
                    "could not remove the worktree of `{id}` {}: {error}",
                    branch_label(index)
                );
            }
        }
        // The run's directory of worktrees, once no parallel of it has any there.
        let _ = std::fs::remove_dir(&self.dir);
    }

    /// Merges what the branches `names` (index, name) left (in that order) into the files the parallel
    /// started from, and makes the parallel's walk's files the result. A conflict still
    /// puts every change that merged in, and the conflicting files with git's markers, then
    /// fails with class `conflict` and the paths (an `on-error` route can send them to an
    /// agent to resolve).
    ///
    /// # Errors
    /// A `conflict`, or when git fails.
    pub(super) async fn merge(&self, id: &str, names: Vec<(u32, String)>) -> Result<(), NodeError> {
        let home = Arc::clone(&self.home);
        let home_chain = self.home_chain.clone();
        let base = self.base.clone();
        let chains: Vec<(String, String)> = names
            .into_iter()
            .map(|(index, name)| (self.chain(index), name))
            .collect();
        let label = id.to_owned();
        let conflicts = blocking(id, move || {
            let base_tree = home.tree_of(&base)?;
            // Ours: the files as the parallel began (the snapshot just before it).
            let mut ours = home
                .head(&home_chain)?
                .map_or_else(|| base_tree.clone(), |entry| entry.snapshot.tree);
            let mut conflicts: Vec<(String, Vec<String>)> = Vec::new();
            for (chain, name) in chains {
                let Some(theirs) = home.head(&chain)? else {
                    continue;
                };
                match home.merge(&base_tree, &ours, &theirs.snapshot.tree)? {
                    Merged::Clean(tree) => ours = tree,
                    Merged::Conflict { tree, paths } => {
                        ours = tree;
                        conflicts.push((name, paths));
                    }
                }
            }
            let note = if conflicts.is_empty() {
                "the branches' changes merged"
            } else {
                "the branches' changes merged, with conflicts"
            };
            home.restore(&home_chain, &ours, Some(&label), note)?;
            Ok(conflicts)
        })
        .await?;
        if conflicts.is_empty() {
            return Ok(());
        }
        let mut paths: Vec<String> = conflicts
            .iter()
            .flat_map(|(_, paths)| paths.iter().cloned())
            .collect();
        paths.sort();
        paths.dedup();
        let which: Vec<String> = conflicts
            .iter()
            .map(|(name, paths)| format!("{name} ({})", paths.join(", ")))
            .collect();
        Err(NodeError {
            paths,
            ..NodeError::new(
                ErrorClass::Conflict,
                format!(
                    "`{id}`: the branches changed the same lines; merging {} conflicts with the branches before it (the files hold git's conflict markers; each branch's files are kept under refs/atomic/branches/{}/{}/)",
                    which.join(" and "),
                    self.run,
                    self.key
                ),
            )
        })
    }

    fn chain(&self, index: u32) -> String {
        format!("{}/{}/{index}", self.run, self.key)
    }

    fn path(&self, index: u32) -> PathBuf {
        self.dir.join(format!("{}-{index}", self.key))
    }
}

/// The note a branch that ended well is recorded with.
pub(super) const ENDED: &str = "the branch's files when it ended";
/// The note a branch that failed, lost a race or was given up is recorded with.
pub(super) const ABANDONED: &str = "the branch was given up (failed, lost, or its parallel failed)";

/// How a branch's snapshots name it.
fn branch_label(index: u32) -> String {
    format!("branch {index}")
}

/// A resumed branch's worktree as its committed steps left it: a step in flight (the
/// chain's newest snapshot was taken before a step, or after one no commit names) has
/// what it half did put back.
fn settle(
    snapshots: &Snapshots,
    chain: &str,
    committed: Option<&str>,
    label: &str,
) -> Result<(), SnapshotError> {
    let entries = snapshots.entries(chain, 256)?;
    let Some(head) = entries.first() else {
        return Ok(());
    };
    let in_flight = match head.mark {
        Mark::Before | Mark::Abandoned => true,
        Mark::After => committed.is_some_and(|commit| commit != head.snapshot.commit),
        _ => false,
    };
    if in_flight && let Some(before) = entries.iter().find(|entry| entry.mark == Mark::Before) {
        snapshots.restore(
            chain,
            &before.snapshot.tree,
            before.step.as_deref().or(Some(label)),
            "put back on resume: the step was interrupted",
        )?;
    }
    Ok(())
}

/// A name for one entry into a parallel, fit for a ref and a directory: its id (its
/// characters a ref cannot hold made `-`) and a hash of where it was entered.
fn parallel_key(id: &str, place: &str) -> String {
    let readable: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    let hash = place.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    });
    format!(
        "{}-{:08x}",
        readable.trim_start_matches(['-', '.']),
        hash as u32
    )
}

/// Runs git work on the blocking pool; its failure is the parallel's.
async fn blocking<T: Send + 'static>(
    id: &str,
    work: impl FnOnce() -> Result<T, SnapshotError> + Send + 'static,
) -> Result<T, NodeError> {
    match tokio::task::spawn_blocking(work).await {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(error)) => Err(NodeError::fatal(format!(
            "`{id}`: the branches' worktrees: {error}"
        ))),
        Err(join) => Err(NodeError::fatal(format!(
            "`{id}`: the branches' worktrees: {join}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_is_readable_and_tells_entries_apart() {
        let first = parallel_key("fan out", "fan out@1");
        let second = parallel_key("fan out", "fan out@2");
        assert!(first.starts_with("fan-out-"), "{first}");
        assert_ne!(first, second);
        assert_eq!(first, parallel_key("fan out", "fan out@1"));
    }
}
