//! Diagnostics are data: every stage reports [`Diagnostic`] values (code, severity, spans,
//! message, help), and every renderer — terminal, JSON, SARIF, the language server — reads
//! the same value. Stages return an [`Outcome`]: their (possibly partial) value plus
//! everything they found, so one run reports every problem.

mod code;
mod explain;
mod fix;
pub mod reference;
mod suggest;
mod unreadable;

pub use code::{Code, Severity};
pub use explain::Explanation;
pub use fix::{Edit, Fix};
pub use suggest::{did_you_mean, expected_one_of};

use serde::Serialize;

use crate::source::Span;

/// A secondary location with a short note, e.g. "first defined here".
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Label {
    /// Where.
    pub span: Span,
    /// What is there, lowercase, no trailing period.
    pub message: String,
}

/// One problem found in a workflow.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    /// The stable rule code.
    pub code: Code,
    /// Error, warning or note; starts as the code's default, configuration may change it.
    pub severity: Severity,
    /// What is wrong, lowercase, names in backticks, no trailing period.
    pub message: String,
    /// Where it is wrong.
    pub span: Span,
    /// What is at `span`, shown under it.
    pub label: Option<String>,
    /// Other places that explain the problem.
    pub labels: Vec<Label>,
    /// What to do about it.
    pub help: Option<String>,
    /// The repair, when there is an obvious one (a misspelt name's closest match); boxed,
    /// as most diagnostics have none.
    pub fix: Option<Box<Fix>>,
}

impl Diagnostic {
    /// `duplicate-id`: `<what> \`<name>\` is declared twice`, pointing at both places. The
    /// caller adds the help, which depends on where the two are.
    #[must_use]
    pub fn declared_twice(what: &str, name: &str, again: Span, first: Span) -> Self {
        Self::new(
            Code::DuplicateId,
            again,
            format!("{what} `{name}` is declared twice"),
        )
        .label("declared again here")
        .with_label(first, "first declared here")
    }

    /// A diagnostic with the code's default severity.
    pub fn new(code: Code, span: Span, message: impl Into<String>) -> Self {
        Self {
            code,
            severity: code.default_severity(),
            message: message.into(),
            span,
            label: None,
            labels: Vec::new(),
            help: None,
            fix: None,
        }
    }

    /// Sets the primary label.
    #[must_use]
    pub fn label(mut self, label: impl Into<String>) -> Self {
        self.label = Some(label.into());
        self
    }

    /// Adds a secondary label.
    #[must_use]
    pub fn with_label(mut self, span: Span, message: impl Into<String>) -> Self {
        self.labels.push(Label {
            span,
            message: message.into(),
        });
        self
    }

    /// Sets the help text.
    #[must_use]
    pub fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    /// Proposes replacing the name at the diagnostic's span with `name` (a "did you mean"
    /// suggestion, as data).
    #[must_use]
    pub fn replace_with(mut self, name: impl Into<String>) -> Self {
        self.fix = Some(Box::new(Fix::rename(self.span, name)));
        self
    }

    /// Like [`Diagnostic::replace_with`], when there is a suggestion.
    #[must_use]
    pub fn maybe_replace_with(self, name: Option<String>) -> Self {
        match name {
            Some(name) => self.replace_with(name),
            None => self,
        }
    }

    /// Sets the repair.
    #[must_use]
    pub fn with_fix(mut self, fix: Fix) -> Self {
        self.fix = Some(Box::new(fix));
        self
    }

    /// Sets the repair, when there is one.
    #[must_use]
    pub fn maybe_fix(self, fix: Option<Fix>) -> Self {
        match fix {
            Some(fix) => self.with_fix(fix),
            None => self,
        }
    }

    /// Sets the help text if there is one.
    #[must_use]
    pub fn maybe_help(mut self, help: Option<String>) -> Self {
        if help.is_some() {
            self.help = help;
        }
        self
    }

    /// Overrides the severity.
    #[must_use]
    pub fn severity(mut self, severity: Severity) -> Self {
        self.severity = severity;
        self
    }

    /// Whether this diagnostic stops compilation.
    #[must_use]
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

/// A stage's result: its value — complete, partial after recovery, or none — and every
/// diagnostic it produced.
#[derive(Debug)]
pub struct Outcome<T> {
    /// What the stage built. `Some` even when there are errors if the stage recovered.
    pub value: Option<T>,
    /// Everything it found, in the order found.
    pub diagnostics: Vec<Diagnostic>,
}

impl<T> Outcome<T> {
    /// A value and its diagnostics.
    pub fn new(value: Option<T>, diagnostics: Vec<Diagnostic>) -> Self {
        Self { value, diagnostics }
    }

    /// Whether any diagnostic is an error.
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }

    /// The value only if no diagnostic is an error.
    pub fn clean_value(self) -> Option<T> {
        if self.has_errors() { None } else { self.value }
    }
}
