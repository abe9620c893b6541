//! The agent the chat talks to: which adapter (`--provider`, else the project's `adapter`,
//! else `claude-code`), built the way a run builds its providers (one snapshot of the
//! environment, the project's prices, programs started by the process module), from a
//! declaration that names only the adapter: secrets come from the environment alone.

use std::path::PathBuf;
use std::sync::Arc;

use crate::ir::{ProviderDecl, adapter_info};
use crate::providers::{self, Environment, PriceTable, Provider, ProviderContext, ToolEnv};
use crate::source::{Span, Spanned};

use super::ChatError;

/// The adapter a chat talks to when neither `--provider` nor the project names one.
pub(super) const DEFAULT_ADAPTER: &str = "claude-code";

/// Adapters that hold a conversation: every agent CLI and model API (not `command`,
/// `replay` or `in-process`, which run fixed programs or scripts).
pub(super) const CHAT_ADAPTERS: &[&str] = &[
    "claude-code",
    "opencode",
    "codex",
    "copilot",
    "gemini",
    "acp",
    "anthropic",
    "openai",
];

/// Builds the provider for an adapter: the project's way in `atomic chat`, a scripted
/// one in tests.
pub(super) trait Backends: Send + Sync {
    /// The provider of `adapter`.
    ///
    /// # Errors
    /// An adapter the chat cannot talk to, or one that cannot be set up here.
    fn build(&self, adapter: &str) -> Result<Arc<dyn Provider>, ChatError>;
}

/// The project's providers: built as a run builds them.
pub(super) struct ProjectBackends {
    /// The one snapshot of the process environment.
    pub(super) env: Environment,
    /// The environment of what the agent's tools start: without provider keys.
    pub(super) tool_env: ToolEnv,
    /// The shipped prices with the project's overrides.
    pub(super) prices: Arc<PriceTable>,
    /// The project root (relative paths of a declaration start here).
    pub(super) root: PathBuf,
}

impl Backends for ProjectBackends {
    fn build(&self, adapter: &str) -> Result<Arc<dyn Provider>, ChatError> {
        check_adapter(adapter)?;
        let cx = ProviderContext {
            workflow_dir: &self.root,
            env: &self.env,
            recorder: None,
            tool_env: self.tool_env.clone(),
            prices: Arc::clone(&self.prices),
            spawner: crate::process::local(),
        };
        providers::build(&declaration_in(adapter, &self.env), &cx).map_err(|error| {
            ChatError::Provider {
                adapter: adapter.to_owned(),
                message: error.to_string(),
            }
        })
    }
}

/// Refuses an adapter atomic does not have, or one that cannot converse.
///
/// # Errors
/// [`ChatError::UnknownAdapter`] or [`ChatError::NotConversational`], listing the others.
pub(super) fn check_adapter(adapter: &str) -> Result<(), ChatError> {
    let known = CHAT_ADAPTERS.to_vec();
    if adapter_info(adapter).is_none() {
        return Err(ChatError::UnknownAdapter {
            name: adapter.to_owned(),
            known,
        });
    }
    if !CHAT_ADAPTERS.contains(&adapter) {
        return Err(ChatError::NotConversational {
            name: adapter.to_owned(),
            known,
        });
    }
    Ok(())
}

/// Whether a call on `adapter` continues a session the backend keeps; otherwise the chat
/// tells the agent the conversation so far itself.
pub(super) fn keeps_sessions(adapter: &str) -> bool {
    adapter_info(adapter).is_some_and(|info| info.sessions)
}

/// Whether `adapter` can stop at a permission request for the person to answer.
pub(super) fn asks_people(adapter: &str) -> bool {
    adapter_info(adapter).is_some_and(|info| info.asks_people)
}

/// A model API (its tools are atomic's custom tools): it answers nothing without a model.
///
/// # Errors
/// [`ChatError::NoModel`] for a model API without a model.
pub(super) fn check_model(adapter: &str, model: Option<&str>) -> Result<(), ChatError> {
    let model_api = adapter_info(adapter).is_some_and(|info| info.custom_tools);
    if model_api && model.is_none() {
        return Err(ChatError::NoModel {
            adapter: adapter.to_owned(),
            example: match adapter {
                "openai" => "gpt-4.1",
                _ => "claude-sonnet-4-5",
            },
        });
    }
    Ok(())
}

/// `provider "chat" adapter="<adapter>"`: the adapter's defaults.
pub(super) fn declaration(adapter: &str) -> ProviderDecl {
    ProviderDecl::bare("chat", adapter)
}

/// The variables an adapter's own tools read for their key and endpoint (`ANTHROPIC_API_KEY`
/// and `ANTHROPIC_BASE_URL` for Claude Code and the Anthropic API, …): the chat has no
/// workflow to declare them, so it reads them as those tools do.
const CONVENTIONAL: &[(&str, &str, &str)] = &[
    ("anthropic", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"),
    ("claude-code", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"),
    ("openai", "OPENAI_API_KEY", "OPENAI_BASE_URL"),
    ("codex", "OPENAI_API_KEY", "OPENAI_BASE_URL"),
    ("gemini", "GEMINI_API_KEY", "GOOGLE_GEMINI_BASE_URL"),
];

/// [`declaration`] with the adapter's conventional key and endpoint variables, where `env`
/// sets them: the key named (never copied), the endpoint as `base-url`.
pub(super) fn declaration_in(adapter: &str, env: &Environment) -> ProviderDecl {
    let mut decl = declaration(adapter);
    if let Some((_, key, base_url)) = CONVENTIONAL.iter().find(|(name, ..)| *name == adapter) {
        if env.get(key).is_some_and(|value| !value.is_empty()) {
            decl.api_key_env = Some(Spanned::new((*key).to_owned(), Span::default()));
        }
        if let Some(url) = env.get(base_url).filter(|url| !url.is_empty()) {
            decl.base_url = Some(Spanned::new(url.to_owned(), Span::default()));
        }
    }
    decl
}
