//! The CLI's stream-json lines mapped onto [`AgentEvent`]s, the `result` line's token counts,
//! and the classification of a failed call.

use std::collections::HashMap;

use serde_json::Value;

use super::NAME;
use crate::providers::agent_cli::Credentials;
use crate::providers::todos::{self, PlanReport};
use crate::providers::{AgentEvent, EventSink, ProviderError, Usage, tool_summary};

/// Token counts from a `result` line's `stats`: `input` is the prompt without its cached part.
/// (The stats carry no thinking tokens.)
pub(super) fn usage_of(stats: &Value) -> Usage {
    let count = |field: &str| stats.get(field).and_then(Value::as_u64).unwrap_or(0);
    Usage {
        input_tokens: count("input"),
        output_tokens: count("output_tokens"),
        cache_read_tokens: count("cached"),
        cache_write_tokens: 0,
    }
}

/// What the stream-json lines have said so far.
#[derive(Debug, Default)]
pub(super) struct Stream {
    pub(super) session_id: Option<String>,
    /// Tool names by call id (`tool_result` carries only the id).
    tools: HashMap<String, String>,
    /// The text of the model message being streamed.
    current: String,
    /// The last complete model message: the reply.
    pub(super) last_text: String,
    /// Model turns: the first output, and each after a round of tool results.
    pub(super) turns: u32,
    in_turn: bool,
    /// The plans reported (from `write_todos` calls).
    plans: PlanReport,
    pub(super) result: Option<Value>,
}

