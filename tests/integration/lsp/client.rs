//! A minimal LSP client for tests: speaks JSON-RPC with `Content-Length` framing to
//! `atomic::lsp::Backend` over an in-memory pipe, keeps responses by id and notifications in
//! arrival order, and draws ranges under the text with its own UTF-16 arithmetic (so a bug
//! in the server's conversion cannot hide behind the same bug here).

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader, DuplexStream, WriteHalf};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tower_lsp_server::ls_types::Uri;
use tower_lsp_server::{LspService, Server};

/// How long any single wait may take before the test fails.
pub(super) const LIMIT: Duration = Duration::from_secs(20);

pub(super) struct Client {
    writer: WriteHalf<DuplexStream>,
    next_id: i64,
    responses: mpsc::UnboundedReceiver<Value>,
    early: HashMap<i64, Value>,
    notifications: mpsc::UnboundedReceiver<Value>,
    server: JoinHandle<()>,
    reader: JoinHandle<()>,
}

impl Drop for Client {
    fn drop(&mut self) {
        self.server.abort();
        self.reader.abort();
    }
}

impl Client {
    /// Starts a server and initializes it.
    pub(super) async fn start() -> Self {
        Self::start_with(atomic::lsp::DEBOUNCE, json!({})).await
    }

    /// Starts a server that waits `debounce` after a change before checking, declaring the
    /// client `capabilities`.
    pub(super) async fn start_with(debounce: Duration, capabilities: Value) -> Self {
        let (client_end, server_end) = tokio::io::duplex(1 << 20);
        let (server_read, server_write) = tokio::io::split(server_end);
        let (service, socket) =
            LspService::new(|client| atomic::lsp::Backend::new(client).with_debounce(debounce));
        let server = tokio::spawn(async move {
            Server::new(server_read, server_write, socket)
                .serve(service)
                .await;
        });
        let (client_read, writer) = tokio::io::split(client_end);
        let (responses_tx, responses) = mpsc::unbounded_channel();
        let (notifications_tx, notifications) = mpsc::unbounded_channel();
        let reader = tokio::spawn(async move {
            let mut reader = BufReader::new(client_read);
            while let Some(message) = read_message(&mut reader).await {
                let target = if message.get("id").is_some() && message.get("method").is_none() {
                    &responses_tx
                } else {
                    &notifications_tx
                };
                if target.send(message).is_err() {
                    break;
                }
            }
        });
        let mut client = Self {
            writer,
            next_id: 1,
            responses,
            early: HashMap::new(),
            notifications,
            server,
            reader,
        };
        let init = client
            .request(
                "initialize",
                json!({ "capabilities": capabilities, "processId": null }),
            )
            .await;
        assert_eq!(init["result"]["serverInfo"]["name"], "atomic", "{init}");
        client.notify("initialized", json!({})).await;
        client
    }

    async fn send(&mut self, message: &Value) {
        let body = message.to_string();
        let frame = format!("Content-Length: {}\r\n\r\n{body}", body.len());
        self.writer
            .write_all(frame.as_bytes())
            .await
            .expect("the server reads");
    }

