//! A fake Anthropic Messages API on 127.0.0.1, scriptable per test.
//!
//! ```ignore
//! let fake = FakeAnthropic::start();
//! fake.push(Turn::tool_use("edit_file", json!({"path": "a.txt"})));
//! fake.push(Turn::text("Done.").with_usage(Usage { input: 10, output: 5, ..Usage::default() }));
//! // point a client at fake.url() (ANTHROPIC_BASE_URL for Claude Code), then:
//! let bodies = fake.message_bodies();
//! ```
//!
//! `POST /v1/messages` (any query, e.g. `?beta=true`) takes the next scripted [`Turn`]
//! whose matcher accepts the request (see [`FakeAnthropic::push_when`]); with none left it
//! answers the fallback, by default a 400 `invalid_request_error` saying the script ran
//! out. `stream: true` requests get SSE (each event split across several writes), others
//! get the message as JSON. `POST /v1/messages/count_tokens` and `GET /v1/models[/id]`
//! answer plausibly. Every request is recorded.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

use super::http_server::{End, Handler, HttpServer, Part, Reply, Request, split_parts};

/// Token counts reported for a turn.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    /// `input_tokens`.
    pub input: u64,
    /// `output_tokens`.
    pub output: u64,
    /// `cache_read_input_tokens`.
    pub cache_read: u64,
    /// `cache_creation_input_tokens`.
    pub cache_write: u64,
}

/// A content block of a scripted message.
#[derive(Clone, Debug, PartialEq)]
pub enum Block {
    /// Text, streamed in a few deltas.
    Text(String),
    /// Thinking, streamed in deltas, with a signature.
    Thinking(String),
    /// A tool call; `id` is generated when `None`.
    ToolUse {
        /// `toolu_…` id.
        id: Option<String>,
        /// The tool's name.
        name: String,
        /// Its input, streamed as `input_json_delta` fragments.
        input: Value,
    },
}

/// A scripted assistant message.
#[derive(Clone, Debug, PartialEq)]
pub struct Message {
    /// The model reported (default: the request's).
    pub model: Option<String>,
    /// Content blocks in order.
    pub blocks: Vec<Block>,
    /// `stop_reason`.
    pub stop_reason: String,
    /// Usage reported.
    pub usage: Usage,
}

/// A scripted answer to one `POST /v1/messages`.
#[derive(Clone, Debug, PartialEq)]
pub enum Turn {
    /// A message.
    Message(Message),
    /// An HTTP error (or any status) with headers and a raw body.
    Status {
        /// Status code.
        status: u16,
        /// Extra headers.
        headers: Vec<(String, String)>,
        /// Body.
        body: String,
    },
    /// HTTP 200, `message_start`, some text, then `event: error` with this error type.
    ErrorEvent {
        /// Text streamed before the error.
        text: String,
        /// `error.type`, e.g. `overloaded_error`.
        error_type: String,
    },
    /// HTTP 200, `message_start`, some text, half of the next event, then the socket closes.
    Cut {
        /// Text streamed before the cut.
        text: String,
    },
    /// The request is read and never answered.
    Hang,
    /// HTTP 200, `message_start` and some text, then silence (the connection stays open).
    HangMidStream {
        /// Text streamed before the silence.
        text: String,
    },
    /// HTTP 200, `message_start` with `input` tokens, then per step a text delta and a
    /// `message_delta` reporting the cumulative `output_tokens` so far (as a long reply's
    /// usage grows). With `finish` the message then ends (`end_turn`); without it the
    /// server falls silent and waits for the client to close the stream (counted in
    /// [`HttpServer::hang_ups`]).
    Metered {
        /// `input_tokens` of `message_start`.
        input: u64,
        /// Text pieces with the cumulative output tokens reported after each.
        steps: Vec<(String, u64)>,
        /// End the message after the steps.
        finish: bool,
    },
}

impl Turn {
    /// A text answer (`end_turn`).
    pub fn text(text: &str) -> Self {
        Self::message(vec![Block::Text(text.to_owned())], "end_turn")
    }

    /// A turn that calls one tool (`tool_use`).
    pub fn tool_use(name: &str, input: Value) -> Self {
        Self::message(
            vec![Block::ToolUse {
                id: None,
                name: name.to_owned(),
                input,
            }],
            "tool_use",
        )
    }

