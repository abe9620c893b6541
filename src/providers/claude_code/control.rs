//! Claude Code's control protocol under `permission="ask"`: its `can_use_tool` requests
//! answered from what a person decided, or the request the call pauses at.

use serde_json::{Value, json};

use super::stream::str_field;
use crate::providers::{AgentEvent, Approvals, EventSink, PermissionAsk, Verdict};

/// The answer to one `control_request` of the CLI: a `can_use_tool` request decided by the
/// call's approvals (reported as a permission event), or, when nobody has decided it, the
/// request to pause at. Any other request is refused, so the CLI never waits on atomic.
pub(super) fn control_response(
    line: &Value,
    approvals: &mut Approvals,
    events: &dyn EventSink,
) -> (Value, Option<PermissionAsk>) {
    let id = line.get("request_id").cloned().unwrap_or(Value::Null);
    let request = line.get("request").unwrap_or(&Value::Null);
    let success = |response: Value| json!({"type": "control_response", "response": {"subtype": "success", "request_id": id, "response": response}});
    if request.get("subtype").and_then(Value::as_str) != Some("can_use_tool") {
        let error = json!({"type": "control_response", "response": {"subtype": "error", "request_id": id, "error": "atomic does not handle this request"}});
        return (error, None);
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
        Verdict::Allow => (
            success(json!({"behavior": "allow", "updatedInput": input})),
            None,
        ),
        Verdict::Deny(message) => (
            success(json!({"behavior": "deny", "message": message, "interrupt": false})),
            None,
        ),
        Verdict::Ask => (Value::Null, Some(ask)),
    }
}
