//! `parallel "<id>" strategy=… max-concurrency=N [for-each="<expr>" as="<name>"] { … }`.
//! Without `for-each`, each statement is a branch named by its id, and each `branch
//! "<name>" { … }` is a branch of several statements. With `for-each`, the whole body is the
//! single branch, named after the `parallel`.

use super::ids::IdAllocator;
use super::looping::empty_block;
use super::resolver::Resolver;
use super::statement::{resolve_block, resolve_statement};
use crate::check::structure::Checked;
use crate::check::value::is_name;
use crate::diagnostic::{Code, Diagnostic};
use crate::ir::{Block, Branch, ForEach, NodeIdx, Parallel, Strategy};
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
        let body = resolve_block(r, ids, checked, Some(idx));
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
        branches,
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
        Some(name) if !is_name(&name.value) => {
            r.report(
                Diagnostic::new(
                    Code::InvalidId,
                    name.span,
                    format!("`{}` is not a valid variable name", name.value),
                )
                .label("not a name")
                .help("templates read it as a variable: use letters, digits and `_`"),
            );
            Spanned::new("item".to_owned(), name.span)
        }
        Some(name) => name,
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
