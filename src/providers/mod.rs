//! Providers: the one boundary between atomic and a model or coding agent. One trait
//! ([`Provider`]), one event model ([`AgentEvent`]), one error type ([`ProviderError`])
//! classified for `retry-on`, and one written contract every adapter keeps
//! (`contract.rs`: event order and cardinality, what `turns` counts, the error class of
//! each HTTP status — `check_call` asserts it). [`build`] turns a `provider` declaration
//! into a provider. `todos.rs` is the agent's plan: one todo model for every backend's
//! list, and a normaliser per wire shape.
//!
//! Cancellation is by drop: the runtime drops the future returned by [`Provider::run`]
//! when a node times out, loses a race, or the run is cancelled. Adapters must make drop
//! clean: HTTP requests are aborted by dropping them; child processes are started through
//! `crate::process`, whose handle ends the child's whole process group when dropped.
//!
//! Adapters that need no network or key: `replay` (recorded cassettes, format in
//! `cassette.rs`), `command` (any executable), `in-process` (a scripted model for tests and
//! benchmarks). `record.rs` wraps any provider to write cassettes (`atomic run --record`).
//!
//! Model APIs over HTTP: `anthropic` (Messages API) and `openai` (any OpenAI-compatible
//! Chat Completions server), sharing `http/` (client, SSE, keys; statuses classified by the
//! contract) and `chat/` (the tool-use loop over custom tool commands, options, pricing).
//!
//! Budgets: every provider [`build`] makes is wrapped in `budget::Budgeted`, which prices
//! streamed usage (`prices.rs`: the shipped table `prices.json`, overridden in the project
//! config) and stops a call as soon as it passes its node's `budget-usd` or the run's
//! remaining `max-budget-usd`.
//!
//! Agent CLIs go through one driver, `agent_cli/` (launch, the child's environment and
//! where the key and base URL go, refusals read from `ir::AdapterInfo`, MCP servers with
//! one list of held-back secrets, the output loop, exit handling, redaction).
//! `claude_code/`, `copilot/`, `codex/` and `gemini/` are dialects holding only their wire
//! formats; `acp/` (any Agent Client Protocol agent, through the official SDK) and
//! `opencode/` (an `opencode serve` server over HTTP + SSE) have flows of their own on the
//! same launcher, credentials, refusals and classification. `binary.rs` finds a CLI,
//! `env.rs` builds a child's environment, `ndjson.rs` frames lines, `mcp_config.rs` renders
//! MCP servers in each CLI's form.

mod acp;
mod agent_cli;
pub mod anthropic;
mod approvals;
mod binary;
mod budget;
mod cassette;
mod chat;
mod child;
mod claude_code;
mod codex;
mod command;
mod contract;
mod copilot;
mod env;
mod error;
mod event;
mod gemini;
pub mod http;
mod in_process;
mod mcp_config;
mod ndjson;
pub mod openai;
mod opencode;
mod options;
mod prices;
mod provider;
mod record;
mod redact;
mod registry;
mod replay;
mod request;
mod retry;
mod todos;

pub use acp::Acp;
pub use approvals::{
    ASK_USER_QUESTION, Answered, Approvals, AskedQuestion, PermissionAnswer, PermissionAsk, Verdict,
};
pub use cassette::{
    CASSETTE_VERSION, CallOutcome, Cassette, CassetteCall, CassetteHeader, RecordedError,
    RecordedReply, RecordedUsage,
};
// The custom-tool runner of the tool loop, shared with `atomic mcp` (`crate::mcp`).
pub(crate) use chat::{ToolCall, ToolSet};
pub use command::CommandProvider;
pub use contract::{PAUSED_FOR_PERMISSION, Violation, check_call, error_for_status};
pub use env::{ChildEnv, Environment, ToolEnv};
pub use error::ProviderError;
pub use event::{AgentEvent, AgentReply, EventSink, Usage, tool_summary};
pub use in_process::InProcess;
pub use mcp_config::agent_mcp_servers;
pub use opencode::OpenCode;
pub use prices::{FoundPrice, PriceSource, PriceTable};
pub use provider::{Provider, ProviderFuture};
pub use record::{CassetteRecorder, Recording};
pub use redact::{REDACTED, Redactor};
pub use registry::{ProviderContext, build, build_adapter};
pub use replay::Replay;
pub use request::{
    AgentRequest, CallHooks, CallId, CallJournal, CallSandbox, Continuation, Grants,
    JournalBackend, Limits, Prompt, ToolCheck, ToolGrant, ToolGuard, ToolGuardBackend,
};
pub use retry::RetryPolicy;
pub use todos::{Todo, TodoStatus};
