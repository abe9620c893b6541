//! What kind of token starts at a position (quoted, raw, keyword, number, identifier), and
//! which texts may be written as bare identifier strings.
//!
//! An identifier string may not look like a number: a leading digit, a sign and a digit, or
//! a `.` and a digit (optionally after a sign) start a number instead. The bare words
//! `true`, `false`, `null`, `inf`, `-inf` and `nan` are reserved.

use super::chars;

/// Bare words that are errors: they must be written `#true` etc., or quoted.
pub(super) const RESERVED: [&str; 6] = ["true", "false", "null", "inf", "-inf", "nan"];

/// The kind of token at a position where a value or string may start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum TokenStart {
    /// `"`: a quoted or multi-line string.
    Quoted,
    /// `#` followed by `#` or `"`: a raw string.
    Raw,
    /// `#` followed by anything else: `#true`, `#inf`, ….
    Keyword,
    /// A number (or an invalid one, still read as one word).
    Number,
    /// An identifier string.
    Ident,
    /// Nothing that can start a value.
    Other,
}

/// Classifies the token starting at `pos`.
#[inline]
pub(super) fn token_start(bytes: &[u8], pos: usize) -> TokenStart {
    match bytes.get(pos) {
        Some(b'"') => TokenStart::Quoted,
        Some(b'#') => match bytes.get(pos + 1) {
            Some(b'#' | b'"') => TokenStart::Raw,
            _ => TokenStart::Keyword,
        },
        Some(_) if looks_numeric(bytes, pos) => TokenStart::Number,
        Some(_) if chars::ident_char_len(bytes, pos) > 0 => TokenStart::Ident,
        _ => TokenStart::Other,
    }
}

/// Whether the text at `pos` starts like a number: `[+-]? [.]? digit`.
fn looks_numeric(bytes: &[u8], mut pos: usize) -> bool {
    if matches!(bytes.get(pos), Some(b'+' | b'-')) {
        pos += 1;
    }
    if bytes.get(pos) == Some(&b'.') {
        pos += 1;
    }
    bytes.get(pos).is_some_and(u8::is_ascii_digit)
}

/// Whether `text` can be written as a bare identifier string (otherwise it must be quoted).
pub(super) fn is_bare_identifier(text: &str) -> bool {
    let bytes = text.as_bytes();
    !bytes.is_empty()
        && chars::ident_end(bytes, 0) == bytes.len()
        && !looks_numeric(bytes, 0)
        && !RESERVED.contains(&text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_token_starts() {
        let kind = |text: &str| token_start(text.as_bytes(), 0);
        assert_eq!(kind("\"a\""), TokenStart::Quoted);
        assert_eq!(kind("#\"a\"#"), TokenStart::Raw);
        assert_eq!(kind("##\"a\"##"), TokenStart::Raw);
        assert_eq!(kind("#true"), TokenStart::Keyword);
        for number in ["1", "-1", "+1", ".1", "-.1", "0x1"] {
            assert_eq!(kind(number), TokenStart::Number, "{number}");
        }
        for ident in ["a", "-", "+", ".", "+.", "-.a", "--1", "_15", "?15", "😁"] {
            assert_eq!(kind(ident), TokenStart::Ident, "{ident}");
        }
        for other in ["{", "}", "(", ")", "=", ";", "[", "/", "\\", " ", ""] {
            assert_eq!(kind(other), TokenStart::Other, "{other:?}");
        }
    }

    #[test]
    fn bare_identifiers() {
        for bare in [
            "node",
            "-",
            "+.",
            "--",
            "foo123~!@$%^&*.:'|?+<>,`-_",
            "ノード",
            "true_id",
        ] {
            assert!(is_bare_identifier(bare), "{bare}");
        }
        for quoted in [
            "", "0node", "-1", "+.5", ".5", "a b", "true", "-inf", "a=b", "\\node",
        ] {
            assert!(!is_bare_identifier(quoted), "{quoted}");
        }
    }
}
