//! `adapter="gemini"`: the Gemini CLI (`@google/gemini-cli`) in its headless mode, one process
//! per call (protocols.md §6, every fact checked against the pinned 0.61.0 bundle).
//!
//! Spawned as `gemini -p <prompt> --output-format stream-json --skip-trust
//! [-m M] [--approval-mode MODE] [--allowed-tools T …] (--session-id <new uuid> | --resume <id>)`
//! in the node's working directory. stdout is one JSON object per line: `init` (session id,
//! model), `message` (the user's prompt, then the model's text as `delta` pieces), `tool_use`
//! (`tool_name`, `tool_id`, `parameters`), `tool_result` (`tool_id`, `status`, `output`,
//! `error`), `error` (warnings and stream problems) and a last `result` (`status`, `error`,
//! `stats` with the token counts).
//!
//! Isolation: the CLI reads its settings, sessions and memory from `$GEMINI_CLI_HOME/.gemini`.
//! Each provider gets its own such home (`option "home"`, by default
//! `$XDG_STATE_HOME/atomic/gemini/<provider>`) holding a settings file atomic writes: API-key
//! auth, usage statistics (Clearcut), telemetry and update checks off, `.env` files of the
//! working directory ignored. The key from `api-key-env=` is its only secret (`GEMINI_API_KEY`);
//! `base-url=` becomes `GOOGLE_GEMINI_BASE_URL`.
//!
//! The CLI has no per-call way to add to its own system prompt (`GEMINI_SYSTEM_MD` replaces
//! it whole, tool instructions included), so `system` goes before the prompt.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};

use super::binary::find_binary;
use super::child;
use super::env::{ChildEnv, Environment, api_key, redact};
use super::mcp_config::{ResolvedMcp, held_secrets, resolve_mcp_servers};
use super::ndjson::NdjsonReader;
use super::{
    AgentEvent, AgentReply, AgentRequest, EventSink, Provider, ProviderError, ProviderFuture,
};
use crate::ir::{PermissionMode, ProviderDecl};
use crate::process::{self, Launch};
use extension::CallExtension;
use stream::{Stream, classify, usage_of};

mod extension;
mod stream;

const NAME: &str = "gemini";

/// How long the process may take to exit after stdout closed.
const EXIT_GRACE: Duration = Duration::from_secs(10);

/// Non-secret settings passed through from the environment.
const PASSTHROUGH: &[&str] = &["GOOGLE_GEMINI_BASE_URL", "GEMINI_API_KEY_AUTH_MECHANISM"];

/// The `mcpServers` of the CLI's settings: `{name: {"command", "args", "env"} | {"httpUrl",
/// "headers"}}`.
fn gemini_mcp(servers: &[ResolvedMcp]) -> Value {
    let object = |pairs: &[(String, String)]| -> serde_json::Map<String, Value> {
        pairs
            .iter()
            .map(|(name, value)| (name.clone(), Value::String(value.clone())))
            .collect()
    };
    let mut out = serde_json::Map::new();
    for server in servers {
        let (name, entry) = match server {
            ResolvedMcp::Stdio {
                name,
                program,
                args,
                env,
            } => (
                name,
                json!({"command": program, "args": args, "env": object(env)}),
            ),
            ResolvedMcp::Http { name, url, headers } => {
                (name, json!({"httpUrl": url, "headers": object(headers)}))
            }
        };
        out.insert(name.clone(), entry);
    }
    Value::Object(out)
}

