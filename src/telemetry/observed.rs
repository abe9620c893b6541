//! A provider seen by the trace: each call opens its agent-call span with what only the
//! request knows (the provider, the requested model, the prompt when content is captured)
//! and closes it with the reply's usage, cost and text, or the error. Everything else is
//! passed through untouched.

use std::sync::Arc;

use super::trace::RunTrace;
use crate::providers::{AgentRequest, EventSink, Provider, ProviderFuture};

/// `inner`, declared as `name`, with its calls traced into `trace`.
pub(crate) struct Observed {
    pub(crate) name: String,
    pub(crate) inner: Arc<dyn Provider>,
    pub(crate) trace: Arc<RunTrace>,
}

impl std::fmt::Debug for Observed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.inner.fmt(f)
    }
}

impl Provider for Observed {
    fn adapter(&self) -> &'static str {
        self.inner.adapter()
    }

    fn can_compact(&self) -> bool {
        self.inner.can_compact()
    }

    fn is_instant(&self) -> bool {
        self.inner.is_instant()
    }

    fn run<'a>(
        &'a self,
        request: &'a AgentRequest,
        events: &'a dyn EventSink,
    ) -> ProviderFuture<'a> {
        self.trace
            .call_started(request, &self.name, self.inner.adapter());
        let call = self.inner.run(request, events);
        Box::pin(async move {
            let result = call.await;
            self.trace
                .call_ended(&request.call.node_id, result.as_ref());
            result
        })
    }
}
