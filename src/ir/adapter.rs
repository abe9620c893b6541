//! The catalogue of provider adapters: names and what each supports. `check` uses it to
//! reject unknown adapters and unsupported features; `providers` implements each one.

use serde::Serialize;

/// What an adapter can do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct AdapterInfo {
    /// `adapter="<name>"`.
    pub name: &'static str,
    /// One line for `atomic list` and hover.
    pub description: &'static str,
    /// Accepts `tools` (granted tool names / custom tools).
    pub tools: bool,
    /// Its `tools` are custom tools (`.atomic/tools/*.kdl`) that atomic runs for the model:
    /// the backend (a model API) has no built-in tools of its own.
    pub custom_tools: bool,
    /// Accepts `permission=` modes.
    pub permission_modes: bool,
    /// Accepts `system=`.
    pub system_prompt: bool,
    /// Can resume a session (`session=`).
    pub sessions: bool,
    /// Accepts `max-turns=`.
    pub max_turns: bool,
    /// Needs `api-key-env=`.
    pub needs_api_key: bool,
}

/// Every adapter atomic ships.
pub const ADAPTERS: &[AdapterInfo] = &[
    AdapterInfo {
        name: "anthropic",
        description: "Anthropic Messages API with streaming and tool use",
        tools: true,
        custom_tools: true,
        permission_modes: false,
        system_prompt: true,
        sessions: false,
        max_turns: true,
        needs_api_key: true,
    },
    AdapterInfo {
        name: "openai",
        description: "any OpenAI-compatible Chat Completions server (vLLM, llama.cpp, Ollama, gateways)",
        tools: true,
        custom_tools: true,
        permission_modes: false,
        system_prompt: true,
        sessions: false,
        max_turns: true,
        needs_api_key: false,
    },
    AdapterInfo {
        name: "claude-code",
        description: "the Claude Code CLI in stream-json mode",
        tools: true,
        custom_tools: false,
        permission_modes: true,
        system_prompt: true,
        sessions: true,
        max_turns: true,
        needs_api_key: false,
    },
    AdapterInfo {
        name: "opencode",
        description: "an `opencode serve` server over HTTP and SSE",
        tools: true,
        custom_tools: false,
        permission_modes: true,
        system_prompt: true,
        sessions: true,
        max_turns: false,
        needs_api_key: false,
    },
    AdapterInfo {
        name: "copilot",
        description: "the GitHub Copilot CLI",
        tools: true,
        custom_tools: false,
        permission_modes: true,
        system_prompt: true,
        sessions: true,
        max_turns: false,
        needs_api_key: false,
    },
    AdapterInfo {
        name: "command",
        description: "any executable: prompt on stdin, reply on stdout",
        tools: false,
        custom_tools: false,
        permission_modes: false,
        system_prompt: false,
        sessions: false,
        max_turns: false,
        needs_api_key: false,
    },
    AdapterInfo {
        name: "replay",
        description: "plays a recorded cassette back, for tests and offline demos",
        tools: true,
        custom_tools: false,
        permission_modes: true,
        system_prompt: true,
        sessions: true,
        max_turns: true,
        needs_api_key: false,
    },
    AdapterInfo {
        name: "in-process",
        description: "an in-process echo model with configurable latency, for tests and benchmarks",
        tools: true,
        custom_tools: false,
        permission_modes: true,
        system_prompt: true,
        sessions: true,
        max_turns: true,
        needs_api_key: false,
    },
];

/// The adapter with this name.
#[must_use]
pub fn adapter_info(name: &str) -> Option<&'static AdapterInfo> {
    ADAPTERS.iter().find(|adapter| adapter.name == name)
}
