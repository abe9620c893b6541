//! A fake OpenAI-compatible Chat Completions server on 127.0.0.1, scriptable per test.
//!
//! ```ignore
//! let fake = FakeOpenAi::start();
//! fake.push(Turn::tool_call("edit_file", json!({"path": "a.txt"})));
//! fake.push(Turn::text("Done."));
//! // base URL: fake.url() + "/v1"
//! ```
//!
//! `POST …/chat/completions` (with or without `/v1`) takes the next scripted [`Turn`] whose
//! matcher accepts the request; with none left it answers the fallback, by default a 400
//! saying the script ran out. `stream: true` requests get `data:` chunks (each split across
//! several writes) ending in `data: [DONE]`, with a usage chunk when the request asked for
//! `stream_options.include_usage`; others get a `chat.completion` JSON. `GET /v1/models`
//! lists models. Every request is recorded.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

use super::fake_anthropic::pieces;
use super::http_server::{End, Handler, HttpServer, Part, Reply, Request, split_parts};

/// Token counts reported for a turn.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    /// `prompt_tokens` (including cached ones).
    pub prompt: u64,
    /// `completion_tokens`.
    pub completion: u64,
    /// `prompt_tokens_details.cached_tokens`.
    pub cached: u64,
}

/// A scripted assistant message.
#[derive(Clone, Debug, PartialEq)]
pub struct Message {
    /// The model reported (default: the request's).
    pub model: Option<String>,
    /// `reasoning_content` streamed before the answer.
    pub reasoning: Option<String>,
    /// The answer text.
    pub text: String,
    /// Tool calls: name and arguments; ids are generated.
    pub tool_calls: Vec<(String, Value)>,
    /// Usage reported.
    pub usage: Usage,
}

/// A scripted answer to one `POST /chat/completions`.
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
    /// HTTP 200, one content chunk, then a chunk holding an `error` object (vLLM style).
    ErrorChunk {
        /// Text streamed before the error.
        text: String,
        /// The error's `code`.
        code: u16,
    },
    /// HTTP 200, one content chunk, half of the next, then the socket closes.
    Cut {
        /// Text streamed before the cut.
        text: String,
    },
    /// The request is read and never answered.
    Hang,
    /// HTTP 200, one content chunk, then silence (the connection stays open).
    HangMidStream {
        /// Text streamed before the silence.
        text: String,
    },
}

impl Turn {
    /// A text answer (`finish_reason: "stop"`).
    pub fn text(text: &str) -> Self {
        Self::Message(Message {
            model: None,
            reasoning: None,
            text: text.to_owned(),
            tool_calls: Vec::new(),
            usage: Usage {
                prompt: 10,
                completion: 5,
                cached: 0,
            },
        })
    }

    /// A turn calling one tool (`finish_reason: "tool_calls"`).
    pub fn tool_call(name: &str, arguments: Value) -> Self {
        Self::tool_calls(vec![(name, arguments)])
    }

    /// A turn calling several tools.
    pub fn tool_calls(calls: Vec<(&str, Value)>) -> Self {
        Self::Message(Message {
            model: None,
            reasoning: None,
            text: String::new(),
            tool_calls: calls.into_iter().map(|(n, a)| (n.to_owned(), a)).collect(),
            usage: Usage {
                prompt: 10,
                completion: 5,
                cached: 0,
            },
        })
    }

    /// HTTP 429 with `retry-after: <retry_after>`.
    pub fn rate_limited(retry_after: &str) -> Self {
        Self::error(429, "rate_limit_error", "rate limited").with_header("retry-after", retry_after)
    }

    /// HTTP 503.
    pub fn unavailable() -> Self {
        Self::error(503, "service_unavailable", "model is loading")
    }

    /// HTTP 500.
    pub fn server_error() -> Self {
        Self::error(500, "InternalServerError", "internal error")
    }

