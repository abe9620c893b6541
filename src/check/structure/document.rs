//! The top level: exactly one `workflow` node, split into its declarations and its
//! statements.

use super::Checked;
use super::node::{MAX_DEPTH, check_node};
use crate::check::grammar::{NodeSpec, grammar};
use crate::diagnostic::{Code, Diagnostic, did_you_mean};
use crate::source::{SourceId, Span};
use crate::syntax::kdl::{Document, Node};

/// The file's `workflow` node, owned. Its statements are taken out of its block so the
/// resolver can check, resolve and free them one at a time: holding the whole tree, its
/// checked view and the IR at once was the memory peak of checking a large file.
#[derive(Debug)]
pub(crate) struct WorkflowParts {
    /// The `workflow` node with its declarations (and unknown children) left in its block.
    pub(crate) workflow: Node,
    /// The statements of its block, in order, each with its kind.
    pub(crate) statements: Vec<(&'static NodeSpec, Node)>,
}

/// Checks the `workflow` node itself and the declarations left in its block.
pub(crate) fn check_workflow<'a>(workflow: &'a Node, out: &mut Vec<Diagnostic>) -> Checked<'a> {
    let grammar = grammar();
    check_node(grammar, grammar.workflow(), workflow, 0, out)
}

impl WorkflowParts {
    /// Calls `visit` on every statement at any depth (also inside non-statement children
    /// such as branches), in source order, a parent before its children: the raw-tree
    /// view of what the checked statements will hold. Nesting is followed only as deep as
    /// the structure checks read it.
    pub(crate) fn visit_statements(&self, visit: &mut impl FnMut(&'static NodeSpec, &Node)) {
        for (spec, statement) in &self.statements {
            visit_statement(spec, statement, 1, visit);
        }
    }
}

fn visit_statement(
    spec: &'static NodeSpec,
    statement: &Node,
    depth: usize,
    visit: &mut impl FnMut(&'static NodeSpec, &Node),
) {
    if spec.statement {
        visit(spec, statement);
    }
    if depth >= MAX_DEPTH {
        return;
    }
    let grammar = grammar();
    for child in statement.children.iter().flat_map(|block| &block.nodes) {
        if let Some((_, kind)) = grammar.child(spec, &child.name.value) {
            visit_statement(kind, child, depth + 1, visit);
        }
    }
}

/// Checks the `tool` node of a custom tool file, with the same grammar-driven checks as a
/// workflow's nodes.
pub(crate) fn check_custom_tool<'a>(tool: &'a Node, out: &mut Vec<Diagnostic>) -> Checked<'a> {
    let grammar = grammar();
    check_node(grammar, grammar.custom_tool(), tool, 0, out)
}

/// Checks one statement taken out of the workflow block (see [`WorkflowParts`]).
pub(crate) fn check_statement<'a>(
    spec: &'static NodeSpec,
    statement: &'a Node,
    out: &mut Vec<Diagnostic>,
) -> Checked<'a> {
    check_node(grammar(), spec, statement, 1, out)
}

/// Finds the document's `workflow` node and reports every other top-level node; `None`
/// when there is none. Without one, only `missing-workflow` is reported (the other
/// top-level nodes are not checked).
pub(crate) fn split_document(
    file: SourceId,
    document: Document,
    out: &mut Vec<Diagnostic>,
) -> Option<WorkflowParts> {
    let grammar = grammar();
    let mut nodes = document.nodes;
    let Some(position) = nodes.iter().position(|node| node.name.value == "workflow") else {
        let first = nodes.first();
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
            })
            .maybe_replace_with(near.map(str::to_owned)),
        );
        return None;
    };
    let mut workflow = nodes.remove(position);
    for node in &nodes {
        if node.name.value == "workflow" {
            out.push(
                Diagnostic::new(
                    Code::MissingWorkflow,
                    node.name.span,
                    "a file holds one workflow, found another",
                )
                .label("second `workflow`")
                .with_label(workflow.name.span, "first workflow")
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
    drop(nodes);
    let statements = take_statements(&mut workflow);
    Some(WorkflowParts {
        workflow,
        statements,
    })
}

/// Moves the statements out of `workflow`'s block, leaving every other child in place.
/// Statements may repeat, so the structure checks of the block (duplicates, required
/// children) see the same thing without them.
fn take_statements(workflow: &mut Node) -> Vec<(&'static NodeSpec, Node)> {
    let grammar = grammar();
    let spec = grammar.workflow();
    let Some(block) = &mut workflow.children else {
        return Vec::new();
    };
    let mut statements = Vec::new();
    let mut declarations = Vec::new();
    for child in std::mem::take(&mut block.nodes) {
        match grammar.child(spec, &child.name.value) {
            Some((_, kind)) if kind.statement => statements.push((kind, child)),
            _ => declarations.push(child),
        }
    }
    block.nodes = declarations;
    statements
}

#[cfg(test)]
mod tests {
    use crate::check::testing::{codes, resolve_text};
    use crate::diagnostic::Code;

    /// Statements are taken out of the workflow block before its children are checked, so
    /// the block's duplicate and required-child checks never see them: that is only sound
    /// while every statement may repeat and none is required.
    #[test]
    fn statements_of_the_workflow_may_repeat_and_are_optional() {
        let grammar = crate::check::grammar::grammar();
        let statements: Vec<_> = grammar
            .children(grammar.workflow())
            .filter(|(_, spec)| spec.statement)
            .collect();
        assert!(statements.len() >= 8, "agent, tool, decision, wait, …");
        for (child, spec) in statements {
            assert!(child.repeatable && !child.required, "{}", spec.name);
        }
    }

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
        // The innermost loop that is still read has no statements left to read (`compile`
        // drops that echo).
        assert_eq!(found, [Code::NestingTooDeep, Code::EmptyBlock]);
        assert!(outcome.value.is_some());
    }
}
