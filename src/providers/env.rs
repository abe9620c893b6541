//! The environment a provider sees, and the environment it gives an agent CLI.
//!
//! Providers never read the process environment themselves: the CLI takes one snapshot
//! ([`Environment::from_process`]) and hands it over, so tests can build one by hand. A child
//! process gets a cleared environment plus only what it needs ([`ChildEnv`]): the variables
//! every program expects (`PATH`, `HOME`, locale, TLS and proxy settings), the adapter's own
//! non-secret settings, what the workflow lists with `option "pass-env" "A,B"` or sets with
//! `option "env.NAME" "value"`, and the one secret the provider names with `api-key-env=`.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fmt;

use serde_json::{Map, Value};

use super::ProviderError;

/// A snapshot of environment variables. `Debug` shows names only, never values.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Environment {
    vars: BTreeMap<String, String>,
}

impl Environment {
    /// The current process environment (variables that are not UTF-8 are skipped).
    #[must_use]
    pub fn from_process() -> Self {
        let vars = std::env::vars_os()
            .filter_map(|(name, value): (OsString, OsString)| {
                Some((name.into_string().ok()?, value.into_string().ok()?))
            })
            .collect();
        Self { vars }
    }

    /// Adds or replaces one variable.
    #[must_use]
    pub fn with(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.vars.insert(name.into(), value.into());
        self
    }

    /// The value of `name`.
    #[must_use]
    pub fn get(&self, name: &str) -> Option<&str> {
        self.vars.get(name).map(String::as_str)
    }

    /// Every variable, by name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.vars.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }
}

/// Variables that hold model-API keys and agent tokens by convention: a child that is not the
/// agent they are for never sees them.
const PROVIDER_KEY_VARIABLES: &[&str] = &[
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "CLAUDE_CODE_OAUTH_TOKEN",
    "OPENAI_API_KEY",
    "AZURE_OPENAI_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "GOOGLE_GENERATIVE_AI_API_KEY",
    "COPILOT_GITHUB_TOKEN",
    "OPENROUTER_API_KEY",
    "GROQ_API_KEY",
    "MISTRAL_API_KEY",
    "DEEPSEEK_API_KEY",
    "XAI_API_KEY",
    "OPENCODE_SERVER_PASSWORD",
];

impl Environment {
    /// The environment of every child that is not an agent CLI (tool nodes, custom tools
    /// run by an agent's tool loop, hooks): this one minus every provider key, that is the
    /// variables in `key_variables` (those the run's providers name with `api-key-env=`)
    /// and the well-known model-API key variables. A tool that needs one declares it
    /// (`env "NAME" "{{ env.NAME }}"`); an agent CLI gets its own key through [`ChildEnv`].
    #[must_use]
    pub fn without_provider_keys<'a>(
        &self,
        key_variables: impl IntoIterator<Item = &'a str>,
    ) -> Self {
        let mut vars = self.vars.clone();
        for name in PROVIDER_KEY_VARIABLES.iter().copied().chain(key_variables) {
            vars.remove(name);
        }
        Self { vars }
    }
}

/// Where the custom tools an agent's tool loop runs (and the MCP servers it starts) get
/// their environment, what starts them, and the secrets redacted from what they print
/// before it goes to the model.
#[derive(Clone, Debug)]
pub struct ToolEnv {
    /// Their environment, replacing atomic's own ([`Environment::without_provider_keys`]).
    pub env: Environment,
    /// The secrets of the run.
    pub redactor: super::Redactor,
    /// Starts them.
    pub spawner: std::sync::Arc<dyn crate::process::Spawner>,
    /// The sandbox of the call they serve, if it has one.
    pub sandbox: Option<super::CallSandbox>,
}

impl ToolEnv {
    /// The same, for a call of `request` (its sandbox).
    #[must_use]
    pub fn for_call(&self, request: &super::AgentRequest) -> Self {
        Self {
            sandbox: request.sandbox.clone(),
            ..self.clone()
        }
    }

    /// `launch` as the call's sandbox starts it (unchanged without one).
    #[must_use]
    pub fn confine(&self, launch: crate::process::Launch) -> crate::process::Launch {
        match &self.sandbox {
            Some(sandbox) => launch
                .envs(sandbox.env.iter().cloned())
                .confined(Some(std::sync::Arc::clone(&sandbox.confinement))),
            None => launch,
        }
    }
}

impl Default for ToolEnv {
    fn default() -> Self {
        Self {
            env: Environment::default(),
            redactor: super::Redactor::default(),
            spawner: crate::process::local(),
            sandbox: None,
        }
    }
}

