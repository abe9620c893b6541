//! Claude Code's `stream-json` output mapped onto [`AgentEvent`]s, and its `result` line
//! turned into the reply or a classified error.

use std::collections::HashMap;

use serde_json::Value;

use super::NAME;
use super::tasks::TaskBoard;
use crate::providers::agent_cli::Credentials;
use crate::providers::todos::{self, PlanReport};
use crate::providers::{AgentEvent, AgentReply, EventSink, ProviderError, Usage, tool_summary};

/// What the stdout stream has said so far.
#[derive(Debug, Default)]
pub(super) struct Stream {
    pub(super) session_id: Option<String>,
    /// Tool-use id → tool name, for tool results.
    tools: HashMap<String, String>,
    /// Tool-use ids of sub-agent (Task/Agent) calls → their names.
    subagents: HashMap<String, String>,
    /// The assistant message being received: its id and text so far.
    message: Option<(String, String)>,
    /// The text of the last complete top-level assistant message.
    last_text: String,
    /// The `error` of the last assistant line, if any.
    assistant_error: Option<String>,
    /// Prompt tokens of the last model call (for the context-window fraction).
    last_prompt_tokens: u64,
    /// `session-start` was emitted (the CLI's `init` line came).
    started: bool,
    /// The agent's task list, from its task tools' results.
    tasks: TaskBoard,
    /// The plans reported.
    plans: PlanReport,
    pub(super) result: Option<Value>,
}

impl Stream {
    pub(super) fn handle(&mut self, line: &Value, events: &dyn EventSink) {
        match line.get("type").and_then(Value::as_str) {
            Some("system") if line.get("subtype").and_then(Value::as_str) == Some("init") => {
                self.session_id = str_field(line, "session_id");
                self.started = true;
                events.emit(AgentEvent::SessionStart {
                    session_id: self.session_id.clone(),
                    model: str_field(line, "model"),
                });
            }
            Some("assistant") => self.assistant(line, events),
            Some("user") => self.tool_results(line, events),
            Some("result") => {
                self.flush(events);
                self.result = Some(line.clone());
            }
            _ => {}
        }
    }

    fn assistant(&mut self, line: &Value, events: &dyn EventSink) {
        let top_level = line.get("parent_tool_use_id").is_none_or(Value::is_null);
        let message = line.get("message").unwrap_or(&Value::Null);
        if let Some(error) = str_field(line, "error") {
            self.assistant_error = Some(error);
        }
        if top_level {
            let id = str_field(message, "id").unwrap_or_default();
            if self
                .message
                .as_ref()
                .is_some_and(|(current, _)| *current != id)
            {
                self.flush(events);
            }
            if self.message.is_none() {
                self.message = Some((id, String::new()));
            }
            if let Some(usage) = message.get("usage") {
                self.last_prompt_tokens = [
                    "input_tokens",
                    "cache_read_input_tokens",
                    "cache_creation_input_tokens",
                ]
                .iter()
                .map(|field| u64_field(usage, field))
                .sum();
            }
        }
        let blocks = message.get("content").and_then(Value::as_array);
        for block in blocks.into_iter().flatten() {
            match block.get("type").and_then(Value::as_str) {
                Some("text") if top_level => {
                    let text = str_field(block, "text").unwrap_or_default();
                    if let Some((_, so_far)) = self.message.as_mut() {
                        so_far.push_str(&text);
                    }
                    events.emit(AgentEvent::TextDelta { text });
                }
                Some("thinking") if top_level => {
                    let text = str_field(block, "thinking").unwrap_or_default();
                    events.emit(AgentEvent::ThinkingDelta { text });
                }
                Some("tool_use") => {
                    let id = str_field(block, "id").unwrap_or_default();
                    let name = str_field(block, "name").unwrap_or_default();
                    let input = block.get("input").cloned().unwrap_or(Value::Null);
                    if name == "Task" || name == "Agent" {
                        let agent = ["subagent_type", "description"]
                            .iter()
                            .find_map(|field| str_field(&input, field))
                            .unwrap_or_else(|| name.clone());
                        events.emit(AgentEvent::SubagentStart {
                            name: agent.clone(),
                        });
                        self.subagents.insert(id.clone(), agent);
                    }
                    self.tools.insert(id.clone(), name.clone());
                    // The plan is the main agent's; a sub-agent's list is its own.
                    let plan = if top_level {
                        self.tasks.call(&id, &name, &input);
                        (name == "TodoWrite")
                            .then(|| input.get("todos").and_then(todos::from_todo_list))
                            .flatten()
                    } else {
                        None
                    };
                    events.emit(AgentEvent::ToolStart { id, name, input });
                    if let Some(plan) = plan {
                        self.plans.report(plan, events);
                    }
                }
                _ => {}
            }
        }
    }

