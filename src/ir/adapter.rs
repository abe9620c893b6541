//! The catalogue of provider adapters: names, what each supports, and every option each
//! reads. `check` uses it to reject unknown adapters, unsupported features and misspelt or
//! mistyped options; `providers` implements each adapter and refuses the same options when
//! one is built (`providers::registry`), so the two cannot disagree.

use serde::Serialize;
use serde_json::Value;

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
    /// Can stop at a permission request for a person to answer (`permission="ask"`).
    pub asks_people: bool,
    /// Accepts `system=`.
    pub system_prompt: bool,
    /// Can resume a session (`session=`).
    pub sessions: bool,
    /// A fork's agent can continue the session it inherits without changing the
    /// original's (Claude Code's `--fork-session`, OpenCode's session fork; nothing is
    /// kept outside atomic for `in-process` and `replay`); otherwise it starts afresh.
    pub forks_sessions: bool,
    /// Its calls can run in a `sandbox`: every process of the call (the CLI, what it
    /// starts, custom tools, MCP servers) is started confined by atomic. Otherwise a
    /// sandboxed agent on it is refused (by `atomic check` and at run time), never run
    /// unconfined.
    pub sandboxes: bool,
    /// Accepts `max-turns=`.
    pub max_turns: bool,
    /// Needs `api-key-env=`: it has no key variable of its own to fall back on.
    pub needs_api_key: bool,
    /// Every `option` it reads.
    #[serde(skip)]
    pub options: &'static [AdapterOption],
    /// Accepts `env.NAME` options (a variable set in the child process it starts).
    pub env_options: bool,
    /// Without `permission=`, its agent cannot change files with its own tools (the
    /// backend's default refuses or does not offer them headless); tools granted by name
    /// still run.
    pub read_only_by_default: bool,
    /// A failing `agent.tool.before` hook refuses the tool before it runs (atomic runs the
    /// agent's tools); otherwise the hook sees the tool as it starts and cannot stop it.
    pub hooks_block_tools: bool,
    /// The commands its agent runs can read the model key from their environment: the
    /// backend offers no way to keep it from them (see the adapter's page).
    pub commands_see_key: bool,
    /// Who holds the model key `api-key-env=` names.
    #[serde(skip)]
    pub key_holder: KeyHolder,
    /// Its agent has tools of its own, run by the backend (an agent CLI's shell, edits,
    /// searches), rather than only the custom tools atomic runs or none.
    #[serde(skip)]
    pub own_tools: bool,
}

/// Who holds a provider's model key: atomic, or the agent's own process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyHolder {
    /// atomic: a model API's calls are atomic's own; an agent CLI gets a placeholder and
    /// talks to atomic's model gateway, which puts the key on each request.
    Atomic,
    /// atomic when `base-url=` names the model's endpoint; otherwise the agent (Copilot's
    /// GitHub token, used with several GitHub hosts).
    AtomicWithBaseUrl,
    /// atomic when the key's variable is one of [`KNOWN_WIRES`] (an ACP agent of any make);
    /// otherwise the agent.
    AtomicOnKnownWire,
    /// atomic when the endpoint of the provider's model is known (OpenCode: see
    /// [`opencode_model_endpoint`]) and no `base-url=` makes the key a server's password.
    /// `ProviderDecl::key_held` decides, for every holder.
    AtomicOnKnownModel,
    /// The agent.
    Agent,
}

/// Key variables whose base URL variable and public endpoint atomic knows: an agent reading
/// its key from one of these can be pointed at atomic's model gateway.
pub const KNOWN_WIRES: &[KnownWire] = &[
    KnownWire {
        key: "ANTHROPIC_API_KEY",
        base_url: "ANTHROPIC_BASE_URL",
        endpoint: "https://api.anthropic.com",
    },
    KnownWire {
        key: "GEMINI_API_KEY",
        base_url: "GOOGLE_GEMINI_BASE_URL",
        endpoint: "https://generativelanguage.googleapis.com",
    },
    KnownWire {
        key: "GOOGLE_API_KEY",
        base_url: "GOOGLE_GEMINI_BASE_URL",
        endpoint: "https://generativelanguage.googleapis.com",
    },
    KnownWire {
        key: "OPENAI_API_KEY",
        base_url: "OPENAI_BASE_URL",
        endpoint: "https://api.openai.com/v1",
    },
];

