//! Atoms: the single tokens a node is built from — strings in all their forms, numbers,
//! keywords — and `(type)` annotations around them.
//!
//! Each scanner reports its own errors. An atom that was read but is invalid (a bad number,
//! a bare `true`) is consumed and answered with [`Scanned::Invalid`], so the caller can go
//! on with the rest of the node.

use crate::diagnostic::{Code, Diagnostic};

use super::chars;
use super::cursor::Cursor;
use super::ident::{RESERVED, TokenStart, token_start};
use super::number::parse_number;
use super::string;
use super::tree::{CompactString, Ident, Value};

/// What kind of literal an atom was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum AtomKind {
    String,
    Number,
    Keyword,
}

/// A scanned literal and where it was.
#[derive(Debug, Clone)]
pub(super) struct Atom {
    pub(super) value: Value,
    pub(super) kind: AtomKind,
    pub(super) start: usize,
    pub(super) end: usize,
}

/// The result of trying to scan an atom.
#[derive(Debug)]
pub(super) enum Scanned {
    /// A valid atom.
    Atom(Atom),
    /// Something atom-like was consumed but is invalid; already reported.
    Invalid { start: usize, end: usize },
    /// Nothing at the cursor can start an atom; nothing was consumed or reported.
    Nothing,
}

/// A construct broke in a way the caller must recover from by skipping to the end of the
/// node; the problem was already reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Broken;

/// Scans the atom at the cursor.
pub(super) fn scan_atom(cursor: &mut Cursor<'_>) -> Scanned {
    let start = cursor.pos;
    let (value, kind) = match token_start(cursor.bytes, start) {
        TokenStart::Quoted => (Value::String(string::quoted(cursor)), AtomKind::String),
        TokenStart::Raw => (Value::String(string::raw(cursor)), AtomKind::String),
        TokenStart::Keyword => match keyword(cursor) {
            Some(value) => (value, AtomKind::Keyword),
            None => {
                return Scanned::Invalid {
                    start,
                    end: cursor.pos,
                };
            }
        },
        TokenStart::Number => match number(cursor) {
            Some(value) => (value, AtomKind::Number),
            None => {
                return Scanned::Invalid {
                    start,
                    end: cursor.pos,
                };
            }
        },
        TokenStart::Ident => match identifier(cursor) {
            Some(value) => (Value::String(value), AtomKind::String),
            None => {
                return Scanned::Invalid {
                    start,
                    end: cursor.pos,
                };
            }
        },
        TokenStart::Other => return Scanned::Nothing,
    };
    Scanned::Atom(Atom {
        value,
        kind,
        start,
        end: cursor.pos,
    })
}

/// Describes an atom for messages: "number `1`", "keyword `#true`".
pub(super) fn describe_atom(cursor: &Cursor<'_>, atom: &Atom) -> String {
    let text = truncate(&cursor.text[atom.start..atom.end]);
    match atom.kind {
        AtomKind::String => format!("string `{text}`"),
        AtomKind::Number => format!("number `{text}`"),
        AtomKind::Keyword => format!("keyword `{text}`"),
    }
}

