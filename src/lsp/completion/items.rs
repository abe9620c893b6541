//! Completion items for each context, from the grammar and the file's index.

use tower_lsp_server::ls_types::{
    CompletionItem, CompletionItemKind, CompletionTextEdit, Documentation, MarkupContent,
    MarkupKind, TextEdit,
};

use super::context::{Context, Slot};
use crate::check::grammar::{NodeSpec, ValueKind, grammar};
use crate::ir::ADAPTERS;
use crate::lsp::describe;
use crate::lsp::index::SymbolKind;
use crate::lsp::snapshot::Snapshot;
use crate::lsp::tree;
use crate::source::Span;
use crate::syntax::kdl::Value;

/// The roots every template sees.
const ROOTS: &[(&str, &str)] = &[
    ("input", "the workflow's inputs"),
    ("state", "the workflow's state fields"),
    ("outputs", "what each node that ran produced, by node id"),
    ("run", "the run's `id`, `step` and `iteration`"),
    ("env", "the declared environment variables"),
];

/// The members of `run`.
const RUN: &[(&str, &str)] = &[
    ("id", "the id of this run"),
    ("step", "the number of the step being run (1-based)"),
    (
        "iteration",
        "the iteration of the innermost loop (1-based; 0 outside loops)",
    ),
];

/// The items for `context`.
pub(super) fn items(snapshot: &Snapshot, context: &Context<'_>) -> Vec<CompletionItem> {
    let mut items = match context {
        Context::NodeName {
            parent,
            siblings,
            replace,
        } => node_names(snapshot, *parent, siblings, *replace),
        Context::Property {
            node,
            present,
            arguments,
            replace,
        } => properties(snapshot, node, present, *arguments, *replace),
        Context::Value {
            node,
            slot,
            quoted,
            replace,
        } => values(snapshot, node, slot, *quoted, *replace),
        Context::Variable {
            root,
            dot,
            locals,
            replace,
        } => variables(snapshot, root.as_deref(), *dot, locals, *replace),
        Context::Nothing => Vec::new(),
    };
    for (position, item) in items.iter_mut().enumerate() {
        item.sort_text = Some(format!("{position:04}"));
    }
    items
}

fn item(
    snapshot: &Snapshot,
    label: &str,
    kind: CompletionItemKind,
    detail: Option<String>,
    replace: Span,
    new_text: String,
) -> CompletionItem {
    CompletionItem {
        label: label.to_owned(),
        kind: Some(kind),
        detail,
        text_edit: Some(CompletionTextEdit::Edit(TextEdit::new(
            snapshot.range(replace),
            new_text,
        ))),
        ..CompletionItem::default()
    }
}

fn markdown(text: String) -> Option<Documentation> {
    Some(Documentation::MarkupContent(MarkupContent {
        kind: MarkupKind::Markdown,
        value: text,
    }))
}

fn node_names(
    snapshot: &Snapshot,
    parent: Option<&'static NodeSpec>,
    siblings: &[&str],
    replace: Span,
) -> Vec<CompletionItem> {
    let grammar = grammar();
    let Some(parent) = parent else {
        if siblings.contains(&"workflow") {
            return Vec::new();
        }
        let workflow = grammar.workflow();
        let mut item = item(
            snapshot,
            "workflow",
            CompletionItemKind::MODULE,
            Some(workflow.doc.clone()),
            replace,
            "workflow".to_owned(),
        );
        item.documentation = markdown(describe::node_kind(workflow));
        return vec![item];
    };
    grammar
        .children(parent)
        .filter(|(child, spec)| child.repeatable || !siblings.contains(&spec.name.as_str()))
        .map(|(_, spec)| {
            let kind = if spec.statement {
                CompletionItemKind::FUNCTION
            } else {
                CompletionItemKind::KEYWORD
            };
            let mut item = item(
                snapshot,
                &spec.name,
                kind,
                Some(spec.doc.clone()),
                replace,
                spec.name.clone(),
            );
            item.documentation = markdown(describe::node_kind(spec));
            item
        })
        .collect()
}

