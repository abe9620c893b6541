//! A fake Gemini API (`generativelanguage.googleapis.com`, v1beta) on 127.0.0.1, enough for
//! the Gemini CLI: `POST /v1beta/models/{model}:streamGenerateContent?alt=sse` (one SSE event
//! per `GenerateContentResponse`), `:generateContent` and `:countTokens`.
//!
//! The agent's own turns (requests that offer `tools`) take the scripted [`Turn`]s in order:
//! text, or a `functionCall` the CLI then runs with its own tools. The CLI's side requests
//! (routing, checks: no `tools`) get a generic answer, a JSON object filling their
//! `responseJsonSchema` when they ask for one. Every reply carries the same `usageMetadata`
//! ([`PROMPT_TOKENS`], [`CACHED_TOKENS`], [`OUTPUT_TOKENS`]).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

use super::http_server::{End, Handler, HttpServer, Part, Reply, Request};

/// `promptTokenCount` of every reply.
pub const PROMPT_TOKENS: u64 = 12;
/// `cachedContentTokenCount` of every reply (part of the prompt).
pub const CACHED_TOKENS: u64 = 4;
/// `candidatesTokenCount` of every reply.
pub const OUTPUT_TOKENS: u64 = 3;

/// A home for the Gemini CLI in ACP mode under `root` (`gemini-home/.gemini/settings.json`):
/// API-key auth, nothing sent but model calls, no local `.env` read. Give it to the CLI as
/// `GEMINI_CLI_HOME`.
pub fn acp_home(root: &std::path::Path) -> std::path::PathBuf {
    let home = root.join("gemini-home");
    std::fs::create_dir_all(home.join(".gemini")).expect("gemini home");
    let settings = json!({
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "privacy": {"usageStatisticsEnabled": false},
        "telemetry": {"enabled": false},
        "general": {"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
        "advanced": {"ignoreLocalEnv": true}
    });
    std::fs::write(home.join(".gemini/settings.json"), settings.to_string()).expect("settings");
    home
}

/// One scripted model turn.
#[derive(Clone, Debug)]
pub enum Turn {
    /// A text answer, streamed in two pieces.
    Text(String),
    /// A short text, then a call of the CLI's tool `name` with `args`.
    Call { name: String, args: Value },
    /// No answer: the connection stays open.
    Hang,
}

impl Turn {
    /// A text answer.
    pub fn text(text: &str) -> Self {
        Self::Text(text.to_owned())
    }

    /// A call of the CLI's tool `name`.
    pub fn call(name: &str, args: Value) -> Self {
        Self::Call {
            name: name.to_owned(),
            args,
        }
    }
}

#[derive(Default)]
struct Script {
    turns: VecDeque<Turn>,
    /// Answer every request with this status and a Google error body.
    fail: Option<u16>,
}

/// A running fake. Dropping it stops the server.
pub struct FakeGemini {
    server: HttpServer,
    script: Arc<Mutex<Script>>,
}

impl FakeGemini {
    /// Starts a fake on a free loopback port with `turns` queued.
    pub fn start(turns: Vec<Turn>) -> Self {
        let script = Arc::new(Mutex::new(Script {
            turns: turns.into(),
            fail: None,
        }));
        let handler: Handler = {
            let script = Arc::clone(&script);
            Arc::new(move |request: &Request| answer(&script, request))
        };
        Self {
            server: HttpServer::start(handler),
            script,
        }
    }

    /// `http://127.0.0.1:<port>`: the CLI's `GOOGLE_GEMINI_BASE_URL`.
    pub fn url(&self) -> String {
        self.server.url()
    }

    /// Answers every request with `status` (401, 403, …) from now on.
    pub fn fail_with(&self, status: u16) {
        self.script.lock().expect("script lock").fail = Some(status);
    }

    /// Every request received.
    pub fn requests(&self) -> Vec<Request> {
        self.server.requests()
    }

    /// The requests of the agent's own turns (those offering tools), as JSON.
    pub fn turn_bodies(&self) -> Vec<Value> {
        self.requests()
            .iter()
            .map(Request::json)
            .filter(|body| body.get("tools").is_some())
            .collect()
    }

    /// Scripted turns not yet served.
    pub fn remaining(&self) -> usize {
        self.script.lock().expect("script lock").turns.len()
    }
}

fn answer(script: &Mutex<Script>, request: &Request) -> Reply {
    let mut script = script.lock().expect("script lock");
    let path = request.path();
    if request.method != "POST" || !path.starts_with("/v1beta/models/") {
        return error(
            404,
            "NOT_FOUND",
            &format!("no route for {}", request.target),
        );
    }
    if let Some(status) = script.fail {
        let kind = if status == 401 {
            "UNAUTHENTICATED"
        } else {
            "PERMISSION_DENIED"
        };
        return error(
            status,
            kind,
            "API key not valid. Please pass a valid API key.",
        );
    }
    if path.ends_with(":countTokens") {
        return Reply::json(200, &json!({"totalTokens": PROMPT_TOKENS}));
    }
    let body = request.json();
    let turn = if body.get("tools").is_some() {
        match script.turns.pop_front() {
            Some(turn) => turn,
            None => return error(400, "INVALID_ARGUMENT", "the fake's script has run out"),
        }
    } else {
        let schema = body.pointer("/generationConfig/responseJsonSchema");
        Turn::Text(schema.map_or_else(|| "ok".to_owned(), |s| instance(s).to_string()))
    };
    render(turn, path)
}

/// `turn` as the answer to a request on `path` (`…:streamGenerateContent` streams it).
pub fn render(turn: Turn, path: &str) -> Reply {
    let chunks = match turn {
        Turn::Hang => return Reply::Hang,
        Turn::Text(text) => {
            let cut = text.char_indices().nth(text.chars().count() / 2);
            let (head, tail) = text.split_at(cut.map_or(0, |(at, _)| at));
            vec![
                response(json!([{"text": head}]), false),
                response(json!([{"text": tail}]), true),
            ]
        }
        Turn::Call { name, args } => vec![response(
            json!([{"text": "Working on it."}, {"functionCall": {"name": name, "args": args}}]),
            true,
        )],
    };
    if path.ends_with(":streamGenerateContent") {
        let parts = chunks
            .iter()
            .flat_map(|chunk| {
                [
                    Part::Bytes(format!("data: {chunk}\r\n\r\n").into_bytes()),
                    Part::Pause(Duration::from_millis(5)),
                ]
            })
            .collect();
        return Reply::Stream {
            status: 200,
            headers: vec![("content-type".to_owned(), "text/event-stream".to_owned())],
            parts,
            end: End::Complete,
        };
    }
    // `:generateContent`: the pieces as one response.
    let parts: Vec<Value> = chunks
        .iter()
        .flat_map(|chunk| {
            chunk
                .pointer("/candidates/0/content/parts")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
        })
        .collect();
    Reply::json(200, &response(Value::Array(parts), true))
}

/// One `GenerateContentResponse`; the last of a turn has its finish reason and usage.
fn response(parts: Value, last: bool) -> Value {
    let mut candidate = json!({"content": {"role": "model", "parts": parts}, "index": 0});
    let mut response = json!({"modelVersion": "gemini-fake"});
    if last {
        candidate["finishReason"] = json!("STOP");
        response["usageMetadata"] = json!({
            "promptTokenCount": PROMPT_TOKENS,
            "cachedContentTokenCount": CACHED_TOKENS,
            "candidatesTokenCount": OUTPUT_TOKENS,
            "totalTokenCount": PROMPT_TOKENS + OUTPUT_TOKENS,
        });
    }
    response["candidates"] = json!([candidate]);
    response
}

/// A Google API error: `{"error": {"code", "message", "status"}}`.
pub fn error(status: u16, kind: &str, message: &str) -> Reply {
    Reply::json(
        status,
        &json!({"error": {"code": status, "message": message, "status": kind}}),
    )
}

/// A value fitting a (Gemini-style, upper-case types) JSON schema: every property filled.
pub fn instance(schema: &Value) -> Value {
    if let Some(choices) = schema.get("enum").and_then(Value::as_array)
        && let Some(first) = choices.first()
    {
        return first.clone();
    }
    let kind = schema
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("object")
        .to_ascii_lowercase();
    match kind.as_str() {
        "string" => json!("fake"),
        "integer" | "number" => json!(1),
        "boolean" => json!(false),
        "array" => json!([]),
        _ => {
            let properties = schema.get("properties").and_then(Value::as_object);
            Value::Object(
                properties
                    .into_iter()
                    .flatten()
                    .map(|(name, property)| (name.clone(), instance(property)))
                    .collect(),
            )
        }
    }
}
