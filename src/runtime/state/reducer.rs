//! Reducers: how one write combines with a field's current value (`reduce="…"`).
//!
//! [`reduce`] is the only place a field changes during a run; it returns the [`Change`] to
//! persist. [`apply_change`] replays a persisted change on resume and must produce the same
//! value `reduce` did, which is why `append`, `merge` and `merge-by` record their writes
//! (replayed by the same code) and every other reducer records the resulting value.

use serde_json::{Map, Value};

use super::{Change, FieldSpec};
use crate::ir::value::{coerce, kind, parse_number};
use crate::ir::{Reducer, ValueType};

/// A write that its field's reducer cannot combine.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("`{reducer}` cannot combine this write: {message}")]
pub struct ReduceError {
    /// The reducer's KDL name.
    pub reducer: &'static str,
    /// What was wrong.
    pub message: String,
}

/// Combines `write` into `current` (`None`: unset) by the field's reducer and returns the
/// change to record, or `None` when the value did not change.
///
/// # Errors
/// When the write (or the current value) has a type the reducer cannot combine.
pub fn reduce(
    spec: &FieldSpec,
    current: &mut Option<Value>,
    write: Value,
) -> Result<Option<Change>, ReduceError> {
    let fail = |message: String| ReduceError {
        reducer: spec.reducer.name(),
        message,
    };
    match &spec.reducer {
        Reducer::IfDefined if write.is_null() => Ok(None),
        Reducer::Replace | Reducer::IfDefined => {
            let new = coerce(&spec.ty, write).map_err(fail)?;
            replace(current, new)
        }
        Reducer::Append => {
            let items = match write {
                Value::Array(items) => items,
                item => vec![item],
            };
            if items.is_empty() {
                return Ok(None);
            }
            append(current, &items, spec.max_items).map_err(fail)?;
            Ok(Some(Change::Append(items)))
        }
        Reducer::Merge => {
            let entries = match object_write(write).map_err(fail)? {
                Some(entries) if !entries.is_empty() => entries,
                _ => return Ok(None),
            };
            merge(current, &entries).map_err(fail)?;
            Ok(Some(Change::Merge(entries)))
        }
        Reducer::MergeBy(key) => {
            let items = items_write(write).map_err(fail)?;
            if items.is_empty() {
                return Ok(None);
            }
            merge_by(current, key, &items).map_err(fail)?;
            Ok(Some(Change::MergeBy(items)))
        }
        Reducer::Sum | Reducer::Max | Reducer::Min => {
            let write = number_write(&spec.ty, write).map_err(fail)?;
            let Some(old) = current.as_ref().filter(|old| !old.is_null()) else {
                return replace(current, write);
            };
            let new = arithmetic(&spec.reducer, old, &write).map_err(fail)?;
            replace(current, new)
        }
        Reducer::And | Reducer::Or => {
            let Value::Bool(write) = coerce(&ValueType::Boolean, write).map_err(fail)? else {
                return Err(fail("expected a boolean, found null".to_owned()));
            };
            let new = match current.as_ref() {
                None | Some(Value::Null) => write,
                Some(Value::Bool(old)) if spec.reducer == Reducer::And => *old && write,
                Some(Value::Bool(old)) => *old || write,
                Some(other) => {
                    return Err(fail(format!("the current value is {}", kind(other))));
                }
            };
            replace(current, Value::Bool(new))
        }
    }
}

/// Replays a recorded change (on resume, or when merging a branch's changes).
///
/// # Errors
/// When the current value has a type the change cannot apply to (a corrupt history).
pub fn apply_change(
    spec: &FieldSpec,
    current: &mut Option<Value>,
    change: &Change,
) -> Result<(), ReduceError> {
    let fail = |message: String| ReduceError {
        reducer: spec.reducer.name(),
        message,
    };
    match change {
        Change::Set(value) => {
            *current = Some(value.clone());
            Ok(())
        }
        Change::Append(items) => append(current, items, spec.max_items).map_err(fail),
        Change::Merge(entries) => merge(current, entries).map_err(fail),
        Change::MergeBy(items) => {
            let Reducer::MergeBy(key) = &spec.reducer else {
                return Err(fail(
                    "a merge-by change on a field without `merge-by`".to_owned(),
                ));
            };
            merge_by(current, key, items).map_err(fail)
        }
    }
}

