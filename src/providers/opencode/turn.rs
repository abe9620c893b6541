//! One turn of an OpenCode session: its event stream mapped onto [`AgentEvent`]s, the
//! permission requests it answers, and the reply, usage and context-window fraction read back
//! when the session goes idle.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

use super::NAME;
use super::bad_output;
use super::errors::classify;
use crate::ir::PermissionMode;
use crate::providers::todos::{self, PlanReport};
use crate::providers::{
    AgentEvent, AgentReply, AgentRequest, Approvals, EventSink, PermissionAsk, ProviderError,
    RetryPolicy, Usage, Verdict, tool_summary,
};

/// The failure OpenCode is retrying, from its message (the status it retries is not given).
fn retried_failure(message: &str) -> ProviderError {
    let lower = message.to_lowercase();
    if lower.contains("rate limit") || lower.contains("too many requests") || lower.contains("429")
    {
        ProviderError::rate_limited(NAME, None)
    } else if lower.contains("overload") {
        ProviderError::overloaded(NAME, None)
    } else {
        ProviderError::server(NAME, 0, message)
    }
}

/// `limit.context` by `provider/model`, as `GET /config/providers` reports them.
pub(super) type ContextLimits = HashMap<String, u64>;

/// The non-zero `limit.context` of every model in a `GET /config/providers` answer
/// (`{providers: [{id, models: {<id>: {limit: {context, output}}}}], default}`).
pub(super) fn context_limits(answer: &Value) -> ContextLimits {
    let providers = answer.get("providers").and_then(Value::as_array);
    providers
        .into_iter()
        .flatten()
        .filter_map(|provider| {
            let id = provider.get("id").and_then(Value::as_str)?;
            let models = provider.get("models").and_then(Value::as_object)?;
            Some((id, models))
        })
        .flat_map(|(provider_id, models)| {
            models.iter().filter_map(move |(model_id, model)| {
                let context = model.pointer("/limit/context").and_then(Value::as_u64)?;
                (context > 0).then(|| (format!("{provider_id}/{model_id}"), context))
            })
        })
        .collect()
}

/// Tokens an assistant message's model call was prompted with: fresh input plus cached
/// reads and writes (OpenCode counts the cache apart from `input`), as claude-code does.
fn prompt_tokens(info: &Value) -> u64 {
    ["/tokens/input", "/tokens/cache/read", "/tokens/cache/write"]
        .iter()
        .filter_map(|pointer| info.pointer(pointer).and_then(Value::as_u64))
        .sum()
}

/// The used fraction of a context window, `None` for an unknown (zero) window.
fn context_fraction(prompt_tokens: u64, window: u64) -> Option<f64> {
    #[allow(
        clippy::cast_precision_loss,
        reason = "token counts are far below 2^52"
    )]
    (window > 0).then(|| (prompt_tokens as f64 / window as f64).clamp(0.0, 1.0))
}

/// What to do about a permission request of the session.
#[derive(Debug, PartialEq)]
pub(super) enum PermissionReply {
    /// Reply to request `id` (a refusal may say why).
    Answer {
        id: String,
        granted: bool,
        message: Option<String>,
    },
    /// Nobody has decided request `id` (`permission="ask"`): stop the turn for a person.
    Pause { id: String, ask: PermissionAsk },
}