    /// An HTTP error with an OpenAI-style error body.
    pub fn error(status: u16, kind: &str, message: &str) -> Self {
        Self::Status {
            status,
            headers: vec![("content-type".to_owned(), "application/json".to_owned())],
            body: json!({"error": {"message": message, "type": kind, "param": null,
                                   "code": status.to_string()}})
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

    /// Streams reasoning before the answer (of a `Message` turn).
    pub fn with_reasoning(mut self, reasoning: &str) -> Self {
        if let Self::Message(message) = &mut self {
            message.reasoning = Some(reasoning.to_owned());
        }
        self
    }

    /// Sets the answer text (of a `Message` turn, e.g. text alongside tool calls).
    pub fn with_text(mut self, text: &str) -> Self {
        if let Self::Message(message) = &mut self {
            message.text = text.to_owned();
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
pub struct FakeOpenAi {
    server: HttpServer,
    script: Arc<Mutex<Script>>,
}

impl FakeOpenAi {
    /// Starts a fake on a free loopback port.
    pub fn start() -> Self {
        let script = Arc::new(Mutex::new(Script {
            queue: VecDeque::new(),
            fallback: None,
            models: vec!["qwen3".to_owned()],
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

    /// `http://127.0.0.1:<port>` (append `/v1` for clients that expect it).
    pub fn url(&self) -> String {
        self.server.url()
    }

    /// The underlying server (addresses, waiting helpers, hang-up counts).
    pub fn server(&self) -> &HttpServer {
        &self.server
    }

    /// Queues a turn for the next completion request.
    pub fn push(&self, turn: Turn) -> &Self {
        self.lock().queue.push_back((None, turn));
        self
    }

    /// Queues a turn that only a request accepted by `matcher` takes.
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

    /// Requires `Authorization: Bearer <key>`; others get a 401.
    pub fn require_key(&self, key: &str) -> &Self {
        self.lock().api_key = Some(key.to_owned());
        self
    }

    /// Model ids listed by `GET /v1/models`.
    pub fn set_models(&self, models: &[&str]) -> &Self {
        self.lock().models = models.iter().map(|m| (*m).to_owned()).collect();
        self
    }

    /// How many writes each chunk is split into (default 3), and the pause between.
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

    /// The JSON bodies of every completion request.
    pub fn completion_bodies(&self) -> Vec<Value> {
        self.requests()
            .iter()
            .filter(|r| r.method == "POST" && r.path().ends_with("/chat/completions"))
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
        let given = request
            .header("authorization")
            .and_then(|a| a.strip_prefix("Bearer "));
        if given != Some(key.as_str()) {
            return status_reply(&Turn::error(
                401,
                "invalid_request_error",
                "invalid api key",
            ));
        }
    }
    let path = request.path().trim_end_matches('/');
    match request.method.as_str() {
        "POST" if path.ends_with("/chat/completions") => {
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
                        "fake_openai: no scripted reply left for this request",
                    )
                }),
            };
            script.served += 1;
            render(
                &turn,
                &Context::of(&body, script.served, script.pieces, script.pause),
            )
        }
        "GET" if path.ends_with("/models") => {
            let data: Vec<Value> = script
                .models
                .iter()
                .map(|id| json!({"id": id, "object": "model", "created": 1_763_800_000, "owned_by": "fake"}))
                .collect();
            Reply::json(200, &json!({"object": "list", "data": data}))
        }
        _ => status_reply(&Turn::error(404, "not_found", &format!("no route {path}"))),
    }
}

/// `turn` as this fake answers `request` (the `number`th answer), for fakes that decide
/// their turns some other way (the conformance kit's model).
pub fn reply(turn: &Turn, request: &Request, number: usize) -> Reply {
    if matches!(turn, Turn::Status { .. }) {
        return status_reply(turn);
    }
    render(
        turn,
        &Context::of(&request.json(), number, 3, Duration::from_millis(1)),
    )
}

struct Context {
    number: usize,
    model: String,
    stream: bool,
    usage: bool,
    pieces: usize,
    pause: Duration,
}

impl Context {
    /// How the `number`th answer to a request with `body` is rendered.
    fn of(body: &Value, number: usize, pieces: usize, pause: Duration) -> Self {
        Self {
            number,
            model: body
                .get("model")
                .and_then(Value::as_str)
                .unwrap_or("fake")
                .to_owned(),
            stream: body.get("stream").and_then(Value::as_bool) == Some(true),
            usage: body
                .pointer("/stream_options/include_usage")
                .and_then(Value::as_bool)
                == Some(true),
            pieces,
            pause,
        }
    }
}

fn status_reply(turn: &Turn) -> Reply {
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

fn render(turn: &Turn, cx: &Context) -> Reply {
    let chunk = |delta: Value, finish: Option<&str>| {
        data(
            &json!({"id": format!("chatcmpl-fake-{}", cx.number), "object": "chat.completion.chunk",
            "created": 1_763_800_000, "model": cx.model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], "usage": null}),
        )
    };
    let stream = |events: Vec<String>, end: End| {
        let mut parts = Vec::new();
        for event in events {
            if !parts.is_empty() {
                parts.push(Part::Pause(cx.pause));
            }
            parts.extend(split_parts(event.as_bytes(), cx.pieces, cx.pause));
        }
        Reply::Stream {
            status: 200,
            headers: vec![("content-type".to_owned(), "text/event-stream".to_owned())],
            parts,
            end,
        }
    };
    let opening = |text: &str| {
        vec![
            chunk(json!({"role": "assistant", "content": ""}), None),
            chunk(json!({"content": text}), None),
        ]
    };
    match turn {
        Turn::Status { .. } => status_reply(turn),
        Turn::Hang => Reply::Hang,
        Turn::Message(message) if !cx.stream => Reply::json(200, &completion_json(message, cx)),
        Turn::Message(message) => {
            let model = message.model.clone().unwrap_or_else(|| cx.model.clone());
            let chunk = |delta: Value, finish: Option<&str>| {
                data(
                    &json!({"id": format!("chatcmpl-fake-{}", cx.number), "object": "chat.completion.chunk",
                    "created": 1_763_800_000, "model": model,
                    "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], "usage": null}),
                )
            };
            let mut events = vec![chunk(json!({"role": "assistant", "content": ""}), None)];
            for piece in pieces(message.reasoning.as_deref().unwrap_or_default()) {
                events.push(chunk(json!({"reasoning_content": piece}), None));
            }
            for piece in pieces(&message.text) {
                events.push(chunk(json!({"content": piece}), None));
            }
            for (index, (name, arguments)) in message.tool_calls.iter().enumerate() {
                events.push(chunk(
                    json!({"tool_calls": [{"index": index, "id": call_id(cx.number, index),
                    "type": "function", "function": {"name": name, "arguments": ""}}]}),
                    None,
                ));
                for piece in pieces(&arguments.to_string()) {
                    events.push(chunk(
                        json!({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}),
                        None,
                    ));
                }
            }
            let finish = if message.tool_calls.is_empty() {
                "stop"
            } else {
                "tool_calls"
            };
            events.push(chunk(json!({}), Some(finish)));
            if cx.usage {
                let usage = message.usage;
                events.push(data(&json!({"id": format!("chatcmpl-fake-{}", cx.number),
                    "object": "chat.completion.chunk", "created": 1_763_800_000, "model": model,
                    "choices": [], "usage": usage_json(usage)})));
            }
            events.push("data: [DONE]\n\n".to_owned());
            stream(events, End::Complete)
        }
        Turn::ErrorChunk { text, code } => {
            let mut events = opening(text);
            events.push(data(&json!({"error": {"message": "engine died", "type": "InternalServerError", "code": code}})));
            stream(events, End::Complete)
        }
        Turn::Cut { text } => {
            let mut events = opening(text);
            let next = chunk(json!({"content": " and then"}), None);
            events.push(next[..next.len() / 2].to_owned());
            stream(events, End::Cut)
        }
        Turn::HangMidStream { text } => stream(opening(text), End::Hang),
    }
}

fn data(value: &Value) -> String {
    format!("data: {value}\n\n")
}

fn call_id(number: usize, index: usize) -> String {
    format!("call_fake_{number}_{index}")
}

fn usage_json(usage: Usage) -> Value {
    json!({"prompt_tokens": usage.prompt, "completion_tokens": usage.completion,
           "total_tokens": usage.prompt + usage.completion,
           "prompt_tokens_details": {"cached_tokens": usage.cached}})
}

fn completion_json(message: &Message, cx: &Context) -> Value {
    let calls: Vec<Value> = message
        .tool_calls
        .iter()
        .enumerate()
        .map(|(index, (name, arguments))| {
            json!({"id": call_id(cx.number, index), "type": "function",
                   "function": {"name": name, "arguments": arguments.to_string()}})
        })
        .collect();
    let mut reply = json!({"role": "assistant", "content": message.text});
    if !calls.is_empty() {
        reply["tool_calls"] = Value::Array(calls);
    }
    json!({
        "id": format!("chatcmpl-fake-{}", cx.number), "object": "chat.completion",
        "created": 1_763_800_000, "model": message.model.as_deref().unwrap_or(&cx.model),
        "choices": [{"index": 0, "message": reply,
                     "finish_reason": if message.tool_calls.is_empty() { "stop" } else { "tool_calls" }}],
        "usage": usage_json(message.usage),
    })
}
