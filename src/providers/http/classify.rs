//! Failures of an HTTP provider call, classified into [`ProviderError`] variants (and so
//! into `retry-on` classes). Every message names what the server said; none holds the key.

use std::time::{Duration, SystemTime};

use reqwest::header::HeaderMap;
use serde_json::Value;

use super::retry_after::retry_after;
use super::secret::{ApiKey, redact};
use crate::providers::{ProviderError, error_for_status};

/// Longest server message kept in an error.
const MAX_MESSAGE: usize = 600;

/// What an error body said: `{"error":{"type","message"}}` (Anthropic, OpenAI, Ollama),
/// `{"object":"error","message","type"}` (older vLLM), `{"detail": …}` (FastAPI), or text.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct ErrorBody {
    /// `error.type`, e.g. `overloaded_error`.
    pub(crate) kind: Option<String>,
    /// The human-readable message.
    pub(crate) message: String,
    /// `error.details.error_code` (Anthropic spend limits).
    pub(crate) code: Option<String>,
    /// `request_id`, for support requests.
    pub(crate) request_id: Option<String>,
}

impl ErrorBody {
    /// Reads an error body, falling back to its text.
    pub(crate) fn parse(body: &str) -> Self {
        let Ok(json) = serde_json::from_str::<Value>(body) else {
            return Self {
                message: truncate(body.trim()),
                ..Self::default()
            };
        };
        let error = json.get("error").filter(|e| e.is_object()).unwrap_or(&json);
        let text = |value: Option<&Value>| value.and_then(Value::as_str).map(str::to_owned);
        let message = text(error.get("message"))
            .or_else(|| text(json.get("error")))
            .or_else(|| {
                json.get("detail")
                    .map(|d| d.as_str().map_or_else(|| d.to_string(), str::to_owned))
            })
            .unwrap_or_else(|| body.trim().to_owned());
        Self {
            kind: text(error.get("type")),
            message: truncate(&message),
            code: text(error.pointer("/details/error_code")).or_else(|| {
                error
                    .get("code")
                    .and_then(|c| c.as_str().map(str::to_owned))
            }),
            request_id: text(json.get("request_id")),
        }
    }

    /// `type: message (request req_…)`.
    fn describe(&self) -> String {
        let mut text = match &self.kind {
            Some(kind) if !self.message.is_empty() => format!("{kind}: {}", self.message),
            Some(kind) => kind.clone(),
            None => self.message.clone(),
        };
        if let Some(id) = &self.request_id {
            text.push_str(&format!(" (request {id})"));
        }
        text
    }
}

