//! Claude Code's control protocol: under `permission="ask"` its `can_use_tool` requests,
//! answered from what a person decided or the request the call pauses at (its
//! `AskUserQuestion` too: a question pauses like any request, and a question answered is
//! allowed with the answers in its `updatedInput`); with an
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
    // A question the person answered, asked again: allowed with the answers in its
    // input, which is how the CLI hands them to the agent.
    if let Some(answered) = approvals
        .answered
        .take_if(|answered| answered.answer.allows() && ask.is_answered_by(&answered.ask))
    {
        return ControlAnswer::Reply(success(
            json!({"behavior": "allow", "updatedInput": answered.ask.input}),
        ));
    }
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::providers::{Answered, AskedQuestion, PermissionAnswer};

    /// A `can_use_tool` request as Claude Code 2.1 writes it for `AskUserQuestion`.
    fn asking(question: &str) -> Value {
        json!({
            "type": "control_request",
            "request_id": "7f1c1f1e-1",
            "request": {
                "subtype": "can_use_tool",
                "tool_name": "AskUserQuestion",
                "input": {"questions": [
                    {"question": question, "header": "Library", "multiSelect": false,
                     "options": [
                        {"label": "dayjs", "description": "Small, immutable"},
                        {"label": "chrono", "description": "The Rust one"}]},
                    {"question": "Which features?", "header": "Features", "multiSelect": true,
                     "options": [{"label": "tz", "description": "Time zones"},
                                 {"label": "fmt", "description": "Formatting"}]}
                ]},
                "permission_suggestions": [],
                "tool_use_id": "toolu_01",
            },
        })
    }

    fn ignore(_: AgentEvent) {}

    #[test]
    fn a_question_pauses_and_reads_as_questions() {
        let mut approvals = Approvals::default();
        let ControlAnswer::Pause(ask) =
            control_response(&asking("Which library?"), &mut approvals, &ignore)
        else {
            panic!("a question nobody answered pauses the call");
        };
        let questions = ask.questions().expect("read as questions");
        assert_eq!(
            questions[0],
            AskedQuestion {
                header: Some("Library".to_owned()),
                question: "Which library?".to_owned(),
                options: vec![
                    ("dayjs".to_owned(), Some("Small, immutable".to_owned())),
                    ("chrono".to_owned(), Some("The Rust one".to_owned())),
                ],
                multi: false,
            }
        );
        assert!(questions[1].multi);
        assert_eq!(questions.len(), 2);
    }

    #[test]
    fn an_answered_question_asked_again_is_allowed_with_its_answers() {
        let mut approvals = Approvals::default();
        let ControlAnswer::Pause(ask) =
            control_response(&asking("Which library?"), &mut approvals, &ignore)
        else {
            panic!("paused");
        };
        let answered = ask.answered_with(&["dayjs".to_owned(), "tz, fmt".to_owned()]);
        let mut approvals = Approvals {
            tools: Vec::new(),
            answered: Some(Answered {
                ask: answered,
                answer: PermissionAnswer::Allow,
            }),
        };
        // Other questions are not answered by it.
        assert!(matches!(
            control_response(&asking("Which database?"), &mut approvals, &ignore),
            ControlAnswer::Pause(_)
        ));
        let ControlAnswer::Reply(reply) =
            control_response(&asking("Which library?"), &mut approvals, &ignore)
        else {
            panic!("answered");
        };
        let response = &reply["response"]["response"];
        assert_eq!(response["behavior"], "allow");
        assert_eq!(
            response["updatedInput"]["answers"],
            json!({"Which library?": "dayjs", "Which features?": "tz, fmt"})
        );
        assert_eq!(reply["response"]["request_id"], "7f1c1f1e-1");
        assert!(approvals.answered.is_none(), "used once");
    }
}