impl fmt::Debug for Environment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.vars.keys()).finish()
    }
}

/// Variables every child gets when set: what a program needs to find things, write
/// files, speak the user's locale and reach the network through the user's proxy.
const BASE_PASSTHROUGH: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "TMPDIR",
    "TZ",
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_CTYPE",
    "LC_MESSAGES",
    "TERM",
    "NO_COLOR",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_CACHE_HOME",
    "XDG_STATE_HOME",
    "XDG_RUNTIME_DIR",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "NODE_EXTRA_CA_CERTS",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
];

/// The environment of one agent CLI child, built from an [`Environment`].
#[derive(Clone, Default, PartialEq, Eq)]
pub struct ChildEnv {
    vars: BTreeMap<String, String>,
}

impl ChildEnv {
    /// Starts from the base variables of `env`, then the adapter's non-secret settings:
    /// every variable named in `names`, or starting with one of `prefixes`, except those
    /// named in `secrets` (which only `api-key-env=` may supply).
    #[must_use]
    pub fn new(env: &Environment, names: &[&str], prefixes: &[&str], secrets: &[&str]) -> Self {
        let vars = env
            .iter()
            .filter(|(name, _)| {
                BASE_PASSTHROUGH.contains(name)
                    || ((names.contains(name)
                        || prefixes.iter().any(|prefix| name.starts_with(prefix)))
                        && !secrets.contains(name))
            })
            .map(|(name, value)| (name.to_owned(), value.to_owned()))
            .collect();
        Self { vars }
    }

    /// Applies the workflow's settings from the provider's options: `pass-env` (a comma
    /// list, or an array, of variable names copied from `env`) and `env.NAME` (a literal
    /// value).
    ///
    /// # Errors
    /// A `pass-env` or `env.NAME` option of the wrong type.
    pub fn apply_options(
        &mut self,
        adapter: &'static str,
        env: &Environment,
        options: &Map<String, Value>,
    ) -> Result<(), ProviderError> {
        if let Some(pass) = options.get("pass-env") {
            let names: Vec<String> = match pass {
                Value::String(list) => list
                    .split(',')
                    .map(str::trim)
                    .filter(|name| !name.is_empty())
                    .map(str::to_owned)
                    .collect(),
                Value::Array(items) => items
                    .iter()
                    .filter_map(|item| item.as_str().map(str::to_owned))
                    .collect(),
                _ => {
                    return Err(config(
                        adapter,
                        "option `pass-env` must be a comma-separated list of variable names",
                    ));
                }
            };
            for name in names {
                if let Some(value) = env.get(&name) {
                    self.vars.insert(name, value.to_owned());
                }
            }
        }
        for (key, value) in options {
            let Some(name) = key.strip_prefix("env.") else {
                continue;
            };
            let value = match value {
                Value::String(text) => text.clone(),
                Value::Number(number) => number.to_string(),
                Value::Bool(flag) => flag.to_string(),
                _ => {
                    return Err(config(
                        adapter,
                        &format!("option `{key}` must be a string, number or boolean"),
                    ));
                }
            };
            self.vars.insert(name.to_owned(), value);
        }
        Ok(())
    }

    /// Sets one variable.
    pub fn set(&mut self, name: impl Into<String>, value: impl Into<String>) {
        self.vars.insert(name.into(), value.into());
    }

    /// Sets `name` unless it is already set.
    pub fn set_default(&mut self, name: &str, value: &str) {
        self.vars
            .entry(name.to_owned())
            .or_insert_with(|| value.to_owned());
    }

    /// The value of `name`.
    #[must_use]
    pub fn get(&self, name: &str) -> Option<&str> {
        self.vars.get(name).map(String::as_str)
    }

    /// Every variable.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.vars.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }
}

impl fmt::Debug for ChildEnv {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.vars.keys()).finish()
    }
}

/// Reads the secret the provider names with `api-key-env=`.
///
/// # Errors
/// The variable is named but unset or empty.
pub(crate) fn api_key(
    adapter: &'static str,
    env: &Environment,
    api_key_env: Option<&str>,
) -> Result<Option<String>, ProviderError> {
    let Some(name) = api_key_env else {
        return Ok(None);
    };
    match env.get(name) {
        Some(value) if !value.is_empty() => Ok(Some(value.to_owned())),
        _ => Err(config(
            adapter,
            &format!("the environment variable `{name}` named by `api-key-env` is not set"),
        )),
    }
}

