//! One prompt turn as the agent reports it: `session/update` notifications mapped to
//! atomic's agent events, and the agent's requests (permission, files) answered.

use std::collections::HashMap;

use agent_client_protocol::v1::Responder;
use agent_client_protocol::v1::schema::{
    ContentBlock, ReadTextFileRequest, ReadTextFileResponse, RequestPermissionOutcome,
    RequestPermissionRequest, RequestPermissionResponse, SelectedPermissionOutcome,
    SessionNotification, SessionUpdate, ToolCallContent, ToolCallStatus, ToolKind,
    WriteTextFileRequest, WriteTextFileResponse,
};
use agent_client_protocol::{Error as AcpError, ErrorCode};
use serde_json::Value;

use super::super::todos::{self, PlanReport};
use super::super::{AgentEvent, EventSink, tool_summary};
use super::policy::Policy;

/// What reaches the call from the connection, in the order the agent sent it.
pub(super) enum Inbound {
    /// A `session/update` notification.
    Update(Box<SessionNotification>),
    /// `session/request_permission`.
    Permission(
        Box<RequestPermissionRequest>,
        Responder<RequestPermissionResponse>,
    ),
    /// `fs/read_text_file`.
    Read(ReadTextFileRequest, Responder<ReadTextFileResponse>),
    /// `fs/write_text_file`.
    Write(WriteTextFileRequest, Responder<WriteTextFileResponse>),
    /// The prompt is being sent: updates before this replayed a loaded session's history.
    Prompting,
}

/// The turn's progress.
#[derive(Debug, Default)]
pub(super) struct Turn {
    /// Updates are this call's (after [`Inbound::Prompting`]).
    live: bool,
    /// The agent message being streamed.
    current: String,
    /// Its id, when the agent gives message ids.
    current_id: Option<String>,
    /// The last complete agent message: the reply unless another follows.
    last_text: String,
    /// Tool call id → the name it is reported under (started tools).
    tools: HashMap<String, String>,
    /// Reported without its input yet: started once the input arrives (or anything else
    /// about it does), so `tool-start` carries what the tool was asked.
    pending: HashMap<String, (String, Value)>,
    /// Started and not yet completed → whether atomic refused it.
    open: HashMap<String, bool>,
    /// Model turns: one begins with the agent's first output, and with its first output
    /// after tool results (the contract's count).
    turns: u32,
    /// Output of the current turn was seen, and no tool result since.
    in_turn: bool,
    /// The session's cost, where the agent reports it (`usage_update`).
    pub(super) cost_usd: Option<f64>,
    /// The plans reported.
    plans: PlanReport,
}

