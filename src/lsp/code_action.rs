//! Quick fixes for diagnostics with an obvious repair: a "did you mean `x`?" help replaces
//! the misspelled name with `x`; a `decision` without `otherwise` gets
//! `otherwise goto="end"`; a `loop` without `max` gets `max=10`.

use std::collections::HashMap;

use tower_lsp_server::ls_types::{
    CodeAction, CodeActionKind, CodeActionOrCommand, Range, TextEdit, WorkspaceEdit,
};

use super::convert;
use super::snapshot::Snapshot;
use super::tree;
use crate::diagnostic::{Code, Diagnostic};
use crate::source::{Sources, Span};

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
            let (title, edit) = fix(snapshot, diagnostic)?;
            let uri = convert::uri(&snapshot.path)?;
            Some(CodeActionOrCommand::CodeAction(CodeAction {
                title,
                kind: Some(CodeActionKind::QUICKFIX),
                diagnostics: Some(vec![convert::diagnostic(sources, diagnostic)]),
                edit: Some(WorkspaceEdit {
                    changes: Some(HashMap::from([(uri, vec![edit])])),
                    ..WorkspaceEdit::default()
                }),
                is_preferred: Some(true),
                ..CodeAction::default()
            }))
        })
        .collect()
}

fn fix(snapshot: &Snapshot, diagnostic: &Diagnostic) -> Option<(String, TextEdit)> {
    match diagnostic.code {
        Code::MissingOtherwise => add_otherwise(snapshot, diagnostic.span),
        Code::MissingLoopMax => add_loop_max(snapshot, diagnostic.span),
        _ => replace_with_suggestion(snapshot, diagnostic),
    }
}

/// `did you mean `x`?` → replace the name at the span with `x`. The name is the span's
/// text, or inside its quotes when it is a string.
fn replace_with_suggestion(
    snapshot: &Snapshot,
    diagnostic: &Diagnostic,
) -> Option<(String, TextEdit)> {
    let help = diagnostic.help.as_deref()?;
    let rest = help.strip_prefix("did you mean `")?;
    let suggestion = &rest[..rest.find('`')?];
    let span = diagnostic.span;
    let text = snapshot.sources.text(span);
    let quoted = text.len() >= 2 && text.starts_with('"') && text.ends_with('"');
    let target = if quoted && !text[1..text.len() - 1].contains('\\') {
        snapshot.span(span.start as usize + 1, span.end as usize - 1)
    } else if quoted {
        return Some((
            format!("Replace with `{suggestion}`"),
            TextEdit::new(snapshot.range(span), format!("\"{suggestion}\"")),
        ));
    } else {
        span
    };
    if snapshot.sources.text(target) == suggestion {
        return None;
    }
    Some((
        format!("Replace with `{suggestion}`"),
        TextEdit::new(snapshot.range(target), suggestion.to_owned()),
    ))
}

/// The statement of kind `kind` the diagnostic at `span` is about.
fn statement<'t>(snapshot: &'t Snapshot, span: Span, kind: &str) -> Option<tree::Frame<'t>> {
    let (frames, _) = tree::locate(&snapshot.parse.document, span.start as usize);
    frames
        .into_iter()
        .rev()
        .find(|frame| frame.node.name.value == kind)
}

fn add_otherwise(snapshot: &Snapshot, span: Span) -> Option<(String, TextEdit)> {
    let decision = statement(snapshot, span, "decision")?;
    let block = decision.node.children.as_ref()?;
    let text = snapshot.text();
    let close = block.span.end as usize - 1;
    if text.as_bytes().get(close) != Some(&b'}') {
        return None;
    }
    let indent = indentation(text, decision.node.span.start as usize);
    let line_start = text[..close].rfind('\n').map_or(0, |newline| newline + 1);
    let edit = if text[line_start..close].trim().is_empty() {
        // `}` on its own line: a new line before it.
        let at = snapshot.span(line_start, line_start);
        TextEdit::new(
            snapshot.range(at),
            format!("{indent}    otherwise goto=\"end\"\n"),
        )
    } else {
        // `{ when …; }` on one line.
        let before = text[..close].trim_end_matches(' ');
        let separator = if before.ends_with(';') || before.ends_with('{') {
            " "
        } else {
            "; "
        };
        let at = snapshot.span(before.len(), close);
        TextEdit::new(
            snapshot.range(at),
            format!("{separator}otherwise goto=\"end\"; "),
        )
    };
    Some(("Add `otherwise goto=\"end\"`".to_owned(), edit))
}

fn add_loop_max(snapshot: &Snapshot, span: Span) -> Option<(String, TextEdit)> {
    let node = statement(snapshot, span, "loop")?.node;
    let end = node
        .entries
        .last()
        .map_or(node.name.span.end, |entry| entry.span.end);
    let at = snapshot.span(end as usize, end as usize);
    Some((
        "Add `max=10`".to_owned(),
        TextEdit::new(snapshot.range(at), " max=10".to_owned()),
    ))
}

fn indentation(text: &str, offset: usize) -> &str {
    let line_start = text[..offset].rfind('\n').map_or(0, |newline| newline + 1);
    let line = &text[line_start..offset];
    &line[..line.len() - line.trim_start().len()]
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
