//! `adapter="codex"`: the OpenAI Codex CLI (`@openai/codex`) in its non-interactive JSONL
//! mode, one process per call (protocols.md §6, checked against the pinned CLI).
//!
//! Spawned as `codex exec [resume <thread id>] --json --skip-git-repo-check -c key=value…
//! [-m MODEL] -` in the node's working directory, the prompt written to stdin (`-`). stdout
//! is one event per line: `thread.started` (the thread id, which is the session id),
//! `turn.started`, `item.started` / `item.completed` (`agent_message`, `reasoning`,
//! `command_execution`, `file_change`, `mcp_tool_call`, `web_search`, `error`),
//! `turn.completed` (token usage, cumulative over the thread), `turn.failed` and `error`.
//!
//! Every setting goes in as a `-c` override, so the CLI reads nothing of the user's: it runs
//! with its own `CODEX_HOME`, a directory this provider creates (and deletes when it is
//! dropped) unless `option "codex-home"` names one. The overrides switch off what would
//! reach the network besides the model (update checks, analytics, plugin and app sync).
//! `base-url=` declares a custom model provider speaking the Responses API
//! (`model_providers.atomic`, `wire_api = "responses"`); the `api-key-env=` variable's value
//! reaches the CLI as `CODEX_API_KEY`, which `codex exec` reads for OpenAI and which the
//! custom provider names as its `env_key`. `system` becomes `developer_instructions`.
//!
//! Permission modes map onto the sandbox (`approval_policy` is always `never`: nobody can
//! answer in this mode): `default` and `plan` → `read-only`, `acceptEdits` →
//! `workspace-write`, `bypassPermissions` → `danger-full-access`.

mod events;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use serde_json::Value;
use tokio::io::AsyncWriteExt;

use super::binary::find_binary;
use super::child;
use super::env::{ChildEnv, Environment, api_key, redact};
use super::mcp_config::{ResolvedMcp, held_secrets, passed_through, resolve_mcp_servers};
use super::ndjson::NdjsonReader;
use super::{
    AgentEvent, AgentReply, AgentRequest, EventSink, Provider, ProviderError, ProviderFuture, Usage,
};
use crate::ir::{McpTransport, PermissionMode, ProviderDecl};
use crate::process::{self, Launch};
use events::{Stream, http_status, minus};

const NAME: &str = "codex";

/// How long the process may take to exit after stdout closed.
const EXIT_GRACE: Duration = Duration::from_secs(10);

/// The variable the CLI reads the key from (`codex exec`'s own, and the custom provider's
/// `env_key`).
const KEY_VAR: &str = "CODEX_API_KEY";

/// Overrides that keep the CLI off the network except for its model: no update check, no
/// analytics, no curated-plugin sync (git and HTTPS to github.com, chatgpt.com), no apps.
/// Each was seen connecting out in the pinned version without them.
const OFFLINE: &[&str] = &[
    "check_for_update_on_startup=false",
    "analytics.enabled=false",
    "features.plugins=false",
    "features.remote_plugin=false",
    "features.apps=false",
];

/// The Codex CLI adapter.
#[derive(Debug)]
pub struct Codex {
    bin: PathBuf,
    model: Option<String>,
    env: ChildEnv,
    home: Home,
    /// `-c` overrides every call gets.
    overrides: Vec<String>,
    /// The `api-key-env=` variable, named in authentication failures.
    key_variable: Option<String>,
    /// Its value, scrubbed from error messages.
    secret: Option<String>,
    /// Thread id → its token totals after this provider's last call on it: `turn.completed`
    /// reports the thread's totals, so a continued session's call is the difference.
    totals: Mutex<HashMap<String, Usage>>,
    /// atomic's environment: the variables an `mcp` server is given are read from it.
    outer_env: Environment,
}

/// The `CODEX_HOME` the CLI runs with.
#[derive(Debug)]
enum Home {
    /// Created for this provider, removed when it is dropped.
    Owned(PathBuf),
    /// `option "codex-home"`: the user's, left alone.
    Given(PathBuf),
}