/// One turn's view of the event stream.
#[derive(Debug)]
pub(super) struct Turn {
    session_id: String,
    permission: Option<PermissionMode>,
    granted_tools: HashSet<String>,
    /// Under `permission="ask"`: what a person decided.
    approvals: Approvals,
    /// Message id → role.
    roles: HashMap<String, String>,
    /// Assistant message ids of this turn, in order.
    assistant: Vec<String>,
    /// Part id → part type.
    part_types: HashMap<String, String>,
    /// Tool call ids already started / finished.
    started: HashSet<String>,
    finished: HashSet<String>,
    pub(super) error: Option<ProviderError>,
    /// The session was seen working on this turn (an idle before that is stale).
    busy: bool,
    pub(super) idle: bool,
    /// The model the turn ran on: the request's, then what its assistant messages name.
    pub(super) model: Option<(String, String)>,
    /// Prompt tokens of the turn's latest model call that reported any.
    pub(super) last_call: Option<u64>,
    /// OpenCode retries a failed model call by itself (`session.status` `retry`): at most
    /// this many times, the node's retry policy, …
    retries_allowed: u32,
    /// … and never to a time past the node's deadline.
    deadline: Option<SystemTime>,
    /// Set when OpenCode's retrying goes past either: the turn stops, and the session is
    /// aborted.
    pub(super) gave_up: Option<ProviderError>,
    /// The plans reported (`todo.updated`).
    plans: PlanReport,
}

impl Turn {
    pub(super) fn new(
        session_id: &str,
        request: &AgentRequest,
        model: Option<(String, String)>,
    ) -> Self {
        Self {
            session_id: session_id.to_owned(),
            permission: request.grants.permission,
            granted_tools: request
                .grants
                .tools
                .iter()
                .map(|tool| tool.name.to_lowercase())
                .collect(),
            approvals: request.grants.approvals.clone(),
            roles: HashMap::new(),
            assistant: Vec::new(),
            part_types: HashMap::new(),
            started: HashSet::new(),
            finished: HashSet::new(),
            error: None,
            busy: false,
            idle: false,
            model,
            last_call: None,
            retries_allowed: request
                .limits
                .retry
                .as_ref()
                .map_or(RetryPolicy::model_requests().attempts, |policy| {
                    policy.attempts
                })
                .saturating_sub(1),
            deadline: request
                .limits
                .timeout
                .map(|timeout| SystemTime::now() + timeout),
            gave_up: None,
            plans: PlanReport::default(),
        }
    }

    /// Handles one event; returns a permission request to answer, or to pause at.
    pub(super) fn handle(
        &mut self,
        payload: &Value,
        events: &dyn EventSink,
    ) -> Option<PermissionReply> {
        let kind = payload.get("type").and_then(Value::as_str)?;
        let properties = payload.get("properties")?;
        let session = ["/sessionID", "/info/sessionID", "/part/sessionID"]
            .iter()
            .find_map(|pointer| properties.pointer(pointer).and_then(Value::as_str));
        if session != Some(self.session_id.as_str()) {
            return None;
        }
        match kind {
            "message.updated" => {
                let info = properties.get("info")?;
                let id = info.get("id").and_then(Value::as_str)?.to_owned();
                let role = info.get("role").and_then(Value::as_str).unwrap_or_default();
                if role == "assistant" && !self.assistant.contains(&id) {
                    self.assistant.push(id.clone());
                    self.busy = true;
                }
                if role == "assistant" {
                    self.note_model_call(info);
                }
                if role == "assistant"
                    && let Some(error) = info.get("error")
                {
                    self.error = Some(classify(error));
                }
                self.roles.insert(id, role.to_owned());
            }
            "message.part.updated" => self.part(properties, events),
            "message.part.delta" => {
                let message = properties.get("messageID").and_then(Value::as_str)?;
                if self.roles.get(message).map(String::as_str) == Some("user") {
                    return None;
                }
                let part = properties
                    .get("partID")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let text = properties.get("delta").and_then(Value::as_str)?.to_owned();
                match self.part_types.get(part).map(String::as_str) {
                    Some("reasoning") => events.emit(AgentEvent::ThinkingDelta { text }),
                    Some("text") | None => events.emit(AgentEvent::TextDelta { text }),
                    Some(_) => {}
                }
            }
            "permission.asked" | "permission.updated" => {
                let id = properties.get("id").and_then(Value::as_str)?.to_owned();
                let permission = properties
                    .get("permission")
                    .or_else(|| properties.get("type"))
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned();
                let mut refusal = None;
                let granted = match self.permission {
                    Some(PermissionMode::Bypass) => true,
                    Some(PermissionMode::Plan) => false,
                    Some(PermissionMode::AcceptEdits) => {
                        permission == "edit" || self.granted_tools.contains(&permission)
                    }
                    Some(PermissionMode::Default) | None => {
                        self.granted_tools.contains(&permission)
                    }
                    Some(PermissionMode::Ask) if self.granted_tools.contains(&permission) => true,
                    Some(PermissionMode::Ask) => {
                        let ask = PermissionAsk {
                            tool: permission.clone(),
                            input: json!({
                                "patterns": properties.get("patterns").cloned().unwrap_or(Value::Null)
                            }),
                        };
                        match self.approvals.decide(&ask) {
                            Verdict::Allow => true,
                            Verdict::Deny(message) => {
                                refusal = Some(message);
                                false
                            }
                            Verdict::Ask => return Some(PermissionReply::Pause { id, ask }),
                        }
                    }
                };
                events.emit(AgentEvent::PermissionRequest {
                    tool: permission,
                    granted,
                });
                return Some(PermissionReply::Answer {
                    id,
                    granted,
                    message: refusal,
                });
            }
            // The session's list as the server stored it, once a `todowrite` call ran (its
            // tool part started before): the plan, not the call's input.
            "todo.updated" => {
                if let Some(plan) = properties.get("todos").and_then(todos::from_todo_list) {
                    self.plans.report(plan, events);
                }
            }
            "session.error" => {
                if let Some(error) = properties.get("error") {
                    self.error = Some(classify(error));
                }
            }
            "session.status" => match properties.pointer("/status/type").and_then(Value::as_str) {
                Some("idle") => self.idle = self.busy,
                Some("retry") => {
                    self.busy = true;
                    self.gave_up = properties
                        .get("status")
                        .and_then(|status| self.retry_bound(status));
                }
                Some(_) => self.busy = true,
                None => {}
            },
            "session.idle" => self.idle = self.busy,
            _ => {}
        }
        None
    }

