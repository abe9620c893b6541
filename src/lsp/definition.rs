//! Go to definition: from a use of a node id, state field, provider or input (a `goto=`,
//! `use=`, `session=`, `on-error "goto"` target, `output "x"`, `set "x"`, `provider=`, or
//! `state.x` / `outputs.id` / `input.x` inside a template) to its declaration; from a file
//! path (`workflow=`, `schema=`, `cassette=`) to the file; from a subgraph's `input "x"` and
//! `output … from="x"` to the called workflow's input and state field.

use std::path::{Path, PathBuf};

use tower_lsp_server::ls_types::{GotoDefinitionResponse, Location, Position, Range};

use super::convert;
use super::index::SymbolKind;
use super::snapshot::Snapshot;
use super::tree::{self, Slot, Target};
use crate::check::grammar::ValueKind;
use crate::source::Files;
use crate::syntax::kdl::Value;

/// Where the thing at `position` is defined. `files` reads other files (open buffers over
/// the disk).
#[must_use]
pub fn definition(
    snapshot: &Snapshot,
    position: Position,
    files: &dyn Files,
) -> Option<GotoDefinitionResponse> {
    let offset = snapshot.offset(position);
    if let Some((kind, name)) = snapshot.index.symbol_at(offset) {
        let declaration = snapshot.index.declaration(kind, name)?;
        let uri = convert::uri(&snapshot.path)?;
        return Some(GotoDefinitionResponse::Scalar(Location {
            uri,
            range: snapshot.range(declaration.span),
        }));
    }
    let (frames, target) = tree::locate(&snapshot.parse.document, offset);
    let frame = *frames.last()?;
    let Target::Value(entry) = target else {
        return None;
    };
    let Value::String(value) = &entry.value else {
        return None;
    };
    let spec = frame.spec?;
    let key = entry.key.as_ref().map(|key| key.value.as_str());
    match (spec.id.as_str(), key, tree::slot(frame, entry)) {
        ("subgraph/input", None, Slot::Argument(0, _)) => {
            callee_declaration(snapshot, &frames, SymbolKind::Input, value, files)
        }
        ("subgraph/output", Some("from"), _) => {
            callee_declaration(snapshot, &frames, SymbolKind::Field, value, files)
        }
        ("subgraph", Some("workflow"), _) => {
            let path = workflow_path(snapshot, value, files)?;
            file_start(&path)
        }
        (_, _, Slot::Property(property)) if property.kind == ValueKind::Path => {
            let path = convert::normalize(&snapshot.dir().join(value));
            files.exists(&path).then(|| file_start(&path))?
        }
        _ => None,
    }
}

fn file_start(path: &Path) -> Option<GotoDefinitionResponse> {
    Some(GotoDefinitionResponse::Scalar(Location {
        uri: convert::uri(path)?,
        range: Range::default(),
    }))
}

/// The file a subgraph's `workflow=` names: a path relative to the calling file, or a
/// workflow discovered by name in the `.atomic/workflows/` of an enclosing directory.
pub(crate) fn workflow_path(
    snapshot: &Snapshot,
    value: &str,
    files: &dyn Files,
) -> Option<PathBuf> {
    if value.contains('/') || value.ends_with(".kdl") {
        let path = convert::normalize(&snapshot.dir().join(value));
        return files.exists(&path).then_some(path);
    }
    snapshot.path.ancestors().skip(1).find_map(|dir| {
        let path = dir
            .join(".atomic")
            .join("workflows")
            .join(format!("{value}.kdl"));
        files.exists(&path).then_some(path)
    })
}

