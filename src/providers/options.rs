//! Reading adapter options (`option "name" value` children and extra provider properties,
//! carried as JSON): a node's options override its provider's.

use std::time::Duration;

use serde_json::{Map, Value};

use super::ProviderError;

/// A node's options over its provider's.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Options<'a> {
    pub(crate) node: Option<&'a Map<String, Value>>,
    pub(crate) provider: &'a Map<String, Value>,
}

impl<'a> Options<'a> {
    /// Only the provider's options.
    pub(crate) fn provider(provider: &'a Map<String, Value>) -> Self {
        Self {
            node: None,
            provider,
        }
    }

    /// The value of `name`, node first.
    pub(crate) fn get(&self, name: &str) -> Option<&'a Value> {
        self.node
            .and_then(|node| node.get(name))
            .or_else(|| self.provider.get(name))
    }

    /// A string option.
    pub(crate) fn string(
        &self,
        adapter: &'static str,
        name: &str,
    ) -> Result<Option<&'a str>, ProviderError> {
        match self.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(text)) => Ok(Some(text)),
            Some(other) => Err(invalid(adapter, name, "a string", other)),
        }
    }

    /// A number option.
    pub(crate) fn number(
        &self,
        adapter: &'static str,
        name: &str,
    ) -> Result<Option<f64>, ProviderError> {
        match self.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Number(number)) => Ok(number.as_f64()),
            Some(other) => Err(invalid(adapter, name, "a number", other)),
        }
    }

    /// A duration option: `"50ms"`, `"2s"`, `"1m30s"`, or a number of milliseconds.
    pub(crate) fn duration(
        &self,
        adapter: &'static str,
        name: &str,
    ) -> Result<Option<Duration>, ProviderError> {
        match self.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Number(number)) => number
                .as_u64()
                .map(|millis| Some(Duration::from_millis(millis)))
                .ok_or_else(|| {
                    invalid(adapter, name, "a duration", &Value::Number(number.clone()))
                }),
            Some(Value::String(text)) => parse_duration(text).map(Some).ok_or_else(|| {
                invalid(
                    adapter,
                    name,
                    "a duration like \"50ms\" or \"2s\"",
                    &Value::String(text.clone()),
                )
            }),
            Some(other) => Err(invalid(adapter, name, "a duration", other)),
        }
    }
}

/// Parses `"500ms"`, `"30s"`, `"10m"`, `"2h"`, `"1d"` and combinations like `"1m30s"`.
pub(crate) fn parse_duration(text: &str) -> Option<Duration> {
    let mut total = Duration::ZERO;
    let mut rest = text.trim();
    if rest.is_empty() {
        return None;
    }
    while !rest.is_empty() {
        let digits = rest.find(|c: char| !c.is_ascii_digit())?;
        if digits == 0 {
            return None;
        }
        let value: u64 = rest[..digits].parse().ok()?;
        rest = &rest[digits..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(rest.len());
        let millis_per = match &rest[..unit_len] {
            "ms" => 1,
            "s" => 1_000,
            "m" => 60_000,
            "h" => 3_600_000,
            "d" => 86_400_000,
            _ => return None,
        };
        total = total.checked_add(Duration::from_millis(value.checked_mul(millis_per)?))?;
        rest = &rest[unit_len..];
    }
    Some(total)
}

fn invalid(adapter: &'static str, name: &str, expected: &str, found: &Value) -> ProviderError {
    ProviderError::config(
        adapter,
        format!("option `{name}` must be {expected}, found `{found}`"),
    )
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn parses_durations() {
        assert_eq!(parse_duration("50ms"), Some(Duration::from_millis(50)));
        assert_eq!(parse_duration("1m30s"), Some(Duration::from_secs(90)));
        assert_eq!(parse_duration("2h"), Some(Duration::from_secs(7200)));
        for bad in ["", "5", "ms", "5x", "1.5s", "-1s"] {
            assert_eq!(parse_duration(bad), None, "{bad}");
        }
    }

    #[test]
    fn node_options_override_provider_options() {
        let provider = json!({"reply": "p", "latency": "10ms"});
        let node = json!({"reply": "n"});
        let options = Options {
            node: node.as_object(),
            provider: provider.as_object().unwrap(),
        };
        assert_eq!(options.string("x", "reply").unwrap(), Some("n"));
        assert_eq!(
            options.duration("x", "latency").unwrap(),
            Some(Duration::from_millis(10))
        );
        let error = options.number("x", "reply").unwrap_err();
        assert!(
            error
                .to_string()
                .contains("option `reply` must be a number"),
            "{error}"
        );
    }
}
