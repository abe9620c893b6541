//! [`Egress`]: the only way out of a sandboxed step — an HTTP proxy on 127.0.0.1 that lets
//! a connection through to the hosts the step may reach and refuses the rest, saying so.
//!
//! A sandboxed process may open TCP connections to this proxy's port alone (Landlock, see
//! `process::confine`); its `HTTPS_PROXY` / `HTTP_PROXY` / `ALL_PROXY` name the proxy.
//! `CONNECT host:port` (TLS, and anything else tunnelled) is judged by the host name the
//! client asked for, so the proxy never sees inside TLS; a plain-HTTP request in absolute
//! form (`GET http://host/path`) by its URL's host, forwarded with `Connection: close` so
//! a kept-alive client cannot send its next request to another host through the same
//! tunnel. Anything else is refused. Every refusal reaches the step's [`Refusals`] sink
//! (a `sandbox-denied` event) and the client gets `403` with the reason.

use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, PoisonError, RwLock};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

/// Longest request head read before a connection is refused.
const MAX_HEAD: usize = 16 * 1024;
/// How long a client has to send its request head, and the proxy to reach the host.
const DEADLINE: Duration = Duration::from_secs(15);

/// A connection the proxy refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refused {
    /// The host asked for (as written), or what the request was when it named none.
    pub target: String,
    /// Why, for people.
    pub reason: String,
}

/// Where refusals go.
pub type Refusals = Arc<dyn Fn(Refused) + Send + Sync>;

/// Host names a step may reach: exact names, or `*.example.com` for every name below it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Allowed(Vec<String>);

impl Allowed {
    /// The hosts `patterns` name (case does not matter).
    #[must_use]
    pub fn new(patterns: impl IntoIterator<Item = String>) -> Self {
        Self(
            patterns
                .into_iter()
                .map(|pattern| pattern.trim().to_ascii_lowercase())
                .filter(|pattern| !pattern.is_empty())
                .collect(),
        )
    }

    /// Whether `host` is one of them.
    #[must_use]
    pub fn allows(&self, host: &str) -> bool {
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        self.0
            .iter()
            .any(|pattern| match pattern.strip_prefix("*.") {
                Some(suffix) => host
                    .strip_suffix(suffix)
                    .is_some_and(|below| below.ends_with('.') && below.len() > 1),
                None => *pattern == host,
            })
    }

    /// Lets `host` through too.
    pub fn add(&mut self, host: &str) {
        let host = host.trim().to_ascii_lowercase();
        if !host.is_empty() && !self.0.contains(&host) {
            self.0.push(host);
        }
    }

    /// The patterns, for messages.
    #[must_use]
    pub fn patterns(&self) -> &[String] {
        &self.0
    }
}

/// The ports of this machine a step may reach (its model endpoint on loopback, atomic's
/// model gateway), shared with its proxy so a port opened once the step started counts
/// too. Every other loopback port stays closed, through the proxy as well.
#[derive(Clone, Debug, Default)]
pub struct Loopback(Arc<RwLock<Vec<u16>>>);

impl Loopback {
    /// These ports.
    #[must_use]
    pub fn new(ports: impl IntoIterator<Item = u16>) -> Self {
        Self(Arc::new(RwLock::new(ports.into_iter().collect())))
    }

    /// Opens `port` too.
    pub fn open(&self, port: u16) {
        let mut ports = self.0.write().unwrap_or_else(PoisonError::into_inner);
        if !ports.contains(&port) {
            ports.push(port);
        }
    }

    /// Whether `port` is open.
    #[must_use]
    pub fn allows(&self, port: u16) -> bool {
        self.0
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .contains(&port)
    }
}

/// What a step's proxy lets through: its hosts by name, this machine by port.
struct Reachable {
    hosts: Allowed,
    loopback: Loopback,
}

impl Reachable {
    /// Why a connection to `host:port` is refused, or `None` when it may go.
    fn refusal(&self, host: &str, port: u16) -> Option<String> {
        let on_this_machine = is_loopback(host);
        if self.hosts.allows(host) || (on_this_machine && self.loopback.allows(port)) {
            return None;
        }
        let patterns = self.hosts.patterns();
        Some(if on_this_machine {
            format!(
                "`{host}:{port}` is not allowed: on this machine the sandbox opens only its model endpoint (add `network \"{host}\"` to open every port)"
            )
        } else if patterns.is_empty() {
            format!(
                "`{host}` is not allowed: the sandbox lets no host through (add `network \"{host}\"`)"
            )
        } else {
            format!(
                "`{host}` is not allowed: the sandbox lets through {} (add `network \"{host}\"`)",
                patterns.join(", ")
            )
        })
    }
}

