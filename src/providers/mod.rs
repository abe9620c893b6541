//! Providers: the one boundary between atomic and a model or coding agent. One trait
//! ([`Provider`]), one event model ([`AgentEvent`]), one error type ([`ProviderError`])
//! classified for `retry-on`, and one file per adapter. [`build`] turns a `provider`
//! declaration into a provider.
//!
//! Cancellation is by drop: the runtime drops the future returned by [`Provider::run`]
//! when a node times out, loses a race, or the run is cancelled. Adapters must make drop
//! clean: HTTP requests are aborted by dropping them, child processes are spawned with
//! `kill_on_drop` in their own process group and the group is killed by a guard.
//!
//! Adapters that need no network or key: `replay` (recorded cassettes, format in
//! `cassette.rs`), `command` (any executable), `in-process` (a scripted model for tests and
//! benchmarks). `record.rs` wraps any provider to write cassettes (`atomic run --record`).

mod cassette;
mod command;
mod contract;
mod env;
mod in_process;
mod options;
mod process;
mod record;
mod redact;
mod registry;
mod replay;

pub use cassette::{
    CASSETTE_VERSION, CallOutcome, Cassette, CassetteCall, CassetteHeader, RecordedError,
    RecordedReply, RecordedUsage,
};
pub use command::CommandProvider;
pub use contract::{
    AgentEvent, AgentReply, AgentRequest, EventSink, Provider, ProviderError, ProviderFuture,
    ToolGrant, Usage,
};
pub use env::{ChildEnv, Environment};
pub use in_process::InProcess;
pub use record::{CassetteRecorder, Recording};
pub use redact::{REDACTED, Redactor};
pub use registry::{ProviderContext, build};
pub use replay::Replay;
