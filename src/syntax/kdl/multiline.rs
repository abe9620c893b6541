//! Multi-line strings: `"""` and raw `#"""`, each opened by `"""` and a newline and closed
//! by `"""` on a line holding only whitespace.
//!
//! The value is built in the order the spec prescribes: whitespace escapes are resolved
//! first, then every line is dedented by the closing line's whitespace (the exact same
//! characters, not merely as many), then the remaining escapes are resolved. Literal
//! newlines become `\n`. Whitespace-only lines become empty lines.

use crate::diagnostic::Code;

use super::chars;
use super::cursor::Cursor;
use super::escape::{OffsetMap, unescape};
use super::string::{closes, skip_special};

/// Scans the multi-line quoted string at the cursor (on `"""`).
pub(super) fn quoted(cursor: &mut Cursor<'_>) -> String {
    let start = cursor.pos;
    cursor.pos += 3;
    if !open_newline(cursor, start, 0) {
        return one_line_recovery(cursor, 0);
    }
    let body_start = cursor.pos;
    let bytes = cursor.bytes;
    let mut escaped = false;
    let close = loop {
        cursor.pos = chars::skip_string_body(bytes, cursor.pos);
        match cursor.peek() {
            None => {
                unterminated(cursor, start, 3);
                break None;
            }
            Some(b'\\') => {
                escaped = true;
                cursor.pos += if matches!(cursor.peek_at(1), Some(b'"' | b'\\')) {
                    2
                } else {
                    1
                };
            }
            Some(b'"') if cursor.at(b"\"\"\"") => {
                cursor.pos += 3;
                break Some(cursor.pos - 3);
            }
            Some(b'"') => cursor.pos += 1,
            Some(_) => match cursor.newline_len() {
                0 => skip_special(cursor),
                len => cursor.pos += len,
            },
        }
    };
    let text = cursor.text;
    let body = &text[body_start..close.unwrap_or(cursor.pos)];
    if escaped {
        let (pre, map) = resolve_whitespace_escapes(body, body_start);
        dedent(cursor, &pre, &map, close, true)
    } else {
        dedent(cursor, body, &OffsetMap::identity(body_start), close, false)
    }
}

/// Scans the multi-line raw string whose `#`s start at `start`; the cursor is on `"""`.
pub(super) fn raw(cursor: &mut Cursor<'_>, start: usize, hashes: usize) -> String {
    cursor.pos += 3;
    if !open_newline(cursor, start, hashes) {
        return one_line_recovery(cursor, hashes);
    }
    let body_start = cursor.pos;
    let bytes = cursor.bytes;
    let close = loop {
        cursor.pos = chars::skip_string_body(bytes, cursor.pos);
        match cursor.peek() {
            None => {
                unterminated(cursor, start, hashes + 3);
                break None;
            }
            Some(b'"') if cursor.at(b"\"\"\"") && closes(bytes, cursor.pos + 3, hashes) => {
                cursor.pos += 3 + hashes;
                break Some(cursor.pos - 3 - hashes);
            }
            Some(b'"') => cursor.pos += 1,
            Some(_) => match cursor.newline_len() {
                0 => skip_special(cursor),
                len => cursor.pos += len,
            },
        }
    };
    let text = cursor.text;
    let body = &text[body_start..close.unwrap_or(cursor.pos)];
    dedent(cursor, body, &OffsetMap::identity(body_start), close, false)
}

/// Consumes the newline that must follow an opening `"""`; reports its absence.
fn open_newline(cursor: &mut Cursor<'_>, start: usize, hashes: usize) -> bool {
    let newline = cursor.newline_len();
    if newline > 0 {
        cursor.pos += newline;
        return true;
    }
    let span = cursor.span(start, start + hashes + 3);
    let quote = if hashes == 0 { "\"" } else { "#\"" };
    cursor.error(
        Code::SyntaxError,
        span,
        "a multi-line string must start with a newline after the opening `\"\"\"`",
        "text follows the opening quotes",
        format!(
            "put the text on the lines after `\"\"\"` and the closing `\"\"\"` on its own \
             line, or write a one-line string with a single `{quote}`"
        ),
    );
    false
}