/// At most 40 characters of `text`, for messages.
pub(super) fn truncate(text: &str) -> String {
    match text.char_indices().nth(40) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

/// Turns a string atom into an identifier.
pub(super) fn into_ident(cursor: &Cursor<'_>, atom: Atom) -> Ident {
    let span = cursor.span(atom.start, atom.end);
    match atom.value {
        Value::String(value) => Ident { value, span },
        _ => Ident {
            value: CompactString::new(&cursor.text[atom.start..atom.end]),
            span,
        },
    }
}

fn identifier(cursor: &mut Cursor<'_>) -> Option<CompactString> {
    let start = cursor.pos;
    cursor.pos = chars::ident_end(cursor.bytes, start);
    let word = &cursor.text[start..cursor.pos];
    if word.len() <= 5 && RESERVED.contains(&word) {
        let span = cursor.span(start, cursor.pos);
        let meaning = if matches!(word, "true" | "false") {
            "boolean"
        } else if word == "null" {
            "null value"
        } else {
            "number"
        };
        cursor.error(
            Code::SyntaxError,
            span,
            format!("`{word}` is a keyword and cannot be a bare string"),
            "reserved word",
            format!("write `#{word}` for the {meaning}, or `\"{word}\"` for the string"),
        );
        return None;
    }
    Some(CompactString::new(word))
}

fn number(cursor: &mut Cursor<'_>) -> Option<Value> {
    let start = cursor.pos;
    cursor.pos = chars::ident_end(cursor.bytes, start);
    let word = &cursor.text[start..cursor.pos];
    match parse_number(word) {
        Ok(value) => Some(value),
        Err(error) => {
            let span = cursor.span(start, cursor.pos);
            cursor.error(
                Code::InvalidNumber,
                span,
                format!("invalid number `{}`: {}", truncate(word), error.reason),
                "not a valid number",
                error.help,
            );
            None
        }
    }
}

fn keyword(cursor: &mut Cursor<'_>) -> Option<Value> {
    let start = cursor.pos;
    cursor.pos = chars::ident_end(cursor.bytes, start + 1);
    let value = match &cursor.text[start + 1..cursor.pos] {
        "true" => Value::Bool(true),
        "false" => Value::Bool(false),
        "null" => Value::Null,
        "inf" => Value::Float(f64::INFINITY),
        "-inf" => Value::Float(f64::NEG_INFINITY),
        "nan" => Value::Float(f64::NAN),
        word => {
            let message = if word.is_empty() {
                format!(
                    "expected a keyword after `#`, found {}",
                    cursor.describe(cursor.pos)
                )
            } else {
                format!("unknown keyword `#{}`", truncate(word))
            };
            let span = cursor.span(start, cursor.pos.max(start + 1));
            cursor.error(
                Code::SyntaxError,
                span,
                message,
                "not a keyword",
                "keywords are `#true`, `#false`, `#null`, `#inf`, `#-inf` and `#nan`; to write a \
                 string that starts with `#`, quote it",
            );
            return None;
        }
    };
    Some(value)
}

/// Parses a `(type)` annotation at the cursor (on `(`). `Ok(None)` means it was malformed
/// but skipped through its `)`; `Err(Broken)` means no `)` was found.
pub(super) fn parse_type(cursor: &mut Cursor<'_>) -> Result<Option<Box<Ident>>, Broken> {
    let open = cursor.pos;
    cursor.pos += 1;
    cursor.skip_node_space();
    let ty = match scan_atom(cursor) {
        Scanned::Atom(atom) if atom.kind == AtomKind::String => {
            Some(Box::new(into_ident(cursor, atom)))
        }
        Scanned::Atom(atom) => {
            let span = cursor.span(atom.start, atom.end);
            let found = describe_atom(cursor, &atom);
            let text = truncate(&cursor.text[atom.start..atom.end]);
            cursor.error(
                Code::SyntaxError,
                span,
                format!("a type annotation must be a string, found {found}"),
                "not a string",
                format!("quote it: `(\"{text}\")`"),
            );
            None
        }
        Scanned::Invalid { .. } => None,
        Scanned::Nothing if cursor.peek() == Some(b')') => {
            let span = cursor.span(open, cursor.pos + 1);
            cursor.error(
                Code::SyntaxError,
                span,
                "empty type annotation",
                "no type name",
                "write a type name inside the parentheses, like `(date)`, or remove them",
            );
            None
        }
        Scanned::Nothing => {
            let found = cursor.describe(cursor.pos);
            let span = cursor.char_span(cursor.pos);
            cursor.error(
                Code::SyntaxError,
                span,
                format!("expected a type name after `(`, found {found}"),
                "expected a type name",
                "a type annotation is a string in parentheses, like `(date)` or `(\"my type\")`",
            );
            None
        }
    };
    cursor.skip_node_space();
    if cursor.peek() == Some(b')') {
        cursor.pos += 1;
        return Ok(ty);
    }
    if ty.is_some() {
        let found = cursor.describe(cursor.pos);
        let span = cursor.char_span(cursor.pos);
        let opened = cursor.span(open, open + 1);
        cursor.report(
            Diagnostic::new(
                Code::SyntaxError,
                span,
                format!("expected `)` to close the type annotation, found {found}"),
            )
            .label("expected `)`")
            .with_label(opened, "type annotation opened here")
            .help("a type annotation holds exactly one string, like `(date)`"),
        );
    }
    // Look for the `)` on the rest of the line, so a typo inside costs one error.
    while !cursor.at_eof() && cursor.newline_len() == 0 {
        match cursor.peek() {
            Some(b')') => {
                cursor.pos += 1;
                return Ok(None);
            }
            Some(b'{' | b'}' | b';') => break,
            _ => cursor.pos = cursor.char_end(cursor.pos),
        }
    }
    Err(Broken)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::SourceId;

    fn scan(text: &str) -> (Scanned, Vec<(Code, String)>) {
        let mut cursor = Cursor::new(text, SourceId(0));
        let scanned = scan_atom(&mut cursor);
        let diagnostics = cursor
            .diagnostics
            .iter()
            .map(|d| (d.code, text[d.span.range()].to_owned()))
            .collect();
        (scanned, diagnostics)
    }

    fn atom(text: &str) -> (Value, AtomKind, usize) {
        match scan(text) {
            (Scanned::Atom(atom), d) if d.is_empty() => (atom.value, atom.kind, atom.end),
            other => panic!("{text}: {other:?}"),
        }
    }

    #[test]
    fn atoms() {
        assert_eq!(
            atom("foo bar"),
            (Value::String("foo".into()), AtomKind::String, 3)
        );
        assert_eq!(atom("#true;"), (Value::Bool(true), AtomKind::Keyword, 5));
        assert_eq!(atom("#null"), (Value::Null, AtomKind::Keyword, 5));
        assert_eq!(
            atom("#-inf"),
            (Value::Float(f64::NEG_INFINITY), AtomKind::Keyword, 5)
        );
        assert_eq!(atom("-12 "), (Value::Integer(-12), AtomKind::Number, 3));
        assert_eq!(
            atom("\"x\"="),
            (Value::String("x".into()), AtomKind::String, 3)
        );
        assert!(matches!(scan("{").0, Scanned::Nothing));
    }

    #[test]
    fn invalid_atoms_are_consumed_and_reported() {
        for (text, code, span) in [
            ("true x", Code::SyntaxError, "true"),
            ("-inf x", Code::SyntaxError, "-inf"),
            ("#yes x", Code::SyntaxError, "#yes"),
            ("# x", Code::SyntaxError, "#"),
            ("1.0.0 x", Code::InvalidNumber, "1.0.0"),
            ("0n x", Code::InvalidNumber, "0n"),
        ] {
            let (scanned, diagnostics) = scan(text);
            assert!(matches!(scanned, Scanned::Invalid { .. }), "{text}");
            assert_eq!(diagnostics, [(code, span.to_owned())], "{text}");
        }
    }

    #[test]
    fn type_annotations() {
        let mut cursor = Cursor::new("( \"a b\" )x", SourceId(0));
        let ty = parse_type(&mut cursor).unwrap().unwrap();
        assert_eq!((ty.value.as_str(), ty.span.range()), ("a b", 2..7));
        assert_eq!(cursor.pos, 9);
        for (text, pos) in [("()x", 2), ("( )x", 3), ("(1)x", 3), ("(a b)x", 5)] {
            let mut cursor = Cursor::new(text, SourceId(0));
            assert_eq!(parse_type(&mut cursor), Ok(None), "{text}");
            assert_eq!(cursor.pos, pos, "{text}");
            assert_eq!(cursor.diagnostics.len(), 1, "{text}");
        }
        let mut cursor = Cursor::new("(a\nb)", SourceId(0));
        assert_eq!(parse_type(&mut cursor), Err(Broken));
    }
}
