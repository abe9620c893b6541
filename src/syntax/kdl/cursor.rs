//! The parser's position in the text, its diagnostics and comments, the trivia every rule
//! skips (whitespace, newlines, comments and line continuations), and the scratch stacks
//! lists are built on.
//!
//! Trivia follows the grammar's names: `ws` is a space or block comment, `node-space` is
//! whitespace inside a node (newlines only through a `\` continuation), `line-space` is
//! whitespace between nodes (newlines and line comments too).

use crate::diagnostic::{Code, Diagnostic};
use crate::source::{SourceId, Span};

use super::chars;
use super::tree::{Comment, CommentKind, Entry, Node};

/// How many diagnostics one parse reports at most.
pub(super) const MAX_DIAGNOSTICS: usize = 1000;

/// A cursor over one KDL text.
pub(super) struct Cursor<'a> {
    pub(super) text: &'a str,
    pub(super) bytes: &'a [u8],
    pub(super) pos: usize,
    pub(super) source: SourceId,
    pub(super) diagnostics: Vec<Diagnostic>,
    pub(super) comments: Vec<Comment>,
    /// Nodes of the blocks being parsed, innermost last. A block's nodes are moved out into
    /// an exactly sized `Vec` when it ends, so no list grows by reallocation.
    pub(super) node_stack: Vec<Node>,
    /// Entries of the nodes being parsed, likewise.
    pub(super) entry_stack: Vec<Entry>,
    /// The first `}` that closed a block while indented differently from the line that
    /// opened it (`}` position, `{` position): when a stray `}` turns up later, this is
    /// most likely the extra one, so the error points at it too.
    pub(super) misindented_close: Option<(usize, usize)>,
}

impl<'a> Cursor<'a> {
    pub(super) fn new(text: &'a str, source: SourceId) -> Self {
        Self {
            text,
            bytes: text.as_bytes(),
            pos: 0,
            source,
            diagnostics: Vec::new(),
            comments: Vec::new(),
            node_stack: Vec::new(),
            entry_stack: Vec::new(),
            misindented_close: None,
        }
    }

