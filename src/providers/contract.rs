//! The provider trait and the types that cross it.

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::approvals::{Approvals, PermissionAsk};
use crate::ir::{ErrorClass, PermissionMode};

/// What an agent node asks of a provider: everything rendered, nothing secret.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct AgentRequest {
    /// The node's id (cassettes match calls by node id and call order).
    pub node_id: String,
    /// How many times this node has called its provider before in this run (0-based).
    pub call_index: u32,
    /// The rendered prompt.
    pub prompt: String,
    /// The rendered system prompt (appended to the backend's own where it has one).
    pub system: Option<String>,
    /// The model, resolved node → workflow → provider default.
    pub model: Option<String>,
    /// Tools granted: backend built-ins by name, or custom tools with a command.
    pub tools: Vec<ToolGrant>,
    /// The permission mode.
    pub permission: Option<PermissionMode>,
    /// Most model turns in a tool-use loop.
    pub max_turns: Option<u32>,
    /// A session to continue (an id from an earlier [`AgentReply::session_id`]).
    pub resume_session: Option<String>,
    /// Compact `resume_session` before the prompt (a node's `context action="compact"`
    /// reached its threshold). Only set for providers whose [`Provider::can_compact`] is true.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub compact: bool,
    /// The directory the agent works in.
    pub working_dir: PathBuf,
    /// Adapter options from the workflow (`option` children), as JSON.
    pub options: serde_json::Map<String, serde_json::Value>,
    /// The node's `retry`, which HTTP adapters apply to each model request; `None`: the
    /// provider's request retries (the SDKs' default unless it sets `max-retries`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry: Option<crate::providers::RetryPolicy>,
    /// The node's timeout: no wait for a retry may run past it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<Duration>,
    /// Where the call keeps its progress (the conversation after each round of tool
    /// calls), so a run resumed after a crash continues it instead of running its tools
    /// again. Set by the runtime; the HTTP adapters' tool loop uses it.
    #[serde(skip)]
    pub journal: Option<CallJournal>,
    /// The node's `budget-usd`: the most the call may spend. Backends that enforce a budget
    /// themselves get it (Claude Code's `--max-budget-usd`); every provider is wrapped to
    /// stop the call as soon as its streamed usage costs more (`providers::budget`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_usd: Option<f64>,
    /// What is left of the run's `limits max-budget-usd` when the call starts: the call is
    /// stopped the same way when it would spend more.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_budget_left_usd: Option<f64>,
    /// Asked before the agent's own tool calls run, by adapters where atomic runs them (the
    /// HTTP adapters' tool loop): a refusal stops the tool and the model is told why. Set
    /// by the runtime when the workflow has an `agent.tool.before` hook; not carried to
    /// another engine's worker.
    #[serde(skip)]
    pub tool_guard: Option<ToolGuard>,
    /// Under `permission="ask"`: what a person has decided about this agent's permission
    /// requests; anything undecided stops the call with
    /// [`ProviderError::AwaitingPermission`].
    #[serde(default, skip_serializing_if = "is_default")]
    pub approvals: Approvals,
    /// The MCP servers the agent is given (the workflow's and its own), for adapters that
    /// pass them in the agent's configuration; variables passed through are read by the
    /// adapter from its own environment, so no secret travels in the request.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mcp: Vec<crate::ir::McpServer>,
}

fn is_default<T: Default + PartialEq>(value: &T) -> bool {
    *value == T::default()
}

/// One tool call of an agent, as a [`ToolGuard`] is asked about it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ToolCheck {
    /// The backend's tool-call id.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// Its input.
    pub input: serde_json::Value,
}

/// What decides whether an agent's tool call may run: the runtime's `agent.tool.before`
/// hooks.
pub trait ToolGuardBackend: Send + Sync {
    /// `Ok(())` lets the call run; `Err(reason)` refuses it, `reason` being what the model
    /// is told.
    fn check<'a>(
        &'a self,
        call: &'a ToolCheck,
    ) -> Pin<Box<dyn Future<Output = Result<(), String>> + Send + 'a>>;
}

/// A call's tool guard (see [`AgentRequest::tool_guard`]).
#[derive(Clone)]
pub struct ToolGuard(pub std::sync::Arc<dyn ToolGuardBackend>);