    /// Some text, then a call of one tool.
    pub fn text_then_tool(text: &str, name: &str, input: Value) -> Self {
        Self::message(
            vec![
                Block::Text(text.to_owned()),
                Block::ToolUse {
                    id: None,
                    name: name.to_owned(),
                    input,
                },
            ],
            "tool_use",
        )
    }

    /// A message of these blocks.
    pub fn message(blocks: Vec<Block>, stop_reason: &str) -> Self {
        Self::Message(Message {
            model: None,
            blocks,
            stop_reason: stop_reason.to_owned(),
            usage: Usage {
                input: 10,
                output: 5,
                ..Usage::default()
            },
        })
    }

    /// HTTP 429 `rate_limit_error` with `retry-after: <retry_after>`.
    pub fn rate_limited(retry_after: &str) -> Self {
        Self::error(429, "rate_limit_error", "rate limited").with_header("retry-after", retry_after)
    }

    /// HTTP 529 `overloaded_error`.
    pub fn overloaded() -> Self {
        Self::error(529, "overloaded_error", "Overloaded")
    }

    /// HTTP 500 `api_error`.
    pub fn server_error() -> Self {
        Self::error(500, "api_error", "Internal server error")
    }

    /// An HTTP error with Anthropic's error body.
    pub fn error(status: u16, error_type: &str, message: &str) -> Self {
        Self::Status {
            status,
            headers: vec![
                ("content-type".to_owned(), "application/json".to_owned()),
                ("request-id".to_owned(), "req_fake".to_owned()),
            ],
            body: json!({"type": "error", "error": {"type": error_type, "message": message},
                         "request_id": "req_fake"})
            .to_string(),
        }
    }

    /// Adds a response header (to a `Status` turn).
    pub fn with_header(mut self, name: &str, value: &str) -> Self {
        if let Self::Status { headers, .. } = &mut self {
            headers.push((name.to_owned(), value.to_owned()));
        }
        self
    }

    /// Sets the usage reported (of a `Message` turn).
    pub fn with_usage(mut self, usage: Usage) -> Self {
        if let Self::Message(message) = &mut self {
            message.usage = usage;
        }
        self
    }

    /// Puts a thinking block first (of a `Message` turn).
    pub fn with_thinking(mut self, thinking: &str) -> Self {
        if let Self::Message(message) = &mut self {
            message
                .blocks
                .insert(0, Block::Thinking(thinking.to_owned()));
        }
        self
    }

    /// Sets the model reported (of a `Message` turn).
    pub fn with_model(mut self, model: &str) -> Self {
        if let Self::Message(message) = &mut self {
            message.model = Some(model.to_owned());
        }
        self
    }
}

type Matcher = Arc<dyn Fn(&Request) -> bool + Send + Sync>;

struct Script {
    queue: VecDeque<(Option<Matcher>, Turn)>,
    fallback: Option<Turn>,
    models: Vec<String>,
    api_key: Option<String>,
    served: usize,
    pieces: usize,
    pause: Duration,
}

/// The fake server. Dropping it stops it.
pub struct FakeAnthropic {
    server: HttpServer,
    script: Arc<Mutex<Script>>,
}

