//! How an `anthropic` provider is configured: from its `provider` declaration and the
//! environment, then per call from the provider's options overlaid with the agent's.

use std::time::Duration;

use serde_json::{Map, Value};

use super::ADAPTER;
use crate::ir::ProviderDecl;
use crate::providers::ProviderError;
use crate::providers::chat::{Options, Pricing};
use crate::providers::http::RetrySettings;
use crate::providers::http::{ApiKey, base_url, require_key};

/// The Messages API's default host.
pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
/// The variable read when `api-key-env` is not given.
pub const DEFAULT_KEY_ENV: &str = "ANTHROPIC_API_KEY";

/// A configured `anthropic` provider. `Debug` shows everything but the key.
#[derive(Clone, Debug)]
pub struct AnthropicConfig {
    /// `base-url=`, default [`DEFAULT_BASE_URL`].
    pub base_url: reqwest::Url,
    /// The key, from the variable named by `api-key-env`.
    pub api_key: ApiKey,
    /// That variable's name (kept out of tool environments).
    pub api_key_env: String,
    /// `model=`: the model when the request names none.
    pub model: Option<String>,
    /// `option` children of the provider.
    pub options: Map<String, Value>,
}

impl AnthropicConfig {
    /// Reads a `provider … adapter="anthropic"` declaration; `env` looks variables up.
    pub fn from_decl(
        decl: &ProviderDecl,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Self, ProviderError> {
        let api_key_env = decl
            .api_key_env
            .as_ref()
            .map_or(DEFAULT_KEY_ENV, |name| name.value.as_str())
            .to_owned();
        Ok(Self {
            base_url: base_url(
                ADAPTER,
                decl.base_url.as_ref().map(|url| url.value.as_str()),
                DEFAULT_BASE_URL,
            )?,
            api_key: require_key(ADAPTER, &api_key_env, env)?,
            api_key_env,
            model: decl.model.as_ref().map(|model| model.value.clone()),
            options: decl.options.clone(),
        })
    }
}

/// How one call is made.
#[derive(Clone, Debug)]
pub(super) struct CallSettings {
    pub(super) max_tokens: u64,
    pub(super) temperature: Option<f64>,
    pub(super) top_p: Option<f64>,
    pub(super) top_k: Option<u64>,
    pub(super) stop: Vec<String>,
    pub(super) thinking_budget: Option<u64>,
    pub(super) beta: Vec<String>,
    pub(super) bearer: bool,
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
        let auth = options.string("auth")?;
        let bearer = match auth.as_deref() {
            None | Some("x-api-key") => false,
            Some("bearer") => true,
            Some(other) => {
                return Err(ProviderError::config(
                    ADAPTER,
                    format!("option `auth` must be \"x-api-key\" or \"bearer\", found `{other}`"),
                ));
            }
        };
        let settings = Self {
            max_tokens: options.u64("max-tokens")?.unwrap_or(8192),
            temperature: options.f64("temperature")?,
            top_p: options.f64("top-p")?,
            top_k: options.u64("top-k")?,
            stop: options.strings("stop")?,
            thinking_budget: options.u64("thinking-budget")?,
            beta: options.strings("beta")?,
            bearer,
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
