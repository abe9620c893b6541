//! [`CliAgent`]: the [`Provider`] every agent-CLI adapter is, written once — a call runs
//! the adapter's flow, and every error it returns is scrubbed of the key.

use std::future::Future;

use super::credentials::Credentials;
use crate::providers::contract::ToolLedger;
use crate::providers::{
    AgentReply, AgentRequest, EventSink, Provider, ProviderError, ProviderFuture,
};

/// An adapter driving an agent's own program (or server): the driver's
/// [`CliProvider`](super::CliProvider), ACP, OpenCode. Each is a [`Provider`] through
/// this trait.
pub(crate) trait CliAgent: Send + Sync + std::fmt::Debug {
    /// `adapter="…"`.
    fn adapter(&self) -> &'static str;

    /// The provider's key, scrubbed from every error a call returns.
    fn credentials(&self) -> &Credentials;

    /// Whether it can compact a session it continues.
    fn can_compact(&self) -> bool {
        false
    }

    /// One call, as the adapter runs it.
    fn call<'a>(
        &'a self,
        request: &'a AgentRequest,
        events: &'a dyn EventSink,
    ) -> impl Future<Output = Result<AgentReply, ProviderError>> + Send + 'a;
}

impl<T: CliAgent> Provider for T {
    fn adapter(&self) -> &'static str {
        CliAgent::adapter(self)
    }

    fn can_compact(&self) -> bool {
        CliAgent::can_compact(self)
    }

    fn run<'a>(
        &'a self,
        request: &'a AgentRequest,
        events: &'a dyn EventSink,
    ) -> ProviderFuture<'a> {
        Box::pin(async move {
            let ledger = ToolLedger::new(events);
            let outcome = self.credentials().guard(self.call(request, &ledger)).await;
            ledger.close(&outcome);
            outcome
        })
    }
}
