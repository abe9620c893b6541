//! [`Gateway`]: atomic holding an agent CLI's model key. The CLI is pointed at a port of
//! 127.0.0.1 with a random placeholder for a key; every request it sends there is forwarded
//! to the real endpoint with the placeholder replaced by the key wherever it appears (a
//! header or the query), and the answer streamed back. Nothing about the wire is assumed,
//! so one gateway serves the Anthropic, OpenAI and Gemini wires alike.
//!
//! The agent, its commands, its MCP servers and every process they start see only the
//! placeholder: it works through this gateway and nowhere else, and the gateway stops with
//! the provider.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use rand::RngCore;

use crate::providers::ProviderError;
use crate::providers::http::build_client;

/// The largest request body forwarded (a long conversation with images stays well below).
const MAX_REQUEST: usize = 256 * 1024 * 1024;
/// The most of an error answer read to take the key out of it.
const MAX_ERROR: usize = 1024 * 1024;
/// How long reaching the real endpoint may take.
const CONNECT: Duration = Duration::from_secs(30);

/// Headers that describe one connection, not the request: never forwarded either way.
const HOP_BY_HOP: &[HeaderName] = &[
    header::CONNECTION,
    header::PROXY_AUTHORIZATION,
    header::PROXY_AUTHENTICATE,
    header::TE,
    header::TRAILER,
    header::TRANSFER_ENCODING,
    header::UPGRADE,
    header::HOST,
    header::CONTENT_LENGTH,
];

/// A running gateway (see the module docs). It starts serving on first use, on the tokio
/// runtime of that moment; dropping it stops it.
#[derive(Debug)]
pub(crate) struct Gateway {
    port: u16,
    placeholder: String,
    /// The listener until serving starts, then the task serving it.
    state: Mutex<Serving>,
    route: Arc<Route>,
}

#[derive(Debug)]
enum Serving {
    Bound(std::net::TcpListener),
    Running(tokio::task::AbortHandle),
    Stopped,
}

/// Where requests go and with what.
struct Route {
    /// `scheme://host[:port]` of the real endpoint.
    origin: String,
    key: String,
    placeholder: String,
    client: reqwest::Client,
}

impl std::fmt::Debug for Route {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Route")
            .field("origin", &self.origin)
            .field("key", &"<redacted>")
            .finish_non_exhaustive()
    }
}

impl Gateway {
    /// Binds a port of 127.0.0.1 for `upstream` (the real base URL), holding `key`.
    ///
    /// # Errors
    /// [`ProviderError::Config`] when `upstream` is not an `http(s)://` URL or no port can
    /// be bound.
    pub(crate) fn bind(
        adapter: &'static str,
        upstream: &str,
        key: &str,
    ) -> Result<Self, ProviderError> {
        let origin = origin(upstream).ok_or_else(|| {
            ProviderError::config(
                adapter,
                format!("the base URL `{upstream}` is not an http:// or https:// URL"),
            )
        })?;
        let listener = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| {
                listener.set_nonblocking(true)?;
                Ok(listener)
            })
            .map_err(|error| {
                ProviderError::config(
                    adapter,
                    format!("atomic's model gateway could not listen on 127.0.0.1: {error}"),
                )
            })?;
        let port = listener
            .local_addr()
            .map_err(|error| ProviderError::config(adapter, error.to_string()))?
            .port();
        let mut bytes = [0_u8; 16];
        rand::rng().fill_bytes(&mut bytes);
        let placeholder = format!(
            "atomic-held-{}",
            bytes.iter().map(|b| format!("{b:02x}")).collect::<String>()
        );
        let route = Arc::new(Route {
            origin: origin.to_owned(),
            key: key.to_owned(),
            placeholder: placeholder.clone(),
            client: build_client(adapter, CONNECT)?,
        });
        Ok(Self {
            port,
            placeholder,
            state: Mutex::new(Serving::Bound(listener)),
            route,
        })
    }

    /// `upstream` as the CLI is to see it: the same path on the gateway's port.
    pub(crate) fn url_for(&self, upstream: &str) -> String {
        let rest = origin(upstream).map_or("", |origin| &upstream[origin.len()..]);
        format!("http://127.0.0.1:{}{rest}", self.port)
    }

    /// What the CLI gets for a key.
    pub(crate) fn placeholder(&self) -> &str {
        &self.placeholder
    }

    /// Its port on 127.0.0.1 (for a sandbox to let the CLI reach).
    pub(crate) fn port(&self) -> u16 {
        self.port
    }

    /// Starts serving, if it has not yet, on the current tokio runtime.
    ///
    /// # Errors
    /// [`ProviderError::Config`] outside a tokio runtime, or when the listener cannot be
    /// handed to it.
    pub(crate) fn serve(&self, adapter: &'static str) -> Result<(), ProviderError> {
        let mut state = self
            .state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let Serving::Bound(_) = &*state else {
            return Ok(());
        };
        let runtime = tokio::runtime::Handle::try_current().map_err(|_| {
            ProviderError::config(adapter, "atomic's model gateway needs a tokio runtime")
        })?;
        let Serving::Bound(listener) = std::mem::replace(&mut *state, Serving::Stopped) else {
            unreachable!("matched above");
        };
        let _entered = runtime.enter();
        let listener = tokio::net::TcpListener::from_std(listener).map_err(|error| {
            ProviderError::config(adapter, format!("atomic's model gateway: {error}"))
        })?;
        let app = Router::new()
            .fallback(forward)
            .with_state(Arc::clone(&self.route));
        let task = runtime.spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        *state = Serving::Running(task.abort_handle());
        Ok(())
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        let state = self
            .state
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Serving::Running(task) = state {
            task.abort();
        }
    }
}

