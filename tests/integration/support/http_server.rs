//! A minimal, scriptable HTTP/1.1 server on 127.0.0.1 for fake backends.
//!
//! It runs on its own thread with its own tokio runtime, so it works from async tests (any
//! runtime flavour, paused clocks included) and from blocking ones (`assert_cmd` driving a
//! CLI). Connections are kept alive; streaming replies use chunked encoding, one chunk per
//! part, each written and flushed on its own so clients see events split across reads.
//! Every request is recorded before it is answered. Dropping the server stops it.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// Largest request head accepted.
const MAX_HEAD: usize = 64 * 1024;
/// Largest request body accepted.
const MAX_BODY: usize = 64 * 1024 * 1024;

/// One request as received.
#[derive(Clone, Debug)]
pub struct Request {
    /// `GET`, `POST`, ….
    pub method: String,
    /// The request target: path and query.
    pub target: String,
    /// Headers in order, names lowercased.
    pub headers: Vec<(String, String)>,
    /// The body (de-chunked).
    pub body: Vec<u8>,
}

impl Request {
    /// The path without the query.
    pub fn path(&self) -> &str {
        self.target.split('?').next().unwrap_or_default()
    }

    /// The first header with this name (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The body as JSON (`Null` when it is not JSON).
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or(serde_json::Value::Null)
    }

    /// The body as text.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// A piece of a streamed reply.
#[derive(Clone, Debug)]
pub enum Part {
    /// Bytes written as one chunk and flushed.
    Bytes(Vec<u8>),
    /// A pause before the next part.
    Pause(Duration),
}

/// How a streamed reply ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    /// The final empty chunk: a complete body.
    Complete,
    /// The socket is closed without the final chunk: a cut stream.
    Cut,
    /// Nothing more is written; the connection stays open until the client leaves.
    Hang,
}

/// How to answer one request.
#[derive(Clone, Debug)]
pub enum Reply {
    /// A whole response with `Content-Length`.
    Full {
        /// Status code.
        status: u16,
        /// Extra headers.
        headers: Vec<(String, String)>,
        /// Body.
        body: Vec<u8>,
    },
    /// A chunked response written part by part.
    Stream {
        /// Status code.
        status: u16,
        /// Extra headers.
        headers: Vec<(String, String)>,
        /// The parts.
        parts: Vec<Part>,
        /// How it ends.
        end: End,
    },
    /// No answer at all; the connection stays open until the client leaves.
    Hang,
}

impl Reply {
    /// A JSON response.
    pub fn json(status: u16, body: &serde_json::Value) -> Self {
        Self::Full {
            status,
            headers: vec![("content-type".to_owned(), "application/json".to_owned())],
            body: body.to_string().into_bytes(),
        }
    }
}

/// Answers requests.
pub type Handler = Arc<dyn Fn(&Request) -> Reply + Send + Sync>;

#[derive(Default)]
struct Shared {
    requests: Mutex<Vec<Request>>,
    connections: AtomicUsize,
    hang_ups: AtomicUsize,
}

