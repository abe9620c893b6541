//! The canonical layout of a KDL file, for `atomic fmt`.
//!
//! Input: the text of a file that parsed without diagnostics. Output: the same document
//! laid out canonically: one node per line, four spaces per level, children blocks opened
//! on the node's line, one space between entries, `key=value` without spaces, at most one
//! blank line between nodes (none at the start or end of a block), a newline at the end.
//!
//! What the user wrote is otherwise kept as written: every name, string and number is
//! copied from the source (a raw string stays raw, `0x10` stays hex, a quoted identifier
//! stays quoted), and so is every comment. `//` and `/* */` comments stay where they were:
//! on their own line, or at the end of the line they ended. A slashdashed node is laid out
//! like any other node; slashdashed entries and children blocks are copied, and so is a
//! type annotation or `key=` with a comment inside. A multi-line `"""` string is moved with
//! its node, which keeps its value, because the indentation of its closing line is what the
//! string's lines are measured against. Tabs that indent lines become spaces (a string's
//! own tabs, beyond its closing line's indentation, stay), and a file written with CRLF line
//! ends keeps them.
//!
//! The layout itself does not check that the result means the same thing: [`format`] does,
//! by parsing the result again and comparing canonical prints and comment kinds, and
//! refuses to return anything else.

use std::fmt;

use super::kdl::{self, Comment, CommentKind, Document, Entry, KdlParse, Node};
use crate::source::{SourceId, Span};

const INDENT: &str = "    ";

/// Why a file was not formatted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FormatError {
    /// The file has syntax errors; the caller reports the parser's diagnostics.
    Syntax,
    /// The layout would have changed the document or lost a comment: a bug in the
    /// formatter, never the user's, so the file is left alone.
    Changed,
}

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Syntax => f.write_str("the file has syntax errors"),
            Self::Changed => f.write_str(
                "formatting would change what the file means or drop a comment (a bug in \
                 `atomic fmt`); the file was left as it is",
            ),
        }
    }
}

/// Formats `text`, checking that the result parses to the same document with the same
/// comments.
///
/// # Errors
/// [`FormatError::Syntax`] if `text` does not parse cleanly, [`FormatError::Changed`] if
/// the layout would not round-trip.
pub fn format(text: &str) -> Result<String, FormatError> {
    // The layout works on `\n`; a file written with `\r\n` (judged by its first line end,
    // as rustfmt does) gets `\r\n` back. KDL reads either as one newline, in strings too.
    let crlf = text.find('\n').is_some_and(|at| text[..at].ends_with('\r'));
    let lf;
    let text = if text.contains('\r') {
        lf = text.replace("\r\n", "\n").replace('\r', "\n");
        lf.as_str()
    } else {
        text
    };
    let parsed = kdl::parse(text, SourceId(0));
    if !parsed.diagnostics.is_empty() {
        return Err(FormatError::Syntax);
    }
    let formatted = layout(text, &parsed);
    let again = kdl::parse(&formatted, SourceId(0));
    let kinds = |parse: &KdlParse| parse.comments.iter().map(|c| c.kind).collect::<Vec<_>>();
    if again.diagnostics.is_empty()
        && again.document.to_canonical() == parsed.document.to_canonical()
        && kinds(&again) == kinds(&parsed)
    {
        Ok(if crlf {
            formatted.replace('\n', "\r\n")
        } else {
            formatted
        })
    } else {
        Err(FormatError::Changed)
    }
}

/// Lays out a cleanly parsed file (no round-trip check).
fn layout(text: &str, parsed: &KdlParse) -> String {
    let mut printer = Printer::new(text, &parsed.comments);
    printer.nodes(&parsed.document.nodes, 0, text.len());
    printer.finish()
}

/// Writes nodes and comments in source order. `pos` is how far the source has been
/// consumed; comments before it (inside something already copied) are skipped.
struct Printer<'a> {
    text: &'a str,
    comments: &'a [Comment],
    next_comment: usize,
    out: String,
    pos: usize,
    /// The current output line has content and no newline yet.
    line_open: bool,
    /// Nothing was written since the start of the file or of a block: no blank line here.
    block_start: bool,
}

