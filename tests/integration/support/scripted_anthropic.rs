//! A scripted fake of the Anthropic Messages API on 127.0.0.1, for driving real agent CLIs
//! (Claude Code, OpenCode, Copilot BYOK) offline.
//!
//! Requests that carry tools are the agent's main turn and follow the script: each
//! [`Step::Tool`] is sent as a `tool_use` (id `toolu_atomic_<n>`) until the CLI sends its
//! `tool_result` back, then the next step; a [`Step::Text`] ends the turn. Matching on the
//! tool results present (not on message counts) keeps the script robust to CLIs that rewrite
//! their history; a result saying the call was interrupted does not count, and the call is made
//! again under a new id. Every other request (titles, summaries, `count_tokens`) gets a short
//! generic answer, never a 404. Answers stream SSE as in protocols.md §1, each event split
//! across two writes. Every request is recorded.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

/// One scripted model step.
#[derive(Clone, Debug)]
pub(crate) enum Step {
    /// Ask for a tool call.
    Tool {
        /// The tool's name as the CLI declares it.
        name: String,
        /// Its input.
        input: Value,
    },
    /// Answer with text and end the turn.
    Text(String),
    /// Never answer (hold the connection open for a minute): for cancellation tests.
    Hang,
    /// Refuse the request (400 `invalid_request_error`): the agent's call fails.
    Reject,
}

/// A request the fake received.
#[derive(Clone, Debug)]
pub(crate) struct Recorded {
    /// Method and path, e.g. `POST /v1/messages?beta=true`.
    pub(crate) target: String,
    /// Lower-cased header names with values.
    pub(crate) headers: Vec<(String, String)>,
    /// The JSON body (`Null` when absent or not JSON).
    pub(crate) body: Value,
}

impl Recorded {
    /// A header's value.
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }

    /// Whether this was an agent main-turn call (it declared tools).
    pub(crate) fn has_tools(&self) -> bool {
        self.body
            .get("tools")
            .and_then(Value::as_array)
            .is_some_and(|tools| !tools.is_empty())
    }
}

/// The running fake; stops when dropped.
pub(crate) struct ScriptedAnthropic {
    addr: SocketAddr,
    log: Arc<Mutex<Vec<Recorded>>>,
    task: JoinHandle<()>,
}

impl ScriptedAnthropic {
    /// Starts the fake on a free loopback port.
    pub(crate) async fn start(script: Vec<Step>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind a loopback port");
        let addr = listener.local_addr().expect("a local address");
        let log = Arc::new(Mutex::new(Vec::new()));
        let script = Arc::new(script);
        let task = {
            let log = Arc::clone(&log);
            tokio::spawn(async move {
                while let Ok((socket, _)) = listener.accept().await {
                    let log = Arc::clone(&log);
                    let script = Arc::clone(&script);
                    tokio::spawn(async move {
                        let _ = tokio::time::timeout(
                            Duration::from_secs(60),
                            serve(socket, &script, &log),
                        )
                        .await;
                    });
                }
            })
        };
        Self { addr, log, task }
    }

    /// `http://127.0.0.1:<port>`.
    pub(crate) fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every request so far.
    pub(crate) fn requests(&self) -> Vec<Recorded> {
        self.log.lock().expect("log lock").clone()
    }
}

