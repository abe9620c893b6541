//! A file edit shown as its diff. [`edit_diffs`] recognises each agent's edit tools from
//! the call's input — Claude Code's `Edit`/`MultiEdit`/`Write`, OpenCode's `edit`/`write`,
//! Gemini's `replace`/`write_file`, Copilot's `edit`/`create` (`path`, `old_str`,
//! `new_str`, `file_text`), and a `*** Begin Patch` (Codex's `apply_patch`, wherever in
//! the input it is) or unified diff — and [`diff_lines`] draws one as a unified diff:
//! a header with the path and `+N −M`, `+`/`-` gutters, long lines wrapped after `↪`.
//!
//! The line diff is a longest-common-subsequence one on what is left once the common
//! first and last lines are set aside; past [`DIFF_CELLS`] it gives up and shows the old
//! lines removed and the new ones added.

use ratatui::text::{Line, Span};
use serde_json::Value;

use super::patch;
use super::theme::Theme;
use super::wrap::{Styled, clip, columns, expand_tabs, spans_width};

/// One file's change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct FileEdit {
    /// The file, as the tool named it (`old → new` when it was moved).
    pub(crate) path: String,
    /// What happened to it.
    pub(crate) action: Action,
    /// The changed stretches.
    pub(crate) hunks: Vec<Hunk>,
}

/// What an edit does to its file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Action {
    /// Parts of it are replaced.
    Edit,
    /// It is written whole (created, or overwritten: the old text is not known).
    Write,
    /// It is deleted.
    Delete,
}

/// One changed stretch: its text before and after.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Hunk {
    /// What is shown on its `@@` line (a patch's context line, `every occurrence`).
    pub(crate) label: Option<String>,
    /// The text before.
    pub(crate) old: String,
    /// The text after.
    pub(crate) new: String,
}

/// How a line of a diff reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Sign {
    /// Unchanged.
    Context,
    /// Taken out.
    Removed,
    /// Put in.
    Added,
}

/// Past this many cells (old lines × new lines, after the common ends are set aside) a
/// hunk is not diffed line by line.
pub(crate) const DIFF_CELLS: usize = 250_000;

/// The first file a tool call edits, if it is an edit.
#[cfg(test)]
pub(crate) fn edit_diff(tool: &str, input: &Value) -> Option<FileEdit> {
    edit_diffs(tool, input).into_iter().next()
}

/// Every file a tool call edits (a patch may touch several); empty when it is no edit.
pub(crate) fn edit_diffs(tool: &str, input: &Value) -> Vec<FileEdit> {
    // A call recorded as `{"tool": …, "arguments": {…}}` (a refused call).
    let (tool, input) = match (input.get("tool"), input.get("arguments")) {
        (Some(Value::String(name)), Some(arguments)) => (name.as_str(), arguments),
        _ => (tool, input),
    };
    if let Some(text) = patch_text(input) {
        let edits = patch::parse(text);
        if !edits.is_empty() {
            return edits;
        }
    }
    let text = |keys: &[&str]| keys.iter().find_map(|key| input.get(*key)?.as_str());
    let Some(path) = text(&["file_path", "filePath", "path"]) else {
        return Vec::new();
    };
    let hunk = |edit: &Value| {
        let field = |keys: &[&str]| keys.iter().find_map(|key| edit.get(*key)?.as_str());
        Some(Hunk {
            label: edit
                .get("replace_all")
                .or_else(|| edit.get("replaceAll"))
                .and_then(Value::as_bool)
                .filter(|all| *all)
                .map(|_| "every occurrence".to_owned()),
            old: field(&["old_string", "oldString", "old_str"])?.to_owned(),
            new: field(&["new_string", "newString", "new_str"])?.to_owned(),
        })
    };
    let edit = |action, hunks| {
        vec![FileEdit {
            path: path.to_owned(),
            action,
            hunks,
        }]
    };
    if let Some(edits) = input.get("edits").and_then(Value::as_array) {
        return edit(Action::Edit, edits.iter().filter_map(hunk).collect());
    }
    if let Some(hunk) = hunk(input) {
        return edit(Action::Edit, vec![hunk]);
    }
    let lower = tool.to_ascii_lowercase();
    let writes = ["write", "write_file", "write-file", "create", "create_file"];
    match text(&["content", "file_text", "text"]) {
        Some(content) if writes.contains(&lower.as_str()) => edit(
            Action::Write,
            vec![Hunk {
                label: None,
                old: String::new(),
                new: content.to_owned(),
            }],
        ),
        _ => Vec::new(),
    }
}

/// A patch in the input: a string field (or one a level down) holding `*** Begin Patch`
/// or a unified diff, from there on.
fn patch_text(input: &Value) -> Option<&str> {
    match input {
        Value::String(text) => patch_in(text),
        Value::Object(map) => map.values().find_map(|value| match value {
            Value::String(text) => patch_in(text),
            Value::Array(items) => items.iter().filter_map(Value::as_str).find_map(patch_in),
            Value::Object(_) => patch_text(value),
            _ => None,
        }),
        _ => None,
    }
}

