//! The terminal format: miette's graphical reports, one per diagnostic.

use std::fmt;

use miette::{
    GraphicalReportHandler, GraphicalTheme, LabeledSpan, MietteError, MietteSpanContents,
    SourceCode, SourceSpan, SpanContents,
};

use crate::diagnostic::{Diagnostic, Severity};
use crate::source::{Sources, Span};

/// How to draw reports.
#[derive(Clone, Copy, Debug)]
pub struct Style {
    /// Use colours and unicode art.
    pub color: bool,
    /// Wrap at this width.
    pub width: usize,
}

impl Style {
    /// Colourless unicode at a fixed width, for snapshots and pipes.
    #[must_use]
    pub fn plain(width: usize) -> Self {
        Self {
            color: false,
            width,
        }
    }
}

/// Every diagnostic rendered, in order, separated by blank lines.
#[must_use]
pub fn render(sources: &Sources, diagnostics: &[Diagnostic], style: Style) -> String {
    let theme = if style.color {
        GraphicalTheme::unicode()
    } else {
        GraphicalTheme::unicode_nocolor()
    };
    let handler = GraphicalReportHandler::new_themed(theme)
        .with_width(style.width)
        .with_links(false);
    let mut out = String::new();
    for diagnostic in diagnostics {
        let report = Report::new(sources, diagnostic);
        if handler.render_report(&mut out, &report).is_err() {
            // Rendering into a String cannot fail for I/O reasons; fall back to one line.
            out.push_str(&diagnostic.message);
        }
        out.push('\n');
    }
    out
}

/// A one-line summary: "2 errors, 1 warning in 3 files".
#[must_use]
pub fn summary(diagnostics: &[Diagnostic], files: usize) -> String {
    let count = |severity| {
        diagnostics
            .iter()
            .filter(|d| d.severity == severity)
            .count()
    };
    let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    format!(
        "{}, {} in {}",
        plural(count(Severity::Error), "error"),
        plural(count(Severity::Warning), "warning"),
        plural(files, "file")
    )
}

/// A diagnostic with its file attached, as miette wants it.
struct Report<'a> {
    diagnostic: &'a Diagnostic,
    source: CharColumns,
    /// Labels in other files, each drawn as a note with its own file after the report
    /// (miette draws one file per report).
    elsewhere: Vec<Elsewhere>,
}

impl<'a> Report<'a> {
    fn new(sources: &Sources, diagnostic: &'a Diagnostic) -> Self {
        let elsewhere = diagnostic
            .labels
            .iter()
            .filter(|label| label.span.source != diagnostic.span.source)
            .map(|label| Elsewhere {
                message: label.message.clone(),
                span: label.span,
                source: CharColumns::of(sources, label.span.source),
            })
            .collect();
        Self {
            diagnostic,
            source: CharColumns::of(sources, diagnostic.span.source),
            elsewhere,
        }
    }
}

/// A label in another file than its diagnostic's.
struct Elsewhere {
    message: String,
    span: crate::source::Span,
    source: CharColumns,
}

impl fmt::Debug for Elsewhere {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Elsewhere")
            .field("message", &self.message)
            .finish_non_exhaustive()
    }
}

impl fmt::Display for Elsewhere {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Elsewhere {}

impl miette::Diagnostic for Elsewhere {
    fn severity(&self) -> Option<miette::Severity> {
        Some(miette::Severity::Advice)
    }

    fn source_code(&self) -> Option<&dyn SourceCode> {
        Some(&self.source)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        Some(Box::new(std::iter::once(
            LabeledSpan::new_primary_with_span(None, self.span),
        )))
    }
}

/// A named file whose columns count characters, as people (and the JSON and SARIF output)
/// do: miette's own count bytes, so `file:line:col` would disagree after `é` or `☃`.
struct CharColumns {
    name: String,
    text: String,
}

impl CharColumns {
    fn of(sources: &Sources, id: crate::source::SourceId) -> Self {
        let file = sources.get(id);
        Self {
            name: file.path.display().to_string(),
            text: file.text.clone(),
        }
    }
}

impl SourceCode for CharColumns {
    fn read_span<'a>(
        &'a self,
        span: &SourceSpan,
        context_lines_before: usize,
        context_lines_after: usize,
    ) -> Result<Box<dyn SpanContents<'a> + 'a>, MietteError> {
        let contents = self
            .text
            .read_span(span, context_lines_before, context_lines_after)?;
        let start = contents.span().offset().min(self.text.len());
        let line_start = self.text[..start].rfind('\n').map_or(0, |at| at + 1);
        let column = self.text.get(line_start..start).map_or(0, |before| {
            // A byte-order mark takes no column, as in every other output.
            before.chars().count() - usize::from(before.starts_with('\u{feff}'))
        });
        Ok(Box::new(
            MietteSpanContents::new_named(
                self.name.clone(),
                contents.data(),
                *contents.span(),
                contents.line(),
                column,
                contents.line_count(),
            )
            .with_language("kdl"),
        ))
    }
}

