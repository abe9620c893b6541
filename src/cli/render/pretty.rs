//! The terminal format: miette's graphical reports, one per diagnostic.

use std::fmt;

use miette::{GraphicalReportHandler, GraphicalTheme, LabeledSpan, NamedSource, SourceCode};

use crate::diagnostic::{Diagnostic, Severity};
use crate::source::Sources;

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
    source: NamedSource<String>,
}

impl<'a> Report<'a> {
    fn new(sources: &Sources, diagnostic: &'a Diagnostic) -> Self {
        let file = sources.get(diagnostic.span.source);
        let source = NamedSource::new(file.path.display().to_string(), file.text.clone())
            .with_language("kdl");
        Self { diagnostic, source }
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

    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        let primary =
            LabeledSpan::new_primary_with_span(self.diagnostic.label.clone(), self.diagnostic.span);
        // miette draws one file per report; labels elsewhere are listed in `related`.
        let secondary = self
            .diagnostic
            .labels
            .iter()
            .filter(|label| label.span.source == self.diagnostic.span.source)
            .map(|label| LabeledSpan::new_with_span(Some(label.message.clone()), label.span));
        Some(Box::new(std::iter::once(primary).chain(secondary)))
    }
}