/// Whether `host` names this machine.
fn is_loopback(host: &str) -> bool {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    host == "localhost"
        || host.ends_with(".localhost")
        || host
            .parse::<IpAddr>()
            .is_ok_and(|ip| ip.is_loopback() || ip.is_unspecified())
}

/// A running proxy; dropping it stops it (connections in flight end with it).
#[derive(Debug)]
pub struct Egress {
    address: SocketAddr,
    accepting: JoinHandle<()>,
}

impl Egress {
    /// Starts a proxy on a free port of 127.0.0.1 letting through what `allowed` names and
    /// the `loopback` ports of this machine, and telling `refusals` of the rest.
    ///
    /// # Errors
    /// When no port can be bound.
    pub async fn start(
        allowed: Allowed,
        loopback: Loopback,
        refusals: Refusals,
    ) -> std::io::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let address = listener.local_addr()?;
        let reach = Arc::new(Reachable {
            hosts: allowed,
            loopback,
        });
        let accepting = tokio::spawn(async move {
            let mut open = tokio::task::JoinSet::new();
            loop {
                let Ok((client, _)) = listener.accept().await else {
                    continue;
                };
                let (reach, refusals) = (Arc::clone(&reach), Arc::clone(&refusals));
                open.spawn(async move {
                    let _ = serve(client, &reach, &refusals).await;
                });
                // Reap what ended, so a long step does not keep every finished task.
                while open.try_join_next().is_some() {}
            }
        });
        Ok(Self { address, accepting })
    }

    /// Its port on 127.0.0.1.
    #[must_use]
    pub fn port(&self) -> u16 {
        self.address.port()
    }

    /// Its URL, for `HTTPS_PROXY` and its kin.
    #[must_use]
    pub fn url(&self) -> String {
        format!("http://{}", self.address)
    }
}

impl Drop for Egress {
    fn drop(&mut self) {
        self.accepting.abort();
    }
}

/// One client connection: its request judged, then tunnelled or refused.
async fn serve(
    mut client: TcpStream,
    reach: &Reachable,
    refusals: &Refusals,
) -> std::io::Result<()> {
    let Ok(Ok((head, rest))) = tokio::time::timeout(DEADLINE, read_head(&mut client)).await else {
        return refuse(
            &mut client,
            400,
            "the request head did not come, or was too long",
        )
        .await;
    };
    let Some(request) = Request::parse(&head) else {
        return refuse(&mut client, 400, "not an HTTP request").await;
    };
    let Some((host, port)) = request.destination() else {
        let reason = "only proxy requests (CONNECT host:port, or an absolute http:// URL) go out of a sandbox".to_owned();
        refusals(Refused {
            target: request.target.clone(),
            reason: reason.clone(),
        });
        return refuse(&mut client, 400, &reason).await;
    };
    if let Some(reason) = reach.refusal(&host, port) {
        refusals(Refused {
            target: format!("{host}:{port}"),
            reason: reason.clone(),
        });
        return refuse(&mut client, 403, &reason).await;
    }
    let Ok(Ok(mut upstream)) =
        tokio::time::timeout(DEADLINE, TcpStream::connect((host.as_str(), port))).await
    else {
        return refuse(
            &mut client,
            502,
            &format!("`{host}:{port}` could not be reached"),
        )
        .await;
    };
    if request.method.eq_ignore_ascii_case("CONNECT") {
        client
            .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
            .await?;
    } else {
        upstream.write_all(&request.forwarded(&head)).await?;
    }
    if !rest.is_empty() {
        upstream.write_all(&rest).await?;
    }
    tokio::io::copy_bidirectional(&mut client, &mut upstream).await?;
    Ok(())
}

/// Reads up to the end of the request head: the head, and what came after it.
async fn read_head(client: &mut TcpStream) -> std::io::Result<(Vec<u8>, Vec<u8>)> {
    let mut read = Vec::with_capacity(1024);
    let mut chunk = [0_u8; 4096];
    loop {
        let count = client.read(&mut chunk).await?;
        if count == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        read.extend_from_slice(&chunk[..count]);
        if let Some(end) = read.windows(4).position(|window| window == b"\r\n\r\n") {
            let rest = read.split_off(end + 4);
            return Ok((read, rest));
        }
        if read.len() > MAX_HEAD {
            return Err(std::io::ErrorKind::InvalidData.into());
        }
    }
}