impl Turn {
    /// Handles one message from the agent.
    pub(super) fn handle(&mut self, inbound: Inbound, policy: &Policy, events: &dyn EventSink) {
        match inbound {
            Inbound::Prompting => self.live = true,
            Inbound::Update(notification) if self.live => self.update(notification.update, events),
            Inbound::Update(_) => {}
            Inbound::Permission(request, responder) => {
                // What the agent said before asking is a message of its own.
                self.finish_message(events);
                let fields = &request.tool_call.fields;
                let kind = fields.kind.unwrap_or(ToolKind::Other);
                let allowed = policy.allows(&kind);
                let id = request.tool_call.tool_call_id.0.to_string();
                let tool = match self.tools.get(&id) {
                    Some(name) => name.clone(),
                    // Asked before it was reported (the Gemini CLI does), or reported
                    // without its input: it starts here.
                    None => {
                        let (name, fallback) = self.pending.remove(&id).unwrap_or_else(|| {
                            let name = fields
                                .name
                                .clone()
                                .or_else(|| fields.title.clone())
                                .unwrap_or_else(|| format!("{kind:?}").to_lowercase());
                            let fallback = described(fields.title.as_deref(), Some(&kind));
                            (name, fallback)
                        });
                        let input = fields.raw_input.clone().unwrap_or(fallback);
                        self.start_tool(id.clone(), name.clone(), input, events);
                        name
                    }
                };
                if !allowed {
                    // Refused: the agent may never report it again; the call's end
                    // completes it as refused unless the agent does.
                    self.open.insert(id, true);
                }
                events.emit(AgentEvent::PermissionRequest {
                    tool,
                    granted: allowed,
                });
                let outcome = match Policy::choose(allowed, &request.options) {
                    Some(id) => {
                        RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(id))
                    }
                    None => RequestPermissionOutcome::Cancelled,
                };
                let _ = responder.respond(RequestPermissionResponse::new(outcome));
            }
            Inbound::Read(request, responder) => {
                let _ = responder.respond_with_result(read(policy, &request));
            }
            Inbound::Write(request, responder) => {
                let _ = responder.respond_with_result(write(policy, &request));
            }
        }
    }

    fn update(&mut self, update: SessionUpdate, events: &dyn EventSink) {
        match update {
            SessionUpdate::AgentMessageChunk(chunk) => {
                self.begin_turn();
                let id = chunk.message_id.as_ref().map(|id| id.0.to_string());
                if id.is_some() && id != self.current_id {
                    self.finish_message(events);
                    self.current_id = id;
                }
                if let ContentBlock::Text(text) = chunk.content {
                    self.current.push_str(&text.text);
                    events.emit(AgentEvent::TextDelta { text: text.text });
                }
            }
            SessionUpdate::AgentThoughtChunk(chunk) => {
                self.begin_turn();
                if let ContentBlock::Text(text) = chunk.content {
                    events.emit(AgentEvent::ThinkingDelta { text: text.text });
                }
            }
            SessionUpdate::ToolCall(call) => {
                let id = call.tool_call_id.0.to_string();
                let finished = matches!(
                    call.status,
                    ToolCallStatus::Completed | ToolCallStatus::Failed
                );
                let name = match self.tools.get(&id) {
                    Some(name) => name.clone(),
                    None => {
                        let name = call.name.clone().unwrap_or_else(|| call.title.clone());
                        let fallback = described(Some(&call.title), Some(&call.kind));
                        match call.raw_input.clone() {
                            Some(input) => self.start_tool(id.clone(), name.clone(), input, events),
                            None if finished => {
                                self.start_tool(id.clone(), name.clone(), fallback, events);
                            }
                            None => {
                                self.pending.insert(id.clone(), (name.clone(), fallback));
                            }
                        }
                        name
                    }
                };
                if finished {
                    self.complete_tool(
                        id,
                        name,
                        summary(call.raw_output.as_ref(), &call.content),
                        call.status == ToolCallStatus::Failed,
                        events,
                    );
                }
            }
            SessionUpdate::ToolCallUpdate(update) => {
                let status = update.fields.status;
                let finished = matches!(
                    status,
                    Some(ToolCallStatus::Completed | ToolCallStatus::Failed)
                );
                let id = update.tool_call_id.0.to_string();
                // Its input arrived: a held tool starts now.
                if let Some(input) = update.fields.raw_input.clone()
                    && let Some((name, _)) = self.pending.remove(&id)
                {
                    self.start_tool(id.clone(), name, input, events);
                }
                if !finished {
                    return;
                }
                let name = match self.tools.get(&id) {
                    Some(name) => name.clone(),
                    // Finished before it was reported, or before its input was: it starts
                    // here, so every completion has its start.
                    None => {
                        let (name, fallback) = self.pending.remove(&id).unwrap_or_else(|| {
                            let name = update
                                .fields
                                .name
                                .clone()
                                .or(update.fields.title.clone())
                                .unwrap_or_default();
                            let fallback = described(
                                update.fields.title.as_deref(),
                                update.fields.kind.as_ref(),
                            );
                            (name, fallback)
                        });
                        let input = update.fields.raw_input.clone().unwrap_or(fallback);
                        self.start_tool(id.clone(), name.clone(), input, events);
                        name
                    }
                };
                self.complete_tool(
                    id,
                    name,
                    summary(
                        update.fields.raw_output.as_ref(),
                        update.fields.content.as_deref().unwrap_or_default(),
                    ),
                    status == Some(ToolCallStatus::Failed),
                    events,
                );
            }
            // The whole list each time (the protocol's rule), as atomic's plan is.
            SessionUpdate::Plan(plan) => {
                self.plans
                    .report(todos::from_acp_plan(&plan.entries), events);
            }
            SessionUpdate::UsageUpdate(usage) => {
                if usage.size > 0 {
                    #[allow(clippy::cast_precision_loss)]
                    let fraction = (usage.used as f64 / usage.size as f64).clamp(0.0, 1.0);
                    events.emit(AgentEvent::ContextWindow { fraction });
                }
                if let Some(cost) = usage.cost.filter(|cost| cost.currency == "USD") {
                    self.cost_usd = Some(cost.amount);
                }
            }
            _ => {}
        }
    }

    /// A tool call begins: what the agent said before it is a message of its own.
    fn start_tool(&mut self, id: String, name: String, input: Value, events: &dyn EventSink) {
        self.finish_message(events);
        self.begin_turn();
        self.tools.insert(id.clone(), name.clone());
        self.open.insert(id.clone(), false);
        events.emit(AgentEvent::ToolStart { id, name, input });
    }

    /// A started tool's result (once: a repeated report of it is not another completion).
    fn complete_tool(
        &mut self,
        id: String,
        name: String,
        summary: String,
        is_error: bool,
        events: &dyn EventSink,
    ) {
        if self.open.remove(&id).is_none() {
            return;
        }
        self.in_turn = false;
        events.emit(AgentEvent::ToolComplete {
            id,
            name,
            summary,
            is_error,
        });
    }

    /// Ends the turn's reporting: tools still held start, and every tool started and not
    /// completed is completed as an error — refused by atomic, or left without a result —
    /// so each `tool-start` has its `tool-complete`.
    pub(super) fn finish_tools(&mut self, events: &dyn EventSink) {
        let mut held: Vec<(String, (String, Value))> = self.pending.drain().collect();
        held.sort_by(|a, b| a.0.cmp(&b.0));
        for (id, (name, input)) in held {
            self.start_tool(id, name, input, events);
        }
        let mut open: Vec<(String, bool)> = self.open.drain().collect();
        open.sort();
        for (id, refused) in open {
            let name = self.tools.get(&id).cloned().unwrap_or_default();
            events.emit(AgentEvent::ToolComplete {
                id,
                name,
                summary: if refused {
                    "refused: the node's permission mode does not allow it".to_owned()
                } else {
                    "ended without a result".to_owned()
                },
                is_error: true,
            });
        }
    }

    /// Output of the agent: the start of a turn, unless one is under way.
    fn begin_turn(&mut self) {
        if !self.in_turn {
            self.in_turn = true;
            self.turns += 1;
        }
    }

    /// The model turns the call took (at least one: the prompt was answered).
    pub(super) fn turns(&self) -> u32 {
        self.turns.max(1)
    }

    /// Ends the message being streamed, if any.
    pub(super) fn finish_message(&mut self, events: &dyn EventSink) {
        if self.current.is_empty() {
            return;
        }
        let text = std::mem::take(&mut self.current);
        self.last_text.clone_from(&text);
        events.emit(AgentEvent::MessageComplete { text });
    }

    /// The reply: the last agent message.
    pub(super) fn reply_text(&self) -> &str {
        &self.last_text
    }
}

