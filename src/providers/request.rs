//! [`AgentRequest`]: what an agent node asks of a provider, in parts, and the runtime's
//! hooks into a call (its tool guard, its progress journal).

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::approvals::Approvals;
use crate::ir::PermissionMode;
use crate::workspace::Workspace;

/// What an agent node asks of a provider: everything rendered, nothing secret. Grouped by
/// what each part is for, so a feature finds its place: which call this is, what the agent
/// is told, the session it continues, where it works, what it may do, what bounds it, and
/// the runtime's hooks into the call.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct AgentRequest {
    /// Which call this is.
    pub call: CallId,
    /// What the agent is told.
    pub prompt: Prompt,
    /// The model, resolved node → workflow → provider default.
    pub model: Option<String>,
    /// Adapter options from the workflow (`option` children), as JSON.
    pub options: serde_json::Map<String, serde_json::Value>,
    /// The session the call continues, if any.
    #[serde(default, skip_serializing_if = "is_default")]
    pub session: Continuation,
    /// Where the agent works.
    pub workspace: Workspace,
    /// What the agent may do.
    #[serde(default, skip_serializing_if = "is_default")]
    pub grants: Grants,
    /// What bounds the call.
    #[serde(default, skip_serializing_if = "is_default")]
    pub limits: Limits,
    /// The runtime's hooks into the call; not carried to another engine's worker.
    #[serde(skip)]
    pub hooks: CallHooks,
    /// The sandbox the call's processes run in (the agent CLI and all it starts, custom
    /// tools, MCP servers); `None`: unconfined. Held by the runtime for the call.
    #[serde(skip)]
    pub sandbox: Option<CallSandbox>,
}

/// How a sandboxed call's processes are started: confined so, with these variables (the
/// egress proxy, a private `TMPDIR`).
#[derive(Clone, Debug, Default)]
pub struct CallSandbox {
    /// The kernel's confinement.
    pub confinement: std::sync::Arc<crate::process::Confinement>,
    /// Added to each process's environment.
    pub env: Vec<(String, String)>,
    /// The step's private temp directory (its processes' `TMPDIR`): where a file the
    /// CLI writes for atomic goes.
    pub temp_dir: std::path::PathBuf,
    /// The loopback ports the step's proxy lets through: a process the call starts that
    /// listens for the others (atomic's model gateway) opens its port here.
    pub loopback: crate::sandbox::Loopback,
}

/// Which call a request is: cassettes match calls by node id and call order.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallId {
    /// The node's id.
    pub node_id: String,
    /// How many times this node has called its provider before in this run (0-based).
    pub index: u32,
}

/// What the agent is told.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Prompt {
    /// The rendered prompt.
    pub text: String,
    /// The rendered system prompt (appended to the backend's own where it has one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system: Option<String>,
}

/// The session a call continues.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Continuation {
    /// A session to continue (an id from an earlier [`AgentReply::session_id`](super::AgentReply::session_id)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume: Option<String>,
    /// Compact `resume` before the prompt (a node's `context action="compact"` reached its
    /// threshold). Only set for providers whose [`Provider::can_compact`](super::Provider::can_compact) is true.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub compact: bool,
    /// Continue a copy of `resume`, leaving the original as it was (a fork's agent going on
    /// from the session it inherited). Only set for adapters that can fork a session
    /// ([`AdapterInfo::forks_sessions`](crate::ir::AdapterInfo::forks_sessions)).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fork: bool,
}

/// What the agent may do: its permission mode, its tools, what a person decided, its MCP
/// servers.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Grants {
    /// The permission mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permission: Option<PermissionMode>,
    /// Tools granted: backend built-ins by name, or custom tools with a command.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<ToolGrant>,
    /// Under `permission="ask"`: what a person has decided about this agent's permission
    /// requests; anything undecided stops the call with
    /// [`ProviderError::AwaitingPermission`](super::ProviderError::AwaitingPermission).
    #[serde(default, skip_serializing_if = "is_default")]
    pub approvals: Approvals,
    /// The MCP servers the agent is given (the workflow's and its own), for adapters that
    /// pass them in the agent's configuration; variables passed through are read by the
    /// adapter from its own environment, so no secret travels in the request.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mcp: Vec<crate::ir::McpServer>,
}

/// What bounds a call: turns, time, retries, money.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Limits {
    /// Most model turns in a tool-use loop.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_turns: Option<u32>,
    /// The node's timeout: no wait for a retry may run past it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<Duration>,
    /// The node's `retry`, which HTTP adapters apply to each model request; `None`: the
    /// provider's request retries (the SDKs' default unless it sets `max-retries`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry: Option<crate::providers::RetryPolicy>,
    /// The node's `budget-usd`: the most the call may spend. Backends that enforce a budget
    /// themselves get it (Claude Code's `--max-budget-usd`); every provider is wrapped to
    /// stop the call as soon as its streamed usage costs more (`providers::budget`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_usd: Option<f64>,
    /// What is left of the run's `limits max-budget-usd` when the call starts: the call is
    /// stopped the same way when it would spend more.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_budget_left_usd: Option<f64>,
}

/// The runtime's hooks into a call: they live in this process and do not cross to another
/// engine's worker.
#[derive(Clone, Debug, Default)]
pub struct CallHooks {
    /// Where the call keeps its progress (the conversation after each round of tool
    /// calls), so a run resumed after a crash continues it instead of running its tools
    /// again. The HTTP adapters' tool loop uses it.
    pub journal: Option<CallJournal>,
    /// Asked before the agent's own tool calls run, by adapters where atomic runs them (the
    /// HTTP adapters' tool loop): a refusal stops the tool and the model is told why. Set
    /// when the workflow has an `agent.tool.before` hook.
    pub tool_guard: Option<ToolGuard>,
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

/// A call's tool guard (see [`CallHooks::tool_guard`]).
#[derive(Clone)]
pub struct ToolGuard(pub std::sync::Arc<dyn ToolGuardBackend>);

impl ToolGuard {
    /// What the model reads about the tool `name` the guard refused for `reason`.
    #[must_use]
    pub fn refusal(name: &str, reason: &str) -> String {
        let reason = reason.trim();
        if reason.is_empty() {
            format!("the tool call `{name}` was blocked by a hook")
        } else {
            format!("the tool call `{name}` was blocked by a hook: {reason}")
        }
    }

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

/// A call's progress journal (see [`CallHooks::journal`]).
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
