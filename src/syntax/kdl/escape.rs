//! Backslash escapes in quoted strings: `\n \r \t \\ \" \b \f \s`, `\u{1-6 hex digits}`
//! and the whitespace escape (`\` followed by whitespace and newlines, which are dropped).
//!
//! Input is a string body that may not sit contiguously in the source (a multi-line string
//! is dedented first), so spans go through an [`OffsetMap`].

use crate::diagnostic::Code;

use super::chars;
use super::cursor::Cursor;

/// Maps offsets in a rebuilt string back to the source text: a sorted list of
/// `(offset in rebuilt text, offset in source)` pairs, each starting a run of bytes copied
/// unchanged. The common case, text copied unchanged, needs no allocation.
#[derive(Debug, Clone)]
pub(super) struct OffsetMap {
    /// Source offset of rebuilt offset 0.
    first: usize,
    /// Later runs.
    segments: Vec<(usize, usize)>,
}

impl OffsetMap {
    /// A map for text copied unchanged from `source_start`.
    pub(super) fn identity(source_start: usize) -> Self {
        Self {
            first: source_start,
            segments: Vec::new(),
        }
    }

    /// Records that rebuilt offset `rebuilt` (after 0) corresponds to source offset
    /// `source`, and the bytes after it follow unchanged.
    pub(super) fn push(&mut self, rebuilt: usize, source: usize) {
        if rebuilt == 0 {
            self.first = source;
            return;
        }
        if let Some(last) = self.segments.last_mut()
            && last.0 == rebuilt
        {
            last.1 = source;
            return;
        }
        self.segments.push((rebuilt, source));
    }

    /// The source offset of rebuilt offset `offset`.
    pub(super) fn to_source(&self, offset: usize) -> usize {
        let index = self
            .segments
            .partition_point(|&(rebuilt, _)| rebuilt <= offset);
        match index.checked_sub(1).and_then(|i| self.segments.get(i)) {
            Some(&(rebuilt, source)) => source + (offset - rebuilt),
            None => self.first + offset,
        }
    }
}

/// The character a one-letter escape (`\n` → `n`) stands for.
pub fn simple_escape(letter: u8) -> Option<char> {
    match letter {
        b'n' => Some('\n'),
        b'r' => Some('\r'),
        b't' => Some('\t'),
        b'\\' => Some('\\'),
        b'"' => Some('"'),
        b'b' => Some('\u{8}'),
        b'f' => Some('\u{C}'),
        b's' => Some(' '),
        _ => None,
    }
}

/// The valid escapes, for help texts.
const VALID_ESCAPES: &str =
    "valid escapes are `\\n`, `\\r`, `\\t`, `\\\\`, `\\\"`, `\\b`, `\\f`, `\\s` and `\\u{…}`";

/// Appends the value of `raw` (a string body; `raw_offset` is its offset in the rebuilt text
/// `map` describes) to `out`, resolving escapes. Bad escapes are reported and dropped.
pub(super) fn unescape(
    cursor: &mut Cursor<'_>,
    raw: &str,
    raw_offset: usize,
    map: &OffsetMap,
    out: &mut String,
) {
    let bytes = raw.as_bytes();
    let mut copied = 0;
    let mut pos = 0;
    while pos < bytes.len() {
        let Some(found) = bytes[pos..].iter().position(|&b| b == b'\\') else {
            break;
        };
        let slash = pos + found;
        out.push_str(&raw[copied..slash]);
        pos = resolve(cursor, raw, slash, raw_offset, map, out);
        copied = pos;
    }
    out.push_str(&raw[copied..]);
}

/// Resolves the escape starting with the `\` at `slash`; returns the offset after it.
fn resolve(
    cursor: &mut Cursor<'_>,
    raw: &str,
    slash: usize,
    raw_offset: usize,
    map: &OffsetMap,
    out: &mut String,
) -> usize {
    let bytes = raw.as_bytes();
    let simple = bytes.get(slash + 1).copied().and_then(simple_escape);
    if let Some(ch) = simple {
        out.push(ch);
        return slash + 2;
    }
    if bytes.get(slash + 1) == Some(&b'u') {
        return unicode(cursor, raw, slash, raw_offset, map, out);
    }
    let whitespace = skip_whitespace(bytes, slash + 1);
    if whitespace > slash + 1 {
        return whitespace;
    }
    let end = match raw[slash + 1..].chars().next() {
        Some(ch) => slash + 1 + ch.len_utf8(),
        None => slash + 1,
    };
    let span = cursor.span(
        map.to_source(raw_offset + slash),
        map.to_source(raw_offset + end),
    );
    let escape = &raw[slash..end];
    let message = if escape.len() > 1 {
        format!("invalid escape `{escape}`")
    } else {
        String::from("`\\` at the end of a string escapes nothing")
    };
    cursor.error(
        Code::InvalidEscape,
        span,
        message,
        "not a valid escape",
        format!("{VALID_ESCAPES}; write `\\\\` for a literal backslash"),
    );
    end
}

