//! A fake OpenAI Responses API on 127.0.0.1, scriptable per test (what the Codex CLI speaks
//! with `wire_api = "responses"`).
//!
//! ```ignore
//! let fake = FakeResponses::start();
//! fake.push(Turn::shell("printf 'x' > a.txt"));
//! fake.push(Turn::text("Done."));
//! // base URL: fake.base_url() (ends in `/v1`)
//! ```
//!
//! `POST …/responses` takes the next scripted [`Turn`]; with none left it answers a 400 saying
//! the script ran out. A turn streams as SSE (`event:` + `data:` lines, each event split across
//! writes): `response.created`, `response.output_item.added`, the text deltas
//! (`response.output_text.delta`) or argument deltas
//! (`response.function_call_arguments.delta`), `response.output_item.done` with the whole
//! item, and `response.completed` with the usage. Those are the events the pinned CLI reads
//! (codex-rs `codex-api/src/sse/responses.rs`: the items come from `output_item.done`, the
//! turn ends at `response.completed`, whose `usage` needs `total_tokens`). With a key
//! required, other keys get a 401 whose message echoes the key given, as OpenAI's does.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

use super::http_server::{End, Handler, HttpServer, Part, Reply, Request, split_parts};

/// Token counts reported for every turn: `input_tokens` (of which `cached`) and `output`.
pub const TURN_INPUT: u64 = 12;
/// Cached prompt tokens reported for every turn (part of [`TURN_INPUT`]).
pub const TURN_CACHED: u64 = 2;
/// Output tokens reported for every turn.
pub const TURN_OUTPUT: u64 = 5;

/// One scripted answer.
#[derive(Clone, Debug)]
pub enum Turn {
    /// An assistant message.
    Text(String),
    /// A call of the CLI's `exec_command` tool with this shell command.
    Shell(String),
    /// `response.created`, then nothing: the connection stays open.
    Hang,
    /// A call of the tool `name` (`namespace/name` for one of a namespace) with
    /// `arguments` (a JSON object).
    Call(String, Value),
}

impl Turn {
    /// An assistant message.
    pub fn text(text: &str) -> Self {
        Self::Text(text.to_owned())
    }

    /// A shell command through `exec_command`.
    pub fn shell(command: &str) -> Self {
        Self::Shell(command.to_owned())
    }

    /// A call of the tool `name` with `arguments`.
    pub fn call(name: &str, arguments: Value) -> Self {
        Self::Call(name.to_owned(), arguments)
    }
}

struct Script {
    queue: VecDeque<Turn>,
    api_key: Option<String>,
    served: usize,
}

/// The fake server. Dropping it stops it.
pub struct FakeResponses {
    server: HttpServer,
    script: Arc<Mutex<Script>>,
}

impl FakeResponses {
    /// Starts a fake on a free loopback port.
    pub fn start() -> Self {
        let script = Arc::new(Mutex::new(Script {
            queue: VecDeque::new(),
            api_key: None,
            served: 0,
        }));
        let handler: Handler = {
            let script = script.clone();
            Arc::new(move |request: &Request| answer(&script, request))
        };
        Self {
            server: HttpServer::start(handler),
            script,
        }
    }

    /// `http://127.0.0.1:<port>/v1`, the `base_url` of a model provider.
    pub fn base_url(&self) -> String {
        format!("{}/v1", self.server.url())
    }

    /// The underlying server.
    pub fn server(&self) -> &HttpServer {
        &self.server
    }

    /// Queues a turn for the next `/responses` request.
    pub fn push(&self, turn: Turn) -> &Self {
        self.lock().queue.push_back(turn);
        self
    }

    /// Requires `Authorization: Bearer <key>`; others get a 401.
    pub fn require_key(&self, key: &str) -> &Self {
        self.lock().api_key = Some(key.to_owned());
        self
    }

    /// Every `/responses` request received, in order.
    pub fn responses_requests(&self) -> Vec<Request> {
        self.server
            .requests()
            .into_iter()
            .filter(|r| r.method == "POST" && r.path().ends_with("/responses"))
            .collect()
    }

