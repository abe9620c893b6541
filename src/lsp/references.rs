//! Find references: every place a node id, state field, provider or input is declared or
//! used in the file, templates included.

use tower_lsp_server::ls_types::{Location, Position};

use super::convert;
use super::snapshot::Snapshot;

/// The uses of the name at `position` (and its declaration if `include_declaration`).
#[must_use]
pub fn references(
    snapshot: &Snapshot,
    position: Position,
    include_declaration: bool,
) -> Vec<Location> {
    let offset = snapshot.offset(position);
    let Some((kind, name)) = snapshot.index.symbol_at(offset) else {
        return Vec::new();
    };
    let Some(uri) = convert::uri(&snapshot.path) else {
        return Vec::new();
    };
    snapshot
        .index
        .occurrences_of(kind, name)
        .into_iter()
        .filter(|occurrence| include_declaration || !occurrence.declaration)
        .map(|occurrence| Location {
            uri: uri.clone(),
            range: snapshot.range(occurrence.span),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::testing::{Cursor, excerpt, snapshot};
    use super::*;

    #[test]
    fn node_ids_and_state_fields() {
        let text = r#"workflow "w" {
    state { field "findings" type="array" default="[]"; }
    agent "review" { prompt "Review"; output "findings"; }
    loop "fix" until="state.findings | length == 0" max=3 {
        agent "fixer" { prompt "Fix {{ state.findings }} from {{ outputs.review }}"; }
        set "findings" "[]"
    }
    decision "gate" { when "true" goto="review"; otherwise goto="end"; }
}
"#;
        let snapshot = snapshot(text);
        let mut out = String::new();
        for (cursor, declaration) in [
            (Cursor::on(text, "\"review\"", 2), true),
            (Cursor::on(text, "state.findings }}", 8), false),
        ] {
            let found = references(&snapshot, cursor.position(&snapshot), declaration);
            let ranges: Vec<_> = found.iter().map(|location| location.range).collect();
            out.push_str(&excerpt(snapshot.file(), Some(cursor.offset), &ranges));
            out.push_str("-----\n");
        }
        insta::assert_snapshot!(out);
    }
}
