//! Where a string's text sits inside its literal, so template errors can point at bytes.

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
    Template {
        source: value.to_owned(),
        span,
        exact,
        offset: u32::try_from(offset).unwrap_or(u32::MAX),
    }
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
        assert_eq!(escaped.span_of(0..1).range(), 0..6);
        let multi = at("\"\"\"\n  x\n  \"\"\"", "x");
        assert_eq!(multi.offset, 4);
        assert!(!multi.exact);
    }
}
