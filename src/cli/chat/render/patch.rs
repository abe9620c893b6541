//! Patches an agent sends as text, read into [`FileEdit`]s: Codex's `*** Begin Patch`
//! format (`*** Add File:`, `*** Update File:` with `@@` hunks, `*** Move to:`,
//! `*** Delete File:`) and unified diffs (`--- a/x`, `+++ b/x`, `@@ -1 +1 @@`). A patch
//! still being written reads as far as it goes.

use super::diff::{Action, FileEdit, Hunk};

/// The files `text` changes.
pub(super) fn parse(text: &str) -> Vec<FileEdit> {
    let mut reader = Reader::default();
    if text.starts_with("*** Begin Patch") {
        for line in text.lines().skip(1) {
            if line.starts_with("*** End Patch") {
                break;
            }
            reader.codex(line);
        }
    } else {
        let mut lines = text.lines().peekable();
        while let Some(line) = lines.next() {
            let next = lines.peek().copied().unwrap_or_default();
            reader.unified(line, next);
        }
    }
    reader.close();
    reader.edits
}

#[derive(Default)]
struct Reader {
    edits: Vec<FileEdit>,
    file: Option<FileEdit>,
    hunk: Option<Hunk>,
}

impl Reader {
    /// Ends the file being read.
    fn close(&mut self) {
        self.close_hunk();
        if let Some(file) = self.file.take() {
            self.edits.push(file);
        }
    }

    fn close_hunk(&mut self) {
        if let (Some(file), Some(hunk)) = (&mut self.file, self.hunk.take())
            && (hunk.label.is_some() || !hunk.old.is_empty() || !hunk.new.is_empty())
        {
            file.hunks.push(hunk);
        }
    }

    fn open(&mut self, path: &str, action: Action) {
        self.close();
        self.file = Some(FileEdit {
            path: path.trim().to_owned(),
            action,
            hunks: Vec::new(),
        });
    }

    /// A new hunk, its `@@` line's text as its label.
    fn new_hunk(&mut self, label: &str) {
        self.close_hunk();
        let label = label.trim();
        self.hunk = Some(Hunk {
            label: (!label.is_empty()).then(|| label.to_owned()),
            ..Hunk::default()
        });
    }

    /// A line of a hunk (`+`, `-`, or context).
    fn body(&mut self, line: &str) {
        if self.file.is_none() {
            return;
        }
        let hunk = self.hunk.get_or_insert_with(Hunk::default);
        let (old, new, text) = match line.as_bytes().first() {
            Some(b'+') => (false, true, &line[1..]),
            Some(b'-') => (true, false, &line[1..]),
            Some(b' ') => (true, true, &line[1..]),
            Some(b'\\') => return,
            _ => (true, true, line),
        };
        if old {
            hunk.old.push_str(text);
            hunk.old.push('\n');
        }
        if new {
            hunk.new.push_str(text);
            hunk.new.push('\n');
        }
    }

    fn codex(&mut self, line: &str) {
        if let Some(path) = line.strip_prefix("*** Add File: ") {
            self.open(path, Action::Write);
        } else if let Some(path) = line.strip_prefix("*** Update File: ") {
            self.open(path, Action::Edit);
        } else if let Some(path) = line.strip_prefix("*** Delete File: ") {
            self.open(path, Action::Delete);
            self.close();
        } else if let Some(to) = line.strip_prefix("*** Move to: ") {
            if let Some(file) = &mut self.file {
                file.path = format!("{} → {}", file.path, to.trim());
            }
        } else if line.starts_with("*** ") {
            // `*** End of File`.
        } else if let Some(label) = line.strip_prefix("@@") {
            self.new_hunk(label);
        } else {
            self.body(line);
        }
    }

    fn unified(&mut self, line: &str, next: &str) {
        if line.starts_with("diff --git ") || (line.starts_with("index ") && self.hunk.is_none()) {
            return;
        }
        if let Some(old) = line.strip_prefix("--- ")
            && let Some(new) = next.strip_prefix("+++ ")
        {
            let (old, new) = (unprefixed(old), unprefixed(new));
            match (old, new) {
                (old, "/dev/null") => self.open(old, Action::Delete),
                ("/dev/null", new) => self.open(new, Action::Write),
                (_, new) => self.open(new, Action::Edit),
            }
        } else if line.starts_with("+++ ") && self.hunk.is_none() {
            // The header's second line, read with the first.
        } else if let Some(rest) = line.strip_prefix("@@") {
            // `@@ -1,2 +1,3 @@ fn context`: the text after the ranges is the label.
            let label = rest.split_once("@@").map_or("", |(_, label)| label);
            self.new_hunk(label);
        } else {
            self.body(line);
        }
    }
}

/// A unified diff's path without its `a/` or `b/` and any timestamp after a tab.
fn unprefixed(path: &str) -> &str {
    let path = path.split('\t').next().unwrap_or(path).trim();
    path.strip_prefix("a/")
        .or_else(|| path.strip_prefix("b/"))
        .unwrap_or(path)
}