impl fmt::Debug for Report<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Report")
            .field("diagnostic", self.diagnostic)
            .finish_non_exhaustive()
    }
}

impl fmt::Display for Report<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.diagnostic.message)
    }
}

impl std::error::Error for Report<'_> {}

impl miette::Diagnostic for Report<'_> {
    fn code<'b>(&'b self) -> Option<Box<dyn fmt::Display + 'b>> {
        Some(Box::new(self.diagnostic.code))
    }

    fn severity(&self) -> Option<miette::Severity> {
        Some(match self.diagnostic.severity {
            Severity::Error => miette::Severity::Error,
            Severity::Warning => miette::Severity::Warning,
            Severity::Note => miette::Severity::Advice,
        })
    }

    fn help<'b>(&'b self) -> Option<Box<dyn fmt::Display + 'b>> {
        self.diagnostic
            .help
            .as_ref()
            .map(|help| Box::new(help) as Box<dyn fmt::Display>)
    }

    fn source_code(&self) -> Option<&dyn SourceCode> {
        Some(&self.source)
    }

    fn related<'b>(&'b self) -> Option<Box<dyn Iterator<Item = &'b dyn miette::Diagnostic> + 'b>> {
        if self.elsewhere.is_empty() {
            return None;
        }
        Some(Box::new(
            self.elsewhere
                .iter()
                .map(|label| label as &dyn miette::Diagnostic),
        ))
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        let text = self.source.text.as_str();
        let (span, label) = capped(text, self.diagnostic.span, self.diagnostic.label.clone());
        let primary = LabeledSpan::new_primary_with_span(label, span);
        // miette draws one file per report; labels elsewhere are drawn by `related`.
        let secondary = self
            .diagnostic
            .labels
            .iter()
            .filter(|label| label.span.source == self.diagnostic.span.source)
            .map(|label| {
                let (span, message) = capped(text, label.span, Some(label.message.clone()));
                LabeledSpan::new_with_span(message, span)
            });
        Some(Box::new(std::iter::once(primary).chain(secondary)))
    }
}

/// The most source lines one label echoes. A longer span (a block of a thousand lines) is
/// drawn as its first line, its label saying how many it leaves out, as rustc does: the
/// terminal shows where, not the whole text again.
const MAX_ECHOED_LINES: usize = 6;

/// `span` and its label as drawn: cut to its first line when it covers more than
/// [`MAX_ECHOED_LINES`].
fn capped(text: &str, span: Span, label: Option<String>) -> (Span, Option<String>) {
    let (start, end) = (span.start as usize, span.end as usize);
    let Some(covered) = text.get(start..end.min(text.len())) else {
        return (span, label);
    };
    let lines = covered.lines().count();
    if lines <= MAX_ECHOED_LINES {
        return (span, label);
    }
    let first_line = covered.find('\n').unwrap_or(covered.len());
    let more = format!("(and {} more lines)", lines - 1);
    let label = Some(match label {
        Some(label) => format!("{label} {more}"),
        None => more,
    });
    (Span::new(span.source, start, start + first_line), label)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostic::Code;
    use crate::source::SourceId;

    #[test]
    fn a_label_over_many_lines_echoes_its_first_line_only() {
        let text: String = (0..1_000).map(|n| format!("line {n} {{\n")).collect();
        let mut sources = Sources::new();
        let id = sources.add("big.kdl", text.clone());
        assert_eq!(id, SourceId(0));
        let diagnostic = Diagnostic::new(Code::EmptyBlock, Span::new(id, 0, text.len()), "big")
            .label("the whole block");
        let out = render(&sources, &[diagnostic], Style::plain(100));
        assert!(out.lines().count() < 20, "{out}");
        assert!(
            out.contains("the whole block (and 999 more lines)"),
            "{out}"
        );
        // A short span is drawn whole.
        let (span, label) = capped(&text, Span::new(id, 0, 20), Some("two".into()));
        assert_eq!(
            (span, label.as_deref()),
            (Span::new(id, 0, 20), Some("two"))
        );
    }
}