impl ToolGuard {
    /// Asks whether `call` may run (no guard: it may).
    pub async fn allows(guard: Option<&Self>, call: &ToolCheck) -> Result<(), String> {
        match guard {
            Some(guard) => guard.0.check(call).await,
            None => Ok(()),
        }
    }
}

impl std::fmt::Debug for ToolGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ToolGuard")
    }
}

/// The storage behind a [`CallJournal`]: the runtime implements it over its checkpoint
/// store, keyed by the call.
pub trait JournalBackend: Send + Sync {
    /// What the call saved when it last ran, if anything.
    fn load(&self) -> Pin<Box<dyn Future<Output = Option<serde_json::Value>> + Send + '_>>;
    /// Saves the call's progress, durably when the future resolves.
    fn save(
        &self,
        progress: serde_json::Value,
    ) -> Pin<Box<dyn Future<Output = Result<(), String>> + Send + '_>>;
}

/// A call's progress journal (see [`AgentRequest::journal`]).
#[derive(Clone)]
pub struct CallJournal(pub std::sync::Arc<dyn JournalBackend>);

impl std::fmt::Debug for CallJournal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CallJournal")
    }
}

/// A tool an agent may use.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolGrant {
    /// The name the model sees.
    pub name: String,
    /// What it does (custom tools).
    pub description: Option<String>,
    /// JSON Schema of its arguments (custom tools).
    pub input_schema: Option<serde_json::Value>,
    /// The command that runs it (custom tools): argv, arguments arrive as JSON on stdin.
    pub command: Vec<String>,
    /// The longest one call may take (custom tools); the adapter's `tool-timeout` when
    /// `None`.
    #[serde(default)]
    pub timeout: Option<Duration>,
}

/// Token counts of one call (summed over its turns).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens not from cache.
    pub input_tokens: u64,
    /// Completion tokens.
    pub output_tokens: u64,
    /// Prompt tokens read from cache.
    pub cache_read_tokens: u64,
    /// Prompt tokens written to cache.
    pub cache_write_tokens: u64,
}

impl Usage {
    /// Adds another call's counts.
    pub fn add(&mut self, other: Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cache_read_tokens += other.cache_read_tokens;
        self.cache_write_tokens += other.cache_write_tokens;
    }
}

/// Everything a provider reports while a call runs: the unified event model. Adapters map
/// their wire events onto these; unknown wire events are skipped.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum AgentEvent {
    /// A session started (or was resumed).
    SessionStart {
        /// The backend's session id, if it has one.
        session_id: Option<String>,
        /// The model actually used.
        model: Option<String>,
    },
    /// A piece of the reply text.
    TextDelta {
        /// The text.
        text: String,
    },
    /// A piece of visible thinking.
    ThinkingDelta {
        /// The text.
        text: String,
    },
    /// One assistant message finished.
    MessageComplete {
        /// Its full text.
        text: String,
    },
    /// The agent started using a tool.
    ToolStart {
        /// The backend's tool-call id.
        id: String,
        /// The tool's name.
        name: String,
        /// Its input.
        input: serde_json::Value,
    },
    /// A tool finished.
    ToolComplete {
        /// The backend's tool-call id.
        id: String,
        /// The tool's name.
        name: String,
        /// A short summary of the result ([`tool_summary`]).
        summary: String,
        /// Whether the tool failed.
        is_error: bool,
    },
    /// The backend asked for permission; `granted` is what atomic answered.
    PermissionRequest {
        /// The tool asking.
        tool: String,
        /// The answer given per the node's permission mode.
        granted: bool,
    },
    /// A sub-agent started.
    SubagentStart {
        /// Its name.
        name: String,
    },
    /// A sub-agent finished.
    SubagentEnd {
        /// Its name.
        name: String,
    },
    /// Token usage so far (cumulative for the call).
    Usage {
        /// The counts.
        usage: Usage,
        /// Cost in USD where the backend reports or prices it.
        cost_usd: Option<f64>,
    },
    /// How full the context window is, where the backend exposes it.
    ContextWindow {
        /// Used fraction, 0..=1.
        fraction: f64,
    },
    /// The session ended.
    SessionEnd {
        /// The backend's session id, if it has one.
        session_id: Option<String>,
    },
}

/// The outcome of one call.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AgentReply {
    /// The final assistant text.
    pub text: String,
    /// The session id, for `session=` and resume.
    pub session_id: Option<String>,
    /// Token usage of the whole call.
    pub usage: Usage,
    /// Cost in USD, where known.
    pub cost_usd: Option<f64>,
    /// Turns taken.
    pub turns: u32,
}