/// What a tool reported without its input was asked, as far as the report says: its title
/// and kind (never `null`).
fn described(title: Option<&str>, kind: Option<&ToolKind>) -> Value {
    let mut input = serde_json::Map::new();
    if let Some(title) = title.filter(|title| !title.is_empty()) {
        input.insert("title".to_owned(), Value::String(title.to_owned()));
    }
    if let Some(kind) = kind.and_then(|kind| serde_json::to_value(kind).ok()) {
        input.insert("kind".to_owned(), kind);
    }
    Value::Object(input)
}

/// A short summary of a tool's result: its raw output, else its text content.
fn summary(raw_output: Option<&Value>, content: &[ToolCallContent]) -> String {
    if let Some(output) = raw_output {
        return match output {
            Value::String(text) => tool_summary(text),
            other => tool_summary(&other.to_string()),
        };
    }
    let text: Vec<&str> = content
        .iter()
        .filter_map(|item| match item {
            ToolCallContent::Content(content) => match &content.content {
                ContentBlock::Text(text) => Some(text.text.as_str()),
                _ => None,
            },
            _ => None,
        })
        .collect();
    tool_summary(&text.join("\n"))
}

/// `fs/read_text_file`, inside the workspace; `line` is 1-based.
fn read(policy: &Policy, request: &ReadTextFileRequest) -> Result<ReadTextFileResponse, AcpError> {
    let path = policy.confine(&request.path).map_err(refused)?;
    let text = std::fs::read_to_string(&path).map_err(|error| match error.kind() {
        // The words agents recognise as a missing file (Gemini: "Resource not found").
        std::io::ErrorKind::NotFound => AcpError::new(
            ErrorCode::RESOURCE_NOT_FOUND,
            format!("Resource not found: {}", request.path.display()),
        ),
        _ => AcpError::new(ErrorCode::INTERNAL_ERROR, error.to_string()),
    })?;
    let skip = request
        .line
        .map_or(0, |line| line.saturating_sub(1) as usize);
    let content = match (skip, request.limit) {
        (0, None) => text,
        (skip, limit) => {
            let lines = text.split_inclusive('\n').skip(skip);
            match limit {
                Some(limit) => lines.take(limit as usize).collect(),
                None => lines.collect(),
            }
        }
    };
    Ok(ReadTextFileResponse::new(content))
}

