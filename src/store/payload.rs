//! [`Json`]: a payload the store keeps as JSON (cursors, events) but that the runtime may
//! hand over still typed, to be serialised only if a store needs the JSON.
//!
//! Why: a memory store never needs the JSON of most cursors and events, and building a
//! `serde_json::Value` for each of them was a third of a step's cost. A durable store writes
//! each payload's text straight from its type ([`Json::to_text`], `store/scrub.rs`): the
//! same bytes as through a `Value`, without building one.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::scrub::{self, Scrub};

/// Something that can become JSON on demand. Any `Serialize` type that is shareable is.
pub trait ToJson: fmt::Debug + Send + Sync {
    /// The JSON form.
    fn to_json(&self) -> Value;

    /// The JSON text of [`ToJson::to_json`] with every string scrubbed, written without
    /// building the `Value` (what a durable store writes for each step).
    fn to_text(&self, scrub: Scrub<'_>) -> String;
}

impl<T: Serialize + fmt::Debug + Send + Sync> ToJson for T {
    fn to_json(&self) -> Value {
        serde_json::to_value(self).expect("store payloads serialise to JSON")
    }

    fn to_text(&self, scrub: Scrub<'_>) -> String {
        scrub::to_text(self, scrub)
    }
}

/// A scrub that changes nothing.
fn unchanged(text: &str) -> Cow<'_, str> {
    Cow::Borrowed(text)
}

/// JSON, either built already or built when first asked for.
#[derive(Clone)]
pub struct Json(Repr);

#[derive(Clone)]
enum Repr {
    Value(Value),
    Lazy(Arc<dyn ToJson>),
}

impl Json {
    /// A payload serialised only when a store needs its JSON.
    #[must_use]
    pub fn lazy(payload: Arc<dyn ToJson>) -> Self {
        Self(Repr::Lazy(payload))
    }

    /// The JSON (built now if it was lazy).
    #[must_use]
    pub fn to_value(&self) -> Value {
        match &self.0 {
            Repr::Value(value) => value.clone(),
            Repr::Lazy(payload) => payload.to_json(),
        }
    }

    /// The JSON text (as `to_value().to_string()` gives it).
    #[must_use]
    pub fn to_text(&self) -> String {
        match &self.0 {
            Repr::Value(value) => value.to_string(),
            Repr::Lazy(payload) => payload.to_text(&unchanged),
        }
    }

    /// The JSON text with every string (object keys too) scrubbed.
    #[must_use]
    pub fn to_text_scrubbed(&self, scrub: Scrub<'_>) -> String {
        match &self.0 {
            Repr::Value(value) => scrub::to_text(value, scrub),
            Repr::Lazy(payload) => payload.to_text(scrub),
        }
    }

    /// The JSON, without a copy when it was built already.
    #[must_use]
    pub fn into_value(self) -> Value {
        match self.0 {
            Repr::Value(value) => value,
            Repr::Lazy(payload) => payload.to_json(),
        }
    }
}

impl From<Value> for Json {
    fn from(value: Value) -> Self {
        Self(Repr::Value(value))
    }
}

impl fmt::Debug for Json {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Repr::Value(value) => value.fmt(f),
            Repr::Lazy(payload) => payload.fmt(f),
        }
    }
}

/// Equal when the JSON is (a lazy payload is serialised to compare).
impl PartialEq for Json {
    fn eq(&self, other: &Self) -> bool {
        self.to_value() == other.to_value()
    }
}

/// Serialises the JSON `Value`, not the typed payload, so the text is the same whether the
/// payload was lazy or not (a `Value`'s object keys are sorted; a struct's are not).
impl Serialize for Json {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match &self.0 {
            Repr::Value(value) => value.serialize(serializer),
            Repr::Lazy(payload) => payload.to_json().serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Value::deserialize(deserializer).map(Self::from)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    #[derive(Debug, Serialize)]
    struct Typed {
        zeta: u32,
        alpha: BTreeMap<String, u32>,
    }

    #[test]
    fn lazy_payloads_serialise_like_their_values() {
        let typed = Typed {
            zeta: 1,
            alpha: BTreeMap::from([("b".to_owned(), 2), ("a".to_owned(), 3)]),
        };
        let eager = Json::from(serde_json::to_value(&typed).unwrap());
        let lazy = Json::lazy(Arc::new(typed));
        assert_eq!(lazy, eager);
        assert_eq!(
            serde_json::to_string(&lazy).unwrap(),
            serde_json::to_string(&eager).unwrap()
        );
        // Fields in the order the type declares them, map keys in the map's order.
        assert_eq!(
            lazy.to_value().to_string(),
            r#"{"zeta":1,"alpha":{"a":3,"b":2}}"#
        );
        assert_eq!(lazy.to_text(), eager.to_text());
        assert_eq!(lazy.to_text(), lazy.to_value().to_string());
        assert_eq!(lazy.into_value(), eager.into_value());
    }
}