impl Home {
    fn path(&self) -> &Path {
        match self {
            Self::Owned(path) | Self::Given(path) => path,
        }
    }
}

impl Drop for Home {
    fn drop(&mut self) {
        if let Self::Owned(path) = self {
            let _ = std::fs::remove_dir_all(path);
        }
    }
}

impl Codex {
    /// Configures the adapter from its `provider` block (see the module docs). Options:
    /// `bin`, `pass-env`, `env.NAME`, `codex-home`.
    ///
    /// # Errors
    /// [`ProviderError::Config`]: the CLI is not installed, the key variable is unset, no
    /// way to authenticate is given, an option has the wrong type, or the home directory
    /// cannot be created.
    pub fn new(decl: &ProviderDecl, env: &Environment) -> Result<Self, ProviderError> {
        let bin = find_binary(NAME, "codex", "@openai/codex", &decl.options, env)?;
        let mut child = ChildEnv::new(env, &[], &[], &[]);
        child.apply_options(NAME, env, &decl.options)?;
        let key_variable = decl.api_key_env.as_ref().map(|name| name.value.clone());
        let secret = api_key(NAME, env, key_variable.as_deref())?;
        let home = match decl.options.get("codex-home") {
            None => Home::Owned(create_home(env)?),
            Some(Value::String(path)) if !path.is_empty() => Home::Given(given_home(path)?),
            Some(_) => return Err(config("option `codex-home` must be a directory path")),
        };
        if secret.is_none() && decl.base_url.is_none() && matches!(home, Home::Owned(_)) {
            return Err(config(
                "the Codex CLI has no credentials: name the variable holding an OpenAI API key \
                 with `api-key-env=`, point `base-url=` at a Responses API server, or set \
                 `option \"codex-home\"` to a directory where `codex login` was run",
            ));
        }
        child.set("CODEX_HOME", home.path().display().to_string());
        if let Some(key) = &secret {
            child.set(KEY_VAR, key.as_str());
        }
        let mut overrides: Vec<String> = OFFLINE.iter().map(|item| (*item).to_owned()).collect();
        if let Some(url) = &decl.base_url {
            overrides.extend([
                "model_provider=\"atomic\"".to_owned(),
                "model_providers.atomic.name=\"atomic\"".to_owned(),
                format!(
                    "model_providers.atomic.base_url={}",
                    toml_string(&url.value)
                ),
                "model_providers.atomic.wire_api=\"responses\"".to_owned(),
            ]);
            if secret.is_some() {
                overrides.push(format!("model_providers.atomic.env_key=\"{KEY_VAR}\""));
            }
        }
        Ok(Self {
            bin,
            model: decl.model.as_ref().map(|model| model.value.clone()),
            env: child,
            home,
            overrides,
            key_variable,
            secret,
            totals: Mutex::new(HashMap::new()),
            outer_env: env.clone(),
        })
    }

    fn args(&self, request: &AgentRequest) -> Result<Vec<String>, ProviderError> {
        let sandbox = match request.permission {
            None | Some(PermissionMode::Default | PermissionMode::Plan) => "read-only",
            Some(PermissionMode::AcceptEdits) => "workspace-write",
            Some(PermissionMode::Bypass) => "danger-full-access",
            Some(PermissionMode::Ask) => {
                return Err(config(
                    "`permission=\"ask\"` is not supported: `codex exec` cannot stop at an \
                     approval request; choose `acceptEdits`, `bypassPermissions` or `plan`",
                ));
            }
        };
        if let Some(tool) = request.tools.first() {
            return Err(config(&format!(
                "tool `{}` cannot be granted: the Codex CLI has no per-tool permissions; its \
                 sandbox is set by `permission=`",
                tool.name
            )));
        }
        let mut args = vec!["exec".to_owned()];
        if request.resume_session.is_some() {
            args.push("resume".to_owned());
        }
        args.extend(["--json".to_owned(), "--skip-git-repo-check".to_owned()]);
        let mut overrides = self.overrides.clone();
        overrides.push(format!("sandbox_mode=\"{sandbox}\""));
        overrides.push("approval_policy=\"never\"".to_owned());
        if let Some(system) = request.system.as_deref().filter(|s| !s.is_empty()) {
            overrides.push(format!("developer_instructions={}", toml_string(system)));
        }
        overrides.extend(self.mcp_servers(request)?.0);
        for item in overrides {
            args.extend(["-c".to_owned(), item]);
        }
        if let Some(model) = request.model.as_ref().or(self.model.as_ref()) {
            args.extend(["-m".to_owned(), model.clone()]);
        }
        if let Some(session) = &request.resume_session {
            args.push(session.clone());
        }
        // The prompt comes on stdin: no argument-length limit, nothing in `ps`.
        args.push("-".to_owned());
        Ok(args)
    }

