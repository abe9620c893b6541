//! The KDL v2 grammar above the token level: documents, nodes, entries, children blocks
//! and slashdash comments, with error recovery.
//!
//! Input: a `&str`. Output: a [`KdlParse`] — always a [`Document`] (partial after errors),
//! every comment, and every problem as a [`Diagnostic`]. It does not interpret the tree.
//!
//! Recovery: a token that is invalid but well delimited (a bad number, a bad escape) costs
//! one diagnostic and the node goes on. When the structure itself is broken, the rest of
//! the node up to the next newline, `;`, `{` or `}` is skipped (strings inside are skipped
//! whole), and a `{` found there still opens the node's children. An unclosed `{` keeps the
//! children read so far; a stray `}` is reported and skipped.

use crate::diagnostic::{Code, Diagnostic};
use crate::source::SourceId;

use super::atom::{
    AtomKind, Broken, Scanned, describe_atom, into_ident, parse_type, scan_atom, truncate,
};
use super::cursor::Cursor;
use super::ident::{TokenStart, token_start};
use super::string;
use super::tree::{Comment, CommentKind, CompactString, Document, Entry, Ident, Node};

/// How deeply children blocks may nest. Deeper blocks are reported and skipped, so that
/// hostile input cannot overflow the stack.
pub const MAX_DEPTH: usize = 128;

/// Everything parsing one file produced.
#[derive(Debug, Clone, PartialEq)]
pub struct KdlParse {
    /// The document; partial if there were errors.
    pub document: Document,
    /// Every comment, in source order (slashdashed nodes, entries and blocks included).
    pub comments: Vec<Comment>,
    /// Every problem, in source order.
    pub diagnostics: Vec<Diagnostic>,
}

/// Parses a KDL v2 document. Never panics; always returns a document.
#[must_use]
pub fn parse(text: &str, source: SourceId) -> KdlParse {
    let mut cursor = Cursor::new(text, source);
    if text.starts_with('\u{FEFF}') {
        cursor.pos = '\u{FEFF}'.len_utf8();
    }
    let nodes = parse_nodes(&mut cursor, 0, false);
    let document = Document {
        nodes,
        span: cursor.span(0, text.len()),
    };
    let Cursor {
        mut diagnostics,
        mut comments,
        ..
    } = cursor;
    diagnostics.sort_by_key(|diagnostic| diagnostic.span.start);
    comments.sort_by_key(|comment| comment.span.start);
    KdlParse {
        document,
        comments,
        diagnostics,
    }
}

/// Parses nodes until the end of the text or, inside a block, a `}` (not consumed).
fn parse_nodes(cursor: &mut Cursor<'_>, depth: usize, in_block: bool) -> Vec<Node> {
    let base = cursor.node_stack.len();
    loop {
        cursor.skip_line_space();
        match cursor.peek() {
            None => break,
            Some(b'}') if in_block => break,
            Some(b'}') => {
                let span = cursor.char_span(cursor.pos);
                let mut diagnostic = Diagnostic::new(Code::UnmatchedBrace, span, "unmatched `}`")
                    .label("no `{` opens this");
                diagnostic = match cursor.misindented_close {
                    Some((close, open)) => {
                        let line = 1 + cursor.bytes[..close]
                            .iter()
                            .filter(|&&b| b == b'\n')
                            .count();
                        diagnostic
                            .with_label(
                                cursor.char_span(close),
                                "this `}` is indented unlike the line that opened its block",
                            )
                            .with_label(cursor.char_span(open), "the block it closes")
                            .help(format!(
                                "an earlier `}}` closed a block too soon, so what follows it ended up \
                                 outside: the one on line {line} looks extra; delete it (or delete \
                                 this one, or add the `{{` it was meant to close)"
                            ))
                    }
                    None => diagnostic.help("delete it, or add the `{` it was meant to close"),
                };
                cursor.report(diagnostic);
                cursor.pos += 1;
            }
            Some(b';') => {
                let span = cursor.char_span(cursor.pos);
                cursor.error(
                    Code::SyntaxError,
                    span,
                    "expected a node, found `;`",
                    "nothing to terminate",
                    "a `;` ends a node; delete this one",
                );
                cursor.pos += 1;
            }
            Some(b'/') if cursor.peek_at(1) == Some(b'-') => {
                let start = cursor.pos;
                cursor.pos += 2;
                cursor.skip_line_space();
                if cursor.at_terminator() || cursor.at(b"/-") {
                    let found = cursor.describe(cursor.pos);
                    let span = cursor.span(start, start + 2);
                    cursor.error(
                        Code::SyntaxError,
                        span,
                        format!("expected a node after `/-`, found {found}"),
                        "comments out nothing",
                        "`/-` comments out the node that follows it; put a node after it or \
                         delete it",
                    );
                    continue;
                }
                let kept = cursor.node_stack.len();
                let end = parse_node(cursor, depth);
                cursor.node_stack.truncate(kept);
                let span = cursor.span(start, end);
                cursor.comments.push(Comment {
                    span,
                    kind: CommentKind::Slashdash,
                });
            }
            Some(_) => {
                parse_node(cursor, depth);
            }
        }
    }
    cursor.node_stack.split_off(base)
}

