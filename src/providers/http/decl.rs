//! Reading the HTTP parts of a `provider` declaration: the base URL and the API key from
//! the environment variable it names (looked up through the caller's environment, never
//! the process's directly, so runs and tests stay hermetic).

use super::secret::ApiKey;
use crate::providers::ProviderError;

/// `base-url=`, or `default`, as an http(s) URL.
pub(crate) fn base_url(
    adapter: &'static str,
    given: Option<&str>,
    default: &str,
) -> Result<reqwest::Url, ProviderError> {
    let text = given.unwrap_or(default);
    let url = reqwest::Url::parse(text).map_err(|error| {
        ProviderError::config(
            adapter,
            format!("`base-url` `{text}` is not a valid URL: {error}"),
        )
    })?;
    if !matches!(url.scheme(), "http" | "https") || url.cannot_be_a_base() {
        return Err(ProviderError::config(
            adapter,
            format!("`base-url` `{text}` must be an http:// or https:// URL"),
        ));
    }
    Ok(url)
}

/// The key in variable `name`; `None` when unset or empty.
fn read_key(name: &str, env: &dyn Fn(&str) -> Option<String>) -> Option<ApiKey> {
    env(name)
        .map(|key| ApiKey::new(key).from_variable(name))
        .filter(|key| !key.is_empty())
}

/// The key in variable `name`, which must be set.
pub(crate) fn require_key(
    adapter: &'static str,
    name: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<ApiKey, ProviderError> {
    read_key(name, env).ok_or_else(|| ProviderError::config(adapter, format!(
            "environment variable `{name}` is not set; put the API key there, or name another variable with `api-key-env`"
        )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_must_be_http() {
        assert!(base_url("a", None, "https://api.anthropic.com").is_ok());
        assert!(base_url("a", Some("http://127.0.0.1:8080/v1"), "https://x").is_ok());
        let error = base_url("a", Some("ftp://x"), "https://x").expect_err("not http");
        assert!(error.to_string().contains("must be an http"), "{error}");
        assert!(base_url("a", Some("not a url"), "https://x").is_err());
    }

    #[test]
    fn keys_come_from_the_given_environment() {
        let env = |name: &str| (name == "KEY").then(|| "k".to_owned());
        assert!(require_key("a", "KEY", &env).is_ok());
        let error = require_key("a", "OTHER", &env).expect_err("unset");
        assert!(error.to_string().contains("`OTHER` is not set"), "{error}");
        let empty = |_: &str| Some("  ".to_owned());
        assert!(read_key("KEY", &empty).is_none());
    }
}