    /// Sends a request and waits for its response (the whole JSON-RPC object).
    pub(super) async fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }))
            .await;
        if let Some(response) = self.early.remove(&id) {
            return response;
        }
        tokio::time::timeout(LIMIT, async {
            loop {
                let response = self.responses.recv().await.expect("the server answers");
                match response["id"].as_i64() {
                    Some(got) if got == id => return response,
                    Some(other) => {
                        self.early.insert(other, response);
                    }
                    None => {}
                }
            }
        })
        .await
        .unwrap_or_else(|_| panic!("no answer to `{method}` within {LIMIT:?}"))
    }

    /// Sends a notification.
    pub(super) async fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({ "jsonrpc": "2.0", "method": method, "params": params }))
            .await;
    }

    /// Waits for the next `publishDiagnostics` for `uri` (at `version`, if given), skipping
    /// others. Returns its params.
    pub(super) async fn diagnostics(&mut self, uri: &Uri, version: Option<i64>) -> Value {
        tokio::time::timeout(LIMIT, async {
            loop {
                let message = self
                    .notifications
                    .recv()
                    .await
                    .expect("the server is running");
                if message["method"] != "textDocument/publishDiagnostics" {
                    continue;
                }
                let params = &message["params"];
                if params["uri"] != uri.as_str() {
                    continue;
                }
                if version.is_some_and(|version| params["version"].as_i64() != Some(version)) {
                    continue;
                }
                return params.clone();
            }
        })
        .await
        .unwrap_or_else(|_| panic!("no diagnostics for {} within {LIMIT:?}", uri.as_str()))
    }

    /// Waits for the server's request `method` and answers it with `result`; returns the
    /// request's params.
    pub(super) async fn answer(&mut self, method: &str, result: Value) -> Value {
        let request = tokio::time::timeout(LIMIT, async {
            loop {
                let message = self
                    .notifications
                    .recv()
                    .await
                    .expect("the server is running");
                if message["method"] == method && message.get("id").is_some() {
                    return message;
                }
            }
        })
        .await
        .unwrap_or_else(|_| panic!("no `{method}` request within {LIMIT:?}"));
        self.send(&json!({ "jsonrpc": "2.0", "id": request["id"], "result": result }))
            .await;
        request["params"].clone()
    }

    /// Every notification that arrives within `quiet` of the previous one.
    pub(super) async fn drain(&mut self, quiet: Duration) -> Vec<Value> {
        let mut all = Vec::new();
        while let Ok(Some(message)) = tokio::time::timeout(quiet, self.notifications.recv()).await {
            all.push(message);
            assert!(all.len() < 1000, "the server floods the client");
        }
        all
    }

    pub(super) async fn open(&mut self, uri: &Uri, text: &str, version: i64) {
        self.notify(
            "textDocument/didOpen",
            json!({ "textDocument": {
                "uri": uri.as_str(), "languageId": "kdl", "version": version, "text": text
            }}),
        )
        .await;
    }

    /// Replaces the UTF-16 range `(line, character)..(line, character)` with `text`.
    pub(super) async fn edit(
        &mut self,
        uri: &Uri,
        version: i64,
        start: (u32, u32),
        end: (u32, u32),
        text: &str,
    ) {
        self.notify(
            "textDocument/didChange",
            json!({
                "textDocument": { "uri": uri.as_str(), "version": version },
                "contentChanges": [{
                    "range": {
                        "start": { "line": start.0, "character": start.1 },
                        "end": { "line": end.0, "character": end.1 },
                    },
                    "text": text,
                }],
            }),
        )
        .await;
    }

    pub(super) async fn shutdown(mut self) {
        let response = self.request("shutdown", Value::Null).await;
        assert!(response.get("error").is_none(), "{response}");
        self.notify("exit", Value::Null).await;
    }
}

async fn read_message<R: tokio::io::AsyncRead + Unpin>(reader: &mut BufReader<R>) -> Option<Value> {
    let mut length = None;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).await.ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(value) = line.strip_prefix("Content-Length: ") {
            length = value.parse::<usize>().ok();
        }
    }
    let mut body = vec![0; length?];
    reader.read_exact(&mut body).await.ok()?;
    serde_json::from_slice(&body).ok()
}

/// The file URI of `path`.
pub(super) fn uri(path: &Path) -> Uri {
    Uri::from_file_path(path).expect("an absolute path")
}

/// The byte offset of a UTF-16 `(line, character)` in `text`, computed here independently of
/// the server.
pub(super) fn offset(text: &str, line: u64, character: u64) -> usize {
    let mut start = 0;
    for _ in 0..line {
        start += text[start..]
            .find('\n')
            .map_or(text.len() - start, |at| at + 1);
    }
    let mut units = 0;
    for (index, ch) in text[start..].char_indices() {
        if units >= character || ch == '\n' || ch == '\r' {
            return start + index;
        }
        units += ch.len_utf16() as u64;
    }
    text.len()
}

/// The byte range of a protocol range.
pub(super) fn bytes(text: &str, range: &Value) -> (usize, usize) {
    let at = |position: &Value| {
        offset(
            text,
            position["line"].as_u64().expect("line"),
            position["character"].as_u64().expect("character"),
        )
    };
    (at(&range["start"]), at(&range["end"]))
}

/// The lines of `text` that `ranges` touch, with `▔` under each range and its note after.
pub(super) fn carets(text: &str, ranges: &[(&Value, String)]) -> String {
    let mut out = String::new();
    for (range, note) in ranges {
        let (start, end) = bytes(text, range);
        let line_start = text[..start].rfind('\n').map_or(0, |at| at + 1);
        let line_end = text[start..].find('\n').map_or(text.len(), |at| start + at);
        let line = text[line_start..line_end].trim_end_matches('\r');
        let number = text[..start].matches('\n').count() + 1;
        let pad = text[line_start..start].chars().count();
        let width = text[start..end.min(line_end).max(start)]
            .chars()
            .count()
            .max(1);
        let _ = writeln!(out, "{number:>3} │ {line}");
        let marks = format!("    │ {}{} {note}", " ".repeat(pad), "▔".repeat(width));
        let _ = writeln!(out, "{}", marks.trim_end());
    }
    out
}