/// A running server. Dropping it stops it and closes every connection.
pub struct HttpServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    changed: watch::Receiver<u64>,
    shutdown: CancellationToken,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl HttpServer {
    /// Starts a server on a free loopback port.
    pub fn start(handler: Handler) -> Self {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
        listener
            .set_nonblocking(true)
            .expect("non-blocking listener");
        let addr = listener.local_addr().expect("a bound address");
        let shared = Arc::new(Shared::default());
        let (notify, changed) = watch::channel(0u64);
        let shutdown = CancellationToken::new();
        let thread = {
            let (shared, shutdown) = (shared.clone(), shutdown.clone());
            std::thread::Builder::new()
                .name(format!("fake-http-{}", addr.port()))
                .spawn(move || {
                    let runtime = tokio::runtime::Builder::new_current_thread()
                        .enable_all()
                        .build()
                        .expect("a runtime for the fake server");
                    runtime.block_on(accept_loop(listener, handler, shared, notify, shutdown));
                })
                .expect("spawn the fake server thread")
        };
        Self {
            addr,
            shared,
            changed,
            shutdown,
            thread: Some(thread),
        }
    }

    /// `127.0.0.1:<port>`.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every request received so far.
    pub fn requests(&self) -> Vec<Request> {
        self.shared.requests.lock().expect("requests lock").clone()
    }

    /// Connections accepted so far.
    pub fn connections(&self) -> usize {
        self.shared.connections.load(Ordering::SeqCst)
    }

    /// Clients that closed a connection the server was hanging on (a `Hang` reply or a
    /// stream ending in [`End::Hang`]): proof that a cancelled client let go.
    pub fn hang_ups(&self) -> usize {
        self.shared.hang_ups.load(Ordering::SeqCst)
    }

    /// Waits until `count` requests arrived; panics after `limit`.
    pub async fn wait_for_requests(&self, count: usize, limit: Duration) -> Vec<Request> {
        self.wait_until(limit, || self.requests().len() >= count)
            .await;
        self.requests()
    }

    /// Waits until `count` clients hung up on hanging connections; panics after `limit`.
    pub async fn wait_for_hang_ups(&self, count: usize, limit: Duration) {
        self.wait_until(limit, || self.hang_ups() >= count).await;
    }

    async fn wait_until(&self, limit: Duration, done: impl Fn() -> bool) {
        let mut changed = self.changed.clone();
        let wait = async {
            while !done() {
                if changed.changed().await.is_err() {
                    break;
                }
            }
        };
        if tokio::time::timeout(limit, wait).await.is_err() || !done() {
            panic!("the fake server did not see the expected traffic within {limit:?}");
        }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        self.shutdown.cancel();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

async fn accept_loop(
    listener: std::net::TcpListener,
    handler: Handler,
    shared: Arc<Shared>,
    notify: watch::Sender<u64>,
    shutdown: CancellationToken,
) {
    let listener = TcpListener::from_std(listener).expect("a tokio listener");
    let notify = Arc::new(notify);
    loop {
        let accepted = tokio::select! {
            () = shutdown.cancelled() => return,
            accepted = listener.accept() => accepted,
        };
        let Ok((socket, _)) = accepted else { continue };
        let _ = socket.set_nodelay(true);
        shared.connections.fetch_add(1, Ordering::SeqCst);
        notify.send_modify(|n| *n += 1);
        let (handler, shared, notify, shutdown) = (
            handler.clone(),
            shared.clone(),
            notify.clone(),
            shutdown.clone(),
        );
        tokio::spawn(async move {
            tokio::select! {
                () = shutdown.cancelled() => {}
                () = serve_connection(socket, handler, shared, notify) => {}
            }
        });
    }
}

async fn serve_connection(
    socket: TcpStream,
    handler: Handler,
    shared: Arc<Shared>,
    notify: Arc<watch::Sender<u64>>,
) {
    let (read, mut write) = socket.into_split();
    let mut read = BufReader::new(read);
    loop {
        let Some(request) = read_request(&mut read, &mut write).await else {
            return;
        };
        let close = request
            .header("connection")
            .is_some_and(|c| c.eq_ignore_ascii_case("close"));
        shared
            .requests
            .lock()
            .expect("requests lock")
            .push(request.clone());
        notify.send_modify(|n| *n += 1);
        let reply = handler(&request);
        let keep_open = match write_reply(&mut write, reply).await {
            Ok(Ending::KeepAlive) => !close,
            Ok(Ending::Close) | Err(_) => false,
            Ok(Ending::Hang) => {
                // Wait for the client to give up, then count it.
                let mut sink = [0u8; 1024];
                while matches!(read.read(&mut sink).await, Ok(n) if n > 0) {}
                shared.hang_ups.fetch_add(1, Ordering::SeqCst);
                notify.send_modify(|n| *n += 1);
                false
            }
        };
        if !keep_open {
            let _ = write.shutdown().await;
            return;
        }
    }
}

enum Ending {
    KeepAlive,
    Close,
    Hang,
}

async fn write_reply(
    write: &mut (impl AsyncWriteExt + Unpin),
    reply: Reply,
) -> std::io::Result<Ending> {
    match reply {
        Reply::Hang => Ok(Ending::Hang),
        Reply::Full {
            status,
            headers,
            body,
        } => {
            let mut head = status_line(status, &headers);
            head.push_str(&format!("content-length: {}\r\n\r\n", body.len()));
            write.write_all(head.as_bytes()).await?;
            write.write_all(&body).await?;
            write.flush().await?;
            Ok(Ending::KeepAlive)
        }
        Reply::Stream {
            status,
            headers,
            parts,
            end,
        } => {
            let mut head = status_line(status, &headers);
            head.push_str("transfer-encoding: chunked\r\n\r\n");
            write.write_all(head.as_bytes()).await?;
            write.flush().await?;
            for part in parts {
                match part {
                    Part::Pause(pause) => tokio::time::sleep(pause).await,
                    Part::Bytes(bytes) if bytes.is_empty() => {}
                    Part::Bytes(bytes) => {
                        let mut chunk = format!("{:x}\r\n", bytes.len()).into_bytes();
                        chunk.extend_from_slice(&bytes);
                        chunk.extend_from_slice(b"\r\n");
                        write.write_all(&chunk).await?;
                        write.flush().await?;
                    }
                }
            }
            match end {
                End::Complete => {
                    write.write_all(b"0\r\n\r\n").await?;
                    write.flush().await?;
                    Ok(Ending::KeepAlive)
                }
                End::Cut => Ok(Ending::Close),
                End::Hang => Ok(Ending::Hang),
            }
        }
    }
}

fn status_line(status: u16, headers: &[(String, String)]) -> String {
    let reason = match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        529 => "Overloaded",
        _ => "Status",
    };
    let mut head = format!("HTTP/1.1 {status} {reason}\r\n");
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head
}

/// Reads one request; `None` on a clean close, a malformed request or an oversized one.
async fn read_request(
    read: &mut BufReader<impl AsyncRead + Unpin>,
    write: &mut (impl AsyncWriteExt + Unpin),
) -> Option<Request> {
    let mut head = Vec::new();
    while !head.ends_with(b"\r\n\r\n") {
        let byte = read.read_u8().await.ok()?;
        head.push(byte);
        if head.len() > MAX_HEAD {
            return None;
        }
    }
    let head = String::from_utf8(head).ok()?;
    let mut lines = head.split("\r\n");
    let mut start = lines.next()?.split(' ');
    let (method, target) = (start.next()?.to_owned(), start.next()?.to_owned());
    let headers: Vec<(String, String)> = lines
        .filter(|line| !line.is_empty())
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_owned()))
        .collect();
    let header = |name: &str| {
        headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
    };
    if header("expect").is_some_and(|e| e.eq_ignore_ascii_case("100-continue")) {
        write
            .write_all(b"HTTP/1.1 100 Continue\r\n\r\n")
            .await
            .ok()?;
        write.flush().await.ok()?;
    }
    let body = if header("transfer-encoding").is_some_and(|t| t.contains("chunked")) {
        read_chunked(read).await?
    } else {
        let length: usize = header("content-length").map_or(Some(0), |l| l.parse().ok())?;
        if length > MAX_BODY {
            return None;
        }
        let mut body = vec![0; length];
        read.read_exact(&mut body).await.ok()?;
        body
    };
    Some(Request {
        method,
        target,
        headers,
        body,
    })
}