/// `fs/write_text_file`, inside the workspace, when the node's mode allows edits.
fn write(
    policy: &Policy,
    request: &WriteTextFileRequest,
) -> Result<WriteTextFileResponse, AcpError> {
    if !policy.allows_writes() {
        return Err(refused(format!(
            "writing `{}` is not allowed: the node's permission mode does not allow edits",
            request.path.display()
        )));
    }
    let path = policy.confine(&request.path).map_err(refused)?;
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|error| AcpError::new(ErrorCode::INTERNAL_ERROR, error.to_string()))?;
    }
    std::fs::write(&path, &request.content)
        .map_err(|error| AcpError::new(ErrorCode::INTERNAL_ERROR, error.to_string()))?;
    Ok(WriteTextFileResponse::new())
}

fn refused(message: String) -> AcpError {
    AcpError::new(ErrorCode::INVALID_PARAMS, message)
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use serde_json::json;

    use super::*;
    use crate::providers::{AgentRequest, Todo, TodoStatus};

    fn update(update: Value) -> Inbound {
        let notification = json!({"sessionId": "sess-1", "update": update});
        Inbound::Update(Box::new(
            serde_json::from_value(notification).expect("a session/update"),
        ))
    }

    #[test]
    fn a_plan_update_is_the_whole_plan() {
        let events = Mutex::new(Vec::new());
        let sink = |event: AgentEvent| events.lock().expect("not poisoned").push(event);
        let policy = Policy::new(&AgentRequest::default()).expect("policy");
        let mut turn = Turn::default();
        let plan = |second: &str| {
            update(json!({"sessionUpdate": "plan", "entries": [
                {"content": "Read the spec", "priority": "high", "status": "completed"},
                {"content": "Write the client", "priority": "medium", "status": second},
                {"content": "", "priority": "low", "status": "pending"}
            ]}))
        };
        // Before the prompt, updates replay a loaded session: not this call's.
        turn.handle(plan("pending"), &policy, &sink);
        turn.handle(Inbound::Prompting, &policy, &sink);
        turn.handle(plan("in_progress"), &policy, &sink);
        turn.handle(plan("in_progress"), &policy, &sink);
        turn.handle(plan("completed"), &policy, &sink);
        let todo = |content: &str, status| Todo {
            content: content.to_owned(),
            status,
            active_form: None,
        };
        let expected = |second| AgentEvent::Plan {
            todos: vec![
                todo("Read the spec", TodoStatus::Completed),
                todo("Write the client", second),
            ],
        };
        assert_eq!(
            events.into_inner().expect("not poisoned"),
            [
                expected(TodoStatus::InProgress),
                expected(TodoStatus::Completed)
            ]
        );
    }
}
