//! The open buffers: text and version per file, updated by full or incremental changes.
//!
//! Edits arrive in UTF-16 positions against the text as it was before each edit; they are
//! applied in order (the protocol's rule), each converted to bytes through a fresh
//! [`LineIndex`]. Positions past a line's end clamp to it and lines past the end clamp to
//! the end of the text, so a confused client cannot make us panic.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use tower_lsp_server::ls_types::{TextDocumentContentChangeEvent, Uri};

use crate::source::{LineIndex, Position};

/// One open buffer.
#[derive(Clone, Debug)]
pub struct Document {
    /// The URI the client uses for it.
    pub uri: Uri,
    /// The current text.
    pub text: String,
    /// The client's version of the text.
    pub version: i32,
}

/// Every open buffer, by normalised file path.
#[derive(Clone, Debug, Default)]
pub struct Documents {
    open: HashMap<PathBuf, Document>,
}

impl Documents {
    /// No open buffers.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Opens (or reopens) a buffer.
    pub fn open(&mut self, path: PathBuf, uri: Uri, text: String, version: i32) {
        self.open.insert(path, Document { uri, text, version });
    }

    /// Applies the changes of one `didChange`; `false` if the buffer is not open.
    pub fn change(
        &mut self,
        path: &Path,
        version: i32,
        changes: Vec<TextDocumentContentChangeEvent>,
    ) -> bool {
        let Some(document) = self.open.get_mut(path) else {
            return false;
        };
        for change in changes {
            apply(&mut document.text, change);
        }
        document.version = version;
        true
    }

    /// Closes a buffer; the file on disk is used again.
    pub fn close(&mut self, path: &Path) -> Option<Document> {
        self.open.remove(path)
    }

    /// The open buffer of `path`.
    #[must_use]
    pub fn get(&self, path: &Path) -> Option<&Document> {
        self.open.get(path)
    }

    /// Every open buffer.
    pub fn iter(&self) -> impl Iterator<Item = (&PathBuf, &Document)> {
        self.open.iter()
    }

    /// The texts of every open buffer, for an [`Overlay`](super::files::Overlay).
    #[must_use]
    pub fn texts(&self) -> HashMap<PathBuf, String> {
        self.open
            .iter()
            .map(|(path, document)| (path.clone(), document.text.clone()))
            .collect()
    }
}

/// Applies one content change to `text`.
pub fn apply(text: &mut String, change: TextDocumentContentChangeEvent) {
    let Some(range) = change.range else {
        *text = change.text;
        return;
    };
    let lines = LineIndex::new(text);
    let at = |position: tower_lsp_server::ls_types::Position| {
        lines.offset_utf16(
            text,
            Position {
                line: position.line,
                column: position.character,
            },
        )
    };
    let start = at(range.start);
    let end = at(range.end).max(start);
    text.replace_range(start..end, &change.text);
}

#[cfg(test)]
mod tests {
    use tower_lsp_server::ls_types::{Position as P, Range};

    use super::*;

    fn edit(text: &str, start: (u32, u32), end: (u32, u32), new: &str) -> String {
        let mut text = text.to_owned();
        apply(
            &mut text,
            TextDocumentContentChangeEvent {
                range: Some(Range::new(P::new(start.0, start.1), P::new(end.0, end.1))),
                range_length: None,
                text: new.to_owned(),
            },
        );
        text
    }

    #[test]
    fn incremental_edits_count_utf16() {
        // `🎉` is two UTF-16 units: column 3 is just after it.
        assert_eq!(edit("a🎉b\nc", (0, 3), (0, 4), "X"), "a🎉X\nc");
        assert_eq!(edit("é\r\nxy", (1, 1), (1, 1), "!"), "é\r\nx!y");
        // Replacing across lines, and past the end clamps.
        assert_eq!(edit("ab\ncd\nef", (0, 1), (2, 1), ""), "af");
        assert_eq!(edit("ab", (0, 99), (7, 0), "c"), "abc");
        // An end before the start is an empty range.
        assert_eq!(edit("abc", (0, 2), (0, 1), "-"), "ab-c");
    }

    #[test]
    fn full_changes_replace_the_text() {
        let mut documents = Documents::new();
        let uri: Uri = "file:///w.kdl".parse().unwrap();
        documents.open(PathBuf::from("/w.kdl"), uri, "old".into(), 1);
        let changed = documents.change(
            Path::new("/w.kdl"),
            2,
            vec![TextDocumentContentChangeEvent {
                range: None,
                range_length: None,
                text: "new".into(),
            }],
        );
        assert!(changed);
        let document = documents.get(Path::new("/w.kdl")).unwrap();
        assert_eq!((document.text.as_str(), document.version), ("new", 2));
        assert!(!documents.change(Path::new("/other.kdl"), 1, Vec::new()));
    }
}
