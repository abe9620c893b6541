//! The kit's model: one fake on 127.0.0.1 that speaks every wire an adapter may use (the
//! Anthropic Messages API, OpenAI Chat Completions, the OpenAI Responses API, the Gemini
//! API), and answers by what the conversation says rather than by counting requests.
//!
//! A scenario gives it a [`Brain`]: from each request of the agent's own turn (an
//! [`Exchange`]: the body, how many tool results the conversation holds, its text) the next
//! [`Move`], which the fake renders in the request's wire with the existing fakes'
//! renderers. A CLI's side requests (titles, routing: no tools offered) get a short text or
//! a value fitting the schema they ask for, never the scenario's moves.

use std::sync::{Arc, Mutex, PoisonError};

use serde_json::{Value, json};

use crate::support::fake_anthropic::{self, Turn as AnthropicTurn};
use crate::support::fake_gemini::{self, Turn as GeminiTurn};
use crate::support::fake_openai::{self, Turn as OpenAiTurn};
use crate::support::fake_responses::{self, Turn as ResponsesTurn};
use crate::support::http_server::{Handler, HttpServer, Reply, Request};

/// What the model does next.
#[derive(Clone, Debug)]
pub(super) enum Move {
    /// Answer with text and end the turn.
    Say(String),
    /// Call a tool by the name the agent offers it under.
    Call(String, Value),
    /// Never answer (the connection stays open).
    Hang,
}

/// One request of the agent's own turn, as the brain sees it.
pub(super) struct Exchange {
    /// The request body.
    pub(super) body: Value,
    /// Tool results in the conversation so far.
    pub(super) results: usize,
    /// The whole body as text, for matching what the conversation says.
    pub(super) text: String,
}

/// Decides the next move.
pub(super) type Brain = Arc<dyn Fn(&Exchange) -> Move + Send + Sync>;

/// A brain that plays `moves` in order, one per tool result in the conversation: the first
/// on a fresh conversation, the second once one tool result came back, …; the last again
/// after that.
pub(super) fn script(moves: Vec<Move>) -> Brain {
    Arc::new(move |exchange: &Exchange| {
        moves
            .get(exchange.results)
            .or(moves.last())
            .cloned()
            .unwrap_or(Move::Say("ok".to_owned()))
    })
}

struct State {
    brain: Brain,
    key: String,
    /// The agent's own turns, in order.
    turns: Vec<Value>,
    served: usize,
    /// Refuse every key from now on (the refused-key scenario).
    refuse: bool,
}

/// The running fake; dropping it stops it.
pub(super) struct KitModel {
    server: HttpServer,
    state: Arc<Mutex<State>>,
}

impl KitModel {
    /// Starts the fake with `brain`, accepting only `key`.
    pub(super) fn start(key: &str, brain: Brain) -> Self {
        let state = Arc::new(Mutex::new(State {
            brain,
            key: key.to_owned(),
            turns: Vec::new(),
            served: 0,
            refuse: false,
        }));
        let handler: Handler = {
            let state = Arc::clone(&state);
            Arc::new(move |request: &Request| answer(&state, request))
        };
        Self {
            server: HttpServer::start(handler),
            state,
        }
    }

    /// `http://127.0.0.1:<port>`.
    pub(super) fn url(&self) -> String {
        self.server.url()
    }

    /// Refuses every request's key from now on, as each backend refuses a wrong one.
    pub(super) fn refuse_every_key(&self) {
        self.lock().refuse = true;
    }

    /// The bodies of the agent's own turns so far.
    pub(super) fn turns(&self) -> Vec<Value> {
        self.lock().turns.clone()
    }