impl Stream {
    pub(super) fn handle(&mut self, line: &Value, events: &dyn EventSink) {
        let kind = line.get("type").and_then(Value::as_str).unwrap_or_default();
        let text = |field: &str| {
            line.get(field)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        match kind {
            "init" => {
                let session_id = text("session_id");
                self.session_id = Some(session_id.clone()).filter(|id| !id.is_empty());
                events.emit(AgentEvent::SessionStart {
                    session_id: self.session_id.clone(),
                    model: Some(text("model")).filter(|model| !model.is_empty()),
                });
            }
            "message" if line.get("role").and_then(Value::as_str) == Some("assistant") => {
                self.start_turn();
                let delta = text("content");
                if !delta.is_empty() {
                    self.current.push_str(&delta);
                    events.emit(AgentEvent::TextDelta { text: delta });
                }
            }
            "tool_use" => {
                self.start_turn();
                self.finish_message(events);
                let id = text("tool_id");
                let name = text("tool_name");
                let input = line.get("parameters").cloned().unwrap_or(Value::Null);
                let plan = (name == "write_todos")
                    .then(|| input.get("todos").and_then(todos::from_described_list))
                    .flatten();
                events.emit(AgentEvent::ToolStart {
                    id: id.clone(),
                    name: name.clone(),
                    input,
                });
                if let Some(plan) = plan {
                    self.plans.report(plan, events);
                }
                self.tools.insert(id, name);
            }
            "tool_result" => {
                self.in_turn = false;
                let id = text("tool_id");
                let is_error = line.get("status").and_then(Value::as_str) != Some("success");
                let detail = if is_error {
                    line.pointer("/error/message").or(line.get("output"))
                } else {
                    line.get("output")
                };
                events.emit(AgentEvent::ToolComplete {
                    name: self.tools.get(&id).cloned().unwrap_or_default(),
                    id,
                    summary: tool_summary(detail.and_then(Value::as_str).unwrap_or_default()),
                    is_error,
                });
            }
            "result" => {
                self.finish_message(events);
                self.result = Some(line.clone());
            }
            _ => {}
        }
    }

    fn start_turn(&mut self) {
        if !self.in_turn {
            self.in_turn = true;
            self.turns += 1;
        }
    }

    /// Ends the message being streamed, if any: it is the reply unless another follows.
    fn finish_message(&mut self, events: &dyn EventSink) {
        if self.current.is_empty() {
            return;
        }
        let text = std::mem::take(&mut self.current);
        self.last_text.clone_from(&text);
        events.emit(AgentEvent::MessageComplete { text });
    }
}

/// Classifies a failed `result` line. The CLI reports an API failure as
/// `[API Error: <the server's JSON error body>]` with `type` `"unknown"`, so the HTTP status
/// is read from that body's `error.code`.
pub(super) fn classify(result: &Value, credentials: &Credentials) -> ProviderError {
    let message = result
        .pointer("/error/message")
        .and_then(Value::as_str)
        .unwrap_or("the CLI reported an error without a message")
        .to_owned();
    let kind = result
        .pointer("/error/type")
        .and_then(Value::as_str)
        .unwrap_or_default();
    match api_status(&message) {
        Some(status) => credentials.status_error(status, &message),
        None if kind.is_empty() || kind == "unknown" => ProviderError::rejected(NAME, 0, message),
        None => ProviderError::rejected(NAME, 0, format!("{kind}: {message}")),
    }
}

/// The HTTP status in an `[API Error: {…}]` message: the JSON body's `error.code`.
fn api_status(message: &str) -> Option<u16> {
    let start = message.find('{')?;
    let end = message.rfind('}')?;
    let body: Value = serde_json::from_str(message.get(start..=end)?).ok()?;
    let code = body.pointer("/error/code").or_else(|| body.get("code"))?;
    u16::try_from(code.as_u64()?).ok()
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use serde_json::json;

    use super::*;

    /// Lines as the pinned CLI prints them (timestamps and stats trimmed).
    const TRANSCRIPT: &str = r#"{"type":"init","session_id":"s1","model":"gemini-2.5-flash"}
{"type":"message","role":"user","content":"edit it"}
{"type":"message","role":"assistant","content":"Writing.","delta":true}
{"type":"tool_use","tool_name":"write_file","tool_id":"t0","parameters":{"file_path":"a.txt","content":"x"}}
{"type":"tool_result","tool_id":"t0","status":"success"}
{"type":"message","role":"assistant","content":"All ","delta":true}
{"type":"message","role":"assistant","content":"done.","delta":true}
{"type":"result","status":"success","stats":{"total_tokens":30,"input_tokens":24,"output_tokens":6,"cached":4,"input":20,"tool_calls":1}}"#;

    #[test]
    fn maps_stream_json_events() {
        let events = Mutex::new(Vec::new());
        let sink = |event: AgentEvent| events.lock().expect("not poisoned").push(event);
        let mut stream = Stream::default();
        for line in TRANSCRIPT.lines() {
            stream.handle(&serde_json::from_str(line).expect("valid"), &sink);
        }
        assert_eq!(stream.last_text, "All done.");
        assert_eq!(stream.turns, 2);
        assert_eq!(stream.session_id.as_deref(), Some("s1"));
        let stats = &stream.result.as_ref().expect("a result")["stats"];
        assert_eq!(
            usage_of(stats),
            Usage {
                input_tokens: 20,
                output_tokens: 6,
                cache_read_tokens: 4,
                cache_write_tokens: 0
            }
        );
        let text = |text: &str| text.to_owned();
        assert_eq!(
            events.into_inner().expect("not poisoned"),
            [
                AgentEvent::SessionStart {
                    session_id: Some(text("s1")),
                    model: Some(text("gemini-2.5-flash")),
                },
                AgentEvent::TextDelta {
                    text: text("Writing.")
                },
                AgentEvent::MessageComplete {
                    text: text("Writing.")
                },
                AgentEvent::ToolStart {
                    id: text("t0"),
                    name: text("write_file"),
                    input: json!({"file_path": "a.txt", "content": "x"}),
                },
                AgentEvent::ToolComplete {
                    id: text("t0"),
                    name: text("write_file"),
                    summary: String::new(),
                    is_error: false,
                },
                AgentEvent::TextDelta { text: text("All ") },
                AgentEvent::TextDelta {
                    text: text("done.")
                },
                AgentEvent::MessageComplete {
                    text: text("All done.")
                },
            ]
        );
    }

    #[test]
    fn a_write_todos_call_is_a_tool_call_and_the_plan() {
        use crate::providers::{Todo, TodoStatus};
        let transcript = r#"{"type":"init","session_id":"s1","model":"gemini-2.5-flash"}
{"type":"tool_use","tool_name":"write_todos","tool_id":"t0","parameters":{"todos":[{"description":"Find the loader","status":"completed"},{"description":"Patch it","status":"in_progress"},{"description":"Wait for review","status":"blocked"}]}}
{"type":"tool_result","tool_id":"t0","status":"success","output":"Successfully updated the todo list."}
{"type":"message","role":"assistant","content":"Planned.","delta":true}
{"type":"result","status":"success","stats":{"input":20,"output_tokens":6}}"#;
        let events = Mutex::new(Vec::new());
        let sink = |event: AgentEvent| events.lock().expect("not poisoned").push(event);
        let mut stream = Stream::default();
        for line in transcript.lines() {
            stream.handle(&serde_json::from_str(line).expect("valid"), &sink);
        }
        let events = events.into_inner().expect("not poisoned");
        let todo = |content: &str, status| Todo {
            content: content.to_owned(),
            status,
            active_form: None,
        };
        assert!(matches!(&events[1], AgentEvent::ToolStart { name, .. } if name == "write_todos"));
        assert_eq!(
            events[2],
            AgentEvent::Plan {
                todos: vec![
                    todo("Find the loader", TodoStatus::Completed),
                    todo("Patch it", TodoStatus::InProgress),
                    todo("Wait for review", TodoStatus::Pending),
                ]
            }
        );
        assert!(
            matches!(&events[3], AgentEvent::ToolComplete { id, is_error: false, .. } if id == "t0")
        );
    }

    #[test]
    fn api_errors_are_classified_by_the_status_in_the_message() {
        let result = |message: &str| {
            json!({"type": "result", "status": "error",
                   "error": {"type": "unknown", "message": message}})
        };
        let mut decl = crate::providers::registry::test_decl("g", NAME);
        decl.api_key_env = Some(crate::source::Spanned::new(
            "MY_GEMINI_KEY".to_owned(),
            crate::source::Span::default(),
        ));
        let env = crate::providers::Environment::default().with("MY_GEMINI_KEY", "AIza-1");
        let credentials = Credentials::from_decl(NAME, &decl, &env).expect("set");
        let auth = classify(
            &result(
                r#"[API Error: {"error":{"code":401,"message":"API key not valid.","status":"UNAUTHENTICATED"}}]"#,
            ),
            &credentials,
        );
        assert_eq!(auth.class().name(), "auth");
        assert!(auth.to_string().contains("`MY_GEMINI_KEY`"), "{auth}");
        let cases = [
            (r#"[API Error: {"error":{"code":403}}]"#, "auth"),
            (r#"[API Error: {"error":{"code":429}}]"#, "rate-limit"),
            (r#"[API Error: {"error":{"code":503}}]"#, "overloaded"),
            (r#"[API Error: {"error":{"code":500}}]"#, "server-error"),
            (r#"[API Error: {"error":{"code":400}}]"#, "provider"),
            ("Reached max session turns", "provider"),
        ];
        for (message, class) in cases {
            assert_eq!(
                classify(&result(message), &credentials).class().name(),
                class,
                "{message}"
            );
        }
    }
}
