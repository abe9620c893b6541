//! State deltas: what one step changed, field by field. The store keeps these instead of
//! full copies, so a long loop over a large state grows the store by what changed only.
//!
//! A run's state is a JSON object of fields. A [`StateDelta`] maps each changed field to a
//! [`Change`]; `append` fields record only the appended items, `merge` fields only the
//! merged keys, everything else the new value.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The state of a run: field name → value.
pub type State = Map<String, Value>;

/// How one field changed in one step.
///
/// JSON: `{"set": 3}`, `{"append": {"items": ["x"], "keep-last": 100}}`,
/// `{"merge": {"key": 1}}`, `"unset"`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Change {
    /// The field now holds this value.
    Set(Value),
    /// These items were appended to the field's array; then only the last `keep_last`
    /// items were kept (`max-items`).
    Append {
        /// The appended items, in order.
        items: Vec<Value>,
        /// `max-items` of the field, if any.
        #[serde(default, rename = "keep-last", skip_serializing_if = "Option::is_none")]
        keep_last: Option<u32>,
    },
    /// These keys were merged into the field's object (new keys win).
    Merge(Map<String, Value>),
    /// The field was removed (unset).
    Unset,
}

/// What one step changed: field → change. Fields not named are unchanged.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct StateDelta(pub BTreeMap<String, Change>);

/// A delta that does not fit the state it is applied to (damaged or mismatched data).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("field `{field}`: {message}")]
pub struct DeltaError {
    /// The field.
    pub field: String,
    /// What was wrong.
    pub message: String,
}

impl StateDelta {
    /// An empty delta.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether nothing changed.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Records a change of `field`. If the field already changed in this delta, the two
    /// changes are combined; where they cannot be (an append after a merge, say), the
    /// field's value after both, `value_after`, is recorded as a `set`.
    pub fn record(&mut self, field: &str, change: Change, value_after: &Value) {
        let Some(previous) = self.0.get_mut(field) else {
            self.0.insert(field.to_owned(), change);
            return;
        };
        let combined = match (previous, change) {
            (
                Change::Append { items, keep_last },
                Change::Append {
                    items: more,
                    keep_last: k,
                },
            ) if *keep_last == k => {
                items.extend(more);
                None
            }
            (Change::Merge(keys), Change::Merge(more)) => {
                keys.extend(more);
                None
            }
            (_, Change::Set(value)) => Some(Change::Set(value)),
            (_, Change::Unset) => Some(Change::Unset),
            _ => Some(Change::Set(value_after.clone())),
        };
        if let Some(change) = combined {
            self.0.insert(field.to_owned(), change);
        }
    }

    /// Applies the delta to `state`.
    ///
    /// # Errors
    /// If an `append` meets a field that is not an array (or unset), or a `merge` one that
    /// is not an object (or unset).
    pub fn apply(&self, state: &mut State) -> Result<(), DeltaError> {
        for (field, change) in &self.0 {
            apply_change(state, field, change)?;
        }
        Ok(())
    }

    /// About how long the delta's JSON text is (exact for strings, estimated for numbers),
    /// without serialising it: what the keyframe policy weighs.
    #[must_use]
    pub fn approx_len(&self) -> usize {
        self.0
            .iter()
            .map(|(field, change)| {
                field.len()
                    + 16
                    + match change {
                        Change::Set(value) => approx_json_len(value),
                        Change::Append { items, .. } => items.iter().map(approx_json_len).sum(),
                        Change::Merge(keys) => keys
                            .iter()
                            .map(|(key, value)| key.len() + 4 + approx_json_len(value))
                            .sum(),
                        Change::Unset => 0,
                    }
            })
            .sum()
    }

    /// The delta's JSON text.
    #[must_use]
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a delta of JSON values serialises")
    }
}

fn apply_change(state: &mut State, field: &str, change: &Change) -> Result<(), DeltaError> {
    let error = |message: &str| DeltaError {
        field: field.to_owned(),
        message: message.to_owned(),
    };
    // `get_mut` before `insert`: a field that exists (the usual case) is updated without
    // allocating its name again.
    match change {
        Change::Set(value) => match state.get_mut(field) {
            Some(slot) => slot.clone_from(value),
            None => {
                state.insert(field.to_owned(), value.clone());
            }
        },
        Change::Unset => {
            state.remove(field);
        }
        Change::Append { items, keep_last } => {
            let slot = slot(state, field, || Value::Array(Vec::new()));
            let Value::Array(array) = slot else {
                return Err(error("appended to a value that is not an array"));
            };
            array.extend(items.iter().cloned());
            if let Some(keep) = keep_last {
                let excess = array.len().saturating_sub(*keep as usize);
                array.drain(..excess);
            }
        }
        Change::Merge(keys) => {
            let slot = slot(state, field, || Value::Object(Map::new()));
            let Value::Object(object) = slot else {
                return Err(error("merged into a value that is not an object"));
            };
            for (key, value) in keys {
                object.insert(key.clone(), value.clone());
            }
        }
    }
    Ok(())
}

