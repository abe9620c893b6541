//! Source files and positions: [`SourceId`], [`Span`], [`Spanned`], [`Sources`] and
//! [`LineIndex`], the one place that converts byte offsets to lines, columns and UTF-16.
//!
//! Spans carry no text; the text lives once in [`Sources`] and is attached only when a
//! diagnostic is rendered.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// Index of one file in [`Sources`].
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct SourceId(pub u32);

/// A half-open byte range `start..end` in one file of [`Sources`].
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
pub struct Span {
    /// The file the range is in.
    pub source: SourceId,
    /// First byte of the range.
    pub start: u32,
    /// One past the last byte of the range.
    pub end: u32,
}

impl Span {
    /// A span from `start` to `end` in `source`.
    #[must_use]
    pub fn new(source: SourceId, start: usize, end: usize) -> Self {
        Self {
            source,
            start: clamp_u32(start),
            end: clamp_u32(end.max(start)),
        }
    }

    /// The range as `usize`s, for slicing the file's text.
    #[must_use]
    pub fn range(self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }

    /// Length in bytes.
    #[must_use]
    pub fn len(self) -> usize {
        (self.end - self.start) as usize
    }

    /// Whether the span covers no bytes.
    #[must_use]
    pub fn is_empty(self) -> bool {
        self.start == self.end
    }

    /// The smallest span covering both (they must be in the same file).
    #[must_use]
    pub fn to(self, other: Span) -> Span {
        Span {
            source: self.source,
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }

    /// A sub-range of this span, given as byte offsets relative to its start; used to point
    /// into a string value (e.g. a template error inside a prompt). Clamped to this span.
    #[must_use]
    pub fn slice(self, relative: std::ops::Range<usize>) -> Span {
        let start = self
            .start
            .saturating_add(clamp_u32(relative.start))
            .min(self.end);
        let end = self
            .start
            .saturating_add(clamp_u32(relative.end))
            .min(self.end)
            .max(start);
        Span {
            source: self.source,
            start,
            end,
        }
    }

    /// Whether `offset` lies within the span (end inclusive, so a cursor just after a word
    /// still counts as on it).
    #[must_use]
    pub fn contains(self, offset: usize) -> bool {
        (self.start as usize) <= offset && offset <= self.end as usize
    }
}

impl From<Span> for miette::SourceSpan {
    fn from(span: Span) -> Self {
        (span.start as usize..span.end as usize).into()
    }
}

fn clamp_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// A value and where it was written.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Spanned<T> {
    /// The value.
    pub value: T,
    /// Where it was written.
    pub span: Span,
}

impl<T> Spanned<T> {
    /// Pairs a value with its span.
    pub fn new(value: T, span: Span) -> Self {
        Self { value, span }
    }

    /// Maps the value, keeping the span.
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Spanned<U> {
        Spanned {
            value: f(self.value),
            span: self.span,
        }
    }

    /// Borrows the value, keeping the span.
    pub fn as_ref(&self) -> Spanned<&T> {
        Spanned {
            value: &self.value,
            span: self.span,
        }
    }
}

impl<T> std::ops::Deref for Spanned<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.value
    }
}

/// One file's path, text and line index.
#[derive(Debug, Clone)]
pub struct SourceFile {
    /// The path as given by the user (relative paths stay relative, for readable output).
    pub path: PathBuf,
    /// The whole text.
    pub text: String,
    /// Line starts, for position conversion.
    pub lines: LineIndex,
}

/// Every file read during one compilation, addressed by [`SourceId`].
#[derive(Debug, Default, Clone)]
pub struct Sources {
    files: Vec<SourceFile>,
}

impl Sources {
    /// An empty set.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a file and returns its id. Adding the same path twice returns the first id,
    /// so subgraphs shared by several workflows are read once.
    pub fn add(&mut self, path: impl Into<PathBuf>, text: impl Into<String>) -> SourceId {
        let path = path.into();
        if let Some(id) = self.find(&path) {
            return id;
        }
        let text = text.into();
        let lines = LineIndex::new(&text);
        let id = SourceId(u32::try_from(self.files.len()).expect("fewer than 2^32 source files"));
        self.files.push(SourceFile { path, text, lines });
        id
    }

