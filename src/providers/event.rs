//! The unified event model: what every provider reports while a call runs
//! ([`AgentEvent`]), and what a call returns ([`AgentReply`]). The order and cardinality
//! of events is part of the adapter contract (`contract.rs`).

use serde::{Deserialize, Serialize};

use super::todos::Todo;

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
    /// The agent's plan changed: its whole current todo list (Claude Code's `TodoWrite`,
    /// Codex's `update_plan`, ACP plan updates, …), normalised by `todos.rs`.
    Plan {
        /// Every item, in the agent's order.
        todos: Vec<Todo>,
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
