//! Value semantics, owned here once for the checker and the runtime, so `check` and `run`
//! never judge a value differently:
//!
//! - [`coerce`]: fitting a written value to a field's declared type. Templates render
//!   strings, so a string is parsed when the field wants a number, boolean, array or
//!   object; anything else that does not fit is an error. `null` fits every type.
//! - [`parse_yes_no`]: a yes/no answer, as a person or a model writes it (`Yes.`, `n`).
//! - [`parse_answer`]: a `wait`'s answer checked against its type and choices.

use serde_json::Value;

use crate::ir::{AnswerType, ValueType, WaitChoice};

/// `yes`/`y`/`true` or `no`/`n`/`false`, in any case, around which quotes, emphasis and
/// a final `.` or `!` are ignored (a model answers "Yes." or "**No**").
#[must_use]
pub fn parse_yes_no(text: &str) -> Option<bool> {
    let word = text
        .trim()
        .trim_matches(|c: char| matches!(c, '.' | '!' | '"' | '\'' | '*' | '`'))
        .to_ascii_lowercase();
    match word.as_str() {
        "yes" | "y" | "true" => Some(true),
        "no" | "n" | "false" => Some(false),
        _ => None,
    }
}

/// The value of `answer` to a wait of type `ty` with `choices`: its text parsed by type,
/// or the choice it names (by value, or by label in any case). A `json` answer is parsed
/// here; validating it against its schema is the runtime's (it holds the compiled schema).
///
/// # Errors
/// What answer was expected, for the person answering.
pub fn parse_answer(
    ty: &AnswerType,
    choices: &[WaitChoice],
    answer: &str,
) -> Result<Value, String> {
    let text = answer.trim();
    match ty {
        AnswerType::String => Ok(Value::String(answer.to_owned())),
        AnswerType::Integer => coerce(&ValueType::Integer, Value::String(text.to_owned())),
        AnswerType::Number => coerce(&ValueType::Number, Value::String(text.to_owned())),
        AnswerType::Boolean => coerce(&ValueType::Boolean, Value::String(text.to_owned())),
        AnswerType::YesNo => parse_yes_no(text)
            .map(Value::Bool)
            .ok_or_else(|| format!("expected yes or no, found {}", quoted(text))),
        AnswerType::Choice => choices
            .iter()
            .find(|choice| {
                choice.value.value == text
                    || choice
                        .label
                        .as_deref()
                        .is_some_and(|label| label.eq_ignore_ascii_case(text))
            })
            .map(|choice| Value::String(choice.value.value.clone()))
            .ok_or_else(|| {
                let values: Vec<String> = choices
                    .iter()
                    .map(|c| format!("`{}`", c.value.value))
                    .collect();
                format!("expected one of {}, found `{text}`", values.join(", "))
            }),
        AnswerType::Json(_) => {
            serde_json::from_str(text).map_err(|error| format!("expected JSON: {error}"))
        }
    }
}

impl AnswerType {
    /// The KDL spelling (`answer="…"`).
    #[must_use]
    pub fn name(&self) -> &'static str {
        match self {
            AnswerType::String => "string",
            AnswerType::Integer => "integer",
            AnswerType::Number => "number",
            AnswerType::Boolean => "boolean",
            AnswerType::YesNo => "yes-no",
            AnswerType::Choice => "choice",
            AnswerType::Json(_) => "json",
        }
    }
}

/// Whether every value of type `from` fits a field of type `to` ([`coerce`] succeeds for
/// all of them): an integer fits a number field, anything fits a string or `any` field.
#[must_use]
pub fn always_fits(from: &ValueType, to: &ValueType) -> bool {
    match (from, to) {
        (_, ValueType::Any | ValueType::Schema(_)) => true,
        (
            ValueType::String | ValueType::Integer | ValueType::Number | ValueType::Boolean,
            ValueType::String,
        ) => true,
        (ValueType::Integer, ValueType::Number) => true,
        (from, to) => from == to,
    }
}

