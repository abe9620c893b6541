//! `parallel-shared-edits`: agents that can edit files run at once in one working tree.
//!
//! ## What it does
//! Reports a `parallel` without `isolation="worktree"` where agents that can change files
//! (see `can_edit`: a coding-agent CLI allowed to edit, a model API granted tools; never
//! `in-process`, `replay` or `permission="plan"`) sit in two of its
//! branches, or in a `for-each` body that may run more than one item at a time.
//!
//! ## Why is this bad?
//! The agents edit the same files at the same moment: one overwrites what the other just
//! wrote, a build one runs sees the other's half-made change, and the result depends on
//! timing. A retry cannot put the files back either, since a sibling is still at work.
//!
//! ## Example
//! ```kdl
//! parallel "fixes" {
//!     agent "fix-parser" { prompt "Fix the parser"; }
//!     agent "fix-lexer" { prompt "Fix the lexer"; }
//! }
//! ```
//!
//! ## Use instead
//! ```kdl
//! parallel "fixes" isolation="worktree" {
//!     agent "fix-parser" { prompt "Fix the parser"; }
//!     agent "fix-lexer" { prompt "Fix the lexer"; }
//! }
//! ```

use std::collections::BTreeMap;

use crate::diagnostic::{Code, Diagnostic};
use crate::ir::{Agent, Isolation, NodeIdx, NodeKind, PermissionMode, Workflow, adapter_info};
use crate::source::Span;

use super::super::driver::Facts;

/// Reports parallels whose branches' agents edit one tree at once.
pub(crate) fn check(facts: &Facts<'_>, out: &mut Vec<Diagnostic>) {
    let workflow = facts.workflow;
    // parallel → its branches' first editing agent: (branch, agent id, span).
    let mut editors: BTreeMap<NodeIdx, Vec<(usize, String, Span)>> = BTreeMap::new();
    for (index, chain) in facts.model.branches.iter().enumerate() {
        let node = workflow.node(NodeIdx(index as u32));
        let NodeKind::Agent(agent) = &node.kind else {
            continue;
        };
        if !can_edit(workflow, agent) {
            continue;
        }
        for &(parallel, branch) in chain {
            let list = editors.entry(parallel).or_default();
            if !list.iter().any(|(seen, _, _)| *seen == branch) {
                list.push((branch, node.id.value.clone(), node.id.span));
            }
        }
    }
    for (parallel, list) in editors {
        let node = workflow.node(parallel);
        let NodeKind::Parallel(par) = &node.kind else {
            continue;
        };
        if par.isolation == Isolation::Worktree || par.tasks.is_some() {
            continue;
        }
        let help = "add `isolation=\"worktree\"`: each branch then edits a git worktree of its own, and their changes are merged when the parallel ends";
        if par.for_each.is_some() {
            if par
                .max_concurrency
                .as_ref()
                .is_some_and(|max| max.value <= 1)
            {
                continue;
            }
            let (_, agent, span) = &list[0];
            out.push(
                Diagnostic::new(
                    Code::ParallelSharedEdits,
                    *span,
                    format!(
                        "the copies of agent `{agent}` in for-each `{}` edit one working tree at once",
                        node.id.value
                    ),
                )
                .label("can change files, once per item, concurrently")
                .with_label(node.id.span, "runs its items at once in the run's workspace")
                .help(help),
            );
            continue;
        }
        if list.len() < 2 {
            continue;
        }
        let (_, first, first_span) = &list[0];
        let (_, second, span) = &list[1];
        out.push(
            Diagnostic::new(
                Code::ParallelSharedEdits,
                *span,
                format!(
                    "agents `{first}` and `{second}` of `{}` edit one working tree at once",
                    node.id.value
                ),
            )
            .label("can change files")
            .with_label(*first_span, "can change the same files at the same time")
            .help(help),
        );
    }
}

/// Whether an agent can change files: its backend can — not one answering in this process
/// or playing a recording back; a model API only through tools it is granted; a CLI that is
/// read-only by default only when given a permission or tools — and it is not limited to
/// planning.
fn can_edit(workflow: &Workflow, agent: &Agent) -> bool {
    let permission = agent.permission.as_ref().map(|mode| mode.value);
    if permission == Some(PermissionMode::Plan) {
        return false;
    }
    let granted = !agent.tools.is_empty() || !agent.mcp.is_empty() || !workflow.mcp.is_empty();
    let Some(provider) = workflow
        .agent_provider_name(agent)
        .and_then(|name| workflow.provider(&name.value))
    else {
        return true;
    };
    match provider.adapter.value.as_str() {
        "in-process" | "replay" => false,
        "anthropic" | "openai" => granted,
        adapter => !adapter_info(adapter)
            .is_some_and(|info| info.read_only_by_default && permission.is_none() && !granted),
    }
}

#[cfg(test)]
mod tests {
    use crate::check::analyze::testing::{Builder, messages, run};
    use crate::diagnostic::Code;
    use crate::ir::{Isolation, NodeKind, Strategy, ValueType};

    fn isolate(b: &mut Builder, id: &str) {
        let workflow = b.workflow_mut();
        let idx = workflow
            .nodes
            .iter()
            .position(|node| node.id.value == id)
            .expect("the parallel");
        if let NodeKind::Parallel(parallel) = &mut workflow.nodes[idx].kind {
            parallel.isolation = Isolation::Worktree;
        }
    }

    #[test]
    fn two_branches_with_agents_are_reported_unless_isolated() {
        let build = |isolated: bool| {
            let mut b = Builder::new();
            b.parallel("fixes", Strategy::All, None, |b| {
                b.branch("parser", |b| {
                    b.agent("fix-parser", "Fix the parser");
                });
                b.branch("lexer", |b| {
                    b.agent("fix-lexer", "Fix the lexer");
                });
            });
            if isolated {
                isolate(&mut b, "fixes");
            }
            run(&b.finish())
        };
        assert_eq!(
            messages(&build(false), Code::ParallelSharedEdits),
            ["agents `fix-parser` and `fix-lexer` of `fixes` edit one working tree at once"]
        );
        assert!(messages(&build(true), Code::ParallelSharedEdits).is_empty());
    }

    #[test]
    fn one_editing_branch_is_fine_and_a_for_each_body_is_not() {
        let mut b = Builder::new();
        b.input("files", ValueType::Array, None);
        b.parallel("review", Strategy::All, None, |b| {
            b.branch("fix", |b| {
                b.agent("fix", "Fix it");
            });
            b.branch("test", |b| {
                b.tool("test", &["cargo", "test"]);
            });
        });
        b.parallel("fan", Strategy::All, Some(("input.files", "file")), |b| {
            b.branch("body", |b| {
                b.agent("one", "Fix {{ file }}");
            });
        });
        assert_eq!(
            messages(&run(&b.finish()), Code::ParallelSharedEdits),
            ["the copies of agent `one` in for-each `fan` edit one working tree at once"]
        );
    }
}
