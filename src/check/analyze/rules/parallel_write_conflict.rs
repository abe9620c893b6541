//! `parallel-write-conflict`: two branches of a `parallel` write one `replace` field.
//!
//! ## What it does
//! Collects, per `strategy="all"` `parallel`, the state fields each branch writes (outputs,
//! `set`, subgraph `output` mappings, `on-error` fallbacks, at any depth) whose reducer
//! replaces the value (`replace`, the default, or `if-defined`). A field written by two
//! branches is reported at the later write, with the earlier one labelled; a field written
//! inside a `for-each` body is reported too (for every strategy), since every copy of the
//! body writes it. `race` and `any` parallels with separate branches are not reported:
//! one branch wins and the others are cancelled, so writing one result field from each
//! branch is how "first answer wins" is written.
//!
//! ## Why is this bad?
//! The branches finish in any order and the last write wins: the result differs from run
//! to run, and the other branches' work is lost.
//!
//! ## Example
//! ```kdl
//! state { field "review" type="string"; }
//! parallel "reviews" {
//!     agent "security" { prompt "…"; output "review"; }
//!     agent "perf" { prompt "…"; output "review"; }
//! }
//! ```
//!
//! ## Use instead
//! ```kdl
//! state { field "reviews" type="array" reduce="append" default="[]"; }
//! ```

use std::collections::BTreeMap;

use crate::diagnostic::{Code, Diagnostic};
use crate::ir::{NodeIdx, NodeKind, Strategy};
use crate::source::Span;

use super::super::driver::Facts;
use super::super::model::replaces;

/// Reports fields written by more than one branch (or every `for-each` copy).
pub(crate) fn check(facts: &Facts<'_>, out: &mut Vec<Diagnostic>) {
    let workflow = facts.workflow;
    // (parallel, field) → the first write of each branch: (branch, span).
    let mut by_parallel: BTreeMap<(NodeIdx, &str), Vec<(usize, Span)>> = BTreeMap::new();
    for (index, chain) in facts.model.branches.iter().enumerate() {
        if chain.is_empty() {
            continue;
        }
        for write in facts.model.writes(NodeIdx(index as u32)) {
            let field = write.field.value.as_str();
            if !workflow
                .field(field)
                .is_some_and(|decl| replaces(&decl.reducer))
            {
                continue;
            }
            for &(parallel, branch) in chain {
                let list = by_parallel.entry((parallel, field)).or_default();
                if !list.iter().any(|&(seen, _)| seen == branch) {
                    list.push((branch, write.field.span));
                }
            }
        }
    }
    for ((parallel, field), list) in by_parallel {
        let node = workflow.node(parallel);
        let NodeKind::Parallel(par) = &node.kind else {
            continue;
        };
        let name = |branch: usize| {
            par.branches
                .get(branch)
                .map_or(String::new(), |branch| branch.name.value.clone())
        };
        let help = format!(
            "`{field}` keeps only the last write; declare a reducer (`reduce=\"append\"`, `\"merge\"`, …) or write different fields"
        );
        if par.for_each.is_some() {
            let (_, span) = list[0];
            out.push(
                Diagnostic::new(
                    Code::ParallelWriteConflict,
                    span,
                    format!(
                        "every copy of for-each `{}` writes `{field}`",
                        node.id.value
                    ),
                )
                .label("written once per item, concurrently")
                .help(help),
            );
            continue;
        }
        if list.len() < 2 || par.strategy != Strategy::All {
            continue;
        }
        let (first_branch, first) = list[0];
        for &(branch, span) in &list[1..] {
            out.push(
                Diagnostic::new(
                    Code::ParallelWriteConflict,
                    span,
                    format!(
                        "branches `{}` and `{}` of `{}` both write `{field}`",
                        name(first_branch),
                        name(branch),
                        node.id.value
                    ),
                )
                .label(format!("written in branch `{}`", name(branch)))
                .with_label(
                    first,
                    format!("also written in branch `{}`", name(first_branch)),
                )
                .help(help.clone()),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::check::analyze::testing::{Builder, messages, only, run};
    use crate::diagnostic::Code;
    use crate::ir::{Reducer, Strategy, ValueType};

    #[test]
    fn reports_replace_fields_written_by_two_branches() {
        let mut b = Builder::new();
        b.field("review", ValueType::String, None);
        b.field("all", ValueType::Array, Some(serde_json::json!([])))
            .reducer = Reducer::Append;
        b.parallel("reviews", Strategy::All, None, |b| {
            b.branch("security", |b| {
                b.agent_to("security", "x", "review");
                b.agent_to("security-all", "x", "all");
            });
            b.branch("perf", |b| {
                b.loop_("deep", Some("true"), None, 2, |b| {
                    b.agent_to("perf", "x", "review");
                });
                b.agent_to("perf-all", "x", "all");
            });
        });
        let found = only(run(&b.finish()), Code::ParallelWriteConflict);
        assert_eq!(found.len(), 1, "{found:#?}");
        assert_eq!(
            found[0].message,
            "branches `security` and `perf` of `reviews` both write `review`"
        );
        assert_eq!(found[0].labels.len(), 1);
    }

    #[test]
    fn race_and_any_branches_may_write_one_result() {
        let mut b = Builder::new();
        b.field("answer", ValueType::String, None);
        b.parallel("first", Strategy::Any, None, |b| {
            b.branch("docs", |b| {
                b.agent_to("docs", "x", "answer");
            });
            b.branch("code", |b| {
                b.agent_to("code", "x", "answer");
            });
        });
        assert!(only(run(&b.finish()), Code::ParallelWriteConflict).is_empty());
    }

    #[test]
    fn for_each_bodies_conflict_with_themselves() {
        let mut b = Builder::new();
        b.input("files", ValueType::Array, None);
        b.field("review", ValueType::String, None);
        b.parallel("fan", Strategy::All, Some(("input.files", "file")), |b| {
            b.branch("body", |b| {
                b.agent_to("one", "{{ file }}", "review");
            });
        });
        assert_eq!(
            messages(&run(&b.finish()), Code::ParallelWriteConflict),
            ["every copy of for-each `fan` writes `review`"]
        );
    }
}
