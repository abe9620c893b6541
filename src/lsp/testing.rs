//! Test helpers: build snapshots and analyses of inline text, and draw what a feature
//! returned under the source (gleam's hover tests): `↑` at the cursor, `▔` under ranges.

use std::collections::{BTreeSet, HashMap};
use std::fmt::Write as _;
use std::path::Path;

use tower_lsp_server::ls_types::{HoverContents, Position, Range};

use super::analysis::Analysis;
use super::convert;
use super::snapshot::Snapshot;
use crate::source::{MemoryFiles, SourceFile};

/// The path test buffers live at.
pub(crate) const PATH: &str = "/w/flow.kdl";

/// A snapshot of `text` at [`PATH`].
pub(crate) fn snapshot(text: &str) -> Snapshot {
    Snapshot::new(Path::new(PATH), text, 1)
}

/// An analysis of `text` at [`PATH`], with `files` on the disk.
pub(crate) fn analysis(text: &str, files: &[(&str, &str)]) -> Analysis {
    let mut disk = MemoryFiles::new();
    for (path, text) in files {
        disk.insert(*path, *text);
    }
    Analysis::new(Path::new(PATH), text, 1, &HashMap::new(), &disk, None)
}

/// A cursor: `delta` bytes after the first occurrence of `marker`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Cursor {
    pub offset: usize,
}

impl Cursor {
    pub(crate) fn on(text: &str, marker: &str, delta: usize) -> Self {
        let at = text
            .find(marker)
            .unwrap_or_else(|| panic!("marker `{marker}` not in the text"));
        Self { offset: at + delta }
    }

    pub(crate) fn position(self, snapshot: &Snapshot) -> Position {
        convert::position(snapshot.file(), self.offset)
    }
}

/// The lines touched by `cursor` and `ranges`, each followed by a marker line.
pub(crate) fn excerpt(file: &SourceFile, cursor: Option<usize>, ranges: &[Range]) -> String {
    let mut marks: Vec<(usize, usize, char)> = Vec::new();
    for range in ranges {
        let start = convert::offset(file, range.start);
        let end = convert::offset(file, range.end);
        marks.push((start, end.max(start + usize::from(start == end)), '▔'));
    }
    if let Some(offset) = cursor {
        marks.push((offset, offset + 1, '↑'));
    }
    let mut lines = BTreeSet::new();
    for &(start, end, _) in &marks {
        let first = file.lines.line(start);
        let last = file.lines.line(end.saturating_sub(1).max(start));
        lines.extend(first..=last);
    }
    let mut out = String::new();
    for line in lines {
        let start = file.lines.line_start(line).unwrap_or(file.text.len());
        let end = file.lines.line_start(line + 1).unwrap_or(file.text.len());
        let text = file.text[start..end].trim_end_matches(['\n', '\r']);
        let _ = writeln!(out, "{:>3} │ {text}", line + 1);
        let mut under = String::new();
        for (index, ch) in text.char_indices().chain([(text.len(), ' ')]) {
            let at = start + index;
            let mark = marks
                .iter()
                .rev()
                .find(|&&(from, to, _)| from <= at && at < to)
                .map(|&(_, _, mark)| mark);
            let _ = ch;
            under.push(mark.unwrap_or(' '));
        }
        let under = under.trim_end();
        if !under.is_empty() {
            let _ = writeln!(out, "    │ {under}");
        }
    }
    out
}

/// Hovers at each cursor, drawn.
pub(crate) fn hover_report(text: &str, cursors: &[Cursor]) -> String {
    let snapshot = snapshot(text);
    let mut out = String::new();
    for cursor in cursors {
        let hover = super::hover::hover(&snapshot, cursor.position(&snapshot));
        let ranges: Vec<Range> = hover.iter().filter_map(|hover| hover.range).collect();
        out.push_str(&excerpt(snapshot.file(), Some(cursor.offset), &ranges));
        match hover.map(|hover| hover.contents) {
            Some(HoverContents::Markup(markup)) => {
                let _ = writeln!(out, "{}", markup.value);
            }
            Some(other) => {
                let _ = writeln!(out, "{other:?}");
            }
            None => out.push_str("(no hover)\n"),
        }
        out.push_str("-----\n");
    }
    out.trim_end_matches("-----\n").to_owned()
}
