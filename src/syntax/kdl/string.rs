//! Single-line strings: quoted `"…"` and raw `#"…"#`. Multi-line forms (`"""`) are handed
//! to [`super::multiline`].
//!
//! A string without escapes is copied out with one slice; escapes are resolved only when
//! the scan saw a `\`. An unclosed string ends at the end of its line, so the next line
//! still parses.

use crate::diagnostic::Code;

use super::chars;
use super::cursor::Cursor;
use super::escape::{OffsetMap, unescape};
use super::multiline;
use super::tree::CompactString;

/// Scans the quoted string at the cursor (which is on `"`) and returns its value. Errors
/// are reported; the value is then what could be read.
pub(super) fn quoted(cursor: &mut Cursor<'_>) -> CompactString {
    if cursor.at(b"\"\"\"") {
        return multiline::quoted(cursor).into();
    }
    let start = cursor.pos;
    cursor.pos += 1;
    let body_start = cursor.pos;
    let bytes = cursor.bytes;
    let mut escaped = false;
    let body_end = loop {
        cursor.pos = chars::skip_string_body(bytes, cursor.pos);
        match cursor.peek() {
            None => {
                unterminated(cursor, start, false);
                break cursor.pos;
            }
            Some(b'"') => {
                cursor.pos += 1;
                break cursor.pos - 1;
            }
            Some(b'\\') => {
                escaped = true;
                cursor.pos += 1;
                match cursor.peek() {
                    Some(b'"' | b'\\') => cursor.pos += 1,
                    _ => skip_escaped_whitespace(cursor),
                }
            }
            Some(_) => {
                if cursor.newline_len() > 0 {
                    unterminated(cursor, start, true);
                    break cursor.pos;
                }
                skip_special(cursor);
            }
        }
    };
    let text = cursor.text;
    let raw = &text[body_start..body_end];
    if escaped {
        let mut value = String::with_capacity(raw.len());
        unescape(cursor, raw, 0, &OffsetMap::identity(body_start), &mut value);
        value.into()
    } else {
        CompactString::new(raw)
    }
}

/// Scans the raw string at the cursor (which is on the first `#`) and returns its value.
pub(super) fn raw(cursor: &mut Cursor<'_>) -> CompactString {
    let start = cursor.pos;
    while cursor.peek() == Some(b'#') {
        cursor.pos += 1;
    }
    let hashes = cursor.pos - start;
    if cursor.at(b"\"\"\"") {
        return multiline::raw(cursor, start, hashes).into();
    }
    if cursor.peek() != Some(b'"') {
        let found = cursor.describe(cursor.pos);
        let span = cursor.span(start, cursor.pos);
        cursor.error(
            Code::SyntaxError,
            span,
            format!(
                "expected `\"` after `{}`, found {found}",
                &cursor.text[start..cursor.pos]
            ),
            "raw string opener",
            "a raw string looks like `#\"text\"#`; keywords are written `#true`, `#false`, \
             `#null`, `#inf`, `#-inf` or `#nan`",
        );
        return CompactString::default();
    }
    cursor.pos += 1;
    let body_start = cursor.pos;
    let bytes = cursor.bytes;
    let body_end = loop {
        cursor.pos = chars::skip_string_body(bytes, cursor.pos);
        match cursor.peek() {
            None => {
                unterminated(cursor, start, false);
                break cursor.pos;
            }
            Some(b'"') => {
                let quote = cursor.pos;
                cursor.pos += 1;
                if closes(bytes, cursor.pos, hashes) {
                    cursor.pos += hashes;
                    break quote;
                }
            }
            Some(_) => {
                if cursor.newline_len() > 0 {
                    unterminated(cursor, start, true);
                    break cursor.pos;
                }
                skip_special(cursor);
            }
        }
    };
    CompactString::new(&cursor.text[body_start..body_end])
}

/// Whether `hashes` `#` follow at `pos`.
pub(super) fn closes(bytes: &[u8], pos: usize, hashes: usize) -> bool {
    bytes
        .get(pos..pos + hashes)
        .is_some_and(|run| run.iter().all(|&b| b == b'#'))
}

