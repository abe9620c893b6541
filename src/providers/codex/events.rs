//! The `codex exec --json` event stream: one JSON object per line, mapped onto
//! [`AgentEvent`]s (the event and item shapes of the pinned CLI's `exec_events.rs`), and the
//! failures it reports.

use std::collections::HashMap;

use serde_json::{Value, json};

use crate::providers::todos::{self, PlanReport};
use crate::providers::{AgentEvent, EventSink, Usage, tool_summary};

/// The HTTP status in a CLI error message: the number after `status `.
pub(super) fn http_status(message: &str) -> Option<u16> {
    message.match_indices("status ").find_map(|(at, word)| {
        let digits = message.get(at + word.len()..at + word.len() + 3)?;
        let status: u16 = digits.parse().ok()?;
        (100..=599).contains(&status).then_some(status)
    })
}

/// `after − before`, never below zero.
pub(super) fn minus(after: Usage, before: Usage) -> Usage {
    Usage {
        input_tokens: after.input_tokens.saturating_sub(before.input_tokens),
        output_tokens: after.output_tokens.saturating_sub(before.output_tokens),
        cache_read_tokens: after
            .cache_read_tokens
            .saturating_sub(before.cache_read_tokens),
        cache_write_tokens: after
            .cache_write_tokens
            .saturating_sub(before.cache_write_tokens),
    }
}

/// A failure the CLI reported.
#[derive(Debug)]
pub(super) struct Failure {
    pub(super) message: String,
    /// `turn.failed`: the turn is over. A top-level `error` may be a retry notice.
    pub(super) fatal: bool,
}

impl Failure {
    pub(super) fn is_auth(&self) -> bool {
        matches!(http_status(&self.message), Some(401 | 403))
    }
}

/// What the JSONL stream has said so far.
#[derive(Debug, Default)]
pub(super) struct Stream {
    pub(super) thread: Option<String>,
    /// Tool items started: item id → tool name.
    tools: HashMap<String, String>,
    pub(super) last_text: String,
    pub(super) turns: u32,
    /// The thread's token totals from `turn.completed`.
    pub(super) total: Option<Usage>,
    pub(super) failure: Option<Failure>,
    /// The plans reported (from `todo_list` items).
    plans: PlanReport,
}

