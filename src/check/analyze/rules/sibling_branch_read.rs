//! `sibling-branch-read`: a `parallel` branch reads the output of a node in another branch.
//!
//! ## What it does
//! Branches of a `parallel` run at the same time. This rule reports a template in one
//! branch that reads `outputs.<id>` of a node in a sibling branch of the same parallel.
//!
//! ## Why is this bad?
//! Whether the sibling has finished is a race: the read is empty on some runs and not on
//! others.
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

use std::collections::HashSet;

use crate::diagnostic::{Code, Diagnostic};
use crate::ir::NodeKind;

use super::super::driver::Facts;

/// Reports reads of sibling branches' outputs.
pub(crate) fn check(facts: &Facts<'_>, out: &mut Vec<Diagnostic>) {
    let workflow = facts.workflow;
    for site in &facts.model.sites {
        let mut seen = HashSet::new();
        for read in site.reads() {
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

#[cfg(test)]
mod tests {
    use crate::check::analyze::testing::{Builder, messages, run};
    use crate::diagnostic::Code;
    use crate::ir::Strategy;

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
}
