//! Hover: what the thing under the cursor is. A node kind shows its form, meaning,
//! properties and children; a property its type, default and doc; a node id, state field,
//! provider or input (declared or used, also inside `{{ }}`) what its declaration says;
//! other template variables (`run.step`, `item`, …) what they hold.

use tower_lsp_server::ls_types::{Hover, HoverContents, MarkupContent, MarkupKind, Position};

use super::describe;
use super::index::SymbolKind;
use super::snapshot::Snapshot;
use super::tree::{self, Slot, Target};
use crate::source::Span;
use crate::syntax::kdl::{Entry, Value};

/// The hover at `position`, if there is anything to say.
#[must_use]
pub fn hover(snapshot: &Snapshot, position: Position) -> Option<Hover> {
    let offset = snapshot.offset(position);
    let (text, span) = hover_at(snapshot, offset)?;
    Some(Hover {
        contents: HoverContents::Markup(MarkupContent {
            kind: MarkupKind::Markdown,
            value: text,
        }),
        range: Some(snapshot.range(span)),
    })
}

fn hover_at(snapshot: &Snapshot, offset: usize) -> Option<(String, Span)> {
    let index = &snapshot.index;
    if let Some(occurrence) = index.at(offset)
        && let Some(text) = describe::symbol(snapshot, occurrence.kind, &occurrence.name)
    {
        return Some((text, occurrence.span));
    }
    if let Some(site) = index.template_at(offset)
        && let Some(read) = site.reads().iter().find(|read| read.span.contains(offset))
    {
        let text = match (read.root(), read.member()) {
            ("state", Some(name)) => describe::symbol(snapshot, SymbolKind::Field, name),
            ("input", Some(name)) => describe::symbol(snapshot, SymbolKind::Input, name),
            ("outputs", Some(id)) => describe::symbol(snapshot, SymbolKind::Node, id),
            _ => None,
        }
        .or_else(|| describe::variable(&read.path))
        .or_else(|| describe::variable(read.head()));
        if let Some(text) = text {
            return Some((text, read.span));
        }
    }
    let (frames, target) = tree::locate(&snapshot.parse.document, offset);
    let frame = *frames.last()?;
    let spec = frame.spec?;
    if let Target::Value(entry) = target
        && let Some(text) = discovered_use(snapshot, &frame.node.name.value, entry)
    {
        return Some((text, entry.value_span));
    }
    match target {
        Target::Name => Some((describe::node_kind(spec), frame.node.name.span)),
        Target::Key(entry) | Target::Value(entry) => {
            let text = match tree::slot(frame, entry) {
                Slot::Property(property) => describe::property(spec, property),
                Slot::Argument(_, argument) => describe::argument(spec, argument),
                Slot::Unknown => return None,
            };
            let span = match (target, &entry.key) {
                (Target::Key(_), Some(key)) => key.span,
                _ => entry.value_span,
            };
            Some((text, span))
        }
        Target::Children | Target::Node | Target::Nothing => None,
    }
}

/// What a `use=` value names outside the file: a custom tool (on `tool`) or a discovered
/// agent, skill or command (on `agent`).
fn discovered_use(snapshot: &Snapshot, node: &str, entry: &Entry) -> Option<String> {
    if entry.key.as_ref()?.value != "use" {
        return None;
    }
    let Value::String(name) = &entry.value else {
        return None;
    };
    let (what, found) = match node {
        "tool" => ("custom tool", &snapshot.discovered.tools),
        "agent" => ("discovered", &snapshot.discovered.definitions),
        _ => return None,
    };
    let (name, description) = found.iter().find(|(found, _)| found == name.as_str())?;
    Some(match description {
        Some(description) => format!("**{what}** `{name}`\n\n{description}"),
        None => format!("**{what}** `{name}`"),
    })
}

#[cfg(test)]
mod tests {
    use super::super::testing::{Cursor, hover_report};