/// Skips the whitespace after a `\` in a quoted string (a whitespace escape; may cross
/// newlines). Does nothing if no whitespace follows.
pub(super) fn skip_escaped_whitespace(cursor: &mut Cursor<'_>) {
    loop {
        let len = chars::space_len(cursor.bytes, cursor.pos)
            .max(chars::newline_len(cursor.bytes, cursor.pos));
        if len == 0 {
            return;
        }
        cursor.pos += len;
    }
}

/// Steps over one character a string scanner stopped at that is neither a quote, a
/// backslash nor a newline: reports it if it is disallowed.
pub(super) fn skip_special(cursor: &mut Cursor<'_>) {
    let len = chars::disallowed_len(cursor.bytes, cursor.pos);
    if len > 0 {
        cursor.report_disallowed(cursor.pos, len);
        cursor.pos += len;
    } else {
        cursor.pos = cursor.char_end(cursor.pos);
    }
}

/// Reports a string opened at `start` that is not closed before the end of the line
/// (`at_newline`) or of the file.
fn unterminated(cursor: &mut Cursor<'_>, start: usize, at_newline: bool) {
    let span = cursor.span(start, cursor.pos);
    if at_newline {
        cursor.error(
            Code::UnterminatedString,
            span,
            "string is not closed before the end of the line",
            "this string",
            "close it with `\"` on the same line; for text over several lines use `\"\"\"` \
             on its own line, or write `\\n` for a line break",
        );
    } else {
        cursor.error(
            Code::UnterminatedString,
            span,
            "string is never closed",
            "this string",
            "close it with `\"`",
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::SourceId;

    fn scan(
        text: &str,
        f: fn(&mut Cursor<'_>) -> CompactString,
    ) -> (CompactString, usize, Vec<(Code, String)>) {
        let mut cursor = Cursor::new(text, SourceId(0));
        let value = f(&mut cursor);
        let diagnostics = cursor
            .diagnostics
            .iter()
            .map(|d| (d.code, text[d.span.range()].to_owned()))
            .collect();
        (value, cursor.pos, diagnostics)
    }

    #[test]
    fn quoted_fast_and_escaped() {
        assert_eq!(scan(r#""hello" x"#, quoted), ("hello".into(), 7, vec![]));
        assert_eq!(scan(r#""a\"b\\" x"#, quoted), ("a\"b\\".into(), 8, vec![]));
        assert_eq!(scan("\"a\\\n   b\"", quoted), ("ab".into(), 9, vec![]));
        assert_eq!(scan("\"\u{A0}é\u{2000}\"", quoted).0, "\u{A0}é\u{2000}");
    }

    #[test]
    fn quoted_unterminated_stops_at_newline() {
        let (value, pos, diagnostics) = scan("\"abc\nnext", quoted);
        assert_eq!((value.as_str(), pos), ("abc", 4));
        assert_eq!(
            diagnostics,
            [(Code::UnterminatedString, "\"abc".to_owned())]
        );
        let (_, pos, diagnostics) = scan("\"abc", quoted);
        assert_eq!(pos, 4);
        assert_eq!(diagnostics[0].0, Code::UnterminatedString);
    }

    #[test]
    fn quoted_disallowed_character() {
        let (value, _, diagnostics) = scan("\"a\u{1}b\"", quoted);
        assert_eq!(value, "a\u{1}b");
        assert_eq!(diagnostics, [(Code::InvalidCharacter, "\u{1}".to_owned())]);
    }

    #[test]
    fn raw_strings() {
        assert_eq!(scan(r##"#"a\n"# x"##, raw), (r"a\n".into(), 7, vec![]));
        assert_eq!(
            scan(r###"##"a"#b"## x"###, raw),
            ("a\"#b".into(), 10, vec![])
        );
        assert_eq!(
            scan(r##"#""#"##, raw),
            (CompactString::default(), 4, vec![])
        );
        let (_, _, diagnostics) = scan("##\"foo\"#\n", raw);
        assert_eq!(
            diagnostics,
            [(Code::UnterminatedString, "##\"foo\"#".to_owned())]
        );
        let (_, _, diagnostics) = scan("#x", raw);
        assert_eq!(diagnostics[0].0, Code::SyntaxError);
    }
}