    /// The agent's MCP servers as `-c mcp_servers.<name>.…` overrides, and the variables
    /// the CLI is given for them. What is secret never goes on the command line: a
    /// passed-through variable is given to the CLI under its own name and named in the
    /// server's `env_vars` (Codex hands a stdio server only the variables it names, besides
    /// `PATH`, `HOME` and the like), a bearer token likewise through
    /// `bearer_token_env_var`. A stdio server starts through `env -u` anyway, so the key
    /// never reaches it whatever the CLI passes on.
    ///
    /// # Errors
    /// [`ProviderError::Config`]: a variable passed through is not set.
    fn mcp_servers(&self, request: &AgentRequest) -> Result<(Vec<String>, McpVars), ProviderError> {
        if request.mcp.is_empty() {
            return Ok((Vec::new(), Vec::new()));
        }
        let known: Vec<&str> = std::iter::once(KEY_VAR)
            .chain(self.key_variable.as_deref())
            .collect();
        let scrub = held_secrets(self.env.iter(), &known);
        let resolved = resolve_mcp_servers(NAME, &request.mcp, &self.outer_env, &scrub)?;
        let mut overrides = Vec::new();
        let mut vars = Vec::new();
        for (server, resolved) in request.mcp.iter().zip(&resolved) {
            let key = format!("mcp_servers.{}", server.name.value);
            match resolved {
                ResolvedMcp::Stdio {
                    program, args, env, ..
                } => {
                    overrides.push(format!("{key}.command={}", toml_string(program)));
                    overrides.push(format!("{key}.args={}", toml_array(args)));
                    let mut literal = Vec::new();
                    let mut passed = Vec::new();
                    for (declared, (name, value)) in server.env.iter().zip(env) {
                        if declared.value.is_some() {
                            literal.push(format!("{}={}", toml_string(name), toml_string(value)));
                        } else {
                            passed.push(name.clone());
                            vars.push((name.clone(), value.clone()));
                        }
                    }
                    if !literal.is_empty() {
                        overrides.push(format!("{key}.env={{{}}}", literal.join(",")));
                    }
                    if !passed.is_empty() {
                        overrides.push(format!("{key}.env_vars={}", toml_array(&passed)));
                    }
                }
                ResolvedMcp::Http { url, .. } => {
                    overrides.push(format!("{key}.url={}", toml_string(url)));
                    if let McpTransport::Http {
                        bearer_env: Some(var),
                        ..
                    } = &server.transport
                    {
                        let token =
                            passed_through(NAME, &server.name.value, &var.value, &self.outer_env)?;
                        overrides.push(format!(
                            "{key}.bearer_token_env_var={}",
                            toml_string(&var.value)
                        ));
                        vars.push((var.value.clone(), token));
                    }
                }
            }
        }
        Ok((overrides, vars))
    }

