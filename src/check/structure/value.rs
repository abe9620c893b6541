//! Checks one value against its declared type, choices and bounds.

use crate::check::grammar::ValueKind;
use crate::check::value::{Version, parse_duration};
use crate::diagnostic::{Code, Diagnostic, did_you_mean, expected_one_of};
use crate::syntax::kdl::{Entry, Value};

/// What a value must be: the spec fields shared by arguments and properties.
pub(super) struct Expect<'s> {
    /// The type.
    pub(super) kind: ValueKind,
    /// Allowed values of an enum.
    pub(super) choices: &'s [String],
    /// Bounds of a number.
    pub(super) min: Option<f64>,
    /// A number it must be larger than.
    pub(super) above: Option<f64>,
    /// Bounds of a number.
    pub(super) max: Option<f64>,
    /// How to name the value in messages: "`max`", "the `id` of `agent`".
    pub(super) what: What<'s>,
}

/// How a value is named in messages. Rendered only when a message is written: the
/// structure pass checks every value of every node, and almost all are valid.
#[derive(Clone, Copy)]
pub(super) enum What<'s> {
    /// A property: "`max`".
    Property(&'s str),
    /// A positional argument of a node: "the `id` of `agent`".
    Argument {
        /// The argument's name.
        name: &'s str,
        /// The node's name.
        node: &'s str,
    },
}

impl std::fmt::Display for What<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Property(name) => write!(f, "`{name}`"),
            Self::Argument { name, node } => write!(f, "the `{name}` of `{node}`"),
        }
    }
}

/// Whether `entry` is a valid value; otherwise reports why.
pub(super) fn check_value(expect: &Expect<'_>, entry: &Entry, out: &mut Vec<Diagnostic>) -> bool {
    match problem(expect, entry) {
        None => true,
        Some(diagnostic) => {
            out.push(diagnostic);
            false
        }
    }
}

fn problem(expect: &Expect<'_>, entry: &Entry) -> Option<Diagnostic> {
    let span = entry.value_span;
    let what = &expect.what;
    let wrong_type = || {
        Diagnostic::new(
            Code::WrongType,
            span,
            format!("{what} must be {}", article(expect.kind)),
        )
        .label(format!("this is {}", describe(&entry.value)))
        .help(example(expect.kind, expect.choices))
    };
    match (&entry.value, expect.kind) {
        (_, ValueKind::Any) => None,
        (Value::Bool(_), ValueKind::Boolean) => None,
        (Value::Integer(n), ValueKind::Integer) => bounds(expect, *n as f64, span),
        (Value::Integer(n), ValueKind::Number) => bounds(expect, *n as f64, span),
        (Value::Float(x), ValueKind::Number) => {
            if x.is_finite() {
                bounds(expect, *x, span)
            } else {
                Some(
                    Diagnostic::new(Code::InvalidValue, span, format!("{what} must be finite"))
                        .label("not a finite number")
                        .help("write a decimal number, e.g. `0.5`"),
                )
            }
        }
        (Value::String(text), kind) if kind.is_string() => string(expect, text, span),
        _ => Some(wrong_type()),
    }
}

fn string(expect: &Expect<'_>, text: &str, span: crate::source::Span) -> Option<Diagnostic> {
    let what = &expect.what;
    match expect.kind {
        ValueKind::Duration => match parse_duration(text) {
            Err(reason) => Some(
                Diagnostic::new(Code::InvalidDuration, span, format!("invalid duration `{text}` for {what}"))
                    .label(reason)
                    .help("write a number and a unit (`ms`, `s`, `m`, `h`, `d`), largest first, e.g. `\"30s\"` or `\"1m30s\"`"),
            ),
            // A duration's `min` is in milliseconds: a zero timeout fails every attempt
            // before it starts.
            Ok(duration) if expect.min.is_some_and(|min| (duration.0 as f64) < min) => Some(
                Diagnostic::new(Code::InvalidValue, span, format!("{what} must be longer than `{text}`"))
                    .label("too short to ever finish")
                    .help("a zero timeout fails every attempt before it starts: write how long it may take, e.g. `\"30s\"`, or leave it out"),
            ),
            Ok(_) => None,
        },
        ValueKind::Semver => Version::parse(text).err().map(|reason| {
            Diagnostic::new(Code::InvalidVersion, span, format!("invalid version `{text}` for {what}"))
                .label(reason)
                .help("write a semantic version, e.g. `\"1.2.0\"` or `\"2.0.0-rc.1\"`")
        }),
        ValueKind::Regex => regex_syntax::Parser::new().parse(text).err().map(|error| {
            let reason = error.to_string();
            let reason = reason
                .lines()
                .rev()
                .find(|line| line.starts_with("error:"))
                .map_or("does not compile", |line| line.trim_start_matches("error:").trim());
            Diagnostic::new(Code::InvalidRegex, span, format!("invalid regular expression for {what}"))
                .label(reason.to_owned())
                .help("fix the pattern (Rust `regex` syntax; escape literal characters like `\\.` and `\\(`)")
        }),
        ValueKind::Enum if !expect.choices.iter().any(|choice| choice == text) => {
            let suggestion = did_you_mean(text, expect.choices.iter().map(String::as_str));
            let expected = format!("expected one of {}", expected_one_of(expect.choices));
            Some(
                Diagnostic::new(Code::InvalidValue, span, format!("`{text}` is not a valid value for {what}"))
                    .label("not an allowed value")
                    .help(match suggestion {
                        Some(near) => format!("did you mean `{near}`? {expected}"),
                        None => expected,
                    })
                    .maybe_replace_with(suggestion.map(str::to_owned)),
            )
        }
        _ => None,
    }
}