/// Parses one node at the cursor (which is on its first character) through its
/// terminator (a `}` ending it is left for the caller), and pushes it on the node stack
/// unless it had no usable name. Returns the end of its text, slashdashed parts included.
fn parse_node(cursor: &mut Cursor<'_>, depth: usize) -> usize {
    let start = cursor.pos;
    let mut ty = None;
    if cursor.peek() == Some(b'(') {
        match parse_type(cursor) {
            Ok(parsed) => ty = parsed,
            Err(Broken) => skip_junk(cursor),
        }
        cursor.skip_node_space();
    }
    let name = parse_name(cursor);
    let mut end = cursor.pos;
    let mut end_any = cursor.pos;
    let entries_base = cursor.entry_stack.len();
    let mut children: Option<Document> = None;
    let mut seen_children = false;
    loop {
        let spaced = cursor.skip_node_space();
        let Some(byte) = cursor.peek() else { break };
        let newline = cursor.newline_len();
        if newline > 0 {
            cursor.pos += newline;
            break;
        }
        match byte {
            b';' => {
                cursor.pos += 1;
                break;
            }
            b'}' => break,
            b'/' if cursor.peek_at(1) == Some(b'/') => {
                cursor.skip_line_comment();
                break;
            }
            b'{' => {
                let block = parse_children(cursor, depth + 1);
                end_any = cursor.pos;
                if children.is_some() {
                    cursor.error(
                        Code::SyntaxError,
                        block.span,
                        "a node can have only one children block",
                        "second children block",
                        "merge the blocks into one, or comment one out with `/-`",
                    );
                } else {
                    end = cursor.pos;
                    children = Some(block);
                }
                seen_children = true;
            }
            b'/' if cursor.peek_at(1) == Some(b'-') => {
                // `}/-{` is accepted like the reference parser does (the current spec
                // draft allows it); before an entry the space is required.
                if !spaced && !seen_children {
                    missing_space(cursor);
                }
                let slashdash = cursor.pos;
                cursor.pos += 2;
                cursor.skip_line_space();
                if cursor.peek() == Some(b'{') {
                    parse_children(cursor, depth + 1);
                    seen_children = true;
                } else if cursor.peek() == Some(b'(')
                    || token_start(cursor.bytes, cursor.pos) != TokenStart::Other
                {
                    if seen_children {
                        entry_after_children(cursor, children.is_some());
                    }
                    let kept = cursor.entry_stack.len();
                    let parsed = parse_entry(cursor);
                    cursor.entry_stack.truncate(kept);
                    if parsed.is_err() {
                        skip_junk(cursor);
                    }
                } else {
                    let found = cursor.describe(cursor.pos);
                    let span = cursor.span(slashdash, slashdash + 2);
                    cursor.error(
                        Code::SyntaxError,
                        span,
                        format!("expected an entry or a children block after `/-`, found {found}"),
                        "comments out nothing",
                        "`/-` comments out the argument, property or children block that \
                         follows it; put one after it or delete it",
                    );
                    skip_junk(cursor);
                }
                end_any = cursor.pos;
                let span = cursor.span(slashdash, cursor.pos);
                cursor.comments.push(Comment {
                    span,
                    kind: CommentKind::Slashdash,
                });
            }
            _ => {
                if children.is_some() {
                    let found = cursor.describe(cursor.pos);
                    let span = cursor.char_span(cursor.pos);
                    cursor.error(
                        Code::SyntaxError,
                        span,
                        format!(
                            "expected `;` or a newline after the children block, found {found}"
                        ),
                        "unexpected after `}`",
                        "a node ends after its children block; start the next node on a new line \
                         or after a `;`",
                    );
                    skip_junk(cursor);
                    continue;
                }
                let starts_entry =
                    byte == b'(' || token_start(cursor.bytes, cursor.pos) != TokenStart::Other;
                if seen_children {
                    entry_after_children(cursor, false);
                } else if !spaced && starts_entry {
                    missing_space(cursor);
                }
                let kept = cursor.entry_stack.len();
                match parse_entry(cursor) {
                    Ok(()) if cursor.entry_stack.len() > kept => {
                        end = cursor.pos;
                    }
                    Ok(()) => {}
                    Err(Broken) => skip_junk(cursor),
                }
                end_any = cursor.pos;
            }
        }
    }
    let entries = cursor.entry_stack.split_off(entries_base);
    if let Some(name) = name {
        let span = cursor.span(start, end.max(start));
        cursor.node_stack.push(Node {
            ty,
            name,
            entries,
            children,
            span,
        });
    }
    end_any.max(end)
}