    async fn call(
        &self,
        request: &AgentRequest,
        events: &dyn EventSink,
    ) -> Result<AgentReply, ProviderError> {
        let args = self.args(request)?;
        let launch = Launch::new(&self.bin)
            .args(args.iter().cloned())
            .cwd(&request.working_dir)
            .envs(self.env.iter())
            .envs(self.mcp_servers(request)?.1);
        let mut child = child::spawn(NAME, process::local().as_ref(), launch)?;
        if let Some(mut stdin) = child.take_stdin() {
            // A failed write means the CLI already exited; its stderr says why, below.
            let _ = stdin.write_all(request.prompt.as_bytes()).await;
            // Dropped here: end of input, the CLI starts.
        }
        let stdout = child
            .take_stdout()
            .ok_or_else(|| ProviderError::bad_output(NAME, "the child has no stdout"))?;
        let mut reader = NdjsonReader::new(NAME, stdout);
        let mut stream = Stream::default();
        let model = request.model.clone().or_else(|| self.model.clone());
        while let Some(line) = reader.next().await? {
            if let Some(thread) = stream.handle(&line, events) {
                events.emit(AgentEvent::SessionStart {
                    session_id: Some(thread),
                    model: model.clone(),
                });
            }
            if let Some(failure) = stream.failure.as_ref().filter(|f| f.is_auth()) {
                // The CLI retries a refused key five times with backoff; waiting never
                // fixes a key, so the call stops at the first refusal.
                return Err(self.classify(&failure.message));
            }
        }
        let status = child::wait(NAME, &mut child, EXIT_GRACE).await?;
        let stderr = child.stderr_tail();
        // A retry notice (`error`) before a completed turn was only a notice.
        if let Some(failure) = stream.failure.take()
            && (failure.fatal || stream.total.is_none())
        {
            return Err(self.classify(&failure.message));
        }
        let (Some(thread), Some(total)) = (stream.thread.clone(), stream.total) else {
            return Err(self.exit_error(request, status.code(), stderr));
        };
        if !status.success() {
            return Err(self.exit_error(request, status.code(), stderr));
        }
        let usage = {
            let mut totals = self.totals.lock().expect("totals lock is never poisoned");
            let before = totals.insert(thread.clone(), total).unwrap_or_default();
            minus(total, before)
        };
        events.emit(AgentEvent::Usage {
            usage,
            cost_usd: None,
        });
        events.emit(AgentEvent::SessionEnd {
            session_id: Some(thread.clone()),
        });
        Ok(AgentReply {
            text: stream.last_text,
            session_id: Some(thread),
            usage,
            cost_usd: None,
            turns: stream.turns,
        })
    }

    /// The error for a CLI that ended without completing its turn.
    fn exit_error(
        &self,
        request: &AgentRequest,
        code: Option<i32>,
        stderr: String,
    ) -> ProviderError {
        if let Some(session) = &request.resume_session
            && stderr.contains("no rollout found")
        {
            let home = match &self.home {
                Home::Owned(_) => {
                    "the provider's own CODEX_HOME, which lasts as long as the run's process; \
                     set `option \"codex-home\"` to keep sessions across runs"
                }
                Home::Given(_) => "the directory `option \"codex-home\"` names",
            };
            return ProviderError::rejected(
                NAME,
                0,
                format!("session `{session}` is not in {home}"),
            );
        }
        let stderr = if stderr.is_empty() {
            "the CLI exited without completing its turn".to_owned()
        } else {
            stderr
        };
        ProviderError::process_exit(NAME, code, stderr)
    }

    /// Classifies a failure the CLI reported (`unexpected status 401 Unauthorized: …`).
    fn classify(&self, message: &str) -> ProviderError {
        let message = match self.secret.as_deref().filter(|s| !s.is_empty()) {
            Some(secret) => message.replace(secret, "<redacted>"),
            None => message.to_owned(),
        };
        match http_status(&message) {
            Some(status @ (401 | 403)) => ProviderError::Auth {
                adapter: NAME,
                status,
                message,
                key_variable: self.key_variable.clone(),
            },
            Some(429) => ProviderError::rate_limited(NAME, None),
            Some(503 | 529) => ProviderError::overloaded(NAME, None),
            Some(status @ 500..=599) => ProviderError::server(NAME, status, message),
            Some(status) => ProviderError::rejected(NAME, status, message),
            None if message.contains("stream disconnected")
                || message.contains("stream closed") =>
            {
                ProviderError::stream_cut(NAME, message)
            }
            None => ProviderError::rejected(NAME, 0, message),
        }
    }
}