/// Answers `status` with `reason` and closes.
async fn refuse(client: &mut TcpStream, status: u16, reason: &str) -> std::io::Result<()> {
    let text = match status {
        403 => "Forbidden",
        502 => "Bad Gateway",
        _ => "Bad Request",
    };
    let body = format!("atomic's sandbox: {reason}\n");
    let answer = format!(
        "HTTP/1.1 {status} {text}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    client.write_all(answer.as_bytes()).await?;
    client.shutdown().await
}

/// A request line and its `Host` header.
#[derive(Debug)]
struct Request {
    method: String,
    target: String,
    version: String,
}

impl Request {
    fn parse(head: &[u8]) -> Option<Self> {
        let text = std::str::from_utf8(head).ok()?;
        let line = text.lines().next()?;
        let mut words = line.split_whitespace();
        let (method, target, version) = (words.next()?, words.next()?, words.next()?);
        version.starts_with("HTTP/").then(|| Self {
            method: method.to_owned(),
            target: target.to_owned(),
            version: version.to_owned(),
        })
    }

    /// The host and port asked for: a CONNECT's authority, or an absolute `http://` URL's.
    fn destination(&self) -> Option<(String, u16)> {
        if self.method.eq_ignore_ascii_case("CONNECT") {
            return authority(&self.target, None);
        }
        let rest = self.target.strip_prefix("http://")?;
        let end = rest.find(['/', '?']).unwrap_or(rest.len());
        authority(&rest[..end], Some(80))
    }

    /// The head to send the host: the request line in origin form, `Proxy-*` headers left
    /// out, and `Connection: close` so the tunnel carries this request only.
    fn forwarded(&self, head: &[u8]) -> Vec<u8> {
        let text = String::from_utf8_lossy(head);
        let rest = self.target.strip_prefix("http://").unwrap_or(&self.target);
        let path = rest.find(['/', '?']).map_or("/", |at| &rest[at..]);
        let mut out = format!("{} {path} {}\r\n", self.method, self.version);
        for line in text.split("\r\n").skip(1) {
            if line.is_empty() {
                continue;
            }
            let name = line.split(':').next().unwrap_or_default().trim();
            let lower = name.to_ascii_lowercase();
            if lower.starts_with("proxy-") || lower == "connection" || lower == "keep-alive" {
                continue;
            }
            out.push_str(line);
            out.push_str("\r\n");
        }
        out.push_str("Connection: close\r\n\r\n");
        out.into_bytes()
    }
}

/// `host:port` (a bracketed IPv6 host too), the port defaulting to `default`.
fn authority(text: &str, default: Option<u16>) -> Option<(String, u16)> {
    let (host, port) = if let Some(rest) = text.strip_prefix('[') {
        let (host, after) = rest.split_once(']')?;
        (host, after.strip_prefix(':'))
    } else {
        match text.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (text, None),
        }
    };
    let port = match port {
        Some(port) => port.parse().ok()?,
        None => default?,
    };
    (!host.is_empty()).then(|| (host.to_owned(), port))
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    #[test]
    fn hosts_match_exactly_or_below_a_wildcard() {
        let allowed = Allowed::new(["registry.npmjs.org".to_owned(), "*.crates.io".to_owned()]);
        assert!(allowed.allows("registry.npmjs.org"));
        assert!(allowed.allows("REGISTRY.npmjs.org."));
        assert!(allowed.allows("static.crates.io"));
        assert!(!allowed.allows("crates.io"));
        assert!(!allowed.allows("evilcrates.io"));
        assert!(!allowed.allows("npmjs.org"));
        assert!(!Allowed::default().allows("localhost"));
    }

    #[test]
    fn authorities_parse_with_their_ports() {
        assert_eq!(authority("a.b:443", None), Some(("a.b".into(), 443)));
        assert_eq!(authority("a.b", Some(80)), Some(("a.b".into(), 80)));
        assert_eq!(authority("a.b", None), None);
        assert_eq!(authority("[::1]:8080", None), Some(("::1".into(), 8080)));
        assert_eq!(authority(":80", None), None);
    }

    /// A server on loopback that answers every request with `hello` and the path it got.
    async fn origin() -> (u16, JoinHandle<()>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let port = listener.local_addr().expect("address").port();
        let task = tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                tokio::spawn(async move {
                    let Ok((head, _)) = read_head(&mut stream).await else {
                        return;
                    };
                    let line = String::from_utf8_lossy(&head)
                        .lines()
                        .next()
                        .unwrap_or_default()
                        .to_owned();
                    let body = format!("hello {line}");
                    let answer = format!(
                        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                        body.len()
                    );
                    let _ = stream.write_all(answer.as_bytes()).await;
                });
            }
        });
        (port, task)
    }

    async fn exchange(port: u16, request: &str) -> String {
        let mut stream = TcpStream::connect(("127.0.0.1", port))
            .await
            .expect("connect");
        stream.write_all(request.as_bytes()).await.expect("send");
        let mut answer = String::new();
        let _ = stream.read_to_string(&mut answer).await;
        answer
    }

    #[tokio::test]
    async fn allowed_hosts_go_through_and_the_rest_are_refused_and_reported() {
        let (origin_port, _origin) = origin().await;
        let seen: Arc<Mutex<Vec<Refused>>> = Arc::default();
        let sink = Arc::clone(&seen);
        let loopback = Loopback::default();
        let proxy = Egress::start(
            Allowed::new(["localhost".to_owned()]),
            loopback.clone(),
            Arc::new(move |refused| sink.lock().expect("lock").push(refused)),
        )
        .await
        .expect("the proxy starts");

        // Plain HTTP in absolute form: forwarded in origin form.
        let answer = exchange(
            proxy.port(),
            &format!("GET http://localhost:{origin_port}/x?y=1 HTTP/1.1\r\nHost: localhost\r\nProxy-Connection: keep-alive\r\n\r\n"),
        )
        .await;
        assert!(answer.ends_with("hello GET /x?y=1 HTTP/1.1"), "{answer}");

        // A tunnel: the proxy says yes, then carries bytes both ways.
        let mut tunnel = TcpStream::connect(("127.0.0.1", proxy.port()))
            .await
            .expect("connect");
        tunnel
            .write_all(
                format!("CONNECT localhost:{origin_port} HTTP/1.1\r\nHost: localhost\r\n\r\n")
                    .as_bytes(),
            )
            .await
            .expect("send");
        let mut established = [0_u8; 39];
        tunnel
            .read_exact(&mut established)
            .await
            .expect("the proxy answers");
        assert_eq!(
            &established[..],
            b"HTTP/1.1 200 Connection established\r\n\r\n"
        );
        tunnel
            .write_all(b"GET /through HTTP/1.1\r\nHost: localhost\r\n\r\n")
            .await
            .expect("send through");
        let mut answer = String::new();
        let _ = tunnel.read_to_string(&mut answer).await;
        assert!(answer.ends_with("hello GET /through HTTP/1.1"), "{answer}");

        // Another name for the same server is not on the list.
        let answer = exchange(
            proxy.port(),
            &format!("CONNECT 127.0.0.1:{origin_port} HTTP/1.1\r\n\r\n"),
        )
        .await;
        assert!(answer.starts_with("HTTP/1.1 403"), "{answer}");
        assert!(
            answer.contains(&format!("`127.0.0.1:{origin_port}` is not allowed")),
            "{answer}"
        );
        // A loopback port opened while the proxy runs (atomic's model gateway) goes
        // through by address; the names of other hosts still need the list.
        loopback.open(origin_port);
        let answer = exchange(
            proxy.port(),
            &format!("GET http://127.0.0.1:{origin_port}/open HTTP/1.1\r\n\r\n"),
        )
        .await;
        assert!(answer.ends_with("hello GET /open HTTP/1.1"), "{answer}");
        let answer = exchange(
            proxy.port(),
            &format!("CONNECT example.com:{origin_port} HTTP/1.1\r\n\r\n"),
        )
        .await;
        assert!(answer.starts_with("HTTP/1.1 403"), "{answer}");
        // A request that is not a proxy request.
        let answer = exchange(proxy.port(), "GET /direct HTTP/1.1\r\n\r\n").await;
        assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");

        let seen = seen.lock().expect("lock").clone();
        assert_eq!(seen.len(), 3, "{seen:?}");
        assert_eq!(seen[0].target, format!("127.0.0.1:{origin_port}"));
        assert_eq!(seen[1].target, format!("example.com:{origin_port}"));
        assert_eq!(seen[2].target, "/direct");
    }
}