/// Parses a node name (any string). Reports anything else; a number or keyword still names
/// the node (by its text) so the rest of the node is kept.
fn parse_name(cursor: &mut Cursor<'_>) -> Option<Ident> {
    match scan_atom(cursor) {
        Scanned::Atom(atom) if atom.kind == AtomKind::String => Some(into_ident(cursor, atom)),
        Scanned::Atom(atom) => {
            let found = describe_atom(cursor, &atom);
            let text = truncate(&cursor.text[atom.start..atom.end]);
            let span = cursor.span(atom.start, atom.end);
            cursor.error(
                Code::SyntaxError,
                span,
                format!("expected a node name, found {found}"),
                "not a string",
                format!("a node name is a string; quote it: `\"{text}\"`"),
            );
            Some(into_ident(cursor, atom))
        }
        Scanned::Invalid { start, end } => Some(Ident {
            value: CompactString::new(&cursor.text[start..end]),
            span: cursor.span(start, end),
        }),
        Scanned::Nothing => {
            let found = cursor.describe(cursor.pos);
            let span = cursor.char_span(cursor.pos);
            let help = if cursor.peek() == Some(b'{') {
                "a children block belongs to a node: write a name before it, like `node { … }`"
            } else {
                "a node starts with its name: an identifier like `node`, or a quoted string"
            };
            cursor.error(
                Code::SyntaxError,
                span,
                format!("expected a node name, found {found}"),
                "expected a node name",
                help,
            );
            if cursor.peek() != Some(b'{') {
                skip_junk(cursor);
            }
            None
        }
    }
}