impl Provider for Codex {
    fn adapter(&self) -> &'static str {
        NAME
    }

    fn run<'a>(
        &'a self,
        request: &'a AgentRequest,
        events: &'a dyn EventSink,
    ) -> ProviderFuture<'a> {
        Box::pin(async move {
            self.call(request, events)
                .await
                .map_err(|error| redact(error, self.secret.as_deref()))
        })
    }
}

/// A fresh private directory under `TMPDIR` (or `/tmp`) for the CLI's home.
fn create_home(env: &Environment) -> Result<PathBuf, ProviderError> {
    let base = env
        .get("TMPDIR")
        .filter(|dir| !dir.is_empty())
        .map_or_else(|| PathBuf::from("/tmp"), PathBuf::from);
    let suffix: u64 = rand::random();
    let path = base.join(format!("atomic-codex-{suffix:016x}"));
    let mut builder = std::fs::DirBuilder::new();
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(&path).map_err(|error| {
        config(&format!(
            "could not create a CODEX_HOME at {}: {error}; set `option \"codex-home\"`",
            path.display()
        ))
    })?;
    Ok(path)
}

/// `option "codex-home"`, made absolute (the CLI runs in the node's working directory):
/// it must be an existing directory.
fn given_home(path: &str) -> Result<PathBuf, ProviderError> {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| PathBuf::from(path));
    if absolute.is_dir() {
        Ok(absolute)
    } else {
        Err(config(&format!(
            "option `codex-home` names `{path}`, which is not a directory; create it (and run \
             `CODEX_HOME={path} codex login` there if you want its login) or remove the option"
        )))
    }
}

/// `text` as a TOML basic string (what `-c key=value` parses). JSON's string escapes are a
/// subset of TOML's.
fn toml_string(text: &str) -> String {
    Value::String(text.to_owned()).to_string()
}

/// The variables a call's CLI is given for its MCP servers (name, value).
type McpVars = Vec<(String, String)>;

/// `items` as a TOML array of strings.
fn toml_array(items: &[String]) -> String {
    let items: Vec<String> = items.iter().map(|item| toml_string(item)).collect();
    format!("[{}]", items.join(","))
}

