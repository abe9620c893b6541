//! An API key that cannot leak by accident: no `Display`, no `Serialize`, and a `Debug`
//! that prints `<redacted>`. The key leaves this type only as a sensitive header value.

use reqwest::header::HeaderValue;

use crate::providers::ProviderError;

/// A secret read from the environment variable a provider names.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String, Option<String>);

impl ApiKey {
    /// Wraps a key. Surrounding whitespace (a trailing newline from `$(cat key)`) is dropped.
    #[must_use]
    pub fn new(key: impl Into<String>) -> Self {
        Self(key.into().trim().to_owned(), None)
    }

    /// Remembers the environment variable the key came from, so an auth error can name
    /// where to fix it (the name, never the value).
    #[must_use]
    pub fn from_variable(mut self, name: &str) -> Self {
        self.1 = Some(name.to_owned());
        self
    }

    /// The environment variable the key came from, if known.
    #[must_use]
    pub fn variable(&self) -> Option<&str> {
        self.1.as_deref()
    }

    /// The header value carrying the key, marked sensitive so HTTP tooling hides it.
    pub(crate) fn header_value(
        &self,
        adapter: &'static str,
        prefix: &str,
    ) -> Result<HeaderValue, ProviderError> {
        let mut value = HeaderValue::from_str(&format!("{prefix}{}", self.0)).map_err(|_| {
            ProviderError::config(
                adapter,
                "the API key holds characters not allowed in an HTTP header".to_owned(),
            )
        })?;
        value.set_sensitive(true);
        Ok(value)
    }

    /// `text` with every occurrence of the key replaced, for messages a server sent back
    /// (a gateway may echo the header it rejected).
    #[must_use]
    pub fn redact(&self, text: &str) -> String {
        if self.0.is_empty() {
            text.to_owned()
        } else {
            text.replace(&self.0, "<redacted>")
        }
    }

    /// Whether the key is empty (an empty variable counts as unset).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl std::fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ApiKey(<redacted>)")
    }
}

/// Redacts `key` from `text` when there is a key.
pub(crate) fn redact(key: Option<&ApiKey>, text: &str) -> String {
    key.map_or_else(|| text.to_owned(), |key| key.redact(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_hides_the_key() {
        let key = ApiKey::new("sk-very-secret\n");
        assert_eq!(format!("{key:?}"), "ApiKey(<redacted>)");
        assert_eq!(key.redact("bad key sk-very-secret!"), "bad key <redacted>!");
    }

    #[test]
    fn header_is_sensitive() {
        let key = ApiKey::new("abc");
        let value = key
            .header_value("anthropic", "Bearer ")
            .expect("valid header");
        assert!(value.is_sensitive());
        assert_eq!(value.to_str().expect("ascii"), "Bearer abc");
        assert!(
            ApiKey::new("a\u{1}b")
                .header_value("anthropic", "")
                .is_err()
        );
    }
}