/// The settings every call runs with, written into the provider's own home.
fn settings() -> Value {
    json!({
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "privacy": {"usageStatisticsEnabled": false},
        "telemetry": {"enabled": false},
        "general": {"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
        "advanced": {"ignoreLocalEnv": true}
    })
}

/// The Gemini CLI adapter.
#[derive(Debug)]
pub struct Gemini {
    bin: PathBuf,
    model: Option<String>,
    env: ChildEnv,
    /// `$GEMINI_CLI_HOME`: settings and sessions of this provider only.
    home: PathBuf,
    /// The key from `api-key-env=`, scrubbed from error messages.
    secret: Option<String>,
    /// The variable the key came from, named when the backend refuses it.
    key_variable: Option<String>,
    /// atomic's environment: the variables an `mcp` server is given are read from it.
    outer_env: Environment,
}

impl Gemini {
    /// Configures the adapter from its `provider` block (see the module docs). Options:
    /// `bin`, `home`, `pass-env`, `env.NAME`.
    ///
    /// # Errors
    /// [`ProviderError::Config`]: the CLI is not installed, the key variable is unset, or an
    /// option has the wrong type.
    pub fn new(decl: &ProviderDecl, env: &Environment) -> Result<Self, ProviderError> {
        let bin = find_binary(NAME, "gemini", "@google/gemini-cli", &decl.options, env)?;
        let mut child = ChildEnv::new(env, PASSTHROUGH, &[], &[]);
        child.apply_options(NAME, env, &decl.options)?;
        if let Some(url) = &decl.base_url {
            child.set("GOOGLE_GEMINI_BASE_URL", url.value.as_str());
        }
        let key_variable = decl.api_key_env.as_ref().map(|name| name.value.clone());
        let secret = api_key(NAME, env, key_variable.as_deref())?;
        if let Some(key) = &secret {
            child.set("GEMINI_API_KEY", key.as_str());
        }
        let home = match decl.options.get("home") {
            Some(Value::String(home)) if !home.is_empty() => PathBuf::from(home),
            Some(_) => return Err(config("option `home` must be a directory path")),
            None => default_home(env, &decl.name.value),
        };
        child.set("GEMINI_CLI_HOME", home.display().to_string());
        // The launcher otherwise re-spawns itself (a second node process) to raise its heap.
        child.set("GEMINI_CLI_NO_RELAUNCH", "true");
        child.set("GEMINI_TELEMETRY_ENABLED", "false");
        Ok(Self {
            bin,
            model: decl.model.as_ref().map(|model| model.value.clone()),
            env: child,
            home,
            secret,
            key_variable,
            outer_env: env.clone(),
        })
    }

    fn args(&self, request: &AgentRequest, session_id: &str) -> Result<Vec<String>, ProviderError> {
        if let Some(custom) = request.tools.iter().find(|tool| !tool.command.is_empty()) {
            return Err(config(&format!(
                "custom tool `{}` cannot be given to the Gemini CLI; grant its built-in tools by \
                 name",
                custom.name
            )));
        }
        let prompt = match request.system.as_ref().filter(|s| !s.is_empty()) {
            Some(system) => format!("{system}\n\n{}", request.prompt),
            None => request.prompt.clone(),
        };
        let mut args = vec![
            "-p".to_owned(),
            prompt,
            "--output-format".to_owned(),
            "stream-json".to_owned(),
            // atomic was told to run here; the CLI otherwise refuses an untrusted folder.
            "--skip-trust".to_owned(),
        ];
        if let Some(model) = request.model.as_ref().or(self.model.as_ref()) {
            args.extend(["--model".to_owned(), model.clone()]);
        }
        if let Some(mode) = request.permission {
            args.extend([
                "--approval-mode".to_owned(),
                approval_mode(mode)?.to_owned(),
            ]);
        }
        for tool in &request.tools {
            args.extend(["--allowed-tools".to_owned(), tool.name.clone()]);
        }
        if request.resume_session.is_some() {
            args.extend(["--resume".to_owned(), session_id.to_owned()]);
        } else {
            args.extend(["--session-id".to_owned(), session_id.to_owned()]);
        }
        Ok(args)
    }

    /// Writes the provider's settings (atomically: calls may run side by side).
    fn prepare_home(&self) -> Result<(), ProviderError> {
        let dir = self.home.join(".gemini");
        let fail = |error: std::io::Error| {
            config(&format!(
                "could not prepare the Gemini CLI home `{}`: {error}",
                self.home.display()
            ))
        };
        std::fs::create_dir_all(&dir).map_err(fail)?;
        let temp = dir.join(format!("settings.json.{}", new_uuid()));
        std::fs::write(&temp, settings().to_string()).map_err(fail)?;
        std::fs::rename(&temp, dir.join("settings.json")).map_err(fail)
    }

    /// The agent's MCP servers, as an extension of this call only (see [`extension`]).
    ///
    /// # Errors
    /// [`ProviderError::Config`]: a variable passed through is not set, or the extension
    /// cannot be written.
    fn mcp_extension(
        &self,
        request: &AgentRequest,
    ) -> Result<Option<CallExtension>, ProviderError> {
        if request.mcp.is_empty() {
            return Ok(None);
        }
        let known: Vec<&str> = std::iter::once("GEMINI_API_KEY")
            .chain(self.key_variable.as_deref())
            .collect();
        let scrub = held_secrets(self.env.iter(), &known);
        let servers = resolve_mcp_servers(NAME, &request.mcp, &self.outer_env, &scrub)?;
        CallExtension::write(&self.home, gemini_mcp(&servers)).map(Some)
    }

    async fn call(
        &self,
        request: &AgentRequest,
        events: &dyn EventSink,
    ) -> Result<AgentReply, ProviderError> {
        let session_id = request.resume_session.clone().unwrap_or_else(new_uuid);
        let mut args = self.args(request, &session_id)?;
        self.prepare_home()?;
        let extension = self.mcp_extension(request)?;
        // Only this call's extension is active: another call's, written side by side in the
        // same home, is never loaded.
        args.extend([
            "--extensions".to_owned(),
            extension
                .as_ref()
                .map_or("none", CallExtension::name)
                .to_owned(),
        ]);
        let launch = Launch::new(&self.bin)
            .args(args.iter().cloned())
            .cwd(&request.working_dir)
            .envs(self.env.iter());
        let mut child = child::spawn(NAME, process::local().as_ref(), launch)?;
        // The prompt is in the arguments; the CLI would append anything read from stdin.
        drop(child.take_stdin());
        let stdout = child
            .take_stdout()
            .ok_or_else(|| ProviderError::bad_output(NAME, "the child has no stdout".to_owned()))?;
        let mut reader = NdjsonReader::new(NAME, stdout);
        let mut stream = Stream::default();
        while let Some(line) = reader.next().await? {
            stream.handle(&line, events);
        }
        let status = child::wait(NAME, &mut child, EXIT_GRACE).await?;
        let stderr = child.stderr_tail();
        let Some(result) = stream.result.take() else {
            return Err(ProviderError::process_exit(
                NAME,
                status.code(),
                if stderr.is_empty() {
                    "the CLI exited without a result line".to_owned()
                } else {
                    stderr
                },
            ));
        };
        if result.get("status").and_then(Value::as_str) != Some("success") {
            return Err(classify(&result, self.key_variable.as_deref()));
        }
        if !status.success() {
            return Err(ProviderError::process_exit(NAME, status.code(), stderr));
        }
        let usage = usage_of(result.get("stats").unwrap_or(&Value::Null));
        events.emit(AgentEvent::Usage {
            usage,
            cost_usd: None,
        });
        let session_id = stream.session_id.take().unwrap_or(session_id);
        events.emit(AgentEvent::SessionEnd {
            session_id: Some(session_id.clone()),
        });
        Ok(AgentReply {
            text: stream.last_text,
            session_id: Some(session_id),
            usage,
            cost_usd: None,
            turns: stream.turns,
        })
    }
}

impl Provider for Gemini {
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

/// `$XDG_STATE_HOME/atomic/gemini/<provider>` (`~/.local/state` without it): kept between
/// runs, because the CLI keeps the sessions `--resume` continues there.
fn default_home(env: &Environment, provider: &str) -> PathBuf {
    let nonempty = |name: &str| env.get(name).filter(|value| !value.is_empty());
    let state = nonempty("XDG_STATE_HOME")
        .map(PathBuf::from)
        .or_else(|| nonempty("HOME").map(|home| Path::new(home).join(".local/state")))
        .unwrap_or_else(|| {
            PathBuf::from(nonempty("TMPDIR").unwrap_or("/tmp")).join("atomic-state")
        });
    let name: String = provider
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    state.join("atomic").join("gemini").join(name)
}

/// The CLI's `--approval-mode` for a node's `permission`. In headless mode the CLI asks no
/// one: `default` leaves out every tool that would need an approval (edits, shell, web
/// fetch), `auto_edit` adds the file-editing tools, `yolo` everything, `plan` is read-only.
fn approval_mode(mode: PermissionMode) -> Result<&'static str, ProviderError> {
    match mode {
        PermissionMode::Default => Ok("default"),
        PermissionMode::AcceptEdits => Ok("auto_edit"),
        PermissionMode::Bypass => Ok("yolo"),
        PermissionMode::Plan => Ok("plan"),
        PermissionMode::Ask => Err(config(
            "permission=\"ask\" is not supported: the Gemini CLI cannot stop at a permission \
             request in headless mode; use \"accept-edits\" or \"bypass\"",
        )),
    }
}

/// A random (version 4) UUID, the form `--session-id` takes.
fn new_uuid() -> String {
    let mut bytes: [u8; 16] = rand::random();
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let hex: String = bytes.iter().map(|byte| format!("{byte:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

fn config(message: &str) -> ProviderError {
    ProviderError::config(NAME, message.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permission_modes_map_to_approval_modes() {
        assert_eq!(
            approval_mode(PermissionMode::AcceptEdits).ok(),
            Some("auto_edit")
        );
        assert_eq!(approval_mode(PermissionMode::Bypass).ok(), Some("yolo"));
        assert_eq!(approval_mode(PermissionMode::Plan).ok(), Some("plan"));
        assert_eq!(approval_mode(PermissionMode::Default).ok(), Some("default"));
        assert!(approval_mode(PermissionMode::Ask).is_err());
    }

    #[test]
    fn the_default_home_is_per_provider_state() {
        let env = Environment::default().with("HOME", "/home/u");
        assert_eq!(
            default_home(&env, "my gem"),
            Path::new("/home/u/.local/state/atomic/gemini/my_gem")
        );
        let env = env.with("XDG_STATE_HOME", "/s");
        assert_eq!(default_home(&env, "g"), Path::new("/s/atomic/gemini/g"));
    }

    #[test]
    fn uuids_are_version_4() {
        let id = new_uuid();
        assert_eq!(id.len(), 36);
        assert_eq!(id.as_bytes()[14], b'4');
        assert!(
            matches!(id.as_bytes()[19], b'8' | b'9' | b'a' | b'b'),
            "{id}"
        );
    }
}
