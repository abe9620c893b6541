//! The declared fields of a workflow's state, indexed for O(1) access by position.

use std::sync::Arc;

use rustc_hash::FxHashMap;

use crate::ir::{Reducer, StateField, ValueType};

/// Position of a field in a [`StateSchema`] (declaration order).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FieldIdx(pub u32);

impl FieldIdx {
    /// The position.
    #[must_use]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// One declared field, as the runtime needs it.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldSpec {
    /// The name templates read as `state.<name>`.
    pub name: Arc<str>,
    /// The declared type.
    pub ty: ValueType,
    /// The initial value (already coerced to `ty`); `None`: unset until written.
    pub default: Option<serde_json::Value>,
    /// How writes combine.
    pub reducer: Reducer,
    /// `max-items` of an `append` field.
    pub max_items: Option<u32>,
}

/// Every declared field, by position and by name.
#[derive(Debug, Default)]
pub struct StateSchema {
    fields: Vec<FieldSpec>,
    by_name: FxHashMap<Arc<str>, FieldIdx>,
}

impl StateSchema {
    /// Builds the schema from the IR's declarations. A default that does not fit its
    /// declared type (for example `default="[x"` on an array) is kept as written; the
    /// checker reports it.
    #[must_use]
    pub fn new(fields: &[StateField]) -> Self {
        let mut schema = Self::default();
        for field in fields {
            let default = field
                .default
                .clone()
                .map(|value| super::coerce(&field.ty, value.clone()).unwrap_or(value));
            schema.push(FieldSpec {
                name: Arc::from(field.name.value.as_str()),
                ty: field.ty.clone(),
                default,
                reducer: field.reducer.clone(),
                max_items: field.max_items,
            });
        }
        schema
    }

    /// Adds a field (later declarations of the same name shadow earlier ones).
    pub fn push(&mut self, spec: FieldSpec) -> FieldIdx {
        let idx = FieldIdx(u32::try_from(self.fields.len()).expect("fewer than 2^32 fields"));
        self.by_name.insert(spec.name.clone(), idx);
        self.fields.push(spec);
        idx
    }

    /// The field named `name`.
    #[must_use]
    pub fn find(&self, name: &str) -> Option<FieldIdx> {
        self.by_name.get(name).copied()
    }

    /// The field at `idx`.
    ///
    /// # Panics
    /// If `idx` did not come from this schema (an internal bug).
    #[must_use]
    pub fn spec(&self, idx: FieldIdx) -> &FieldSpec {
        self.fields
            .get(idx.index())
            .expect("field indices come from this schema")
    }

    /// Every field in declaration order.
    pub fn fields(&self) -> impl Iterator<Item = (FieldIdx, &FieldSpec)> {
        self.fields
            .iter()
            .enumerate()
            .map(|(index, spec)| (FieldIdx(index as u32), spec))
    }

    /// What in a stored state no longer fits these declarations (after the workflow was
    /// edited): fields no longer declared, and values their field's new type cannot take,
    /// judged by the conversion writes use. Empty when it all fits.
    #[must_use]
    pub fn misfits(&self, stored: &serde_json::Map<String, serde_json::Value>) -> Vec<String> {
        let mut found = Vec::new();
        for (name, value) in stored {
            let Some(idx) = self.find(name) else {
                found.push(format!("field `{name}` is no longer declared"));
                continue;
            };
            let spec = self.spec(idx);
            if value.is_null() {
                continue;
            }
            if let Err(reason) = crate::ir::value::coerce(&spec.ty, value.clone()) {
                let mut shown = value.to_string();
                if shown.chars().count() > 60 {
                    shown = shown.chars().take(57).chain("...".chars()).collect();
                }
                found.push(format!(
                    "field `{name}` holds `{shown}`, which its new type `{}` cannot take ({reason})",
                    spec.ty.name()
                ));
            }
        }
        found
    }

    /// How many fields there are.
    #[must_use]
    pub fn len(&self) -> usize {
        self.fields.len()
    }

    /// Whether no field is declared.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.fields.is_empty()
    }
}