/// The model provider and endpoint an OpenCode model (`provider/model`) is served from:
/// the `baseURL` its `option "config"` gives that provider, else the provider's public API
/// (Anthropic's, OpenAI's). `None` when neither is known.
#[must_use]
pub fn opencode_model_endpoint(
    model: Option<&str>,
    config: Option<&Value>,
) -> Option<(String, String)> {
    let (provider, _) = model?.split_once('/')?;
    let config = opencode_config(config);
    let configured = config["provider"][provider]["options"]["baseURL"]
        .as_str()
        .map(str::to_owned);
    let public = match provider {
        "anthropic" => Some("https://api.anthropic.com/v1"),
        "openai" => Some("https://api.openai.com/v1"),
        _ => None,
    };
    configured
        .or_else(|| public.map(str::to_owned))
        .map(|endpoint| (provider.to_owned(), endpoint))
}

/// OpenCode's `option "config"` as JSON (a string holding it, or the object itself);
/// `Null` when absent or not JSON (the adapter reports that).
#[must_use]
pub fn opencode_config(option: Option<&Value>) -> Value {
    match option {
        Some(Value::String(text)) => serde_json::from_str(text).unwrap_or_default(),
        Some(value) => value.clone(),
        None => Value::Null,
    }
}

/// One of [`KNOWN_WIRES`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KnownWire {
    /// The variable the agent reads its key from.
    pub key: &'static str,
    /// The variable it reads its base URL from.
    pub base_url: &'static str,
    /// The public endpoint, when that variable is unset.
    pub endpoint: &'static str,
}

impl KnownWire {
    /// The wire whose key the agent reads from `variable`.
    #[must_use]
    pub fn of(variable: &str) -> Option<&'static Self> {
        KNOWN_WIRES.iter().find(|wire| wire.key == variable)
    }
}

/// One `option "name" value` an adapter reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AdapterOption {
    /// The option's name, kebab-case.
    pub name: &'static str,
    /// What its value must be.
    pub kind: OptionKind,
    /// Whether an agent may set it too (its value overrides the provider's for that agent);
    /// otherwise it belongs on the provider only.
    pub agent: bool,
}

/// What an option's value must be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OptionKind {
    /// A string.
    Text,
    /// One of these strings.
    Choice(&'static [&'static str]),
    /// A number.
    Number,
    /// A whole number of zero or more.
    Count,
    /// A whole number.
    Integer,
    /// `#true` or `#false`.
    Flag,
    /// A duration: `"30s"`, `"1m30s"`, or a whole number of milliseconds.
    Duration,
    /// A number of seconds, more than zero.
    Seconds,
    /// A list of strings: one comma-separated string, or a JSON array of strings.
    Names,
    /// A JSON object, or a string holding one.
    Json,
    /// A JSON array, or a string holding one.
    List,
    /// A string or a number, passed on as text.
    Scalar,
}

impl OptionKind {
    /// What the value must be, as a message says it.
    #[must_use]
    pub fn describe(self) -> String {
        match self {
            Self::Text => "a string".to_owned(),
            Self::Choice(choices) => {
                let quoted: Vec<String> = choices.iter().map(|c| format!("\"{c}\"")).collect();
                format!("one of {}", quoted.join(", "))
            }
            Self::Number => "a number".to_owned(),
            Self::Count => "a whole number of zero or more".to_owned(),
            Self::Integer => "a whole number".to_owned(),
            Self::Flag => "#true or #false".to_owned(),
            Self::Duration => "a duration such as \"30s\" or a number of milliseconds".to_owned(),
            Self::Seconds => "a number of seconds, more than zero".to_owned(),
            Self::Names => "a comma-separated string or a list of strings".to_owned(),
            Self::Json => "a JSON object (or a string holding one)".to_owned(),
            Self::List => "a JSON array (or a string holding one)".to_owned(),
            Self::Scalar => "a string or a number".to_owned(),
        }
    }