/// The field's value, set to `empty()` first if it is unset or null.
fn slot<'s>(state: &'s mut State, field: &str, empty: impl Fn() -> Value) -> &'s mut Value {
    if state.get(field).is_none_or(Value::is_null) {
        state.insert(field.to_owned(), empty());
    }
    state.get_mut(field).expect("just ensured")
}

/// About how many bytes `state` takes as JSON, without serialising it.
pub(super) fn approx_state_len(state: &State) -> usize {
    2 + state
        .iter()
        .map(|(key, value)| key.len() + 4 + approx_json_len(value))
        .sum::<usize>()
}

/// About how many bytes `value` takes as JSON, without serialising it.
fn approx_json_len(value: &Value) -> usize {
    match value {
        Value::Null | Value::Bool(_) => 5,
        Value::Number(_) => 8,
        Value::String(text) => text.len() + 2,
        Value::Array(items) => {
            2 + items
                .iter()
                .map(|item| approx_json_len(item) + 1)
                .sum::<usize>()
        }
        Value::Object(map) => {
            2 + map
                .iter()
                .map(|(key, item)| key.len() + 4 + approx_json_len(item))
                .sum::<usize>()
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn state(value: Value) -> State {
        value.as_object().expect("test states are objects").clone()
    }

    #[test]
    fn applies_each_kind_of_change() {
        let mut s = state(json!({"n": 1, "log": ["a"], "m": {"x": 1}, "gone": true}));
        let mut delta = StateDelta::new();
        delta.record("n", Change::Set(json!(2)), &json!(2));
        let items = vec![json!("b"), json!("c")];
        let append = Change::Append {
            items,
            keep_last: Some(2),
        };
        delta.record("log", append, &json!(null));
        delta.record("m", Change::Merge(state(json!({"y": 2}))), &json!(null));
        delta.record("gone", Change::Unset, &json!(null));
        delta.apply(&mut s).unwrap();
        assert_eq!(
            Value::Object(s),
            json!({"n": 2, "log": ["b", "c"], "m": {"x": 1, "y": 2}})
        );
    }

    #[test]
    fn json_form_is_compact_and_round_trips() {
        let mut delta = StateDelta::new();
        delta.record("n", Change::Set(json!(3)), &json!(3));
        let append = Change::Append {
            items: vec![json!(1)],
            keep_last: None,
        };
        delta.record("log", append, &json!([1]));
        let text = delta.to_json();
        assert_eq!(text, r#"{"log":{"append":{"items":[1]}},"n":{"set":3}}"#);
        assert_eq!(serde_json::from_str::<StateDelta>(&text).unwrap(), delta);
    }

    #[test]
    fn repeated_changes_combine() {
        let mut delta = StateDelta::new();
        let one = |v: Value| Change::Append {
            items: vec![v],
            keep_last: None,
        };
        delta.record("log", one(json!(1)), &json!([1]));
        delta.record("log", one(json!(2)), &json!([1, 2]));
        let merged = Change::Append {
            items: vec![json!(1), json!(2)],
            keep_last: None,
        };
        assert_eq!(delta.0["log"], merged);
        delta.record("log", Change::Merge(Map::new()), &json!({"after": 1}));
        assert_eq!(delta.0["log"], Change::Set(json!({"after": 1})));
    }

    #[test]
    fn approximate_length_is_close_to_the_json_length() {
        let mut delta = StateDelta::new();
        delta.record("big", Change::Set(json!("x".repeat(1000))), &Value::Null);
        let append = Change::Append {
            items: vec![json!({"id": 1, "ok": true})],
            keep_last: None,
        };
        delta.record("log", append, &Value::Null);
        let (approx, exact) = (delta.approx_len(), delta.to_json().len());
        assert!(
            approx >= exact * 9 / 10 && approx <= exact * 11 / 10,
            "{approx} vs {exact}"
        );
    }

    #[test]
    fn mismatched_append_is_an_error() {
        let mut s = state(json!({"n": 1}));
        let mut delta = StateDelta::new();
        delta.record(
            "n",
            Change::Append {
                items: vec![],
                keep_last: None,
            },
            &json!(null),
        );
        assert_eq!(delta.apply(&mut s).unwrap_err().field, "n");
    }
}
