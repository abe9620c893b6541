//! The Copilot CLI's JSONL session events mapped onto [`AgentEvent`]s, its refusals under
//! `permission="ask"`, and its failures classified.

use std::collections::HashMap;

use serde_json::{Map, Value, json};

use super::NAME;
use crate::providers::agent_cli::Credentials;
use crate::providers::{
    AgentEvent, Approvals, EventSink, PermissionAsk, ProviderError, Usage, Verdict, tool_summary,
};

/// What the JSONL stream has said so far.
#[derive(Debug, Default)]
pub(super) struct Stream {
    /// Tool calls started, by id.
    tools: HashMap<String, ToolCall>,
    /// Message ids that streamed deltas.
    streamed: std::collections::HashSet<String>,
    pub(super) last_text: String,
    pub(super) turns: u32,
    pub(super) usage: Usage,
    /// A `session.error`'s data, classified when the call ends.
    pub(super) error: Option<Value>,
    pub(super) result: Option<Value>,
    /// Under `permission="ask"`: the requests the CLI refused because nobody could approve
    /// them, not yet looked at.
    pub(super) asking: bool,
    refused: Vec<PermissionAsk>,
}

/// A tool call as `tool.execution_start` described it.
#[derive(Debug, Default)]
struct ToolCall {
    name: String,
    arguments: Value,
    /// The files a shell command writes through a redirection (`shellToolInfo`).
    writes: Option<Value>,
}

impl ToolCall {
    /// The request the CLI refused: its permission kind, and the call.
    fn ask(&self) -> PermissionAsk {
        let mut input = json!({"tool": self.name, "arguments": self.arguments});
        if let Some(writes) = &self.writes {
            input["writes"] = writes.clone();
        }
        PermissionAsk {
            tool: permission_kind(&self.name).to_owned(),
            input,
        }
    }
}

/// The CLI's refusal of a tool nobody could approve (`error.message` of a `"denied"`
/// completion); a refusal by a `--deny-tool` rule says "denied due to the following rules".
const UNATTENDED: &str = "no interactive user response was available";

impl Stream {
    /// A stream read for a call that asks a person (`permission="ask"`) or not.
    pub(super) fn new(asking: bool) -> Self {
        Self {
            asking,
            ..Self::default()
        }
    }

    /// A refused request nobody has decided: the call stops to ask a person. One a person
    /// has decided (allowed for the run, or the answered request) is left refused: the CLI
    /// told the agent, and asking again would not change its rules.
    pub(super) fn undecided(&mut self, approvals: &mut Approvals) -> Option<PermissionAsk> {
        while let Some(ask) = self.refused.pop() {
            if approvals.decide(&ask) == Verdict::Ask {
                return Some(ask);
            }
        }
        None
    }

