//! [`Workspace`]: where a run's files live — the directory its agents and tools work in.
//!
//! A run has one; a step is given the run's (and, once parallel branches may work in git
//! worktrees of their own, its branch's). It is the one place that says where files are,
//! so what is kept about them hangs on it: [`snapshot`]s of the files around each step,
//! worktrees, the roots a sandbox lets a step write. It holds the root directory, against
//! which relative paths of the workflow (a tool's `cwd=`, a task loop's file) are
//! resolved, and the run's snapshot store when the run keeps one.
//!
//! This module imports nothing else of atomic: the runtime and the providers import it.

mod git;
mod lock;
pub mod snapshot;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use snapshot::Snapshots;

/// The directory a run's agents and tools work in.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Workspace {
    root: PathBuf,
    /// Where its files are recorded, when the run keeps snapshots (not sent over the wire:
    /// a process reopens the store from the root).
    #[serde(skip)]
    snapshots: Option<Arc<Snapshots>>,
}

impl Workspace {
    /// The workspace rooted at `root` (the project's directory, usually).
    #[must_use]
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self {
            root: root.into(),
            snapshots: None,
        }
    }

    /// The same workspace, its files recorded in `snapshots`.
    #[must_use]
    pub fn with_snapshots(self, snapshots: Arc<Snapshots>) -> Self {
        Self {
            snapshots: Some(snapshots),
            ..self
        }
    }

    /// Its snapshot store, when the run keeps snapshots.
    #[must_use]
    pub fn snapshots(&self) -> Option<Arc<Snapshots>> {
        self.snapshots.clone()
    }

    /// Its root directory.
    #[must_use]
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `path` in the workspace: itself when absolute, else below the root.
    #[must_use]
    pub fn resolve(&self, path: impl AsRef<Path>) -> PathBuf {
        self.root.join(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_resolve_below_the_root_and_absolute_ones_stay() {
        let workspace = Workspace::new("/work/project");
        assert_eq!(workspace.resolve("src"), Path::new("/work/project/src"));
        assert_eq!(workspace.resolve("/etc/hosts"), Path::new("/etc/hosts"));
        assert_eq!(workspace.root(), Path::new("/work/project"));
    }

    #[test]
    fn it_crosses_the_wire_as_its_root() {
        let workspace = Workspace::new("/w");
        let json = serde_json::to_value(&workspace).expect("serialises");
        assert_eq!(json, serde_json::json!({"root": "/w"}));
        let back: Workspace = serde_json::from_value(json).expect("reads back");
        assert_eq!(back, workspace);
    }
}
