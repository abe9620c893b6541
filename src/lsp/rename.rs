//! Rename a node id, state field, provider or input everywhere in the file: its
//! declaration, every `goto=`/`output`/`set`/`provider=` naming it, and every template
//! read (`outputs.id`, `state.x`, `input.x`). A node id with a `-` is read in templates as
//! `outputs['new-id']`, so dotted reads are rewritten to subscripts when needed.

use std::collections::HashMap;

use tower_lsp_server::ls_types::{Position, PrepareRenameResponse, TextEdit, WorkspaceEdit};

use super::convert;
use super::index::{Occurrence, SymbolKind, Written};
use super::snapshot::Snapshot;
use crate::check;

/// The range of the name at `position`, if it can be renamed.
#[must_use]
pub fn prepare_rename(snapshot: &Snapshot, position: Position) -> Option<PrepareRenameResponse> {
    let offset = snapshot.offset(position);
    let occurrence = snapshot.index.at(offset)?;
    snapshot
        .index
        .declaration(occurrence.kind, &occurrence.name)?;
    Some(PrepareRenameResponse::RangeWithPlaceholder {
        range: snapshot.range(occurrence.span),
        placeholder: occurrence.name.clone(),
    })
}

/// The edits renaming the name at `position` to `new_name`.
///
/// # Errors
/// A message for the user when the cursor is on nothing renamable, the new name is not
/// valid for its kind, or it is taken.
pub fn rename(
    snapshot: &Snapshot,
    position: Position,
    new_name: &str,
) -> Result<WorkspaceEdit, String> {
    let offset = snapshot.offset(position);
    let (kind, name) = snapshot.index.symbol_at(offset).ok_or_else(|| {
        "nothing to rename here: put the cursor on a node id, state field, provider or input"
            .to_owned()
    })?;
    if snapshot.index.declaration(kind, name).is_none() {
        return Err(format!("`{name}` is not declared in this file"));
    }
    let valid = match kind {
        SymbolKind::Node => check::is_node_id(new_name) && new_name != "end",
        SymbolKind::Provider => check::is_node_id(new_name),
        SymbolKind::Field | SymbolKind::Input => check::is_name(new_name),
    };
    if !valid {
        let rule = match kind {
            SymbolKind::Node | SymbolKind::Provider => {
                "letters, digits, `_` and `-`, not starting with a digit"
            }
            SymbolKind::Field | SymbolKind::Input => {
                "letters, digits and `_`, not starting with a digit"
            }
        };
        return Err(format!(
            "`{new_name}` is not a valid {} name: use {rule}",
            kind.describe()
        ));
    }
    if new_name != name && snapshot.index.declaration(kind, new_name).is_some() {
        return Err(format!(
            "a {} named `{new_name}` already exists",
            kind.describe()
        ));
    }
    let edits: Vec<TextEdit> = snapshot
        .index
        .occurrences_of(kind, name)
        .into_iter()
        .map(|occurrence| edit(snapshot, occurrence, new_name))
        .collect();
    let uri = convert::uri(&snapshot.path).ok_or("the file has no URI")?;
    Ok(WorkspaceEdit {
        changes: Some(HashMap::from([(uri, edits)])),
        ..WorkspaceEdit::default()
    })
}

fn edit(snapshot: &Snapshot, occurrence: &Occurrence, new_name: &str) -> TextEdit {
    let span = occurrence.span;
    match occurrence.written {
        Written::Dotted if new_name.contains('-') => {
            // `.old` → `['new-name']`: single quotes keep the KDL string intact.
            let dot = snapshot.span(span.start as usize - 1, span.end as usize);
            TextEdit::new(snapshot.range(dot), format!("['{new_name}']"))
        }
        Written::Value => {
            let literal = snapshot.sources.text(span);
            let bare = !literal.starts_with('"') && !literal.starts_with('#');
            let keyword = matches!(new_name, "true" | "false" | "null" | "inf" | "nan");
            let text = if literal != occurrence.name || (bare && keyword) {
                // The literal has escapes (the span is all of it) or needs quotes now.
                format!("\"{new_name}\"")
            } else {
                new_name.to_owned()
            };
            TextEdit::new(snapshot.range(span), text)
        }
        Written::Dotted | Written::Subscript => {
            TextEdit::new(snapshot.range(span), new_name.to_owned())
        }
    }
}

#[cfg(test)]
mod tests {
    use tower_lsp_server::ls_types::TextEdit;

    use super::super::testing::{Cursor, snapshot};
    use super::*;

    /// Applies the edits of a rename to the text.
    fn renamed(text: &str, cursor: Cursor, new_name: &str) -> Result<String, String> {
        let snapshot = snapshot(text);
        let edit = rename(&snapshot, cursor.position(&snapshot), new_name)?;
        let mut edits: Vec<TextEdit> = edit.changes.unwrap().into_values().flatten().collect();
        edits.sort_by_key(|edit| std::cmp::Reverse(snapshot.offset(edit.range.start)));
        let mut out = text.to_owned();
        for edit in edits {
            let start = snapshot.offset(edit.range.start);
            let end = snapshot.offset(edit.range.end);
            out.replace_range(start..end, &edit.new_text);
        }
        Ok(out)
    }

    const FLOW: &str = r#"workflow "w" {
    state { field "findings" type="array" default="[]"; }
    agent "review" { prompt "Review"; output "findings"; }
    loop "fix" until="state.findings | length == 0" max=3 {
        agent "fixer" session="review" { prompt "Fix {{ state.findings }} from {{ outputs.review }}"; }
        set "findings" "[]"
    }
    decision "gate" { when "true" goto="review"; otherwise goto="end"; }
}
"#;

    #[test]
    fn renames_node_ids_everywhere() {
        let after = renamed(FLOW, Cursor::on(FLOW, "goto=\"review\"", 7), "first-review").unwrap();
        insta::assert_snapshot!(after);
        // `outputs['first-review']` reads the renamed node: nothing new is reported.
        assert_eq!(codes(&after), codes(FLOW));
    }

    fn codes(text: &str) -> Vec<String> {
        super::super::testing::analysis(text, &[])
            .compiled
            .diagnostics
            .iter()
            .map(|d| d.code.to_string())
            .collect()
    }

    #[test]
    fn renames_state_fields_everywhere() {
        insta::assert_snapshot!(
            renamed(FLOW, Cursor::on(FLOW, "state.findings }}", 9), "issues").unwrap()
        );
        // The result still compiles the same way: no new diagnostics.
        let after = renamed(FLOW, Cursor::on(FLOW, "\"findings\" type", 1), "issues").unwrap();
        assert_eq!(codes(&after), codes(FLOW));
    }

    #[test]
    fn refuses_bad_or_taken_names() {
        let on_field = Cursor::on(FLOW, "\"findings\" type", 1);
        assert_eq!(
            renamed(FLOW, on_field, "new-field").unwrap_err(),
            "`new-field` is not a valid state field name: use letters, digits and `_`, not starting with a digit"
        );
        assert_eq!(
            renamed(FLOW, Cursor::on(FLOW, "\"fixer\"", 1), "gate").unwrap_err(),
            "a node named `gate` already exists"
        );
        assert!(renamed(FLOW, Cursor::on(FLOW, "max=3", 0), "x").is_err());
        let snapshot = snapshot(FLOW);
        assert!(
            prepare_rename(&snapshot, Cursor::on(FLOW, "loop", 0).position(&snapshot)).is_none()
        );
        assert!(
            prepare_rename(
                &snapshot,
                Cursor::on(FLOW, "\"fix\"", 1).position(&snapshot)
            )
            .is_some()
        );
    }
}