/// After a malformed opening, takes the rest of the line up to a closing `"""` (plus
/// hashes) as the value, so the rest of the file still parses.
fn one_line_recovery(cursor: &mut Cursor<'_>, hashes: usize) -> String {
    let body_start = cursor.pos;
    let bytes = cursor.bytes;
    while cursor.pos < bytes.len() && cursor.newline_len() == 0 {
        if cursor.at(b"\"\"\"") && closes(bytes, cursor.pos + 3, hashes) {
            let value = cursor.text[body_start..cursor.pos].to_owned();
            cursor.pos += 3 + hashes;
            return value;
        }
        cursor.pos = cursor.char_end(cursor.pos);
    }
    cursor.text[body_start..cursor.pos].to_owned()
}

/// Reports a multi-line string that reaches the end of the file.
fn unterminated(cursor: &mut Cursor<'_>, start: usize, opener: usize) {
    let span = cursor.span(start, start + opener);
    cursor.error(
        Code::UnterminatedString,
        span,
        "multi-line string is never closed",
        "this string",
        "close it with `\"\"\"` on a line of its own",
    );
}

/// Removes whitespace escapes (`\` followed by whitespace and newlines), keeping every
/// other escape verbatim for later. Returns the text and where its pieces came from.
fn resolve_whitespace_escapes(body: &str, body_start: usize) -> (String, OffsetMap) {
    let bytes = body.as_bytes();
    let mut pre = String::with_capacity(body.len());
    let mut map = OffsetMap::identity(body_start);
    let mut copied = 0;
    let mut pos = 0;
    while let Some(found) = bytes[pos..].iter().position(|&b| b == b'\\') {
        let slash = pos + found;
        let mut after = slash + 1;
        loop {
            let len = chars::space_len(bytes, after).max(chars::newline_len(bytes, after));
            if len == 0 {
                break;
            }
            after += len;
        }
        if after > slash + 1 {
            pre.push_str(&body[copied..slash]);
            map.push(pre.len(), body_start + after);
            copied = after;
            pos = after;
        } else {
            // `\\` and `\"` keep both bytes; any other escape keeps its `\` and the
            // character after it is copied normally.
            pos = if matches!(bytes.get(slash + 1), Some(b'\\' | b'"')) {
                slash + 2
            } else {
                slash + 1
            };
        }
    }
    pre.push_str(&body[copied..]);
    (pre, map)
}