    fn tool_results(&mut self, line: &Value, events: &dyn EventSink) {
        let content = line.pointer("/message/content").and_then(Value::as_array);
        let results: Vec<&Value> = content
            .into_iter()
            .flatten()
            .filter(|block| block.get("type").and_then(Value::as_str) == Some("tool_result"))
            .collect();
        // The CLI's structured result (`tool_use_result`) is the line's one result's.
        let structured = line.get("tool_use_result").filter(|_| results.len() == 1);
        for block in results {
            self.flush(events);
            let id = str_field(block, "tool_use_id").unwrap_or_default();
            let name = self.tools.get(&id).cloned().unwrap_or_default();
            let text = result_text(block.get("content").unwrap_or(&Value::Null));
            let is_error = block
                .get("is_error")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            events.emit(AgentEvent::ToolComplete {
                id: id.clone(),
                name,
                summary: tool_summary(&text),
                is_error,
            });
            if let Some(plan) = self.tasks.result(&id, &text, structured, is_error) {
                self.plans.report(plan, events);
            }
            if let Some(agent) = self.subagents.remove(&id) {
                events.emit(AgentEvent::SubagentEnd { name: agent });
            }
        }
    }

    /// Ends the assistant message being received.
    fn flush(&mut self, events: &dyn EventSink) {
        if let Some((_, text)) = self.message.take()
            && !text.is_empty()
        {
            self.last_text.clone_from(&text);
            events.emit(AgentEvent::MessageComplete { text });
        }
    }

    /// Turns the `result` line into the reply or a classified error.
    pub(super) fn finish(
        self,
        result: Value,
        events: &dyn EventSink,
        exit: (&Credentials, &str, Option<i32>),
    ) -> Result<AgentReply, ProviderError> {
        let session_id = str_field(&result, "session_id").or(self.session_id);
        // A CLI that failed before its `init` line still opens the session it reports.
        if !self.started {
            events.emit(AgentEvent::SessionStart {
                session_id: session_id.clone(),
                model: None,
            });
        }
        let usage = result.get("usage").unwrap_or(&Value::Null);
        let usage = Usage {
            input_tokens: u64_field(usage, "input_tokens"),
            output_tokens: u64_field(usage, "output_tokens"),
            cache_read_tokens: u64_field(usage, "cache_read_input_tokens"),
            cache_write_tokens: u64_field(usage, "cache_creation_input_tokens"),
        };
        let cost_usd = result.get("total_cost_usd").and_then(Value::as_f64);
        events.emit(AgentEvent::Usage { usage, cost_usd });
        let window = result
            .get("modelUsage")
            .and_then(Value::as_object)
            .and_then(|models| models.values().find_map(|model| model.get("contextWindow")))
            .and_then(Value::as_u64)
            .filter(|window| *window > 0);
        if let Some(window) = window
            && self.last_prompt_tokens > 0
        {
            #[allow(
                clippy::cast_precision_loss,
                reason = "token counts are far below 2^52"
            )]
            let fraction = (self.last_prompt_tokens as f64 / window as f64).clamp(0.0, 1.0);
            events.emit(AgentEvent::ContextWindow { fraction });
        }
        events.emit(AgentEvent::SessionEnd {
            session_id: session_id.clone(),
        });
        if result.get("is_error").and_then(Value::as_bool) == Some(true)
            || str_field(&result, "subtype").is_some_and(|subtype| subtype != "success")
        {
            return Err(classify(&result, self.assistant_error.as_deref(), exit));
        }
        let text = str_field(&result, "result")
            .filter(|text| !text.is_empty())
            .unwrap_or(self.last_text);
        Ok(AgentReply {
            text,
            session_id,
            usage,
            cost_usd,
            // An answer took a model turn, whether or not the CLI counted it.
            turns: u32::try_from(u64_field(&result, "num_turns"))
                .unwrap_or(u32::MAX)
                .max(1),
        })
    }
}