    /// The id of an already added path.
    #[must_use]
    pub fn find(&self, path: &Path) -> Option<SourceId> {
        self.files
            .iter()
            .position(|file| file.path == path)
            .map(|index| SourceId(index as u32))
    }

    /// The file with this id.
    ///
    /// # Panics
    /// If the id did not come from this set (an internal bug, never user input).
    #[must_use]
    pub fn get(&self, id: SourceId) -> &SourceFile {
        self.files
            .get(id.0 as usize)
            .expect("source ids come from this Sources")
    }

    /// The text a span covers ("" if the span is out of range).
    #[must_use]
    pub fn text(&self, span: Span) -> &str {
        self.get(span.source).text.get(span.range()).unwrap_or("")
    }

    /// All files in the order they were added.
    pub fn iter(&self) -> impl Iterator<Item = (SourceId, &SourceFile)> {
        self.files
            .iter()
            .enumerate()
            .map(|(index, file)| (SourceId(index as u32), file))
    }

    /// Number of files.
    #[must_use]
    pub fn len(&self) -> usize {
        self.files.len()
    }

    /// Whether no file was added.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }
}

/// A zero-based line and column. `column` counts bytes, chars or UTF-16 units depending on
/// the method that produced it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Position {
    /// Zero-based line.
    pub line: u32,
    /// Zero-based column.
    pub column: u32,
}

/// Byte offsets of line starts; converts offsets to positions and back. A line ends at
/// `\n`; a `\r` before it belongs to the line ending, so CRLF files get the same columns.
#[derive(Debug, Clone, Default)]
pub struct LineIndex {
    starts: Vec<u32>,
}

impl LineIndex {
    /// Indexes `text`.
    #[must_use]
    pub fn new(text: &str) -> Self {
        let mut starts = vec![0];
        starts.extend(
            text.bytes()
                .enumerate()
                .filter(|&(_, byte)| byte == b'\n')
                .map(|(index, _)| clamp_u32(index + 1)),
        );
        Self { starts }
    }

    /// Number of lines (a text ending in `\n` has an empty last line).
    #[must_use]
    pub fn line_count(&self) -> usize {
        self.starts.len()
    }

    /// The zero-based line containing byte `offset`.
    #[must_use]
    pub fn line(&self, offset: usize) -> u32 {
        let offset = clamp_u32(offset);
        match self.starts.binary_search(&offset) {
            Ok(line) => clamp_u32(line),
            Err(next) => clamp_u32(next.saturating_sub(1)),
        }
    }

    /// Byte offset where `line` starts, or `None` past the end.
    #[must_use]
    pub fn line_start(&self, line: u32) -> Option<usize> {
        self.starts.get(line as usize).map(|&start| start as usize)
    }

    /// Line and byte column of `offset` (clamped to the text).
    #[must_use]
    pub fn position(&self, text: &str, offset: usize) -> Position {
        let offset = floor_char_boundary(text, offset);
        let line = self.line(offset);
        let start = self.starts[line as usize] as usize;
        Position {
            line,
            column: clamp_u32(offset - start),
        }
    }

    /// Line and column in Unicode scalar values (what terminals and SARIF show, one-based
    /// after adding 1).
    #[must_use]
    pub fn position_chars(&self, text: &str, offset: usize) -> Position {
        let Position { line, column } = self.position(text, offset);
        let start = self.starts[line as usize] as usize;
        let chars = text[start..start + column as usize].chars().count();
        Position {
            line,
            column: clamp_u32(chars - usize::from(line == 0 && counts_bom(text, column))),
        }
    }

    /// Line and column in UTF-16 code units, as the Language Server Protocol requires.
    #[must_use]
    pub fn position_utf16(&self, text: &str, offset: usize) -> Position {
        let Position { line, column } = self.position(text, offset);
        let start = self.starts[line as usize] as usize;
        let units: usize = text[start..start + column as usize]
            .chars()
            .map(char::len_utf16)
            .sum();
        Position {
            line,
            column: clamp_u32(units - usize::from(line == 0 && counts_bom(text, column))),
        }
    }

