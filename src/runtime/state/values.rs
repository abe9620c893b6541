//! The current values of a run's state fields.

use std::sync::{Arc, OnceLock};

use serde_json::{Map, Value};

use super::reducer::apply_change;
use super::{Delta, FieldIdx, ReduceError, StateSchema, reduce};

/// Why a write or a replayed change failed.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum StateError {
    /// The field is not declared (a replayed history from another workflow version).
    #[error("no state field `{field}` is declared")]
    UnknownField {
        /// The name.
        field: String,
    },
    /// The reducer refused the write.
    #[error("cannot write state field `{field}`: {source}")]
    Reduce {
        /// The field.
        field: String,
        /// Why.
        source: ReduceError,
    },
}

/// One field's value plus its template view, converted on first read after a write.
#[derive(Clone, Debug, Default)]
struct Slot {
    value: Option<Value>,
    view: OnceLock<minijinja::Value>,
}

/// The values of every declared field. Cloning is cheap (one `Arc` per field): parallel
/// branches clone the state at the fork and copy a field only when they write it.
#[derive(Clone, Debug)]
pub struct State {
    schema: Arc<StateSchema>,
    slots: Vec<Arc<Slot>>,
}

impl State {
    /// Every field at its default.
    #[must_use]
    pub fn new(schema: Arc<StateSchema>) -> Self {
        let slots = schema
            .fields()
            .map(|(_, spec)| {
                Arc::new(Slot {
                    value: spec.default.clone(),
                    view: OnceLock::new(),
                })
            })
            .collect();
        Self { schema, slots }
    }

    /// The declared fields.
    #[must_use]
    pub fn schema(&self) -> &Arc<StateSchema> {
        &self.schema
    }

    /// The value of `idx`; `None` while unset.
    #[must_use]
    pub fn get(&self, idx: FieldIdx) -> Option<&Value> {
        self.slot(idx).value.as_ref()
    }

    /// The value of the field named `name`.
    #[must_use]
    pub fn get_by_name(&self, name: &str) -> Option<&Value> {
        self.schema.find(name).and_then(|idx| self.get(idx))
    }

    /// The value of `idx` as templates see it, converted once per write.
    #[must_use]
    pub fn view(&self, idx: FieldIdx) -> Option<minijinja::Value> {
        let slot = self.slot(idx);
        let value = slot.value.as_ref()?;
        Some(
            slot.view
                .get_or_init(|| minijinja::Value::from(minijinja::value::Serde(value)))
                .clone(),
        )
    }

    /// Writes `write` to `idx` through the field's reducer, recording the change in `delta`.
    ///
    /// # Errors
    /// When the reducer refuses the write; the field is then unchanged.
    pub fn write(
        &mut self,
        idx: FieldIdx,
        write: Value,
        delta: &mut Delta,
    ) -> Result<(), StateError> {
        let spec = self.schema.spec(idx);
        let slot = Arc::make_mut(
            self.slots
                .get_mut(idx.index())
                .expect("field indices come from this schema"),
        );
        let change = reduce(spec, &mut slot.value, write).map_err(|source| StateError::Reduce {
            field: spec.name.to_string(),
            source,
        })?;
        if let Some(change) = change {
            slot.view = OnceLock::new();
            delta.record(&spec.name, change, slot.value.as_ref());
        }
        Ok(())
    }

    /// Replays a persisted delta's field changes (on resume).
    ///
    /// # Errors
    /// When a field is unknown or a change does not apply.
    pub fn apply(&mut self, delta: &Delta) -> Result<(), StateError> {
        for entry in &delta.fields {
            let idx = self
                .schema
                .find(&entry.field)
                .ok_or_else(|| StateError::UnknownField {
                    field: entry.field.to_string(),
                })?;
            let spec = self.schema.spec(idx);
            let slot = Arc::make_mut(&mut self.slots[idx.index()]);
            apply_change(spec, &mut slot.value, &entry.change).map_err(|source| {
                StateError::Reduce {
                    field: spec.name.to_string(),
                    source,
                }
            })?;
            slot.view = OnceLock::new();
        }
        Ok(())
    }

    /// The set fields as one JSON object (for `--stream values`, snapshots and results).
    #[must_use]
    pub fn to_json(&self) -> Value {
        let mut object = Map::with_capacity(self.slots.len());
        for (idx, spec) in self.schema.fields() {
            if let Some(value) = self.get(idx) {
                object.insert(spec.name.to_string(), value.clone());
            }
        }
        Value::Object(object)
    }

