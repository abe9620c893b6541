//! `default=` values of inputs and state fields, checked against the declared type.
//!
//! KDL has no arrays or objects, so for `array` and `object` the default is a string holding
//! JSON (`default="[]"`, `default="{\"a\": 1}"`). For `any` and `schema=` types, a string
//! starting with `[` or `{` is read as JSON too; any other value is taken as written.
//! `#null` is allowed only for `any` and `schema=` types (leave `default` out for "unset").

use crate::diagnostic::{Code, Diagnostic};
use crate::ir::ValueType;
use crate::syntax::kdl::{Entry, Value};

use super::resolver::Resolver;

/// The default as JSON, or the diagnostic saying why it does not fit `ty`.
pub(super) fn default_value(
    ty: &ValueType,
    entry: &Entry,
) -> Result<serde_json::Value, Diagnostic> {
    let mismatch = |expected: &str| {
        Diagnostic::new(
            Code::InvalidDefault,
            entry.value_span,
            format!("the default does not match the type `{}`", ty.name()),
        )
        .label(format!("not {expected}"))
    };
    match (ty, &entry.value) {
        (ValueType::String, Value::String(_))
        | (ValueType::Integer, Value::Integer(_))
        | (ValueType::Number, Value::Integer(_) | Value::Float(_))
        | (ValueType::Boolean, Value::Bool(_)) => Ok(Resolver::json(&entry.value)),
        (ValueType::Array | ValueType::Object, Value::String(text)) => {
            let json: serde_json::Value = serde_json::from_str(text).map_err(|error| {
                mismatch("valid JSON").help(format!(
                    "write {} as a JSON string, e.g. `default=\"{}\"` ({error})",
                    ty.article(),
                    example(ty)
                ))
            })?;
            let fits = if matches!(ty, ValueType::Array) {
                json.is_array()
            } else {
                json.is_object()
            };
            if fits {
                Ok(json)
            } else {
                Err(mismatch(ty.article()).help(format!(
                    "write {} as a JSON string, e.g. `default=\"{}\"`",
                    ty.article(),
                    example(ty)
                )))
            }
        }
        (ValueType::Any | ValueType::Schema(_), Value::String(text)) if looks_like_json(text) => {
            serde_json::from_str(text).map_err(|error| {
                mismatch("valid JSON").help(format!(
                    "a default starting with `[` or `{{` is read as JSON: fix it ({error})"
                ))
            })
        }
        (ValueType::Any | ValueType::Schema(_), value) => Ok(Resolver::json(value)),
        (_, Value::Null) => Err(mismatch(ty.article())
            .help("leave `default` out to keep the field unset until written")),
        (ty, _) => Err(mismatch(ty.article()).help(format!(
            "write {}, e.g. `default={}`",
            ty.article(),
            example(ty)
        ))),
    }
}

fn looks_like_json(text: &str) -> bool {
    matches!(text.trim_start().as_bytes().first(), Some(b'[' | b'{'))
}

fn example(ty: &ValueType) -> &'static str {
    match ty {
        ValueType::String => "\"text\"",
        ValueType::Integer => "0",
        ValueType::Number => "0.5",
        ValueType::Boolean => "#false",
        ValueType::Array => "[]",
        ValueType::Object => "{}",
        ValueType::Any | ValueType::Schema(_) => "\"…\"",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::{SourceId, Span};
    use serde_json::json;

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

    #[test]
    fn defaults_by_type() {
        let ok = |ty: ValueType, value: Value| default_value(&ty, &entry(value)).ok();
        assert_eq!(
            ok(ValueType::Array, Value::String("[]".into())),
            Some(json!([]))
        );
        assert_eq!(
            ok(ValueType::Object, Value::String("{\"a\":1}".into())),
            Some(json!({"a": 1}))
        );
        assert_eq!(ok(ValueType::Array, Value::String("{}".into())), None);
        assert_eq!(ok(ValueType::Array, Value::String("[".into())), None);
        assert_eq!(ok(ValueType::Integer, Value::Integer(0)), Some(json!(0)));
        assert_eq!(ok(ValueType::Integer, Value::String("0".into())), None);
        assert_eq!(ok(ValueType::Number, Value::Integer(2)), Some(json!(2)));
        assert_eq!(
            ok(ValueType::Boolean, Value::Bool(false)),
            Some(json!(false))
        );
        assert_eq!(ok(ValueType::String, Value::Null), None);
        assert_eq!(ok(ValueType::Any, Value::Null), Some(json!(null)));
        assert_eq!(
            ok(ValueType::Any, Value::String("[1]".into())),
            Some(json!([1]))
        );
        assert_eq!(
            ok(ValueType::Any, Value::String("x".into())),
            Some(json!("x"))
        );
    }
}