impl<'a> Printer<'a> {
    fn new(text: &'a str, comments: &'a [Comment]) -> Self {
        Self {
            text,
            comments,
            next_comment: 0,
            out: String::new(),
            pos: 0,
            line_open: false,
            block_start: true,
        }
    }

    fn finish(mut self) -> String {
        self.close_line();
        self.out
    }

    /// The nodes of a document or block, and the comments among them up to `end` (the
    /// block's `}` or the end of the text).
    fn nodes(&mut self, nodes: &[Node], depth: usize, end: usize) {
        for node in nodes {
            self.comments_before(start(node.span), depth);
            self.start_line(start(node.span), depth);
            self.node(node, depth);
        }
        self.comments_before(end, depth);
    }

    fn node(&mut self, node: &Node, depth: usize) {
        if node.ty.is_some() && self.has_comment_in(start(node.span), start(node.name.span)) {
            // `(/* … */ type)/* … */name`: rare enough to copy as written.
            self.out
                .push_str(self.slice(start(node.span), start(node.name.span)));
        } else if let Some(ty) = &node.ty {
            self.out.push('(');
            self.out.push_str(self.slice(start(ty.span), end(ty.span)));
            self.out.push(')');
        }
        self.out
            .push_str(self.slice(start(node.name.span), end(node.name.span)));
        self.pos = end(node.name.span);
        self.line_open = true;
        self.block_start = false;
        let header_end = node
            .children
            .as_ref()
            .map_or(end(node.span), |children| start(children.span));
        for entry in &node.entries {
            self.inline_comments_before(start(entry.span), depth);
            self.out.push(' ');
            self.entry(entry, start(node.span), depth);
            self.pos = end(entry.span);
        }
        self.inline_comments_before(header_end, depth);
        if let Some(children) = &node.children {
            self.children(children, depth);
        }
        self.pos = self.pos.max(end(node.span));
    }

    fn children(&mut self, children: &Document, depth: usize) {
        let open = start(children.span);
        let close = end(children.span).saturating_sub(1);
        let has_comments = self
            .peek_comment()
            .is_some_and(|comment| start(comment.span) < close);
        if children.nodes.is_empty() && !has_comments {
            self.out.push_str(" {}");
            self.pos = end(children.span);
            return;
        }
        self.out.push_str(" {");
        self.pos = open + 1;
        self.block_start = true;
        self.nodes(&children.nodes, depth + 1, close);
        self.close_line();
        self.indent(depth);
        self.out.push('}');
        self.pos = end(children.span);
        self.line_open = true;
        self.block_start = false;
    }

    /// An entry of the node starting at `node_start`.
    fn entry(&mut self, entry: &Entry, node_start: usize, depth: usize) {
        let value_start = start(entry.value_span);
        if self.has_comment_in(start(entry.span), value_start) {
            // `key=/* … */(/* … */type)value`: rare enough to copy as written.
            self.out
                .push_str(self.slice(start(entry.span), value_start));
        } else {
            if let Some(key) = &entry.key {
                self.out
                    .push_str(self.slice(start(key.span), end(key.span)));
                self.out.push('=');
            }
            if let Some(ty) = &entry.ty {
                self.out.push('(');
                self.out.push_str(self.slice(start(ty.span), end(ty.span)));
                self.out.push(')');
            }
        }
        let value = self.slice(start(entry.value_span), end(entry.value_span));
        if is_multiline_string(value) {
            // Measured from the node's line, where the entry will be.
            let old = self.line_indent(node_start);
            self.out
                .push_str(&reindent(value, old, depth * INDENT.len()));
        } else {
            self.out.push_str(value);
        }
    }

