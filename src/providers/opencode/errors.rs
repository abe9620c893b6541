//! OpenCode's error objects (`{name, data}`), classified as the HTTP adapters classify the
//! same failures.

use serde_json::Value;

use super::NAME;
use crate::providers::ProviderError;
use crate::providers::http::classify;

/// Classifies an OpenCode error object (`{name, data}`) as the HTTP adapters classify the
/// same failure: an `APIError` carries the model API's status (and its response headers,
/// so `retry-after` and `x-should-retry` count), a `ProviderAuthError` is `auth`.
pub(super) fn classify(error: &Value) -> ProviderError {
    let name = error
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or("UnknownError");
    let data = error.get("data").unwrap_or(&Value::Null);
    let message = data
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or(name)
        .to_owned();
    let status = data
        .get("statusCode")
        .and_then(Value::as_u64)
        .and_then(|status| u16::try_from(status).ok());
    match (name, status) {
        ("APIError", Some(status)) => {
            let headers = response_headers(data.get("responseHeaders"));
            let body = data
                .get("responseBody")
                .and_then(Value::as_str)
                .unwrap_or(&message);
            classify::from_status(NAME, status, &headers, body, None)
        }
        ("ProviderAuthError", _) => ProviderError::Auth {
            adapter: NAME,
            status: 401,
            message,
            key_variable: None,
        },
        ("MessageOutputLengthError" | "StructuredOutputError", _) => {
            ProviderError::bad_output(NAME, format!("{name}: {message}"))
        }
        _ => ProviderError::rejected(NAME, 0, format!("{name}: {message}")),
    }
}

/// The model API's response headers as OpenCode reports them (`{"retry-after": "2"}`).
fn response_headers(headers: Option<&Value>) -> reqwest::header::HeaderMap {
    let mut map = reqwest::header::HeaderMap::new();
    for (name, value) in headers.and_then(Value::as_object).into_iter().flatten() {
        if let (Ok(name), Some(Ok(value))) = (
            reqwest::header::HeaderName::from_bytes(name.as_bytes()),
            value.as_str().map(reqwest::header::HeaderValue::from_str),
        ) {
            map.insert(name, value);
        }
    }
    map
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use serde_json::json;

    #[test]
    fn errors_are_classified() {
        let cases = [
            (
                json!({"name": "APIError", "data": {"message": "slow down", "statusCode": 429}}),
                "rate-limit",
            ),
            (
                json!({"name": "APIError", "data": {"message": "busy", "statusCode": 529}}),
                "overloaded",
            ),
            (
                json!({"name": "APIError", "data": {"message": "boom", "statusCode": 500}}),
                "server-error",
            ),
            (
                json!({"name": "ProviderAuthError", "data": {"message": "no key"}}),
                "auth",
            ),
            (
                json!({"name": "APIError", "data": {"message": "bad key", "statusCode": 401}}),
                "auth",
            ),
            (
                json!({"name": "APIError", "data": {"message": "locked", "statusCode": 409}}),
                "server-error",
            ),
            (
                json!({"name": "APIError", "data": {"message": "no", "statusCode": 500,
                    "responseHeaders": {"x-should-retry": "false"}}}),
                "provider",
            ),
            (
                json!({"name": "MessageOutputLengthError", "data": {}}),
                "bad-output",
            ),
        ];
        for (error, class) in cases {
            assert_eq!(classify(&error).class().name(), class, "{error}");
        }
        let limited = classify(&json!({"name": "APIError", "data": {"message": "slow down",
            "statusCode": 429, "responseHeaders": {"retry-after": "7"}}}));
        assert!(
            matches!(limited, ProviderError::RateLimited { retry_after: Some(wait), .. } if wait == Duration::from_secs(7)),
            "{limited:?}"
        );
    }
}