/// Classifies an `is_error` result for `retry-on`.
/// `exit` is the credentials (for auth), the end of stderr and the status the CLI exited
/// with, if it did.
fn classify(
    result: &Value,
    assistant_error: Option<&str>,
    (credentials, stderr, code): (&Credentials, &str, Option<i32>),
) -> ProviderError {
    let subtype = str_field(result, "subtype").unwrap_or_default();
    let errors: Vec<String> = result
        .get("errors")
        .and_then(Value::as_array)
        .map(|errors| {
            errors
                .iter()
                .filter_map(|e| e.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    let mut message = str_field(result, "result").unwrap_or_default();
    if message.is_empty() {
        message = errors.join("; ");
    }
    if message.is_empty() {
        message = format!("the CLI reported `{subtype}`");
    }
    match subtype.as_str() {
        // Claude Code stopped itself at `--max-budget-usd` (the node's `budget-usd`).
        "error_max_budget_usd" => return ProviderError::over_budget(NAME, message),
        "error_max_turns" | "error_max_structured_output_retries" => {
            return ProviderError::rejected(NAME, 0, message);
        }
        "error_during_execution" => {
            return ProviderError::process_exit(
                NAME,
                code,
                if stderr.is_empty() {
                    message
                } else {
                    format!("{message}; stderr: {stderr}")
                },
            );
        }
        _ => {}
    }
    let status = result
        .get("api_error_status")
        .and_then(Value::as_u64)
        .and_then(|status| u16::try_from(status).ok())
        .or_else(|| {
            let rest = message.strip_prefix("API Error: ")?;
            rest.get(..3)?.parse().ok()
        });
    let status = status.or(match assistant_error {
        Some("rate_limit") => Some(429),
        Some("server_error") => Some(500),
        Some("authentication_failed") => Some(401),
        Some("billing_error") => Some(402),
        Some("invalid_request") => Some(400),
        _ => None,
    });
    match status {
        Some(status) => credentials.status_error(status, &message),
        None if message.to_lowercase().contains("overloaded") => {
            ProviderError::overloaded(NAME, None)
        }
        None => ProviderError::rejected(NAME, 0, message),
    }
}

/// A tool result's text: a string, or the text of its blocks.
fn result_text(content: &Value) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|block| block.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

pub(super) fn str_field(value: &Value, field: &str) -> Option<String> {
    value.get(field).and_then(Value::as_str).map(str::to_owned)
}

fn u64_field(value: &Value, field: &str) -> u64 {
    value.get(field).and_then(Value::as_u64).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;
    use crate::providers::contract::check_call;
    use crate::providers::{Todo, TodoStatus};

    /// The replay transcript of protocols.md §2.
    const TRANSCRIPT: &str = r#"{"type":"system","subtype":"init","cwd":"/w","session_id":"8f0c2d8e-1111-4222-8333-944455556666","tools":["Read"],"model":"claude-sonnet-4-5","permissionMode":"acceptEdits","uuid":"u1"}
{"type":"assistant","message":{"id":"msg_01","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"tool_use","id":"toolu_01","name":"Read","input":{"file_path":"/w/README.md"}}],"stop_reason":null,"usage":{"input_tokens":3,"cache_creation_input_tokens":1200,"cache_read_input_tokens":14000,"output_tokens":40}},"parent_tool_use_id":null,"session_id":"8f0c2d8e-1111-4222-8333-944455556666","uuid":"u2"}
{"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_01","type":"tool_result","content":"     1\t# Demo\n"}]},"parent_tool_use_id":null,"session_id":"8f0c2d8e-1111-4222-8333-944455556666","uuid":"u3"}
{"type":"assistant","message":{"id":"msg_02","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"The README is a one-line title."}],"stop_reason":null,"usage":{"input_tokens":6,"cache_creation_input_tokens":0,"cache_read_input_tokens":15200,"output_tokens":45}},"parent_tool_use_id":null,"session_id":"8f0c2d8e-1111-4222-8333-944455556666","uuid":"u4"}
{"type":"result","subtype":"success","is_error":false,"num_turns":2,"result":"The README is a one-line title.","session_id":"8f0c2d8e-1111-4222-8333-944455556666","total_cost_usd":0.0123,"usage":{"input_tokens":9,"cache_creation_input_tokens":1200,"cache_read_input_tokens":29200,"output_tokens":85},"modelUsage":{"claude-sonnet-4-5":{"contextWindow":200000}},"uuid":"u5"}"#;

    fn credentials() -> Credentials {
        let mut decl = crate::providers::registry::test_decl("c", NAME);
        decl.api_key_env = Some(crate::source::Spanned::new(
            "MY_ANTHROPIC_KEY".to_owned(),
            crate::source::Span::default(),
        ));
        let env = crate::providers::Environment::default().with("MY_ANTHROPIC_KEY", "sk-ant-1");
        Credentials::from_decl(NAME, &decl, &env).expect("set")
    }

    fn replay(transcript: &str) -> (Result<AgentReply, ProviderError>, Vec<AgentEvent>) {
        let events = Mutex::new(Vec::new());
        let sink = |event: AgentEvent| events.lock().expect("not poisoned").push(event);
        let mut stream = Stream::default();
        let mut result = None;
        for line in transcript.lines() {
            let value: Value = serde_json::from_str(line).expect("valid line");
            stream.handle(&value, &sink);
            if let Some(value) = stream.result.take() {
                result = Some(value);
                break;
            }
        }
        let credentials = credentials();
        let reply = stream.finish(
            result.expect("a result line"),
            &sink,
            (&credentials, "", None),
        );
        (reply, events.into_inner().expect("not poisoned"))
    }

    #[test]
    fn maps_the_transcript_onto_events_and_a_reply() {
        let (reply, events) = replay(TRANSCRIPT);
        assert_eq!(check_call(&events, &reply), []);
        let reply = reply.expect("success");
        assert_eq!(reply.text, "The README is a one-line title.");
        assert_eq!(
            reply.session_id.as_deref(),
            Some("8f0c2d8e-1111-4222-8333-944455556666")
        );
        assert_eq!(reply.turns, 2);
        assert_eq!(reply.cost_usd, Some(0.0123));
        assert_eq!(
            reply.usage,
            Usage {
                input_tokens: 9,
                output_tokens: 85,
                cache_read_tokens: 29200,
                cache_write_tokens: 1200
            }
        );
        let kinds: Vec<String> = events
            .iter()
            .map(|event| {
                serde_json::to_value(event).expect("serialisable")["type"]
                    .as_str()
                    .expect("tagged")
                    .to_owned()
            })
            .collect();
        assert_eq!(
            kinds,
            [
                "session-start",
                "tool-start",
                "tool-complete",
                "text-delta",
                "message-complete",
                "usage",
                "context-window",
                "session-end"
            ]
        );
        assert!(events.contains(&AgentEvent::ToolComplete {
            id: "toolu_01".to_owned(),
            name: "Read".to_owned(),
            summary: "1\t# Demo".to_owned(),
            is_error: false,
        }));
        assert!(events.contains(&AgentEvent::ContextWindow {
            fraction: 15206.0 / 200_000.0
        }));
    }

    /// A `TodoWrite` call: its plan follows its `tool-start`.
    const TODO_WRITE: &str = r#"{"type":"system","subtype":"init","session_id":"s-2","model":"claude-sonnet-4-5"}
{"type":"assistant","message":{"id":"msg_01","content":[{"type":"tool_use","id":"toolu_01","name":"TodoWrite","input":{"todos":[{"content":"Read the parser","status":"completed","activeForm":"Reading the parser"},{"content":"Fix the bug","status":"in_progress","activeForm":"Fixing the bug"},{"content":"Run the tests","status":"pending","activeForm":"Running the tests"}]}}]},"parent_tool_use_id":null,"session_id":"s-2"}
{"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_01","type":"tool_result","content":"Todos have been modified successfully. Ensure that you continue to use the todo list to track your progress."}]},"parent_tool_use_id":null,"session_id":"s-2","tool_use_result":{"oldTodos":[],"newTodos":[]}}
{"type":"assistant","message":{"id":"msg_02","content":[{"type":"tool_use","id":"toolu_02","name":"TodoWrite","input":{"todos":[{"content":"Sub-agent list","status":"pending","activeForm":"Listing"}]}}]},"parent_tool_use_id":"toolu_99","session_id":"s-2"}
{"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_02","type":"tool_result","content":"Todos have been modified successfully."}]},"parent_tool_use_id":"toolu_99","session_id":"s-2"}
{"type":"assistant","message":{"id":"msg_03","content":[{"type":"text","text":"Planned."}]},"parent_tool_use_id":null,"session_id":"s-2"}
{"type":"result","subtype":"success","is_error":false,"num_turns":2,"result":"Planned.","session_id":"s-2","usage":{"input_tokens":9,"output_tokens":5}}"#;

    /// The task tools (the pinned CLI's default): the plan follows each result.
    const TASKS: &str = r#"{"type":"system","subtype":"init","session_id":"s-3","model":"claude-sonnet-4-5"}
{"type":"assistant","message":{"id":"msg_01","content":[{"type":"tool_use","id":"toolu_01","name":"TaskCreate","input":{"subject":"Run the tests","description":"cargo test","activeForm":"Running the tests"}}]},"parent_tool_use_id":null,"session_id":"s-3"}
{"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_01","type":"tool_result","content":"Task #1 created successfully: Run the tests"}]},"parent_tool_use_id":null,"session_id":"s-3","tool_use_result":{"task":{"id":"1","subject":"Run the tests","description":"cargo test"}}}
{"type":"assistant","message":{"id":"msg_02","content":[{"type":"tool_use","id":"toolu_02","name":"TaskUpdate","input":{"taskId":"1","status":"in_progress"}}]},"parent_tool_use_id":null,"session_id":"s-3"}
{"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_02","type":"tool_result","content":"Updated task #1 status"}]},"parent_tool_use_id":null,"session_id":"s-3","tool_use_result":{"success":true,"taskId":"1","updatedFields":["status"],"statusChange":{"from":"pending","to":"in_progress"}}}
{"type":"assistant","message":{"id":"msg_03","content":[{"type":"text","text":"Working."}]},"parent_tool_use_id":null,"session_id":"s-3"}
{"type":"result","subtype":"success","is_error":false,"num_turns":3,"result":"Working.","session_id":"s-3","usage":{"input_tokens":9,"output_tokens":5}}"#;

    fn kinds(events: &[AgentEvent]) -> Vec<String> {
        events
            .iter()
            .map(|event| {
                serde_json::to_value(event).expect("serialisable")["type"]
                    .as_str()
                    .expect("tagged")
                    .to_owned()
            })
            .collect()
    }

    fn plans(events: &[AgentEvent]) -> Vec<Vec<Todo>> {
        events
            .iter()
            .filter_map(|event| match event {
                AgentEvent::Plan { todos } => Some(todos.clone()),
                _ => None,
            })
            .collect()
    }

    fn todo(content: &str, status: TodoStatus, active_form: &str) -> Todo {
        Todo {
            content: content.to_owned(),
            status,
            active_form: Some(active_form.to_owned()),
        }
    }

    #[test]
    fn a_todo_write_is_a_tool_call_and_the_plan() {
        let (reply, events) = replay(TODO_WRITE);
        assert_eq!(check_call(&events, &reply), []);
        assert_eq!(
            &kinds(&events)[..4],
            ["session-start", "tool-start", "plan", "tool-complete"]
        );
        // The sub-agent's list is not the agent's plan.
        assert_eq!(
            plans(&events),
            [vec![
                todo(
                    "Read the parser",
                    TodoStatus::Completed,
                    "Reading the parser"
                ),
                todo("Fix the bug", TodoStatus::InProgress, "Fixing the bug"),
                todo("Run the tests", TodoStatus::Pending, "Running the tests"),
            ]]
        );
    }

    #[test]
    fn task_tools_report_the_whole_list_after_each_result() {
        let (reply, events) = replay(TASKS);
        assert_eq!(check_call(&events, &reply), []);
        assert_eq!(
            &kinds(&events)[..7],
            [
                "session-start",
                "tool-start",
                "tool-complete",
                "plan",
                "tool-start",
                "tool-complete",
                "plan"
            ]
        );
        assert_eq!(
            plans(&events),
            [
                vec![todo(
                    "Run the tests",
                    TodoStatus::Pending,
                    "Running the tests"
                )],
                vec![todo(
                    "Run the tests",
                    TodoStatus::InProgress,
                    "Running the tests"
                )],
            ]
        );
    }

    #[test]
    fn error_results_are_classified() {
        let cases = [
            (
                r#"{"type":"result","subtype":"success","is_error":true,"result":"API Error: 529 overloaded","api_error_status":529}"#,
                "overloaded",
            ),
            (
                r#"{"type":"result","subtype":"success","is_error":true,"result":"API Error: 429 rate limited"}"#,
                "rate-limit",
            ),
            (
                r#"{"type":"result","subtype":"success","is_error":true,"result":"API Error: 500 boom"}"#,
                "server-error",
            ),
            (
                r#"{"type":"result","subtype":"error_max_turns","is_error":true,"errors":["Reached maximum number of turns (2)"]}"#,
                "provider",
            ),
            (
                r#"{"type":"result","subtype":"error_max_budget_usd","is_error":true,"total_cost_usd":0.26,"errors":["Reached maximum budget ($0.25)"]}"#,
                "budget",
            ),
            (
                r#"{"type":"result","subtype":"error_during_execution","is_error":true,"errors":["crashed"]}"#,
                "process-exit",
            ),
        ];
        for (line, class) in cases {
            let (reply, _) = replay(line);
            let error = reply.expect_err(line);
            assert_eq!(error.class().name(), class, "{line}: {error}");
        }
    }
}
