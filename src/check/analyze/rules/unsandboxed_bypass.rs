//! `unsandboxed-bypass`: an agent allowed everything runs with nothing around it.
//!
//! ## What it does
//! Reports an agent with `permission="bypass"` that runs in no `sandbox` (neither its own
//! nor the workflow's, or one that says `"none"`).
//!
//! ## Why is this bad?
//! `bypass` lets the agent run any command and change any file without asking: with no
//! sandbox, that is the user's whole file system, network and credentials, unattended.
//!
//! ## Example
//! ```kdl
//! agent "fix" permission="bypass" { prompt "Fix the tests"; }
//! ```
//!
//! ## Use instead
//! ```kdl
//! sandbox { network "registry.npmjs.org"; }
//! agent "fix" permission="bypass" { prompt "Fix the tests"; }
//! ```

use crate::diagnostic::{Code, Diagnostic};
use crate::ir::{NodeKind, PermissionMode};

use super::super::driver::Facts;

/// Reports bypassing agents outside any sandbox.
pub(crate) fn check(facts: &Facts<'_>, out: &mut Vec<Diagnostic>) {
    let workflow = facts.workflow;
    for node in &workflow.nodes {
        let NodeKind::Agent(agent) = &node.kind else {
            continue;
        };
        let Some(permission) = agent
            .permission
            .as_ref()
            .filter(|mode| mode.value == PermissionMode::Bypass)
        else {
            continue;
        };
        let sandboxed = agent
            .sandbox
            .as_ref()
            .or(workflow.sandbox.as_ref())
            .is_some_and(|sandbox| sandbox.confines());
        if sandboxed {
            continue;
        }
        out.push(
            Diagnostic::new(
                Code::UnsandboxedBypass,
                permission.span,
                format!(
                    "agent `{}` may do anything without asking, and runs in no sandbox",
                    node.id.value
                ),
            )
            .label("runs any command, changes any file")
            .help("add `sandbox` to the agent or the workflow (its writes stay in the workspace, its credentials unreadable, its network limited), or ask for less than `bypass`"),
        );
    }
}