    /// Whether `value` is of this kind.
    #[must_use]
    pub fn accepts(self, value: &Value) -> bool {
        match (self, value) {
            (_, Value::Null) => true,
            (Self::Text, Value::String(_)) | (Self::Flag, Value::Bool(_)) => true,
            (Self::Choice(choices), Value::String(text)) => choices.contains(&text.as_str()),
            (Self::Number, Value::Number(_)) => true,
            (Self::Count, Value::Number(n)) => n.is_u64(),
            (Self::Integer, Value::Number(n)) => n.is_i64() || n.is_u64(),
            (Self::Duration, Value::Number(n)) => n.is_u64(),
            (Self::Duration, Value::String(text)) => is_duration(text),
            (Self::Seconds, Value::Number(n)) => n.as_f64().is_some_and(|secs| secs > 0.0),
            (Self::Names, Value::String(_)) => true,
            (Self::Names, Value::Array(items)) => items.iter().all(Value::is_string),
            (Self::Json, Value::Object(_)) => true,
            (Self::Json, Value::String(text)) => {
                serde_json::from_str::<Value>(text).is_ok_and(|value| value.is_object())
            }
            (Self::List, Value::Array(_)) => true,
            (Self::List, Value::String(text)) => {
                serde_json::from_str::<Value>(text).is_ok_and(|value| value.is_array())
            }
            (Self::Scalar, Value::String(_) | Value::Number(_)) => true,
            _ => false,
        }
    }
}

/// `"500ms"`, `"30s"`, `"1m30s"`…: digits and a unit, repeated.
fn is_duration(text: &str) -> bool {
    let mut rest = text.trim();
    if rest.is_empty() {
        return false;
    }
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        if digits == 0 {
            return false;
        }
        rest = &rest[digits..];
        let unit = rest
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(rest.len());
        if !matches!(&rest[..unit], "ms" | "s" | "m" | "h" | "d") {
            return false;
        }
        rest = &rest[unit..];
    }
    true
}

/// Why an option cannot be used where it is written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OptionProblem {
    /// The adapter reads no option of this name; the closest it reads, if any is close.
    Unknown {
        /// Every option the adapter reads here, for the help.
        known: Vec<&'static str>,
    },
    /// It belongs on the provider, not on an agent.
    ProviderOnly,
    /// The value is not of the option's kind.
    WrongKind(OptionKind),
}

impl AdapterInfo {
    /// What its agents cannot do, one sentence each, as the conformance kit asserts it
    /// against the real backend: shown by `atomic list adapters` and on the adapter's page.
    #[must_use]
    pub fn limits(&self) -> Vec<&'static str> {
        let mut limits = Vec::new();
        if !self.tools {
            limits.push("takes no `tools` list: its agent uses the backend's own tools");
        }
        if !self.permission_modes {
            limits.push(
                "takes no `permission=` modes: its agent's tools are the custom tools granted with `tools`, run by atomic",
            );
        } else if !self.asks_people {
            limits.push(
                "cannot stop to ask a person: `permission=\"ask\"` is refused by `atomic check`",
            );
        }
        if self.read_only_by_default {
            limits.push("read-only by default: without `permission=`, its agent changes no files");
        }
        if !self.hooks_block_tools {
            limits.push(
                "an `agent.tool.before` hook sees each tool as it starts but cannot stop it (the backend runs its tools)",
            );
        }
        if self.commands_see_key {
            limits.push(
                "the commands its agent runs can read the model key: the backend offers no way to keep it from them",
            );
        }
        if !self.sessions {
            limits.push("no resumed sessions (`session=`)");
        } else if !self.forks_sessions {
            limits.push(
                "a fork's agent starts its session afresh: the backend cannot fork the one it inherits",
            );
        }
        if !self.sandboxes {
            limits.push(
                "cannot run in a `sandbox` yet: a sandboxed agent on it is refused, never run unconfined",
            );
        }
        if !self.max_turns {
            limits.push("no turn limit (`max-turns=`)");
        }
        limits
    }

    /// The option `name`, if the adapter reads it.
    #[must_use]
    pub fn option(&self, name: &str) -> Option<&'static AdapterOption> {
        let name = name.replace('_', "-");
        self.options.iter().find(|option| option.name == name)
    }

    /// Whether option `name` with `value` may be set on a provider (`on_agent` false) or
    /// an agent of this adapter.
    ///
    /// # Errors
    /// What is wrong with it.
    pub fn check_option(
        &self,
        name: &str,
        value: &Value,
        on_agent: bool,
    ) -> Result<(), OptionProblem> {
        if self.env_options
            && !on_agent
            && name.strip_prefix("env.").is_some_and(|var| !var.is_empty())
        {
            return match value {
                Value::String(_) | Value::Number(_) | Value::Bool(_) => Ok(()),
                _ => Err(OptionProblem::WrongKind(OptionKind::Scalar)),
            };
        }
        let Some(option) = self.option(name) else {
            let known = self
                .options
                .iter()
                .filter(|option| option.agent || !on_agent)
                .map(|option| option.name)
                .collect();
            return Err(OptionProblem::Unknown { known });
        };
        if on_agent && !option.agent {
            return Err(OptionProblem::ProviderOnly);
        }
        if option.kind.accepts(value) {
            Ok(())
        } else {
            Err(OptionProblem::WrongKind(option.kind))
        }
    }
}