/// Parses an argument or property at the cursor and pushes it on the entry stack. If it
/// was invalid it is consumed and reported but not pushed; `Err(Broken)`: the caller must
/// skip the rest of the node.
fn parse_entry(cursor: &mut Cursor<'_>) -> Result<(), Broken> {
    let start = cursor.pos;
    if cursor.peek() == Some(b'(') {
        let ty = parse_type(cursor)?;
        cursor.skip_node_space();
        let Some(atom) = expect_value(cursor, "the type annotation")? else {
            return Ok(());
        };
        if property_follows(cursor) {
            let span = cursor.span(start, atom.end);
            cursor.error(
                Code::SyntaxError,
                span,
                "a type annotation cannot be put on a property key",
                "annotated key",
                "annotate the value instead: `key=(type)value`",
            );
            cursor.pos += 1;
            cursor.skip_node_space();
            skip_value(cursor)?;
            return Ok(());
        }
        let value_span = cursor.span(atom.start, atom.end);
        let span = cursor.span(start, atom.end);
        cursor.entry_stack.push(Entry {
            key: None,
            ty,
            value: atom.value,
            value_span,
            span,
        });
        return Ok(());
    }
    let atom = match scan_atom(cursor) {
        Scanned::Atom(atom) => atom,
        Scanned::Invalid { .. } => {
            if property_follows(cursor) {
                cursor.pos += 1;
                cursor.skip_node_space();
                skip_value(cursor)?;
            }
            return Ok(());
        }
        Scanned::Nothing => {
            let found = cursor.describe(cursor.pos);
            let span = cursor.char_span(cursor.pos);
            cursor.error(
                Code::SyntaxError,
                span,
                format!("expected an argument, a property or a children block, found {found}"),
                "unexpected here",
                "entries are values like `1` or `\"text\"`, or properties like `key=value`",
            );
            return Err(Broken);
        }
    };
    if !property_follows(cursor) {
        let span = cursor.span(atom.start, atom.end);
        cursor.entry_stack.push(Entry {
            key: None,
            ty: None,
            value: atom.value,
            value_span: span,
            span,
        });
        return Ok(());
    }
    let key_is_string = atom.kind == AtomKind::String;
    if !key_is_string {
        let found = describe_atom(cursor, &atom);
        let text = truncate(&cursor.text[atom.start..atom.end]);
        let span = cursor.span(atom.start, atom.end);
        cursor.error(
            Code::SyntaxError,
            span,
            format!("a property key must be a string, found {found}"),
            "not a string",
            format!("quote it: `\"{text}\"=…`"),
        );
    }
    let key = into_ident(cursor, atom);
    cursor.pos += 1;
    cursor.skip_node_space();
    let value_start = cursor.pos;
    let ty = if cursor.peek() == Some(b'(') {
        let ty = parse_type(cursor)?;
        cursor.skip_node_space();
        ty
    } else {
        None
    };
    let had_type = cursor.pos > value_start;
    let context = if had_type {
        "the type annotation"
    } else {
        "`=`"
    };
    let Some(value) = expect_value(cursor, context)? else {
        return Ok(());
    };
    if !key_is_string {
        return Ok(());
    }
    cursor.entry_stack.push(Entry {
        span: cursor.span(start, value.end),
        value_span: cursor.span(value.start, value.end),
        key: Some(key),
        ty,
        value: value.value,
    });
    Ok(())
}

/// Scans the value expected after `context` (`=` or a type annotation).
fn expect_value(
    cursor: &mut Cursor<'_>,
    context: &str,
) -> Result<Option<super::atom::Atom>, Broken> {
    match scan_atom(cursor) {
        Scanned::Atom(atom) => Ok(Some(atom)),
        Scanned::Invalid { .. } => Ok(None),
        Scanned::Nothing => {
            let found = cursor.describe(cursor.pos);
            let span = cursor.char_span(cursor.pos);
            cursor.error(
                Code::SyntaxError,
                span,
                format!("expected a value after {context}, found {found}"),
                "expected a value",
                "write a value here, like `\"text\"`, `1` or `#true`",
            );
            Err(Broken)
        }
    }
}

/// Skips a property value (with optional type) after an already reported problem.
fn skip_value(cursor: &mut Cursor<'_>) -> Result<(), Broken> {
    if cursor.peek() == Some(b'(') {
        parse_type(cursor)?;
        cursor.skip_node_space();
    }
    expect_value(cursor, "`=`").map(|_| ())
}

/// Whether `node-space* =` follows; if so the cursor is left on the `=`, otherwise it is
/// restored (with any comments or diagnostics found while looking ahead).
fn property_follows(cursor: &mut Cursor<'_>) -> bool {
    let (pos, comments, diagnostics) =
        (cursor.pos, cursor.comments.len(), cursor.diagnostics.len());
    cursor.skip_node_space();
    if cursor.peek() == Some(b'=') {
        return true;
    }
    cursor.pos = pos;
    cursor.comments.truncate(comments);
    cursor.diagnostics.truncate(diagnostics);
    false
}

/// Parses a children block at the cursor (on `{`) through its `}`.
fn parse_children(cursor: &mut Cursor<'_>, depth: usize) -> Document {
    let open = cursor.pos;
    cursor.pos += 1;
    if depth > MAX_DEPTH {
        let span = cursor.span(open, open + 1);
        cursor.error(
            Code::NestingTooDeep,
            span,
            format!("children blocks are nested more than {MAX_DEPTH} deep"),
            "too deep",
            "flatten the document; its contents were skipped",
        );
        skip_block(cursor);
        return Document {
            nodes: Vec::new(),
            span: cursor.span(open, cursor.pos),
        };
    }
    let nodes = parse_nodes(cursor, depth, true);
    if cursor.peek() == Some(b'}') {
        if cursor.misindented_close.is_none() {
            note_misindented_close(cursor, open);
        }
        cursor.pos += 1;
    } else {
        let span = cursor.span(open, open + 1);
        cursor.error(
            Code::UnclosedBlock,
            span,
            "`{` is never closed",
            "this block",
            "add a `}` to close the children block",
        );
    }
    Document {
        nodes,
        span: cursor.span(open, cursor.pos),
    }
}