    /// The byte offset of a UTF-16 position; columns past the line end clamp to it (before
    /// its `\r\n`), lines past the end clamp to the end of the text.
    #[must_use]
    pub fn offset_utf16(&self, text: &str, position: Position) -> usize {
        let Some(start) = self.line_start(position.line) else {
            return text.len();
        };
        let line_end = self
            .line_start(position.line + 1)
            .map_or(text.len(), |next| next - 1)
            .min(text.len());
        let line = &text[start..line_end];
        let line = line.strip_suffix('\r').unwrap_or(line);
        let mut units = 0usize;
        for (index, ch) in line.char_indices() {
            if units >= position.column as usize {
                return start + index;
            }
            // A byte-order mark takes no column (see `counts_bom`).
            if start + index > 0 || ch != '\u{feff}' {
                units += ch.len_utf16();
            }
        }
        start + line.len()
    }
}

/// Whether a byte-order mark opens `text` and lies before `column` of its first line. Editors
/// do not show it, so columns do not count it.
fn counts_bom(text: &str, column: u32) -> bool {
    column >= 3 && text.starts_with('\u{feff}')
}

fn floor_char_boundary(text: &str, offset: usize) -> usize {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_in_multibyte_and_crlf_text() {
        let text = "ab\r\né𝄞x\nlast";
        let index = LineIndex::new(text);
        assert_eq!(index.line_count(), 3);
        let x = text.find('x').unwrap();
        assert_eq!(index.position(text, x), Position { line: 1, column: 6 });
        assert_eq!(
            index.position_chars(text, x),
            Position { line: 1, column: 2 }
        );
        assert_eq!(
            index.position_utf16(text, x),
            Position { line: 1, column: 3 }
        );
        assert_eq!(index.offset_utf16(text, Position { line: 1, column: 3 }), x);
        // A column past the end of a CRLF line stops before the `\r`.
        assert_eq!(
            index.offset_utf16(
                text,
                Position {
                    line: 0,
                    column: 99
                }
            ),
            2
        );
        assert_eq!(
            index.offset_utf16(text, Position { line: 9, column: 0 }),
            text.len()
        );
        assert_eq!(
            index.position(text, text.len()),
            Position { line: 2, column: 4 }
        );
    }

    #[test]
    fn offsets_inside_a_char_round_down() {
        let text = "é";
        let index = LineIndex::new(text);
        assert_eq!(index.position(text, 1), Position { line: 0, column: 0 });
    }

    #[test]
    fn span_slice_is_clamped() {
        let span = Span::new(SourceId(0), 10, 20);
        assert_eq!(span.slice(2..4), Span::new(SourceId(0), 12, 14));
        assert_eq!(span.slice(5..50), Span::new(SourceId(0), 15, 20));
    }
}

/// Why a file could not be read, as people are told.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReadError {
    /// Nothing is at the path.
    NotFound,
    /// The path is a directory.
    IsDirectory,
    /// The file exists but may not be read.
    PermissionDenied,
    /// The file was read but is not UTF-8.
    NotUtf8(NotUtf8),
    /// Any other failure, with the operating system's reason.
    Other(String),
}

/// A file that is not UTF-8: its text decoded lossily (each bad sequence replaced by
/// U+FFFD, so everything before the first one is exactly as written) and where the first
/// bad byte is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotUtf8 {
    /// The lossily decoded text.
    pub text: String,
    /// The byte offset of the first bad byte (equal in the file and in `text`).
    pub offset: usize,
    /// The encoding the bytes look like, when that is cheap to tell.
    pub looks_like: Option<&'static str>,
}

impl NotUtf8 {
    /// Decodes `bytes`, which failed UTF-8 validation at `offset`.
    #[must_use]
    pub fn new(bytes: &[u8], offset: usize) -> Self {
        Self {
            text: String::from_utf8_lossy(bytes).into_owned(),
            offset,
            looks_like: guess_encoding(bytes),
        }
    }