impl Drop for ScriptedAnthropic {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn serve(mut socket: TcpStream, script: &[Step], log: &Mutex<Vec<Recorded>>) {
    let Some(request) = read_request(&mut socket).await else {
        return;
    };
    log.lock().expect("log lock").push(request.clone());
    let path = request.target.split_whitespace().nth(1).unwrap_or_default();
    let path = path.split('?').next().unwrap_or_default();
    if !request.target.starts_with("POST ") || !path.ends_with("/messages") {
        let body = if path.ends_with("/count_tokens") {
            json!({"input_tokens": 10})
        } else {
            json!({"type": "error", "error": {"type": "not_found_error", "message": "not here"}})
        };
        let status = if path.ends_with("/count_tokens") {
            "200 OK"
        } else {
            "404 Not Found"
        };
        let _ = write_json(&mut socket, status, &body).await;
        return;
    }
    let (blocks, stop) = if request.has_tools() {
        if matches!(script.first(), Some(Step::Reject)) {
            let body = json!({"type": "error", "error": {
                "type": "invalid_request_error", "message": "this request is refused"}});
            let _ = write_json(&mut socket, "400 Bad Request", &body).await;
            return;
        }
        let Some(step) = next_step(script, &request.body) else {
            tokio::time::sleep(Duration::from_secs(60)).await;
            return;
        };
        step
    } else {
        (vec![json!({"type": "text", "text": "ok"})], "end_turn")
    };
    let model = request
        .body
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or("claude-sonnet-4-5")
        .to_owned();
    if request.body.get("stream").and_then(Value::as_bool) == Some(true) {
        let _ = write_stream(&mut socket, &model, &blocks, stop).await;
    } else {
        let body = json!({
            "id": "msg_fake", "type": "message", "role": "assistant", "model": model,
            "content": blocks, "stop_reason": stop, "stop_sequence": null,
            "usage": {"input_tokens": 12, "output_tokens": 5},
        });
        let _ = write_json(&mut socket, "200 OK", &body).await;
    }
}

/// The content blocks and stop reason of the next scripted step, `None` to hang.
fn next_step(script: &[Step], body: &Value) -> Option<(Vec<Value>, &'static str)> {
    let results: Vec<(&str, bool)> = body
        .get("messages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|message| message.get("content").and_then(Value::as_array))
        .flatten()
        .filter(|block| block.get("type").and_then(Value::as_str) == Some("tool_result"))
        .filter_map(|block| {
            let id = block.get("tool_use_id").and_then(Value::as_str)?;
            Some((id, interrupted(block)))
        })
        .collect();
    for (index, step) in script.iter().enumerate() {
        match step {
            Step::Tool { name, input } => {
                // A call made again after an interruption gets an id of its own, as a
                // model's would: `toolu_atomic_<n>`, then `toolu_atomic_<n>_again<k>`.
                let first = format!("toolu_atomic_{index}");
                let again = format!("{first}_again");
                let mine = results
                    .iter()
                    .filter(|(id, _)| *id == first || id.starts_with(&again));
                if mine.clone().any(|(_, interrupted)| !interrupted) {
                    continue;
                }
                let id = match mine.count() {
                    0 => first,
                    tries => format!("{again}{tries}"),
                };
                let block = json!({"type": "tool_use", "id": id, "name": name, "input": input});
                return Some((vec![block], "tool_use"));
            }
            Step::Text(text) => {
                return Some((vec![json!({"type": "text", "text": text})], "end_turn"));
            }
            Step::Hang => return None,
            Step::Reject => {}
        }
    }
    Some((vec![json!({"type": "text", "text": "ok"})], "end_turn"))
}

/// Whether a tool result says the call never ran: Claude Code records a call it was
/// stopped in the middle of (atomic ends it to ask a person) as interrupted when it saves
/// the session. A model told afterwards to make the call makes it again, and so does the
/// fake.
fn interrupted(result: &Value) -> bool {
    let text = match result.get("content") {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter_map(|block| block.get("text").and_then(Value::as_str))
            .collect(),
        _ => String::new(),
    };
    text.starts_with("[Tool call interrupted")
}

async fn write_stream(
    socket: &mut TcpStream,
    model: &str,
    blocks: &[Value],
    stop: &str,
) -> std::io::Result<()> {
    socket
        .write_all(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\nconnection: close\r\n\r\n",
        )
        .await?;
    let mut events = vec![json!({
        "type": "message_start",
        "message": {"id": "msg_fake", "type": "message", "role": "assistant", "model": model,
            "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": 12, "cache_creation_input_tokens": 0,
                      "cache_read_input_tokens": 0, "output_tokens": 1}},
    })];
    for (index, block) in blocks.iter().enumerate() {
        if block["type"] == "tool_use" {
            events.push(json!({"type": "content_block_start", "index": index,
                "content_block": {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}}));
            let input = block["input"].to_string();
            let (first, second) = input.split_at(input.len() / 2);
            for piece in ["", first, second] {
                events.push(json!({"type": "content_block_delta", "index": index,
                    "delta": {"type": "input_json_delta", "partial_json": piece}}));
            }
        } else {
            events.push(json!({"type": "content_block_start", "index": index,
                "content_block": {"type": "text", "text": ""}}));
            events.push(json!({"type": "ping"}));
            events.push(json!({"type": "content_block_delta", "index": index,
                "delta": {"type": "text_delta", "text": block["text"]}}));
        }
        events.push(json!({"type": "content_block_stop", "index": index}));
    }
    events.push(
        json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null},
        "usage": {"output_tokens": 7}}),
    );
    events.push(json!({"type": "message_stop"}));
    for event in events {
        let name = event["type"].as_str().unwrap_or("unknown").to_owned();
        let frame = format!("event: {name}\ndata: {event}\n\n");
        let (first, second) = frame.as_bytes().split_at(frame.len() / 2);
        socket.write_all(first).await?;
        socket.flush().await?;
        socket.write_all(second).await?;
        socket.flush().await?;
    }
    socket.shutdown().await
}

