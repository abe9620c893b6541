//! A test-only in-process provider: replies through a closure after an optional delay.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use atomic::providers::{
    AgentEvent, AgentReply, AgentRequest, EventSink, Provider, ProviderError, ProviderFuture, Usage,
};

type Reply = dyn Fn(&AgentRequest, u32) -> Result<String, ProviderError> + Send + Sync;

pub(crate) struct TestProvider {
    pub(crate) delay: Duration,
    pub(crate) cost: Option<f64>,
    reply: Arc<Reply>,
    pub(crate) calls: AtomicU32,
}

impl std::fmt::Debug for TestProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestProvider").finish_non_exhaustive()
    }
}

impl TestProvider {
    pub(crate) fn new(
        reply: impl Fn(&AgentRequest, u32) -> Result<String, ProviderError> + Send + Sync + 'static,
    ) -> Arc<Self> {
        Arc::new(Self {
            delay: Duration::ZERO,
            cost: None,
            reply: Arc::new(reply),
            calls: AtomicU32::new(0),
        })
    }

    pub(crate) fn with(
        delay: Duration,
        cost: Option<f64>,
        reply: impl Fn(&AgentRequest, u32) -> Result<String, ProviderError> + Send + Sync + 'static,
    ) -> Arc<Self> {
        Arc::new(Self {
            delay,
            cost,
            reply: Arc::new(reply),
            calls: AtomicU32::new(0),
        })
    }

    /// Echoes the prompt.
    pub(crate) fn echo() -> Arc<Self> {
        Self::new(|request, _| Ok(request.prompt.clone()))
    }
}

impl Provider for TestProvider {
    fn adapter(&self) -> &'static str {
        "in-process"
    }

    fn run<'a>(
        &'a self,
        request: &'a AgentRequest,
        events: &'a dyn EventSink,
    ) -> ProviderFuture<'a> {
        Box::pin(async move {
            let call = self.calls.fetch_add(1, Ordering::SeqCst);
            events.emit(AgentEvent::SessionStart {
                session_id: Some(format!("s{call}")),
                model: request.model.clone(),
            });
            if !self.delay.is_zero() {
                tokio::time::sleep(self.delay).await;
            }
            let text = (self.reply)(request, call)?;
            events.emit(AgentEvent::TextDelta { text: text.clone() });
            let usage = Usage {
                input_tokens: 10,
                output_tokens: 5,
                ..Usage::default()
            };
            events.emit(AgentEvent::Usage {
                usage,
                cost_usd: self.cost,
            });
            events.emit(AgentEvent::SessionEnd {
                session_id: Some(format!("s{call}")),
            });
            Ok(AgentReply {
                text,
                session_id: Some(format!("s{call}")),
                usage,
                cost_usd: self.cost,
                turns: 1,
            })
        })
    }
}