fn properties(
    snapshot: &Snapshot,
    node: &'static NodeSpec,
    present: &[String],
    arguments: usize,
    replace: Span,
) -> Vec<CompletionItem> {
    let mut items: Vec<CompletionItem> = node
        .properties
        .iter()
        .filter(|property| !present.contains(&property.name))
        .map(|property| {
            let mut item = item(
                snapshot,
                &property.name,
                CompletionItemKind::PROPERTY,
                Some(property.kind.name().to_owned()),
                replace,
                format!("{}=", property.name),
            );
            item.documentation = markdown(describe::property(node, property));
            item
        })
        .collect();
    if let Some(argument) = node.argument(arguments)
        && argument.kind == ValueKind::Enum
    {
        items.extend(argument.choices.iter().map(|choice| {
            item(
                snapshot,
                choice,
                CompletionItemKind::ENUM_MEMBER,
                Some(argument.name.clone()),
                replace,
                format!("\"{choice}\""),
            )
        }));
    }
    items
}

fn values(
    snapshot: &Snapshot,
    node: &'static NodeSpec,
    slot: &Slot,
    quoted: bool,
    replace: Span,
) -> Vec<CompletionItem> {
    let (kind, choices, key) = match slot {
        Slot::Property(key) => match node.property(key) {
            Some(property) => (property.kind, &property.choices, Some(key.as_str())),
            None => return Vec::new(),
        },
        Slot::Argument(position) => match node.argument(*position) {
            Some(argument) => (argument.kind, &argument.choices, None),
            None => return Vec::new(),
        },
    };
    let index = &snapshot.index;
    let names = |kind: SymbolKind| -> Vec<(String, Option<String>)> {
        index
            .declarations(kind)
            .map(|declaration| {
                let detail = declaration.node.as_ref().map(|(_, kdl)| kdl.clone());
                (declaration.name.clone(), detail)
            })
            .collect()
    };
    let mut candidates: Vec<(String, Option<String>)> = match (kind, node.id.as_str(), key) {
        (ValueKind::Enum, _, _) => choices
            .iter()
            .map(|choice| (choice.clone(), None))
            .collect(),
        (ValueKind::Boolean, _, _) => {
            return ["#true", "#false"]
                .iter()
                .filter(|_| !quoted)
                .map(|value| {
                    item(
                        snapshot,
                        value,
                        CompletionItemKind::VALUE,
                        None,
                        replace,
                        (*value).to_owned(),
                    )
                })
                .collect();
        }
        (ValueKind::NodeRef, _, _) => {
            let mut ids = names(SymbolKind::Node);
            ids.push(("end".to_owned(), Some("the workflow completes".to_owned())));
            ids
        }
        (ValueKind::ProviderRef, _, _) => names(SymbolKind::Provider),
        (ValueKind::FieldRef, _, _) => names(SymbolKind::Field),
        (ValueKind::String, "provider", Some("adapter")) => ADAPTERS
            .iter()
            .map(|adapter| {
                (
                    adapter.name.to_owned(),
                    Some(adapter.description.to_owned()),
                )
            })
            .collect(),
        (ValueKind::String, "agent", Some("use")) => names(SymbolKind::Node)
            .into_iter()
            .filter(|(_, kdl)| kdl.as_deref() == Some("agent"))
            .chain(snapshot.discovered.definitions.iter().cloned())
            .collect(),
        (ValueKind::String, "tool", Some("use")) => snapshot.discovered.tools.clone(),
        _ => Vec::new(),
    };
    // A node does not jump to itself or use itself.
    if matches!(kind, ValueKind::NodeRef | ValueKind::String) {
        let own = own_id(snapshot, replace.start as usize);
        candidates.retain(|(name, _)| Some(name.as_str()) != own.as_deref());
    }
    candidates
        .into_iter()
        .map(|(name, detail)| {
            let new_text = if quoted {
                name.clone()
            } else {
                format!("\"{name}\"")
            };
            item(
                snapshot,
                &name,
                CompletionItemKind::VALUE,
                detail,
                replace,
                new_text,
            )
        })
        .collect()
}

/// The id of the statement containing `offset`.
fn own_id(snapshot: &Snapshot, offset: usize) -> Option<String> {
    let (frames, _) = tree::locate(&snapshot.parse.document, offset);
    let frame = frames
        .iter()
        .rev()
        .find(|frame| frame.spec.is_some_and(|spec| spec.statement))?;
    match frame
        .node
        .entries
        .iter()
        .find(|entry| entry.key.is_none())
        .map(|entry| &entry.value)
    {
        Some(Value::String(id)) => Some(id.as_str().to_owned()),
        _ => None,
    }
}