/// Shorthand for the tables below.
const fn opt(name: &'static str, kind: OptionKind, agent: bool) -> AdapterOption {
    AdapterOption { name, kind, agent }
}

use OptionKind::{
    Choice, Count, Duration, Flag, Integer, Json, List, Names, Number, Scalar, Seconds, Text,
};

/// The options of both model-API adapters; every one may also be set per agent.
macro_rules! chat_options {
    ($($extra:expr),* $(,)?) => {
        &[
            opt("max-tokens", Count, true),
            opt("temperature", Number, true),
            opt("top-p", Number, true),
            opt("stop", Names, true),
            opt("idle-timeout", Duration, true),
            opt("connect-timeout", Duration, true),
            opt("tool-timeout", Duration, true),
            opt("max-retries", Count, true),
            opt("max-retry-after", Duration, true),
            opt("price-input", Number, true),
            opt("price-output", Number, true),
            opt("price-cache-read", Number, true),
            opt("price-cache-write", Number, true),
            $($extra,)*
        ]
    };
}

const ANTHROPIC_OPTIONS: &[AdapterOption] = chat_options![
    opt("auth", Choice(&["x-api-key", "bearer"]), true),
    opt("top-k", Count, true),
    opt("thinking-budget", Count, true),
    opt("beta", Names, true),
];

const OPENAI_OPTIONS: &[AdapterOption] = chat_options![
    opt("max-completion-tokens", Count, true),
    opt("seed", Integer, true),
    opt("reasoning-effort", Text, true),
    opt("parallel-tool-calls", Flag, true),
    opt("stream-usage", Flag, true),
];

const CLAUDE_CODE_OPTIONS: &[AdapterOption] = &[
    opt("bin", Text, false),
    opt("pass-env", Names, false),
    opt("api-key-var", Text, false),
    opt(
        "effort",
        Choice(&["low", "medium", "high", "xhigh", "max"]),
        true,
    ),
    opt("max-budget-usd", Number, true),
    opt("fallback-model", Text, true),
    opt("settings", Text, true),
    opt("mcp-config", Text, true),
    opt("disallowed-tools", Scalar, true),
    opt("add-dir", Text, true),
    opt("strict-mcp-config", Flag, true),
];

const OPENCODE_OPTIONS: &[AdapterOption] = &[
    opt("bin", Text, false),
    opt("pass-env", Names, false),
    opt("config", Json, false),
    opt("startup-timeout", Seconds, false),
];

const COPILOT_OPTIONS: &[AdapterOption] = &[
    opt("bin", Text, false),
    opt("pass-env", Names, false),
    opt("api-key-var", Text, false),
    opt("provider-type", Text, false),
    opt("wire-api", Text, false),
    opt("offline", Flag, false),
];

const CODEX_OPTIONS: &[AdapterOption] = &[
    opt("bin", Text, false),
    opt("pass-env", Names, false),
    opt("codex-home", Text, false),
];

const GEMINI_OPTIONS: &[AdapterOption] = &[
    opt("bin", Text, false),
    opt("pass-env", Names, false),
    opt("home", Text, false),
];

const ACP_OPTIONS: &[AdapterOption] = &[opt("pass-env", Names, false)];

