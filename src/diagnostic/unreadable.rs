//! Diagnostics for files that cannot be read: the workflow itself, or a file it refers to
//! (a schema, a called workflow, a tool file, a discovered definition), reported at the
//! reference with the operating system's reason.

use std::path::Path;

use super::{Code, Diagnostic};
use crate::source::{NotUtf8, ReadError, Span};

impl Diagnostic {
    /// `what` at `path`, referred to at `span`, could not be read. A file that is not UTF-8
    /// is `not-utf8` (with the line and column of its first bad byte); anything else is
    /// `unreadable-file` with the reason.
    #[must_use]
    pub fn unreadable(span: Span, what: &str, path: &Path, error: &ReadError) -> Self {
        let shown = path.display();
        match error {
            ReadError::NotUtf8(bad) => {
                let (line, column) = line_column(bad);
                Self::new(
                    Code::InvalidEncoding,
                    span,
                    format!(
                        "{what} `{shown}` is not UTF-8: its first bad byte is at line {line}, column {column}"
                    ),
                )
                .label(error.to_string())
                .help(utf8_help(bad))
            }
            _ => Self::new(
                Code::UnreadableFile,
                span,
                format!("cannot read {what} `{shown}`: {error}"),
            )
            .label("cannot be read")
            .help(match error {
                ReadError::IsDirectory => "point it at a file, not a directory".to_owned(),
                ReadError::PermissionDenied => {
                    format!("give atomic read permission (`chmod u+r {shown}`)")
                }
                ReadError::NotFound => "fix the path, or create the file".to_owned(),
                _ => "check that the file can be read".to_owned(),
            }),
        }
    }

    /// The workflow file itself is not UTF-8: the diagnostic sits on its first bad byte,
    /// in `span` of the lossily decoded text.
    #[must_use]
    pub fn not_utf8(span: Span, bad: &NotUtf8) -> Self {
        Self::new(Code::InvalidEncoding, span, "this file is not UTF-8 text")
            .label(match bad.looks_like {
                Some(encoding) => {
                    format!("the first byte that is not UTF-8 (it looks like {encoding})")
                }
                None => "the first byte that is not UTF-8".to_owned(),
            })
            .help(utf8_help(bad))
    }
}

fn utf8_help(bad: &NotUtf8) -> String {
    let from = match bad.looks_like {
        Some(encoding) if encoding.starts_with("UTF-16") => "utf-16",
        _ => "latin1",
    };
    format!(
        "workflows and the files they use are UTF-8: save it as UTF-8 in your editor, or convert it (`iconv -f {from} -t utf-8`)"
    )
}

/// The 1-based line and column (in characters) of the first bad byte.
fn line_column(bad: &NotUtf8) -> (usize, usize) {
    let before = &bad.text[..bad.offset.min(bad.text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before
        .rsplit('\n')
        .next()
        .map_or(0, |last| last.chars().count())
        + 1;
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::SourceId;

    #[test]
    fn names_the_reason_and_the_place_of_the_bad_byte() {
        let span = Span::new(SourceId(0), 3, 9);
        let bad = NotUtf8::new(b"ok\nd\xe9j\xe0", 4);
        let error = ReadError::NotUtf8(bad);
        let diagnostic = Diagnostic::unreadable(span, "schema", Path::new("s.json"), &error);
        assert_eq!(diagnostic.code, Code::InvalidEncoding);
        assert_eq!(
            diagnostic.message,
            "schema `s.json` is not UTF-8: its first bad byte is at line 2, column 2"
        );
        assert!(diagnostic.label.unwrap().contains("Latin-1"));
        let directory =
            Diagnostic::unreadable(span, "schema", Path::new("dir"), &ReadError::IsDirectory);
        assert_eq!(directory.code, Code::UnreadableFile);
        assert_eq!(
            directory.message,
            "cannot read schema `dir`: it is a directory, not a file"
        );
    }
}