    /// Comments between nodes: each on its own line, or at the end of the line they
    /// ended in the source.
    fn comments_before(&mut self, until: usize, depth: usize) {
        while let Some(comment) = self.take_comment_before(until) {
            let gap = self.slice(self.pos, start(comment.span));
            // A slashdashed node after `;` on the same line is a node of its own; any
            // other slashdash there comments out part of the node before it.
            let trailing = self.line_open
                && !gap.contains('\n')
                && !(comment.kind == CommentKind::Slashdash && gap.contains(';'));
            if trailing {
                self.out.push(' ');
                self.comment(&comment, depth);
            } else {
                self.start_line(start(comment.span), depth);
                self.comment(&comment, depth);
            }
        }
    }

    /// Comments inside a node's line: between its entries, or before its children.
    fn inline_comments_before(&mut self, until: usize, depth: usize) {
        while let Some(comment) = self.take_comment_before(until) {
            if comment.kind == CommentKind::Line {
                // Only possible after a `\` line continuation: keep it one. The next entry
                // adds its own leading space.
                self.out.push_str(" \\ ");
                self.out
                    .push_str(self.slice(start(comment.span), end(comment.span)));
                self.out.push('\n');
                self.indent(depth + 1);
                self.out.pop();
                self.pos = end(comment.span);
            } else {
                self.out.push(' ');
                self.comment(&comment, depth);
            }
        }
    }

    /// Writes a comment at the current position and consumes its source.
    fn comment(&mut self, comment: &Comment, depth: usize) {
        let text = self.slice(start(comment.span), end(comment.span));
        match comment.kind {
            CommentKind::Slashdash => self.slashdash(comment, text, depth),
            CommentKind::Line | CommentKind::Block => self.out.push_str(text),
        }
        self.pos = end(comment.span);
        self.line_open = true;
        if comment.kind == CommentKind::Line {
            self.close_line();
        }
        self.block_start = false;
    }

    /// A slashdashed node is laid out like a node; a slashdashed entry or children block
    /// is copied.
    fn slashdash(&mut self, comment: &Comment, text: &str, depth: usize) {
        let body = text[2..].trim_start();
        let body_start = end(comment.span) - body.len();
        if let Some(formatted) = self.format_commented_node(body_start, end(comment.span), depth) {
            self.out.push_str("/-");
            self.out.push_str(&formatted);
        } else {
            self.out.push_str(text);
        }
    }

    /// Lays out the node in `from..to` (the text after a `/-`) at `depth`, or `None`
    /// if that text is not exactly one node (an entry or a children block).
    fn format_commented_node(&self, from: usize, to: usize, depth: usize) -> Option<String> {
        // Blank out everything else, so spans stay offsets into the original text.
        let masked: String = self
            .text
            .char_indices()
            .map(|(at, ch)| {
                if (from..to).contains(&at) || ch == '\n' || ch == '\r' {
                    ch.to_string()
                } else {
                    " ".repeat(ch.len_utf8())
                }
            })
            .collect();
        let parsed = kdl::parse(&masked, SourceId(0));
        let [node] = parsed.document.nodes.as_slice() else {
            return None;
        };
        if !parsed.diagnostics.is_empty() || start(node.span) != from {
            return None;
        }
        let mut inner = Printer::new(self.text, &parsed.comments);
        inner.pos = from;
        inner.line_open = true;
        inner.block_start = false;
        inner.node(node, depth);
        inner.comments_before(to, depth);
        Some(inner.out)
    }

    /// Whether a comment not yet written starts in `from..to`.
    fn has_comment_in(&self, from: usize, to: usize) -> bool {
        self.comments[self.next_comment..]
            .iter()
            .take_while(|comment| start(comment.span) < to)
            .any(|comment| start(comment.span) >= from)
    }

    fn peek_comment(&self) -> Option<&Comment> {
        self.comments[self.next_comment..]
            .iter()
            .find(|comment| start(comment.span) >= self.pos)
    }