/// A non-2xx answer.
pub(crate) fn from_status(
    adapter: &'static str,
    status: u16,
    headers: &HeaderMap,
    body: &str,
    key: Option<&ApiKey>,
) -> ProviderError {
    let mut error = ErrorBody::parse(body);
    if error.message.is_empty() {
        error.message = reqwest::StatusCode::from_u16(status)
            .ok()
            .and_then(|s| s.canonical_reason())
            .unwrap_or("no message")
            .to_owned();
    }
    if error.request_id.is_none() {
        error.request_id = headers
            .get("request-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
    }
    let retry_after = retry_after(headers, SystemTime::now());
    let message = redact(key, &error.describe());
    let kind = error.kind.as_deref().unwrap_or_default();
    // The server's own word on retrying wins over the status, both ways (as in the SDKs).
    match should_retry(headers) {
        Some(true) if !matches!(status, 429 | 503 | 529 | 408 | 409 | 500..=599) => {
            return ProviderError::server(
                adapter,
                status,
                format!("{message} (the server asked for a retry: `x-should-retry: true`)"),
            );
        }
        Some(false) => {
            return ProviderError::rejected(
                adapter,
                status,
                format!("{message} (the server asked not to retry: `x-should-retry: false`)"),
            );
        }
        _ => {}
    }
    match status {
        // A spend limit does not clear by waiting.
        429 if matches!(
            error.code.as_deref(),
            Some("enforced_spend_limit_reached" | "insufficient_quota")
        ) =>
        {
            ProviderError::rejected(adapter, status, message)
        }
        _ if kind == "overloaded_error" => ProviderError::overloaded(adapter, retry_after),
        _ => error_for_status(
            adapter,
            status,
            message,
            key.and_then(ApiKey::variable),
            retry_after,
        ),
    }
}

/// `x-should-retry: true|false`, when the server sent it.
fn should_retry(headers: &HeaderMap) -> Option<bool> {
    match headers.get("x-should-retry")?.to_str().ok()?.trim() {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    }
}

/// An error reported inside a 200 stream: Anthropic's `event: error`, or an OpenAI-style
/// chunk holding an `error` object. `code` is the HTTP-like status it carries, if any.
pub(crate) fn from_stream_error(
    adapter: &'static str,
    error: &ErrorBody,
    code: Option<u16>,
    key: Option<&ApiKey>,
) -> ProviderError {
    let kind = error
        .kind
        .as_deref()
        .unwrap_or_default()
        .to_ascii_lowercase();
    let message = redact(key, &error.describe());
    let status = code.unwrap_or(match kind.as_str() {
        "invalid_request_error" => 400,
        "authentication_error" => 401,
        "permission_error" => 403,
        "not_found_error" => 404,
        "request_too_large" => 413,
        "timeout_error" => 504,
        _ => 500,
    });
    if status == 429 || kind.contains("rate_limit") {
        ProviderError::rate_limited(adapter, None)
    } else if status == 529 || status == 503 || kind.contains("overloaded") {
        ProviderError::overloaded(adapter, None)
    } else if status == 401 || status == 403 {
        ProviderError::Auth {
            adapter,
            status,
            message,
            key_variable: key.and_then(ApiKey::variable).map(str::to_owned),
        }
    } else if (400..500).contains(&status) {
        ProviderError::rejected(adapter, status, message)
    } else {
        ProviderError::server(adapter, status, format!("mid-stream error: {message}"))
    }
}

/// A failure while sending the request or waiting for the response head.
pub(crate) fn from_send_error(
    adapter: &'static str,
    error: &reqwest::Error,
    limit: Duration,
) -> ProviderError {
    if error.is_timeout() {
        return ProviderError::timeout(adapter, limit);
    }
    if error.is_builder() {
        return ProviderError::config(adapter, describe(error));
    }
    ProviderError::network(adapter, describe(error))
}

/// A failure while reading a streamed body after a 2xx head: the stream was cut.
pub(crate) fn from_body_error(adapter: &'static str, error: &reqwest::Error) -> ProviderError {
    ProviderError::stream_cut(adapter, describe(error))
}

/// An error and its causes, `outer: inner: innermost`, without repeats.
pub(crate) fn describe(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

fn truncate(text: &str) -> String {
    match text.char_indices().nth(MAX_MESSAGE) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::ErrorClass;
    use reqwest::header::HeaderValue;

    fn classify(
        status: u16,
        headers: &[(&'static str, &'static str)],
        body: &str,
    ) -> ProviderError {
        let mut map = HeaderMap::new();
        for (name, value) in headers {
            map.insert(*name, HeaderValue::from_static(value));
        }
        from_status("anthropic", status, &map, body, None)
    }

    #[test]
    fn statuses_map_to_classes() {
        let rate = classify(
            429,
            &[("retry-after", "2")],
            r#"{"type":"error","error":{"type":"rate_limit_error","message":"rate limited"}}"#,
        );
        assert_eq!(rate.class(), ErrorClass::RateLimit);
        assert_eq!(rate.retry_after(), Some(Duration::from_secs(2)));
        assert_eq!(classify(529, &[], "").class(), ErrorClass::Overloaded);
        assert_eq!(classify(503, &[], "").class(), ErrorClass::Overloaded);
        assert_eq!(classify(500, &[], "oops").class(), ErrorClass::ServerError);
        assert_eq!(classify(400, &[], "").class(), ErrorClass::Provider);
        let spend = classify(
            429,
            &[],
            r#"{"error":{"type":"rate_limit_error","message":"x","details":{"error_code":"enforced_spend_limit_reached"}}}"#,
        );
        assert_eq!(spend.class(), ErrorClass::Provider);
        assert_eq!(classify(408, &[], "").class(), ErrorClass::ServerError);
        assert_eq!(classify(409, &[], "").class(), ErrorClass::ServerError);
        assert_eq!(classify(401, &[], "").class(), ErrorClass::Auth);
        assert_eq!(classify(403, &[], "").class(), ErrorClass::Auth);
    }

    #[test]
    fn x_should_retry_is_obeyed_both_ways() {
        let forced = classify(400, &[("x-should-retry", "true")], "busy");
        assert_eq!(forced.class(), ErrorClass::ServerError);
        assert!(
            forced.to_string().contains("x-should-retry: true"),
            "{forced}"
        );
        let refused = classify(500, &[("x-should-retry", "false")], "broken");
        assert_eq!(refused.class(), ErrorClass::Provider);
        assert!(
            refused.to_string().contains("x-should-retry: false"),
            "{refused}"
        );
        let limited = classify(429, &[("x-should-retry", "true"), ("retry-after", "1")], "");
        assert_eq!(
            limited.class(),
            ErrorClass::RateLimit,
            "a retryable status keeps its class"
        );
    }

    #[test]
    fn auth_errors_name_the_key_variable_not_the_key() {
        let key = ApiKey::new("sk-secret").from_variable("MY_ANTHROPIC_KEY");
        let error = from_status(
            "anthropic",
            401,
            &HeaderMap::new(),
            r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key sk-secret"}}"#,
            Some(&key),
        );
        assert_eq!(error.class(), ErrorClass::Auth);
        let text = error.to_string();
        assert!(text.contains("`MY_ANTHROPIC_KEY`"), "{text}");
        assert!(!text.contains("sk-secret"), "{text}");
    }

    #[test]
    fn messages_come_from_the_body() {
        let error = classify(
            400,
            &[("request-id", "req_9")],
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: required"}}"#,
        );
        assert_eq!(
            error.to_string(),
            "`anthropic` rejected the request with status 400: invalid_request_error: max_tokens: required (request req_9)"
        );
        let vllm =
            ErrorBody::parse(r#"{"object":"error","message":"bad model","type":"NotFoundError"}"#);
        assert_eq!(vllm.message, "bad model");
        assert_eq!(vllm.kind.as_deref(), Some("NotFoundError"));
        let fastapi = ErrorBody::parse(r#"{"detail":"Not Found"}"#);
        assert_eq!(fastapi.message, "Not Found");
        assert!(classify(404, &[], "").to_string().contains("Not Found"));
    }

    #[test]
    fn stream_errors() {
        let overloaded = ErrorBody::parse(
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
        );
        assert_eq!(
            from_stream_error("a", &overloaded, None, None).class(),
            ErrorClass::Overloaded
        );
        let died = ErrorBody::parse(
            r#"{"error":{"message":"engine died","type":"InternalServerError","code":500}}"#,
        );
        assert_eq!(
            from_stream_error("a", &died, Some(500), None).class(),
            ErrorClass::ServerError
        );
    }

    #[test]
    fn keys_echoed_by_a_server_are_redacted() {
        let key = ApiKey::new("sk-secret");
        let error = from_status(
            "openai",
            401,
            &HeaderMap::new(),
            "bad key sk-secret",
            Some(&key),
        );
        assert!(!error.to_string().contains("sk-secret"));
        assert!(!format!("{error:?}").contains("sk-secret"));
    }
}