    /// The last message of each of the agent's turns, shortened: for failure messages.
    pub(super) fn transcript(&self) -> Vec<String> {
        self.turns()
            .iter()
            .map(|body| {
                let last = ["messages", "input", "contents"]
                    .iter()
                    .find_map(|key| body[*key].as_array().and_then(|items| items.last()))
                    .map(Value::to_string)
                    .unwrap_or_default();
                last.chars().take(400).collect()
            })
            .collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The wires, told apart by path.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Wire {
    Anthropic,
    OpenAiChat,
    Responses,
    Gemini,
}

fn wire_of(request: &Request) -> Option<Wire> {
    let path = request.path().trim_end_matches('/');
    if path.ends_with("/messages") {
        Some(Wire::Anthropic)
    } else if path.ends_with("/chat/completions") {
        Some(Wire::OpenAiChat)
    } else if path.ends_with("/responses") {
        Some(Wire::Responses)
    } else if path.starts_with("/v1beta/models/") && !path.ends_with(":countTokens") {
        Some(Wire::Gemini)
    } else {
        None
    }
}

fn answer(state: &Mutex<State>, request: &Request) -> Reply {
    let path = request.path().trim_end_matches('/').to_owned();
    if path.ends_with("/count_tokens") {
        return Reply::json(200, &json!({"input_tokens": request.body.len() / 4 + 1}));
    }
    if path.ends_with(":countTokens") {
        return Reply::json(200, &json!({"totalTokens": 12}));
    }
    if request.method == "GET" && path.ends_with("/models") {
        return Reply::json(
            200,
            &json!({"object": "list", "data": [], "has_more": false}),
        );
    }
    let Some(wire) = wire_of(request) else {
        return Reply::json(
            404,
            &json!({"error": {"message": format!("no route {}", request.target)}}),
        );
    };
    let mut state = state.lock().unwrap_or_else(PoisonError::into_inner);
    if state.refuse || presented_key(request).as_deref() != Some(state.key.as_str()) {
        return refusal(wire);
    }
    let body = request.json();
    state.served += 1;
    let number = state.served;
    // The agent's own turns offer tools (the kit gives a model API's agent tools of its
    // own); a CLI's side requests offer none.
    if !offers_tools(wire, &body) {
        return side_answer(wire, request, &body, number);
    }
    let exchange = Exchange {
        results: tool_results(wire, &body),
        text: body.to_string(),
        body: body.clone(),
    };
    state.turns.push(body);
    let next = (state.brain)(&exchange);
    drop(state);
    render(wire, next, request, number)
}

/// The key a request presents, however its wire carries it.
fn presented_key(request: &Request) -> Option<String> {
    let bearer = request
        .header("authorization")
        .and_then(|value| value.strip_prefix("Bearer "));
    let query = request
        .target
        .split_once('?')
        .and_then(|(_, query)| query.split('&').find_map(|pair| pair.strip_prefix("key=")));
    request
        .header("x-api-key")
        .or_else(|| request.header("x-goog-api-key"))
        .or(bearer)
        .or(query)
        .map(str::to_owned)
}

/// A wrong key refused as each backend refuses it (Google: 400 `API_KEY_INVALID`).
fn refusal(wire: Wire) -> Reply {
    match wire {
        Wire::Anthropic => Reply::json(
            401,
            &json!({"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}}),
        ),
        Wire::OpenAiChat | Wire::Responses => {
            fake_responses::error(401, "invalid_api_key", "Incorrect API key provided.")
        }
        Wire::Gemini => Reply::json(
            400,
            &json!({"error": {"code": 400, "message": "API key not valid. Please pass a valid API key.",
                "status": "INVALID_ARGUMENT",
                "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID"}]}}),
        ),
    }
}

fn offers_tools(wire: Wire, body: &Value) -> bool {
    match wire {
        Wire::Gemini => body.get("tools").is_some(),
        _ => body
            .get("tools")
            .and_then(Value::as_array)
            .is_some_and(|tools| !tools.is_empty()),
    }
}

/// Tool results in a request's conversation.
fn tool_results(wire: Wire, body: &Value) -> usize {
    let count = |items: Option<&Value>, is_result: &dyn Fn(&Value) -> bool| {
        items.and_then(Value::as_array).map_or(0, |items| {
            items.iter().filter(|item| is_result(item)).count()
        })
    };
    match wire {
        Wire::Anthropic => body["messages"].as_array().map_or(0, |messages| {
            messages
                .iter()
                .map(|message| {
                    count(message.get("content"), &|block| {
                        block["type"] == "tool_result"
                    })
                })
                .sum()
        }),
        Wire::OpenAiChat => count(body.get("messages"), &|message| message["role"] == "tool"),
        Wire::Responses => count(body.get("input"), &|item| {
            item["type"]
                .as_str()
                .is_some_and(|kind| kind.ends_with("call_output"))
        }),
        Wire::Gemini => body["contents"].as_array().map_or(0, |contents| {
            contents
                .iter()
                .map(|content| {
                    count(content.get("parts"), &|part| {
                        part.get("functionResponse").is_some()
                    })
                })
                .sum()
        }),
    }
}

/// A side request's answer: a value fitting the schema it asks for, else a short text.
fn side_answer(wire: Wire, request: &Request, body: &Value, number: usize) -> Reply {
    let schema = body.pointer("/generationConfig/responseJsonSchema");
    let text = schema.map_or_else(|| "ok".to_owned(), |s| fake_gemini::instance(s).to_string());
    render(wire, Move::Say(text), request, number)
}

fn render(wire: Wire, next: Move, request: &Request, number: usize) -> Reply {
    match wire {
        Wire::Anthropic => {
            let turn = match next {
                Move::Say(text) => AnthropicTurn::text(&text),
                Move::Call(name, input) => AnthropicTurn::tool_use(&name, input),
                Move::Hang => AnthropicTurn::Hang,
            };
            fake_anthropic::reply(&turn, request, number)
        }
        Wire::OpenAiChat => {
            let turn = match next {
                Move::Say(text) => OpenAiTurn::text(&text),
                Move::Call(name, input) => OpenAiTurn::tool_call(&name, input),
                Move::Hang => OpenAiTurn::Hang,
            };
            fake_openai::reply(&turn, request, number)
        }
        Wire::Responses => {
            let turn = match next {
                Move::Say(text) => ResponsesTurn::text(&text),
                Move::Call(name, input) if name == "exec_command" => {
                    ResponsesTurn::shell(input["cmd"].as_str().unwrap_or_default())
                }
                Move::Call(name, input) => ResponsesTurn::call(&name, input),
                Move::Hang => ResponsesTurn::Hang,
            };
            fake_responses::render(&turn, number)
        }
        Wire::Gemini => {
            let turn = match next {
                Move::Say(text) => GeminiTurn::text(&text),
                Move::Call(name, input) => GeminiTurn::call(&name, input),
                Move::Hang => GeminiTurn::Hang,
            };
            fake_gemini::render(turn, request.path())
        }
    }
}