    /// The next comment starting before `until` that was not inside something copied.
    fn take_comment_before(&mut self, until: usize) -> Option<Comment> {
        while let Some(comment) = self.comments.get(self.next_comment) {
            if start(comment.span) >= until {
                return None;
            }
            self.next_comment += 1;
            if start(comment.span) >= self.pos {
                return Some(comment.clone());
            }
        }
        None
    }

    /// Ends the current line if it has content, keeps one blank line where the source had
    /// at least one, and indents for the item at `at`.
    fn start_line(&mut self, at: usize, depth: usize) {
        self.close_line();
        let gap = self.slice(self.pos.min(at), at);
        if !self.block_start && gap.matches('\n').count() >= 2 && !self.out.is_empty() {
            self.out.push('\n');
        }
        self.indent(depth);
        self.block_start = false;
    }

    fn close_line(&mut self) {
        if self.line_open {
            self.out.push('\n');
            self.line_open = false;
        }
    }

    fn indent(&mut self, depth: usize) {
        for _ in 0..depth {
            self.out.push_str(INDENT);
        }
    }

    fn slice(&self, start: usize, end: usize) -> &'a str {
        &self.text[start..end]
    }

    /// The leading spaces and tabs of the line containing `at`.
    fn line_indent(&self, at: usize) -> &'a str {
        let line_start = self.text[..at].rfind('\n').map_or(0, |i| i + 1);
        let line = &self.text[line_start..];
        &line[..line.len() - line.trim_start_matches([' ', '\t']).len()]
    }
}

fn start(span: Span) -> usize {
    span.range().start
}

fn end(span: Span) -> usize {
    span.range().end
}

/// `"""…"""` or `#"""…"""#` (any number of `#`).
fn is_multiline_string(value: &str) -> bool {
    value.trim_start_matches('#').starts_with("\"\"\"")
}

