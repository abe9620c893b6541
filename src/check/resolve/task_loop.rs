//! `task-loop "<id>" file="<template>" as="<name>" max-concurrency=N max-iterations=N
//! left-in-progress="passing|failing" { … }`: resolved into a [`Parallel`] over the ready
//! tasks of a tasks file, its whole block the single branch, so every later stage treats
//! the body as a `for-each` body (its variable, `index`, the writes of its items).

use super::common::{item_name, with_item};
use super::ids::IdAllocator;
use super::looping::empty_block;
use super::resolver::Resolver;
use super::statement::resolve_block;
use crate::check::structure::Checked;
use crate::diagnostic::{Code, Diagnostic};
use crate::ir::{Branch, ForEach, NodeIdx, Parallel, Strategy, TaskLoop, TaskStatus, Template};
use crate::source::Spanned;
use crate::syntax::kdl::Value;

/// The tasks file, the task variable, the bounds and the body.
pub(super) fn resolve_task_loop(
    r: &mut Resolver<'_>,
    ids: &mut IdAllocator,
    checked: &Checked<'_>,
    idx: NodeIdx,
) -> Parallel {
    // A missing `file` is reported by the structure check (it is required).
    let file = r.template(checked.prop("file"));
    if let Some(file) = &file
        && file.source.trim().is_empty()
    {
        r.report(
            Diagnostic::new(Code::InvalidValue, file.span, "`file` is empty")
                .label("names no file")
                .help("name the tasks file, like `file=\"tasks.json\"` or `file=\"{{ input.tasks_file }}\"`"),
        );
    }
    let as_ = match r.string(checked.prop("as")) {
        Some(name) => item_name(r, name, "task", "task"),
        None => Spanned::new("task".to_owned(), checked.name_span()),
    };
    let left_in_progress = match r
        .string(checked.prop("left-in-progress"))
        .as_ref()
        .map(|status| status.value.as_str())
    {
        Some("failing") => TaskStatus::Failing,
        _ => TaskStatus::Passing,
    };
    let max_iterations = max_iterations(r, checked);
    let body = with_item(r, &as_, |r| resolve_block(r, ids, checked, Some(idx)));
    let branches = if body.nodes.is_empty() {
        r.report(empty_block(checked, "task-loop"));
        Vec::new()
    } else {
        vec![Branch {
            name: r.node(idx).id.clone(),
            body,
        }]
    };
    let items = file.unwrap_or_else(|| Template {
        source: String::new(),
        span: checked.name_span(),
        exact: false,
        offset: 0,
        shifts: None,
    });
    Parallel {
        strategy: Strategy::All,
        max_concurrency: r.integer(checked.prop("max-concurrency")),
        for_each: Some(ForEach { items, as_ }),
        isolation: crate::ir::Isolation::Shared,
        branches,
        tasks: Some(Box::new(TaskLoop {
            max_iterations,
            left_in_progress,
        })),
    }
}

/// `max-iterations=`: a whole number (kept as its text, an expression like any other) or
/// an expression.
fn max_iterations(r: &mut Resolver<'_>, checked: &Checked<'_>) -> Option<Template> {
    let entry = checked.prop("max-iterations")?;
    match &entry.value {
        Value::Integer(n) if *n >= 0 && *n <= i128::from(u32::MAX) => Some(Template {
            source: n.to_string(),
            span: entry.value_span,
            exact: false,
            offset: 0,
            shifts: None,
        }),
        Value::String(_) => r.template(Some(entry)),
        _ => {
            r.report(
                Diagnostic::new(
                    Code::InvalidValue,
                    entry.value_span,
                    "`max-iterations` is neither a whole number nor an expression",
                )
                .label("not a count of tasks")
                .help("write a whole number like `max-iterations=50`, or an expression like `max-iterations=\"input.max\"`"),
            );
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::check::testing::{codes, resolve_text};
    use crate::diagnostic::Code;
    use crate::ir::{NodeKind, TaskStatus};

    fn flow(body: &str) -> String {
        format!("workflow \"w\" {{\nstate {{ field \"n\"; }}\n{body}\n}}")
    }

    #[test]
    fn a_task_loop_is_a_for_each_over_its_tasks() {
        let (outcome, _) = resolve_text(&flow(
            "task-loop \"work\" file=\"t.json\" as=\"t\" max-concurrency=2 max-iterations=9 left-in-progress=\"failing\" { set \"n\" \"{{ t.id }}\"; }",
        ));
        assert_eq!(outcome.diagnostics, vec![]);
        let workflow = outcome.value.unwrap();
        let NodeKind::Parallel(parallel) = &workflow.nodes[0].kind else {
            panic!()
        };
        assert_eq!(workflow.nodes[0].kind.name(), "task-loop");
        let each = parallel.for_each.as_ref().unwrap();
        assert_eq!(each.as_.value, "t");
        assert_eq!(each.items.source, "t.json");
        assert_eq!(parallel.branches.len(), 1);
        assert_eq!(parallel.max_concurrency.as_ref().unwrap().value, 2);
        let tasks = parallel.tasks.as_ref().unwrap();
        assert_eq!(tasks.max_iterations.as_ref().unwrap().source, "9");
        assert_eq!(tasks.left_in_progress, TaskStatus::Failing);
    }

    #[test]
    fn misuse() {
        assert_eq!(
            codes(&flow("task-loop \"w\" { set \"n\" \"1\"; }")),
            [Code::MissingProperty]
        );
        assert_eq!(
            codes(&flow("task-loop \"w\" file=\"\" { set \"n\" \"1\"; }")),
            [Code::InvalidValue]
        );
        assert_eq!(
            codes(&flow(
                "task-loop \"w\" file=\"t.json\" as=\"index\" { set \"n\" \"1\"; }"
            )),
            [Code::InvalidId]
        );
        assert_eq!(
            codes(&flow(
                "task-loop \"w\" file=\"t.json\" max-concurrency=0 { set \"n\" \"1\"; }"
            )),
            [Code::InvalidValue]
        );
        assert_eq!(
            codes(&flow(
                "task-loop \"w\" file=\"t.json\" left-in-progress=\"done\" { set \"n\" \"1\"; }"
            )),
            [Code::InvalidValue]
        );
        assert_eq!(
            codes(&flow(
                "task-loop \"w\" file=\"t.json\" max-iterations=#true { set \"n\" \"1\"; }"
            )),
            [Code::InvalidValue]
        );
        assert_eq!(
            codes(&flow("task-loop \"w\" file=\"t.json\"")),
            [Code::EmptyBlock]
        );
    }
}
