//! What one step changed: the unit the store persists and `--stream updates` shows.

use std::sync::Arc;

use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

/// How one field changed. `append`, `merge` and `merge-by` carry only what was written
/// (replayed through the same reducer), so a long loop appending to a large list stores
/// only the new items; every other reducer carries the resulting value.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Change {
    /// The field now holds this value.
    Set(Value),
    /// These items were appended (then the list was cut to `max-items`).
    Append(Vec<Value>),
    /// These keys were merged in.
    Merge(Map<String, Value>),
    /// These objects were merged by the field's key.
    MergeBy(Vec<Value>),
}

/// One field's change.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldChange {
    /// The field.
    pub field: Arc<str>,
    /// How it changed.
    pub change: Change,
}

/// The changes of one step: at most one entry per field, plus the node outputs it recorded
/// (what templates read as `outputs.<node>`).
///
/// Serialised as `{"fields": {"<field>": {"set": v} | {"append": [..]} | {"merge": {..}} |
/// {"merge-by": [..]}}, "outputs": {"<node>": v}}`; `outputs` is left out when empty.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Delta {
    /// Changed fields, in the order they first changed.
    pub fields: Vec<FieldChange>,
    /// Node outputs recorded, in order.
    pub outputs: Vec<(Arc<str>, Value)>,
}

impl Delta {
    /// Whether nothing changed.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.fields.is_empty() && self.outputs.is_empty()
    }

    /// Records `change` of `field`, whose value is now `now`. A second change of the same
    /// field is folded into the first: appends and merges concatenate, anything else
    /// becomes a `set` of the current value.
    pub fn record(&mut self, field: &Arc<str>, change: Change, now: Option<&Value>) {
        let Some(existing) = self.fields.iter_mut().find(|entry| entry.field == *field) else {
            self.fields.push(FieldChange {
                field: field.clone(),
                change,
            });
            return;
        };
        match (&mut existing.change, change) {
            (Change::Append(items), Change::Append(more))
            | (Change::MergeBy(items), Change::MergeBy(more)) => items.extend(more),
            (Change::Merge(entries), Change::Merge(more)) => entries.extend(more),
            (slot, _) => *slot = Change::Set(now.cloned().unwrap_or(Value::Null)),
        }
    }

    /// Records a node's output (a later one for the same node replaces it).
    pub fn record_output(&mut self, node: &Arc<str>, value: Value) {
        match self.outputs.iter_mut().find(|(id, _)| id == node) {
            Some((_, slot)) => *slot = value,
            None => self.outputs.push((node.clone(), value)),
        }
    }

    /// The change of `field`, if any.
    #[must_use]
    pub fn get(&self, field: &str) -> Option<&Change> {
        self.fields
            .iter()
            .find(|entry| &*entry.field == field)
            .map(|entry| &entry.change)
    }
}

struct Fields<'a>(&'a [FieldChange]);

impl Serialize for Fields<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for entry in self.0 {
            map.serialize_entry(&*entry.field, &entry.change)?;
        }
        map.end()
    }
}

struct Outputs<'a>(&'a [(Arc<str>, Value)]);

impl Serialize for Outputs<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (node, value) in self.0 {
            map.serialize_entry(&**node, value)?;
        }
        map.end()
    }
}

impl Serialize for Delta {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let len = if self.outputs.is_empty() { 1 } else { 2 };
        let mut map = serializer.serialize_map(Some(len))?;
        map.serialize_entry("fields", &Fields(&self.fields))?;
        if !self.outputs.is_empty() {
            map.serialize_entry("outputs", &Outputs(&self.outputs))?;
        }
        map.end()
    }
}

/// An ordered map read into a vector (serde_json's `Map` may reorder keys).
struct Ordered<T>(Vec<(Arc<str>, T)>);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Ordered<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct OrderedVisitor<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for OrderedVisitor<T> {
            type Value = Ordered<T>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a map")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Self::Value, A::Error> {
                let mut entries = Vec::new();
                while let Some((key, value)) = access.next_entry::<String, T>()? {
                    entries.push((Arc::from(key), value));
                }
                Ok(Ordered(entries))
            }
        }
        deserializer.deserialize_map(OrderedVisitor(std::marker::PhantomData))
    }
}

impl<'de> Deserialize<'de> for Delta {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Raw {
            fields: Ordered<Change>,
            #[serde(default)]
            outputs: Option<Ordered<Value>>,
        }
        let raw = Raw::deserialize(deserializer)?;
        Ok(Delta {
            fields: raw
                .fields
                .0
                .into_iter()
                .map(|(field, change)| FieldChange { field, change })
                .collect(),
            outputs: raw.outputs.map(|outputs| outputs.0).unwrap_or_default(),
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn serialises_as_documented_and_round_trips() {
        let mut delta = Delta::default();
        let logs: Arc<str> = Arc::from("logs");
        let count: Arc<str> = Arc::from("count");
        delta.record(&logs, Change::Append(vec![json!("a")]), None);
        delta.record(&count, Change::Set(json!(2)), Some(&json!(2)));
        delta.record(&logs, Change::Append(vec![json!("b")]), None);
        delta.record_output(&Arc::from("review"), json!({"text": "ok"}));
        let value = serde_json::to_value(&delta).unwrap();
        assert_eq!(
            value,
            json!({"fields": {"logs": {"append": ["a", "b"]}, "count": {"set": 2}},
                   "outputs": {"review": {"text": "ok"}}})
        );
        let text = serde_json::to_string(&delta).unwrap();
        assert_eq!(serde_json::from_str::<Delta>(&text).unwrap(), delta);
        let empty = serde_json::to_value(Delta::default()).unwrap();
        assert_eq!(empty, json!({"fields": {}}));
    }

    #[test]
    fn mixed_changes_of_one_field_fold_into_a_set() {
        let mut delta = Delta::default();
        let field: Arc<str> = Arc::from("f");
        delta.record(&field, Change::Append(vec![json!(1)]), None);
        delta.record(&field, Change::Set(json!([9])), Some(&json!([9])));
        assert_eq!(delta.get("f"), Some(&Change::Set(json!([9]))));
        delta.record(&field, Change::Merge(Map::new()), Some(&json!({"x": 1})));
        assert_eq!(delta.get("f"), Some(&Change::Set(json!({"x": 1}))));
    }
}