/// Whether no value of type `from` can ever be converted to `to` (by [`coerce`]): a
/// string may hold a number, a boolean or JSON, and a number may be whole, so only what can
/// never convert counts.
#[must_use]
pub fn never_fits(from: &ValueType, to: &ValueType) -> bool {
    use ValueType::{Any, Boolean, Integer, Number, Schema, String};
    match (from, to) {
        (Any | Schema(_), _) | (_, Any | Schema(_)) | (String, _) => false,
        (Integer | Number | Boolean, String) => false,
        (Integer | Number, Integer | Number) => false,
        (from, to) => from != to,
    }
}

/// The type of value a wait of type `ty` writes into its outputs, for checking that an
/// output field can hold it: `None` when any value may come (`json`).
#[must_use]
pub fn answer_value_type(ty: &AnswerType) -> Option<ValueType> {
    match ty {
        AnswerType::String | AnswerType::Choice => Some(ValueType::String),
        AnswerType::Integer => Some(ValueType::Integer),
        AnswerType::Number => Some(ValueType::Number),
        AnswerType::Boolean | AnswerType::YesNo => Some(ValueType::Boolean),
        AnswerType::Json(_) => None,
    }
}

/// Converts `value` to `ty`, or says why it cannot.
///
/// # Errors
/// When the value has another type and is not a string that parses as `ty`.
pub fn coerce(ty: &ValueType, value: Value) -> Result<Value, String> {
    match (ty, value) {
        (_, Value::Null) => Ok(Value::Null),
        (ValueType::Any | ValueType::Schema(_), value) => Ok(value),
        (ValueType::String, Value::String(text)) => Ok(Value::String(text)),
        (ValueType::String, value @ (Value::Number(_) | Value::Bool(_))) => {
            Ok(Value::String(value.to_string()))
        }
        (ValueType::Integer, Value::Number(number)) => integer(&number)
            .map(Value::from)
            .ok_or_else(|| format!("expected an integer, found `{number}`")),
        (ValueType::Integer, Value::String(text)) => {
            let trimmed = text.trim();
            trimmed
                .parse::<i64>()
                .ok()
                .or_else(|| {
                    trimmed
                        .parse::<serde_json::Number>()
                        .ok()
                        .and_then(|n| integer(&n))
                })
                .map(Value::from)
                .ok_or_else(|| format!("expected an integer, found {}", quoted(&text)))
        }
        (ValueType::Number, Value::Number(number)) => Ok(Value::Number(number)),
        (ValueType::Number, Value::String(text)) => parse_number(text.trim())
            .ok_or_else(|| format!("expected a number, found {}", quoted(&text))),
        (ValueType::Boolean, Value::Bool(flag)) => Ok(Value::Bool(flag)),
        (ValueType::Boolean, Value::String(text)) => {
            match text.trim().to_ascii_lowercase().as_str() {
                "true" => Ok(Value::Bool(true)),
                "false" => Ok(Value::Bool(false)),
                _ => Err(format!("expected a boolean, found {}", quoted(&text))),
            }
        }
        (ValueType::Array, value @ Value::Array(_))
        | (ValueType::Object, value @ Value::Object(_)) => Ok(value),
        (ValueType::Array | ValueType::Object, Value::String(text)) => {
            match serde_json::from_str::<Value>(text.trim()) {
                Ok(parsed @ Value::Array(_)) if *ty == ValueType::Array => Ok(parsed),
                Ok(parsed @ Value::Object(_)) if *ty == ValueType::Object => Ok(parsed),
                _ => Err(format!(
                    "expected {}, found {}",
                    ty.article(),
                    quoted(&text)
                )),
            }
        }
        (ty, value) => Err(format!("expected {}, found {}", ty.article(), kind(&value))),
    }
}

/// Parses a JSON number (`12`, `-3.5`, `1e3`); `None` for anything else or non-finite.
pub fn parse_number(text: &str) -> Option<Value> {
    if let Ok(int) = text.parse::<i64>() {
        return Some(Value::from(int));
    }
    let float = text.parse::<f64>().ok()?;
    serde_json::Number::from_f64(float).map(Value::Number)
}