impl Stream {
    /// Maps one line onto events; returns the thread id when the line started the thread.
    pub(super) fn handle(&mut self, line: &Value, events: &dyn EventSink) -> Option<String> {
        let kind = line.get("type").and_then(Value::as_str).unwrap_or_default();
        let text = |value: &Value, field: &str| {
            value
                .get(field)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        match kind {
            "thread.started" => {
                let thread = text(line, "thread_id");
                self.thread = Some(thread.clone());
                return Some(thread);
            }
            "turn.started" => self.turns += 1,
            "turn.completed" => {
                let usage = line.get("usage").unwrap_or(&Value::Null);
                let count = |field: &str| usage.get(field).and_then(Value::as_u64).unwrap_or(0);
                let cached = count("cached_input_tokens");
                // `input_tokens` counts cached tokens too (the Responses API's meaning).
                self.total = Some(Usage {
                    input_tokens: count("input_tokens").saturating_sub(cached),
                    output_tokens: count("output_tokens"),
                    cache_read_tokens: cached,
                    cache_write_tokens: count("cache_write_input_tokens"),
                });
            }
            "turn.failed" => {
                self.failure = Some(Failure {
                    message: line
                        .pointer("/error/message")
                        .and_then(Value::as_str)
                        .unwrap_or("the turn failed")
                        .to_owned(),
                    fatal: true,
                });
            }
            "error" => {
                self.failure = Some(Failure {
                    message: text(line, "message"),
                    fatal: false,
                });
            }
            // `item.updated` carries a changed `todo_list` (the plan tool's list).
            "item.started" | "item.updated" | "item.completed" => {
                let item = line.get("item").unwrap_or(&Value::Null);
                self.item(item, kind == "item.completed", events);
            }
            _ => {}
        }
        None
    }

    fn item(&mut self, item: &Value, completed: bool, events: &dyn EventSink) {
        let id = item
            .get("id")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let field = |name: &str| item.get(name).and_then(Value::as_str).unwrap_or_default();
        let kind = field("type");
        match kind {
            "agent_message" if completed => {
                let text = field("text").to_owned();
                events.emit(AgentEvent::TextDelta { text: text.clone() });
                self.last_text.clone_from(&text);
                events.emit(AgentEvent::MessageComplete { text });
            }
            "reasoning" if completed => events.emit(AgentEvent::ThinkingDelta {
                text: field("text").to_owned(),
            }),
            // `update_plan` is no tool item: its list is an item of its own, started at the
            // first plan, updated at each change, completed (unchanged) as the turn ends.
            "todo_list" => {
                if let Some(plan) = item.get("items").and_then(todos::from_checklist) {
                    self.plans.report(plan, events);
                }
            }
            "command_execution" | "file_change" | "mcp_tool_call" | "web_search" => {
                let name = match kind {
                    "mcp_tool_call" => format!("{}.{}", field("server"), field("tool")),
                    other => other.to_owned(),
                };
                if !self.tools.contains_key(&id) {
                    self.tools.insert(id.clone(), name.clone());
                    events.emit(AgentEvent::ToolStart {
                        id: id.clone(),
                        name: name.clone(),
                        input: tool_input(item),
                    });
                }
                if completed {
                    let status = field("status");
                    let failed = status != "completed"
                        || item
                            .get("exit_code")
                            .and_then(Value::as_i64)
                            .is_some_and(|code| code != 0);
                    events.emit(AgentEvent::ToolComplete {
                        id,
                        name,
                        summary: tool_summary(&tool_result(item)),
                        is_error: failed && kind != "web_search",
                    });
                }
            }
            _ => {}
        }
    }
}

/// What a tool item was asked to do.
fn tool_input(item: &Value) -> Value {
    match item.get("type").and_then(Value::as_str) {
        Some("command_execution") => json!({"command": item.get("command")}),
        Some("file_change") => json!({"changes": item.get("changes")}),
        Some("mcp_tool_call") => item.get("arguments").cloned().unwrap_or(Value::Null),
        Some("web_search") => json!({"query": item.get("query")}),
        _ => Value::Null,
    }
}

/// What a finished tool item produced, as text for its summary.
fn tool_result(item: &Value) -> String {
    match item.get("type").and_then(Value::as_str) {
        Some("command_execution") => item
            .get("aggregated_output")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        Some("file_change") => item
            .get("changes")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|change| {
                format!(
                    "{} {}",
                    change.get("kind").and_then(Value::as_str).unwrap_or("edit"),
                    change.get("path").and_then(Value::as_str).unwrap_or("?")
                )
            })
            .collect::<Vec<_>>()
            .join(", "),
        Some("mcp_tool_call") => item
            .pointer("/error/message")
            .or_else(|| item.pointer("/result/content/0/text"))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    /// Lines as the pinned CLI prints them: a shell command, a patch, the closing message.
    const TRANSCRIPT: &str = r#"{"type":"thread.started","thread_id":"t-1"}
{"type":"item.completed","item":{"id":"item_0","type":"error","message":"Model metadata for `m` not found."}}
{"type":"turn.started"}
{"type":"item.started","item":{"id":"item_1","type":"command_execution","command":"/bin/bash -lc ls","aggregated_output":"","exit_code":null,"status":"in_progress"}}
{"type":"item.completed","item":{"id":"item_1","type":"command_execution","command":"/bin/bash -lc ls","aggregated_output":"notes.txt\n","exit_code":0,"status":"completed"}}
{"type":"item.started","item":{"id":"item_2","type":"file_change","changes":[{"path":"/w/notes.txt","kind":"update"}],"status":"in_progress"}}
{"type":"item.completed","item":{"id":"item_2","type":"file_change","changes":[{"path":"/w/notes.txt","kind":"update"}],"status":"completed"}}
{"type":"item.completed","item":{"id":"item_3","type":"agent_message","text":"Edited."}}
{"type":"turn.completed","usage":{"input_tokens":20,"cached_input_tokens":3,"cache_write_input_tokens":0,"output_tokens":4,"reasoning_output_tokens":0}}"#;

    #[test]
    fn maps_jsonl_events() {
        let events = Mutex::new(Vec::new());
        let sink = |event: AgentEvent| events.lock().expect("not poisoned").push(event);
        let mut stream = Stream::default();
        let started: Vec<String> = TRANSCRIPT
            .lines()
            .filter_map(|line| stream.handle(&serde_json::from_str(line).expect("valid"), &sink))
            .collect();
        assert_eq!(started, ["t-1"]);
        assert_eq!(stream.last_text, "Edited.");
        assert_eq!(stream.turns, 1);
        assert_eq!(
            stream.total,
            Some(Usage {
                input_tokens: 17,
                output_tokens: 4,
                cache_read_tokens: 3,
                cache_write_tokens: 0
            })
        );
        assert!(stream.failure.is_none());
        let events = events.into_inner().expect("not poisoned");
        assert_eq!(
            events,
            [
                AgentEvent::ToolStart {
                    id: "item_1".to_owned(),
                    name: "command_execution".to_owned(),
                    input: json!({"command": "/bin/bash -lc ls"}),
                },
                AgentEvent::ToolComplete {
                    id: "item_1".to_owned(),
                    name: "command_execution".to_owned(),
                    summary: "notes.txt".to_owned(),
                    is_error: false,
                },
                AgentEvent::ToolStart {
                    id: "item_2".to_owned(),
                    name: "file_change".to_owned(),
                    input: json!({"changes": [{"path": "/w/notes.txt", "kind": "update"}]}),
                },
                AgentEvent::ToolComplete {
                    id: "item_2".to_owned(),
                    name: "file_change".to_owned(),
                    summary: "update /w/notes.txt".to_owned(),
                    is_error: false,
                },
                AgentEvent::TextDelta {
                    text: "Edited.".to_owned()
                },
                AgentEvent::MessageComplete {
                    text: "Edited.".to_owned()
                },
            ]
        );
    }

    #[test]
    fn a_todo_list_item_is_the_plan_reported_when_it_changes() {
        use crate::providers::{Todo, TodoStatus};
        let transcript = r#"{"type":"thread.started","thread_id":"t-2"}
{"type":"turn.started"}
{"type":"item.started","item":{"id":"item_0","type":"todo_list","items":[{"text":"Inspect the failing test","completed":false},{"text":"Patch the parser","completed":false}]}}
{"type":"item.updated","item":{"id":"item_0","type":"todo_list","items":[{"text":"Inspect the failing test","completed":true},{"text":"Patch the parser","completed":false}]}}
{"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":"Half way."}}
{"type":"item.completed","item":{"id":"item_0","type":"todo_list","items":[{"text":"Inspect the failing test","completed":true},{"text":"Patch the parser","completed":false}]}}
{"type":"turn.completed","usage":{"input_tokens":20,"cached_input_tokens":0,"output_tokens":4}}"#;
        let events = Mutex::new(Vec::new());
        let sink = |event: AgentEvent| events.lock().expect("not poisoned").push(event);
        let mut stream = Stream::default();
        for line in transcript.lines() {
            stream.handle(&serde_json::from_str(line).expect("valid"), &sink);
        }
        let todo = |content: &str, status| Todo {
            content: content.to_owned(),
            status,
            active_form: None,
        };
        let plan = |first| AgentEvent::Plan {
            todos: vec![
                todo("Inspect the failing test", first),
                todo("Patch the parser", TodoStatus::Pending),
            ],
        };
        // No tool: the list alone, once per change (the completed item repeats it).
        assert_eq!(
            events.into_inner().expect("not poisoned"),
            [
                plan(TodoStatus::Pending),
                plan(TodoStatus::Completed),
                AgentEvent::TextDelta {
                    text: "Half way.".to_owned()
                },
                AgentEvent::MessageComplete {
                    text: "Half way.".to_owned()
                },
            ]
        );
    }

    #[test]
    fn a_failed_command_is_a_tool_error() {
        let events = Mutex::new(Vec::new());
        let sink = |event: AgentEvent| events.lock().expect("not poisoned").push(event);
        let line = json!({"type": "item.completed", "item": {"id": "i", "type": "command_execution",
            "command": "false", "aggregated_output": "", "exit_code": 1, "status": "failed"}});
        Stream::default().handle(&line, &sink);
        let events = events.into_inner().expect("not poisoned");
        assert!(
            matches!(
                &events[..],
                [
                    AgentEvent::ToolStart { .. },
                    AgentEvent::ToolComplete { is_error: true, .. }
                ]
            ),
            "{events:?}"
        );
    }

    #[test]
    fn usage_of_a_continued_thread_is_the_difference() {
        let total = |input, output| Usage {
            input_tokens: input,
            output_tokens: output,
            ..Usage::default()
        };
        assert_eq!(minus(total(22, 10), total(11, 5)), total(11, 5));
        assert_eq!(minus(total(1, 1), total(11, 5)), total(0, 0));
    }
}