    /// Restores a snapshot taken with [`State::to_json`]; fields missing from it are unset
    /// (not defaulted: the snapshot is the whole truth at its step).
    ///
    /// # Errors
    /// When the snapshot names an undeclared field or is not an object.
    pub fn from_json(schema: Arc<StateSchema>, snapshot: &Value) -> Result<Self, StateError> {
        let Value::Object(object) = snapshot else {
            return Err(StateError::UnknownField {
                field: "<snapshot is not an object>".to_owned(),
            });
        };
        let mut slots: Vec<Arc<Slot>> = (0..schema.len())
            .map(|_| Arc::new(Slot::default()))
            .collect();
        for (name, value) in object {
            let idx = schema.find(name).ok_or_else(|| StateError::UnknownField {
                field: name.clone(),
            })?;
            slots[idx.index()] = Arc::new(Slot {
                value: Some(value.clone()),
                view: OnceLock::new(),
            });
        }
        Ok(Self { schema, slots })
    }

    fn slot(&self, idx: FieldIdx) -> &Slot {
        self.slots
            .get(idx.index())
            .expect("field indices come from this schema")
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::ir::{Reducer, ValueType};
    use crate::runtime::state::FieldSpec;

    fn schema() -> Arc<StateSchema> {
        let mut schema = StateSchema::default();
        for (name, ty, default, reducer) in [
            ("count", ValueType::Integer, Some(json!(0)), Reducer::Sum),
            ("logs", ValueType::Array, Some(json!([])), Reducer::Append),
            ("maybe", ValueType::String, None, Reducer::Replace),
        ] {
            schema.push(FieldSpec {
                name: Arc::from(name),
                ty,
                default,
                reducer,
                max_items: None,
            });
        }
        Arc::new(schema)
    }

    #[test]
    fn writes_record_deltas_that_replay_to_the_same_state() {
        let schema = schema();
        let mut state = State::new(schema.clone());
        let mut delta = Delta::default();
        let count = schema.find("count").unwrap();
        let logs = schema.find("logs").unwrap();
        state.write(count, json!(2), &mut delta).unwrap();
        state.write(logs, json!("a"), &mut delta).unwrap();
        state.write(count, json!(3), &mut delta).unwrap();
        assert_eq!(state.to_json(), json!({"count": 5, "logs": ["a"]}));

        let mut replayed = State::new(schema.clone());
        replayed.apply(&delta).unwrap();
        assert_eq!(replayed.to_json(), state.to_json());
        let restored = State::from_json(schema, &state.to_json()).unwrap();
        assert_eq!(restored.to_json(), state.to_json());
    }

    #[test]
    fn clones_copy_on_write_and_views_refresh() {
        let schema = schema();
        let mut base = State::new(schema.clone());
        let count = schema.find("count").unwrap();
        assert_eq!(base.view(count), Some(minijinja::Value::from(0)));
        let mut branch = base.clone();
        branch
            .write(count, json!(4), &mut Delta::default())
            .unwrap();
        assert_eq!(branch.view(count), Some(minijinja::Value::from(4)));
        assert_eq!(base.get(count), Some(&json!(0)), "the base is untouched");
        base.write(count, json!(1), &mut Delta::default()).unwrap();
        assert_eq!(base.view(count), Some(minijinja::Value::from(1)));
        assert_eq!(base.view(schema.find("maybe").unwrap()), None);
    }

    #[test]
    fn a_refused_write_leaves_the_field_alone() {
        let schema = schema();
        let mut state = State::new(schema.clone());
        let mut delta = Delta::default();
        let err = state
            .write(schema.find("count").unwrap(), json!("x"), &mut delta)
            .unwrap_err();
        assert!(matches!(err, StateError::Reduce { ref field, .. } if field == "count"));
        assert!(delta.is_empty());
        assert_eq!(state.to_json()["count"], json!(0));
        let bad = Delta {
            fields: vec![crate::runtime::state::FieldChange {
                field: Arc::from("nope"),
                change: crate::runtime::state::Change::Set(json!(1)),
            }],
            outputs: Vec::new(),
        };
        assert!(matches!(
            state.apply(&bad),
            Err(StateError::UnknownField { .. })
        ));
    }
}