    const FLOW: &str = r#"workflow "review" {
    input "target" type="string" description="Path to review"
    state {
        field "findings" type="array" default="[]" reduce="append" description="What the review found"
        field "rounds" type="integer"
    }
    provider "claude" adapter="anthropic" model="claude-sonnet-4-5"
    agent "review" provider="claude" {
        prompt "Review {{ input.target }} after {{ run.step }} steps"
        output "findings" parse="json"
    }
    loop "fix" until="state.findings | length == 0" max=5 {
        agent "fix" provider="claude" { prompt "Fix {{ outputs.review }} ({{ state.rounds }})"; }
    }
}
"#;

    #[test]
    fn node_kinds_properties_and_names() {
        let cursors = [
            Cursor::on(FLOW, "agent", 0),
            Cursor::on(FLOW, "provider=\"claude\"", 0),
            Cursor::on(FLOW, "parse=", 1),
            Cursor::on(FLOW, "\"findings\" parse", 2),
            Cursor::on(FLOW, "input.target", 7),
            Cursor::on(FLOW, "run.step", 5),
            Cursor::on(FLOW, "outputs.review", 9),
            Cursor::on(FLOW, "state.rounds", 8),
            Cursor::on(FLOW, "state.findings |", 7),
            Cursor::on(FLOW, "max=5", 0),
            Cursor::on(FLOW, "\"claude\" {", 2),
        ];
        insta::assert_snapshot!(hover_report(FLOW, &cursors));
    }

    #[test]
    fn multibyte_text_keeps_ranges_right() {
        let flow = "workflow \"é🎉\" {\n    state { field \"naïve\" type=\"string\" default=\"🎉\"; }\n    set \"naïve\" \"{{ state.naïve }}é\"\n}\n";
        // `naïve` is not a valid name, but hover still finds the declaration.
        let cursors = [
            Cursor::on(flow, "set", 0),
            Cursor::on(flow, "\"naïve\" \"", 3),
        ];
        insta::assert_snapshot!(hover_report(flow, &cursors));
        let flow = "workflow \"é\" {\n    state { field \"count\" type=\"integer\" default=0; }\n    set \"count\" \"🎉 {{ state.count + 1 }} é\"\n}\n";
        insta::assert_snapshot!(hover_report(flow, &[Cursor::on(flow, "count + 1", 2)]));
    }

    #[test]
    fn crlf_and_multi_line_prompts() {
        let flow = "workflow \"w\" {\r\n    input \"target\" type=\"string\"\r\n    agent \"a\" {\r\n        prompt \"\"\"\r\n            Review {{ input.target }}\r\n            \"\"\"\r\n    }\r\n}\r\n";
        let cursors = [
            Cursor::on(flow, "input.target", 8),
            Cursor::on(flow, "agent", 1),
        ];
        insta::assert_snapshot!(hover_report(flow, &cursors));
    }

    #[test]
    fn nothing_on_whitespace() {
        assert_eq!(
            hover_report(FLOW, &[Cursor::on(FLOW, "    state {", 1)])
                .lines()
                .last(),
            Some("(no hover)")
        );
    }

    #[test]
    fn use_values_describe_what_was_discovered() {
        use super::super::discovered::Discovered;
        use super::super::testing::snapshot;
        use super::hover;
        use tower_lsp_server::ls_types::HoverContents;

        let text = "workflow \"w\" {\n    tool \"t\" use=\"fmt\"\n    agent \"a\" use=\"agent:reviewer\" prompt=\"x\"\n}\n";
        let snapshot = snapshot(text).with_discovered(Discovered {
            tools: vec![("fmt".to_owned(), Some("Formats the code".to_owned()))],
            definitions: vec![("agent:reviewer".to_owned(), None)],
        });
        let at = |marker: &str| {
            let cursor = Cursor::on(text, marker, 2);
            match hover(&snapshot, cursor.position(&snapshot)).map(|hover| hover.contents) {
                Some(HoverContents::Markup(markup)) => markup.value,
                other => panic!("no markdown hover at {marker}: {other:?}"),
            }
        };
        assert_eq!(at("\"fmt\""), "**custom tool** `fmt`\n\nFormats the code");
        assert_eq!(at("\"agent:reviewer\""), "**discovered** `agent:reviewer`");
    }
}
