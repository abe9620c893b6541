//! KDL's character classes, decided on bytes: whitespace, newlines, disallowed code points
//! and identifier characters.
//!
//! Every function takes the whole text as bytes and an offset, and answers with the length
//! in bytes of the matching character there (0 when it does not match), so callers never
//! decode UTF-8 on the hot path. The input is always valid UTF-8 (it comes from a `&str`),
//! so a lead byte tells the sequence length and only a few lead bytes can start a
//! non-ASCII space, newline or disallowed code point.

/// Byte classes for ASCII (and the interesting non-ASCII lead bytes).
const IDENT: u8 = 1;
/// `"`, `\`, control characters, DEL and the lead bytes of special non-ASCII characters:
/// where a string scanner must stop and look.
const STRING_STOP: u8 = 2;
/// Newline bytes, control characters, DEL and special lead bytes: where a line-comment
/// scanner must stop and look.
const COMMENT_STOP: u8 = 4;

/// Lead bytes of the non-ASCII characters KDL treats specially (NBSP/NEL `C2`, Ogham space
/// `E1`, the U+20xx block `E2`, ideographic space `E3`, BOM `EF`).
const fn is_special_lead(byte: u8) -> bool {
    matches!(byte, 0xC2 | 0xE1 | 0xE2 | 0xE3 | 0xEF)
}

const fn class_of(byte: u8) -> u8 {
    let mut class = 0;
    let ident = match byte {
        0x21..=0x7E => !matches!(
            byte,
            b'\\' | b'/' | b'(' | b')' | b'{' | b'}' | b';' | b'[' | b']' | b'"' | b'#' | b'='
        ),
        0x80..=0xFF => !is_special_lead(byte),
        _ => false,
    };
    if ident {
        class |= IDENT;
    }
    if byte < 0x20 || byte == 0x7F || byte == b'"' || byte == b'\\' || is_special_lead(byte) {
        class |= STRING_STOP;
    }
    if (byte < 0x20 && byte != b'\t') || byte == 0x7F || is_special_lead(byte) {
        class |= COMMENT_STOP;
    }
    class
}

const fn build_table() -> [u8; 256] {
    let mut table = [0u8; 256];
    let mut index = 0;
    while index < 256 {
        table[index] = class_of(index as u8);
        index += 1;
    }
    table
}

static TABLE: [u8; 256] = build_table();

/// Whether `byte` is a plain identifier byte: printable ASCII other than KDL's
/// punctuation, or part of a non-ASCII character that cannot be special. Bytes that need a
/// closer look (special lead bytes) answer `false`; use [`ident_char_len`] for those.
#[inline]
pub(super) fn is_plain_ident_byte(byte: u8) -> bool {
    TABLE[byte as usize] & IDENT != 0
}

/// Whether a string scanner must stop at `byte` and look closer.
#[inline]
pub(super) fn is_string_stop(byte: u8) -> bool {
    TABLE[byte as usize] & STRING_STOP != 0
}

/// Whether a line-comment scanner must stop at `byte` and look closer.
#[inline]
pub(super) fn is_comment_stop(byte: u8) -> bool {
    TABLE[byte as usize] & COMMENT_STOP != 0
}

/// Skips bytes a string scanner need not look at (see [`is_string_stop`]) from `pos`,
/// eight at a time, and returns the position of the first one it must look at (or the end).
/// Any non-ASCII byte stops the word-wise loop; the byte-wise loop then decides.
#[inline]
pub(super) fn skip_string_body(bytes: &[u8], mut pos: usize) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    // Flags (in its high bit) every byte of `word` equal to zero; exact for the lowest one.
    fn zero_bytes(word: u64) -> u64 {
        word.wrapping_sub(ONES) & !word & HIGHS
    }
    while let Some(chunk) = bytes.get(pos..pos + 8) {
        let mut array = [0u8; 8];
        array.copy_from_slice(chunk);
        let word = u64::from_le_bytes(array);
        let stops = zero_bytes(word ^ (ONES * u64::from(b'"')))
            | zero_bytes(word ^ (ONES * u64::from(b'\\')))
            | zero_bytes(word ^ (ONES * 0x7F))
            // Bytes below 0x20 (exact as long as no byte is >= 0x80, which flags anyway).
            | (word.wrapping_sub(ONES * 0x20) & !word & HIGHS)
            | (word & HIGHS);
        if stops != 0 {
            pos += (stops.trailing_zeros() / 8) as usize;
            break;
        }
        pos += 8;
    }
    while let Some(&byte) = bytes.get(pos) {
        if is_string_stop(byte) {
            break;
        }
        pos += 1;
    }
    pos
}

