//! JSON text written straight from a typed payload, every string in it (object keys too)
//! passed through a scrub first — the store's redaction of secrets without building a
//! `serde_json::Value` to walk. The text is what `serde_json::to_value` then `to_string`
//! would give with each string scrubbed (the build keeps objects in insertion order, so a
//! struct's fields come out in the same order either way).

use std::borrow::Cow;
use std::io;

use serde::Serialize;
use serde_json::ser::{CharEscape, CompactFormatter, Formatter, Serializer};

/// Replaces what must not be stored in a string (`Cow::Borrowed` when nothing does).
pub type Scrub<'s> = &'s (dyn Fn(&str) -> Cow<'_, str> + Sync);

/// `payload` as compact JSON text, its strings scrubbed.
///
/// # Panics
/// If `payload` cannot be JSON (a map with non-string keys), which store payloads never are.
#[must_use]
pub(super) fn to_text<T: Serialize + ?Sized>(payload: &T, scrub: Scrub<'_>) -> String {
    let mut out = Vec::with_capacity(128);
    let mut serializer = Serializer::with_formatter(
        &mut out,
        Scrubbing {
            scrub,
            string: String::new(),
            open: false,
        },
    );
    payload
        .serialize(&mut serializer)
        .expect("store payloads serialise to JSON");
    String::from_utf8(out).expect("serde_json writes UTF-8")
}

/// A compact formatter that holds each string back until it ends, then writes it scrubbed.
struct Scrubbing<'s> {
    scrub: Scrub<'s>,
    /// The string being written, unescaped (one buffer, reused for every string).
    string: String,
    /// Whether a string is being written.
    open: bool,
}

/// Writes a scalar into the open string (a map key such as `1` or `true`), or as usual.
macro_rules! scalar {
    ($($name:ident: $ty:ty),* $(,)?) => {$(
        fn $name<W: ?Sized + io::Write>(&mut self, writer: &mut W, value: $ty) -> io::Result<()> {
            if !self.open {
                return CompactFormatter.$name(writer, value);
            }
            let mut text = Vec::new();
            CompactFormatter.$name(&mut text, value)?;
            self.string.push_str(&String::from_utf8_lossy(&text));
            Ok(())
        }
    )*};
}

impl Formatter for Scrubbing<'_> {
    scalar!(
        write_bool: bool, write_i8: i8, write_i16: i16, write_i32: i32, write_i64: i64,
        write_i128: i128, write_u8: u8, write_u16: u16, write_u32: u32, write_u64: u64,
        write_u128: u128, write_f32: f32, write_f64: f64, write_number_str: &str,
    );

    fn begin_string<W: ?Sized + io::Write>(&mut self, _writer: &mut W) -> io::Result<()> {
        self.string.clear();
        self.open = true;
        Ok(())
    }

    fn write_string_fragment<W: ?Sized + io::Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        if !self.open {
            return writer.write_all(fragment.as_bytes());
        }
        self.string.push_str(fragment);
        Ok(())
    }

    fn write_char_escape<W: ?Sized + io::Write>(
        &mut self,
        writer: &mut W,
        escape: CharEscape,
    ) -> io::Result<()> {
        if !self.open {
            return CompactFormatter.write_char_escape(writer, escape);
        }
        self.string.push(match escape {
            CharEscape::Quote => '"',
            CharEscape::ReverseSolidus => '\\',
            CharEscape::Solidus => '/',
            CharEscape::Backspace => '\u{8}',
            CharEscape::FormFeed => '\u{c}',
            CharEscape::LineFeed => '\n',
            CharEscape::CarriageReturn => '\r',
            CharEscape::Tab => '\t',
            CharEscape::AsciiControl(byte) => char::from(byte),
        });
        Ok(())
    }

    fn end_string<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.open = false;
        let clean = (self.scrub)(&self.string);
        serde_json::to_writer(writer, clean.as_ref()).map_err(io::Error::other)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde_json::json;

    use super::*;

    fn hide_secret(text: &str) -> Cow<'_, str> {
        if text.contains("hunter2") {
            Cow::Owned(text.replace("hunter2", "[REDACTED]"))
        } else {
            Cow::Borrowed(text)
        }
    }

    #[derive(Serialize)]
    struct Typed {
        zeta: u32,
        text: String,
        keys: BTreeMap<String, bool>,
        numbered: BTreeMap<u32, f64>,
        nothing: Option<u8>,
    }

    #[test]
    fn the_text_is_what_a_value_would_give_with_strings_scrubbed() {
        let typed = Typed {
            zeta: 7,
            text: "a \"quoted\" hunter2\n\u{1}é/\\".to_owned(),
            keys: BTreeMap::from([("key hunter2".to_owned(), true), ("b".to_owned(), false)]),
            numbered: BTreeMap::from([(3, 1.5), (10, -0.25)]),
            nothing: None,
        };
        let text = to_text(&typed, &hide_secret);
        let mut value = serde_json::to_value(&typed).unwrap();
        let expected = serde_json::to_string(&value)
            .unwrap()
            .replace("hunter2", "[REDACTED]");
        assert_eq!(text, expected);
        // And it reads back as the scrubbed value.
        value["text"] = json!("a \"quoted\" [REDACTED]\n\u{1}é/\\");
        let back: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back["text"], value["text"]);
        assert_eq!(back["keys"]["key [REDACTED]"], json!(true));
        assert_eq!(back["numbered"]["10"], json!(-0.25));
    }

    #[test]
    fn values_are_written_as_their_text() {
        let value = json!({"a": [1, 2.5, null, true, "x hunter2"], "hunter2": {}});
        assert_eq!(
            to_text(&value, &hide_secret),
            r#"{"a":[1,2.5,null,true,"x [REDACTED]"],"[REDACTED]":{}}"#
        );
    }
}
