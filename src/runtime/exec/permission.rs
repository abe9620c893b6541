//! `permission="ask"` in the runtime: an agent whose backend asked for something nobody has
//! decided pauses the run like a `wait` (its pending request recorded for `atomic runs
//! show` and `atomic resume`); the answer comes back through [`Recovery`] to the agent's
//! next call, which continues the backend's session with it.
//!
//! [`Recovery`]: crate::runtime::walk::Recovery

use std::sync::Arc;

use crate::providers::{Answered, Approvals, PermissionAnswer, PermissionAsk};
use crate::runtime::RunEvent;
use crate::runtime::shared::Shared;
use crate::runtime::walk::ScopePath;
use crate::store::{PendingWait, PermissionPause, WaitChoice};

/// How `atomic resume --wait` names the agent `id` in the block at `scope`.
fn key(scope: &ScopePath, id: &str) -> String {
    match scope.as_str() {
        Some(scope) => format!("{scope}/{id}"),
        None => id.to_owned(),
    }
}

/// What an asking agent's call may decide itself, and, when a person just answered its
/// request, the session to continue and the prompt that tells the agent the answer.
pub(super) struct Asking {
    pub(super) approvals: Approvals,
    pub(super) continuation: Option<Continuation>,
}

/// The call that continues a session paused at a permission request.
pub(super) struct Continuation {
    pub(super) session_id: Option<String>,
    pub(super) prompt: String,
}

/// The approvals of agent `id` (in the block at `scope`): the run's allowed tools, and the
/// answer `atomic resume` brought, recorded as an event (an `allow-run` answer adds its
/// tool to the run's).
pub(super) fn asking(shared: &Shared, scope: &ScopePath, id: &Arc<str>) -> Asking {
    let answered = shared.journal.recovery.take_permission(&key(scope, id));
    let mut tally = shared.tally();
    let Some((pause, answer)) = answered else {
        return Asking {
            approvals: Approvals {
                tools: tally.allowed_tools.clone(),
                answered: None,
            },
            continuation: None,
        };
    };
    // The grants held when it paused were never committed with a step.
    for tool in pause
        .allowed_tools
        .iter()
        .chain((answer == PermissionAnswer::AllowRun).then_some(&pause.tool))
    {
        if !tally.allowed_tools.contains(tool) {
            tally.allowed_tools.push(tool.clone());
        }
    }
    let tools = tally.allowed_tools.clone();
    drop(tally);
    shared.emit(RunEvent::PermissionAnswered {
        node: id.clone(),
        tool: pause.tool.clone(),
        input: pause.input.clone(),
        answer: answer.name().to_owned(),
    });
    let ask = PermissionAsk {
        tool: pause.tool,
        input: pause.input,
    };
    let prompt = continuation_prompt(&ask, answer, Asker::Workflow);
    Asking {
        approvals: Approvals {
            tools,
            answered: Some(Answered { ask, answer }),
        },
        continuation: Some(Continuation {
            session_id: pause.session_id,
            prompt,
        }),
    }
}

/// Who answered a permission request, for the words of [`continuation_prompt`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Asker {
    /// The person running a workflow (`atomic resume --answer`): a grant lasts the run.
    Workflow,
    /// The person chatting with the agent (`atomic chat`): a grant lasts the session.
    Chat,
}

/// What the agent is told when its session continues after `answer` to `ask`.
pub(crate) fn continuation_prompt(
    ask: &PermissionAsk,
    answer: PermissionAnswer,
    asker: Asker,
) -> String {
    let what = ask.describe();
    let (who, span) = match asker {
        Asker::Workflow => ("The person running this workflow", "run"),
        Asker::Chat => ("The person", "session"),
    };
    match answer {
        PermissionAnswer::Allow => format!(
            "{who} approved your request to use {what}. Make that call now, then carry on with the task."
        ),
        PermissionAnswer::AllowRun => format!(
            "{who} approved your request to use {what}, and `{}` for the rest of this {span}. Make that call now, then carry on with the task.",
            ask.tool
        ),
        PermissionAnswer::Deny => format!(
            "{who} refused your request to use {what}. Do not try it again; carry on with the task without it."
        ),
    }
}

/// The pause of agent `id` at `ask`, as the run records it.
pub(super) fn pending(
    shared: &Shared,
    scope: &ScopePath,
    id: &str,
    ask: PermissionAsk,
    session_id: Option<String>,
) -> PendingWait {
    PendingWait {
        node_id: id.to_owned(),
        header: None,
        prompt: format!("`{id}` asks to use {}", ask.describe()),
        answer: "choice".to_owned(),
        choices: PermissionAnswer::CHOICES
            .iter()
            .map(|(answer, label)| WaitChoice {
                value: answer.name().to_owned(),
                label: Some((*label).to_owned()),
                description: None,
            })
            .collect(),
        schema: None,
        auto_answer: None,
        auto_answer_at: None,
        scope: scope.as_str().map(str::to_owned),
        permission: Some(Box::new(PermissionPause {
            tool: ask.tool,
            input: ask.input,
            session_id,
            allowed_tools: shared.tally().allowed_tools.clone(),
        })),
    }
}
