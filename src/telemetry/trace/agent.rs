//! Agent calls and their tool calls as spans: opened by the provider wrapper (or the call's
//! first event), filled from the call's events, closed with the reply or the error.

use opentelemetry::KeyValue;
use opentelemetry::trace::{SpanKind, Status, TraceContextExt};
use serde_json::json;

use super::run::{Call, Failure, RunTrace, State, usage_attributes};
use crate::providers::{AgentEvent, AgentReply, AgentRequest, ProviderError};
use crate::telemetry::conventions as attr;

impl RunTrace {
    /// The open call of `node`'s latest open step, started if there is none yet.
    fn call<'s>(&self, state: &'s mut State, node: &str) -> Option<&'s mut Call> {
        let index = state.find(node, None)?;
        let step = &mut state.steps[index];
        if step.call.is_none() {
            let parent = step.attempt.as_ref().unwrap_or(&step.span);
            let span = self.start(
                parent,
                format!("invoke_agent {node}"),
                SpanKind::Client,
                vec![
                    KeyValue::new(attr::OPERATION, "invoke_agent"),
                    KeyValue::new(attr::AGENT_NAME, node.to_owned()),
                ],
            );
            step.call = Some(Call {
                span,
                tools: Vec::new(),
            });
        }
        step.call.as_mut()
    }

    /// An agent call is about to start (from the provider it goes through).
    pub(crate) fn call_started(&self, request: &AgentRequest, provider: &str, adapter: &str) {
        let mut state = self.state();
        if let Some(index) = state.find(&request.call.node_id, None) {
            // A call that was not ended (a dropped one) ends with its attempt.
            if let Some(call) = state.steps[index].call.take() {
                self.end_call(call, None);
            }
        }
        let Some(call) = self.call(&mut state, &request.call.node_id) else {
            return;
        };
        let span = call.span.span();
        let vendor = attr::provider_name(adapter).to_owned();
        span.set_attribute(KeyValue::new(attr::PROVIDER_NAME, vendor.clone()));
        span.set_attribute(KeyValue::new(attr::SYSTEM, vendor));
        span.set_attribute(KeyValue::new(attr::PROVIDER_DECL, provider.to_owned()));
        span.set_attribute(KeyValue::new(attr::ADAPTER, adapter.to_owned()));
        span.set_attribute(KeyValue::new(
            "atomic.call.index",
            i64::from(request.call.index),
        ));
        if let Some(model) = &request.model {
            span.set_attribute(KeyValue::new(attr::REQUEST_MODEL, model.clone()));
        }
        if self.capture {
            let messages = json!([{
                "role": "user",
                "parts": [{"type": "text", "content": self.redact(&request.prompt.text)}],
            }]);
            span.set_attribute(KeyValue::new(attr::INPUT_MESSAGES, messages.to_string()));
            if let Some(system) = &request.prompt.system {
                let instructions = json!([{"type": "text", "content": self.redact(system)}]);
                span.set_attribute(KeyValue::new(
                    attr::SYSTEM_INSTRUCTIONS,
                    instructions.to_string(),
                ));
            }
        }
    }

    /// An agent call ended.
    pub(crate) fn call_ended(&self, node: &str, result: Result<&AgentReply, &ProviderError>) {
        let mut state = self.state();
        let Some(index) = state.find(node, None) else {
            return;
        };
        let Some(call) = state.steps[index].call.take() else {
            return;
        };
        match result {
            Ok(reply) => {
                let span = call.span.span();
                for value in usage_attributes(reply.usage) {
                    span.set_attribute(value);
                }
                if let Some(cost) = reply.cost_usd {
                    span.set_attribute(KeyValue::new(attr::COST_USD, cost));
                }
                span.set_attribute(KeyValue::new(attr::TURNS, i64::from(reply.turns)));
                if let Some(session) = &reply.session_id {
                    span.set_attribute(KeyValue::new(attr::CONVERSATION_ID, session.clone()));
                }
                if self.capture {
                    let messages = json!([{
                        "role": "assistant",
                        "parts": [{"type": "text", "content": self.redact(&reply.text)}],
                        "finish_reason": "stop",
                    }]);
                    span.set_attribute(KeyValue::new(attr::OUTPUT_MESSAGES, messages.to_string()));
                }
                span.set_status(Status::Ok);
                self.end_call(call, None);
            }
            // A question for a person pauses the run; nothing failed.
            Err(ProviderError::AwaitingPermission { ask, .. }) => {
                call.span.span().add_event(
                    "atomic.permission.asked",
                    vec![KeyValue::new(attr::TOOL_NAME, ask.tool.clone())],
                );
                self.end_call(call, None);
            }
            Err(error) => {
                let message = error.to_string();
                let failure = Failure {
                    class: error.class().name(),
                    message: &message,
                };
                self.end_call(call, Some(&failure));
            }
        }
    }

    pub(super) fn agent_event(&self, state: &mut State, node: &str, event: &AgentEvent) {
        match event {
            AgentEvent::TextDelta { .. }
            | AgentEvent::ThinkingDelta { .. }
            | AgentEvent::MessageComplete { .. }
            | AgentEvent::Plan { .. }
            | AgentEvent::SessionEnd { .. } => {}
            AgentEvent::SessionStart { session_id, model } => {
                if let Some(call) = self.call(state, node) {
                    let span = call.span.span();
                    if let Some(model) = model {
                        span.set_attribute(KeyValue::new(attr::RESPONSE_MODEL, model.clone()));
                    }
                    if let Some(session) = session_id {
                        span.set_attribute(KeyValue::new(attr::CONVERSATION_ID, session.clone()));
                    }
                }
            }
            AgentEvent::ToolStart { id, name, input } => {
                let capture = self.capture.then(|| self.redact(&input.to_string()));
                if let Some(call) = self.call(state, node) {
                    let mut attributes = vec![
                        KeyValue::new(attr::OPERATION, "execute_tool"),
                        KeyValue::new(attr::TOOL_NAME, name.clone()),
                        KeyValue::new(attr::TOOL_CALL_ID, id.clone()),
                        KeyValue::new(attr::TOOL_TYPE, "function"),
                    ];
                    if let Some(arguments) = capture {
                        attributes.push(KeyValue::new(attr::TOOL_ARGUMENTS, arguments));
                    }
                    let span = self.start(
                        &call.span,
                        format!("execute_tool {name}"),
                        SpanKind::Internal,
                        attributes,
                    );
                    call.tools.push((id.clone(), span));
                }
            }
            AgentEvent::ToolComplete {
                id,
                summary,
                is_error,
                ..
            } => {
                let capture = self.capture.then(|| self.redact(summary));
                if let Some(call) = self.call(state, node)
                    && let Some(at) = call.tools.iter().position(|(open, _)| open == id)
                {
                    let (_, tool) = call.tools.remove(at);
                    let span = tool.span();
                    if let Some(result) = capture {
                        span.set_attribute(KeyValue::new(attr::TOOL_RESULT, result));
                    }
                    if *is_error {
                        span.set_attribute(KeyValue::new(attr::ERROR_TYPE, "tool_error"));
                        span.set_status(Status::error("the tool failed"));
                    } else {
                        span.set_status(Status::Ok);
                    }
                    span.end();
                }
            }
            AgentEvent::PermissionRequest { tool, granted } => {
                if let Some(call) = self.call(state, node) {
                    call.span.span().add_event(
                        "atomic.permission",
                        vec![
                            KeyValue::new(attr::TOOL_NAME, tool.clone()),
                            KeyValue::new("atomic.permission.granted", *granted),
                        ],
                    );
                }
            }
            AgentEvent::SubagentStart { name } | AgentEvent::SubagentEnd { name } => {
                let what = if matches!(event, AgentEvent::SubagentStart { .. }) {
                    "atomic.subagent.start"
                } else {
                    "atomic.subagent.end"
                };
                if let Some(call) = self.call(state, node) {
                    call.span.span().add_event(
                        what,
                        vec![KeyValue::new("atomic.subagent.name", name.clone())],
                    );
                }
            }
            AgentEvent::Usage { usage, cost_usd } => {
                if let Some(call) = self.call(state, node) {
                    let span = call.span.span();
                    for value in usage_attributes(*usage) {
                        span.set_attribute(value);
                    }
                    if let Some(cost) = cost_usd {
                        span.set_attribute(KeyValue::new(attr::COST_USD, *cost));
                    }
                }
            }
            AgentEvent::ContextWindow { fraction } => {
                if let Some(call) = self.call(state, node) {
                    call.span
                        .span()
                        .set_attribute(KeyValue::new("atomic.context.fraction", *fraction));
                }
            }
        }
    }

    pub(super) fn end_call(&self, call: Call, failure: Option<&Failure<'_>>) {
        for (_, tool) in call.tools {
            tool.span().end();
        }
        if let Some(failure) = failure {
            self.fail(&call.span, failure);
        }
        call.span.span().end();
    }
}
