//! Providers: the one boundary between atomic and a model or coding agent. One trait
//! ([`Provider`]), one event model ([`AgentEvent`]), one error type ([`ProviderError`])
//! classified for `retry-on`, and one file per adapter.
//!
//! Cancellation is by drop: the runtime drops the future returned by [`Provider::run`]
//! when a node times out, loses a race, or the run is cancelled. Adapters must make drop
//! clean: HTTP requests are aborted by dropping them, child processes are spawned with
//! `kill_on_drop` in their own process group and the group is killed by a guard.

mod binary;
mod claude_code;
mod contract;
mod copilot;
mod env;
mod ndjson;
mod opencode;
mod process;

pub use claude_code::ClaudeCode;
pub use contract::{
    AgentEvent, AgentReply, AgentRequest, EventSink, Provider, ProviderError, ProviderFuture,
    ToolGrant, Usage,
};
pub use copilot::Copilot;
pub use env::{ChildEnv, Environment};
pub use opencode::OpenCode;
