//! The workspace a run works in, and whether its files are recorded: the workflow's
//! `workspace` setting, else the project's (`.atomic/config.kdl`), else snapshots — for
//! runs the store keeps (a dry run or a run in memory cannot be resumed, diffed or
//! rewound, so it records nothing).

use std::sync::Arc;

use crate::cli::execute::workflow::Loaded;
use crate::cli::project::Project;
use crate::ir::WorkspaceMode;
use crate::workspace::Workspace;
use crate::workspace::snapshot::{SnapshotError, Snapshots};

/// The run's workspace, with its snapshots when the run keeps them.
///
/// # Errors
/// The snapshots cannot be kept (a directory atomic may not write into, git failing): a
/// message saying where, why and how to run without them. Git missing is an error only
/// where the workflow or the project asked for snapshots; by default it is one warning.
pub(crate) fn open(
    project: &Project,
    loaded: &Loaded,
    configured: Option<WorkspaceMode>,
    kept: bool,
) -> Result<Workspace, String> {
    let workspace = Workspace::new(project.root.clone());
    let declared = loaded.workflow().workspace.as_ref().map(|mode| mode.value);
    let asked = declared.or(configured);
    if !kept || asked == Some(WorkspaceMode::Off) {
        return Ok(workspace);
    }
    match Snapshots::open(&project.root) {
        Ok(snapshots) => Ok(workspace.with_snapshots(Arc::new(snapshots))),
        Err(SnapshotError::NoGit(reason)) if asked.is_none() => {
            eprintln!(
                "warning: this run keeps no snapshots of its files ({reason}): retries and resumes do not put files back, and `atomic runs diff`, `rewind` and `fork` have nothing to show; install git, or set `workspace \"off\"` in .atomic/config.kdl to say so"
            );
            Ok(workspace)
        }
        Err(error) => Err(format!(
            "cannot record the files of {}: {error}\n  help: fix that, or run without snapshots: `workspace \"off\"` in the workflow or in .atomic/config.kdl",
            project.root.display()
        )),
    }
}