    /// The text of every message in a request's `input` (any role), in order.
    pub fn input_texts(request: &Request) -> Vec<String> {
        let body = request.json();
        body["input"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|item| item["type"] == "message")
            .flat_map(|item| item["content"].as_array().cloned().unwrap_or_default())
            .filter_map(|part| part["text"].as_str().map(str::to_owned))
            .collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Script> {
        self.script.lock().expect("script lock")
    }
}

fn answer(script: &Mutex<Script>, request: &Request) -> Reply {
    let mut script = script.lock().expect("script lock");
    let path = request.path().trim_end_matches('/');
    if request.method != "POST" || !path.ends_with("/responses") {
        return error(404, "not_found", &format!("no route {path}"));
    }
    if let Some(key) = &script.api_key {
        let given = request
            .header("authorization")
            .and_then(|a| a.strip_prefix("Bearer "))
            .unwrap_or_default();
        if given != key {
            return error(
                401,
                "invalid_api_key",
                &format!("Incorrect API key provided: {given}."),
            );
        }
    }
    let Some(turn) = script.queue.pop_front() else {
        return error(
            400,
            "invalid_request_error",
            "fake_responses: no scripted reply left for this request",
        );
    };
    script.served += 1;
    render(&turn, script.served)
}

/// An OpenAI error body with `status`.
pub fn error(status: u16, code: &str, message: &str) -> Reply {
    Reply::json(
        status,
        &json!({"error": {"message": message, "type": "invalid_request_error", "param": null, "code": code}}),
    )
}

/// `turn` streamed as the `number`th answer.
pub fn render(turn: &Turn, number: usize) -> Reply {
    let id = format!("resp_{number}");
    let mut events =
        vec![json!({"type": "response.created", "response": {"id": id, "status": "in_progress"}})];
    let end = match turn {
        Turn::Hang => End::Hang,
        Turn::Text(text) => {
            let item_id = format!("msg_{number}");
            let item = |content: Value, status: &str| json!({"type": "message", "id": item_id, "role": "assistant", "status": status, "content": content});
            events.push(json!({"type": "response.output_item.added", "output_index": 0, "item": item(json!([]), "in_progress")}));
            for piece in halves(text) {
                events.push(
                    json!({"type": "response.output_text.delta", "output_index": 0,
                    "content_index": 0, "item_id": item_id, "delta": piece}),
                );
            }
            events.push(json!({"type": "response.output_item.done", "output_index": 0,
                "item": item(json!([{"type": "output_text", "text": text, "annotations": []}]), "completed")}));
            End::Complete
        }
        Turn::Shell(_) | Turn::Call(..) => {
            let (name, arguments) = match turn {
                Turn::Call(name, arguments) => (name.as_str(), arguments.to_string()),
                Turn::Shell(command) => ("exec_command", json!({"cmd": command}).to_string()),
                _ => unreachable!("a call"),
            };
            // `namespace/name`: a tool of a namespace (Codex offers an MCP server's tools so).
            let (namespace, name) = match name.split_once('/') {
                Some((namespace, name)) => (Some(namespace), name),
                None => (None, name),
            };
            let item = |arguments: &str, status: &str| {
                let mut item = json!({"type": "function_call", "id": format!("fc_{number}"), "call_id": format!("call_{number}"),
                    "name": name, "arguments": arguments, "status": status});
                if let Some(namespace) = namespace {
                    item["namespace"] = json!(namespace);
                }
                item
            };
            events.push(json!({"type": "response.output_item.added", "output_index": 0, "item": item("", "in_progress")}));
            for piece in halves(&arguments) {
                events.push(
                    json!({"type": "response.function_call_arguments.delta", "output_index": 0,
                    "item_id": format!("fc_{number}"), "delta": piece}),
                );
            }
            events.push(json!({"type": "response.output_item.done", "output_index": 0, "item": item(&arguments, "completed")}));
            End::Complete
        }
    };
    if end == End::Complete {
        events.push(json!({"type": "response.completed", "response": {"id": id, "status": "completed",
            "usage": {"input_tokens": TURN_INPUT, "input_tokens_details": {"cached_tokens": TURN_CACHED},
                "output_tokens": TURN_OUTPUT, "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": TURN_INPUT + TURN_OUTPUT}}}));
    }
    let mut parts: Vec<Part> = Vec::new();
    for event in events {
        let kind = event["type"].as_str().unwrap_or_default().to_owned();
        let bytes = format!("event: {kind}\ndata: {event}\n\n").into_bytes();
        parts.extend(split_parts(&bytes, 2, Duration::from_millis(1)));
    }
    Reply::Stream {
        status: 200,
        headers: vec![("content-type".to_owned(), "text/event-stream".to_owned())],
        parts,
        end,
    }
}

/// `text` in two pieces (at a character boundary), so the deltas are really pieces.
fn halves(text: &str) -> Vec<String> {
    let middle = text
        .char_indices()
        .map(|(at, _)| at)
        .nth(text.chars().count() / 2)
        .unwrap_or(text.len());
    let (first, second) = text.split_at(middle);
    [first, second]
        .into_iter()
        .filter(|piece| !piece.is_empty())
        .map(str::to_owned)
        .collect()
}