/// `scheme://authority` of an `http(s)://` URL.
fn origin(url: &str) -> Option<&str> {
    let scheme = if url.starts_with("http://") {
        "http://"
    } else if url.starts_with("https://") {
        "https://"
    } else {
        return None;
    };
    let rest = &url[scheme.len()..];
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    (end > 0).then(|| &url[..scheme.len() + end])
}

/// One request: the placeholder swapped for the key, sent on, the answer streamed back.
async fn forward(State(route): State<Arc<Route>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let target = parts
        .uri
        .path_and_query()
        .map_or("/", |target| target.as_str());
    let url = format!(
        "{}{}",
        route.origin,
        target.replace(&route.placeholder, &route.key)
    );
    // Whole, so the endpoint gets a length rather than a chunked body.
    let Ok(body) = axum::body::to_bytes(body, MAX_REQUEST).await else {
        return failure(
            StatusCode::PAYLOAD_TOO_LARGE,
            "the request body was too large or cut off",
        );
    };
    let mut headers = HeaderMap::new();
    for (name, value) in &parts.headers {
        if HOP_BY_HOP.contains(name) {
            continue;
        }
        headers.append(name, swap(value, &route.placeholder, &route.key));
    }
    let sent = route
        .client
        .request(parts.method, &url)
        .headers(headers)
        .body(body)
        .send()
        .await;
    let upstream = match sent {
        Ok(upstream) => upstream,
        Err(error) => {
            return failure(
                StatusCode::BAD_GATEWAY,
                &format!(
                    "atomic's model gateway could not reach {}: {error}",
                    route.origin
                ),
            );
        }
    };
    let status = upstream.status();
    let mut answer = Response::builder().status(status.as_u16());
    for (name, value) in upstream.headers() {
        if !HOP_BY_HOP.contains(name) || *name == header::CONTENT_LENGTH && status.is_success() {
            answer = answer.header(name, value);
        }
    }
    let body = if status.is_success() {
        Body::from_stream(upstream.bytes_stream())
    } else {
        // An error may echo the key: the agent gets the placeholder back instead.
        let text = read_capped(upstream).await;
        Body::from(text.replace(&route.key, &route.placeholder))
    };
    answer
        .body(body)
        .unwrap_or_else(|_| failure(StatusCode::BAD_GATEWAY, "the answer could not be relayed"))
}

/// `value` with `from` replaced by `to` (unchanged when it is not text or does not hold it).
fn swap(value: &HeaderValue, from: &str, to: &str) -> HeaderValue {
    match value.to_str() {
        Ok(text) if text.contains(from) => {
            HeaderValue::from_str(&text.replace(from, to)).unwrap_or_else(|_| value.clone())
        }
        _ => value.clone(),
    }
}