    /// Whether OpenCode's next retry (`{attempt, message, next}`, `next` in epoch
    /// milliseconds) goes past what the node allows: more retries than its policy, or a
    /// wait past its deadline.
    fn retry_bound(&self, status: &Value) -> Option<ProviderError> {
        let attempt = status.get("attempt").and_then(Value::as_u64).unwrap_or(1);
        let message = status
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("the model call failed");
        let failure = retried_failure(message);
        if attempt > u64::from(self.retries_allowed) {
            return Some(ProviderError::Exhausted {
                attempts: u32::try_from(attempt).unwrap_or(u32::MAX),
                last: Box::new(failure),
            });
        }
        let next = status
            .get("next")
            .and_then(Value::as_u64)
            .map(|millis| UNIX_EPOCH + Duration::from_millis(millis))?;
        let deadline = self.deadline?;
        (next > deadline).then(|| ProviderError::WaitTooLong {
            adapter: NAME,
            class: failure.class(),
            asked: next
                .duration_since(SystemTime::now())
                .unwrap_or(Duration::ZERO),
            limit_why: "the node's timeout".to_owned(),
        })
    }

    /// Remembers the model and prompt size of an assistant message that reports tokens. A
    /// message starts with zero counts, so those updates are skipped; the last one seen is the
    /// last model call, whose prompt is what currently fills the context window.
    fn note_model_call(&mut self, info: &Value) {
        let tokens = prompt_tokens(info);
        if tokens == 0 {
            return;
        }
        self.last_call = Some(tokens);
        let field = |name: &str| info.get(name).and_then(Value::as_str).map(str::to_owned);
        if let (Some(provider_id), Some(model_id)) = (field("providerID"), field("modelID")) {
            self.model = Some((provider_id, model_id));
        }
    }

