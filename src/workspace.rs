//! [`Workspace`]: where a run's files live — the directory its agents and tools work in.
//!
//! A run has one; a step is given the run's (and, once parallel branches may work in git
//! worktrees of their own, its branch's). It is the one place that says where files are,
//! so what is kept about them hangs on it: snapshots of the files around each step,
//! worktrees, the roots a sandbox lets a step write. Today it holds the root directory;
//! relative paths of the workflow (a tool's `cwd=`, a task loop's file) are resolved
//! against it.
//!
//! This module imports nothing else of atomic: the runtime and the providers import it.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The directory a run's agents and tools work in.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Workspace {
    root: PathBuf,
}

impl Workspace {
    /// The workspace rooted at `root` (the project's directory, usually).
    #[must_use]
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
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