fn replace(current: &mut Option<Value>, new: Value) -> Result<Option<Change>, ReduceError> {
    if current.as_ref() == Some(&new) {
        return Ok(None);
    }
    *current = Some(new.clone());
    Ok(Some(Change::Set(new)))
}

fn append(current: &mut Option<Value>, items: &[Value], max: Option<u32>) -> Result<(), String> {
    let list = match current {
        Some(Value::Array(list)) => list,
        Some(Value::Null) | None => {
            *current = Some(Value::Array(Vec::with_capacity(items.len())));
            match current {
                Some(Value::Array(list)) => list,
                _ => unreachable!("just set to an array"),
            }
        }
        Some(other) => {
            return Err(format!(
                "the current value is {}, not an array",
                kind(other)
            ));
        }
    };
    list.extend_from_slice(items);
    if let Some(max) = max {
        let max = max as usize;
        if list.len() > max {
            let excess = list.len() - max;
            list.drain(..excess);
        }
    }
    Ok(())
}

fn object_write(write: Value) -> Result<Option<Map<String, Value>>, String> {
    match write {
        Value::Null => Ok(None),
        Value::Object(entries) => Ok(Some(entries)),
        Value::String(text) => match serde_json::from_str::<Value>(text.trim()) {
            Ok(Value::Object(entries)) => Ok(Some(entries)),
            _ => Err("expected an object, found a string".to_owned()),
        },
        other => Err(format!("expected an object, found {}", kind(&other))),
    }
}

fn merge(current: &mut Option<Value>, entries: &Map<String, Value>) -> Result<(), String> {
    match current {
        Some(Value::Object(object)) => {
            for (key, value) in entries {
                object.insert(key.clone(), value.clone());
            }
            Ok(())
        }
        Some(Value::Null) | None => {
            *current = Some(Value::Object(entries.clone()));
            Ok(())
        }
        Some(other) => Err(format!(
            "the current value is {}, not an object",
            kind(other)
        )),
    }
}

fn items_write(write: Value) -> Result<Vec<Value>, String> {
    let write = match write {
        Value::String(text) => serde_json::from_str::<Value>(text.trim())
            .map_err(|_| "expected an array of objects, found a string".to_owned())?,
        other => other,
    };
    let items = match write {
        Value::Null => Vec::new(),
        Value::Array(items) => items,
        item @ Value::Object(_) => vec![item],
        other => {
            return Err(format!(
                "expected an array of objects, found {}",
                kind(&other)
            ));
        }
    };
    if let Some(bad) = items.iter().find(|item| !item.is_object()) {
        return Err(format!("expected objects, found {}", kind(bad)));
    }
    Ok(items)
}

fn merge_by(current: &mut Option<Value>, key: &str, items: &[Value]) -> Result<(), String> {
    if matches!(current, None | Some(Value::Null)) {
        *current = Some(Value::Array(Vec::with_capacity(items.len())));
    }
    let Some(Value::Array(list)) = current else {
        let found = current.as_ref().map_or("nothing", kind);
        return Err(format!("the current value is {found}, not an array"));
    };
    for item in items {
        let slot = item.get(key).and_then(|wanted| {
            list.iter()
                .position(|existing| existing.get(key) == Some(wanted))
        });
        match slot {
            Some(position) => list[position] = item.clone(),
            None => list.push(item.clone()),
        }
    }
    Ok(())
}

fn number_write(ty: &ValueType, write: Value) -> Result<Value, String> {
    let ty = if *ty == ValueType::Integer {
        ty
    } else {
        &ValueType::Number
    };
    match coerce(ty, write)? {
        Value::Null => Err("expected a number, found null".to_owned()),
        number => Ok(number),
    }
}