fn variables(
    snapshot: &Snapshot,
    root: Option<&str>,
    dot: usize,
    locals: &[String],
    replace: Span,
) -> Vec<CompletionItem> {
    let simple = |label: &str, kind: CompletionItemKind, detail: &str| {
        item(
            snapshot,
            label,
            kind,
            Some(detail.to_owned()),
            replace,
            label.to_owned(),
        )
    };
    let index = &snapshot.index;
    let symbol = |kind: SymbolKind, item_kind: CompletionItemKind| -> Vec<CompletionItem> {
        index
            .declarations(kind)
            .map(|declaration| {
                let mut item = simple(&declaration.name, item_kind, kind.describe());
                if let Some(text) = describe::symbol(snapshot, kind, &declaration.name) {
                    item.documentation = markdown(text);
                }
                item
            })
            .collect()
    };
    match root {
        None => ROOTS
            .iter()
            .map(|(name, detail)| simple(name, CompletionItemKind::MODULE, detail))
            .chain(
                locals
                    .iter()
                    .map(|name| simple(name, CompletionItemKind::VARIABLE, "local")),
            )
            .collect(),
        Some("state") => symbol(SymbolKind::Field, CompletionItemKind::FIELD),
        Some("input") => symbol(SymbolKind::Input, CompletionItemKind::VARIABLE),
        Some("run") => RUN
            .iter()
            .map(|(name, detail)| simple(name, CompletionItemKind::FIELD, detail))
            .collect(),
        Some("env") => env_names(snapshot)
            .iter()
            .map(|name| simple(name, CompletionItemKind::CONSTANT, "environment variable"))
            .collect(),
        Some("outputs") => index
            .declarations(SymbolKind::Node)
            .filter_map(|declaration| {
                let kind = &declaration.node.as_ref()?.1;
                let meaning = describe::output_meaning(kind)?;
                let id = &declaration.name;
                let detail = format!("{kind}: {meaning}");
                if id.contains('-') {
                    // `outputs.fix-it` would subtract; write a subscript instead.
                    let span = snapshot.span(dot, replace.end as usize);
                    let mut item = item(
                        snapshot,
                        id,
                        CompletionItemKind::REFERENCE,
                        Some(detail),
                        span,
                        format!("['{id}']"),
                    );
                    item.filter_text = Some(format!(".{id}"));
                    Some(item)
                } else {
                    Some(simple(id, CompletionItemKind::REFERENCE, &detail))
                }
            })
            .collect(),
        Some(_) => Vec::new(),
    }
}

/// The names declared with `env "NAME"` in the workflow.
fn env_names(snapshot: &Snapshot) -> Vec<String> {
    snapshot
        .parse
        .document
        .nodes
        .iter()
        .filter(|node| node.name.value == "workflow")
        .flat_map(|workflow| workflow.children.iter().flat_map(|block| &block.nodes))
        .filter(|node| node.name.value == "env")
        .filter_map(
            |node| match node.entries.first().map(|entry| &entry.value) {
                Some(Value::String(name)) => Some(name.as_str().to_owned()),
                _ => None,
            },
        )
        .collect()
}

#[cfg(test)]
mod tests {
    use std::fmt::Write as _;

    use tower_lsp_server::ls_types::{CompletionResponse, CompletionTextEdit};

    use crate::lsp::completion::completion;
    use crate::lsp::discovered::Discovered;
    use crate::lsp::testing::{Cursor, excerpt, snapshot};

    /// Completions at the `|` in `text` (removed before parsing).
    fn complete(text: &str) -> String {
        complete_with(text, Discovered::default())
    }

    /// [`complete`], with `discovered` tools and definitions outside the file.
    fn complete_with(text: &str, discovered: Discovered) -> String {
        let offset = text.find('|').expect("a `|` marks the cursor");
        let text = text.replacen('|', "", 1);
        let snapshot = snapshot(&text).with_discovered(discovered);
        let cursor = Cursor { offset };
        let found = completion(&snapshot, cursor.position(&snapshot));
        let items = match found {
            Some(CompletionResponse::List(list)) => list.items,
            Some(CompletionResponse::Array(items)) => items,
            None => Vec::new(),
        };
        let mut ranges = Vec::new();
        let mut out = String::new();
        for item in &items {
            let Some(CompletionTextEdit::Edit(edit)) = &item.text_edit else {
                panic!("every item has a text edit");
            };
            if !ranges.contains(&edit.range) {
                ranges.push(edit.range);
            }
            let _ = writeln!(
                out,
                "{} → {:?}{}",
                item.label,
                edit.new_text,
                item.detail
                    .as_ref()
                    .map(|d| format!("  ({d})"))
                    .unwrap_or_default()
            );
        }
        if items.is_empty() {
            out.push_str("(nothing)\n");
        }
        format!("{}{out}", excerpt(snapshot.file(), Some(offset), &ranges))
    }