/// Remembers the `}` at the cursor if it starts its own line, indented differently from
/// the line of the `{` at `open` (formatters put them level; a stray `}` rarely is).
fn note_misindented_close(cursor: &mut Cursor<'_>, open: usize) {
    let close = cursor.pos;
    let (close_indent, leads) = cursor.indentation(close);
    if !leads || !cursor.bytes[open..close].contains(&b'\n') {
        return;
    }
    if close_indent != cursor.indentation(open).0 {
        cursor.misindented_close = Some((close, open));
    }
}

/// Skips the rest of a block without parsing it (after the `{`), through its `}`.
fn skip_block(cursor: &mut Cursor<'_>) {
    let mut level = 1usize;
    while level > 0 {
        match cursor.peek() {
            None => break,
            Some(b'{') => {
                level += 1;
                cursor.pos += 1;
            }
            Some(b'}') => {
                level -= 1;
                cursor.pos += 1;
            }
            Some(b'/') if cursor.peek_at(1) == Some(b'/') => cursor.skip_line_comment(),
            _ => {
                if !skip_string_silently(cursor) {
                    cursor.pos = cursor.char_end(cursor.pos);
                }
            }
        }
    }
}

/// Skips what is left of a broken node: up to (not including) the next newline, `;`, `{`,
/// `}`, line comment or the end of the text. Strings and block comments are skipped whole.
fn skip_junk(cursor: &mut Cursor<'_>) {
    loop {
        match cursor.peek() {
            None | Some(b';' | b'{' | b'}') => return,
            Some(b'/') if cursor.peek_at(1) == Some(b'/') => return,
            Some(b'/') if cursor.peek_at(1) == Some(b'*') => cursor.skip_block_comment(),
            _ => {
                if cursor.newline_len() > 0 {
                    return;
                }
                if !skip_string_silently(cursor) {
                    cursor.pos = cursor.char_end(cursor.pos);
                }
            }
        }
    }
}

/// Skips a quoted or raw string at the cursor without reporting anything in it. Returns
/// whether there was one.
fn skip_string_silently(cursor: &mut Cursor<'_>) -> bool {
    let kind = token_start(cursor.bytes, cursor.pos);
    if !matches!(kind, TokenStart::Quoted | TokenStart::Raw) {
        return false;
    }
    let (diagnostics, comments) = (cursor.diagnostics.len(), cursor.comments.len());
    if kind == TokenStart::Quoted {
        string::quoted(cursor);
    } else {
        string::raw(cursor);
    }
    cursor.diagnostics.truncate(diagnostics);
    cursor.comments.truncate(comments);
    true
}

/// Reports an entry written without whitespace before it.
fn missing_space(cursor: &mut Cursor<'_>) {
    let found = cursor.describe(cursor.pos);
    let span = cursor.char_span(cursor.pos);
    cursor.error(
        Code::SyntaxError,
        span,
        format!("expected whitespace before {found}"),
        "needs a space before it",
        "separate a node's name and entries with spaces",
    );
}