fn bounds(expect: &Expect<'_>, value: f64, span: crate::source::Span) -> Option<Diagnostic> {
    let what = &expect.what;
    let (message, help) = if let Some(min) = expect.min.filter(|min| value < *min) {
        (
            format!("{what} must be at least {min}"),
            format!("write a value of {min} or more"),
        )
    } else if let Some(above) = expect.above.filter(|above| value <= *above) {
        (
            format!("{what} must be more than {above}"),
            if above == 0.0 {
                "a budget of zero or less stops every call before it starts: write the most it may spend, e.g. `0.5`, or leave it out".to_owned()
            } else {
                format!("write a value above {above}")
            },
        )
    } else if let Some(max) = expect.max.filter(|max| value > *max) {
        (
            format!("{what} must be at most {max}"),
            format!("write a value of {max} or less"),
        )
    } else {
        return None;
    };
    Some(
        Diagnostic::new(Code::InvalidValue, span, message)
            .label("out of range")
            .help(help),
    )
}

/// "an integer", "a duration", …
fn article(kind: ValueKind) -> &'static str {
    match kind {
        ValueKind::Integer => "an integer",
        ValueKind::Number => "a number",
        ValueKind::Boolean => "a boolean",
        ValueKind::Duration => "a duration string",
        ValueKind::Semver => "a version string",
        ValueKind::Regex => "a regular expression string",
        ValueKind::Enum => "one of its choices, as a string",
        ValueKind::NodeRef => "a node id string",
        ValueKind::ProviderRef => "a provider name string",
        ValueKind::FieldRef => "a state field name string",
        ValueKind::Expr => "an expression string",
        ValueKind::Template => "a template string",
        ValueKind::Path => "a path string",
        ValueKind::String | ValueKind::Any => "a string",
    }
}

fn example(kind: ValueKind, choices: &[String]) -> String {
    match kind {
        ValueKind::Integer => "write a whole number without quotes, e.g. `3`".to_owned(),
        ValueKind::Number => "write a number without quotes, e.g. `0.5`".to_owned(),
        ValueKind::Boolean => "write `#true` or `#false`".to_owned(),
        ValueKind::Duration => "write a quoted duration, e.g. `\"30s\"`".to_owned(),
        ValueKind::Enum => format!("write one of {} in quotes", expected_one_of(choices)),
        _ => "write the value in quotes, e.g. `\"text\"`".to_owned(),
    }
}

/// How a value is described in a label: "a string", "the integer 5", …
pub(super) fn describe(value: &Value) -> String {
    match value {
        Value::String(_) => "a string".to_owned(),
        Value::Integer(n) => format!("the integer {n}"),
        Value::Float(x) => format!("the number {x}"),
        Value::Bool(b) => format!("#{b}"),
        Value::Null => "#null".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::{SourceId, Span};

    fn entry(value: Value) -> Entry {
        let span = Span::new(SourceId(0), 0, 1);
        Entry {
            key: None,
            ty: None,
            value,
            value_span: span,
            span,
        }
    }

    fn expect(kind: ValueKind, choices: &[String]) -> Expect<'_> {
        Expect {
            kind,
            choices,
            min: Some(1.0),
            above: None,
            max: None,
            what: What::Property("max"),
        }
    }

    fn code(kind: ValueKind, value: Value) -> Option<Code> {
        let choices = ["all".to_owned(), "race".to_owned()];
        problem(&expect(kind, &choices), &entry(value)).map(|d| d.code)
    }

    #[test]
    fn classifies_problems() {
        assert_eq!(code(ValueKind::Integer, Value::Integer(2)), None);
        assert_eq!(
            code(ValueKind::Integer, Value::Integer(0)),
            Some(Code::InvalidValue)
        );
        assert_eq!(
            code(ValueKind::Integer, Value::Float(2.0)),
            Some(Code::WrongType)
        );
        assert_eq!(code(ValueKind::Number, Value::Integer(2)), None);
        assert_eq!(
            code(ValueKind::Number, Value::Float(f64::NAN)),
            Some(Code::InvalidValue)
        );
        assert_eq!(
            code(ValueKind::String, Value::Bool(true)),
            Some(Code::WrongType)
        );
        assert_eq!(
            code(ValueKind::Boolean, Value::String("yes".into())),
            Some(Code::WrongType)
        );
        assert_eq!(
            code(ValueKind::Duration, Value::String("5 min".into())),
            Some(Code::InvalidDuration)
        );
        assert_eq!(
            code(ValueKind::Semver, Value::String("1.2".into())),
            Some(Code::InvalidVersion)
        );
        assert_eq!(
            code(ValueKind::Regex, Value::String("(a".into())),
            Some(Code::InvalidRegex)
        );
        assert_eq!(code(ValueKind::Regex, Value::String("^a+$".into())), None);
        assert_eq!(code(ValueKind::Enum, Value::String("race".into())), None);
        assert_eq!(
            code(ValueKind::Enum, Value::String("rce".into())),
            Some(Code::InvalidValue)
        );
        assert_eq!(code(ValueKind::Any, Value::Null), None);
    }

    #[test]
    fn enum_help_suggests_the_closest_choice() {
        let choices = ["all".to_owned(), "race".to_owned()];
        let diagnostic = problem(
            &expect(ValueKind::Enum, &choices),
            &entry(Value::String("rase".into())),
        )
        .unwrap();
        assert_eq!(
            diagnostic.help.as_deref(),
            Some("did you mean `race`? expected one of `all` or `race`")
        );
    }
}