/// Receives events while a call runs. Must not block.
pub trait EventSink: Send + Sync {
    /// Takes one event.
    fn emit(&self, event: AgentEvent);
}

impl<F: Fn(AgentEvent) + Send + Sync> EventSink for F {
    fn emit(&self, event: AgentEvent) {
        self(event);
    }
}

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

    /// Runs one call, streaming events into `events`, and returns the reply. Dropping the
    /// future cancels the call cleanly.
    fn run<'a>(
        &'a self,
        request: &'a AgentRequest,
        events: &'a dyn EventSink,
    ) -> ProviderFuture<'a>;
}

/// Why a call failed. Each maps to a `retry-on` class.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum ProviderError {
    /// 429; `retry_after` from the header when given.
    #[error("`{adapter}` is rate limited{}", retry_after.map(|d| format!(" (retry after {d:?})")).unwrap_or_default())]
    RateLimited {
        /// The adapter.
        adapter: &'static str,
        /// How long the server asked us to wait.
        retry_after: Option<Duration>,
    },
    /// 529 / 503 / an `overloaded_error`.
    #[error("`{adapter}` is overloaded")]
    Overloaded {
        /// The adapter.
        adapter: &'static str,
        /// How long the server asked us to wait.
        retry_after: Option<Duration>,
    },
    /// Another 5xx.
    #[error("`{adapter}` returned server error {status}: {message}")]
    Server {
        /// The adapter.
        adapter: &'static str,
        /// HTTP status.
        status: u16,
        /// What it said.
        message: String,
    },
    /// Could not connect, or the connection was reset.
    #[error("`{adapter}` could not be reached: {message}")]
    Network {
        /// The adapter.
        adapter: &'static str,
        /// The cause.
        message: String,
    },
    /// The stream ended before the reply was complete.
    #[error("`{adapter}` stream ended mid-reply: {message}")]
    StreamCut {
        /// The adapter.
        adapter: &'static str,
        /// The cause.
        message: String,
    },
    /// The backend did not answer in time.
    #[error("`{adapter}` timed out after {after:?}")]
    Timeout {
        /// The adapter.
        adapter: &'static str,
        /// The limit.
        after: Duration,
    },
    /// An agent CLI exited unsuccessfully.
    #[error("`{adapter}` exited with {}: {stderr}", code.map_or_else(|| "a signal".to_owned(), |c| format!("code {c}")))]
    ProcessExit {
        /// The adapter.
        adapter: &'static str,
        /// The exit code, `None` if killed by a signal.
        code: Option<i32>,
        /// The end of its stderr.
        stderr: String,
    },
    /// The backend answered something we could not understand.
    #[error("`{adapter}` sent a malformed reply: {message}")]
    BadOutput {
        /// The adapter.
        adapter: &'static str,
        /// What was wrong.
        message: String,
    },
    /// The backend refused the request (4xx other than 429).
    #[error("`{adapter}` rejected the request with status {status}: {message}")]
    Rejected {
        /// The adapter.
        adapter: &'static str,
        /// HTTP status (0 when not HTTP).
        status: u16,
        /// What it said.
        message: String,
    },
    /// The tool-use loop used its `max-turns` and the model still asked for tools.
    #[error(
        "`{adapter}` used all {max_turns} turns and the model still wants to call tools; raise `max-turns`"
    )]
    MaxTurns {
        /// The adapter.
        adapter: &'static str,
        /// The limit reached.
        max_turns: u32,
    },
    /// The backend refused the credentials (401) or their permissions (403). Never
    /// retried: waiting does not fix a key.
    #[error(
        "`{adapter}` refused the credentials (status {status}): {message}; {}",
        key_variable.as_deref().map_or_else(
            || "check the backend's login or key".to_owned(),
            |name| format!("check the API key in the environment variable `{name}`"),
        )
    )]
    Auth {
        /// The adapter.
        adapter: &'static str,
        /// HTTP status (401 or 403).
        status: u16,
        /// What the server said (the key redacted).
        message: String,
        /// The environment variable the key came from (its name, never its value).
        key_variable: Option<String>,
    },
    /// The backend asked to wait before a retry for longer than atomic may wait: the
    /// `max-retry-after` cap, or the time left before the node's timeout.
    #[error(
        "`{adapter}` asked to wait {} before retrying ({}), longer than {limit_why}",
        seconds(*asked),
        class.name()
    )]
    WaitTooLong {
        /// The adapter.
        adapter: &'static str,
        /// The class of the failure that asked (`rate-limit`, `overloaded`).
        class: ErrorClass,
        /// How long the server asked for.
        asked: Duration,
        /// What it exceeds, with its length: "the 60 s cap (provider option …)".
        limit_why: String,
    },
    /// A model request failed on every attempt its retry policy allowed; `last` is the
    /// final failure. The step is not retried again for it.
    #[error("{last} (gave up after {attempts} attempts)")]
    Exhausted {
        /// Attempts made.
        attempts: u32,
        /// The final failure.
        last: Box<ProviderError>,
    },
    /// The provider is misconfigured (missing key variable, missing CLI, bad cassette).
    #[error("`{adapter}` is misconfigured: {message}")]
    Config {
        /// The adapter.
        adapter: &'static str,
        /// What is wrong and how to fix it.
        message: String,
    },
    /// The call was stopped because what it spent passed the node's `budget-usd` or what
    /// was left of the run's `max-budget-usd` (see `providers::budget`).
    #[error("`{adapter}` call stopped: {message}")]
    OverBudget {
        /// The adapter.
        adapter: &'static str,
        /// What was spent, against which budget, and how to raise it.
        message: String,
    },
    /// Under `permission="ask"`, the agent asked for something nobody has decided yet: the
    /// adapter stopped it, and the run pauses for a person's answer (never retried, never
    /// routed to `on-error`).
    #[error("`{adapter}` stopped: the agent asks to use {}, which awaits a person's answer", ask.describe())]
    AwaitingPermission {
        /// The adapter.
        adapter: &'static str,
        /// What the agent asked for (boxed: it holds the tool's input, and every `Result`
        /// of a provider carries this error's size).
        ask: Box<PermissionAsk>,
        /// The session to continue once answered.
        session_id: Option<String>,
    },
    /// The run has no provider of this name (it was not declared, or not built).
    #[error("provider `{provider}` is not available to this run")]
    Unavailable {
        /// The provider's name.
        provider: String,
    },
    /// A failure on another engine's worker (a Temporal activity), carried across as what
    /// the runtime judges it by: its class, its text, the wait it asked for, and whether
    /// the adapter already retried it.
    #[error("{message}")]
    Remote {
        /// Its `retry-on` class.
        class: ErrorClass,
        /// The failure's text, as the worker's adapter wrote it.
        message: String,
        /// How long the backend asked to wait before a retry.
        retry_after: Option<Duration>,
        /// Whether the adapter retried it under the step's policy already.
        retried: bool,
    },
}

