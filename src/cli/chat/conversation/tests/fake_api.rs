//! A fake Anthropic Messages API on 127.0.0.1, hand-rolled for the conversation's tests:
//! each `POST /v1/messages` is answered by the next scripted reply, streamed as SSE, and
//! its body recorded.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// One scripted answer.
#[derive(Clone, Debug)]
pub(super) enum Reply {
    /// A whole message: its text, input and output tokens.
    Text(&'static str, u64, u64),
    /// A message that starts streaming this text and never ends (until the client goes).
    Hang(&'static str),
}

/// The server: its address, the replies left, the request bodies seen.
#[derive(Clone)]
pub(super) struct FakeApi {
    pub(super) url: String,
    script: Arc<Mutex<VecDeque<Reply>>>,
    bodies: Arc<Mutex<Vec<Value>>>,
}

impl FakeApi {
    /// Starts serving `script` on the current runtime.
    pub(super) async fn start(script: Vec<Reply>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let fake = Self {
            url,
            script: Arc::new(Mutex::new(script.into())),
            bodies: Arc::default(),
        };
        let serving = fake.clone();
        tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                let serving = serving.clone();
                tokio::spawn(async move { serving.serve(socket).await });
            }
        });
        fake
    }

    /// Every request body, in order.
    pub(super) fn bodies(&self) -> Vec<Value> {
        self.bodies.lock().unwrap().clone()
    }

    async fn serve(&self, mut socket: TcpStream) {
        let Some(body) = read_request(&mut socket).await else {
            return;
        };
        self.bodies.lock().unwrap().push(body);
        let reply = self.script.lock().unwrap().pop_front();
        let (events, hang) = match reply {
            Some(Reply::Text(text, input, output)) => (message(text, input, output, true), false),
            Some(Reply::Hang(text)) => (message(text, 1, 1, false), true),
            None => {
                let body = r#"{"type":"error","error":{"type":"invalid_request_error","message":"the script ran out"}}"#;
                let response = format!(
                    "HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = socket.write_all(response.as_bytes()).await;
                return;
            }
        };
        let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\nconnection: close\r\n\r\n";
        if socket.write_all(head.as_bytes()).await.is_err() {
            return;
        }
        for event in events {
            if socket.write_all(event.as_bytes()).await.is_err() {
                return;
            }
            let _ = socket.flush().await;
        }
        if hang {
            // Held open until the client drops the call (bounded, so a test cannot hang).
            let mut byte = [0u8; 1];
            let _ = tokio::time::timeout(Duration::from_secs(30), socket.read(&mut byte)).await;
        }
    }
}

/// Reads one request's head and body; the body as JSON.
async fn read_request(socket: &mut TcpStream) -> Option<Value> {
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        let read = socket.read(&mut chunk).await.ok()?;
        if read == 0 {
            return None;
        }
        buffer.extend_from_slice(&chunk[..read]);
        if let Some(at) = buffer.windows(4).position(|window| window == b"\r\n\r\n") {
            break at + 4;
        }
    };
    let head = String::from_utf8_lossy(&buffer[..head_end]).to_ascii_lowercase();
    let length: usize = head
        .lines()
        .find_map(|line| line.strip_prefix("content-length:"))
        .and_then(|value| value.trim().parse().ok())
        .unwrap_or(0);
    while buffer.len() < head_end + length {
        let read = socket.read(&mut chunk).await.ok()?;
        if read == 0 {
            return None;
        }
        buffer.extend_from_slice(&chunk[..read]);
    }
    serde_json::from_slice(&buffer[head_end..head_end + length]).ok()
}

/// The SSE events of a message with `text`; cut after the first delta unless `whole`.
fn message(text: &str, input: u64, output: u64, whole: bool) -> Vec<String> {
    let sse = |name: &str, data: Value| format!("event: {name}\ndata: {data}\n\n");
    let mut events = vec![
        sse(
            "message_start",
            json!({"type": "message_start", "message": {"id": "msg_1", "type": "message",
                "role": "assistant", "model": "claude-sonnet-4-5", "content": [],
                "stop_reason": null, "stop_sequence": null,
                "usage": {"input_tokens": input, "output_tokens": 1}}}),
        ),
        sse(
            "content_block_start",
            json!({"type": "content_block_start", "index": 0,
                "content_block": {"type": "text", "text": ""}}),
        ),
        sse(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0,
                "delta": {"type": "text_delta", "text": text}}),
        ),
    ];
    if whole {
        events.push(sse(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": 0}),
        ));
        events.push(sse(
            "message_delta",
            json!({"type": "message_delta", "delta": {"stop_reason": "end_turn",
                "stop_sequence": null}, "usage": {"output_tokens": output}}),
        ));
        events.push(sse("message_stop", json!({"type": "message_stop"})));
    }
    events
}
