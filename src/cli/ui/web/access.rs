//! Who may use the web view: requests must be addressed to this server by name (a page of
//! another site cannot reach it by rebinding a domain to 127.0.0.1), actions must carry
//! the server's token in a header (a page of another site cannot send one without a CORS
//! preflight, which is never granted), and off loopback every request needs the token (in
//! the link printed at start, then a cookie).

use std::net::SocketAddr;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// The header actions carry the token in.
pub(super) const TOKEN_HEADER: &str = "x-atomic-token";

/// The cookie a browser keeps the token in, off loopback.
const TOKEN_COOKIE: &str = "atomic_token";

/// The server's address and token.
#[derive(Clone, Debug)]
pub(super) struct Access {
    local: SocketAddr,
    token: String,
}

impl Access {
    /// Access to a server listening on `local`, with a fresh random token.
    pub(super) fn new(local: SocketAddr) -> Self {
        let token = format!("{:032x}", rand::random::<u128>());
        Self { local, token }
    }

    /// The token pages embed for their actions.
    pub(super) fn token(&self) -> &str {
        &self.token
    }

    /// The link to open: with the token when off loopback.
    pub(super) fn start_url(&self) -> String {
        if self.local.ip().is_loopback() {
            format!("http://{}/", self.local)
        } else {
            format!("http://{}/?token={}", self.local, self.token)
        }
    }

    /// The `Host` values this server answers to.
    fn host_allowed(&self, host: &str) -> bool {
        let port = self.local.port();
        if self.local.ip().is_loopback() {
            [
                format!("127.0.0.1:{port}"),
                format!("localhost:{port}"),
                format!("[::1]:{port}"),
            ]
            .iter()
            .any(|allowed| allowed == host)
        } else {
            // Reached by whatever name the network gives it; the token guards it.
            true
        }
    }

    fn token_in(&self, headers: &HeaderMap, query: Option<&str>) -> bool {
        let header = headers
            .get(TOKEN_HEADER)
            .and_then(|value| value.to_str().ok());
        let cookie = headers
            .get_all(header::COOKIE)
            .iter()
            .filter_map(|value| value.to_str().ok())
            .flat_map(|cookies| cookies.split(';'))
            .filter_map(|pair| pair.trim().split_once('='))
            .find(|(name, _)| *name == TOKEN_COOKIE)
            .map(|(_, value)| value);
        let query = query.and_then(|query| {
            query
                .split('&')
                .filter_map(|pair| pair.split_once('='))
                .find(|(name, _)| *name == "token")
                .map(|(_, value)| value)
        });
        [header, cookie, query]
            .into_iter()
            .flatten()
            .any(|given| constant_time_eq(given.as_bytes(), self.token.as_bytes()))
    }
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0_u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The middleware that applies [`Access`] to every request.
pub(super) async fn guard(State(access): State<Access>, request: Request, next: Next) -> Response {
    let headers = request.headers();
    let host = headers
        .get(header::HOST)
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default();
    if !access.host_allowed(host) {
        return (StatusCode::MISDIRECTED_REQUEST, "unknown host").into_response();
    }
    let query = request.uri().query().map(str::to_owned);
    let action = request.method() != Method::GET && request.method() != Method::HEAD;
    let needs_token = action || !access.local.ip().is_loopback();
    if needs_token {
        // Actions need the header itself; pages may use the cookie or the link.
        let given = if action {
            request
                .headers()
                .get(TOKEN_HEADER)
                .and_then(|value| value.to_str().ok())
                .is_some_and(|given| constant_time_eq(given.as_bytes(), access.token.as_bytes()))
        } else {
            access.token_in(request.headers(), query.as_deref())
        };
        if !given {
            return (
                StatusCode::FORBIDDEN,
                "missing or wrong token: open the link `atomic ui --web` printed",
            )
                .into_response();
        }
    }
    let from_link = query.is_some_and(|query| query.contains("token="));
    let mut response = next.run(request).await;
    if from_link
        && let Ok(cookie) = format!(
            "{TOKEN_COOKIE}={}; Path=/; HttpOnly; SameSite=Strict",
            access.token
        )
        .parse()
    {
        response.headers_mut().insert(header::SET_COOKIE, cookie);
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_servers_answer_only_to_their_own_names() {
        let access = Access::new("127.0.0.1:4100".parse().expect("address"));
        assert!(access.host_allowed("127.0.0.1:4100"));
        assert!(access.host_allowed("localhost:4100"));
        assert!(!access.host_allowed("evil.example:4100"));
        assert!(!access.host_allowed("127.0.0.1:4101"));
        assert_eq!(access.start_url(), "http://127.0.0.1:4100/");
    }

    #[test]
    fn the_token_is_read_from_header_cookie_or_link() {
        let access = Access::new("0.0.0.0:4100".parse().expect("address"));
        let token = access.token().to_owned();
        assert!(access.start_url().ends_with(&format!("?token={token}")));
        let mut headers = HeaderMap::new();
        assert!(!access.token_in(&headers, None));
        assert!(access.token_in(&headers, Some(&format!("a=1&token={token}"))));
        assert!(!access.token_in(&headers, Some("token=nope")));
        headers.insert(
            header::COOKIE,
            format!("x=1; {TOKEN_COOKIE}={token}")
                .parse()
                .expect("cookie"),
        );
        assert!(access.token_in(&headers, None));
    }
}