/// Named constructors, one per kind of failure, so an adapter says what happened and the
/// shape of the error is written once.
impl ProviderError {
    /// [`ProviderError::Config`]: the provider is misconfigured; `message` says how to fix it.
    pub fn config(adapter: &'static str, message: impl Into<String>) -> Self {
        Self::Config {
            adapter,
            message: message.into(),
        }
    }

    /// [`ProviderError::AwaitingPermission`]: `ask` needs a person's answer; the session
    /// to continue afterwards is `session_id`.
    pub fn awaiting_permission(
        adapter: &'static str,
        ask: PermissionAsk,
        session_id: Option<String>,
    ) -> Self {
        Self::AwaitingPermission {
            adapter,
            ask: Box::new(ask),
            session_id,
        }
    }

    /// [`ProviderError::Unavailable`]: the run has no provider `name`.
    pub fn unavailable(name: impl Into<String>) -> Self {
        Self::Unavailable {
            provider: name.into(),
        }
    }

    /// [`ProviderError::BadOutput`]: the backend answered something atomic cannot read.
    pub fn bad_output(adapter: &'static str, message: impl Into<String>) -> Self {
        Self::BadOutput {
            adapter,
            message: message.into(),
        }
    }

    /// [`ProviderError::Network`]: the backend could not be reached.
    pub fn network(adapter: &'static str, message: impl Into<String>) -> Self {
        Self::Network {
            adapter,
            message: message.into(),
        }
    }

    /// [`ProviderError::StreamCut`]: the stream ended before the reply was complete.
    pub fn stream_cut(adapter: &'static str, message: impl Into<String>) -> Self {
        Self::StreamCut {
            adapter,
            message: message.into(),
        }
    }

