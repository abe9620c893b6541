//! Positions and diagnostics in the protocol's terms. Byte offsets become UTF-16 line and
//! column through [`LineIndex`](crate::source::LineIndex) (the one place that counts UTF-16);
//! atomic's [`Diagnostic`] becomes the protocol's, keeping code, severity, message, help and
//! labels, so the editor shows what `atomic check` prints.

use std::path::{Component, Path, PathBuf};

use tower_lsp_server::ls_types::{
    self as lsp, DiagnosticRelatedInformation, DiagnosticSeverity, DiagnosticTag, Location,
    NumberOrString, Uri,
};

use crate::diagnostic::{Code, Diagnostic, Severity};
use crate::source::{self, SourceFile, Sources, Span};

/// The protocol range of `span` in `file` (UTF-16 columns).
#[must_use]
pub fn range(file: &SourceFile, span: Span) -> lsp::Range {
    lsp::Range {
        start: position(file, span.start as usize),
        end: position(file, span.end as usize),
    }
}

/// The protocol position of byte `offset` in `file`.
#[must_use]
pub fn position(file: &SourceFile, offset: usize) -> lsp::Position {
    let source::Position { line, column } = file.lines.position_utf16(&file.text, offset);
    lsp::Position {
        line,
        character: column,
    }
}

/// The byte offset of a protocol position in `file` (clamped to the text).
#[must_use]
pub fn offset(file: &SourceFile, position: lsp::Position) -> usize {
    file.lines.offset_utf16(
        &file.text,
        source::Position {
            line: position.line,
            column: position.character,
        },
    )
}

/// The `file://` URI of `path` (made absolute against the current directory if relative).
#[must_use]
pub fn uri(path: &Path) -> Option<Uri> {
    if path.is_absolute() {
        Uri::from_file_path(normalize(path))
    } else {
        let absolute = std::env::current_dir().ok()?.join(path);
        Uri::from_file_path(normalize(&absolute))
    }
}

/// The file path of a `file://` URI, normalised (`.` and `..` removed).
#[must_use]
pub fn path(uri: &Uri) -> Option<PathBuf> {
    let is_file = uri.scheme().as_str().eq_ignore_ascii_case("file");
    if !is_file {
        return None;
    }
    uri.to_file_path().map(|path| normalize(&path))
}

/// Removes `.` components and folds `..` into the component before it, without touching the
/// disk, so `dir/./sub.kdl` and `dir/x/../sub.kdl` name the same open buffer.
#[must_use]
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                let popped =
                    matches!(out.components().next_back(), Some(Component::Normal(_))) && out.pop();
                if !popped {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// The protocol diagnostic for `diagnostic`. Its primary span must be in `file`; labels in
/// other files of `sources` become related information pointing there.
#[must_use]
pub fn diagnostic(sources: &Sources, diagnostic: &Diagnostic) -> lsp::Diagnostic {
    let file = sources.get(diagnostic.span.source);
    let mut message = diagnostic.message.clone();
    if let Some(help) = &diagnostic.help {
        message.push_str("\nhelp: ");
        message.push_str(help);
    }
    let primary = diagnostic
        .label
        .as_ref()
        .map(|label| (diagnostic.span, label.as_str()));
    let labels = diagnostic
        .labels
        .iter()
        .map(|label| (label.span, label.message.as_str()));
    let related: Vec<DiagnosticRelatedInformation> = primary
        .into_iter()
        .chain(labels)
        .filter_map(|(span, message)| {
            let file = sources.get(span.source);
            Some(DiagnosticRelatedInformation {
                location: Location {
                    uri: uri(&file.path)?,
                    range: range(file, span),
                },
                message: message.to_owned(),
            })
        })
        .collect();
    lsp::Diagnostic {
        range: range(file, diagnostic.span),
        severity: Some(severity(diagnostic.severity)),
        code: Some(NumberOrString::String(diagnostic.code.to_string())),
        code_description: None,
        source: Some("atomic".to_owned()),
        message,
        related_information: (!related.is_empty()).then_some(related),
        tags: is_unnecessary(diagnostic.code).then(|| vec![DiagnosticTag::UNNECESSARY]),
        data: None,
    }
}

fn severity(severity: Severity) -> DiagnosticSeverity {
    match severity {
        Severity::Error => DiagnosticSeverity::ERROR,
        Severity::Warning => DiagnosticSeverity::WARNING,
        Severity::Note => DiagnosticSeverity::INFORMATION,
    }
}

/// Unused declarations are shown faded, as editors do for unused code.
fn is_unnecessary(code: Code) -> bool {
    matches!(
        code,
        Code::UnusedInput | Code::UnusedProvider | Code::UnusedStateField
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_count_utf16_units_and_ignore_crlf() {
        let mut sources = Sources::new();
        let text = "a \"é🎉\" x\r\nb";
        let id = sources.add("t.kdl", text);
        let file = sources.get(id);
        let x = text.find('x').unwrap();
        let span = Span::new(id, x, x + 1);
        let range = range(file, span);
        // `a "` is 3 units, `é` 1, `🎉` 2, `" ` 2.
        assert_eq!(range.start, lsp::Position::new(0, 8));
        assert_eq!(offset(file, range.start), x);
        let b = text.find('b').unwrap();
        assert_eq!(position(file, b), lsp::Position::new(1, 0));
        // Past the end of a CRLF line: before the `\r`.
        assert_eq!(offset(file, lsp::Position::new(0, 50)), x + 1);
    }

    #[test]
    fn paths_normalise_and_round_trip() {
        assert_eq!(
            normalize(Path::new("/a/b/./c/../d.kdl")),
            PathBuf::from("/a/b/d.kdl")
        );
        assert_eq!(normalize(Path::new("../x")), PathBuf::from("../x"));
        let uri = uri(Path::new("/tmp/a b/é.kdl")).unwrap();
        assert_eq!(uri.as_str(), "file:///tmp/a%20b/%C3%A9.kdl");
        assert_eq!(path(&uri).unwrap(), PathBuf::from("/tmp/a b/é.kdl"));
    }
}
