//! The top level: exactly one `workflow` node.

use super::Checked;
use super::node::check_node;
use crate::check::grammar::grammar;
use crate::diagnostic::{Code, Diagnostic};
use crate::source::{SourceId, Span};
use crate::syntax::kdl::Document;

/// Checks the document's `workflow` node; `None` when there is none.
pub(crate) fn check_document<'a>(
    file: SourceId,
    document: &'a Document,
    out: &mut Vec<Diagnostic>,
) -> Option<Checked<'a>> {
    let grammar = grammar();
    let mut workflow = None;
    for node in &document.nodes {
        if node.name.value != "workflow" {
            let known = grammar.nodes_named(&node.name.value).next().is_some();
            out.push(
                Diagnostic::new(
                    Code::UnknownNodeKind,
                    node.name.span,
                    format!("`{}` cannot appear at the top level", node.name.value),
                )
                .label("outside the `workflow` block")
                .help(if known {
                    "move it inside the `workflow \"…\" { … }` block".to_owned()
                } else {
                    "a workflow file holds one `workflow \"<name>\" { … }` node".to_owned()
                }),
            );
            continue;
        }
        match &workflow {
            None => workflow = Some(check_node(grammar, grammar.workflow(), node, 0, out)),
            Some(first) => {
                let first: &Checked<'_> = first;
                out.push(
                    Diagnostic::new(
                        Code::MissingWorkflow,
                        node.name.span,
                        "a file holds one workflow, found another",
                    )
                    .label("second `workflow`")
                    .with_label(first.name_span(), "first workflow")
                    .help("move this workflow into a file of its own"),
                );
            }
        }
    }
    if workflow.is_none() {
        let span = document
            .nodes
            .first()
            .map_or_else(|| Span::new(file, 0, 0), |node| node.name.span);
        out.push(
            Diagnostic::new(
                Code::MissingWorkflow,
                span,
                "no `workflow` node in this file",
            )
            .label("expected `workflow` here")
            .help("a workflow file holds one `workflow \"<name>\" { … }` node"),
        );
    }
    workflow
}
