//! A test-only in-process provider: replies through a closure after an optional delay. A
//! resumed call keeps its session id (as OpenCode and Copilot do); with [`TestProvider::windowed`]
//! each call reports a context-window fraction and every request is kept.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
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
    /// The fractions call `n` reports, in order (the last call's repeat); none when empty.
    fractions: Vec<Vec<f64>>,
    can_compact: bool,
    /// Every request received.
    pub(crate) requests: Mutex<Vec<AgentRequest>>,
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
        Self::with(Duration::ZERO, None, reply)
    }

    /// Echoes the prompt; call `n` reports each of `fractions[n]` of its context window in
    /// turn (a backend may report more than once a call; the last call's repeat) and can
    /// compact as said.
    pub(crate) fn windowed(fractions: &[&[f64]], can_compact: bool) -> Arc<Self> {
        Arc::new(Self {
            delay: Duration::ZERO,
            cost: None,
            reply: Arc::new(|request: &AgentRequest, _| Ok(request.prompt.text.clone())),
            calls: AtomicU32::new(0),
            fractions: fractions.iter().map(|call| call.to_vec()).collect(),
            can_compact,
            requests: Mutex::new(Vec::new()),
        })
    }

    /// The requests received so far.
    pub(crate) fn requests(&self) -> Vec<AgentRequest> {
        self.requests.lock().expect("requests lock").clone()
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
            fractions: Vec::new(),
            can_compact: false,
            requests: Mutex::new(Vec::new()),
        })
    }

    /// Echoes the prompt.
    pub(crate) fn echo() -> Arc<Self> {
        Self::new(|request, _| Ok(request.prompt.text.clone()))
    }
}

impl Provider for TestProvider {
    fn adapter(&self) -> &'static str {
        "in-process"
    }

    fn can_compact(&self) -> bool {
        self.can_compact
    }

    fn run<'a>(
        &'a self,
        request: &'a AgentRequest,
        events: &'a dyn EventSink,
    ) -> ProviderFuture<'a> {
        Box::pin(async move {
            let call = self.calls.fetch_add(1, Ordering::SeqCst);
            self.requests
                .lock()
                .expect("requests lock")
                .push(request.clone());
            let session = request
                .session
                .resume
                .clone()
                .unwrap_or_else(|| format!("s{call}"));
            events.emit(AgentEvent::SessionStart {
                session_id: Some(session.clone()),
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
            let readings = self.fractions.get(call as usize).or(self.fractions.last());
            for fraction in readings.into_iter().flatten() {
                events.emit(AgentEvent::ContextWindow {
                    fraction: *fraction,
                });
            }
            events.emit(AgentEvent::SessionEnd {
                session_id: Some(session.clone()),
            });
            Ok(AgentReply {
                text,
                session_id: Some(session),
                usage,
                cost_usd: self.cost,
                turns: 1,
            })
        })
    }
}