/// The declaration of `name` in the workflow the enclosing `subgraph` calls.
fn callee_declaration(
    snapshot: &Snapshot,
    frames: &[tree::Frame<'_>],
    kind: SymbolKind,
    name: &str,
    files: &dyn Files,
) -> Option<GotoDefinitionResponse> {
    let subgraph = frames
        .iter()
        .rev()
        .find(|frame| frame.spec.is_some_and(|spec| spec.id == "subgraph"))?;
    let Value::String(workflow) = &tree::property(subgraph.node, "workflow")?.value else {
        return None;
    };
    let path = workflow_path(snapshot, workflow, files)?;
    let text = files.read(&path).ok()?;
    let callee = Snapshot::new(&path, &text, 0);
    let declaration = callee.index.declaration(kind, name)?;
    Some(GotoDefinitionResponse::Scalar(Location {
        uri: convert::uri(&path)?,
        range: callee.range(declaration.span),
    }))
}

#[cfg(test)]
mod tests {
    use std::fmt::Write as _;

    use tower_lsp_server::ls_types::GotoDefinitionResponse;

    use super::super::testing::{Cursor, PATH, excerpt, snapshot};
    use super::*;
    use crate::source::MemoryFiles;

    fn report(text: &str, cursors: &[Cursor], files: &MemoryFiles) -> String {
        let snapshot = snapshot(text);
        let mut out = String::new();
        for cursor in cursors {
            let found = definition(&snapshot, cursor.position(&snapshot), files);
            match found {
                Some(GotoDefinitionResponse::Scalar(location)) => {
                    let path = convert::path(&location.uri).unwrap();
                    if path == Path::new(PATH) {
                        out.push_str(&excerpt(
                            snapshot.file(),
                            Some(cursor.offset),
                            &[location.range],
                        ));
                    } else {
                        out.push_str(&excerpt(snapshot.file(), Some(cursor.offset), &[]));
                        let target = files.read(&path).unwrap();
                        let callee = Snapshot::new(&path, &target, 0);
                        let _ = writeln!(out, "→ {}", path.display());
                        out.push_str(&excerpt(callee.file(), None, &[location.range]));
                    }
                }
                other => {
                    out.push_str(&excerpt(snapshot.file(), Some(cursor.offset), &[]));
                    let _ = writeln!(out, "→ {other:?}");
                }
            }
            out.push_str("-----\n");
        }
        out
    }

    #[test]
    fn names_files_and_called_workflows() {
        let text = r#"workflow "w" provider="claude" {
    input "target"
    state { field "findings" type="array"; field "summary"; }
    provider "claude" adapter="anthropic" model="m"
    agent "review" { prompt "Review {{ input.target }}"; output "findings" schema="schemas/f.json"; }
    agent "again" use="review" session="review" { prompt "{{ outputs.review }} {{ state.findings }}"; }
    decision "gate" {
        when "state.findings | length > 0" goto="review" max=2
        otherwise goto="end"
    }
    subgraph "checks" workflow="./checks.kdl" {
        input "target" "{{ input.target }}"
        output "summary" from="report"
    }
}
"#;
        let mut files = MemoryFiles::new();
        files.insert("/w/schemas/f.json", "{}");
        files.insert(
            "/w/checks.kdl",
            "workflow \"checks\" {\n    input \"target\"\n    state { field \"report\"; }\n}\n",
        );
        let cursors = [
            Cursor::on(text, "provider=\"claude\"", 11),
            Cursor::on(text, "input.target", 2),
            Cursor::on(text, "output \"findings\"", 9),
            Cursor::on(text, "use=\"review\"", 6),
            Cursor::on(text, "session=\"review\"", 10),
            Cursor::on(text, "outputs.review", 10),
            Cursor::on(text, "state.findings }}", 0),
            Cursor::on(text, "goto=\"review\"", 7),
            Cursor::on(text, "goto=\"end\"", 7),
            Cursor::on(text, "schemas/f.json", 3),
            Cursor::on(text, "./checks.kdl", 4),
            Cursor::on(text, "input \"target\" \"{{", 8),
            Cursor::on(text, "from=\"report\"", 7),
        ];
        insta::assert_snapshot!(report(text, &cursors, &files));
    }
}