/// `error` with every occurrence of `secret` in its messages replaced by `<redacted>`: a CLI's
/// stderr or a server's answer may echo the key it was given.
#[must_use]
pub(crate) fn redact(error: ProviderError, secret: Option<&str>) -> ProviderError {
    let Some(secret) = secret.filter(|secret| !secret.is_empty()) else {
        return error;
    };
    let clean = |text: String| text.replace(secret, "<redacted>");
    match error {
        ProviderError::Server {
            adapter,
            status,
            message,
        } => ProviderError::server(adapter, status, clean(message)),
        ProviderError::Network { adapter, message } => {
            ProviderError::network(adapter, clean(message))
        }
        ProviderError::StreamCut { adapter, message } => {
            ProviderError::stream_cut(adapter, clean(message))
        }
        ProviderError::ProcessExit {
            adapter,
            code,
            stderr,
        } => ProviderError::process_exit(adapter, code, clean(stderr)),
        ProviderError::BadOutput { adapter, message } => {
            ProviderError::bad_output(adapter, clean(message))
        }
        ProviderError::Rejected {
            adapter,
            status,
            message,
        } => ProviderError::rejected(adapter, status, clean(message)),
        ProviderError::Config { adapter, message } => {
            ProviderError::config(adapter, clean(message))
        }
        other => other,
    }
}

fn config(adapter: &'static str, message: &str) -> ProviderError {
    ProviderError::config(adapter, message.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env() -> Environment {
        Environment::default()
            .with("PATH", "/bin")
            .with("HOME", "/home/u")
            .with("ANTHROPIC_API_KEY", "secret")
            .with("ANTHROPIC_BASE_URL", "http://127.0.0.1:1")
            .with("CLAUDE_CONFIG_DIR", "/tmp/c")
            .with("UNRELATED", "x")
            .with("MY_KEY", "k")
    }

    #[test]
    fn child_env_keeps_base_and_adapter_settings_but_no_secrets() {
        let child = ChildEnv::new(
            &env(),
            &["CLAUDE_CONFIG_DIR"],
            &["ANTHROPIC_"],
            &["ANTHROPIC_API_KEY"],
        );
        let names: Vec<&str> = child.iter().map(|(k, _)| k).collect();
        assert_eq!(
            names,
            ["ANTHROPIC_BASE_URL", "CLAUDE_CONFIG_DIR", "HOME", "PATH"]
        );
    }

    #[test]
    fn options_pass_and_set_variables() {
        let mut child = ChildEnv::new(&env(), &[], &[], &[]);
        let options: Map<String, Value> = serde_json::from_str(
            r#"{"pass-env": "UNRELATED, MISSING", "env.FOO": "bar", "env.N": 3}"#,
        )
        .expect("valid json");
        child
            .apply_options("claude-code", &env(), &options)
            .expect("valid options");
        assert_eq!(child.get("UNRELATED"), Some("x"));
        assert_eq!(child.get("MISSING"), None);
        assert_eq!(child.get("FOO"), Some("bar"));
        assert_eq!(child.get("N"), Some("3"));
    }

    #[test]
    fn tool_environments_lose_every_provider_key() {
        let env = Environment::default()
            .with("PATH", "/bin")
            .with("ANTHROPIC_API_KEY", "a")
            .with("OPENAI_API_KEY", "o")
            .with("MY_GATEWAY_KEY", "g")
            .with("GH_TOKEN", "gh");
        let tools = env.without_provider_keys(["MY_GATEWAY_KEY"]);
        let names: Vec<&str> = tools.iter().map(|(name, _)| name).collect();
        assert_eq!(names, ["GH_TOKEN", "PATH"]);
    }

    #[test]
    fn api_key_comes_only_from_the_named_variable() {
        assert_eq!(
            api_key("x", &env(), Some("MY_KEY")).expect("set"),
            Some("k".to_owned())
        );
        assert_eq!(api_key("x", &env(), None).expect("unnamed"), None);
        let error = api_key("x", &env(), Some("NOPE")).expect_err("unset");
        assert!(error.to_string().contains("`NOPE`"), "{error}");
    }

    #[test]
    fn redact_scrubs_the_secret_from_messages() {
        let error = ProviderError::process_exit("x", Some(1), "bad key sk-123 rejected".to_owned());
        let text = redact(error, Some("sk-123")).to_string();
        assert!(
            !text.contains("sk-123") && text.contains("<redacted>"),
            "{text}"
        );
    }

    #[test]
    fn debug_never_shows_values() {
        let text = format!("{:?}", env());
        assert!(!text.contains("secret"), "{text}");
        assert!(text.contains("ANTHROPIC_API_KEY"), "{text}");
    }
}