/// Moves the lines after the first of a multi-line string from under a node line indented
/// by `node_indent` to one indented by `new` spaces.
///
/// KDL measures a multi-line string's lines against the whitespace before its closing
/// `"""`, so that prefix can be replaced on every line without changing the value: it
/// becomes the node's new indentation plus what the closing line had beyond the node's (tabs
/// expanded to four spaces), and tabs or spaces after it, which are the string's own, stay.
/// Whitespace-only lines are empty in the value and are printed empty. A string whose lines
/// do not all start with the closing prefix is not valid KDL and never reaches here; should
/// one, it is copied as written.
fn reindent(value: &str, node_indent: &str, new: usize) -> String {
    let mut lines: Vec<&str> = value.split('\n').collect();
    let (Some(first), Some(closing)) = (lines.first().copied(), lines.pop()) else {
        return value.to_owned();
    };
    let closing_indent = &closing[..closing.len() - closing.trim_start_matches([' ', '\t']).len()];
    let blank = |line: &str| line.trim_matches([' ', '\t']).is_empty();
    if !lines[1..]
        .iter()
        .all(|line| blank(line) || line.starts_with(closing_indent))
    {
        return value.to_owned();
    }
    let beyond = closing_indent
        .strip_prefix(node_indent)
        .unwrap_or_default()
        .replace('\t', INDENT);
    let indent = format!("{}{beyond}", " ".repeat(new));
    let mut out = String::with_capacity(value.len());
    out.push_str(first);
    for line in &lines[1..] {
        out.push('\n');
        if !blank(line) {
            out.push_str(&indent);
            out.push_str(&line[closing_indent.len()..]);
        }
    }
    out.push('\n');
    out.push_str(&indent);
    out.push_str(&closing[closing_indent.len()..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fmt(text: &str) -> String {
        format(text).unwrap_or_else(|error| panic!("{text:?}: {error}"))
    }

    #[test]
    fn lays_out_nodes_one_per_line() {
        assert_eq!(
            fmt("a 1;b   key = 2 {c;d\n}\n\n\n\ne"),
            "a 1\nb key=2 {\n    c\n    d\n}\n\ne\n"
        );
        assert_eq!(fmt("n {}"), "n {}\n");
        assert_eq!(fmt(""), "");
    }

    #[test]
    fn keeps_values_as_written() {
        let text = "n 0x10 1_000 1e10 #\"raw \"s\"\"# \"quoted\" bare (ty)#true key=(t)\"v\"\n";
        assert_eq!(fmt(text), text);
    }

    #[test]
    fn keeps_comments_in_place() {
        let text =
            "// top\na /* in */ 1 /-2 /-{ x } // end\n/* own */\n/- b {\n  c\n}\nd; // after d\n";
        assert_eq!(
            fmt(text),
            "// top\na /* in */ 1 /-2 /-{ x } // end\n/* own */\n/-b {\n    c\n}\nd // after d\n"
        );
    }

    #[test]
    fn slashdashed_node_after_semicolon_gets_its_own_line() {
        assert_eq!(fmt("a; /-b { c }"), "a\n/-b {\n    c\n}\n");
    }

    #[test]
    fn moves_multiline_strings_with_their_node() {
        let text = "a {\n b {\n  p \"\"\"\n    x\n\n      y\n    \"\"\"\n }\n}\n";
        assert_eq!(
            fmt(text),
            "a {\n    b {\n        p \"\"\"\n          x\n\n            y\n          \"\"\"\n    }\n}\n"
        );
    }

    #[test]
    fn a_line_comment_after_a_continuation_stays_one() {
        assert_eq!(fmt("a 1 \\ // c\n  2\n"), "a 1 \\ // c\n    2\n");
    }

    #[test]
    fn formatting_is_idempotent() {
        for text in [
            "a 1;b   key = 2 {c;d\n}\n\n\n\ne",
            "// top\na /* in */ 1 /-2 /-{ x } // end\n/* own */\n/- b {\n  c\n}\nd; // after d\n",
            "a {\n b {\n  p \"\"\"\n    x\n    \"\"\"\n }\n}\n",
        ] {
            let once = fmt(text);
            assert_eq!(fmt(&once), once, "{text:?}");
        }
    }

    #[test]
    fn copies_type_annotations_holding_comments() {
        assert_eq!(fmt("( /* c */ t )n"), "( /* c */ t )n\n");
        assert_eq!(
            fmt("(t)/* c */n k=/* c */(u)1"),
            "(t)/* c */n k=/* c */(u)1\n"
        );
        assert_eq!(fmt("( t )n k = ( u )1"), "(t)n k=(u)1\n");
    }

    #[test]
    fn keeps_crlf_line_ends_everywhere() {
        let text = "a {\r\n\tp \"\"\"\r\n\t\tx\r\n\t\t\"\"\"\r\n}\r\n";
        assert_eq!(
            fmt(text),
            "a {\r\n    p \"\"\"\r\n        x\r\n        \"\"\"\r\n}\r\n"
        );
        assert_eq!(fmt("a\nb\r\n"), "a\nb\n", "the first line end decides");
        assert_eq!(fmt("a\rb\r"), "a\nb\n", "a lone CR is a newline");
    }

    #[test]
    fn tab_indentation_becomes_spaces_and_string_tabs_stay() {
        let text = "a {\n\tb {\n\t\tp \"\"\"\n\t\t\tx\n\t\t\t\ty\n\t\t \n\t\t\t\"\"\"\n\t}\n}\n";
        assert_eq!(
            fmt(text),
            "a {\n    b {\n        p \"\"\"\n            x\n            \ty\n\n            \"\"\"\n    }\n}\n"
        );
        let once = fmt(text);
        assert_eq!(fmt(&once), once);
    }

    #[test]
    fn a_closing_line_left_of_its_node_moves_to_the_node() {
        let text = "a {\n    p \"\"\"\n  x\n  \"\"\"\n}\n";
        assert_eq!(fmt(text), "a {\n    p \"\"\"\n    x\n    \"\"\"\n}\n");
    }

    #[test]
    fn refuses_syntax_errors() {
        assert_eq!(format("a {"), Err(FormatError::Syntax));
    }
}