impl FakeAnthropic {
    /// Starts a fake on a free loopback port.
    pub fn start() -> Self {
        let script = Arc::new(Mutex::new(Script {
            queue: VecDeque::new(),
            fallback: None,
            models: vec![
                "claude-sonnet-4-5".to_owned(),
                "claude-haiku-4-5".to_owned(),
            ],
            api_key: None,
            served: 0,
            pieces: 3,
            pause: Duration::from_millis(1),
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

    /// `http://127.0.0.1:<port>` (the base URL, without `/v1`).
    pub fn url(&self) -> String {
        self.server.url()
    }

    /// The underlying server (addresses, waiting helpers, hang-up counts).
    pub fn server(&self) -> &HttpServer {
        &self.server
    }

    /// Queues a turn for the next `POST /v1/messages`.
    pub fn push(&self, turn: Turn) -> &Self {
        self.lock().queue.push_back((None, turn));
        self
    }

    /// Queues a turn that only a request accepted by `matcher` takes; other requests skip
    /// it (useful when a CLI sends side requests, e.g. title generation on a small model).
    pub fn push_when(
        &self,
        matcher: impl Fn(&Request) -> bool + Send + Sync + 'static,
        turn: Turn,
    ) -> &Self {
        self.lock().queue.push_back((Some(Arc::new(matcher)), turn));
        self
    }

    /// The answer when no queued turn fits (default: a 400 saying the script ran out).
    pub fn set_fallback(&self, turn: Turn) -> &Self {
        self.lock().fallback = Some(turn);
        self
    }

    /// Requires this key (`x-api-key` or `Authorization: Bearer`); others get a 401.
    pub fn require_key(&self, key: &str) -> &Self {
        self.lock().api_key = Some(key.to_owned());
        self
    }

    /// Model ids listed by `GET /v1/models`.
    pub fn set_models(&self, models: &[&str]) -> &Self {
        self.lock().models = models.iter().map(|m| (*m).to_owned()).collect();
        self
    }

    /// How many writes each SSE event is split into (default 3), and the pause between.
    pub fn set_split(&self, pieces: usize, pause: Duration) -> &Self {
        let mut script = self.lock();
        script.pieces = pieces;
        script.pause = pause;
        self
    }

    /// Queued turns not yet served.
    pub fn remaining(&self) -> usize {
        self.lock().queue.len()
    }

    /// Every request received.
    pub fn requests(&self) -> Vec<Request> {
        self.server.requests()
    }

    /// The JSON bodies of every `POST /v1/messages`.
    pub fn message_bodies(&self) -> Vec<Value> {
        self.requests()
            .iter()
            .filter(|r| r.method == "POST" && r.path().ends_with("/v1/messages"))
            .map(Request::json)
            .collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Script> {
        self.script.lock().expect("script lock")
    }
}

fn answer(script: &Mutex<Script>, request: &Request) -> Reply {
    let mut script = script.lock().expect("script lock");
    if let Some(key) = &script.api_key {
        let bearer = request
            .header("authorization")
            .and_then(|a| a.strip_prefix("Bearer "));
        if request.header("x-api-key").or(bearer) != Some(key.as_str()) {
            return reply_status(&Turn::error(
                401,
                "authentication_error",
                "invalid x-api-key",
            ));
        }
    }
    let path = request.path().trim_end_matches('/');
    match (request.method.as_str(), path) {
        ("POST", "/v1/messages") => {
            let body = request.json();
            let position = script
                .queue
                .iter()
                .position(|(matcher, _)| matcher.as_ref().is_none_or(|matches| matches(request)));
            let turn = match position.and_then(|at| script.queue.remove(at)) {
                Some((_, turn)) => turn,
                None => script.fallback.clone().unwrap_or_else(|| {
                    Turn::error(
                        400,
                        "invalid_request_error",
                        "fake_anthropic: no scripted reply left for this request",
                    )
                }),
            };
            script.served += 1;
            let number = script.served;
            let stream = body.get("stream").and_then(Value::as_bool) == Some(true);
            let model = body
                .get("model")
                .and_then(Value::as_str)
                .unwrap_or("claude-fake");
            render(&turn, number, model, stream, script.pieces, script.pause)
        }
        ("POST", "/v1/messages/count_tokens") => {
            Reply::json(200, &json!({"input_tokens": request.body.len() / 4 + 1}))
        }
        ("GET", "/v1/models") => {
            let data: Vec<Value> = script.models.iter().map(|id| model_entry(id)).collect();
            Reply::json(
                200,
                &json!({
                    "data": data,
                    "has_more": false,
                    "first_id": script.models.first(),
                    "last_id": script.models.last(),
                }),
            )
        }
        ("GET", _) if path.starts_with("/v1/models/") => {
            let id = &path["/v1/models/".len()..];
            if script.models.iter().any(|m| m == id) {
                Reply::json(200, &model_entry(id))
            } else {
                reply_status(&Turn::error(
                    404,
                    "not_found_error",
                    &format!("model: {id}"),
                ))
            }
        }
        _ => reply_status(&Turn::error(
            404,
            "not_found_error",
            &format!("no route {path}"),
        )),
    }
}

/// `turn` as this fake answers `request` (the `number`th answer), for fakes that decide
/// their turns some other way (the conformance kit's model).
pub fn reply(turn: &Turn, request: &Request, number: usize) -> Reply {
    if matches!(turn, Turn::Status { .. }) {
        return reply_status(turn);
    }
    let body = request.json();
    let stream = body.get("stream").and_then(Value::as_bool) == Some(true);
    let model = body
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or("claude-fake");
    render(turn, number, model, stream, 3, Duration::from_millis(1))
}

fn model_entry(id: &str) -> Value {
    json!({"type": "model", "id": id, "display_name": id, "created_at": "2025-01-01T00:00:00Z"})
}

fn reply_status(turn: &Turn) -> Reply {
    match turn {
        Turn::Status {
            status,
            headers,
            body,
        } => Reply::Full {
            status: *status,
            headers: headers.clone(),
            body: body.clone().into_bytes(),
        },
        _ => unreachable!("only status turns"),
    }
}

fn render(
    turn: &Turn,
    number: usize,
    model: &str,
    stream: bool,
    pieces: usize,
    pause: Duration,
) -> Reply {
    let events = |events: Vec<String>, end: End| {
        let mut parts = Vec::new();
        for event in events {
            if !parts.is_empty() {
                parts.push(Part::Pause(pause));
            }
            parts.extend(split_parts(event.as_bytes(), pieces, pause));
        }
        Reply::Stream {
            status: 200,
            headers: vec![
                ("content-type".to_owned(), "text/event-stream".to_owned()),
                ("cache-control".to_owned(), "no-cache".to_owned()),
                ("request-id".to_owned(), format!("req_fake_{number}")),
            ],
            parts,
            end,
        }
    };
    let start = |model: &str| {
        sse(
            "message_start",
            &json!({"type": "message_start", "message": {
            "id": format!("msg_fake_{number}"), "type": "message", "role": "assistant",
            "model": model, "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": 10, "cache_creation_input_tokens": 0,
                      "cache_read_input_tokens": 0, "output_tokens": 1}}}),
        )
    };
    let text_block = |text: &str| {
        vec![
            sse(
                "content_block_start",
                &json!({"type": "content_block_start", "index": 0,
                "content_block": {"type": "text", "text": ""}}),
            ),
            sse(
                "content_block_delta",
                &json!({"type": "content_block_delta", "index": 0,
                "delta": {"type": "text_delta", "text": text}}),
            ),
        ]
    };
    match turn {
        Turn::Status { .. } => reply_status(turn),
        Turn::Hang => Reply::Hang,
        Turn::Message(message) if !stream => {
            Reply::json(200, &message_json(message, number, model))
        }
        Turn::Message(message) => events(message_events(message, number, model), End::Complete),
        Turn::ErrorEvent { text, error_type } => {
            let mut list = vec![start(model)];
            list.extend(text_block(text));
            list.push(sse(
                "error",
                &json!({"type": "error",
                "error": {"type": error_type, "message": error_type}}),
            ));
            events(list, End::Complete)
        }
        Turn::Cut { text } => {
            let mut list = vec![start(model)];
            list.extend(text_block(text));
            let next = sse(
                "content_block_delta",
                &json!({"type": "content_block_delta",
                "index": 0, "delta": {"type": "text_delta", "text": "and then"}}),
            );
            list.push(next[..next.len() / 2].to_owned());
            events(list, End::Cut)
        }
        Turn::HangMidStream { text } => {
            let mut list = vec![start(model)];
            list.extend(text_block(text));
            events(list, End::Hang)
        }
        Turn::Metered {
            input,
            steps,
            finish,
        } => {
            let mut list = vec![sse(
                "message_start",
                &json!({"type": "message_start", "message": {
                "id": format!("msg_fake_{number}"), "type": "message", "role": "assistant",
                "model": model, "content": [], "stop_reason": null, "stop_sequence": null,
                "usage": {"input_tokens": input, "cache_creation_input_tokens": 0,
                          "cache_read_input_tokens": 0, "output_tokens": 1}}}),
            )];
            list.push(sse(
                "content_block_start",
                &json!({"type": "content_block_start", "index": 0,
                "content_block": {"type": "text", "text": ""}}),
            ));
            for (text, output) in steps {
                list.push(sse(
                    "content_block_delta",
                    &json!({"type": "content_block_delta", "index": 0,
                    "delta": {"type": "text_delta", "text": text}}),
                ));
                list.push(sse(
                    "message_delta",
                    &json!({"type": "message_delta", "delta": {"stop_reason": null},
                    "usage": {"output_tokens": output}}),
                ));
            }
            if !finish {
                return events(list, End::Hang);
            }
            let output = steps.last().map_or(1, |(_, output)| *output);
            list.push(sse(
                "content_block_stop",
                &json!({"type": "content_block_stop", "index": 0}),
            ));
            list.push(sse(
                "message_delta",
                &json!({"type": "message_delta",
                "delta": {"stop_reason": "end_turn", "stop_sequence": null},
                "usage": {"output_tokens": output}}),
            ));
            list.push(sse("message_stop", &json!({"type": "message_stop"})));
            events(list, End::Complete)
        }
    }
}

fn sse(name: &str, data: &Value) -> String {
    format!("event: {name}\ndata: {data}\n\n")
}

fn tool_id(id: Option<&String>, number: usize, index: usize) -> String {
    id.cloned()
        .unwrap_or_else(|| format!("toolu_fake_{number}_{index}"))
}

fn message_events(message: &Message, number: usize, model: &str) -> Vec<String> {
    let model = message.model.as_deref().unwrap_or(model);
    let usage = message.usage;
    let mut list = vec![sse(
        "message_start",
        &json!({"type": "message_start", "message": {
        "id": format!("msg_fake_{number}"), "type": "message", "role": "assistant",
        "model": model, "content": [], "stop_reason": null, "stop_sequence": null,
        "usage": {"input_tokens": usage.input, "cache_creation_input_tokens": usage.cache_write,
                  "cache_read_input_tokens": usage.cache_read, "output_tokens": 1}}}),
    )];
    for (index, block) in message.blocks.iter().enumerate() {
        let delta = |delta: Value| {
            sse(
                "content_block_delta",
                &json!({"type": "content_block_delta", "index": index, "delta": delta}),
            )
        };
        let (start, deltas) = match block {
            Block::Text(text) => (
                json!({"type": "text", "text": ""}),
                pieces(text)
                    .into_iter()
                    .map(|p| delta(json!({"type": "text_delta", "text": p})))
                    .collect::<Vec<_>>(),
            ),
            Block::Thinking(thinking) => {
                let mut deltas: Vec<String> = pieces(thinking)
                    .into_iter()
                    .map(|p| delta(json!({"type": "thinking_delta", "thinking": p})))
                    .collect();
                deltas.push(delta(
                    json!({"type": "signature_delta", "signature": "fake-signature"}),
                ));
                (
                    json!({"type": "thinking", "thinking": "", "signature": ""}),
                    deltas,
                )
            }
            Block::ToolUse { id, name, input } => {
                let json_text = input.to_string();
                let mut fragments = vec![String::new()];
                fragments.extend(pieces(&json_text));
                (
                    json!({"type": "tool_use", "id": tool_id(id.as_ref(), number, index), "name": name, "input": {}}),
                    fragments
                        .into_iter()
                        .map(|p| delta(json!({"type": "input_json_delta", "partial_json": p})))
                        .collect(),
                )
            }
        };
        list.push(sse(
            "content_block_start",
            &json!({"type": "content_block_start", "index": index, "content_block": start}),
        ));
        if index == 0 {
            list.push(sse("ping", &json!({"type": "ping"})));
        }
        list.extend(deltas);
        list.push(sse(
            "content_block_stop",
            &json!({"type": "content_block_stop", "index": index}),
        ));
    }
    list.push(sse(
        "message_delta",
        &json!({"type": "message_delta",
        "delta": {"stop_reason": message.stop_reason, "stop_sequence": null},
        "usage": {"output_tokens": usage.output}}),
    ));
    list.push(sse("message_stop", &json!({"type": "message_stop"})));
    list
}

fn message_json(message: &Message, number: usize, model: &str) -> Value {
    let content: Vec<Value> = message
        .blocks
        .iter()
        .enumerate()
        .map(|(index, block)| match block {
            Block::Text(text) => json!({"type": "text", "text": text}),
            Block::Thinking(thinking) => json!({"type": "thinking", "thinking": thinking, "signature": "fake-signature"}),
            Block::ToolUse { id, name, input } => {
                json!({"type": "tool_use", "id": tool_id(id.as_ref(), number, index), "name": name, "input": input})
            }
        })
        .collect();
    let usage = message.usage;
    json!({
        "id": format!("msg_fake_{number}"), "type": "message", "role": "assistant",
        "model": message.model.as_deref().unwrap_or(model), "content": content,
        "stop_reason": message.stop_reason, "stop_sequence": null,
        "usage": {"input_tokens": usage.input, "output_tokens": usage.output,
                  "cache_creation_input_tokens": usage.cache_write,
                  "cache_read_input_tokens": usage.cache_read},
    })
}

/// Splits text into up to three pieces on character boundaries.
pub(crate) fn pieces(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    if chars.is_empty() {
        return Vec::new();
    }
    let size = chars.len().div_ceil(3);
    chars
        .chunks(size)
        .map(|chunk| chunk.iter().collect())
        .collect()
}