    /// [`ProviderError::Rejected`]: the backend refused the request (status 0: not HTTP).
    pub fn rejected(adapter: &'static str, status: u16, message: impl Into<String>) -> Self {
        Self::Rejected {
            adapter,
            status,
            message: message.into(),
        }
    }

    /// [`ProviderError::Server`]: a server error.
    pub fn server(adapter: &'static str, status: u16, message: impl Into<String>) -> Self {
        Self::Server {
            adapter,
            status,
            message: message.into(),
        }
    }

    /// [`ProviderError::Timeout`]: no answer within `after`.
    pub fn timeout(adapter: &'static str, after: Duration) -> Self {
        Self::Timeout { adapter, after }
    }

    /// [`ProviderError::ProcessExit`]: an agent CLI exited unsuccessfully.
    pub fn process_exit(
        adapter: &'static str,
        code: Option<i32>,
        stderr: impl Into<String>,
    ) -> Self {
        Self::ProcessExit {
            adapter,
            code,
            stderr: stderr.into(),
        }
    }

    /// [`ProviderError::OverBudget`]: the call was stopped for spending past a budget.
    pub fn over_budget(adapter: &'static str, message: impl Into<String>) -> Self {
        Self::OverBudget {
            adapter,
            message: message.into(),
        }
    }

    /// [`ProviderError::RateLimited`], with the wait the server asked for.
    pub fn rate_limited(adapter: &'static str, retry_after: Option<Duration>) -> Self {
        Self::RateLimited {
            adapter,
            retry_after,
        }
    }

    /// [`ProviderError::Overloaded`], with the wait the server asked for.
    pub fn overloaded(adapter: &'static str, retry_after: Option<Duration>) -> Self {
        Self::Overloaded {
            adapter,
            retry_after,
        }
    }
}

impl ProviderError {
    /// The `retry-on` class of this error.
    #[must_use]
    pub fn class(&self) -> ErrorClass {
        match self {
            Self::RateLimited { .. } => ErrorClass::RateLimit,
            Self::Overloaded { .. } => ErrorClass::Overloaded,
            Self::Server { .. } => ErrorClass::ServerError,
            Self::Network { .. } => ErrorClass::Network,
            Self::StreamCut { .. } => ErrorClass::StreamCut,
            Self::Timeout { .. } => ErrorClass::Timeout,
            Self::ProcessExit { .. } => ErrorClass::ProcessExit,
            Self::BadOutput { .. } => ErrorClass::BadOutput,
            Self::Auth { .. } => ErrorClass::Auth,
            Self::WaitTooLong { class, .. } => *class,
            Self::Exhausted { last, .. } => last.class(),
            Self::Remote { class, .. } => *class,
            Self::OverBudget { .. } => ErrorClass::Budget,
            Self::Rejected { .. }
            | Self::MaxTurns { .. }
            | Self::Config { .. }
            | Self::AwaitingPermission { .. }
            | Self::Unavailable { .. } => ErrorClass::Provider,
        }
    }

    /// Whether the adapter already retried this failure under the step's retry policy
    /// (so the step must not be run again for it).
    #[must_use]
    pub fn was_retried(&self) -> bool {
        matches!(
            self,
            Self::Exhausted { .. } | Self::WaitTooLong { .. } | Self::Remote { retried: true, .. }
        )
    }

    /// The delay the backend asked for before retrying, if any.
    #[must_use]
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            Self::RateLimited { retry_after, .. }
            | Self::Overloaded { retry_after, .. }
            | Self::Remote { retry_after, .. } => *retry_after,
            _ => None,
        }
    }
}

/// `1.5 s`, `120 s`: a wait as people read it.
fn seconds(duration: Duration) -> String {
    let value = duration.as_secs_f64();
    if value.fract() == 0.0 {
        format!("{value:.0} s")
    } else {
        format!("{value:.1} s")
    }
}

/// A tool result as [`AgentEvent::ToolComplete`] summarises it, the same for every adapter:
/// its first non-empty line, trimmed, cut at 120 characters (with `…`).
#[must_use]
pub fn tool_summary(text: &str) -> String {
    let line = text
        .lines()
        .map(str::trim)
        .find(|line| !line.is_empty())
        .unwrap_or_default();
    match line.char_indices().nth(120) {
        Some((end, _)) => format!("{}…", &line[..end]),
        None => line.to_owned(),
    }
}
