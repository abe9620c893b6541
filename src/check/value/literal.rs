//! Where a string's text sits inside its literal, so template errors can point at bytes,
//! escapes and dedented multi-line strings included.

use crate::ir::Template;
use crate::source::{Sources, Span};

/// A [`Template`] for a decoded string `value` written at `span`. The offset skips the
/// opening `#`s and quotes (and the first line break of a multi-line string); offsets are
/// exact when the literal's text after it is the value byte for byte (no escapes, no
/// dedent).
pub(crate) fn template(sources: &Sources, value: &str, span: Span) -> Template {
    let literal = sources.text(span);
    let hashes = literal.bytes().take_while(|&byte| byte == b'#').count();
    let after = &literal[hashes..];
    let offset = if let Some(rest) = after.strip_prefix("\"\"\"") {
        let newline = if rest.starts_with("\r\n") {
            2
        } else {
            usize::from(rest.starts_with('\n'))
        };
        hashes + 3 + newline
    } else if after.starts_with('"') {
        hashes + 1
    } else {
        0
    };
    let exact = literal
        .get(offset..offset + value.len())
        .is_some_and(|text| text == value);
    let shifts = if exact {
        None
    } else {
        let multi_line = after.starts_with("\"\"\"");
        literal
            .get(offset..)
            .and_then(|body| align(body, value, multi_line))
            .map(Box::new)
    };
    Template {
        source: value.to_owned(),
        span,
        exact,
        offset: u32::try_from(offset).unwrap_or(u32::MAX),
        shifts,
    }
}

/// Aligns a decoded `value` with the literal `body` it was written as (everything after the
/// opening quote): `(value offset, body offset)` pairs starting each run of bytes written
/// unchanged. Escapes decode to one character (or nothing, for a whitespace escape); a
/// multi-line string also drops its closing line's indentation from every line and writes
/// `\r\n` as `\n`. `None` when the two do not line up.
fn align(body: &str, value: &str, multi_line: bool) -> Option<Vec<(u32, u32)>> {
    let dedent = if multi_line {
        let close = body.rfind("\"\"\"")?;
        let line_start = body[..close].rfind('\n').map_or(0, |newline| newline + 1);
        close - line_start
    } else {
        0
    };
    let mut shifts = Vec::new();
    let mut shift = |value_at: usize, body_at: usize| {
        let pair = (u32::try_from(value_at).ok()?, u32::try_from(body_at).ok()?);
        if shifts.last().is_some_and(|&(v, _)| v == pair.0) {
            shifts.pop();
        }
        shifts.push(pair);
        Some(())
    };
    let (mut v, mut b) = (0, 0);
    let mut line_start = multi_line;
    while v < value.len() {
        if line_start {
            let indent = body[b..]
                .bytes()
                .take(dedent)
                .take_while(|&byte| byte == b' ' || byte == b'\t')
                .count();
            if indent > 0 {
                b += indent;
                shift(v, b)?;
            }
            line_start = false;
        }
        let expected = value[v..].chars().next()?;
        let found = body[b..].chars().next()?;
        if found == expected {
            v += expected.len_utf8();
            b += found.len_utf8();
            line_start = multi_line && expected == '\n';
            continue;
        }
        if multi_line && found == '\r' && expected == '\n' && body[b..].starts_with("\r\n") {
            v += 1;
            b += 2;
            shift(v, b)?;
            line_start = true;
            continue;
        }
        if found != '\\' {
            return None;
        }
        let (decoded, length) = escape(&body[b..])?;
        match decoded {
            Some(ch) if ch == expected => {
                shift(v, b)?;
                v += ch.len_utf8();
                b += length;
                shift(v, b)?;
            }
            None => {
                b += length;
                shift(v, b)?;
            }
            Some(_) => return None,
        }
    }
    Some(shifts)
}

/// The character an escape at the start of `text` stands for (`None` for a whitespace
/// escape, which stands for nothing) and its length in bytes.
fn escape(text: &str) -> Option<(Option<char>, usize)> {
    let rest = text.strip_prefix('\\')?;
    if let Some(ch) = crate::syntax::kdl::simple_escape(rest.bytes().next()?) {
        return Some((Some(ch), 2));
    }
    if let Some(hex) = rest.strip_prefix("u{") {
        let close = hex.find('}')?;
        let ch = char::from_u32(u32::from_str_radix(&hex[..close], 16).ok()?)?;
        return Some((Some(ch), 2 + 1 + close + 1));
    }
    let blank = rest
        .chars()
        .take_while(|ch| ch.is_whitespace())
        .map(char::len_utf8)
        .sum::<usize>();
    (blank > 0).then_some((None, 1 + blank))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str, value: &str) -> Template {
        let mut sources = Sources::new();
        let id = sources.add("t.kdl", text);
        template(&sources, value, Span::new(id, 0, text.len()))
    }

    #[test]
    fn offsets_for_each_string_form() {
        let quoted = at("\"a {{ b }}\"", "a {{ b }}");
        assert_eq!((quoted.offset, quoted.exact), (1, true));
        assert_eq!(quoted.span_of(2..9).range(), 3..10);
        let raw = at("##\"x\"##", "x");
        assert_eq!((raw.offset, raw.exact), (3, true));
        let bare = at("ident", "ident");
        assert_eq!((bare.offset, bare.exact), (0, true));
        let escaped = at("\"a\\nb\"", "a\nb");
        assert!(!escaped.exact);
        assert_eq!(escaped.span_of(0..1).range(), 1..2);
        assert_eq!(escaped.span_of(1..2).range(), 2..4, "the escape as written");
        assert_eq!(escaped.span_of(2..3).range(), 4..5);
        let multi = at("\"\"\"\n  x\n  \"\"\"", "x");
        assert_eq!(multi.offset, 4);
        assert!(!multi.exact);
        assert_eq!(multi.span_of(0..1).range(), 6..7);
    }

    #[test]
    fn escapes_and_dedent_keep_template_spans_on_the_text() {
        let text = "\"Say \\\"hi\\\" to {{ state.x }}\"";
        let value = "Say \"hi\" to {{ state.x }}";
        let quoted = at(text, value);
        let start = value.find("state").unwrap();
        let span = quoted.span_of(start..start + 7);
        assert_eq!(&text[span.range()], "state.x");

        let text =
            "\"\"\"\r\n    one \\u{2603}\r\n      {{ state.y }} \\\n      more\r\n    \"\"\"";
        let value = "one \u{2603}\n  {{ state.y }} more";
        let multi = at(text, value);
        let start = value.find("state").unwrap();
        let span = multi.span_of(start..start + 7);
        assert_eq!(&text[span.range()], "state.y");
        let more = value.find("more").unwrap();
        assert_eq!(&text[multi.span_of(more..more + 4).range()], "more");
    }

    #[test]
    fn text_that_does_not_line_up_points_at_the_literal() {
        let odd = at("\"abc\"", "xyz");
        assert!(odd.shifts.is_none());
        assert_eq!(odd.span_of(0..1).range(), 0..5);
    }
}