fn config(message: &str) -> ProviderError {
    ProviderError::config(NAME, message.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::registry::test_decl;
    use crate::source::{Span, Spanned};

    fn codex(key: Option<&str>) -> Codex {
        let mut decl = test_decl("c", "codex");
        decl.options
            .insert("bin".to_owned(), Value::String("/bin/sh".to_owned()));
        decl.base_url = Some(Spanned::new(
            "http://127.0.0.1:9/v1".to_owned(),
            Span::default(),
        ));
        let mut env = Environment::default().with("PATH", "/bin");
        if let Some(key) = key {
            decl.api_key_env = Some(Spanned::new("MY_KEY".to_owned(), Span::default()));
            env = env.with("MY_KEY", key);
        }
        Codex::new(&decl, &env).expect("configured")
    }

    #[test]
    fn failures_are_classified_and_keys_named_never_shown() {
        let codex = codex(Some("sk-secret-1"));
        let auth = codex.classify(
            "unexpected status 401 Unauthorized: Incorrect API key provided: sk-secret-1., url: http://127.0.0.1:9/v1/responses",
        );
        assert!(
            matches!(auth, ProviderError::Auth { status: 401, .. }),
            "{auth}"
        );
        let text = auth.to_string();
        assert!(
            text.contains("`MY_KEY`") && !text.contains("sk-secret-1"),
            "{text}"
        );
        let cases = [
            (
                "unexpected status 429 Too Many Requests: slow",
                "rate-limit",
            ),
            (
                "unexpected status 503 Service Unavailable: busy",
                "overloaded",
            ),
            (
                "unexpected status 500 Internal Server Error: boom",
                "server-error",
            ),
            ("unexpected status 400 Bad Request: no", "provider"),
            ("stream disconnected before completion: eof", "stream-cut"),
            ("something else", "provider"),
        ];
        for (message, class) in cases {
            assert_eq!(codex.classify(message).class().name(), class, "{message}");
        }
        assert_eq!(
            http_status("Reconnecting... 1/5 (unexpected status 401 Unauthorized)"),
            Some(401)
        );
        assert_eq!(http_status("status unknown"), None);
    }

    #[test]
    fn arguments_map_permissions_resume_and_settings() {
        let codex = codex(Some("sk-secret-1"));
        let request = AgentRequest {
            prompt: "hi".to_owned(),
            system: Some("Be \"terse\".\nReally.".to_owned()),
            model: Some("m-1".to_owned()),
            permission: Some(PermissionMode::AcceptEdits),
            ..AgentRequest::default()
        };
        let args = codex.args(&request).expect("valid");
        assert_eq!(&args[..3], ["exec", "--json", "--skip-git-repo-check"]);
        assert_eq!(args.last().map(String::as_str), Some("-"));
        let joined = args.join(" ");
        for expected in [
            "-c sandbox_mode=\"workspace-write\"",
            "-c approval_policy=\"never\"",
            "-c developer_instructions=\"Be \\\"terse\\\".\\nReally.\"",
            "-c model_provider=\"atomic\"",
            "-c model_providers.atomic.base_url=\"http://127.0.0.1:9/v1\"",
            "-c model_providers.atomic.wire_api=\"responses\"",
            "-c model_providers.atomic.env_key=\"CODEX_API_KEY\"",
            "-c features.plugins=false",
            "-m m-1",
        ] {
            assert!(joined.contains(expected), "{expected} in {joined}");
        }
        assert!(!joined.contains("sk-secret-1"), "{joined}");
        assert_eq!(codex.env.get(KEY_VAR), Some("sk-secret-1"));

        let resumed = AgentRequest {
            resume_session: Some("t-1".to_owned()),
            permission: Some(PermissionMode::Bypass),
            ..request.clone()
        };
        let args = codex.args(&resumed).expect("valid");
        assert_eq!(&args[..2], ["exec", "resume"]);
        assert_eq!(&args[args.len() - 2..], ["t-1", "-"]);
        assert!(
            args.join(" ")
                .contains("sandbox_mode=\"danger-full-access\"")
        );
        for mode in [
            None,
            Some(PermissionMode::Default),
            Some(PermissionMode::Plan),
        ] {
            let args = codex
                .args(&AgentRequest {
                    permission: mode,
                    ..request.clone()
                })
                .expect("valid");
            assert!(
                args.join(" ").contains("sandbox_mode=\"read-only\""),
                "{mode:?}"
            );
        }
        let ask = AgentRequest {
            permission: Some(PermissionMode::Ask),
            ..request
        };
        assert!(codex.args(&ask).is_err());
    }

    #[test]
    fn a_home_is_created_and_removed_and_credentials_are_required() {
        let codex = codex(None);
        let home = codex.home.path().to_path_buf();
        assert!(home.is_dir(), "{home:?}");
        assert_eq!(
            codex.env.get("CODEX_HOME"),
            Some(home.to_str().expect("utf-8"))
        );
        drop(codex);
        assert!(!home.exists(), "{home:?}");

        let mut decl = test_decl("c", "codex");
        decl.options
            .insert("bin".to_owned(), Value::String("/bin/sh".to_owned()));
        let error = Codex::new(&decl, &Environment::default()).expect_err("no credentials");
        assert!(error.to_string().contains("api-key-env="), "{error}");

        decl.options.insert(
            "codex-home".to_owned(),
            Value::String("/nonexistent-atomic-codex-home".to_owned()),
        );
        let error = Codex::new(&decl, &Environment::default()).expect_err("no such directory");
        assert!(error.to_string().contains("not a directory"), "{error}");
        let given = tempfile::tempdir().expect("temp dir");
        decl.options.insert(
            "codex-home".to_owned(),
            Value::String(given.path().display().to_string()),
        );
        let codex = Codex::new(&decl, &Environment::default()).expect("a login home suffices");
        drop(codex);
        assert!(given.path().is_dir(), "a given home is left alone");
    }
}
