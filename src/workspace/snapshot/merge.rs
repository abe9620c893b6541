//! Putting work done apart back together: a three-way merge of snapshot trees (git's own,
//! `merge-tree --write-tree`, which touches no index and no work tree), and the git
//! worktrees such work is done in.

use std::fs;
use std::path::Path;

use super::{SnapshotError, Snapshots};
use crate::workspace::git;

/// What a three-way merge gave.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Merged {
    /// Both sides' changes, as one tree.
    Clean(String),
    /// Both sides changed these paths in ways that do not combine (sorted): `tree` holds
    /// every change that merged, and those files with git's conflict markers.
    Conflict {
        /// The merge, markers and all.
        tree: String,
        /// The conflicting paths.
        paths: Vec<String>,
    },
}

impl Snapshots {
    /// Merges the changes `theirs` made since `base` into `ours` (all tree or snapshot ids):
    /// a file only one side changed takes that side's version, a file both changed is
    /// merged line by line, and what cannot be merged is a [`Merged::Conflict`] naming the
    /// paths (relative to the workspace root, as the trees are). Nothing is written but
    /// objects.
    ///
    /// # Errors
    /// When an id is not an object of the store, or git fails (git older than 2.40 has no
    /// `merge-tree --merge-base`).
    pub fn merge(&self, base: &str, ours: &str, theirs: &str) -> Result<Merged, SnapshotError> {
        let (base, ours, theirs) = (self.object(base)?, self.object(ours)?, self.object(theirs)?);
        let base = format!("--merge-base={base}");
        let args = [
            "merge-tree",
            "--write-tree",
            "--name-only",
            "--no-messages",
            "-z",
            &base,
            ours,
            theirs,
        ];
        // Status 1: the merge has conflicts (listed after the tree).
        let output = self.repo.output(&args, None)?;
        let clean = match output.status.code() {
            Some(0) => true,
            Some(1) => false,
            _ => return Err(git::failed(&args, &output)),
        };
        let mut fields = output.stdout.split(|byte| *byte == 0);
        let tree = String::from_utf8_lossy(fields.next().unwrap_or_default())
            .trim()
            .to_owned();
        if clean {
            return Ok(Merged::Clean(tree));
        }
        let mut paths: Vec<String> = fields
            .take_while(|field| !field.is_empty())
            .map(|field| String::from_utf8_lossy(field).into_owned())
            .collect();
        paths.sort();
        paths.dedup();
        Ok(Merged::Conflict { tree, paths })
    }

    /// Removes the git worktree at `path` (what it holds should be recorded first) and its
    /// record in the repository; nothing when it is gone already.
    ///
    /// # Errors
    /// When it cannot be removed.
    pub fn remove_worktree(&self, path: &Path) -> Result<(), SnapshotError> {
        let _lock = self.worktrees_lock()?;
        if path.exists() {
            let removed = self
                .repo
                .worktree(&["remove", "--force", "--force"], Some((path, "")));
            if removed.is_err() && path.exists() {
                fs::remove_dir_all(path).map_err(|error| SnapshotError::io(path, &error))?;
            }
        }
        self.repo.worktree(&["prune"], None)
    }

    /// Deletes this workspace's stat cache (its private index): for a worktree about to go.
    pub fn forget_stat_cache(&self) {
        let _ = fs::remove_file(&self.repo.index);
    }
}