    const HEAD: &str = r#"workflow "w" {
    input "target"
    env "GITHUB_TOKEN"
    state { field "findings" type="array"; field "rounds" type="integer"; }
    provider "claude" adapter="anthropic"
    agent "review" provider="claude" { prompt "x"; output "findings"; }
    tool "fix-it" { run "make"; }
    set "rounds" "{{ state.rounds + 1 }}"
"#;

    fn flow(body: &str) -> String {
        format!("{HEAD}{body}\n}}\n")
    }

    #[test]
    fn node_kinds_in_blocks() {
        insta::assert_snapshot!(complete(&flow("    ag|")));
        insta::assert_snapshot!(complete(
            "workflow \"w\" {\n    state {\n        |\n    }\n}\n"
        ));
        insta::assert_snapshot!(complete("wor|"));
    }

    #[test]
    fn properties_of_the_node_being_written() {
        insta::assert_snapshot!(complete(&flow("    agent \"x\" provider=\"claude\" |")));
        insta::assert_snapshot!(complete(&flow("    loop \"l\" ma|")));
        insta::assert_snapshot!(complete(&flow("    agent \"x\" { retry |; }")));
    }

    #[test]
    fn values_by_kind() {
        insta::assert_snapshot!(complete(&flow("    agent \"x\" provider=\"|\"")));
        insta::assert_snapshot!(complete(&flow(
            "    decision \"d\" { otherwise goto=\"|\"; }"
        )));
        insta::assert_snapshot!(complete(&flow("    agent \"x\" permission=|")));
        insta::assert_snapshot!(complete(&flow(
            "    agent \"x\" { prompt \"p\"; output \"|\"; }"
        )));
        insta::assert_snapshot!(complete(
            "workflow \"w\" {\n    provider \"p\" adapter=\"op|\"\n}\n"
        ));
        insta::assert_snapshot!(complete(
            "workflow \"w\" {\n    state { field \"f\" reduce=\"|\"; }\n}\n"
        ));
    }

    #[test]
    fn use_offers_discovered_tools_and_definitions() {
        let discovered = Discovered {
            tools: vec![("fmt".to_owned(), Some("Formats the code".to_owned()))],
            definitions: vec![(
                "agent:reviewer".to_owned(),
                Some("Reviews diffs".to_owned()),
            )],
        };
        insta::assert_snapshot!(complete_with(
            &flow("    tool \"t\" use=\"|\""),
            discovered.clone()
        ));
        insta::assert_snapshot!(complete_with(
            &flow("    agent \"x\" use=\"|\""),
            discovered
        ));
    }

    #[test]
    fn template_variables() {
        insta::assert_snapshot!(complete(&flow(
            "    agent \"x\" { prompt \"Fix {{ state.f| }}\"; }"
        )));
        insta::assert_snapshot!(complete(&flow(
            "    agent \"x\" { prompt \"Fix {{ | }}\"; }"
        )));
        insta::assert_snapshot!(complete(&flow(
            "    agent \"x\" { prompt \"Fix {{ outputs.| }}\"; }"
        )));
        insta::assert_snapshot!(complete(&flow(
            "    loop \"l\" until=\"input.|\" max=2 { set \"rounds\" \"1\"; }"
        )));
        insta::assert_snapshot!(complete(&flow(
            "    parallel \"p\" for-each=\"input.target\" as=\"file\" {\n        agent \"a\" { prompt \"\"\"\n            Review {{ f| }}\n            \"\"\"; }\n    }"
        )));
        insta::assert_snapshot!(complete(&flow(
            "    agent \"x\" { prompt \"Fix {{ env.| }}\"; }"
        )));
        // Multi-byte text before the cursor on the same line.
        insta::assert_snapshot!(complete(&flow(
            "    agent \"é\" { prompt \"🎉 é {{ state.ro|unds }}\"; }"
        )));
        // Plain template text: nothing.
        insta::assert_snapshot!(complete(&flow("    agent \"x\" { prompt \"Fix st|\"; }")));
    }
}