/// `text` from where a patch in it starts.
fn patch_in(text: &str) -> Option<&str> {
    let at = text
        .find("*** Begin Patch")
        .or_else(|| text.starts_with("--- ").then_some(0))
        .or_else(|| text.find("\n--- ").map(|at| at + 1))
        .filter(|at| text[*at..].starts_with("***") || text[*at..].contains("\n+++ "))?;
    Some(&text[at..])
}

/// The lines of a hunk's diff, in order.
pub(crate) fn line_diff<'a>(old: &'a str, new: &'a str) -> Vec<(Sign, &'a str)> {
    let old: Vec<&str> = old.lines().collect();
    let new: Vec<&str> = new.lines().collect();
    let head = old.iter().zip(&new).take_while(|(a, b)| a == b).count();
    let tail = old[head..]
        .iter()
        .rev()
        .zip(new[head..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let (a, b) = (&old[head..old.len() - tail], &new[head..new.len() - tail]);
    let mut out: Vec<(Sign, &str)> = old[..head].iter().map(|l| (Sign::Context, *l)).collect();
    if a.len().saturating_mul(b.len()) > DIFF_CELLS {
        out.extend(a.iter().map(|l| (Sign::Removed, *l)));
        out.extend(b.iter().map(|l| (Sign::Added, *l)));
    } else {
        // lcs[i][j]: the longest common subsequence of a[i..] and b[j..].
        let columns = b.len() + 1;
        let mut lcs = vec![0_u32; (a.len() + 1) * columns];
        for i in (0..a.len()).rev() {
            for j in (0..b.len()).rev() {
                lcs[i * columns + j] = if a[i] == b[j] {
                    lcs[(i + 1) * columns + j + 1] + 1
                } else {
                    lcs[(i + 1) * columns + j].max(lcs[i * columns + j + 1])
                };
            }
        }
        let (mut i, mut j) = (0, 0);
        while i < a.len() || j < b.len() {
            if i < a.len() && j < b.len() && a[i] == b[j] {
                out.push((Sign::Context, a[i]));
                i += 1;
                j += 1;
            } else if i < a.len()
                && (j == b.len() || lcs[(i + 1) * columns + j] >= lcs[i * columns + j + 1])
            {
                // Removed lines go before the added ones that replace them.
                out.push((Sign::Removed, a[i]));
                i += 1;
            } else {
                out.push((Sign::Added, b[j]));
                j += 1;
            }
        }
    }
    out.extend(old[old.len() - tail..].iter().map(|l| (Sign::Context, *l)));
    out
}

/// Lines added and removed by `edit`.
#[cfg(test)]
pub(crate) fn counts(edit: &FileEdit) -> (usize, usize) {
    let mut added = 0;
    let mut removed = 0;
    for hunk in &edit.hunks {
        for (sign, _) in line_diff(&hunk.old, &hunk.new) {
            match sign {
                Sign::Added => added += 1,
                Sign::Removed => removed += 1,
                Sign::Context => {}
            }
        }
    }
    (added, removed)
}

/// `edit` as a unified diff at most `width` columns wide: a header, then each hunk's lines.
pub(crate) fn diff_lines(edit: &FileEdit, width: u16, theme: &Theme) -> Vec<Line<'static>> {
    let width = usize::from(width).max(4);
    let mut added = 0;
    let mut removed = 0;
    let mut body = Vec::new();
    let mut expanded = String::new();
    let mut text = Styled::default();
    for (n, hunk) in edit.hunks.iter().enumerate() {
        match &hunk.label {
            Some(label) => body.push(Line::from(Span::styled(
                clip(&format!("@@ {label}"), width),
                theme.diff_hunk,
            ))),
            None if n > 0 => body.push(Line::from(Span::styled("⋯", theme.diff_hunk))),
            None => {}
        }
        for (sign, line) in line_diff(&hunk.old, &hunk.new) {
            let (mark, style) = match sign {
                Sign::Context => (' ', theme.diff_context),
                Sign::Removed => {
                    removed += 1;
                    ('-', theme.diff_removed)
                }
                Sign::Added => {
                    added += 1;
                    ('+', theme.diff_added)
                }
            };
            expand_tabs(line, &mut expanded);
            text.clear();
            text.push(&expanded, style);
            let first = [Span::styled(format!("{mark} "), style)];
            let rest = [Span::styled(format!("{mark}↪"), style)];
            body.extend(text.lines(width, &first, &rest, false));
        }
    }
    let counts = [
        Span::styled(format!("  +{added}"), theme.diff_added),
        Span::styled(format!(" −{removed}"), theme.diff_removed),
    ];
    let note = match edit.action {
        Action::Edit => "",
        Action::Write => " (written)",
        Action::Delete => " (deleted)",
    };
    let fixed = spans_width(&counts);
    let mut header = vec![Span::styled(
        clip(&edit.path, width.saturating_sub(fixed).max(1)),
        theme.diff_header,
    )];
    header.extend(counts);
    if spans_width(&header) + columns(note) <= width {
        header.push(Span::styled(note, theme.dim));
    }
    let mut out = vec![Line::from(header)];
    out.extend(body);
    out
}

#[cfg(test)]
#[path = "diff_tests.rs"]
mod tests;