/// Length of the UTF-8 sequence starting with lead byte `byte`.
#[inline]
pub(super) fn utf8_len(byte: u8) -> usize {
    match byte {
        0x00..=0x7F => 1,
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        // Continuation bytes never start a character in valid UTF-8; count them as one so
        // a caller that lands on one (only after a bug) still advances.
        0x80..=0xBF => 1,
        _ => 4,
    }
}

/// Length of a non-newline whitespace character at `pos` (tab, space and the Unicode
/// spaces), or 0.
#[inline]
pub(super) fn space_len(bytes: &[u8], pos: usize) -> usize {
    match bytes.get(pos..) {
        Some([b' ' | b'\t', ..]) => 1,
        Some([0xC2, 0xA0, ..]) => 2,
        Some([0xE1, 0x9A, 0x80, ..]) => 3,
        Some([0xE2, 0x80, 0x80..=0x8A | 0xAF, ..]) => 3,
        Some([0xE2, 0x81, 0x9F, ..]) => 3,
        Some([0xE3, 0x80, 0x80, ..]) => 3,
        _ => 0,
    }
}

/// Length of a newline at `pos` (CRLF counts as one newline of length 2), or 0.
#[inline]
pub(super) fn newline_len(bytes: &[u8], pos: usize) -> usize {
    // Fast exit: every newline starts with a byte below 0x0E, or 0xC2 / 0xE2.
    match bytes.get(pos) {
        Some(&byte) if byte < 0x0E || byte == 0xC2 || byte == 0xE2 => {}
        _ => return 0,
    }
    match bytes.get(pos..) {
        Some([b'\r', b'\n', ..]) => 2,
        Some([b'\n' | b'\r' | 0x0B | 0x0C, ..]) => 1,
        Some([0xC2, 0x85, ..]) => 2,
        Some([0xE2, 0x80, 0xA8 | 0xA9, ..]) => 3,
        _ => 0,
    }
}

/// Length of a code point KDL forbids in source text at `pos`, or 0. The BOM counts too;
/// the caller allows it at offset 0.
#[inline]
pub(super) fn disallowed_len(bytes: &[u8], pos: usize) -> usize {
    match bytes.get(pos..) {
        Some([0x00..=0x08 | 0x0E..=0x1F | 0x7F, ..]) => 1,
        Some([0xE2, 0x80, 0x8E | 0x8F | 0xAA..=0xAE, ..]) => 3,
        Some([0xE2, 0x81, 0xA6..=0xA9, ..]) => 3,
        Some([0xEF, 0xBB, 0xBF, ..]) => 3,
        _ => 0,
    }
}

/// Length of the identifier character at `pos`, or 0 if there is none (end of text,
/// whitespace, newline, disallowed code point or one of `\/(){};[]"#=`).
#[inline]
pub(super) fn ident_char_len(bytes: &[u8], pos: usize) -> usize {
    let Some(&byte) = bytes.get(pos) else {
        return 0;
    };
    if is_plain_ident_byte(byte) {
        return utf8_len(byte);
    }
    if is_special_lead(byte)
        && space_len(bytes, pos) == 0
        && newline_len(bytes, pos) == 0
        && disallowed_len(bytes, pos) == 0
    {
        return utf8_len(byte);
    }
    0
}

/// End of the run of identifier characters starting at `pos`.
#[inline]
pub(super) fn ident_end(bytes: &[u8], mut pos: usize) -> usize {
    loop {
        while let Some(&byte) = bytes.get(pos) {
            if byte < 0x80 && is_plain_ident_byte(byte) {
                pos += 1;
            } else {
                break;
            }
        }
        let len = ident_char_len(bytes, pos);
        if len == 0 {
            return pos;
        }
        pos += len;
    }
}

/// Whether `text` consists of Unicode spaces only (tab, space and the other non-newline
/// whitespace). The empty string counts.
pub(super) fn is_all_space(text: &str) -> bool {
    let bytes = text.as_bytes();
    let mut pos = 0;
    while pos < bytes.len() {
        let len = space_len(bytes, pos);
        if len == 0 {
            return false;
        }
        pos += len;
    }
    true
}

