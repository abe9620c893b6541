//! `parallel "<id>" strategy=… max-concurrency=N [for-each="<expr>" as="<name>"] { … }`.
//! Without `for-each`, each statement is a branch named by its id, and each `branch
//! "<name>" { … }` is a branch of several statements. With `for-each`, the whole body is the
//! single branch, named after the `parallel`.

use super::common::{item_name, with_item};
use super::ids::IdAllocator;
use super::looping::empty_block;
use super::resolver::Resolver;
use super::statement::{resolve_block, resolve_statement};
use crate::check::structure::Checked;
use crate::diagnostic::{Code, Diagnostic};
use crate::ir::{Block, Branch, ForEach, Isolation, NodeIdx, Parallel, Strategy};
use crate::source::Spanned;

/// The branches and how they run.
pub(super) fn resolve_parallel(
    r: &mut Resolver<'_>,
    ids: &mut IdAllocator,
    checked: &Checked<'_>,
    idx: NodeIdx,
) -> Parallel {
    let strategy = match r
        .string(checked.prop("strategy"))
        .as_deref()
        .map(String::as_str)
    {
        Some("race") => Strategy::Race,
        Some("any") => Strategy::Any,
        _ => Strategy::All,
    };
    let for_each = for_each(r, checked);
    let branches = if for_each.is_some() {
        for branch in checked.children_of("branch") {
            r.report(
                Diagnostic::new(
                    Code::UnknownChild,
                    branch.name_span(),
                    "a `for-each` parallel has no named branches",
                )
                .label("`branch` in a `for-each` parallel")
                .help("its whole block runs once per item: put the statements directly inside it"),
            );
        }
        let item = for_each.as_ref().map(|for_each| for_each.as_.clone());
        let body = match &item {
            Some(item) => with_item(r, item, |r| resolve_block(r, ids, checked, Some(idx))),
            None => resolve_block(r, ids, checked, Some(idx)),
        };
        let name = r.node(idx).id.clone();
        if body.nodes.is_empty() {
            Vec::new()
        } else {
            vec![Branch { name, body }]
        }
    } else {
        branches(r, ids, checked, idx)
    };
    if branches.is_empty() {
        r.report(empty_block(checked, "parallel"));
    }
    Parallel {
        strategy,
        max_concurrency: r.integer(checked.prop("max-concurrency")),
        for_each,
        isolation: match r
            .string(checked.prop("isolation"))
            .as_deref()
            .map(String::as_str)
        {
            Some("worktree") => Isolation::Worktree,
            _ => Isolation::Shared,
        },
        branches,
        tasks: None,
    }
}

fn for_each(r: &mut Resolver<'_>, checked: &Checked<'_>) -> Option<ForEach> {
    let as_ = r.string(checked.prop("as"));
    let Some(items) = r.template(checked.prop("for-each")) else {
        if let (Some(as_), false) = (&as_, checked.wrote("for-each")) {
            r.report(
                Diagnostic::new(Code::InvalidValue, as_.span, "`as` without `for-each`")
                    .label("names no item")
                    .help("add `for-each=\"<list expression>\"`, or remove `as`"),
            );
        }
        return None;
    };
    let as_ = match as_ {
        Some(name) => item_name(r, name, "item", "item"),
        None => Spanned::new("item".to_owned(), items.span),
    };
    Some(ForEach { items, as_ })
}