    fn part(&mut self, properties: &Value, events: &dyn EventSink) {
        let Some(part) = properties.get("part") else {
            return;
        };
        let message = part
            .get("messageID")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if self.roles.get(message).map(String::as_str) == Some("user") {
            return;
        }
        let kind = part.get("type").and_then(Value::as_str).unwrap_or_default();
        if let Some(id) = part.get("id").and_then(Value::as_str) {
            self.part_types.insert(id.to_owned(), kind.to_owned());
        }
        let delta = properties
            .get("delta")
            .and_then(Value::as_str)
            .map(str::to_owned);
        match kind {
            "text" => {
                if let Some(text) = delta {
                    events.emit(AgentEvent::TextDelta { text });
                }
            }
            "reasoning" => {
                if let Some(text) = delta {
                    events.emit(AgentEvent::ThinkingDelta { text });
                }
            }
            "tool" => {
                let id = part
                    .get("callID")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned();
                let name = part
                    .get("tool")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned();
                let state = part.get("state").unwrap_or(&Value::Null);
                let status = state
                    .get("status")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                if matches!(status, "running" | "completed" | "error")
                    && self.started.insert(id.clone())
                {
                    events.emit(AgentEvent::ToolStart {
                        id: id.clone(),
                        name: name.clone(),
                        input: state.get("input").cloned().unwrap_or(Value::Null),
                    });
                }
                if matches!(status, "completed" | "error") && self.finished.insert(id.clone()) {
                    let is_error = status == "error";
                    let text = if is_error {
                        state.get("error")
                    } else {
                        state
                            .get("title")
                            .filter(|t| t.as_str().is_some_and(|t| !t.is_empty()))
                            .or_else(|| state.get("output"))
                    };
                    events.emit(AgentEvent::ToolComplete {
                        id,
                        name,
                        summary: tool_summary(text.and_then(Value::as_str).unwrap_or_default()),
                        is_error,
                    });
                }
            }
            "subtask" => {
                if let Some(agent) = part.get("agent").and_then(Value::as_str) {
                    events.emit(AgentEvent::SubagentStart {
                        name: agent.to_owned(),
                    });
                }
            }
            _ => {}
        }
    }