    /// The indentation of the line holding `pos` (spaces and tabs before its first other
    /// character), and whether `pos` is that first character.
    pub(super) fn indentation(&self, pos: usize) -> (usize, bool) {
        let line_start = self.bytes[..pos]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |at| at + 1);
        let indent = self.bytes[line_start..]
            .iter()
            .take_while(|&&b| b == b' ' || b == b'\t')
            .count();
        (indent, line_start + indent == pos)
    }

    /// A span in this file.
    #[inline]
    pub(super) fn span(&self, start: usize, end: usize) -> Span {
        Span::new(self.source, start, end)
    }

    /// The byte at the cursor.
    #[inline]
    pub(super) fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    /// The byte `n` past the cursor.
    #[inline]
    pub(super) fn peek_at(&self, n: usize) -> Option<u8> {
        self.bytes.get(self.pos + n).copied()
    }

    /// Whether the text at the cursor starts with `prefix`.
    #[inline]
    pub(super) fn at(&self, prefix: &[u8]) -> bool {
        self.bytes
            .get(self.pos..)
            .is_some_and(|rest| rest.starts_with(prefix))
    }

    #[inline]
    pub(super) fn at_eof(&self) -> bool {
        self.pos >= self.bytes.len()
    }

    /// The character at `pos`, if any.
    pub(super) fn char_at(&self, pos: usize) -> Option<char> {
        self.text.get(pos..).and_then(|rest| rest.chars().next())
    }

    /// End of the character at `pos` (at least `pos + 1`, clamped to the text).
    pub(super) fn char_end(&self, pos: usize) -> usize {
        match self.bytes.get(pos) {
            Some(&byte) => (pos + chars::utf8_len(byte)).min(self.bytes.len()),
            None => pos,
        }
    }

    /// Length of a newline at the cursor, or 0.
    #[inline]
    pub(super) fn newline_len(&self) -> usize {
        chars::newline_len(self.bytes, self.pos)
    }

    /// Whether a node ends here: a newline, `;`, `}`, a line comment or the end of the text.
    pub(super) fn at_terminator(&self) -> bool {
        match self.peek() {
            None | Some(b';' | b'}') => true,
            Some(b'/') => self.peek_at(1) == Some(b'/'),
            _ => self.newline_len() > 0,
        }
    }

    /// Describes what is at `pos` for a "found …" message.
    pub(super) fn describe(&self, pos: usize) -> String {
        if pos >= self.bytes.len() {
            return String::from("end of file");
        }
        if chars::newline_len(self.bytes, pos) > 0 {
            return String::from("a newline");
        }
        if chars::space_len(self.bytes, pos) > 0 {
            return String::from("whitespace");
        }
        match self.char_at(pos) {
            Some(ch) if chars::is_disallowed(ch) => format!("U+{:04X}", u32::from(ch)),
            Some(_) if self.bytes[pos..].starts_with(b"/-") => String::from("`/-`"),
            Some(_) if self.bytes[pos..].starts_with(b"//") => String::from("a comment"),
            Some('"') => String::from("a string"),
            Some(ch) => format!("`{ch}`"),
            None => String::from("end of file"),
        }
    }

    /// Span of the character at `pos` (empty at the end of the text).
    pub(super) fn char_span(&self, pos: usize) -> Span {
        self.span(pos, self.char_end(pos))
    }

    /// Reports a problem.
    /// Past [`MAX_DIAGNOSTICS`] one last diagnostic says so and the rest are dropped, so a
    /// file of garbage cannot make the diagnostics list outgrow memory.
    pub(super) fn report(&mut self, diagnostic: Diagnostic) {
        match self.diagnostics.len() {
            count if count < MAX_DIAGNOSTICS => self.diagnostics.push(diagnostic),
            MAX_DIAGNOSTICS => {
                let span = diagnostic.span;
                self.diagnostics.push(
                    Diagnostic::new(
                        Code::SyntaxError,
                        span,
                        format!(
                            "too many syntax errors; stopped reporting after {MAX_DIAGNOSTICS}"
                        ),
                    )
                    .label("later errors are not shown")
                    .help("fix the errors above and parse again"),
                );
            }
            _ => {}
        }
    }

    /// Reports a problem with a label and help in one call.
    pub(super) fn error(
        &mut self,
        code: Code,
        span: Span,
        message: impl Into<String>,
        label: impl Into<String>,
        help: impl Into<String>,
    ) {
        self.report(Diagnostic::new(code, span, message).label(label).help(help));
    }

    /// Reports a disallowed code point at `pos` and returns its length.
    pub(super) fn report_disallowed(&mut self, pos: usize, len: usize) {
        let (message, help) = match self.char_at(pos) {
            Some('\u{FEFF}') => (
                String::from("byte order mark in the middle of the file"),
                "a BOM (U+FEFF) may only be the very first character; delete it",
            ),
            Some(ch) => (
                format!("character U+{:04X} is not allowed in KDL", u32::from(ch)),
                "delete it; inside a quoted string it can be written as a `\\u{…}` escape",
            ),
            None => (String::from("invalid character"), "delete it"),
        };
        let span = self.span(pos, pos + len);
        self.error(
            Code::InvalidCharacter,
            span,
            message,
            "not allowed here",
            help,
        );
    }

    /// Skips `ws*`: spaces and block comments. Disallowed code points are reported and
    /// skipped as if they were spaces, so one stray control character costs one diagnostic.
    /// Returns whether anything was skipped.
    #[inline]
    pub(super) fn skip_ws(&mut self) -> bool {
        let start = self.pos;
        while self.peek() == Some(b' ') {
            self.pos += 1;
        }
        // Anything else that may be whitespace: a tab, `/*`, a control character or a
        // non-ASCII byte. Newlines end whitespace, so `\n` and `\r` stay on the fast path.
        if let Some(byte) = self.peek()
            && (byte == b'/' || !(0x20..0x7F).contains(&byte) && byte != b'\n' && byte != b'\r')
        {
            self.skip_ws_slow();
        }
        self.pos > start
    }

    fn skip_ws_slow(&mut self) {
        loop {
            match self.peek() {
                Some(b' ' | b'\t') => self.pos += 1,
                Some(b'/') if self.peek_at(1) == Some(b'*') => self.skip_block_comment(),
                Some(byte) if !(0x20..0x7F).contains(&byte) => {
                    let len = chars::space_len(self.bytes, self.pos);
                    if len > 0 {
                        self.pos += len;
                        continue;
                    }
                    let len = chars::disallowed_len(self.bytes, self.pos);
                    if len == 0 {
                        break;
                    }
                    self.report_disallowed(self.pos, len);
                    self.pos += len;
                }
                _ => break,
            }
        }
    }

    /// Skips `node-space*`: whitespace, and `\` line continuations. Returns whether anything
    /// was skipped.
    #[inline]
    pub(super) fn skip_node_space(&mut self) -> bool {
        // Fast exit: most calls land on a token or a newline, and printable ASCII other
        // than a space, `/` (a block comment) and `\` (a continuation) cannot start
        // node-space.
        match self.peek() {
            None | Some(b'\n' | b'\r') => return false,
            Some(b' ' | b'/' | b'\\') => {}
            Some(byte) if (0x21..0x7F).contains(&byte) => return false,
            Some(_) => {}
        }
        let start = self.pos;
        loop {
            self.skip_ws();
            if self.peek() == Some(b'\\') {
                self.skip_escline();
            } else {
                break;
            }
        }
        self.pos > start
    }

    /// Skips `line-space*`: whitespace, newlines, line comments and continuations.
    pub(super) fn skip_line_space(&mut self) {
        loop {
            self.skip_node_space();
            let newline = self.newline_len();
            if newline > 0 {
                self.pos += newline;
            } else if self.at(b"//") {
                self.skip_line_comment();
            } else {
                break;
            }
        }
    }

    /// Skips an `escline` at the cursor (which is on the `\`): `\ ws* (comment | newline |
    /// eof)`. Anything else after the `\` is reported and the `\` is skipped alone.
    fn skip_escline(&mut self) {
        let backslash = self.pos;
        self.pos += 1;
        self.skip_ws();
        let newline = self.newline_len();
        if newline > 0 {
            self.pos += newline;
        } else if self.at(b"//") {
            self.skip_line_comment();
        } else if !self.at_eof() {
            let found = self.describe(self.pos);
            let span = self.span(backslash, backslash + 1);
            self.error(
                Code::SyntaxError,
                span,
                format!("expected a newline after the line continuation `\\`, found {found}"),
                "line continuation",
                "a `\\` outside a string continues the node on the next line; put a line \
                 break right after it, or quote the value if the `\\` belongs to it",
            );
        }
    }

    /// Skips `// …` up to and including the newline (or to the end of the text).
    pub(super) fn skip_line_comment(&mut self) {
        let start = self.pos;
        self.pos += 2;
        let end = loop {
            while let Some(&byte) = self.bytes.get(self.pos) {
                if chars::is_comment_stop(byte) {
                    break;
                }
                self.pos += 1;
            }
            if self.at_eof() {
                break self.pos;
            }
            let newline = self.newline_len();
            if newline > 0 {
                let end = self.pos;
                self.pos += newline;
                break end;
            }
            let len = chars::disallowed_len(self.bytes, self.pos);
            if len > 0 {
                self.report_disallowed(self.pos, len);
                self.pos += len;
            } else {
                self.pos = self.char_end(self.pos);
            }
        };
        let span = self.span(start, end);
        self.comments.push(Comment {
            span,
            kind: CommentKind::Line,
        });
    }

    /// Skips a (possibly nested) `/* … */` at the cursor.
    pub(super) fn skip_block_comment(&mut self) {
        let start = self.pos;
        self.pos += 2;
        let mut depth = 1usize;
        while depth > 0 {
            let Some(&byte) = self.bytes.get(self.pos) else {
                let span = self.span(start, start + 2);
                self.error(
                    Code::SyntaxError,
                    span,
                    "block comment is never closed",
                    "this `/*` has no matching `*/`",
                    "close the comment with `*/` (block comments nest, so every `/*` inside \
                     needs its own `*/`)",
                );
                break;
            };
            match byte {
                b'*' if self.peek_at(1) == Some(b'/') => {
                    depth -= 1;
                    self.pos += 2;
                }
                b'/' if self.peek_at(1) == Some(b'*') => {
                    depth += 1;
                    self.pos += 2;
                }
                _ if chars::is_comment_stop(byte) => {
                    let len = chars::disallowed_len(self.bytes, self.pos);
                    if len > 0 {
                        self.report_disallowed(self.pos, len);
                        self.pos += len;
                    } else {
                        self.pos = self.char_end(self.pos);
                    }
                }
                _ => self.pos += 1,
            }
        }
        let span = self.span(start, self.pos);
        self.comments.push(Comment {
            span,
            kind: CommentKind::Block,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cursor(text: &str) -> Cursor<'_> {
        Cursor::new(text, SourceId(0))
    }

    #[test]
    fn node_space_takes_continuations_but_not_newlines() {
        let mut c = cursor(" \t/* a /* b */ */ \\ // c\n  x\ny");
        assert!(c.skip_node_space());
        assert_eq!(c.peek(), Some(b'x'));
        assert_eq!(c.comments.len(), 2);
        assert_eq!(c.comments[0].span, Span::new(SourceId(0), 2, 17));
        assert_eq!(c.comments[1].span, Span::new(SourceId(0), 20, 24));
        c.pos += 1;
        assert!(!c.skip_node_space());
        assert_eq!(c.newline_len(), 1);
        assert!(c.diagnostics.is_empty());
    }

    #[test]
    fn line_space_takes_newlines_and_line_comments() {
        let mut c = cursor("\r\n// x\r\n\u{2028}\u{85}\u{B}\u{C}\rnode");
        c.skip_line_space();
        assert_eq!(&c.text[c.pos..], "node");
        assert_eq!(c.comments[0].span, Span::new(SourceId(0), 2, 6));
    }

    #[test]
    fn unclosed_block_comment_is_reported() {
        let mut c = cursor("/* a /* b */");
        c.skip_ws();
        assert!(c.at_eof());
        assert_eq!(c.diagnostics.len(), 1);
        assert_eq!(c.diagnostics[0].code, Code::SyntaxError);
        assert_eq!(c.diagnostics[0].span, Span::new(SourceId(0), 0, 2));
    }

    #[test]
    fn disallowed_characters_are_reported_once_and_skipped() {
        let mut c = cursor("\u{7F} \u{200E}x");
        c.skip_ws();
        assert_eq!(c.peek(), Some(b'x'));
        let codes: Vec<_> = c
            .diagnostics
            .iter()
            .map(|d| (d.code, d.span.range()))
            .collect();
        assert_eq!(
            codes,
            [
                (Code::InvalidCharacter, 0..1),
                (Code::InvalidCharacter, 2..5)
            ]
        );
    }

    #[test]
    fn diagnostics_are_capped() {
        let text = "\u{1}".repeat(MAX_DIAGNOSTICS * 3);
        let mut c = cursor(&text);
        c.skip_ws();
        assert_eq!(c.diagnostics.len(), MAX_DIAGNOSTICS + 1);
        assert!(
            c.diagnostics[MAX_DIAGNOSTICS]
                .message
                .starts_with("too many syntax errors")
        );
    }

    #[test]
    fn bad_continuation_is_reported() {
        let mut c = cursor("\\ x");
        c.skip_node_space();
        assert_eq!(c.diagnostics.len(), 1);
        assert!(
            c.diagnostics[0].message.contains("found `x`"),
            "{}",
            c.diagnostics[0].message
        );
    }
}
