//! Document symbols: the outline of a workflow — its inputs, state fields and providers,
//! then its statements, nested as written (a `loop`'s body under the loop, a `parallel`'s
//! branches under it).

use tower_lsp_server::ls_types::{DocumentSymbol, SymbolKind};

use super::snapshot::Snapshot;
use super::tree::{Frame, spec_of};
use crate::syntax::kdl::{Node, Value};

/// The outline of the file.
#[must_use]
pub fn document_symbols(snapshot: &Snapshot) -> Vec<DocumentSymbol> {
    snapshot
        .parse
        .document
        .nodes
        .iter()
        .filter_map(|node| {
            let frame = Frame {
                node,
                spec: spec_of(None, &node.name.value),
            };
            symbol(snapshot, frame)
        })
        .collect()
}

fn symbol(snapshot: &Snapshot, frame: Frame<'_>) -> Option<DocumentSymbol> {
    let spec = frame.spec?;
    let node = frame.node;
    let kind = match spec.id.as_str() {
        "workflow" => SymbolKind::MODULE,
        "input" => SymbolKind::VARIABLE,
        "state" => SymbolKind::STRUCT,
        "field" => SymbolKind::FIELD,
        "provider" => SymbolKind::INTERFACE,
        "branch" => SymbolKind::NAMESPACE,
        "decision" => SymbolKind::ENUM,
        "loop" | "parallel" | "task-loop" => SymbolKind::NAMESPACE,
        "set" => SymbolKind::PROPERTY,
        _ if spec.statement => SymbolKind::FUNCTION,
        _ => return None,
    };
    let (name, selection) = match node.entries.iter().find(|entry| entry.key.is_none()) {
        Some(entry) => match &entry.value {
            Value::String(name) if !name.is_empty() => (name.as_str().to_owned(), entry.value_span),
            _ => (node.name.value.as_str().to_owned(), node.name.span),
        },
        None => (node.name.value.as_str().to_owned(), node.name.span),
    };
    let children: Vec<DocumentSymbol> = node
        .children
        .iter()
        .flat_map(|block| &block.nodes)
        .filter_map(|child: &Node| {
            symbol(
                snapshot,
                Frame {
                    node: child,
                    spec: spec_of(Some(spec), &child.name.value),
                },
            )
        })
        .collect();
    #[allow(deprecated)] // `deprecated` is a required field of the protocol type
    Some(DocumentSymbol {
        name,
        detail: Some(node.name.value.as_str().to_owned()),
        kind,
        tags: None,
        deprecated: None,
        range: snapshot.range(node.span),
        selection_range: snapshot.range(selection),
        children: (!children.is_empty()).then_some(children),
    })
}

#[cfg(test)]
mod tests {
    use std::fmt::Write as _;

    use super::super::testing::snapshot;
    use super::*;

    fn outline(symbols: &[DocumentSymbol], depth: usize, out: &mut String) {
        for symbol in symbols {
            let _ = writeln!(
                out,
                "{}{} {} ({:?}) {}:{}-{}:{}",
                "  ".repeat(depth),
                symbol.detail.as_deref().unwrap_or(""),
                symbol.name,
                symbol.kind,
                symbol.selection_range.start.line,
                symbol.selection_range.start.character,
                symbol.selection_range.end.line,
                symbol.selection_range.end.character,
            );
            outline(symbol.children.as_deref().unwrap_or(&[]), depth + 1, out);
        }
    }

    #[test]
    fn nested_outline() {
        let text = r#"workflow "w" {
    input "target"
    state { field "findings"; }
    provider "p" adapter="replay"
    agent "review" { prompt "x"; }
    loop "fix" max=3 {
        parallel "checks" {
            branch "fast" { tool "lint" { run "make" "lint"; } }
            agent "deep" { prompt "y"; }
        }
        set "findings" "[]"
    }
    agnet "typo"
}
"#;
        let mut out = String::new();
        outline(&document_symbols(&snapshot(text)), 0, &mut out);
        insta::assert_snapshot!(out);
    }
}
