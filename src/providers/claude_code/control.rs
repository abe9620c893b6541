//! Claude Code's control protocol: under `permission="ask"` its `can_use_tool` requests,
//! answered from what a person decided or the request the call pauses at; with an
//! `agent.tool.before` hook, the `PreToolUse` hook callback atomic registers, answered by
//! the call's tool guard before the tool runs.

use serde_json::{Value, json};

use super::stream::str_field;
use crate::providers::agent_cli::GuardReply;
use crate::providers::{
    AgentEvent, Approvals, EventSink, PermissionAsk, ToolCheck, ToolGuard, Verdict,
};

/// The id of atomic's one hook callback.
const GUARD_CALLBACK: &str = "atomic-tool-guard";

/// The first line of a guarded call: registers a `PreToolUse` callback for every tool.
pub(super) fn initialize_with_guard() -> Value {
    json!({
        "type": "control_request",
        "request_id": "atomic-initialize",
        "request": {
            "subtype": "initialize",
            "hooks": {"PreToolUse": [{"matcher": null, "hookCallbackIds": [GUARD_CALLBACK]}]},
        },
    })
}

/// What to do about one `control_request` of the CLI.
pub(super) enum ControlAnswer {
    /// Write this line.
    Reply(Value),
    /// Nobody has decided: pause for a person.
    Pause(PermissionAsk),
    /// Ask the call's tool guard, then answer.
    Guard(ToolCheck, GuardReply),
}

/// The answer to one `control_request` of the CLI: a `can_use_tool` request decided by the
/// call's approvals (reported as a permission event), or, when nobody has decided it, the
/// request to pause at; atomic's hook callback, for the tool guard. Any other request is
/// refused, so the CLI never waits on atomic.
pub(super) fn control_response(
    line: &Value,
    approvals: &mut Approvals,
    events: &dyn EventSink,
) -> ControlAnswer {
    let id = line.get("request_id").cloned().unwrap_or(Value::Null);
    let request = line.get("request").unwrap_or(&Value::Null);
    let success = |response: Value| json!({"type": "control_response", "response": {"subtype": "success", "request_id": id, "response": response}});
    match request.get("subtype").and_then(Value::as_str) {
        Some("can_use_tool") => {}
        Some("hook_callback")
            if request.get("callback_id").and_then(Value::as_str) == Some(GUARD_CALLBACK) =>
        {
            return guard(&id, request);
        }
        _ => {
            let error = json!({"type": "control_response", "response": {"subtype": "error", "request_id": id, "error": "atomic does not handle this request"}});
            return ControlAnswer::Reply(error);
        }
    }
    let input = request.get("input").cloned().unwrap_or(Value::Null);
    let ask = PermissionAsk {
        tool: str_field(request, "tool_name").unwrap_or_default(),
        input: input.clone(),
    };
    let verdict = approvals.decide(&ask);
    if verdict != Verdict::Ask {
        events.emit(AgentEvent::PermissionRequest {
            tool: ask.tool.clone(),
            granted: verdict == Verdict::Allow,
        });
    }
    match verdict {
        Verdict::Allow => {
            ControlAnswer::Reply(success(json!({"behavior": "allow", "updatedInput": input})))
        }
        Verdict::Deny(message) => ControlAnswer::Reply(success(
            json!({"behavior": "deny", "message": message, "interrupt": false}),
        )),
        Verdict::Ask => ControlAnswer::Pause(ask),
    }
}

/// atomic's `PreToolUse` callback: the tool guard's verdict as the hook's permission
/// decision (a refusal stops the tool, in any permission mode, and tells the model why).
fn guard(id: &Value, request: &Value) -> ControlAnswer {
    let input = request.get("input").unwrap_or(&Value::Null);
    let check = ToolCheck {
        id: str_field(input, "tool_use_id")
            .or_else(|| str_field(request, "tool_use_id"))
            .unwrap_or_default(),
        name: str_field(input, "tool_name").unwrap_or_default(),
        input: input.get("tool_input").cloned().unwrap_or(Value::Null),
    };
    let (id, name) = (id.clone(), check.name.clone());
    let reply = GuardReply(Box::new(move |verdict: Result<(), String>| {
        let response = match verdict {
            Ok(()) => json!({}),
            Err(reason) => json!({
                "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecision": "deny",
                    "permissionDecisionReason": ToolGuard::refusal(&name, &reason),
                },
            }),
        };
        json!({"type": "control_response", "response": {"subtype": "success", "request_id": id, "response": response}})
    }));
    ControlAnswer::Guard(check, reply)
}