async fn read_capped(mut upstream: reqwest::Response) -> String {
    let mut bytes = Vec::new();
    while bytes.len() < MAX_ERROR {
        match upstream.chunk().await {
            Ok(Some(chunk)) => bytes.extend_from_slice(&chunk),
            _ => break,
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

fn failure(status: StatusCode, message: &str) -> Response {
    (status, message.to_owned()).into_response()
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};

    use super::*;

    /// A one-request HTTP server that answers `status` with `body` and hands back what it
    /// received.
    fn upstream(status: u16, body: &'static str) -> (String, std::thread::JoinHandle<String>) {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let url = format!("http://{}", listener.local_addr().expect("address"));
        let serving = std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().expect("accept");
            let mut seen = Vec::new();
            let mut buffer = [0_u8; 4096];
            loop {
                let read = stream.read(&mut buffer).expect("read");
                seen.extend_from_slice(&buffer[..read]);
                let text = String::from_utf8_lossy(&seen);
                if let Some((head, rest)) = text.split_once("\r\n\r\n") {
                    let length = head
                        .lines()
                        .find_map(|line| {
                            line.to_ascii_lowercase()
                                .strip_prefix("content-length: ")
                                .map(|n| n.trim().parse::<usize>().expect("length"))
                        })
                        .unwrap_or(0);
                    if rest.len() >= length {
                        break;
                    }
                }
                if read == 0 {
                    break;
                }
            }
            let answer = format!(
                "HTTP/1.1 {status} X\r\ncontent-type: text/plain\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            stream.write_all(answer.as_bytes()).expect("write");
            String::from_utf8_lossy(&seen).into_owned()
        });
        (url, serving)
    }

    #[tokio::test]
    async fn the_placeholder_becomes_the_key_on_the_way_out_and_never_comes_back() {
        let (real, seen) = upstream(200, "streamed answer");
        let gateway =
            Gateway::bind("claude-code", &format!("{real}/v1"), "sk-real").expect("bound");
        gateway.serve("claude-code").expect("serving");
        let url = gateway.url_for(&format!("{real}/v1"));
        assert_eq!(url, format!("http://127.0.0.1:{}/v1", gateway.port()));
        let placeholder = gateway.placeholder().to_owned();
        assert!(!placeholder.contains("sk-real"));
        let answer = crate::tls::client()
            .post(format!("{url}/messages?key={placeholder}"))
            .header("x-api-key", &placeholder)
            .header("authorization", format!("Bearer {placeholder}"))
            .body(r#"{"model":"m"}"#)
            .send()
            .await
            .expect("answered");
        assert_eq!(answer.status(), 200);
        assert_eq!(answer.text().await.expect("body"), "streamed answer");
        let seen = seen.join().expect("upstream");
        assert!(
            seen.starts_with("POST /v1/messages?key=sk-real HTTP/1.1"),
            "{seen}"
        );
        assert!(seen.contains("x-api-key: sk-real"), "{seen}");
        assert!(seen.contains("authorization: Bearer sk-real"), "{seen}");
        assert!(seen.ends_with(r#"{"model":"m"}"#), "{seen}");
        assert!(!seen.contains(&placeholder), "{seen}");
    }

    #[tokio::test]
    async fn an_error_echoing_the_key_reaches_the_agent_with_the_placeholder() {
        let (real, seen) = upstream(401, "invalid x-api-key sk-real");
        let gateway = Gateway::bind("gemini", &real, "sk-real").expect("bound");
        gateway.serve("gemini").expect("serving");
        let answer = crate::tls::client()
            .get(format!("{}/models", gateway.url_for(&real)))
            .header("x-goog-api-key", gateway.placeholder())
            .send()
            .await
            .expect("answered");
        assert_eq!(answer.status(), 401);
        let text = answer.text().await.expect("body");
        assert_eq!(text, format!("invalid x-api-key {}", gateway.placeholder()));
        assert!(
            seen.join()
                .expect("upstream")
                .contains("x-goog-api-key: sk-real")
        );
    }

    #[tokio::test]
    async fn an_unreachable_endpoint_is_a_bad_gateway_naming_it_and_dropping_stops_it() {
        let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let real = format!("http://{}", closed.local_addr().expect("address"));
        drop(closed);
        let gateway = Gateway::bind("codex", &real, "sk-real").expect("bound");
        gateway.serve("codex").expect("serving");
        let url = gateway.url_for(&real);
        let answer = reqwest::get(format!("{url}/v1/responses"))
            .await
            .expect("answered");
        assert_eq!(answer.status(), 502);
        assert!(answer.text().await.expect("body").contains(&real));
        drop(gateway);
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(reqwest::get(format!("{url}/v1/responses")).await.is_err());
    }

    #[test]
    fn origins_are_scheme_and_authority_only() {
        assert_eq!(origin("http://127.0.0.1:9/v1"), Some("http://127.0.0.1:9"));
        assert_eq!(
            origin("https://api.anthropic.com"),
            Some("https://api.anthropic.com")
        );
        assert_eq!(origin("https://h?x"), Some("https://h"));
        assert_eq!(origin("ftp://h"), None);
        assert_eq!(origin("http:///x"), None);
    }
}