async fn write_json(socket: &mut TcpStream, status: &str, body: &Value) -> std::io::Result<()> {
    let body = body.to_string();
    let head = format!(
        "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    );
    socket.write_all(head.as_bytes()).await?;
    socket.write_all(body.as_bytes()).await?;
    socket.shutdown().await
}

/// Reads one HTTP/1.1 request (content-length or chunked body).
async fn read_request(socket: &mut TcpStream) -> Option<Recorded> {
    let mut buffer = Vec::new();
    let mut chunk = [0_u8; 16 * 1024];
    let head_end = loop {
        if let Some(end) = find(&buffer, b"\r\n\r\n") {
            break end;
        }
        let read = socket.read(&mut chunk).await.ok()?;
        if read == 0 || buffer.len() > 1024 * 1024 {
            return None;
        }
        buffer.extend_from_slice(&chunk[..read]);
    };
    let head = String::from_utf8_lossy(&buffer[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let target = lines.next()?.rsplit_once(' ')?.0.to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_lowercase(), value.trim().to_owned()))
        .collect();
    let header = |name: &str| {
        headers
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.clone())
    };
    let mut body = buffer[head_end + 4..].to_vec();
    if header("transfer-encoding").is_some_and(|value| value.contains("chunked")) {
        loop {
            if let Some(decoded) = dechunk(&body) {
                body = decoded;
                break;
            }
            let read = socket.read(&mut chunk).await.ok()?;
            if read == 0 {
                return None;
            }
            body.extend_from_slice(&chunk[..read]);
        }
    } else {
        let length: usize = header("content-length")
            .and_then(|value| value.parse().ok())
            .unwrap_or(0);
        while body.len() < length {
            let read = socket.read(&mut chunk).await.ok()?;
            if read == 0 {
                return None;
            }
            body.extend_from_slice(&chunk[..read]);
        }
        body.truncate(length);
    }
    Some(Recorded {
        target,
        headers,
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
    })
}

/// Decodes a complete chunked body, `None` while incomplete.
fn dechunk(mut data: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let line_end = find(data, b"\r\n")?;
        let size_text = String::from_utf8_lossy(&data[..line_end]);
        let size = usize::from_str_radix(size_text.split(';').next()?.trim(), 16).ok()?;
        data = &data[line_end + 2..];
        if size == 0 {
            return Some(out);
        }
        if data.len() < size + 2 {
            return None;
        }
        out.extend_from_slice(&data[..size]);
        data = &data[size + 2..];
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
}
