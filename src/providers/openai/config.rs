//! How an `openai` provider is configured: from its `provider` declaration and the
//! environment, then per call from the provider's options overlaid with the agent's.

use std::time::Duration;

use serde_json::{Map, Value};

use super::ADAPTER;
use crate::ir::ProviderDecl;
use crate::providers::ProviderError;
use crate::providers::chat::{Options, Pricing};
use crate::providers::http::RetrySettings;
use crate::providers::http::{ApiKey, base_url, require_key};

/// OpenAI's own endpoint, used when `base-url` is not given.
pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

/// A configured `openai` provider. `Debug` shows everything but the key.
#[derive(Clone, Debug)]
pub struct OpenAiConfig {
    /// `base-url=`, with or without a trailing `/v1`; default [`DEFAULT_BASE_URL`].
    pub base_url: reqwest::Url,
    /// The key, sent as `Authorization: Bearer`, when `api-key-env` names a variable.
    /// There is deliberately no default variable: an `OPENAI_API_KEY` picked up silently
    /// would be sent to whatever local server `base-url` names.
    pub api_key: Option<ApiKey>,
    /// The variable named by `api-key-env` (kept out of tool environments).
    pub api_key_env: Option<String>,
    /// `model=`: the model when the request names none.
    pub model: Option<String>,
    /// `option` children of the provider.
    pub options: Map<String, Value>,
}

impl OpenAiConfig {
    /// Reads a `provider … adapter="openai"` declaration; `env` looks variables up.
    pub fn from_decl(
        decl: &ProviderDecl,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Self, ProviderError> {
        let api_key_env = decl.api_key_env.as_ref().map(|name| name.value.clone());
        let api_key = match &api_key_env {
            Some(name) => Some(require_key(ADAPTER, name, env)?),
            None => None,
        };
        Ok(Self {
            base_url: base_url(
                ADAPTER,
                decl.base_url.as_ref().map(|url| url.value.as_str()),
                DEFAULT_BASE_URL,
            )?,
            api_key,
            api_key_env,
            model: decl.model.as_ref().map(|model| model.value.clone()),
            options: decl.options.clone(),
        })
    }
}

/// How one call is made.
#[derive(Clone, Debug)]
pub(super) struct CallSettings {
    pub(super) max_tokens: Option<u64>,
    pub(super) max_completion_tokens: Option<u64>,
    pub(super) temperature: Option<f64>,
    pub(super) top_p: Option<f64>,
    pub(super) seed: Option<i64>,
    pub(super) stop: Vec<String>,
    pub(super) reasoning_effort: Option<String>,
    pub(super) parallel_tool_calls: Option<bool>,
    pub(super) stream_usage: bool,
    pub(super) idle_timeout: Duration,
    pub(super) connect_timeout: Duration,
    pub(super) tool_timeout: Duration,
    pub(super) retry: RetrySettings,
    pub(super) pricing: Pricing,
}

impl CallSettings {
    /// The options of `provider` overlaid with those of `agent`; unknown ones are refused.
    pub(super) fn read(
        provider: &Map<String, Value>,
        agent: &Map<String, Value>,
    ) -> Result<Self, ProviderError> {
        let mut options = Options::new(ADAPTER, [provider, agent]);
        let settings = Self {
            max_tokens: options.u64("max-tokens")?,
            max_completion_tokens: options.u64("max-completion-tokens")?,
            temperature: options.f64("temperature")?,
            top_p: options.f64("top-p")?,
            seed: options.i64("seed")?,
            stop: options.strings("stop")?,
            reasoning_effort: options.string("reasoning-effort")?,
            parallel_tool_calls: options.bool("parallel-tool-calls")?,
            stream_usage: options.bool("stream-usage")?.unwrap_or(true),
            idle_timeout: options
                .duration("idle-timeout")?
                .unwrap_or(Duration::from_secs(300)),
            connect_timeout: options
                .duration("connect-timeout")?
                .unwrap_or(Duration::from_secs(30)),
            tool_timeout: options
                .duration("tool-timeout")?
                .unwrap_or(Duration::from_secs(600)),
            retry: options.retry_settings()?,
            pricing: Pricing::read(&mut options)?,
        };
        options.finish()?;
        Ok(settings)
    }
}
