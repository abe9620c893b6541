//! [`ProviderError`]: why a call failed, each kind mapped to a `retry-on` class.

use std::time::Duration;

use super::approvals::PermissionAsk;
use crate::ir::ErrorClass;

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