    /// The span of the first bad byte's replacement character in `file` (which holds
    /// [`text`](Self::text)).
    #[must_use]
    pub fn first_bad(&self, file: SourceId) -> Span {
        let width = self.text[self.offset..]
            .chars()
            .next()
            .map_or(0, char::len_utf8);
        Span::new(file, self.offset, self.offset + width)
    }
}

/// UTF-16 by its byte-order mark or its NUL bytes; otherwise a single-byte encoding.
fn guess_encoding(bytes: &[u8]) -> Option<&'static str> {
    match bytes {
        [0xFF, 0xFE, ..] => Some("UTF-16 (little-endian)"),
        [0xFE, 0xFF, ..] => Some("UTF-16 (big-endian)"),
        _ => {
            let sample = &bytes[..bytes.len().min(4096)];
            let nuls = sample.iter().filter(|&&b| b == 0).count();
            if nuls * 4 > sample.len() {
                Some("UTF-16")
            } else {
                Some("Latin-1 or Windows-1252")
            }
        }
    }
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NotFound => f.write_str("no such file"),
            Self::IsDirectory => f.write_str("it is a directory, not a file"),
            Self::PermissionDenied => f.write_str("permission denied"),
            Self::NotUtf8(bad) => {
                f.write_str("it is not UTF-8 text")?;
                if let Some(encoding) = bad.looks_like {
                    write!(f, " (it looks like {encoding})")?;
                }
                Ok(())
            }
            Self::Other(reason) => f.write_str(reason),
        }
    }
}

impl ReadError {
    /// The reason an I/O error gives.
    #[must_use]
    pub fn from_io(error: &std::io::Error) -> Self {
        match error.kind() {
            std::io::ErrorKind::NotFound => Self::NotFound,
            std::io::ErrorKind::IsADirectory => Self::IsDirectory,
            std::io::ErrorKind::PermissionDenied => Self::PermissionDenied,
            _ => Self::Other(error.to_string()),
        }
    }
}

/// Read access to other files a workflow refers to (subgraphs, schemas, cassettes). The
/// pure stages never touch the disk: `cli` passes the disk, the language server passes its
/// open buffers over the disk.
pub trait Files {
    /// The text of `path` (already resolved against the referring file), or why it cannot
    /// be had.
    ///
    /// # Errors
    /// [`ReadError`]: missing, a directory, not permitted, not UTF-8, or another failure.
    fn read(&self, path: &Path) -> Result<String, ReadError>;

    /// Whether something readable or not is at `path` (a file that is not UTF-8 exists).
    fn exists(&self, path: &Path) -> bool {
        !matches!(self.read(path), Err(ReadError::NotFound))
    }

    /// The entries (files and directories) directly in `dir`, sorted; empty when it does
    /// not exist. Discovery lists directories through this: custom tools
    /// (`.atomic/tools/*.kdl`) and agents, skills and commands (`.claude/skills/*/SKILL.md`).
    fn list(&self, dir: &Path) -> Vec<PathBuf>;
}

/// Files kept in memory, for tests and for the language server's open buffers.
#[derive(Debug, Default, Clone)]
pub struct MemoryFiles {
    files: std::collections::HashMap<PathBuf, String>,
}

impl MemoryFiles {
    /// An empty set.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds or replaces a file.
    pub fn insert(&mut self, path: impl Into<PathBuf>, text: impl Into<String>) {
        self.files.insert(path.into(), text.into());
    }

    /// Removes a file.
    pub fn remove(&mut self, path: &Path) {
        self.files.remove(path);
    }
}

impl Files for MemoryFiles {
    fn read(&self, path: &Path) -> Result<String, ReadError> {
        if let Some(text) = self.files.get(path) {
            return Ok(text.clone());
        }
        // A path under which files are kept is a directory.
        if self.files.keys().any(|file| file.starts_with(path)) {
            return Err(ReadError::IsDirectory);
        }
        Err(ReadError::NotFound)
    }

    fn list(&self, dir: &Path) -> Vec<PathBuf> {
        let mut entries: Vec<PathBuf> = self
            .files
            .keys()
            .filter_map(|path| path.strip_prefix(dir).ok()?.components().next())
            .map(|first| dir.join(first))
            .collect();
        entries.sort();
        entries.dedup();
        entries
    }
}
