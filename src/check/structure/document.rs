//! The top level: exactly one `workflow` node.

use super::Checked;
use super::node::check_node;
use crate::check::grammar::grammar;
use crate::diagnostic::{Code, Diagnostic, did_you_mean};
use crate::source::{SourceId, Span};
use crate::syntax::kdl::Document;

/// Checks the document's `workflow` node; `None` when there is none. Without one, only
/// `missing-workflow` is reported (the other top-level nodes are not checked).
pub(crate) fn check_document<'a>(
    file: SourceId,
    document: &'a Document,
    out: &mut Vec<Diagnostic>,
) -> Option<Checked<'a>> {
    let grammar = grammar();
    let Some(first) = document
        .nodes
        .iter()
        .find(|node| node.name.value == "workflow")
    else {
        let first = document.nodes.first();
        let span = first.map_or_else(|| Span::new(file, 0, 0), |node| node.name.span);
        let near = first.and_then(|node| did_you_mean(&node.name.value, ["workflow"]));
        out.push(
            Diagnostic::new(
                Code::MissingWorkflow,
                span,
                "no `workflow` node in this file",
            )
            .label(if near.is_some() {
                "not `workflow`"
            } else {
                "expected `workflow` here"
            })
            .help(match near {
                Some(_) => "did you mean `workflow`?".to_owned(),
                None => "a workflow file holds one `workflow \"<name>\" { … }` node".to_owned(),
            }),
        );
        return None;
    };
    let workflow = check_node(grammar, grammar.workflow(), first, 0, out);
    for node in &document.nodes {
        if std::ptr::eq(node, first) {
            continue;
        }
        if node.name.value == "workflow" {
            out.push(
                Diagnostic::new(
                    Code::MissingWorkflow,
                    node.name.span,
                    "a file holds one workflow, found another",
                )
                .label("second `workflow`")
                .with_label(first.name.span, "first workflow")
                .help("move this workflow into a file of its own"),
            );
            continue;
        }
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
    }
    Some(workflow)
}

#[cfg(test)]
mod tests {
    use crate::check::testing::{codes, resolve_text};
    use crate::diagnostic::Code;

    #[test]
    fn one_workflow_per_file() {
        let text = "workflow \"a\" { set \"x\" \"1\" id=\"s\"; state { field \"x\"; } }\nworkflow \"b\"\nagent \"stray\"\n";
        assert_eq!(codes(text), [Code::MissingWorkflow, Code::UnknownNodeKind]);
        assert_eq!(codes(""), [Code::MissingWorkflow]);
    }

    #[test]
    fn deep_nesting_is_cut_off_once() {
        let depth = 100;
        let mut text = String::from("workflow \"w\" { state { field \"x\"; }\n");
        for level in 0..depth {
            text.push_str(&format!("loop \"l{level}\" max=1 {{\n"));
        }
        text.push_str("set \"x\" \"1\"\n");
        text.push_str(&"}\n".repeat(depth + 1));
        let (outcome, _) = resolve_text(&text);
        let found: Vec<Code> = outcome.diagnostics.iter().map(|d| d.code).collect();
        // The innermost loop that is still read has no statements left to read.
        assert_eq!(found, [Code::UnknownChild, Code::EmptyBlock]);
        assert!(outcome.value.is_some());
    }
}