fn arithmetic(reducer: &Reducer, old: &Value, write: &Value) -> Result<Value, String> {
    let (Value::Number(a), Value::Number(b)) = (old, write) else {
        return Err(format!("the current value is {}, not a number", kind(old)));
    };
    if let (Some(a), Some(b)) = (a.as_i64(), b.as_i64()) {
        let combined = match reducer {
            Reducer::Sum => a.checked_add(b),
            Reducer::Max => Some(a.max(b)),
            _ => Some(a.min(b)),
        };
        if let Some(combined) = combined {
            return Ok(Value::from(combined));
        }
    }
    let (a, b) = (
        a.as_f64().expect("json numbers convert to f64"),
        b.as_f64().expect("json numbers convert to f64"),
    );
    let combined = match reducer {
        Reducer::Sum => a + b,
        Reducer::Max => a.max(b),
        _ => a.min(b),
    };
    parse_number(&combined.to_string())
        .ok_or_else(|| format!("the result `{combined}` is not a finite number"))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;

    use super::*;

    fn spec(reducer: Reducer, ty: ValueType) -> FieldSpec {
        FieldSpec {
            name: Arc::from("f"),
            ty,
            default: None,
            reducer,
            max_items: None,
        }
    }

    /// Applies writes in order; returns the final value and the recorded changes.
    fn run(
        spec: &FieldSpec,
        start: Option<Value>,
        writes: &[Value],
    ) -> (Option<Value>, Vec<Change>) {
        let mut current = start.clone();
        let mut changes = Vec::new();
        for write in writes {
            if let Some(change) = reduce(spec, &mut current, write.clone()).unwrap() {
                changes.push(change);
            }
        }
        // Replaying the recorded changes must give the same value.
        let mut replayed = start;
        for change in &changes {
            apply_change(spec, &mut replayed, change).unwrap();
        }
        assert_eq!(replayed, current, "replay diverged for {:?}", spec.reducer);
        (current, changes)
    }

    #[test]
    fn replace_takes_the_last_write_and_skips_unchanged() {
        let spec = spec(Reducer::Replace, ValueType::Integer);
        let (value, changes) = run(&spec, Some(json!(1)), &[json!(2), json!("3"), json!(3)]);
        assert_eq!(value, Some(json!(3)));
        assert_eq!(changes, vec![Change::Set(json!(2)), Change::Set(json!(3))]);
        let (value, _) = run(&spec, Some(json!(1)), &[Value::Null]);
        assert_eq!(value, Some(Value::Null), "replace writes null");
        let mut current = None;
        assert!(reduce(&spec, &mut current, json!("x")).is_err());
    }

    #[test]
    fn if_defined_ignores_null() {
        let spec = spec(Reducer::IfDefined, ValueType::String);
        let (value, changes) = run(
            &spec,
            Some(json!("a")),
            &[Value::Null, json!("b"), Value::Null],
        );
        assert_eq!(value, Some(json!("b")));
        assert_eq!(changes.len(), 1);
    }

    #[test]
    fn append_concatenates_arrays_and_pushes_items() {
        let spec = spec(Reducer::Append, ValueType::Array);
        let (value, changes) = run(
            &spec,
            None,
            &[json!([1, 2]), json!(3), json!([]), json!([[4]])],
        );
        assert_eq!(value, Some(json!([1, 2, 3, [4]])));
        assert_eq!(changes[0], Change::Append(vec![json!(1), json!(2)]));
        assert_eq!(changes.len(), 3, "an empty array changes nothing");
        let (value, _) = run(&spec, Some(Value::Null), &[json!("x")]);
        assert_eq!(value, Some(json!(["x"])));
        let mut current = Some(json!("not a list"));
        assert!(reduce(&spec, &mut current, json!(1)).is_err());
    }

    #[test]
    fn append_keeps_only_the_last_max_items() {
        let mut spec = spec(Reducer::Append, ValueType::Array);
        spec.max_items = Some(3);
        let (value, changes) = run(
            &spec,
            Some(json!([0])),
            &[json!([1, 2]), json!(3), json!([4, 5, 6, 7])],
        );
        assert_eq!(value, Some(json!([5, 6, 7])));
        assert_eq!(
            changes[2],
            Change::Append(vec![json!(4), json!(5), json!(6), json!(7)])
        );
        spec.max_items = Some(0);
        let (value, _) = run(&spec, None, &[json!(1)]);
        assert_eq!(value, Some(json!([])));
    }

    #[test]
    fn merge_is_shallow_and_new_keys_win() {
        let spec = spec(Reducer::Merge, ValueType::Object);
        let (value, changes) = run(
            &spec,
            Some(json!({"a": 1, "b": {"x": 1}})),
            &[
                json!({"b": {"y": 2}, "c": 3}),
                json!("{\"a\": 9}"),
                Value::Null,
                json!({}),
            ],
        );
        assert_eq!(value, Some(json!({"a": 9, "b": {"y": 2}, "c": 3})));
        assert_eq!(changes.len(), 2, "null and {{}} change nothing");
        let (value, _) = run(&spec, None, &[json!({"k": 1})]);
        assert_eq!(value, Some(json!({"k": 1})));
        let mut current = None;
        assert!(reduce(&spec, &mut current, json!([1])).is_err());
        let mut current = Some(json!(5));
        assert!(reduce(&spec, &mut current, json!({"a": 1})).is_err());
    }

    #[test]
    fn merge_by_replaces_in_place_and_appends_new_keys() {
        let spec = spec(Reducer::MergeBy("id".to_owned()), ValueType::Array);
        let (value, _) = run(
            &spec,
            Some(json!([{"id": 1, "s": "a"}, {"id": 2, "s": "b"}])),
            &[
                json!([{"id": 2, "s": "B"}, {"id": 3, "s": "c"}]),
                json!({"id": 1, "s": "A"}),
                json!({"s": "no key"}),
            ],
        );
        assert_eq!(
            value,
            Some(
                json!([{"id": 1, "s": "A"}, {"id": 2, "s": "B"}, {"id": 3, "s": "c"}, {"s": "no key"}])
            )
        );
        let mut current = None;
        assert!(
            reduce(&spec, &mut current, json!([1, 2])).is_err(),
            "items must be objects"
        );
        assert_eq!(reduce(&spec, &mut current, json!([])).unwrap(), None);
    }

    #[test]
    fn sum_adds_integers_exactly_and_falls_back_to_floats() {
        let spec_int = spec(Reducer::Sum, ValueType::Integer);
        let (value, changes) = run(&spec_int, None, &[json!(2), json!("3"), json!(0)]);
        assert_eq!(value, Some(json!(5)));
        assert_eq!(changes.len(), 2, "adding zero changes nothing");
        let (value, _) = run(&spec_int, Some(json!(i64::MAX)), &[json!(1)]);
        assert_eq!(
            value,
            Some(json!(9.223_372_036_854_776e18)),
            "overflow becomes a float"
        );
        let spec_num = spec(Reducer::Sum, ValueType::Number);
        let (value, _) = run(&spec_num, Some(json!(0.5)), &[json!(0.25), json!(1)]);
        assert_eq!(value, Some(json!(1.75)));
        let mut current = Some(json!(1));
        assert!(reduce(&spec_num, &mut current, json!("abc")).is_err());
        assert!(reduce(&spec_num, &mut current, Value::Null).is_err());
    }

    #[test]
    fn max_and_min_keep_the_extreme() {
        let max = spec(Reducer::Max, ValueType::Number);
        let (value, changes) = run(&max, None, &[json!(3), json!(1), json!(7.5), json!(2)]);
        assert_eq!(value, Some(json!(7.5)));
        assert_eq!(changes.len(), 2);
        let min = spec(Reducer::Min, ValueType::Integer);
        let (value, _) = run(&min, Some(json!(5)), &[json!(9), json!(-2), json!(0)]);
        assert_eq!(value, Some(json!(-2)));
        let mut current = Some(json!("x"));
        assert!(reduce(&min, &mut current, json!(1)).is_err());
    }

    #[test]
    fn and_or_combine_booleans() {
        let and = spec(Reducer::And, ValueType::Boolean);
        assert_eq!(
            run(&and, None, &[json!(true), json!(true)]).0,
            Some(json!(true))
        );
        assert_eq!(
            run(&and, Some(json!(true)), &[json!(false), json!(true)]).0,
            Some(json!(false))
        );
        let or = spec(Reducer::Or, ValueType::Boolean);
        assert_eq!(
            run(
                &or,
                Some(json!(false)),
                &[json!("false"), json!(true), json!(false)]
            )
            .0,
            Some(json!(true))
        );
        let mut current = None;
        assert!(reduce(&or, &mut current, json!(1)).is_err());
        assert!(reduce(&or, &mut current, Value::Null).is_err());
        let mut current = Some(json!("yes"));
        assert!(reduce(&and, &mut current, json!(true)).is_err());
    }

    #[test]
    fn merge_by_change_on_other_reducer_is_rejected() {
        let spec = spec(Reducer::Replace, ValueType::Array);
        let mut current = None;
        assert!(apply_change(&spec, &mut current, &Change::MergeBy(vec![json!({})])).is_err());
    }
}
