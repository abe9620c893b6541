//! The [`Provider`] trait: the one boundary between atomic and a model or coding agent.

use std::future::Future;
use std::pin::Pin;

use super::{AgentReply, AgentRequest, EventSink, ProviderError};

/// The future a provider call returns.
pub type ProviderFuture<'a> =
    Pin<Box<dyn Future<Output = Result<AgentReply, ProviderError>> + Send + 'a>>;

/// A backend that runs agent calls. Built once per `provider` declaration per run, shared
/// by every node that uses it (so it may keep a connection pool or a server process).
pub trait Provider: Send + Sync + std::fmt::Debug {
    /// The adapter name (`adapter="…"`).
    fn adapter(&self) -> &'static str;

    /// Whether the backend can compact a session it continues ([`AgentRequest::compact`]).
    /// The runtime starts a fresh session instead for those that cannot.
    fn can_compact(&self) -> bool {
        false
    }

    /// Whether a call only computes inside atomic's own process (no process, no network,
    /// no file), so running it again changes nothing outside: on Temporal such a call is a
    /// local activity on the workflow's worker, without the server's two round trips.
    fn is_instant(&self) -> bool {
        false
    }

    /// Runs one call, streaming events into `events`, and returns the reply. Dropping the
    /// future cancels the call cleanly.
    fn run<'a>(
        &'a self,
        request: &'a AgentRequest,
        events: &'a dyn EventSink,
    ) -> ProviderFuture<'a>;
}
