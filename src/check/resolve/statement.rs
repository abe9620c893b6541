//! Statements and blocks: the node arena is filled in source order, a parent before its
//! children, with the options every kind shares.

use super::ids::{IdAllocator, check_id};
use super::resolver::{Resolver, exact};
use super::{agent, common, decision, looping, parallel, set, subgraph, tool, wait};
use crate::check::structure::Checked;
use crate::ir::{Block, Node, NodeIdx, NodeKind, Set, Template};
use crate::source::{Span, Spanned};

/// The statements among `checked`'s children, as a block.
pub(super) fn resolve_block(
    r: &mut Resolver<'_>,
    ids: &mut IdAllocator,
    checked: &Checked<'_>,
    parent: Option<NodeIdx>,
) -> Block {
    let nodes = exact(
        checked
            .children
            .iter()
            .filter(|child| child.spec.statement)
            .map(|child| resolve_statement(r, ids, child, parent)),
    );
    let span = checked
        .node
        .children
        .as_ref()
        .map_or(checked.node.span, |block| block.span);
    Block { nodes, span }
}

/// One statement and, recursively, the statements inside it.
pub(super) fn resolve_statement(
    r: &mut Resolver<'_>,
    ids: &mut IdAllocator,
    checked: &Checked<'_>,
    parent: Option<NodeIdx>,
) -> NodeIdx {
    let id = statement_id(r, ids, checked);
    let idx = NodeIdx(u32::try_from(r.nodes.len()).expect("fewer than 2^32 nodes"));
    let node = Node {
        id,
        // Replaced below, once the children (which come after it in the arena) are read.
        kind: placeholder(checked.node.span),
        parent,
        retry: common::retry(r, checked).map(Box::new),
        timeout: r.duration(checked.prop("timeout")),
        on_error: common::on_error(r, checked).map(Box::new),
        recovery: r.boolean(checked.prop("recovery")).unwrap_or(false),
        idempotent: r.boolean(checked.prop("idempotent")).unwrap_or(false),
        goto: common::goto(r, checked).map(Box::new),
        span: checked.node.span,
    };
    r.nodes.push(node);
    let kind = match checked.spec.id.as_str() {
        "agent" => NodeKind::Agent(Box::new(agent::resolve_agent(r, checked))),
        "tool" => NodeKind::Tool(Box::new(tool::resolve_tool(r, checked))),
        "decision" => NodeKind::Decision(Box::new(decision::resolve_decision(r, checked))),
        "wait" => NodeKind::Wait(Box::new(wait::resolve_wait(r, checked))),
        "subgraph" => NodeKind::Subgraph(Box::new(subgraph::resolve_subgraph(r, checked))),
        "parallel" => {
            NodeKind::Parallel(Box::new(parallel::resolve_parallel(r, ids, checked, idx)))
        }
        "loop" => NodeKind::Loop(Box::new(looping::resolve_loop(r, ids, checked, idx))),
        "task-loop" => NodeKind::Parallel(Box::new(super::task_loop::resolve_task_loop(
            r, ids, checked, idx,
        ))),
        "emit" => NodeKind::Emit(Box::new(super::emit::resolve_emit(r, checked))),
        _ => NodeKind::Set(set::resolve_set(r, checked)),
    };
    r.node_mut(idx).kind = kind;
    idx
}

/// A node kind that allocates nothing, held until the real one is resolved.
fn placeholder(span: Span) -> NodeKind {
    NodeKind::Set(Set {
        field: Spanned::new(String::new(), span),
        value: Template {
            source: String::new(),
            span,
            exact: false,
            offset: 0,
            shifts: None,
        },
        is_expr: false,
    })
}

/// The written id (`agent "<id>"`, `set … id="<id>"`) or a generated `set-<field>`.
fn statement_id(
    r: &mut Resolver<'_>,
    ids: &mut IdAllocator,
    checked: &Checked<'_>,
) -> Spanned<String> {
    // `set` and `emit` name a field or an event first; their id is `id=` or generated.
    let generated = matches!(checked.spec.id.as_str(), "set" | "emit");
    let written = if generated {
        checked.prop("id")
    } else {
        checked.arg(0)
    };
    if let Some(id) = r.string(written) {
        check_id(r, &id, "node");
        return id;
    }
    if generated
        && !checked.wrote("id")
        && let Some(name) = r.string(checked.arg(0))
    {
        let prefix = checked.spec.id.as_str();
        return Spanned::new(ids.generated_id(prefix, &name.value), checked.name_span());
    }
    // Missing or invalid: already reported; an empty id is skipped by the uniqueness check.
    Spanned::new(String::new(), checked.name_span())
}

#[cfg(test)]
mod tests {
    use crate::check::testing::{codes, only, resolve_text};
    use crate::diagnostic::Code;

    #[test]
    fn set_ids_are_generated_around_written_ones() {
        let text = r#"workflow "w" {
            state { field "n" type="integer" default=0; }
            set "n" "{{ 1 }}"
            set "n" "{{ 2 }}"
            set "n" expr="3" id="mine"
            loop "set-n-3" max=1 { set "n" "{{ 4 }}"; }
            parallel "p" { branch "b" { set "n" "{{ 5 }}" id="set-n-4"; }; }
        }"#;
        let (outcome, _) = resolve_text(text);
        assert_eq!(outcome.diagnostics, vec![]);
        let ids: Vec<String> = outcome
            .value
            .unwrap()
            .nodes
            .iter()
            .map(|node| node.id.value.clone())
            .collect();
        // Ids written later in the file, and inside a parallel's branch, are skipped too.
        assert_eq!(
            ids,
            [
                "set-n", "set-n-2", "mine", "set-n-3", "set-n-5", "p", "set-n-4"
            ]
        );
    }

    #[test]
    fn invalid_ids() {
        let (_, at) = only(
            r#"workflow "w" { state { field "n"; }; set "n" "1" id="9lives"; }"#,
            Code::InvalidId,
        );
        assert_eq!(at, "\"9lives\"");
    }

    #[test]
    fn goto_max_needs_goto() {
        let (_, at) = only(
            r#"workflow "w" { state { field "n"; }; set "n" "1" goto-max=2; }"#,
            Code::InvalidValue,
        );
        assert_eq!(at, "2");
        assert_eq!(
            codes(r#"workflow "w" { state { field "n"; }; set "n" "1" goto="end" goto-max=2; }"#),
            []
        );
    }
}