    pub(super) fn handle(&mut self, line: &Value, events: &dyn EventSink) {
        let kind = line.get("type").and_then(Value::as_str).unwrap_or_default();
        let data = line.get("data").unwrap_or(&Value::Null);
        let text = |field: &str| {
            data.get(field)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        // Events from sub-agents carry `agentId` (or a parent tool call); their text is not
        // the reply.
        let top_level = line.get("agentId").is_none_or(Value::is_null)
            && data.get("parentToolCallId").is_none_or(Value::is_null);
        match kind {
            "assistant.turn_start" if top_level => self.turns += 1,
            "assistant.message_delta" if top_level => {
                self.streamed.insert(text("messageId"));
                events.emit(AgentEvent::TextDelta {
                    text: text("deltaContent"),
                });
            }
            "assistant.reasoning_delta" if top_level => events.emit(AgentEvent::ThinkingDelta {
                text: text("deltaContent"),
            }),
            "assistant.message" if top_level => {
                let content = text("content");
                if content.is_empty() {
                    return;
                }
                if !self.streamed.contains(&text("messageId")) {
                    events.emit(AgentEvent::TextDelta {
                        text: content.clone(),
                    });
                }
                self.last_text.clone_from(&content);
                events.emit(AgentEvent::MessageComplete { text: content });
            }
            "assistant.usage" => {
                let count = |field: &str| data.get(field).and_then(Value::as_u64).unwrap_or(0);
                self.usage.add(Usage {
                    input_tokens: count("inputTokens"),
                    output_tokens: count("outputTokens"),
                    cache_read_tokens: count("cacheReadTokens"),
                    cache_write_tokens: count("cacheWriteTokens"),
                });
            }
            "tool.execution_start" => {
                let id = text("toolCallId");
                let name = text("toolName");
                let arguments = data.get("arguments").cloned().unwrap_or(Value::Null);
                let writes = data
                    .pointer("/shellToolInfo/hasWriteFileRedirection")
                    .and_then(Value::as_bool)
                    .filter(|redirects| *redirects)
                    .map(|_| {
                        data.pointer("/shellToolInfo/possiblePaths")
                            .cloned()
                            .unwrap_or_else(|| json!([]))
                    });
                events.emit(AgentEvent::ToolStart {
                    id: id.clone(),
                    name: name.clone(),
                    input: arguments.clone(),
                });
                self.tools.insert(
                    id,
                    ToolCall {
                        name,
                        arguments,
                        writes,
                    },
                );
            }
            "tool.execution_complete" => {
                let id = text("toolCallId");
                let Some(call) = self.tools.get(&id) else {
                    // A call this process never started: one a stopped call left
                    // unfinished, closed as `interrupted` when its session resumes.
                    return;
                };
                let success = data
                    .get("success")
                    .and_then(Value::as_bool)
                    .unwrap_or(false);
                let detail = if success {
                    data.pointer("/result/content")
                } else {
                    data.pointer("/error/message")
                };
                let message = detail.and_then(Value::as_str).unwrap_or_default();
                if data.pointer("/error/code").and_then(Value::as_str) == Some("denied") {
                    let ask = call.ask();
                    events.emit(AgentEvent::PermissionRequest {
                        tool: ask.tool.clone(),
                        granted: false,
                    });
                    if self.asking && message.contains(UNATTENDED) {
                        self.refused.push(ask);
                    }
                }
                events.emit(AgentEvent::ToolComplete {
                    name: call.name.clone(),
                    id,
                    summary: tool_summary(message),
                    is_error: !success,
                });
            }
            "subagent.started" | "subagent.completed" | "subagent.failed" => {
                let name = ["agentName", "agentDisplayName", "name"]
                    .iter()
                    .find_map(|field| data.get(*field).and_then(Value::as_str))
                    .unwrap_or("subagent")
                    .to_owned();
                events.emit(if kind == "subagent.started" {
                    AgentEvent::SubagentStart { name }
                } else {
                    AgentEvent::SubagentEnd { name }
                });
            }
            "session.usage_info" => {
                let current = data.get("currentTokens").and_then(Value::as_f64);
                let limit = data.get("tokenLimit").and_then(Value::as_f64);
                if let (Some(current), Some(limit)) = (current, limit)
                    && limit > 0.0
                {
                    events.emit(AgentEvent::ContextWindow {
                        fraction: (current / limit).clamp(0.0, 1.0),
                    });
                }
            }
            "session.error" => self.error = Some(data.clone()),
            "result" => self.result = Some(line.clone()),
            _ => {}
        }
    }
}

/// Classifies a `session.error` (`errorType`, `statusCode`, `message`).
pub(super) fn classify(data: &Value, credentials: &Credentials) -> ProviderError {
    let message = data
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("the session failed")
        .to_owned();
    let status = data
        .get("statusCode")
        .and_then(Value::as_u64)
        .and_then(|status| u16::try_from(status).ok());
    let kind = data
        .get("errorType")
        .and_then(Value::as_str)
        .unwrap_or_default();
    match (kind, status) {
        ("rate_limit", _) => ProviderError::rate_limited(NAME, None),
        ("authentication", None) => credentials.status_error(401, &message),
        (_, Some(status)) => credentials.status_error(status, &message),
        (_, None) if kind.is_empty() => ProviderError::rejected(NAME, 0, message),
        (_, None) => ProviderError::rejected(NAME, 0, format!("{kind}: {message}")),
    }
}

/// Token counts summed over the models of a `--usage-output-file` report.
pub(super) fn usage_of(report: &Value) -> Usage {
    let mut usage = Usage::default();
    let models = report.get("modelMetrics").and_then(Value::as_object);
    for metrics in models.into_iter().flat_map(Map::values) {
        let counts = metrics.get("usage").unwrap_or(&Value::Null);
        let count = |field: &str| counts.get(field).and_then(Value::as_u64).unwrap_or(0);
        usage.add(Usage {
            input_tokens: count("inputTokens"),
            output_tokens: count("outputTokens"),
            cache_read_tokens: count("cacheReadTokens"),
            cache_write_tokens: count("cacheWriteTokens"),
        });
    }
    usage
}

/// The permission kind (as `--allow-tool` patterns name it) a built-in tool needs, as the
/// pinned CLI's own session log records its requests: the file tools write, a path outside
/// the allowed directories is a read, and any other tool is named as itself.
fn permission_kind(tool: &str) -> &str {
    match tool {
        "edit" | "create" => "write",
        "bash" | "powershell" => "shell",
        "view" | "grep" | "glob" => "read",
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;
    use crate::providers::{Answered, PermissionAnswer};

    /// Lines as the pinned CLI prints them (trimmed of fields the adapter ignores).
    const TRANSCRIPT: &str = r#"{"type":"session.tools_updated","data":{"model":"m"},"ephemeral":true}
{"type":"user.message","data":{"content":"edit it"}}
{"type":"assistant.turn_start","data":{"turnId":"0"}}
{"type":"assistant.message","data":{"messageId":"m1","content":"","toolRequests":[{"toolCallId":"t0","name":"edit","arguments":{"path":"/w/a"}}]}}
{"type":"tool.execution_start","data":{"toolCallId":"t0","toolName":"edit","arguments":{"path":"/w/a"}}}
{"type":"tool.execution_complete","data":{"toolCallId":"t0","success":true,"result":{"content":"File /w/a updated with changes."}}}
{"type":"assistant.turn_end","data":{"turnId":"0"}}
{"type":"assistant.turn_start","data":{"turnId":"1"}}
{"type":"assistant.message_delta","data":{"messageId":"m2","deltaContent":"Done."},"ephemeral":true}
{"type":"assistant.message","data":{"messageId":"m2","content":"Done."}}
{"type":"session.usage_info","data":{"tokenLimit":1000,"currentTokens":250}}
{"type":"assistant.turn_end","data":{"turnId":"1"}}
{"type":"result","sessionId":"s1","exitCode":0}"#;

    #[test]
    fn maps_jsonl_events() {
        let events = Mutex::new(Vec::new());
        let sink = |event: AgentEvent| events.lock().expect("not poisoned").push(event);
        let mut stream = Stream::default();
        for line in TRANSCRIPT.lines() {
            stream.handle(&serde_json::from_str(line).expect("valid"), &sink);
        }
        assert_eq!(stream.last_text, "Done.");
        assert_eq!(stream.turns, 2);
        assert!(stream.result.is_some());
        let events = events.into_inner().expect("not poisoned");
        assert_eq!(
            events,
            [
                AgentEvent::ToolStart {
                    id: "t0".to_owned(),
                    name: "edit".to_owned(),
                    input: serde_json::json!({"path": "/w/a"}),
                },
                AgentEvent::ToolComplete {
                    id: "t0".to_owned(),
                    name: "edit".to_owned(),
                    summary: "File /w/a updated with changes.".to_owned(),
                    is_error: false,
                },
                AgentEvent::TextDelta {
                    text: "Done.".to_owned()
                },
                AgentEvent::MessageComplete {
                    text: "Done.".to_owned()
                },
                AgentEvent::ContextWindow { fraction: 0.25 },
            ]
        );
    }

    /// A refused edit as the pinned CLI (1.0.102) prints it in this mode: no
    /// `permission.*` event, a `"denied"` completion naming why.
    const REFUSED_EDIT: &str = r#"{"type":"tool.execution_start","data":{"toolCallId":"t0","toolName":"edit","arguments":{"path":"/w/a.txt","old_str":"a","new_str":"b"},"toolTitle":"Editing file"}}
{"type":"tool.execution_complete","data":{"toolCallId":"t0","success":false,"error":{"message":"Permission denied because no interactive user response was available. Retry in an interactive session so the user can approve it, or try an alternative that does not require this permission.","code":"denied"}}}"#;

    fn stream_of(transcript: &str, asking: bool) -> (Stream, Vec<AgentEvent>) {
        let events = Mutex::new(Vec::new());
        let sink = |event: AgentEvent| events.lock().expect("not poisoned").push(event);
        let mut stream = Stream {
            asking,
            ..Stream::default()
        };
        for line in transcript.lines() {
            stream.handle(&serde_json::from_str(line).expect("valid"), &sink);
        }
        (stream, events.into_inner().expect("not poisoned"))
    }

    fn edit_ask() -> PermissionAsk {
        PermissionAsk {
            tool: "write".to_owned(),
            input: serde_json::json!({"tool": "edit", "arguments": {"path": "/w/a.txt", "old_str": "a", "new_str": "b"}}),
        }
    }

    #[test]
    fn a_refusal_nobody_decided_is_asked_and_a_decided_one_is_not() {
        let (mut stream, events) = stream_of(REFUSED_EDIT, true);
        assert!(events.contains(&AgentEvent::PermissionRequest {
            tool: "write".to_owned(),
            granted: false
        }));
        assert_eq!(
            stream.undecided(&mut Approvals::default()),
            Some(edit_ask())
        );
        assert_eq!(stream.undecided(&mut Approvals::default()), None, "once");

        // Answered (either way), or the kind allowed for the run: the refusal stands.
        for answer in [PermissionAnswer::Allow, PermissionAnswer::Deny] {
            let (mut stream, _) = stream_of(REFUSED_EDIT, true);
            let mut approvals = Approvals {
                tools: Vec::new(),
                answered: Some(Answered {
                    ask: edit_ask(),
                    answer,
                }),
            };
            assert_eq!(stream.undecided(&mut approvals), None, "{answer:?}");
        }
        let (mut stream, _) = stream_of(REFUSED_EDIT, false);
        assert_eq!(
            stream.undecided(&mut Approvals::default()),
            None,
            "only asked under `ask`"
        );

        // A refusal by a rule was decided by it; a call interrupted in an earlier process
        // (closed when its session resumes) is not this call's.
        let by_rule = REFUSED_EDIT.replace(
            "Permission denied because no interactive user response was available. Retry in an interactive session so the user can approve it, or try an alternative that does not require this permission.",
            "Permission to run this tool was denied due to the following rules: `write`",
        );
        let (mut stream, _) = stream_of(&by_rule, true);
        assert_eq!(stream.undecided(&mut Approvals::default()), None);
        let interrupted = r#"{"type":"tool.execution_complete","data":{"toolCallId":"t9","success":false,"error":{"message":"Tool execution was interrupted before a result was recorded.","code":"interrupted"}}}"#;
        let (_, events) = stream_of(interrupted, true);
        assert_eq!(events, []);
    }

    #[test]
    fn session_errors_are_classified() {
        let cases = [
            (
                r#"{"errorType":"rate_limit","message":"slow","statusCode":429}"#,
                "rate-limit",
            ),
            (r#"{"errorType":"server","statusCode":529}"#, "overloaded"),
            (r#"{"errorType":"server","statusCode":502}"#, "server-error"),
            (r#"{"errorType":"authentication","message":"no"}"#, "auth"),
            (
                r#"{"errorType":"authentication","message":"no","statusCode":403}"#,
                "auth",
            ),
            (r#"{"errorType":"bad_request","message":"no"}"#, "provider"),
        ];
        let credentials = Credentials::from_decl(
            NAME,
            &crate::providers::registry::test_decl("c", NAME),
            &crate::providers::Environment::default(),
        )
        .expect("no key");
        for (data, class) in cases {
            let data: Value = serde_json::from_str(data).expect("valid");
            assert_eq!(
                classify(&data, &credentials).class().name(),
                class,
                "{data}"
            );
        }
    }

    #[test]
    fn usage_sums_the_models_of_the_report() {
        let report = serde_json::json!({"modelMetrics": {
            "a": {"usage": {"inputTokens": 10, "outputTokens": 7, "cacheReadTokens": 1, "cacheWriteTokens": 2}},
            "b": {"usage": {"inputTokens": 5, "outputTokens": 1}}
        }});
        assert_eq!(
            usage_of(&report),
            Usage {
                input_tokens: 15,
                output_tokens: 8,
                cache_read_tokens: 1,
                cache_write_tokens: 2
            }
        );
    }
}
