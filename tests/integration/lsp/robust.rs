//! The editor features over real files, without the transport: every quick fix on the
//! diagnostic fixtures removes the diagnostic it is for, and every feature answers at
//! every position of the examples, and at the end of every prefix of them (a file being
//! typed), without panicking.

use std::collections::HashMap;
use std::path::PathBuf;

use atomic::lsp::{Analysis, Disk, Snapshot};
use tower_lsp_server::ls_types::{CodeActionOrCommand, Position, Range};

use crate::support;

fn kdl_files(dir: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(support::root().join(dir))
        .expect("the directory exists")
        .map(|entry| entry.expect("readable").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "kdl"))
        .collect();
    files.sort();
    files
}

fn count(analysis: &Analysis, code: &str) -> usize {
    analysis
        .compiled
        .diagnostics
        .iter()
        .filter(|d| d.code.to_string() == code)
        .count()
}

#[test]
fn every_quick_fix_removes_its_diagnostic() {
    let buffers = HashMap::new();
    let mut fixed = Vec::new();
    for path in kdl_files("tests/fixtures/check/err") {
        // An editor sends text: a fixture that is not UTF-8 arrives decoded.
        let text = String::from_utf8_lossy(&std::fs::read(&path).expect("readable")).into_owned();
        let before = Analysis::new(&path, &text, 1, &buffers, &Disk, None);
        let everything = Range::new(Position::new(0, 0), Position::new(u32::MAX, 0));
        let actions = atomic::lsp::code_actions(
            before.snapshot(),
            &before.sources,
            &before.compiled.diagnostics,
            everything,
        );
        for action in actions {
            let CodeActionOrCommand::CodeAction(action) = action else {
                panic!("only code actions")
            };
            let code = match &action.diagnostics.as_ref().expect("for a diagnostic")[0].code {
                Some(tower_lsp_server::ls_types::NumberOrString::String(code)) => code.clone(),
                other => panic!("a string code, not {other:?}"),
            };
            let edits = action
                .edit
                .and_then(|edit| edit.changes)
                .expect("an edit")
                .into_values()
                .flatten();
            let mut after_text = text.clone();
            for edit in edits {
                atomic::lsp::apply_change(
                    &mut after_text,
                    tower_lsp_server::ls_types::TextDocumentContentChangeEvent {
                        range: Some(edit.range),
                        range_length: None,
                        text: edit.new_text,
                    },
                );
            }
            let after = Analysis::new(&path, &after_text, 2, &buffers, &Disk, None);
            assert!(
                count(&after, &code) < count(&before, &code),
                "`{}` in {} does not remove `{code}`:\n{after_text}",
                action.title,
                path.display()
            );
            let name = path
                .file_name()
                .expect("a name")
                .to_string_lossy()
                .into_owned();
            fixed.push(format!("{name}: {}", action.title));
        }
    }
    insta::assert_snapshot!(fixed.join("\n"));
}

/// Runs every position-based feature at `offset`.
fn answer_everything(snapshot: &Snapshot, offset: usize) {
    let position = atomic::lsp::position(snapshot.file(), offset);
    let _ = atomic::lsp::hover(snapshot, position);
    let _ = atomic::lsp::definition(snapshot, position, &Disk);
    let _ = atomic::lsp::references(snapshot, position, true);
    let _ = atomic::lsp::completion(snapshot, position);
    let _ = atomic::lsp::prepare_rename(snapshot, position);
    let _ = atomic::lsp::rename(snapshot, position, "renamed");
}

#[test]
fn every_position_of_the_examples_answers() {
    let mut files = kdl_files("examples");
    files.extend(kdl_files("tests/fixtures/check/ok"));
    files.extend(kdl_files("tests/fixtures/check/err"));
    let mut positions = 0;
    for path in &files {
        let text = String::from_utf8_lossy(&std::fs::read(path).expect("readable")).into_owned();
        let snapshot = Snapshot::new(path, &text, 1);
        let _ = atomic::lsp::document_symbols(&snapshot);
        for (offset, _) in text.char_indices().chain([(text.len(), ' ')]) {
            answer_everything(&snapshot, offset);
            positions += 1;
        }
        // The file as it is being typed: every prefix, asked at its end.
        for (end, _) in text.char_indices().step_by(11) {
            let prefix = Snapshot::new(path, &text[..end], 2);
            answer_everything(&prefix, end);
            positions += 1;
        }
    }
    assert!(positions > 10_000, "{positions} positions");
}