fn branches(
    r: &mut Resolver<'_>,
    ids: &mut IdAllocator,
    checked: &Checked<'_>,
    idx: NodeIdx,
) -> Vec<Branch> {
    let mut branches: Vec<Branch> = Vec::new();
    let mut named: Vec<bool> = Vec::new();
    for child in &checked.children {
        let is_named = child.spec.id == "branch";
        let branch = if child.spec.id == "branch" {
            let name = r
                .string(child.arg(0))
                .unwrap_or_else(|| Spanned::new(String::new(), child.name_span()));
            let body = resolve_block(r, ids, child, Some(idx));
            if body.nodes.is_empty() {
                r.report(empty_block(child, "branch"));
            }
            Branch { name, body }
        } else if child.spec.statement {
            let node = resolve_statement(r, ids, child, Some(idx));
            let name = r.node(node).id.clone();
            Branch {
                name,
                body: Block {
                    nodes: vec![node],
                    span: child.node.span,
                },
            }
        } else {
            continue;
        };
        if !branch.name.value.is_empty() {
            // Two statements with one id are reported by the node id check.
            let clash = branches.iter().zip(&named).find(|(first, first_named)| {
                first.name.value == branch.name.value && (is_named || **first_named)
            });
            if let Some((first, _)) = clash {
                r.report(
                    Diagnostic::new(
                        Code::DuplicateId,
                        branch.name.span,
                        format!("two branches are named `{}`", branch.name.value),
                    )
                    .label("named again here")
                    .with_label(first.name.span, "first named here")
                    .help("give each branch of a `parallel` its own name"),
                );
            }
        }
        branches.push(branch);
        named.push(is_named);
    }
    branches
}

#[cfg(test)]
mod tests {
    use crate::check::testing::{codes, resolve_text};
    use crate::diagnostic::Code;
    use crate::ir::NodeKind;

    fn flow(body: &str) -> String {
        format!("workflow \"w\" {{\nstate {{ field \"n\"; }}\n{body}\n}}")
    }

    #[test]
    fn branches_are_statements_or_named_blocks() {
        let (outcome, _) = resolve_text(&flow(
            "parallel \"p\" { set \"n\" \"1\"; branch \"b\" { set \"n\" \"2\"; set \"n\" \"3\"; } }",
        ));
        assert_eq!(outcome.diagnostics, vec![]);
        let workflow = outcome.value.unwrap();
        let NodeKind::Parallel(parallel) = &workflow.nodes[0].kind else {
            panic!()
        };
        let names: Vec<&str> = parallel
            .branches
            .iter()
            .map(|b| b.name.value.as_str())
            .collect();
        assert_eq!(names, ["set-n", "b"]);
        assert_eq!(parallel.branches[1].body.nodes.len(), 2);
        assert!(
            workflow.nodes[1..]
                .iter()
                .all(|node| node.parent == Some(crate::ir::NodeIdx(0)))
        );
    }

    #[test]
    fn for_each_has_one_branch() {
        let (outcome, _) = resolve_text(&flow(
            "parallel \"p\" for-each=\"[1, 2]\" as=\"x\" { set \"n\" \"{{ x }}\"; set \"n\" \"2\"; }",
        ));
        assert_eq!(outcome.diagnostics, vec![]);
        let workflow = outcome.value.unwrap();
        let NodeKind::Parallel(parallel) = &workflow.nodes[0].kind else {
            panic!()
        };
        assert_eq!(parallel.branches.len(), 1);
        assert_eq!(parallel.branches[0].name.value, "p");
        assert_eq!(parallel.for_each.as_ref().unwrap().as_.value, "x");
    }

    #[test]
    fn misuse() {
        assert_eq!(
            codes(&flow("parallel \"p\" as=\"x\" { set \"n\" \"1\"; }")),
            [Code::InvalidValue]
        );
        assert_eq!(
            codes(&flow(
                "parallel \"p\" for-each=\"[1]\" as=\"my-x\" { set \"n\" \"1\"; }"
            )),
            [Code::InvalidId]
        );
        assert_eq!(
            codes(&flow(
                "parallel \"p\" for-each=\"[1]\" { branch \"b\" { set \"n\" \"1\"; } }"
            )),
            [Code::UnknownChild, Code::EmptyBlock]
        );
        assert_eq!(
            codes(&flow(
                "parallel \"p\" { branch \"b\" { set \"n\" \"1\"; }; branch \"b\" { set \"n\" \"2\"; } }"
            )),
            [Code::DuplicateId]
        );
        assert_eq!(
            codes(&flow("parallel \"p\" { branch \"b\"; }")),
            [Code::EmptyBlock]
        );
    }
}
