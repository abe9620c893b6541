//! Turning spans into the file/line/column form every machine format uses.

use serde::Serialize;

use crate::source::{Sources, Span};

/// Where a span is, one-based lines and columns counted in characters.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Location {
    /// The file as the user named it.
    pub file: String,
    /// Byte offsets.
    pub start: u32,
    /// Byte offsets, exclusive.
    pub end: u32,
    /// One-based line of `start`.
    pub line: u32,
    /// One-based column of `start`, in characters.
    pub column: u32,
    /// One-based line of `end`.
    pub end_line: u32,
    /// One-based column of `end`, in characters.
    pub end_column: u32,
}

/// The location of `span`.
#[must_use]
pub fn locate(sources: &Sources, span: Span) -> Location {
    let file = sources.get(span.source);
    let start = file.lines.position_chars(&file.text, span.start as usize);
    let end = file.lines.position_chars(&file.text, span.end as usize);
    Location {
        file: file.path.display().to_string(),
        start: span.start,
        end: span.end,
        line: start.line + 1,
        column: start.column + 1,
        end_line: end.line + 1,
        end_column: end.column + 1,
    }
}
