//! A provider that plays a script, like Claude Code under `permission="ask"`: a step
//! stops at a request nobody decided, or replies; every request is kept.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use crate::providers::{
    AgentEvent, AgentReply, AgentRequest, EventSink, PermissionAsk, Provider, ProviderError,
    ProviderFuture, Usage,
};

/// One call's outcome.
pub(super) enum Step {
    /// Stop at this request, in this backend session.
    Pause(PermissionAsk, &'static str),
    /// Reply this, in this backend session.
    Reply(&'static str, &'static str),
}

/// The scripted provider.
#[derive(Debug, Default)]
pub(super) struct Scripted {
    steps: Mutex<VecDeque<StepBox>>,
    requests: Mutex<Vec<AgentRequest>>,
}

/// A step, kept `Debug` for the provider's bound.
struct StepBox(Step);

impl std::fmt::Debug for StepBox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Step")
    }
}

impl Scripted {
    pub(super) fn new(steps: Vec<Step>) -> Arc<Self> {
        Arc::new(Self {
            steps: Mutex::new(steps.into_iter().map(StepBox).collect()),
            requests: Mutex::default(),
        })
    }

    /// Every request, in order.
    pub(super) fn requests(&self) -> Vec<AgentRequest> {
        self.requests.lock().unwrap().clone()
    }
}

impl Provider for Scripted {
    fn adapter(&self) -> &'static str {
        "claude-code"
    }

    fn can_compact(&self) -> bool {
        true
    }

    fn run<'a>(
        &'a self,
        request: &'a AgentRequest,
        events: &'a dyn EventSink,
    ) -> ProviderFuture<'a> {
        Box::pin(async move {
            self.requests.lock().unwrap().push(request.clone());
            let step = self.steps.lock().unwrap().pop_front();
            match step.map(|step| step.0) {
                Some(Step::Pause(ask, session)) => {
                    // Like the CLI: a decided request would have been answered by the call.
                    assert!(
                        !request.grants.approvals.tools.contains(&ask.tool),
                        "an allowed tool is not asked again"
                    );
                    Err(ProviderError::awaiting_permission(
                        "claude-code",
                        ask,
                        Some(session.to_owned()),
                    ))
                }
                Some(Step::Reply(text, session)) => {
                    events.emit(AgentEvent::SessionStart {
                        session_id: Some(session.to_owned()),
                        model: None,
                    });
                    events.emit(AgentEvent::TextDelta {
                        text: text.to_owned(),
                    });
                    events.emit(AgentEvent::MessageComplete {
                        text: text.to_owned(),
                    });
                    Ok(AgentReply {
                        text: text.to_owned(),
                        session_id: Some(session.to_owned()),
                        usage: Usage::default(),
                        cost_usd: None,
                        turns: 1,
                    })
                }
                None => Err(ProviderError::config("claude-code", "the script ran out")),
            }
        })
    }
}