/// Skips whitespace and newlines from `pos`, for a whitespace escape.
fn skip_whitespace(bytes: &[u8], mut pos: usize) -> usize {
    loop {
        let len = chars::space_len(bytes, pos).max(chars::newline_len(bytes, pos));
        if len == 0 {
            return pos;
        }
        pos += len;
    }
}

/// Resolves `\u{…}` at `slash`.
fn unicode(
    cursor: &mut Cursor<'_>,
    raw: &str,
    slash: usize,
    raw_offset: usize,
    map: &OffsetMap,
    out: &mut String,
) -> usize {
    let bytes = raw.as_bytes();
    let open = slash + 2;
    let digits_start = open + 1;
    let mut digits_end = digits_start;
    while bytes.get(digits_end).is_some_and(u8::is_ascii_hexdigit) {
        digits_end += 1;
    }
    let has_open = bytes.get(open) == Some(&b'{');
    let has_close = has_open && bytes.get(digits_end) == Some(&b'}');
    let count = digits_end - digits_start;
    let end = if has_close {
        digits_end + 1
    } else if has_open {
        digits_end
    } else {
        open
    };
    let span = cursor.span(
        map.to_source(raw_offset + slash),
        map.to_source(raw_offset + end),
    );
    if !has_open || !has_close || count == 0 || count > 6 {
        cursor.error(
            Code::InvalidEscape,
            span,
            format!("invalid unicode escape `{}`", &raw[slash..end]),
            "not a valid `\\u{…}` escape",
            "write one to six hex digits in braces, like `\\u{1F600}`",
        );
        return end;
    }
    let value = u32::from_str_radix(&raw[digits_start..digits_end], 16).unwrap_or(u32::MAX);
    match char::from_u32(value) {
        Some(ch) => out.push(ch),
        None => cursor.error(
            Code::InvalidEscape,
            span,
            format!("`{}` is not a Unicode scalar value", &raw[slash..end]),
            "no such character",
            "a `\\u{…}` escape must name a code point up to `10FFFF`, outside the surrogates \
             `D800`–`DFFF`",
        ),
    }
    end
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::SourceId;

    fn run(raw: &str) -> (String, Vec<(Code, std::ops::Range<usize>)>) {
        let mut cursor = Cursor::new(raw, SourceId(0));
        let mut out = String::new();
        unescape(&mut cursor, raw, 0, &OffsetMap::identity(0), &mut out);
        let diagnostics = cursor
            .diagnostics
            .iter()
            .map(|d| (d.code, d.span.range()))
            .collect();
        (out, diagnostics)
    }

    #[test]
    fn simple_escapes() {
        assert_eq!(run(r#"\"\\\b\f\n\r\t\s"#).0, "\"\\\u{8}\u{c}\n\r\t ");
        assert_eq!(run("a\\u{0a}b\\u{1F600}").0, "a\nb😀");
        assert_eq!(run("plain").0, "plain");
    }

    #[test]
    fn whitespace_escape_drops_spaces_and_newlines() {
        assert_eq!(run("Hello \\    World").0, "Hello World");
        assert_eq!(run("Hello\\\n   \n\tWorld").0, "HelloWorld");
        assert_eq!(run("a\\\u{3000}b").0, "ab");
    }

    #[test]
    fn bad_escapes_are_reported_with_spans() {
        let (out, diagnostics) = run(r"a\/b\u{}c\u{110000}d\u{D800}e\u{1234567}f\ug");
        assert_eq!(out, "abcdefg");
        assert_eq!(
            diagnostics,
            [
                (Code::InvalidEscape, 1..3),
                (Code::InvalidEscape, 4..8),
                (Code::InvalidEscape, 9..19),
                (Code::InvalidEscape, 20..28),
                (Code::InvalidEscape, 29..40),
                (Code::InvalidEscape, 41..43),
            ]
        );
    }

    #[test]
    fn offset_map_follows_segments() {
        let mut map = OffsetMap::identity(0);
        map.push(0, 10);
        map.push(5, 30);
        assert_eq!(map.to_source(0), 10);
        assert_eq!(map.to_source(4), 14);
        assert_eq!(map.to_source(5), 30);
        assert_eq!(map.to_source(7), 32);
    }
}
