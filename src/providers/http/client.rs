//! Sending one streaming POST: the shared reqwest client setup and the response head
//! checks every HTTP adapter needs.

use std::time::Duration;

use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderValue};
use serde_json::Value;

use super::classify::{from_send_error, from_status};
use super::secret::ApiKey;
use super::sse::SseReader;
use crate::providers::ProviderError;

/// Most bytes of an error body kept for the message.
const MAX_ERROR_BODY: usize = 64 * 1024;

/// A client for one provider: rustls, a connect timeout, and **no** automatic retries (the
/// runtime's retry policy owns retrying, and a completion POST must never be re-sent
/// behind its back). Redirects are not followed: they would re-send the key elsewhere.
pub(crate) fn build_client(
    adapter: &'static str,
    connect_timeout: Duration,
) -> Result<reqwest::Client, ProviderError> {
    crate::tls::client_builder()
        .connect_timeout(connect_timeout)
        .retry(reqwest::retry::never())
        .redirect(reqwest::redirect::Policy::none())
        .user_agent(concat!("atomic/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|error| {
            ProviderError::config(adapter, format!("cannot build an HTTP client: {error}"))
        })
}

/// One streaming POST.
pub(crate) struct StreamPost<'a> {
    /// The adapter, for errors.
    pub(crate) adapter: &'static str,
    /// The endpoint.
    pub(crate) url: &'a reqwest::Url,
    /// Auth and protocol headers.
    pub(crate) headers: HeaderMap,
    /// The JSON body.
    pub(crate) body: &'a Value,
    /// Longest silence allowed: for the response head, then between events.
    pub(crate) idle: Duration,
    /// The key, to redact it from anything the server echoes.
    pub(crate) key: Option<&'a ApiKey>,
}

impl StreamPost<'_> {
    /// Sends the request and returns its event stream once a 2xx event-stream head
    /// arrived; any other answer becomes a classified error.
    pub(crate) async fn send(self, client: &reqwest::Client) -> Result<SseReader, ProviderError> {
        let Self {
            adapter,
            url,
            headers,
            body,
            idle,
            key,
        } = self;
        let request = client
            .post(url.clone())
            .headers(headers)
            .header(ACCEPT, HeaderValue::from_static("text/event-stream"))
            .json(body)
            .send();
        let response = match tokio::time::timeout(idle, request).await {
            Err(_elapsed) => {
                return Err(ProviderError::timeout(adapter, idle));
            }
            Ok(Err(error)) => return Err(from_send_error(adapter, &error, idle)),
            Ok(Ok(response)) => response,
        };
        let status = response.status();
        if !status.is_success() {
            let headers = response.headers().clone();
            let body = read_error_body(response, idle).await;
            return Err(from_status(adapter, status.as_u16(), &headers, &body, key));
        }
        let content_type = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .unwrap_or("text/event-stream")
            .to_owned();
        if !content_type.starts_with("text/event-stream") {
            let body = read_error_body(response, idle).await;
            let excerpt: String = body.chars().take(200).collect();
            return Err(ProviderError::bad_output(
                adapter,
                format!(
                    "expected an event stream, got `{content_type}`: {}",
                    super::secret::redact(key, &excerpt)
                ),
            ));
        }
        Ok(SseReader::new(adapter, response, idle))
    }
}

/// As much of an error body as arrives within the limits; a failure to read it is not
/// itself reported (the status already says what went wrong).
async fn read_error_body(mut response: reqwest::Response, idle: Duration) -> String {
    let mut bytes = Vec::new();
    while bytes.len() < MAX_ERROR_BODY {
        match tokio::time::timeout(idle, response.chunk()).await {
            Ok(Ok(Some(chunk))) => bytes.extend_from_slice(&chunk),
            _ => break,
        }
    }
    bytes.truncate(MAX_ERROR_BODY);
    String::from_utf8_lossy(&bytes).into_owned()
}

/// `base` joined with `path`, keeping any path prefix `base` has (a gateway mounted under
/// `/proxy/anthropic`). When `base` already ends in a version segment (`/v1`, `/v1beta`)
/// and `path` starts with one, the base's wins.
pub(crate) fn endpoint(base: &reqwest::Url, path: &str) -> reqwest::Url {
    let mut url = base.clone();
    let prefix = base.path().trim_end_matches('/');
    let last = prefix.rsplit('/').next().unwrap_or_default();
    let (version, rest) = split_version(path.trim_start_matches('/'));
    let path = if version.is_some() && is_version(last) {
        format!("{prefix}/{rest}")
    } else {
        format!("{prefix}/{}", path.trim_start_matches('/'))
    };
    url.set_path(&path);
    url
}

fn split_version(path: &str) -> (Option<&str>, &str) {
    match path.split_once('/') {
        Some((first, rest)) if is_version(first) => (Some(first), rest),
        _ => (None, path),
    }
}

/// `v1`, `v2`, `v1beta`: a `v`, digits, then letters.
fn is_version(segment: &str) -> bool {
    let Some(rest) = segment.strip_prefix('v') else {
        return false;
    };
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    digits > 0 && rest[digits..].bytes().all(|b| b.is_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn join(base: &str, path: &str) -> String {
        endpoint(&reqwest::Url::parse(base).expect("valid url"), path).to_string()
    }

    #[test]
    fn joins_paths_without_doubling_versions() {
        assert_eq!(
            join("https://api.anthropic.com", "/v1/messages"),
            "https://api.anthropic.com/v1/messages"
        );
        assert_eq!(
            join("http://127.0.0.1:9/", "/v1/messages"),
            "http://127.0.0.1:9/v1/messages"
        );
        assert_eq!(
            join("http://h/v1", "/v1/chat/completions"),
            "http://h/v1/chat/completions"
        );
        assert_eq!(
            join("http://h/v1/", "/v1/chat/completions"),
            "http://h/v1/chat/completions"
        );
        assert_eq!(
            join("http://h/api/v1beta", "/v1/chat/completions"),
            "http://h/api/v1beta/chat/completions"
        );
        assert_eq!(
            join("http://h/proxy", "/v1/messages"),
            "http://h/proxy/v1/messages"
        );
        assert_eq!(join("http://h/videos", "/v1/x"), "http://h/videos/v1/x");
    }
}
