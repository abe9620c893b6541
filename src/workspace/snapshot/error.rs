//! [`SnapshotError`]: why the files could not be recorded, compared or put back.

use std::io;
use std::path::{Path, PathBuf};

/// Why the files could not be recorded, compared or put back.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    /// git cannot be run.
    #[error(
        "git is not available ({0}): install git, or set `workspace \"off\"` to run without snapshots"
    )]
    NoGit(String),
    /// The store (or the work tree, when putting files back) cannot be written.
    #[error("cannot write to {}: {reason}", path.display())]
    NotWritable {
        /// The path refused.
        path: PathBuf,
        /// The system's reason.
        reason: String,
    },
    /// The workspace cannot be read (its root is missing, …).
    #[error("cannot read {}: {reason}", path.display())]
    Unreadable {
        /// The path.
        path: PathBuf,
        /// The system's reason.
        reason: String,
    },
    /// A git command failed.
    #[error("`{command}` failed: {message}")]
    Git {
        /// The command, without the settings every command is given.
        command: String,
        /// What git said.
        message: String,
    },
    /// Another process held the workspace's lock too long.
    #[error("the workspace is being recorded by another process (the lock {} was held for 10 s; remove it if no atomic process is running)", .0.display())]
    Busy(PathBuf),
    /// The run's chain moved while a snapshot was added to it: another process records the
    /// same run.
    #[error(
        "the run's snapshots moved while one was being added: another process is recording the same run"
    )]
    Conflict,
    /// A run id or ref name that would not stay below `refs/atomic/`.
    #[error(
        "`{0}` cannot name snapshots: use letters, digits, `.`, `_`, `-` and `/`, without `..`"
    )]
    BadName(String),
    /// Not an object id.
    #[error("`{0}` is not a snapshot or tree id (hex digits)")]
    BadId(String),
}

impl SnapshotError {
    /// An IO error at `path`: not writable when permission was refused.
    pub(crate) fn io(path: &Path, error: &io::Error) -> Self {
        let (path, reason) = (path.to_path_buf(), error.to_string());
        match error.kind() {
            io::ErrorKind::PermissionDenied | io::ErrorKind::ReadOnlyFilesystem => {
                Self::NotWritable { path, reason }
            }
            _ => Self::Unreadable { path, reason },
        }
    }
}