    /// Builds the reply from the session's messages (`GET /session/{id}/message`); with the
    /// model's context window known, also reports how full the last model call left it.
    pub(super) fn finish(
        self,
        messages: &Value,
        context_limit: Option<u64>,
        events: &dyn EventSink,
    ) -> Result<AgentReply, ProviderError> {
        let messages = messages
            .as_array()
            .ok_or_else(|| bad_output("`GET /session/{id}/message` did not return a list"))?;
        let mine: Vec<&Value> = messages
            .iter()
            .filter(|message| {
                message
                    .pointer("/info/id")
                    .and_then(Value::as_str)
                    .is_some_and(|id| self.assistant.iter().any(|mine| mine == id))
            })
            .collect();
        let mut usage = Usage::default();
        let mut cost = 0.0;
        let mut text = String::new();
        for message in &mine {
            let info = message.get("info").unwrap_or(&Value::Null);
            let tokens = info.get("tokens").unwrap_or(&Value::Null);
            let count =
                |pointer: &str| tokens.pointer(pointer).and_then(Value::as_u64).unwrap_or(0);
            usage.add(Usage {
                input_tokens: count("/input"),
                output_tokens: count("/output") + count("/reasoning"),
                cache_read_tokens: count("/cache/read"),
                cache_write_tokens: count("/cache/write"),
            });
            cost += info.get("cost").and_then(Value::as_f64).unwrap_or(0.0);
            let parts: Vec<&str> = message
                .get("parts")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter(|part| part.get("type").and_then(Value::as_str) == Some("text"))
                .filter(|part| part.get("synthetic").and_then(Value::as_bool) != Some(true))
                .filter_map(|part| part.get("text").and_then(Value::as_str))
                .collect();
            if !parts.is_empty() {
                text = parts.concat();
                events.emit(AgentEvent::MessageComplete { text: text.clone() });
            }
        }
        if mine.is_empty() {
            return Err(bad_output("the turn ended without an assistant message"));
        }
        events.emit(AgentEvent::Usage {
            usage,
            cost_usd: Some(cost),
        });
        if let Some(fraction) = self
            .last_call
            .zip(context_limit)
            .and_then(|(tokens, window)| context_fraction(tokens, window))
        {
            events.emit(AgentEvent::ContextWindow { fraction });
        }
        events.emit(AgentEvent::SessionEnd {
            session_id: Some(self.session_id.clone()),
        });
        Ok(AgentReply {
            text,
            session_id: Some(self.session_id),
            usage,
            cost_usd: Some(cost),
            turns: u32::try_from(mine.len()).unwrap_or(u32::MAX),
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use std::sync::Mutex;

    use super::super::split_model;
    use super::*;
    use crate::providers::{Grants, Limits};

    /// The replay transcript of protocols.md §3, plus a tool part and the newer delta form.
    const EVENTS: &str = r#"{"type":"server.connected","properties":{}}
{"type":"session.status","properties":{"sessionID":"ses_A","status":{"type":"idle"}}}
{"type":"session.status","properties":{"sessionID":"ses_A","status":{"type":"busy"}}}
{"type":"message.updated","properties":{"info":{"id":"msg_U","sessionID":"ses_A","role":"user"}}}
{"type":"message.part.updated","properties":{"part":{"id":"prt_1","sessionID":"ses_A","messageID":"msg_U","type":"text","text":"Say hi"}}}
{"type":"message.updated","properties":{"info":{"id":"msg_A","sessionID":"ses_A","role":"assistant","providerID":"anthropic","modelID":"claude-sonnet-4-5","tokens":{"input":0,"output":0,"reasoning":0,"cache":{"read":0,"write":0}}}}}
{"type":"message.part.updated","properties":{"part":{"id":"prt_t","sessionID":"ses_A","messageID":"msg_A","type":"tool","callID":"c1","tool":"edit","state":{"status":"running","input":{"filePath":"/w/a"}}}}}
{"type":"message.part.updated","properties":{"part":{"id":"prt_t","sessionID":"ses_A","messageID":"msg_A","type":"tool","callID":"c1","tool":"edit","state":{"status":"completed","input":{"filePath":"/w/a"},"output":"done","title":"a"}}}}
{"type":"message.part.updated","properties":{"part":{"id":"prt_3","sessionID":"ses_A","messageID":"msg_A","type":"text","text":"Hi"},"delta":"Hi"}}
{"type":"message.part.delta","properties":{"sessionID":"ses_A","messageID":"msg_A","partID":"prt_3","field":"text","delta":" there."}}
{"type":"message.part.delta","properties":{"sessionID":"ses_B","messageID":"msg_X","partID":"prt_9","field":"text","delta":"other session"}}
{"type":"message.updated","properties":{"info":{"id":"msg_A","sessionID":"ses_A","role":"assistant","providerID":"anthropic","modelID":"claude-sonnet-4-5","tokens":{"total":20,"input":10,"output":4,"reasoning":1,"cache":{"read":2,"write":3}},"finish":"stop","time":{"created":1,"completed":2}}}}
{"type":"permission.asked","properties":{"id":"per_1","sessionID":"ses_A","permission":"bash","patterns":["ls"],"metadata":{},"always":[]}}
{"type":"session.status","properties":{"sessionID":"ses_A","status":{"type":"idle"}}}"#;

    #[test]
    fn maps_session_events_and_answers_permissions() {
        let events = Mutex::new(Vec::new());
        let sink = |event: AgentEvent| events.lock().expect("not poisoned").push(event);
        let request = AgentRequest {
            grants: Grants {
                permission: Some(PermissionMode::AcceptEdits),
                ..Grants::default()
            },
            ..AgentRequest::default()
        };
        let mut turn = Turn::new("ses_A", &request, None);
        let mut answers = Vec::new();
        for (index, line) in EVENTS.lines().enumerate() {
            let payload: Value = serde_json::from_str(line).expect("valid");
            answers.extend(turn.handle(&payload, &sink));
            assert!(
                !turn.idle || index == EVENTS.lines().count() - 1,
                "stale idle at line {index}"
            );
        }
        assert!(turn.idle);
        assert_eq!(
            answers,
            [PermissionReply::Answer {
                id: "per_1".to_owned(),
                granted: false,
                message: None
            }]
        );
        let messages = json!([
            {"info": {"id": "msg_U", "role": "user"}, "parts": [{"type": "text", "text": "Say hi"}]},
            {"info": {"id": "msg_A", "role": "assistant", "cost": 0.5,
                      "tokens": {"input": 10, "output": 4, "reasoning": 1, "cache": {"read": 2, "write": 3}}},
             "parts": [{"type": "step-start"}, {"type": "text", "text": "Hi there."}]}
        ]);
        let reply = turn.finish(&messages, Some(150), &sink).expect("a reply");
        assert_eq!(reply.text, "Hi there.");
        assert_eq!(reply.session_id.as_deref(), Some("ses_A"));
        assert_eq!(
            reply.usage,
            Usage {
                input_tokens: 10,
                output_tokens: 5,
                cache_read_tokens: 2,
                cache_write_tokens: 3
            }
        );
        let events = events.into_inner().expect("not poisoned");
        let texts: Vec<&str> = events
            .iter()
            .filter_map(|event| match event {
                AgentEvent::TextDelta { text } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(texts, ["Hi", " there."]);
        assert!(events.contains(&AgentEvent::ToolComplete {
            id: "c1".to_owned(),
            name: "edit".to_owned(),
            summary: "a".to_owned(),
            is_error: false,
        }));
        assert!(events.contains(&AgentEvent::PermissionRequest {
            tool: "bash".to_owned(),
            granted: false,
        }));
        // Prompt tokens 10 + 2 + 3 of a 150-token window.
        assert!(events.contains(&AgentEvent::ContextWindow { fraction: 0.1 }));
    }

    #[test]
    fn a_todowrite_call_is_a_tool_call_and_the_sessions_list_the_plan() {
        use crate::providers::{Todo, TodoStatus};
        let lines = r#"{"type":"message.updated","properties":{"info":{"id":"msg_A","sessionID":"ses_A","role":"assistant"}}}
{"type":"message.part.updated","properties":{"part":{"id":"prt_t","sessionID":"ses_A","messageID":"msg_A","type":"tool","callID":"c1","tool":"todowrite","state":{"status":"running","input":{"todos":[{"content":"Sketch the API","status":"in_progress","priority":"high"}]}}}}}
{"type":"todo.updated","properties":{"sessionID":"ses_A","todos":[{"content":"Sketch the API","status":"in_progress","priority":"high"},{"content":"Port the old tests","status":"cancelled","priority":"low"}]}}
{"type":"todo.updated","properties":{"sessionID":"ses_B","todos":[{"content":"Another session's","status":"pending","priority":"low"}]}}
{"type":"message.part.updated","properties":{"part":{"id":"prt_t","sessionID":"ses_A","messageID":"msg_A","type":"tool","callID":"c1","tool":"todowrite","state":{"status":"completed","input":{},"output":"[]","title":"1 todos"}}}}"#;
        let events = Mutex::new(Vec::new());
        let sink = |event: AgentEvent| events.lock().expect("not poisoned").push(event);
        let mut turn = Turn::new("ses_A", &AgentRequest::default(), None);
        for line in lines.lines() {
            turn.handle(&serde_json::from_str(line).expect("valid"), &sink);
        }
        let events = events.into_inner().expect("not poisoned");
        let todo = |content: &str, status| Todo {
            content: content.to_owned(),
            status,
            active_form: None,
        };
        assert!(matches!(&events[0], AgentEvent::ToolStart { name, .. } if name == "todowrite"));
        assert_eq!(
            events[1],
            AgentEvent::Plan {
                todos: vec![
                    todo("Sketch the API", TodoStatus::InProgress),
                    todo("Port the old tests", TodoStatus::Cancelled),
                ]
            }
        );
        assert!(matches!(&events[2], AgentEvent::ToolComplete { name, .. } if name == "todowrite"));
        assert_eq!(events.len(), 3, "{events:?}");
    }

    /// An assistant `message.updated` as the pinned CLI sends it once a model call finished.
    fn assistant_update(id: &str, input: u64, cache_read: u64, cache_write: u64) -> Value {
        json!({"type": "message.updated", "properties": {"info": {
            "id": id, "sessionID": "ses_A", "role": "assistant",
            "providerID": "anthropic", "modelID": "claude-sonnet-4-5",
            "tokens": {"input": input, "output": 7, "reasoning": 0,
                       "cache": {"read": cache_read, "write": cache_write}},
            "time": {"created": 1, "completed": 2}}}})
    }

    /// The context-window events of a turn whose assistant messages report these
    /// (input, cache read, cache write) counts, finished against `limit`.
    fn context_events(calls: &[(u64, u64, u64)], limit: Option<u64>) -> Vec<f64> {
        let events = Mutex::new(Vec::new());
        let sink = |event: AgentEvent| events.lock().expect("not poisoned").push(event);
        let mut turn = Turn::new("ses_A", &AgentRequest::default(), None);
        let mut messages = Vec::new();
        for (index, (input, read, write)) in calls.iter().enumerate() {
            let update = assistant_update(&format!("msg_{index}"), *input, *read, *write);
            turn.handle(&update, &sink);
            messages.push(json!({"info": update["properties"]["info"], "parts": []}));
        }
        turn.finish(&Value::Array(messages), limit, &sink)
            .expect("a reply");
        events
            .into_inner()
            .expect("not poisoned")
            .into_iter()
            .filter_map(|event| match event {
                AgentEvent::ContextWindow { fraction } => Some(fraction),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn asking_pauses_at_an_undecided_request_and_obeys_an_answered_one() {
        let asked = EVENTS
            .lines()
            .find(|line| line.contains("permission.asked"))
            .expect("a permission event");
        let payload: Value = serde_json::from_str(asked).expect("valid");
        let sink = |_: AgentEvent| {};
        let ask = PermissionAsk {
            tool: "bash".to_owned(),
            input: json!({"patterns": ["ls"]}),
        };
        let mut request = AgentRequest {
            grants: Grants {
                permission: Some(PermissionMode::Ask),
                ..Grants::default()
            },
            ..AgentRequest::default()
        };
        let mut turn = Turn::new("ses_A", &request, None);
        assert_eq!(
            turn.handle(&payload, &sink),
            Some(PermissionReply::Pause {
                id: "per_1".to_owned(),
                ask: ask.clone()
            })
        );
        request.grants.approvals.answered = Some(crate::providers::Answered {
            ask,
            answer: crate::providers::PermissionAnswer::Deny,
        });
        let mut turn = Turn::new("ses_A", &request, None);
        let Some(PermissionReply::Answer {
            granted: false,
            message: Some(message),
            ..
        }) = turn.handle(&payload, &sink)
        else {
            panic!("refused with a reason");
        };
        assert!(message.contains("refused"), "{message}");
    }

    #[test]
    fn the_context_window_is_the_last_calls_prompt_over_the_limit() {
        // Two model calls: the second prompt (50 + 1950 + 0) is what fills the window now;
        // summing the calls would double-count the history each one re-sends.
        assert_eq!(
            context_events(&[(100, 900, 0), (50, 1950, 0)], Some(8000)),
            [0.25]
        );
        assert_eq!(context_events(&[(10, 0, 3000)], Some(2000)), [1.0]);
    }

    #[test]
    fn no_context_window_without_a_limit_or_a_counted_call() {
        assert!(context_events(&[(100, 900, 0)], None).is_empty());
        assert!(context_events(&[(0, 0, 0)], Some(8000)).is_empty());
        assert_eq!(context_fraction(100, 0), None);
    }

    #[test]
    fn the_model_comes_from_the_assistant_message() {
        let sink = |_: AgentEvent| {};
        let model = split_model(Some("fake/requested")).expect("valid");
        let mut turn = Turn::new("ses_A", &AgentRequest::default(), model.clone());
        turn.handle(&assistant_update("msg_0", 0, 0, 0), &sink);
        assert_eq!(
            turn.model, model,
            "a message without counts changes nothing"
        );
        turn.handle(&assistant_update("msg_0", 12, 0, 0), &sink);
        assert_eq!(
            turn.model,
            Some(("anthropic".to_owned(), "claude-sonnet-4-5".to_owned()))
        );
        assert_eq!(turn.last_call, Some(12));
    }

    #[test]
    fn context_limits_are_read_from_config_providers() {
        // Trimmed from the pinned CLI's answer, with a config override of one model's limit.
        let answer = json!({
            "providers": [
                {"id": "opencode", "name": "OpenCode", "source": "custom", "env": [], "options": {},
                 "models": {"big-pickle": {"id": "big-pickle", "providerID": "opencode",
                     "limit": {"context": 200000, "input": 160000, "output": 32000}}}},
                {"id": "anthropic", "name": "Anthropic", "source": "config", "env": [], "options": {},
                 "models": {
                     "claude-sonnet-4-5": {"id": "claude-sonnet-4-5", "providerID": "anthropic",
                         "limit": {"context": 2000, "output": 500}},
                     "unsized": {"id": "unsized", "providerID": "anthropic",
                         "limit": {"context": 0, "output": 0}}}}
            ],
            "default": {"opencode": "big-pickle", "anthropic": "claude-sonnet-4-6"}
        });
        let limits = context_limits(&answer);
        assert_eq!(limits.get("anthropic/claude-sonnet-4-5"), Some(&2000));
        assert_eq!(limits.get("opencode/big-pickle"), Some(&200_000));
        assert_eq!(
            limits.get("anthropic/unsized"),
            None,
            "a zero limit is unknown"
        );
        assert_eq!(limits.len(), 2);
        assert!(context_limits(&json!({"name": "NotFoundError"})).is_empty());
    }

    fn retry_status(attempt: u64, next_in: Duration) -> Value {
        let next = (SystemTime::now() + next_in)
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_millis();
        json!({"type": "session.status", "properties": {"sessionID": "ses_A", "status":
            {"type": "retry", "attempt": attempt, "message": "Rate limited: too many requests", "next": next}}})
    }

    #[test]
    fn opencode_retries_stop_at_the_node_policy_and_deadline() {
        let sink = |_: AgentEvent| {};
        let mut turn = Turn::new("ses_A", &AgentRequest::default(), None);
        turn.handle(&retry_status(1, Duration::from_secs(1)), &sink);
        turn.handle(&retry_status(2, Duration::from_secs(2)), &sink);
        assert!(turn.gave_up.is_none(), "two retries by default");
        turn.handle(&retry_status(3, Duration::from_secs(4)), &sink);
        let Some(ProviderError::Exhausted { attempts: 3, last }) = turn.gave_up.take() else {
            panic!("a third retry is past the default policy");
        };
        assert_eq!(last.class().name(), "rate-limit");

        let once = AgentRequest {
            limits: Limits {
                retry: Some(RetryPolicy {
                    attempts: 1,
                    ..RetryPolicy::model_requests()
                }),
                ..Limits::default()
            },
            ..AgentRequest::default()
        };
        let mut turn = Turn::new("ses_A", &once, None);
        turn.handle(&retry_status(1, Duration::from_secs(1)), &sink);
        assert!(matches!(
            turn.gave_up,
            Some(ProviderError::Exhausted { .. })
        ));

        let soon = AgentRequest {
            limits: Limits {
                timeout: Some(Duration::from_secs(5)),
                ..Limits::default()
            },
            ..AgentRequest::default()
        };
        let mut turn = Turn::new("ses_A", &soon, None);
        turn.handle(&retry_status(1, Duration::from_secs(60)), &sink);
        assert!(
            matches!(turn.gave_up, Some(ProviderError::WaitTooLong { .. })),
            "{:?}",
            turn.gave_up
        );
    }
}
