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

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::process::Command;

use super::binary::find_binary;
use super::env::{ChildEnv, Environment, api_key, redact};
use super::ndjson::NdjsonReader;
use super::process::ProcessGroup;
use super::{
    AgentEvent, AgentReply, AgentRequest, EventSink, Provider, ProviderError, ProviderFuture,
    Usage, tool_summary,
};
use crate::ir::{PermissionMode, ProviderDecl};

const NAME: &str = "gemini";

/// How long the process may take to exit after stdout closed.
const EXIT_GRACE: Duration = Duration::from_secs(10);

/// Non-secret settings passed through from the environment.
const PASSTHROUGH: &[&str] = &["GOOGLE_GEMINI_BASE_URL", "GEMINI_API_KEY_AUTH_MECHANISM"];

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

    async fn call(
        &self,
        request: &AgentRequest,
        events: &dyn EventSink,
    ) -> Result<AgentReply, ProviderError> {
        let session_id = request.resume_session.clone().unwrap_or_else(new_uuid);
        let args = self.args(request, &session_id)?;
        self.prepare_home()?;
        let mut command = Command::new(&self.bin);
        command
            .args(&args)
            .current_dir(&request.working_dir)
            .env_clear()
            .envs(self.env.iter());
        let mut child = ProcessGroup::spawn(NAME, command)?;
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
        let status = child.wait(EXIT_GRACE).await?;
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

/// Token counts from a `result` line's `stats`: `input` is the prompt without its cached part.
/// (The stats carry no thinking tokens.)
fn usage_of(stats: &Value) -> Usage {
    let count = |field: &str| stats.get(field).and_then(Value::as_u64).unwrap_or(0);
    Usage {
        input_tokens: count("input"),
        output_tokens: count("output_tokens"),
        cache_read_tokens: count("cached"),
        cache_write_tokens: 0,
    }
}

/// What the stream-json lines have said so far.
#[derive(Debug, Default)]
struct Stream {
    session_id: Option<String>,
    /// Tool names by call id (`tool_result` carries only the id).
    tools: HashMap<String, String>,
    /// The text of the model message being streamed.
    current: String,
    /// The last complete model message: the reply.
    last_text: String,
    /// Model turns: the first output, and each after a round of tool results.
    turns: u32,
    in_turn: bool,
    result: Option<Value>,
}

impl Stream {
    fn handle(&mut self, line: &Value, events: &dyn EventSink) {
        let kind = line.get("type").and_then(Value::as_str).unwrap_or_default();
        let text = |field: &str| {
            line.get(field)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        match kind {
            "init" => {
                let session_id = text("session_id");
                self.session_id = Some(session_id.clone()).filter(|id| !id.is_empty());
                events.emit(AgentEvent::SessionStart {
                    session_id: self.session_id.clone(),
                    model: Some(text("model")).filter(|model| !model.is_empty()),
                });
            }
            "message" if line.get("role").and_then(Value::as_str) == Some("assistant") => {
                self.start_turn();
                let delta = text("content");
                if !delta.is_empty() {
                    self.current.push_str(&delta);
                    events.emit(AgentEvent::TextDelta { text: delta });
                }
            }
            "tool_use" => {
                self.start_turn();
                self.finish_message(events);
                let id = text("tool_id");
                let name = text("tool_name");
                events.emit(AgentEvent::ToolStart {
                    id: id.clone(),
                    name: name.clone(),
                    input: line.get("parameters").cloned().unwrap_or(Value::Null),
                });
                self.tools.insert(id, name);
            }
            "tool_result" => {
                self.in_turn = false;
                let id = text("tool_id");
                let is_error = line.get("status").and_then(Value::as_str) != Some("success");
                let detail = if is_error {
                    line.pointer("/error/message").or(line.get("output"))
                } else {
                    line.get("output")
                };
                events.emit(AgentEvent::ToolComplete {
                    name: self.tools.get(&id).cloned().unwrap_or_default(),
                    id,
                    summary: tool_summary(detail.and_then(Value::as_str).unwrap_or_default()),
                    is_error,
                });
            }
            "result" => {
                self.finish_message(events);
                self.result = Some(line.clone());
            }
            _ => {}
        }
    }

    fn start_turn(&mut self) {
        if !self.in_turn {
            self.in_turn = true;
            self.turns += 1;
        }
    }

    /// Ends the message being streamed, if any: it is the reply unless another follows.
    fn finish_message(&mut self, events: &dyn EventSink) {
        if self.current.is_empty() {
            return;
        }
        let text = std::mem::take(&mut self.current);
        self.last_text.clone_from(&text);
        events.emit(AgentEvent::MessageComplete { text });
    }
}

/// Classifies a failed `result` line. The CLI reports an API failure as
/// `[API Error: <the server's JSON error body>]` with `type` `"unknown"`, so the HTTP status
/// is read from that body's `error.code`.
fn classify(result: &Value, key_variable: Option<&str>) -> ProviderError {
    let message = result
        .pointer("/error/message")
        .and_then(Value::as_str)
        .unwrap_or("the CLI reported an error without a message")
        .to_owned();
    let kind = result
        .pointer("/error/type")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let status = api_status(&message);
    match status {
        Some(status @ (401 | 403)) => ProviderError::Auth {
            adapter: NAME,
            status,
            message,
            key_variable: key_variable.map(str::to_owned),
        },
        Some(429) => ProviderError::rate_limited(NAME, None),
        Some(503 | 529) => ProviderError::overloaded(NAME, None),
        Some(status @ 500..=599) => ProviderError::server(NAME, status, message),
        Some(status) => ProviderError::rejected(NAME, status, message),
        None if kind.is_empty() || kind == "unknown" => ProviderError::rejected(NAME, 0, message),
        None => ProviderError::rejected(NAME, 0, format!("{kind}: {message}")),
    }
}

/// The HTTP status in an `[API Error: {…}]` message: the JSON body's `error.code`.
fn api_status(message: &str) -> Option<u16> {
    let start = message.find('{')?;
    let end = message.rfind('}')?;
    let body: Value = serde_json::from_str(message.get(start..=end)?).ok()?;
    let code = body.pointer("/error/code").or_else(|| body.get("code"))?;
    u16::try_from(code.as_u64()?).ok()
}

fn config(message: &str) -> ProviderError {
    ProviderError::config(NAME, message.to_owned())
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    /// Lines as the pinned CLI prints them (timestamps and stats trimmed).
    const TRANSCRIPT: &str = r#"{"type":"init","session_id":"s1","model":"gemini-2.5-flash"}
{"type":"message","role":"user","content":"edit it"}
{"type":"message","role":"assistant","content":"Writing.","delta":true}
{"type":"tool_use","tool_name":"write_file","tool_id":"t0","parameters":{"file_path":"a.txt","content":"x"}}
{"type":"tool_result","tool_id":"t0","status":"success"}
{"type":"message","role":"assistant","content":"All ","delta":true}
{"type":"message","role":"assistant","content":"done.","delta":true}
{"type":"result","status":"success","stats":{"total_tokens":30,"input_tokens":24,"output_tokens":6,"cached":4,"input":20,"tool_calls":1}}"#;

    #[test]
    fn maps_stream_json_events() {
        let events = Mutex::new(Vec::new());
        let sink = |event: AgentEvent| events.lock().expect("not poisoned").push(event);
        let mut stream = Stream::default();
        for line in TRANSCRIPT.lines() {
            stream.handle(&serde_json::from_str(line).expect("valid"), &sink);
        }
        assert_eq!(stream.last_text, "All done.");
        assert_eq!(stream.turns, 2);
        assert_eq!(stream.session_id.as_deref(), Some("s1"));
        let stats = &stream.result.as_ref().expect("a result")["stats"];
        assert_eq!(
            usage_of(stats),
            Usage {
                input_tokens: 20,
                output_tokens: 6,
                cache_read_tokens: 4,
                cache_write_tokens: 0
            }
        );
        let text = |text: &str| text.to_owned();
        assert_eq!(
            events.into_inner().expect("not poisoned"),
            [
                AgentEvent::SessionStart {
                    session_id: Some(text("s1")),
                    model: Some(text("gemini-2.5-flash")),
                },
                AgentEvent::TextDelta {
                    text: text("Writing.")
                },
                AgentEvent::MessageComplete {
                    text: text("Writing.")
                },
                AgentEvent::ToolStart {
                    id: text("t0"),
                    name: text("write_file"),
                    input: json!({"file_path": "a.txt", "content": "x"}),
                },
                AgentEvent::ToolComplete {
                    id: text("t0"),
                    name: text("write_file"),
                    summary: String::new(),
                    is_error: false,
                },
                AgentEvent::TextDelta { text: text("All ") },
                AgentEvent::TextDelta {
                    text: text("done.")
                },
                AgentEvent::MessageComplete {
                    text: text("All done.")
                },
            ]
        );
    }

    #[test]
    fn api_errors_are_classified_by_the_status_in_the_message() {
        let result = |message: &str| {
            json!({"type": "result", "status": "error",
                   "error": {"type": "unknown", "message": message}})
        };
        let auth = classify(
            &result(
                r#"[API Error: {"error":{"code":401,"message":"API key not valid.","status":"UNAUTHENTICATED"}}]"#,
            ),
            Some("MY_GEMINI_KEY"),
        );
        assert_eq!(auth.class().name(), "auth");
        assert!(auth.to_string().contains("`MY_GEMINI_KEY`"), "{auth}");
        let cases = [
            (r#"[API Error: {"error":{"code":403}}]"#, "auth"),
            (r#"[API Error: {"error":{"code":429}}]"#, "rate-limit"),
            (r#"[API Error: {"error":{"code":503}}]"#, "overloaded"),
            (r#"[API Error: {"error":{"code":500}}]"#, "server-error"),
            (r#"[API Error: {"error":{"code":400}}]"#, "provider"),
            ("Reached max session turns", "provider"),
        ];
        for (message, class) in cases {
            assert_eq!(
                classify(&result(message), None).class().name(),
                class,
                "{message}"
            );
        }
    }

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
