//! Quick fixes: the repair a diagnostic carries as data (its [`crate::diagnostic::Fix`]: a
//! misspelt name's closest match, `otherwise goto="end"` for a decision without one,
//! `max=10` for an unbounded loop), offered as an editor's quick fix.

use std::collections::HashMap;

use tower_lsp_server::ls_types::{
    CodeAction, CodeActionKind, CodeActionOrCommand, Range, TextEdit, WorkspaceEdit,
};

use super::convert;
use super::snapshot::Snapshot;
use crate::diagnostic::Diagnostic;
use crate::source::Sources;

/// The fixes for `diagnostics` (of the analysis of the same text as `snapshot`) whose
/// range overlaps `range`.
#[must_use]
pub fn code_actions(
    snapshot: &Snapshot,
    sources: &Sources,
    diagnostics: &[Diagnostic],
    range: Range,
) -> Vec<CodeActionOrCommand> {
    let start = snapshot.offset(range.start);
    let end = snapshot.offset(range.end);
    diagnostics
        .iter()
        .filter(|diagnostic| diagnostic.span.source == Snapshot::FILE)
        .filter(|diagnostic| {
            (diagnostic.span.start as usize) <= end && start <= diagnostic.span.end as usize
        })
        .filter_map(|diagnostic| {
            let (title, edits) = fix(snapshot, diagnostic)?;
            let uri = convert::uri(&snapshot.path)?;
            Some(CodeActionOrCommand::CodeAction(CodeAction {
                title,
                kind: Some(CodeActionKind::QUICKFIX),
                diagnostics: Some(vec![convert::diagnostic(sources, diagnostic)]),
                edit: Some(WorkspaceEdit {
                    changes: Some(HashMap::from([(uri, edits)])),
                    ..WorkspaceEdit::default()
                }),
                is_preferred: Some(true),
                ..CodeAction::default()
            }))
        })
        .collect()
}

/// The diagnostic's own repair ([`crate::diagnostic::Fix`]), as one text edit per edit of
/// this file.
fn fix(snapshot: &Snapshot, diagnostic: &Diagnostic) -> Option<(String, Vec<TextEdit>)> {
    let fix = diagnostic.fix.as_ref()?;
    let edits: Vec<TextEdit> = fix
        .edits
        .iter()
        .filter(|edit| edit.span.source == Snapshot::FILE)
        .map(|edit| TextEdit::new(snapshot.range(edit.span), edit.replacement.clone()))
        .collect();
    if edits.len() != fix.edits.len() || edits.is_empty() {
        return None;
    }
    Some((fix.title.clone(), edits))
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use tower_lsp_server::ls_types::{CodeActionOrCommand, Position, Range};

    use super::super::testing::analysis;
    use super::*;

    /// Every quick fix for `text`, applied one at a time, with the diagnostics left after.
    fn fixes(text: &str) -> String {
        let analysis = analysis(text, &[]);
        let snapshot = analysis.snapshot();
        let whole = Range::new(Position::new(0, 0), Position::new(u32::MAX, 0));
        let actions = code_actions(
            snapshot,
            &analysis.sources,
            &analysis.compiled.diagnostics,
            whole,
        );
        let mut out = String::new();
        for action in actions {
            let CodeActionOrCommand::CodeAction(action) = action else {
                panic!("only code actions");
            };
            let edit = action
                .edit
                .unwrap()
                .changes
                .unwrap()
                .into_values()
                .next()
                .unwrap()
                .remove(0);
            let mut fixed = text.to_owned();
            let start = snapshot.offset(edit.range.start);
            let end = snapshot.offset(edit.range.end);
            fixed.replace_range(start..end, &edit.new_text);
            let fixed_code = action.diagnostics.unwrap()[0].code.clone();
            let after = super::super::analysis::Analysis::new(
                Path::new(super::super::testing::PATH),
                &fixed,
                2,
                &Default::default(),
                &crate::source::MemoryFiles::new(),
                None,
            );
            let left: Vec<String> = after
                .compiled
                .diagnostics
                .iter()
                .map(|d| d.code.to_string())
                .collect();
            out.push_str(&format!(
                "## {} (fixes {:?})\n{fixed}left: {left:?}\n\n",
                action.title,
                fixed_code.unwrap()
            ));
        }
        out
    }

    #[test]
    fn did_you_mean_otherwise_and_max() {
        let text = r#"workflow "release" {
    state { field "approved" type="boolean" default=#false; }
    provider "fake" adapter="replay"
    agent "review" provider="fake" modle="m" { prompt "Review {{ state.aproved }}"; }
    decision "gate" {
        when "state.approved" goto="shiip"
    }
    loop "again" until="state.approved" { agent "fix" provider="fake" { prompt "Fix"; } }
    decision "inline" { when "state.approved" goto="end"; }
    tool "ship" { run "make" "release"; }
}
"#;
        insta::assert_snapshot!(fixes(text));
    }
}
