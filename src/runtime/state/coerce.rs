//! Fitting a written value to a field's declared type. Templates render strings, so a
//! string is parsed when the field wants a number, boolean, array or object; anything
//! else that does not fit is an error. `null` fits every type (an explicit "no value").

use serde_json::Value;

use crate::ir::ValueType;

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
                _ => Err(format!("expected {}, found {}", article(ty), quoted(&text))),
            }
        }
        (ty, value) => Err(format!("expected {}, found {}", article(ty), kind(&value))),
    }
}

/// Parses a JSON number (`12`, `-3.5`, `1e3`); `None` for anything else or non-finite.
pub(crate) fn parse_number(text: &str) -> Option<Value> {
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

fn article(ty: &ValueType) -> &'static str {
    match ty {
        ValueType::String => "a string",
        ValueType::Integer => "an integer",
        ValueType::Number => "a number",
        ValueType::Boolean => "a boolean",
        ValueType::Array => "an array",
        ValueType::Object => "an object",
        ValueType::Any | ValueType::Schema(_) => "a value",
    }
}

/// A short description of a value's type, for messages.
pub(crate) fn kind(value: &Value) -> &'static str {
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
    fn null_and_any_pass_through() {
        assert_eq!(coerce(&ValueType::Integer, Value::Null), Ok(Value::Null));
        assert_eq!(
            coerce(&ValueType::Any, json!({"x": [1]})),
            Ok(json!({"x": [1]}))
        );
    }
}