fn integer(number: &serde_json::Number) -> Option<i64> {
    number.as_i64().or_else(|| {
        number
            .as_f64()
            .filter(|f| f.fract() == 0.0 && f.abs() < 9.0e15)
            .map(|f| f as i64)
    })
}

/// A short description of a value's type, for messages.
pub fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn quoted(text: &str) -> String {
    const MAX: usize = 40;
    if text.chars().count() > MAX {
        let head: String = text.chars().take(MAX).collect();
        format!("`{head}…`")
    } else {
        format!("`{text}`")
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn strings_become_the_declared_type() {
        assert_eq!(coerce(&ValueType::Integer, json!(" 42 ")), Ok(json!(42)));
        assert_eq!(coerce(&ValueType::Integer, json!("3.0")), Ok(json!(3)));
        assert_eq!(coerce(&ValueType::Number, json!("2.5")), Ok(json!(2.5)));
        assert_eq!(coerce(&ValueType::Boolean, json!("True")), Ok(json!(true)));
        assert_eq!(
            coerce(&ValueType::Array, json!("[1, 2]")),
            Ok(json!([1, 2]))
        );
        assert_eq!(
            coerce(&ValueType::Object, json!("{\"a\":1}")),
            Ok(json!({"a": 1}))
        );
        assert_eq!(coerce(&ValueType::String, json!(7)), Ok(json!("7")));
    }

    #[test]
    fn mismatches_are_errors() {
        assert!(coerce(&ValueType::Integer, json!("x")).is_err());
        assert!(coerce(&ValueType::Integer, json!(1.5)).is_err());
        assert!(coerce(&ValueType::Boolean, json!(1)).is_err());
        assert!(coerce(&ValueType::Array, json!("{}")).is_err());
        assert!(coerce(&ValueType::Object, json!([1])).is_err());
        assert!(coerce(&ValueType::String, json!([1])).is_err());
        assert_eq!(
            coerce(&ValueType::Integer, json!(true)),
            Err("expected an integer, found a boolean".to_owned())
        );
    }

    #[test]
    fn answers_are_parsed_as_people_write_them() {
        let choice = |value: &str, label: Option<&str>| WaitChoice {
            value: crate::source::Spanned::new(value.to_owned(), crate::source::Span::default()),
            label: label.map(str::to_owned),
            description: None,
        };
        let choices = [choice("ship", Some("Ship it")), choice("hold", None)];
        let cases: &[(AnswerType, &str, Option<Value>)] = &[
            (AnswerType::YesNo, "Yes.", Some(json!(true))),
            (AnswerType::YesNo, "**no**", Some(json!(false))),
            (AnswerType::YesNo, "maybe", None),
            (AnswerType::Integer, "3.0", Some(json!(3))),
            (AnswerType::Integer, " 42 ", Some(json!(42))),
            (AnswerType::Integer, "3.5", None),
            (AnswerType::Number, "1e3", Some(json!(1000.0))),
            (AnswerType::Number, "inf", None),
            (AnswerType::Boolean, "TRUE", Some(json!(true))),
            (AnswerType::Choice, "ship it", Some(json!("ship"))),
            (AnswerType::Choice, "hold", Some(json!("hold"))),
            (AnswerType::Choice, "later", None),
            (AnswerType::Json(None), "{\"a\": 1}", Some(json!({"a": 1}))),
            (AnswerType::Json(None), "{", None),
        ];
        for (ty, answer, expected) in cases {
            assert_eq!(
                parse_answer(ty, &choices, answer).ok(),
                *expected,
                "{ty:?} {answer:?}"
            );
        }
    }

    #[test]
    fn null_and_any_pass_through() {
        assert_eq!(coerce(&ValueType::Integer, Value::Null), Ok(Value::Null));
        assert_eq!(
            coerce(&ValueType::Any, json!({"x": [1]})),
            Ok(json!({"x": [1]}))
        );
    }
}
