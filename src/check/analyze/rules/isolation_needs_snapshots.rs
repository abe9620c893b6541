//! `isolation="worktree"` in a workflow with `workspace "off"` (reported as
//! `invalid-value`): a branch's worktree is made from the workspace's snapshots, which that
//! workflow turns off, so the parallel could never run.

use crate::diagnostic::{Code, Diagnostic};
use crate::ir::{Isolation, NodeKind, WorkspaceMode};

use super::super::driver::Facts;

/// Reports isolated parallels of a workflow that keeps no snapshots.
pub(crate) fn check(facts: &Facts<'_>, out: &mut Vec<Diagnostic>) {
    let workflow = facts.workflow;
    let Some(off) = workflow
        .workspace
        .as_ref()
        .filter(|mode| mode.value == WorkspaceMode::Off)
    else {
        return;
    };
    for node in &workflow.nodes {
        let NodeKind::Parallel(parallel) = &node.kind else {
            continue;
        };
        if parallel.isolation != Isolation::Worktree {
            continue;
        }
        out.push(
            Diagnostic::new(
                Code::InvalidValue,
                node.id.span,
                format!(
                    "`{}` runs its branches in git worktrees, which need the workspace's snapshots",
                    node.id.value
                ),
            )
            .label("`isolation=\"worktree\"`")
            .with_label(off.span, "snapshots are turned off here")
            .help("remove `workspace \"off\"`, or drop `isolation=\"worktree\"`"),
        );
    }
}
