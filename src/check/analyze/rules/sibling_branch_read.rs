//! `sibling-branch-read`: a `parallel` branch reads what a node in another branch writes.
//!
//! ## What it does
//! Branches of a `parallel` run at the same time. This rule reports a template in one
//! branch that reads `outputs.<id>` of a node in a sibling branch of the same parallel, or
//! a state field (`state.<field>`) that a sibling branch writes.
//!
//! ## Why is this bad?
//! Whether the sibling has finished is a race, and a branch works on the state as it was
//! when the parallel began: the read never sees the sibling's write, however the race
//! goes.
//!
//! ## Example
//! ```kdl
//! parallel "checks" {
//!     agent "security" { prompt "Audit"; }
//!     agent "summary" { prompt "Summarise {{ outputs.security }}"; }
//! }
//! ```
//!
//! ## Use instead
//! ```kdl
//! parallel "checks" { agent "security" { prompt "Audit"; } }
//! agent "summary" { prompt "Summarise {{ outputs.security }}"; }
//! ```

use std::collections::{HashMap, HashSet};

use crate::diagnostic::{Code, Diagnostic};
use crate::ir::{NodeIdx, NodeKind};

use super::super::driver::Facts;

/// Reports reads of sibling branches' outputs.
pub(crate) fn check(facts: &Facts<'_>, out: &mut Vec<Diagnostic>) {
    let workflow = facts.workflow;
    // Which nodes inside a parallel write each field (most workflows have none, and then
    // no state read can race).
    let mut writers: HashMap<&str, Vec<NodeIdx>> = HashMap::new();
    for (index, chain) in facts.model.branches.iter().enumerate() {
        if chain.is_empty() {
            continue;
        }
        let node = NodeIdx(u32::try_from(index).unwrap_or(u32::MAX));
        for write in facts.model.writes(node) {
            writers
                .entry(write.field.value.as_str())
                .or_default()
                .push(node);
        }
    }
    for site in &facts.model.sites {
        let mut seen = HashSet::new();
        let mut seen_fields = HashSet::new();
        for read in site.reads() {
            if let ("state", Some(field)) = (read.root(), read.member())
                && let Some(nodes) = writers.get(field)
                && seen_fields.insert(field)
                && let Some(diagnostic) = state_read(facts, site.node, nodes, field, read.span)
            {
                out.push(diagnostic);
            }
            let ("outputs", Some(id)) = (read.root(), read.member()) else {
                continue;
            };
            let Some(target) = facts.model.node(id) else {
                continue;
            };
            let Some((parallel, mine, theirs)) = facts.model.sibling_branches(site.node, target)
            else {
                continue;
            };
            if !seen.insert(target) {
                continue;
            }
            let NodeKind::Parallel(par) = &workflow.node(parallel).kind else {
                continue;
            };
            let branch = |index: usize| {
                par.branches
                    .get(index)
                    .map_or(String::new(), |branch| branch.name.value.clone())
            };
            let parallel_id = &workflow.node(parallel).id.value;
            out.push(
                Diagnostic::new(
                    Code::SiblingBranchRead,
                    read.span,
                    format!(
                        "branch `{}` of `{parallel_id}` reads `outputs.{id}`, which sibling branch `{}` writes",
                        branch(mine),
                        branch(theirs)
                    ),
                )
                .label(format!("`{id}` may still be running here"))
                .with_label(
                    workflow.node(target).id.span,
                    format!("runs concurrently, in branch `{}`", branch(theirs)),
                )
                .help(format!(
                    "read it after `{parallel_id}` ends, or put both steps in one branch"
                )),
            );
        }
    }
}

/// A read of `state.<field>` at `node` that a node in a sibling branch writes.
fn state_read(
    facts: &Facts<'_>,
    node: NodeIdx,
    writers: &[NodeIdx],
    field: &str,
    span: crate::source::Span,
) -> Option<Diagnostic> {
    let workflow = facts.workflow;
    let (writer, parallel, mine, theirs) = writers.iter().find_map(|&writer| {
        let (parallel, mine, theirs) = facts.model.sibling_branches(node, writer)?;
        Some((writer, parallel, mine, theirs))
    })?;
    let NodeKind::Parallel(par) = &workflow.node(parallel).kind else {
        return None;
    };
    let branch = |index: usize| {
        par.branches
            .get(index)
            .map_or(String::new(), |branch| branch.name.value.clone())
    };
    let parallel_id = &workflow.node(parallel).id.value;
    Some(
        Diagnostic::new(
            Code::SiblingBranchRead,
            span,
            format!(
                "branch `{}` of `{parallel_id}` reads `state.{field}`, which sibling branch `{}` writes",
                branch(mine),
                branch(theirs)
            ),
        )
        .label(format!(
            "the value from before `{parallel_id}` began: a branch never sees a sibling's writes"
        ))
        .with_label(
            workflow.node(writer).id.span,
            format!("writes `{field}`, concurrently, in branch `{}`", branch(theirs)),
        )
        .help(format!(
            "read it after `{parallel_id}` ends, or put both steps in one branch"
        )),
    )
}

#[cfg(test)]
mod tests {
    use crate::check::analyze::testing::{Builder, messages, run};
    use crate::diagnostic::Code;
    use crate::ir::{Strategy, ValueType};

    #[test]
    fn reports_reads_across_branches_not_within_or_after() {
        let mut b = Builder::new();
        b.parallel("checks", Strategy::All, None, |b| {
            b.branch("security", |b| {
                b.agent("audit", "x");
                b.agent("audit-2", "{{ outputs.audit }}");
            });
            b.branch("summary", |b| {
                b.agent("sum", "{{ outputs.audit }}");
            });
        });
        b.agent("after", "{{ outputs.audit }}");
        let found = run(&b.finish());
        assert_eq!(
            messages(&found, Code::SiblingBranchRead),
            [
                "branch `summary` of `checks` reads `outputs.audit`, which sibling branch `security` writes"
            ]
        );
        assert!(messages(&found, Code::PossiblyUnset).is_empty());
    }

    #[test]
    fn reports_state_a_sibling_branch_writes() {
        let mut b = Builder::new();
        b.field("notes", ValueType::String, Some(serde_json::json!("")));
        b.parallel("checks", Strategy::All, None, |b| {
            b.branch("writer", |b| {
                b.agent_to("write", "x", "notes");
                b.agent("own", "{{ state.notes }}");
            });
            b.branch("reader", |b| {
                b.agent("read", "{{ state.notes }} and {{ state.notes }}");
            });
        });
        b.agent("after", "{{ state.notes }}");
        assert_eq!(
            messages(&run(&b.finish()), Code::SiblingBranchRead),
            [
                "branch `reader` of `checks` reads `state.notes`, which sibling branch `writer` writes"
            ]
        );
    }
}