/// Whether `ch` is a KDL identifier character.
#[cfg(test)]
fn is_ident_char(ch: char) -> bool {
    let mut buf = [0u8; 4];
    let encoded = ch.encode_utf8(&mut buf).as_bytes();
    ident_char_len(encoded, 0) == encoded.len()
}

/// Whether `ch` may not appear literally in a KDL document.
pub(super) fn is_disallowed(ch: char) -> bool {
    let mut buf = [0u8; 4];
    let encoded = ch.encode_utf8(&mut buf).as_bytes();
    disallowed_len(encoded, 0) > 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn len_of(f: fn(&[u8], usize) -> usize, ch: char) -> usize {
        let text = ch.to_string();
        f(text.as_bytes(), 0)
    }

    #[test]
    fn spaces_are_the_spec_table() {
        let spaces = [
            '\u{9}', ' ', '\u{A0}', '\u{1680}', '\u{2000}', '\u{2001}', '\u{2002}', '\u{2003}',
            '\u{2004}', '\u{2005}', '\u{2006}', '\u{2007}', '\u{2008}', '\u{2009}', '\u{200A}',
            '\u{202F}', '\u{205F}', '\u{3000}',
        ];
        for ch in spaces {
            assert_eq!(len_of(space_len, ch), ch.len_utf8(), "{:?}", ch);
            assert!(!is_ident_char(ch));
        }
        for ch in ['\u{200B}', '\u{180E}', 'a', '\u{2028}', '\u{85}'] {
            assert_eq!(len_of(space_len, ch), 0, "{:?}", ch);
        }
    }

    #[test]
    fn newlines_are_the_spec_table() {
        for ch in [
            '\r', '\n', '\u{85}', '\u{B}', '\u{C}', '\u{2028}', '\u{2029}',
        ] {
            assert_eq!(len_of(newline_len, ch), ch.len_utf8(), "{:?}", ch);
            assert!(!is_ident_char(ch));
        }
        assert_eq!(newline_len(b"\r\nx", 0), 2);
        assert_eq!(newline_len(b"x", 0), 0);
    }

    #[test]
    fn disallowed_code_points() {
        for ch in [
            '\u{0}', '\u{8}', '\u{E}', '\u{1F}', '\u{7F}', '\u{200E}', '\u{200F}', '\u{202A}',
            '\u{202E}', '\u{2066}', '\u{2069}', '\u{FEFF}',
        ] {
            assert!(is_disallowed(ch), "{:?}", ch);
            assert!(!is_ident_char(ch));
        }
        for ch in ['\t', '\n', '\r', 'a', '\u{2065}', '\u{202F}', '\u{80}'] {
            assert!(!is_disallowed(ch), "{:?}", ch);
        }
    }

    #[test]
    fn identifier_characters() {
        for ch in "\\/(){};[]\"#= ".chars() {
            assert!(!is_ident_char(ch), "{:?}", ch);
        }
        for ch in "abc-_.,<>~!@$%^&*:'|?+`😁ノ\u{85}"
            .chars()
            .filter(|&c| c != '\u{85}')
        {
            assert!(is_ident_char(ch), "{:?}", ch);
        }
        assert_eq!(ident_end("foo123,bar weeee".as_bytes(), 0), 10);
        assert_eq!(ident_end("ノード\u{3000}x".as_bytes(), 0), 9);
        assert_eq!(ident_end("a\u{200E}b".as_bytes(), 0), 1);
    }

    #[test]
    fn string_body_skipping_stops_exactly_where_the_bytewise_scan_would() {
        let samples = [
            "plain text without stops at all, long enough for words\"",
            "a\\b",
            "0123456789abcdef\u{1}x",
            "0123456\u{7f}89",
            "01234567é9",
            "\"",
            "",
            "abcdefgh\n",
            "abc\u{2028}def ghijklmnop",
        ];
        for text in samples {
            let bytes = text.as_bytes();
            for start in 0..=bytes.len() {
                let expected = (start..bytes.len())
                    .find(|&pos| is_string_stop(bytes[pos]))
                    .unwrap_or(bytes.len());
                assert_eq!(
                    skip_string_body(bytes, start),
                    expected,
                    "{text:?} from {start}"
                );
            }
        }
    }

    #[test]
    fn all_space() {
        assert!(is_all_space(""));
        assert!(is_all_space(" \t\u{3000}"));
        assert!(!is_all_space(" x"));
    }
}