const COMMAND_OPTIONS: &[AdapterOption] = &[
    opt("pass-env", Names, false),
    opt("timeout", Duration, false),
];

const REPLAY_OPTIONS: &[AdapterOption] = &[
    opt("speed", Number, false),
    opt("match", Choice(&["prompt", "node"]), false),
];

const IN_PROCESS_OPTIONS: &[AdapterOption] = &[
    opt("latency", Duration, true),
    opt("reply", Text, true),
    opt("replies", List, true),
    opt("fail", Text, true),
    opt("fail-calls", Count, true),
    opt("asks", Text, true),
];

/// Every adapter atomic ships.
pub const ADAPTERS: &[AdapterInfo] = &[
    AdapterInfo {
        name: "anthropic",
        description: "Anthropic Messages API with streaming and tool use",
        tools: true,
        custom_tools: true,
        asks_people: false,
        permission_modes: false,
        system_prompt: true,
        sessions: false,
        forks_sessions: false,
        sandboxes: true,
        max_turns: true,
        options: ANTHROPIC_OPTIONS,
        env_options: false,
        needs_api_key: false,
        read_only_by_default: false,
        hooks_block_tools: true,
        commands_see_key: false,
        key_holder: KeyHolder::Atomic,
        own_tools: false,
    },
    AdapterInfo {
        name: "openai",
        description: "any OpenAI-compatible Chat Completions server (vLLM, llama.cpp, Ollama, gateways)",
        tools: true,
        custom_tools: true,
        asks_people: false,
        permission_modes: false,
        system_prompt: true,
        sessions: false,
        forks_sessions: false,
        sandboxes: true,
        max_turns: true,
        options: OPENAI_OPTIONS,
        env_options: false,
        needs_api_key: false,
        read_only_by_default: false,
        hooks_block_tools: true,
        commands_see_key: false,
        key_holder: KeyHolder::Atomic,
        own_tools: false,
    },
    AdapterInfo {
        name: "claude-code",
        description: "the Claude Code CLI in stream-json mode",
        tools: true,
        custom_tools: false,
        asks_people: true,
        permission_modes: true,
        system_prompt: true,
        sessions: true,
        forks_sessions: true,
        sandboxes: true,
        max_turns: true,
        options: CLAUDE_CODE_OPTIONS,
        env_options: true,
        needs_api_key: false,
        read_only_by_default: true,
        hooks_block_tools: true,
        commands_see_key: false,
        key_holder: KeyHolder::Atomic,
        own_tools: true,
    },
    AdapterInfo {
        name: "opencode",
        description: "an `opencode serve` server over HTTP and SSE",
        tools: true,
        custom_tools: false,
        asks_people: true,
        permission_modes: true,
        system_prompt: true,
        sessions: true,
        forks_sessions: true,
        sandboxes: true,
        max_turns: false,
        options: OPENCODE_OPTIONS,
        env_options: true,
        needs_api_key: false,
        read_only_by_default: false,
        hooks_block_tools: false,
        commands_see_key: false,
        key_holder: KeyHolder::AtomicOnKnownModel,
        own_tools: true,
    },
    AdapterInfo {
        name: "copilot",
        description: "the GitHub Copilot CLI",
        tools: true,
        custom_tools: false,
        asks_people: true,
        permission_modes: true,
        system_prompt: true,
        sessions: true,
        forks_sessions: false,
        sandboxes: true,
        max_turns: false,
        options: COPILOT_OPTIONS,
        env_options: true,
        needs_api_key: false,
        read_only_by_default: true,
        hooks_block_tools: false,
        commands_see_key: false,
        key_holder: KeyHolder::AtomicWithBaseUrl,
        own_tools: true,
    },
    AdapterInfo {
        name: "codex",
        description: "the OpenAI Codex CLI (`codex exec --json`)",
        tools: false,
        custom_tools: false,
        asks_people: false,
        permission_modes: true,
        system_prompt: true,
        sessions: true,
        forks_sessions: false,
        sandboxes: true,
        max_turns: false,
        options: CODEX_OPTIONS,
        env_options: true,
        needs_api_key: false,
        read_only_by_default: true,
        hooks_block_tools: false,
        commands_see_key: false,
        key_holder: KeyHolder::Atomic,
        own_tools: true,
    },
    AdapterInfo {
        name: "gemini",
        description: "the Gemini CLI in headless stream-json mode",
        tools: true,
        custom_tools: false,
        asks_people: false,
        permission_modes: true,
        system_prompt: true,
        sessions: true,
        forks_sessions: false,
        sandboxes: true,
        max_turns: false,
        options: GEMINI_OPTIONS,
        env_options: true,
        needs_api_key: true,
        read_only_by_default: true,
        hooks_block_tools: false,
        commands_see_key: false,
        key_holder: KeyHolder::Atomic,
        own_tools: true,
    },
    AdapterInfo {
        name: "acp",
        description: "any agent speaking the Agent Client Protocol on stdio (`command` starts it)",
        tools: true,
        custom_tools: false,
        asks_people: false,
        permission_modes: true,
        system_prompt: true,
        sessions: true,
        forks_sessions: false,
        sandboxes: true,
        max_turns: false,
        options: ACP_OPTIONS,
        env_options: true,
        needs_api_key: false,
        read_only_by_default: true,
        hooks_block_tools: false,
        commands_see_key: true,
        key_holder: KeyHolder::AtomicOnKnownWire,
        own_tools: true,
    },
    AdapterInfo {
        name: "command",
        description: "any executable: prompt on stdin, reply on stdout",
        tools: false,
        custom_tools: false,
        asks_people: false,
        permission_modes: false,
        system_prompt: false,
        sessions: false,
        forks_sessions: false,
        sandboxes: true,
        max_turns: false,
        options: COMMAND_OPTIONS,
        env_options: true,
        needs_api_key: false,
        read_only_by_default: false,
        hooks_block_tools: false,
        commands_see_key: false,
        key_holder: KeyHolder::Agent,
        own_tools: false,
    },
    AdapterInfo {
        name: "replay",
        description: "plays a recorded cassette back, for tests and offline demos",
        tools: true,
        custom_tools: false,
        asks_people: false,
        permission_modes: true,
        system_prompt: true,
        sessions: true,
        forks_sessions: true,
        sandboxes: true,
        max_turns: true,
        options: REPLAY_OPTIONS,
        env_options: false,
        needs_api_key: false,
        read_only_by_default: false,
        hooks_block_tools: false,
        commands_see_key: false,
        key_holder: KeyHolder::Atomic,
        own_tools: false,
    },
    AdapterInfo {
        name: "in-process",
        description: "an in-process echo model with configurable latency, for tests and benchmarks",
        tools: true,
        custom_tools: false,
        asks_people: true,
        permission_modes: true,
        system_prompt: true,
        sessions: true,
        forks_sessions: true,
        sandboxes: true,
        max_turns: true,
        options: IN_PROCESS_OPTIONS,
        env_options: false,
        needs_api_key: false,
        read_only_by_default: false,
        hooks_block_tools: false,
        commands_see_key: false,
        key_holder: KeyHolder::Atomic,
        own_tools: false,
    },
];

/// The adapter with this name.
#[must_use]
pub fn adapter_info(name: &str) -> Option<&'static AdapterInfo> {
    ADAPTERS.iter().find(|adapter| adapter.name == name)
}

/// The adapters that give their agent the `mcp` servers declared for it: the agent CLIs
/// (`claude-code`, …) in the CLI's own configuration; `anthropic` and `openai` by connecting
/// to each server for the call themselves (stdio or streamable HTTP) and offering its tools
/// to the model as `<server>__<tool>` (`providers::chat`). Kept apart from [`AdapterInfo`]
/// while adapters are added alongside.
pub const MCP_ADAPTERS: &[&str] = &[
    "claude-code",
    "opencode",
    "copilot",
    "anthropic",
    "openai",
    "codex",
    "gemini",
    "acp",
];

/// Whether adapter `name` plays a recording back (`replay`): its agents' `tools`, MCP
/// servers and permissions are those of the run it recorded, whatever adapter that was, so
/// they are not judged against its own row.
#[must_use]
pub fn plays_back(name: &str) -> bool {
    name == "replay"
}

/// Whether adapter `name` gives its agents MCP servers.
#[must_use]
pub fn takes_mcp(name: &str) -> bool {
    MCP_ADAPTERS.contains(&name)
}
