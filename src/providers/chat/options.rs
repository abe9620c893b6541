//! Adapter options: the provider's `option` children overlaid with the agent's, read by
//! name with a type, and anything left unread refused (a misspelt option must not be
//! silently ignored).

use std::collections::BTreeSet;
use std::time::Duration;

use serde_json::{Map, Value};

use crate::diagnostic::{did_you_mean, expected_one_of};
use crate::providers::ProviderError;
use crate::providers::http::{DEFAULT_MAX_RETRY_AFTER, RetrySettings};
use crate::providers::options::parse_duration;

/// Options being read. Names are kebab-case; `max_tokens` is accepted as `max-tokens`.
#[derive(Debug)]
pub(crate) struct Options {
    adapter: &'static str,
    values: Map<String, Value>,
    read: BTreeSet<&'static str>,
}

impl Options {
    /// `layers` overlaid in order: a later layer's value wins.
    pub(crate) fn new<'a>(
        adapter: &'static str,
        layers: impl IntoIterator<Item = &'a Map<String, Value>>,
    ) -> Self {
        let mut values = Map::new();
        for layer in layers {
            for (name, value) in layer {
                values.insert(name.replace('_', "-"), value.clone());
            }
        }
        Self {
            adapter,
            values,
            read: BTreeSet::new(),
        }
    }

    fn take(&mut self, name: &'static str) -> Option<&Value> {
        self.read.insert(name);
        self.values.get(name).filter(|value| !value.is_null())
    }

    fn invalid(&self, name: &str, expected: &str, found: &Value) -> ProviderError {
        ProviderError::config(
            self.adapter,
            format!("option `{name}` must be {expected}, found `{found}`"),
        )
    }

    /// A non-negative integer.
    pub(crate) fn u64(&mut self, name: &'static str) -> Result<Option<u64>, ProviderError> {
        match self.take(name).cloned() {
            None => Ok(None),
            Some(value) => value
                .as_u64()
                .map(Some)
                .ok_or_else(|| self.invalid(name, "a non-negative integer", &value)),
        }
    }

    /// An integer.
    pub(crate) fn i64(&mut self, name: &'static str) -> Result<Option<i64>, ProviderError> {
        match self.take(name).cloned() {
            None => Ok(None),
            Some(value) => value
                .as_i64()
                .map(Some)
                .ok_or_else(|| self.invalid(name, "an integer", &value)),
        }
    }

    /// A number.
    pub(crate) fn f64(&mut self, name: &'static str) -> Result<Option<f64>, ProviderError> {
        match self.take(name).cloned() {
            None => Ok(None),
            Some(value) => value
                .as_f64()
                .filter(|number| number.is_finite())
                .map(Some)
                .ok_or_else(|| self.invalid(name, "a number", &value)),
        }
    }

    /// A boolean.
    pub(crate) fn bool(&mut self, name: &'static str) -> Result<Option<bool>, ProviderError> {
        match self.take(name).cloned() {
            None => Ok(None),
            Some(value) => value
                .as_bool()
                .map(Some)
                .ok_or_else(|| self.invalid(name, "#true or #false", &value)),
        }
    }

    /// A string.
    pub(crate) fn string(&mut self, name: &'static str) -> Result<Option<String>, ProviderError> {
        match self.take(name).cloned() {
            None => Ok(None),
            Some(Value::String(text)) => Ok(Some(text)),
            Some(value) => Err(self.invalid(name, "a string", &value)),
        }
    }

    /// A list of strings: a JSON array, or one string split on commas.
    pub(crate) fn strings(&mut self, name: &'static str) -> Result<Vec<String>, ProviderError> {
        match self.take(name).cloned() {
            None => Ok(Vec::new()),
            Some(Value::String(text)) => Ok(text
                .split(',')
                .map(str::trim)
                .filter(|item| !item.is_empty())
                .map(str::to_owned)
                .collect()),
            Some(Value::Array(items)) if items.iter().all(Value::is_string) => Ok(items
                .iter()
                .filter_map(|item| item.as_str().map(str::to_owned))
                .collect()),
            Some(value) => Err(self.invalid(name, "a string or a list of strings", &value)),
        }
    }

    /// A positive duration: a string with units (`"500ms"`, `"30s"`, `"1m30s"`) or a number
    /// of milliseconds, as every adapter's options read them.
    pub(crate) fn duration(
        &mut self,
        name: &'static str,
    ) -> Result<Option<Duration>, ProviderError> {
        let expected = "a duration such as \"30s\" or a number of milliseconds";
        match self.take(name).cloned() {
            None => Ok(None),
            Some(value) => {
                let parsed = match &value {
                    Value::Number(number) => number.as_u64().map(Duration::from_millis),
                    Value::String(text) => parse_duration(text),
                    _ => None,
                };
                parsed
                    .filter(|duration| !duration.is_zero())
                    .map(Some)
                    .ok_or_else(|| self.invalid(name, expected, &value))
            }
        }
    }

    /// Fails on any option that was never read.
    /// `max-retries` and `max-retry-after`: the provider's say in request retries.
    pub(crate) fn retry_settings(&mut self) -> Result<RetrySettings, ProviderError> {
        let max_retries = match self.u64("max-retries")? {
            None => None,
            Some(count) => Some(u32::try_from(count).map_err(|_| {
                ProviderError::config(
                    self.adapter,
                    format!(
                        "option `max-retries` must be at most {}, found `{count}`",
                        u32::MAX
                    ),
                )
            })?),
        };
        Ok(RetrySettings {
            max_retries,
            max_retry_after: self
                .duration("max-retry-after")?
                .unwrap_or(DEFAULT_MAX_RETRY_AFTER),
        })
    }

    pub(crate) fn finish(self) -> Result<(), ProviderError> {
        let Some(unknown) = self
            .values
            .keys()
            .find(|name| !self.read.contains(name.as_str()))
        else {
            return Ok(());
        };
        let known: Vec<&str> = self.read.iter().copied().collect();
        let hint = did_you_mean(unknown, known.iter().copied()).map_or_else(
            || format!("expected one of {}", expected_one_of(&known)),
            |near| format!("did you mean `{near}`?"),
        );
        Err(ProviderError::config(
            self.adapter,
            format!("unknown option `{unknown}`; {hint}"),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn map(value: Value) -> Map<String, Value> {
        value.as_object().expect("an object").clone()
    }

    #[test]
    fn later_layers_win_and_snake_case_is_accepted() {
        let provider = map(json!({"max_tokens": 100, "temperature": 0.1}));
        let agent = map(json!({"temperature": 0.7}));
        let mut options = Options::new("openai", [&provider, &agent]);
        assert_eq!(options.u64("max-tokens").expect("valid"), Some(100));
        assert_eq!(options.f64("temperature").expect("valid"), Some(0.7));
        options.finish().expect("all read");
    }

    #[test]
    fn unknown_and_mistyped_options_are_refused() {
        let given = map(json!({"temprature": 0.2}));
        let mut options = Options::new("openai", [&given]);
        assert_eq!(options.f64("temperature").expect("absent"), None);
        let error = options.finish().expect_err("unknown option");
        assert_eq!(
            error.to_string(),
            "`openai` is misconfigured: unknown option `temprature`; did you mean `temperature`?"
        );
        let given = map(json!({"max-tokens": "many"}));
        let mut options = Options::new("openai", [&given]);
        assert!(options.u64("max-tokens").is_err());
    }

    #[test]
    fn durations() {
        let given = map(
            json!({"idle-timeout": 500, "connect-timeout": "1m30s", "tool-timeout": "0s", "x": 1.5}),
        );
        let mut options = Options::new("anthropic", [&given]);
        assert_eq!(
            options.duration("idle-timeout").expect("valid"),
            Some(Duration::from_millis(500))
        );
        assert_eq!(
            options.duration("connect-timeout").expect("valid"),
            Some(Duration::from_secs(90))
        );
        assert!(options.duration("tool-timeout").is_err(), "zero is refused");
        assert!(
            options.duration("x").is_err(),
            "fractional milliseconds are refused"
        );
    }

    #[test]
    fn string_lists() {
        let given = map(json!({"stop": "END, STOP", "beta": ["a", "b"]}));
        let mut options = Options::new("anthropic", [&given]);
        assert_eq!(options.strings("stop").expect("valid"), ["END", "STOP"]);
        assert_eq!(options.strings("beta").expect("valid"), ["a", "b"]);
    }
}