/// Reports an entry after a children block.
fn entry_after_children(cursor: &mut Cursor<'_>, real: bool) {
    let span = cursor.char_span(cursor.pos);
    let message = if real {
        "an entry cannot follow the children block"
    } else {
        "an entry cannot follow a children block, even a slashdashed one"
    };
    cursor.error(
        Code::SyntaxError,
        span,
        message,
        "entry after children",
        "move arguments and properties before the `{`",
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::Span;

    use super::super::tree::Value;

    fn span(start: usize, end: usize) -> Span {
        Span::new(SourceId(0), start, end)
    }

    fn parse0(text: &str) -> KdlParse {
        parse(text, SourceId(0))
    }

    /// Each diagnostic as `(code, covered text, message)`.
    fn problems(text: &str) -> Vec<(Code, &str, String)> {
        parse0(text)
            .diagnostics
            .into_iter()
            .map(|d| (d.code, &text[d.span.range()], d.message))
            .collect()
    }

    fn names(doc: &Document) -> Vec<&str> {
        doc.nodes
            .iter()
            .map(|node| node.name.value.as_str())
            .collect()
    }

    #[test]
    fn spans_are_byte_exact() {
        let text = "(t)node \"arg\" key = (ty)1 /-x { child; }\n";
        let parsed = parse0(text);
        assert!(parsed.diagnostics.is_empty(), "{:?}", parsed.diagnostics);
        let node = &parsed.document.nodes[0];
        assert_eq!(node.span, span(0, 40));
        assert_eq!(node.ty.as_ref().map(|ty| ty.span), Some(span(1, 2)));
        assert_eq!(node.name.span, span(3, 7));
        let [arg, prop] = &node.entries[..] else {
            panic!("two entries")
        };
        assert_eq!((arg.span, arg.value_span), (span(8, 13), span(8, 13)));
        assert_eq!(arg.value, Value::String("arg".into()));
        assert_eq!(prop.key.as_ref().map(|key| key.span), Some(span(14, 17)));
        assert_eq!(prop.ty.as_ref().map(|ty| ty.span), Some(span(21, 23)));
        assert_eq!((prop.span, prop.value_span), (span(14, 25), span(24, 25)));
        let children = node.children.as_ref().expect("children");
        assert_eq!(children.span, span(30, 40));
        assert_eq!(children.nodes[0].span, span(32, 37));
        assert_eq!(parsed.document.span, span(0, text.len()));
    }

    #[test]
    fn comments_are_collected_with_spans() {
        let text = "// top\na /* in */ 1 /-2 /-{ x }\n/- b {\n}\n";
        let parsed = parse0(text);
        assert!(parsed.diagnostics.is_empty());
        let comments: Vec<_> = parsed
            .comments
            .iter()
            .map(|c| (c.kind, &text[c.span.range()]))
            .collect();
        assert_eq!(
            comments,
            [
                (CommentKind::Line, "// top"),
                (CommentKind::Block, "/* in */"),
                (CommentKind::Slashdash, "/-2"),
                (CommentKind::Slashdash, "/-{ x }"),
                (CommentKind::Slashdash, "/- b {\n}"),
            ]
        );
        assert_eq!(names(&parsed.document), ["a"]);
        assert_eq!(parsed.document.nodes[0].span, span(7, 19));
    }

    #[test]
    fn every_syntax_code_has_a_case() {
        let cases: &[(&str, Code, &str)] = &[
            ("node key=}", Code::SyntaxError, "}"),
            ("node \"abc\nnext", Code::UnterminatedString, "\"abc"),
            ("node \"a\\qb\"", Code::InvalidEscape, "\\q"),
            ("node 1.0.0", Code::InvalidNumber, "1.0.0"),
            ("node {\n  child\n", Code::UnclosedBlock, "{"),
            ("node\n}\n", Code::UnmatchedBrace, "}"),
            ("node \u{1}x", Code::InvalidCharacter, "\u{1}"),
        ];
        for (text, code, covered) in cases {
            let found = problems(text);
            assert!(
                found.iter().any(|(c, t, _)| c == code && t == covered),
                "{text:?}: expected {code:?} on {covered:?}, got {found:?}"
            );
        }
    }

    #[test]
    fn messages_name_what_was_expected_and_found() {
        let found = problems("parent {\n  node key=}\n");
        assert_eq!(
            found,
            [(
                Code::SyntaxError,
                "}",
                String::from("expected a value after `=`, found `}`")
            )]
        );
        let found = problems("node key=\nnext");
        assert_eq!(found[0].2, "expected a value after `=`, found a newline");
        let found = problems("node (ty)\n");
        assert_eq!(
            found[0].2,
            "expected a value after the type annotation, found a newline"
        );
        let found = problems("node 1=2");
        assert_eq!(
            found[0].2,
            "a property key must be a string, found number `1`"
        );
        let found = problems("node\"x\"");
        assert_eq!(found[0].2, "expected whitespace before a string");
        let diagnostic = &parse0("a {").diagnostics[0];
        assert_eq!(diagnostic.label.as_deref(), Some("this block"));
        assert!(diagnostic.help.is_some());
    }

    #[test]
    fn a_bad_entry_skips_to_the_end_of_the_line() {
        let parsed = parse0("a 1 [x y] 2\nb 3\n");
        assert_eq!(parsed.diagnostics.len(), 1);
        assert_eq!(names(&parsed.document), ["a", "b"]);
        assert_eq!(parsed.document.nodes[0].entries.len(), 1);
        assert_eq!(parsed.document.nodes[1].entries[0].value, Value::Integer(3));
    }

    #[test]
    fn a_bad_entry_keeps_the_children_block() {
        let parsed = parse0("a ] \"x}\" {\n  child\n}\nb\n");
        assert_eq!(parsed.diagnostics.len(), 1, "{:?}", parsed.diagnostics);
        assert_eq!(names(&parsed.document), ["a", "b"]);
        let children = parsed.document.nodes[0]
            .children
            .as_ref()
            .expect("children");
        assert_eq!(names(children), ["child"]);
    }

    #[test]
    fn an_invalid_token_costs_one_diagnostic_and_the_node_goes_on() {
        let parsed = parse0("a 0x 2 \"\\q\" true 4\n");
        let codes: Vec<_> = parsed.diagnostics.iter().map(|d| d.code).collect();
        assert_eq!(
            codes,
            [Code::InvalidNumber, Code::InvalidEscape, Code::SyntaxError]
        );
        let values: Vec<_> = parsed.document.nodes[0]
            .entries
            .iter()
            .map(|e| e.value.clone())
            .collect();
        assert_eq!(
            values,
            [
                Value::Integer(2),
                Value::String(CompactString::default()),
                Value::Integer(4)
            ]
        );
    }

    #[test]
    fn an_unclosed_block_keeps_what_was_parsed() {
        let text = "a {\n  b 1\n  c {\n    d\n";
        let parsed = parse0(text);
        let found: Vec<_> = parsed
            .diagnostics
            .iter()
            .map(|d| (d.code, d.span.start))
            .collect();
        assert_eq!(found, [(Code::UnclosedBlock, 2), (Code::UnclosedBlock, 14)]);
        let a = &parsed.document.nodes[0];
        assert_eq!(a.span, span(0, text.len()));
        let children = a.children.as_ref().expect("children");
        assert_eq!(names(children), ["b", "c"]);
        assert_eq!(
            names(children.nodes[1].children.as_ref().expect("grandchildren")),
            ["d"]
        );
    }

    #[test]
    fn a_stray_brace_is_reported_and_skipped() {
        let parsed = parse0("a\n}\nb }\nc");
        let found: Vec<_> = parsed
            .diagnostics
            .iter()
            .map(|d| (d.code, d.span.start))
            .collect();
        assert_eq!(
            found,
            [(Code::UnmatchedBrace, 2), (Code::UnmatchedBrace, 6)]
        );
        assert_eq!(names(&parsed.document), ["a", "b", "c"]);
    }

    #[test]
    fn a_stray_brace_points_at_the_misindented_one_that_closed_too_soon() {
        let text = "wf {\n    loop {\n        set\n        }\n    }\n    after\n}\n";
        let parsed = parse0(text);
        let stray = parsed
            .diagnostics
            .iter()
            .find(|d| d.code == Code::UnmatchedBrace)
            .expect("the last `}` is unmatched");
        let at = |pos: usize| u32::try_from(pos).unwrap();
        assert_eq!(stray.span.start, at(text.len() - 2));
        let labelled: Vec<u32> = stray.labels.iter().map(|label| label.span.start).collect();
        let misindented = text.find("        }").unwrap() + 8;
        assert_eq!(
            labelled,
            [at(misindented), at(text.find("loop {").unwrap() + 5)]
        );
        assert!(
            stray
                .help
                .as_deref()
                .unwrap()
                .contains("line 4 looks extra")
        );

        // Level braces, or blocks on one line, accuse nobody.
        for text in ["wf {\n    a { b; }\n}\n}\n", "wf {\n    a {\n    }\n}\n}\n"] {
            let parsed = parse0(text);
            let stray = &parsed.diagnostics[0];
            assert_eq!(stray.code, Code::UnmatchedBrace);
            assert!(stray.labels.is_empty(), "{text:?}");
        }
    }

    #[test]
    fn many_errors_in_one_file() {
        let text = "a \"open\nb 1.2.3\nc key=\nd #maybe\ne {\n";
        let found: Vec<_> = problems(text)
            .into_iter()
            .map(|(code, _, _)| code)
            .collect();
        assert_eq!(
            found,
            [
                Code::UnterminatedString,
                Code::InvalidNumber,
                Code::SyntaxError,
                Code::SyntaxError,
                Code::UnclosedBlock,
            ]
        );
        assert_eq!(names(&parse0(text).document), ["a", "b", "c", "d", "e"]);
    }

    #[test]
    fn node_name_problems() {
        let parsed = parse0("{ x }\n1 2\ntrue\n#true\n=\nok");
        let found: Vec<_> = parsed
            .diagnostics
            .iter()
            .map(|d| d.message.as_str())
            .collect();
        assert_eq!(
            found,
            [
                "expected a node name, found `{`",
                "expected a node name, found number `1`",
                "`true` is a keyword and cannot be a bare string",
                "expected a node name, found keyword `#true`",
                "expected a node name, found `=`",
            ]
        );
        assert_eq!(names(&parsed.document), ["1", "true", "#true", "ok"]);
    }

    #[test]
    fn slashdash_rules() {
        for bad in [
            "node /-",
            "node /-;",
            "node {\n  /-\n}",
            "node (ty)/-a",
            "(ty)/-node",
            "node key=/-a",
            "node key /- =a",
            "node /-{ } a",
            "node { } /-a",
            "node { } { }",
            "node { } /-{ } { }",
            "node \"a\"/-b",
            "node/-{ }",
            "node { }/-a",
            "/- /- node",
        ] {
            assert!(!parse0(bad).diagnostics.is_empty(), "{bad:?} should fail");
        }
        for good in [
            "node /-a b",
            "node /- \n  a b",
            "node /-{ } { } /-{ }",
            "node { }/-{ }",
            "/-node; other",
            "/- // c\n node\nother",
            "node /-key=1 /-(t)2",
        ] {
            let parsed = parse0(good);
            assert!(
                parsed.diagnostics.is_empty(),
                "{good:?}: {:?}",
                parsed.diagnostics
            );
        }
    }

    #[test]
    fn deep_nesting_is_cut_off_without_overflowing() {
        let text = "a {".repeat(100_000);
        let parsed = parse0(&text);
        assert!(
            parsed
                .diagnostics
                .iter()
                .any(|d| d.message.contains("nested more than"))
        );
        let text = "{".repeat(100_000);
        let _ = parse0(&text);
        let text = format!("{}x{}", "a { ".repeat(MAX_DEPTH), "}".repeat(MAX_DEPTH));
        assert!(parse0(&text).diagnostics.is_empty());
    }

    #[test]
    fn spans_in_multibyte_and_crlf_text() {
        let text = "ノード\u{3000}お名前=\"ฅ^•ﻌ•^ฅ\"\r\n(t)b 1\r\n";
        let parsed = parse0(text);
        assert!(parsed.diagnostics.is_empty());
        let [first, second] = &parsed.document.nodes[..] else {
            panic!("two nodes")
        };
        assert_eq!(&text[first.name.span.range()], "ノード");
        let entry = &first.entries[0];
        assert_eq!(&text[entry.span.range()], "お名前=\"ฅ^•ﻌ•^ฅ\"");
        assert_eq!(&text[entry.value_span.range()], "\"ฅ^•ﻌ•^ฅ\"");
        assert_eq!(
            &text[first.span.range()],
            "ノード\u{3000}お名前=\"ฅ^•ﻌ•^ฅ\""
        );
        assert_eq!(&text[second.span.range()], "(t)b 1");
    }

    #[test]
    fn line_continuations_join_lines() {
        let parsed = parse0("node 1 \\ // more\n   2 \\\n\n next\n");
        assert!(parsed.diagnostics.is_empty(), "{:?}", parsed.diagnostics);
        assert_eq!(names(&parsed.document), ["node", "next"]);
        assert_eq!(parsed.document.nodes[0].entries.len(), 2);
        let found = problems("node \\ x");
        assert_eq!(
            found[0].2,
            "expected a newline after the line continuation `\\`, found `x`"
        );
    }

    #[test]
    fn bom_only_at_the_start() {
        assert!(parse0("\u{FEFF}node").diagnostics.is_empty());
        let found = problems("node \u{FEFF}");
        assert_eq!(found[0].0, Code::InvalidCharacter);
    }
}