/// Splits `pre` into lines, checks the last one is whitespace only, strips it as a prefix
/// from the others and joins them with `\n`. `close` is the offset of the closing quotes
/// (`None` if the string was not closed, which was already reported).
fn dedent(
    cursor: &mut Cursor<'_>,
    pre: &str,
    map: &OffsetMap,
    close: Option<usize>,
    escapes: bool,
) -> String {
    let bytes = pre.as_bytes();
    // The closing line starts after the last newline.
    let last_start = (0..bytes.len())
        .rev()
        .find_map(|pos| match chars::newline_len(bytes, pos) {
            0 => None,
            len => Some(pos + len),
        })
        .unwrap_or(0);
    let last = last_start..bytes.len();
    let mut prefix = &pre[last.clone()];
    if let Some(close) = close
        && !chars::is_all_space(prefix)
    {
        let span = cursor.span(map.to_source(last.start), close);
        cursor.error(
            Code::SyntaxError,
            span,
            "the closing `\"\"\"` of a multi-line string must be on its own line",
            "text before the closing quotes",
            "only whitespace may precede the closing `\"\"\"`; move it to the next line \
             (a `\\` at the end of the last line joins it with the closing line)",
        );
        prefix = "";
    }
    // An unclosed string was reported already; its lines are not judged against a closing
    // line that does not exist.
    let mut reported = close.is_none();
    if reported {
        prefix = "";
    }
    let mut out = String::with_capacity(pre.len());
    let mut line_start = 0;
    let mut pos = 0;
    while line_start < last_start {
        // Find the end of this line (every line before the closing one ends in a newline).
        let newline = loop {
            // Only a byte below 0x0E, 0xC2 or 0xE2 can start a newline; step over the
            // rest without the full check.
            while let Some(&byte) = bytes.get(pos)
                && byte >= 0x0E
                && byte != 0xC2
                && byte != 0xE2
            {
                pos += 1;
            }
            match chars::newline_len(bytes, pos) {
                0 => pos += chars::utf8_len(bytes[pos]),
                len => break len,
            }
        };
        let line = line_start..pos;
        pos += newline;
        line_start = pos;
        if line.start > 0 {
            out.push('\n');
        }
        let text = &pre[line.clone()];
        if chars::is_all_space(text) {
            continue;
        }
        let content = if text.starts_with(prefix) {
            line.start + prefix.len()..line.end
        } else {
            if !reported {
                reported = true;
                let start = map.to_source(line.start);
                let span = cursor.span(start, map.to_source(line.end).max(start));
                cursor.error(
                    Code::SyntaxError,
                    span,
                    "line of a multi-line string is not indented like its closing `\"\"\"`",
                    "indentation differs from the closing line",
                    "every non-blank line must start with exactly the whitespace that precedes \
                     the closing `\"\"\"` (the same characters, not just the same width)",
                );
            }
            line.clone()
        };
        if escapes {
            unescape(cursor, &pre[content.clone()], content.start, map, &mut out);
        } else {
            out.push_str(&pre[content]);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::SourceId;

    fn scan(text: &str) -> (String, usize, Vec<(Code, String)>) {
        let mut cursor = Cursor::new(text, SourceId(0));
        let value = if text.starts_with('#') {
            super::super::string::raw(&mut cursor).into()
        } else {
            quoted(&mut cursor)
        };
        let diagnostics = cursor
            .diagnostics
            .iter()
            .map(|d| (d.code, text[d.span.range()].to_owned()))
            .collect();
        (value, cursor.pos, diagnostics)
    }

    fn value(text: &str) -> String {
        let (value, _, diagnostics) = scan(text);
        assert!(diagnostics.is_empty(), "{text:?}: {diagnostics:?}");
        value
    }

    #[test]
    fn dedents_by_the_closing_line() {
        assert_eq!(
            value("\"\"\"\n  foo\n    bar\n  baz\n  \"\"\""),
            "foo\n  bar\nbaz"
        );
        assert_eq!(
            value("\"\"\"\n        foo\n    base\n  \"\"\""),
            "      foo\n  base"
        );
        assert_eq!(value("\"\"\"\n\"\"\""), "");
        assert_eq!(value("\"\"\"\n  \"\"\""), "");
        assert_eq!(value("\"\"\"\n\n\"\"\""), "");
        assert_eq!(value("\"\"\"\nfoo\r\nbar\n\"\"\""), "foo\nbar");
        assert_eq!(value("\"\"\"\n  a\n \t \n\n  b\n  \"\"\""), "a\n\n\nb");
    }

    #[test]
    fn escapes_after_dedent_and_whitespace_escapes_before() {
        assert_eq!(
            value("\"\"\"\n  foo \\\nbar\n  baz\n  \\   \"\"\""),
            "foo bar\nbaz"
        );
        assert_eq!(value("\"\"\"\n    a\n   \\\n\"\"\""), " a");
        assert_eq!(value("\"\"\"\n  a\\tb\\n\n  \"\"\""), "a\tb\n");
        assert_eq!(value("\"\"\"\n\\\"\"\"\n\"\"\""), "\"\"\"");
        assert_eq!(value("\"\"\"\n  a\\\\ b\n  \"\"\""), "a\\ b");
        assert_eq!(value("\"\"\"\n  \\s x\n  \"\"\""), "  x");
    }

    #[test]
    fn raw_multi_line() {
        assert_eq!(value("#\"\"\"\n  a\\n\n  \"\"\"#"), "a\\n");
        assert_eq!(value("#\"\"\"\n  \"\"\" x\n  \"\"\"#"), "\"\"\" x");
        assert_eq!(value("##\"\"\"\n\"\"\"#\n\"\"\"##"), "\"\"\"#");
    }

    #[test]
    fn errors() {
        let (_, _, d) = scan("\"\"\"one line\"\"\" x");
        assert_eq!(d[0].0, Code::SyntaxError);
        let (_, _, d) = scan("\"\"\"\n    hey\n   everyone\n\t   how\n  \"\"\"");
        assert_eq!(d, [(Code::SyntaxError, "\t   how".to_owned())]);
        let (_, _, d) = scan("\"\"\"\n  foo\n  bar\\\n  \"\"\"");
        assert_eq!(d[0].0, Code::SyntaxError);
        let (_, _, d) = scan("\"\"\"\n  foo\n");
        assert_eq!(d, [(Code::UnterminatedString, "\"\"\"".to_owned())]);
        let (_, _, d) = scan("\"\"\"\nfoo\n  bar");
        assert_eq!(d, [(Code::UnterminatedString, "\"\"\"".to_owned())]);
        let (_, _, d) = scan("\"\"\"\n\\s escaped\n  lit\n  \"\"\"");
        assert_eq!(d[0].0, Code::SyntaxError);
        let (_, _, d) = scan("\"\"\"\na\n   \\\n\"\"\"");
        assert_eq!(d[0].0, Code::SyntaxError);
    }
}