async fn read_chunked(read: &mut BufReader<impl AsyncRead + Unpin>) -> Option<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let line = read_line(read).await?;
        let size = usize::from_str_radix(line.split(';').next()?.trim(), 16).ok()?;
        if size == 0 {
            // Trailers, up to the blank line.
            while !read_line(read).await?.is_empty() {}
            return Some(body);
        }
        if body.len() + size > MAX_BODY {
            return None;
        }
        let start = body.len();
        body.resize(start + size, 0);
        read.read_exact(&mut body[start..]).await.ok()?;
        read_line(read).await?;
    }
}

async fn read_line(read: &mut BufReader<impl AsyncRead + Unpin>) -> Option<String> {
    let mut line = Vec::new();
    while !line.ends_with(b"\r\n") {
        line.push(read.read_u8().await.ok()?);
        if line.len() > MAX_HEAD {
            return None;
        }
    }
    line.truncate(line.len() - 2);
    String::from_utf8(line).ok()
}

/// Splits `bytes` into `pieces` parts with a short pause between them, so each arrives in
/// its own read. Cuts fall at equal offsets, except that when the bytes hold a multi-byte
/// UTF-8 character the first cut falls inside it (clients must buffer partial characters).
pub fn split_parts(bytes: &[u8], pieces: usize, pause: Duration) -> Vec<Part> {
    let pieces = pieces.clamp(1, bytes.len().max(1));
    let size = bytes.len().div_ceil(pieces).max(1);
    let mut cuts: Vec<usize> = (1..pieces)
        .map(|i| i * size)
        .filter(|&c| c < bytes.len())
        .collect();
    if let (Some(first), Some(lead)) = (cuts.first_mut(), bytes.iter().position(|&b| b >= 0xC0)) {
        *first = lead + 1;
    }
    cuts.sort_unstable();
    cuts.dedup();
    let mut parts = Vec::new();
    let mut start = 0;
    for end in cuts.into_iter().chain([bytes.len()]) {
        if end <= start {
            continue;
        }
        if start > 0 && !pause.is_zero() {
            parts.push(Part::Pause(pause));
        }
        parts.push(Part::Bytes(bytes[start..end].to_vec()));
        start = end;
    }
    parts
}
