//! `adapter="copilot"`: the GitHub Copilot CLI in its non-interactive JSONL mode, one process
//! per call (protocols.md §4, "non-interactive alternative", checked against the pinned CLI).
//!
//! Spawned as `copilot -p <prompt> --output-format json --no-auto-update --no-ask-user
//! [--model M] [--session-id <new uuid> | --resume=<id>] [--allow-all | --allow-tool …]
//! --usage-output-file <tmp>` in the node's working directory. stdout is one session event
//! per line (`assistant.message_delta`, `assistant.message`, `tool.execution_start`,
//! `tool.execution_complete`, `session.error`, …) ending with a `result` line; token usage
//! comes from the usage file. Bring-your-own-key: `base-url=` becomes
//! `COPILOT_PROVIDER_BASE_URL` (with `COPILOT_OFFLINE=true`, so no GitHub traffic at all),
//! `option "provider-type"` (`openai`, `azure`, `anthropic`) and `option "wire-api"` select
//! the wire format, and the `api-key-env=` variable becomes `COPILOT_PROVIDER_API_KEY`.
//! Without `base-url=` the key variable is the GitHub token (`COPILOT_GITHUB_TOKEN`).
//! The CLI has no system-prompt flag: `system` is put before the prompt.
//!
//! In this mode the CLI cannot ask anyone: a tool call its rules do not allow ends as a
//! `tool.execution_complete` with `error.code` `"denied"` (it prints no `permission.*`
//! events; those only reach its own session log). Under `permission="ask"` such a refusal
//! stops the call to ask a person (see [`Stream::undecided`]), and the answer comes back
//! as rules for the call that continues the session (see [`ask_rules`]).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Map, Value, json};

use super::binary::find_binary;
use super::child;
use super::env::{ChildEnv, Environment, api_key, redact};
use super::mcp_config::{PrivateFile, ResolvedMcp, held_secrets, private_dir, resolve_mcp_servers};
use super::ndjson::NdjsonReader;
use super::{
    AgentEvent, AgentReply, AgentRequest, Approvals, EventSink, PermissionAsk, Provider,
    ProviderError, ProviderFuture, Usage, Verdict, tool_summary,
};
use crate::ir::{PermissionMode, ProviderDecl};
use crate::process::{self, Launch};

const NAME: &str = "copilot";

/// How long the process may take to exit after stdout closed.
const EXIT_GRACE: Duration = Duration::from_secs(10);

/// Non-secret settings passed through from the environment.
const PASSTHROUGH: &[&str] = &[
    "COPILOT_HOME",
    "COPILOT_OFFLINE",
    "COPILOT_MODEL",
    "COPILOT_AUTO_UPDATE",
    "COPILOT_PROVIDER_BASE_URL",
    "COPILOT_PROVIDER_TYPE",
    "COPILOT_PROVIDER_WIRE_API",
    "COPILOT_PROVIDER_TRANSPORT",
    "COPILOT_PROVIDER_MODEL_ID",
    "COPILOT_PROVIDER_WIRE_MODEL",
    "COPILOT_PROVIDER_MAX_PROMPT_TOKENS",
    "COPILOT_PROVIDER_MAX_OUTPUT_TOKENS",
    "COPILOT_PROVIDER_AZURE_API_VERSION",
    "GH_HOST",
    "COPILOT_GH_HOST",
];

/// The GitHub Copilot CLI adapter.
#[derive(Debug)]
pub struct Copilot {
    bin: PathBuf,
    model: Option<String>,
    env: ChildEnv,
    temp_dir: PathBuf,
    /// The key from `api-key-env=`, scrubbed from error messages.
    secret: Option<String>,
    /// The variable the key is given to the CLI in, kept from MCP servers.
    key_var: Option<String>,
    /// atomic's environment: the variables an `mcp` server is given are read from it.
    outer_env: Environment,
}

impl Copilot {
    /// Configures the adapter from its `provider` block (see the module docs). Options:
    /// `bin`, `pass-env`, `env.NAME`, `provider-type`, `wire-api`, `offline` (default true
    /// with `base-url=`), `api-key-var`.
    ///
    /// # Errors
    /// [`ProviderError::Config`]: the CLI is not installed, the key variable is unset, or an
    /// option has the wrong type.
    pub fn new(decl: &ProviderDecl, env: &Environment) -> Result<Self, ProviderError> {
        let bin = find_binary(NAME, "copilot", "@github/copilot", &decl.options, env)?;
        let mut child = ChildEnv::new(env, PASSTHROUGH, &[], &[]);
        child.apply_options(NAME, env, &decl.options)?;
        for (option, var) in [
            ("provider-type", "COPILOT_PROVIDER_TYPE"),
            ("wire-api", "COPILOT_PROVIDER_WIRE_API"),
        ] {
            match decl.options.get(option) {
                None => {}
                Some(Value::String(value)) => child.set(var, value.as_str()),
                Some(_) => return Err(config(&format!("option `{option}` must be a string"))),
            }
        }
        if let Some(url) = &decl.base_url {
            child.set("COPILOT_PROVIDER_BASE_URL", url.value.as_str());
            let offline = decl.options.get("offline") != Some(&Value::Bool(false));
            if offline {
                child.set("COPILOT_OFFLINE", "true");
            }
        }
        let byok = child.get("COPILOT_PROVIDER_BASE_URL").is_some();
        let key_env = decl.api_key_env.as_ref().map(|name| name.value.as_str());
        let secret = api_key(NAME, env, key_env)?;
        let mut key_var = None;
        if let Some(key) = &secret {
            let var = match decl.options.get("api-key-var") {
                Some(Value::String(var)) => var.clone(),
                Some(_) => return Err(config("option `api-key-var` must be a string")),
                None if byok => "COPILOT_PROVIDER_API_KEY".to_owned(),
                None => "COPILOT_GITHUB_TOKEN".to_owned(),
            };
            child.set(var.as_str(), key.as_str());
            key_var = Some(var);
        }
        child.set_default("COPILOT_AUTO_UPDATE", "false");
        let temp_dir = private_dir(env);
        Ok(Self {
            bin,
            model: decl.model.as_ref().map(|model| model.value.clone()),
            env: child,
            temp_dir,
            secret,
            key_var,
            outer_env: env.clone(),
        })
    }

    fn args(
        &self,
        request: &AgentRequest,
        session_id: &str,
        usage_file: &std::path::Path,
    ) -> Result<Vec<String>, ProviderError> {
        if let Some(custom) = request.tools.iter().find(|tool| !tool.command.is_empty()) {
            return Err(config(&format!(
                "custom tool `{}` cannot be given to the Copilot CLI; grant its built-in tools \
                 by name",
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
            "json".to_owned(),
            "--no-auto-update".to_owned(),
            "--no-ask-user".to_owned(),
        ];
        if let Some(model) = request.model.as_ref().or(self.model.as_ref()) {
            args.extend(["--model".to_owned(), model.clone()]);
        }
        if request.resume_session.is_some() {
            args.push(format!("--resume={session_id}"));
        } else {
            args.push(format!("--session-id={session_id}"));
        }
        match request.permission {
            Some(PermissionMode::Bypass) => args.push("--allow-all".to_owned()),
            Some(PermissionMode::AcceptEdits) => {
                args.extend(["--allow-tool".to_owned(), "write".to_owned()]);
            }
            Some(PermissionMode::Plan) => args.extend(["--mode".to_owned(), "plan".to_owned()]),
            // The CLI cannot wait for an answer in this mode: what a person decided
            // becomes its rules, and anything else it refuses stops the call.
            Some(PermissionMode::Ask) => {
                args.extend(ask_rules(&request.approvals, &request.working_dir));
            }
            Some(PermissionMode::Default) | None => {}
        }
        for tool in &request.tools {
            args.extend(["--allow-tool".to_owned(), tool.name.clone()]);
        }
        args.push(format!("--usage-output-file={}", usage_file.display()));
        Ok(args)
    }

    async fn call(
        &self,
        request: &AgentRequest,
        events: &dyn EventSink,
    ) -> Result<AgentReply, ProviderError> {
        let session_id = request.resume_session.clone().unwrap_or_else(new_uuid);
        let usage_file = self
            .temp_dir
            .join(format!("atomic-copilot-usage-{}.json", new_uuid()));
        let _cleanup = RemoveOnDrop(usage_file.clone());
        let mut args = self.args(request, &session_id, &usage_file)?;
        // The agent's MCP servers, in a file only this user reads (their variables may be
        // secrets), deleted when the call ends.
        let _mcp_file = if request.mcp.is_empty() {
            None
        } else {
            let known: Vec<&str> = self.key_var.iter().map(String::as_str).collect();
            let scrub = held_secrets(self.env.iter(), &known);
            let servers = resolve_mcp_servers(NAME, &request.mcp, &self.outer_env, &scrub)?;
            let file = PrivateFile::write(
                NAME,
                &self.temp_dir,
                "atomic-copilot-mcp",
                &copilot_mcp(&servers).to_string(),
            )?;
            args.extend([
                "--additional-mcp-config".to_owned(),
                format!("@{}", file.path().display()),
            ]);
            Some(file)
        };
        let launch = Launch::new(&self.bin)
            .args(args.iter().cloned())
            .cwd(&request.working_dir)
            .envs(self.env.iter());
        let mut child = child::spawn(NAME, process::local().as_ref(), launch)?;
        drop(child.take_stdin());
        events.emit(AgentEvent::SessionStart {
            session_id: Some(session_id.clone()),
            model: request.model.clone().or_else(|| self.model.clone()),
        });

        let stdout = child
            .take_stdout()
            .ok_or_else(|| ProviderError::bad_output(NAME, "the child has no stdout".to_owned()))?;
        let mut reader = NdjsonReader::new(NAME, stdout);
        let mut stream = Stream {
            asking: request.permission == Some(PermissionMode::Ask),
            ..Stream::default()
        };
        let mut approvals = request.approvals.clone();
        while let Some(line) = reader.next().await? {
            stream.handle(&line, events);
            if let Some(ask) = stream.undecided(&mut approvals) {
                // Dropping the child kills its process group as the model is about to go
                // on without the tool; the session continues once a person answers.
                return Err(ProviderError::awaiting_permission(
                    NAME,
                    ask,
                    Some(session_id),
                ));
            }
        }
        let status = child::wait(NAME, &mut child, EXIT_GRACE).await?;
        let stderr = child.stderr_tail();
        if let Some(error) = stream.error.take() {
            return Err(error);
        }
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
        let exit_code = result
            .get("exitCode")
            .and_then(Value::as_i64)
            .and_then(|code| i32::try_from(code).ok());
        if exit_code.is_some_and(|code| code != 0) || !status.success() {
            return Err(ProviderError::process_exit(
                NAME,
                exit_code.or(status.code()),
                stderr,
            ));
        }
        let usage = std::fs::read_to_string(&usage_file)
            .ok()
            .and_then(|text| serde_json::from_str::<Value>(&text).ok())
            .map(|report| usage_of(&report))
            .unwrap_or(stream.usage);
        events.emit(AgentEvent::Usage {
            usage,
            cost_usd: None,
        });
        let session_id = result
            .get("sessionId")
            .and_then(Value::as_str)
            .map_or(session_id, str::to_owned);
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

impl Provider for Copilot {
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

/// Deletes a temporary file when dropped.
struct RemoveOnDrop(PathBuf);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// A random (version 4) UUID, the form `--session-id` requires.
/// `--additional-mcp-config`'s form: `{"mcpServers": {name: {"type": "local", "command",
/// "args", "env", "tools": ["*"]} | {"type": "http", "url", "headers", "tools": ["*"]}}}`.
fn copilot_mcp(servers: &[ResolvedMcp]) -> Value {
    let object = |pairs: &[(String, String)]| -> Map<String, Value> {
        pairs
            .iter()
            .map(|(name, value)| (name.clone(), Value::String(value.clone())))
            .collect()
    };
    let mut out = Map::new();
    for server in servers {
        let (name, entry) = match server {
            ResolvedMcp::Stdio {
                name,
                program,
                args,
                env,
            } => (
                name,
                json!({"type": "local", "command": program, "args": args, "env": object(env), "tools": ["*"]}),
            ),
            ResolvedMcp::Http { name, url, headers } => (
                name,
                json!({"type": "http", "url": url, "headers": object(headers), "tools": ["*"]}),
            ),
        };
        out.insert(name.clone(), entry);
    }
    json!({ "mcpServers": out })
}

fn new_uuid() -> String {
    let bytes: [u8; 16] = rand::random();
    let hex: String = bytes
        .iter()
        .enumerate()
        .map(|(index, byte)| match index {
            6 => format!("{:02x}", (byte & 0x0f) | 0x40),
            8 => format!("{:02x}", (byte & 0x3f) | 0x80),
            _ => format!("{byte:02x}"),
        })
        .collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

/// Token counts summed over the models of a `--usage-output-file` report.
fn usage_of(report: &Value) -> Usage {
    let mut usage = Usage::default();
    let models = report.get("modelMetrics").and_then(Value::as_object);
    for metrics in models.into_iter().flat_map(Map::values) {
        let counts = metrics.get("usage").unwrap_or(&Value::Null);
        let count = |field: &str| counts.get(field).and_then(Value::as_u64).unwrap_or(0);
        usage.add(Usage {
            input_tokens: count("inputTokens"),
            output_tokens: count("outputTokens"),
            cache_read_tokens: count("cacheReadTokens"),
            cache_write_tokens: count("cacheWriteTokens"),
        });
    }
    usage
}

/// The permission kind (as `--allow-tool` patterns name it) a built-in tool needs, as the
/// pinned CLI's own session log records its requests: the file tools write, a path outside
/// the allowed directories is a read, and any other tool is named as itself.
fn permission_kind(tool: &str) -> &str {
    match tool {
        "edit" | "create" => "write",
        "bash" | "powershell" => "shell",
        "view" | "grep" | "glob" => "read",
        other => other,
    }
}

/// The CLI rules for what a person decided under `permission="ask"`. A kind allowed for
/// the run is allowed whole. The answered request, when allowed, is allowed as narrowly as
/// the CLI's patterns can say it, for the call that continues the session: a file by its
/// path (`write(<path>)`, with `--add-dir` for a path outside the working directory), a
/// shell command by the kind (the CLI matches commands by name, not by their arguments),
/// plus `write` when it writes through a redirection. A refused request needs no rule: in
/// this mode the CLI refuses whatever no rule allows, and the agent is told.
fn ask_rules(approvals: &Approvals, working_dir: &Path) -> Vec<String> {
    let mut patterns = Vec::new();
    let mut flags = Vec::new();
    for kind in &approvals.tools {
        match kind.as_str() {
            "read" => flags.push("--allow-all-paths".to_owned()),
            kind => patterns.push(kind.to_owned()),
        }
    }
    if let Some(answered) = approvals.answered.as_ref().filter(|a| a.answer.allows()) {
        let working_dir = std::path::absolute(working_dir).unwrap_or_else(|_| working_dir.into());
        let input = &answered.ask.input;
        let path = input
            .pointer("/arguments/path")
            .and_then(Value::as_str)
            .map(|path| working_dir.join(path));
        let directory = match (answered.ask.tool.as_str(), path) {
            ("write", Some(path)) => {
                patterns.push(format!("write({})", path.display()));
                path.parent().map(Path::to_path_buf)
            }
            ("read", Some(path)) if path.is_dir() => Some(path),
            ("read", Some(path)) => path.parent().map(Path::to_path_buf),
            ("shell", _) => {
                patterns.push("shell".to_owned());
                if input.get("writes").is_some() {
                    patterns.push("write".to_owned());
                }
                None
            }
            (kind, _) => {
                patterns.push(kind.to_owned());
                None
            }
        };
        if let Some(directory) = directory.filter(|dir| !dir.starts_with(&working_dir)) {
            flags.extend(["--add-dir".to_owned(), directory.display().to_string()]);
        }
    }
    patterns
        .into_iter()
        .flat_map(|pattern| ["--allow-tool".to_owned(), pattern])
        .chain(flags)
        .collect()
}

/// What the JSONL stream has said so far.
#[derive(Debug, Default)]
struct Stream {
    /// Tool calls started, by id.
    tools: HashMap<String, ToolCall>,
    /// Message ids that streamed deltas.
    streamed: std::collections::HashSet<String>,
    last_text: String,
    turns: u32,
    usage: Usage,
    error: Option<ProviderError>,
    result: Option<Value>,
    /// Under `permission="ask"`: the requests the CLI refused because nobody could approve
    /// them, not yet looked at.
    asking: bool,
    refused: Vec<PermissionAsk>,
}

/// A tool call as `tool.execution_start` described it.
#[derive(Debug, Default)]
struct ToolCall {
    name: String,
    arguments: Value,
    /// The files a shell command writes through a redirection (`shellToolInfo`).
    writes: Option<Value>,
}

impl ToolCall {
    /// The request the CLI refused: its permission kind, and the call.
    fn ask(&self) -> PermissionAsk {
        let mut input = json!({"tool": self.name, "arguments": self.arguments});
        if let Some(writes) = &self.writes {
            input["writes"] = writes.clone();
        }
        PermissionAsk {
            tool: permission_kind(&self.name).to_owned(),
            input,
        }
    }
}

/// The CLI's refusal of a tool nobody could approve (`error.message` of a `"denied"`
/// completion); a refusal by a `--deny-tool` rule says "denied due to the following rules".
const UNATTENDED: &str = "no interactive user response was available";

impl Stream {
    /// A refused request nobody has decided: the call stops to ask a person. One a person
    /// has decided (allowed for the run, or the answered request) is left refused: the CLI
    /// told the agent, and asking again would not change its rules.
    fn undecided(&mut self, approvals: &mut Approvals) -> Option<PermissionAsk> {
        while let Some(ask) = self.refused.pop() {
            if approvals.decide(&ask) == Verdict::Ask {
                return Some(ask);
            }
        }
        None
    }

    fn handle(&mut self, line: &Value, events: &dyn EventSink) {
        let kind = line.get("type").and_then(Value::as_str).unwrap_or_default();
        let data = line.get("data").unwrap_or(&Value::Null);
        let text = |field: &str| {
            data.get(field)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        // Events from sub-agents carry `agentId` (or a parent tool call); their text is not
        // the reply.
        let top_level = line.get("agentId").is_none_or(Value::is_null)
            && data.get("parentToolCallId").is_none_or(Value::is_null);
        match kind {
            "assistant.turn_start" if top_level => self.turns += 1,
            "assistant.message_delta" if top_level => {
                self.streamed.insert(text("messageId"));
                events.emit(AgentEvent::TextDelta {
                    text: text("deltaContent"),
                });
            }
            "assistant.reasoning_delta" if top_level => events.emit(AgentEvent::ThinkingDelta {
                text: text("deltaContent"),
            }),
            "assistant.message" if top_level => {
                let content = text("content");
                if content.is_empty() {
                    return;
                }
                if !self.streamed.contains(&text("messageId")) {
                    events.emit(AgentEvent::TextDelta {
                        text: content.clone(),
                    });
                }
                self.last_text.clone_from(&content);
                events.emit(AgentEvent::MessageComplete { text: content });
            }
            "assistant.usage" => {
                let count = |field: &str| data.get(field).and_then(Value::as_u64).unwrap_or(0);
                self.usage.add(Usage {
                    input_tokens: count("inputTokens"),
                    output_tokens: count("outputTokens"),
                    cache_read_tokens: count("cacheReadTokens"),
                    cache_write_tokens: count("cacheWriteTokens"),
                });
            }
            "tool.execution_start" => {
                let id = text("toolCallId");
                let name = text("toolName");
                let arguments = data.get("arguments").cloned().unwrap_or(Value::Null);
                let writes = data
                    .pointer("/shellToolInfo/hasWriteFileRedirection")
                    .and_then(Value::as_bool)
                    .filter(|redirects| *redirects)
                    .map(|_| {
                        data.pointer("/shellToolInfo/possiblePaths")
                            .cloned()
                            .unwrap_or_else(|| json!([]))
                    });
                events.emit(AgentEvent::ToolStart {
                    id: id.clone(),
                    name: name.clone(),
                    input: arguments.clone(),
                });
                self.tools.insert(
                    id,
                    ToolCall {
                        name,
                        arguments,
                        writes,
                    },
                );
            }
            "tool.execution_complete" => {
                let id = text("toolCallId");
                let Some(call) = self.tools.get(&id) else {
                    // A call this process never started: one a stopped call left
                    // unfinished, closed as `interrupted` when its session resumes.
                    return;
                };
                let success = data
                    .get("success")
                    .and_then(Value::as_bool)
                    .unwrap_or(false);
                let detail = if success {
                    data.pointer("/result/content")
                } else {
                    data.pointer("/error/message")
                };
                let message = detail.and_then(Value::as_str).unwrap_or_default();
                if data.pointer("/error/code").and_then(Value::as_str) == Some("denied") {
                    let ask = call.ask();
                    events.emit(AgentEvent::PermissionRequest {
                        tool: ask.tool.clone(),
                        granted: false,
                    });
                    if self.asking && message.contains(UNATTENDED) {
                        self.refused.push(ask);
                    }
                }
                events.emit(AgentEvent::ToolComplete {
                    name: call.name.clone(),
                    id,
                    summary: tool_summary(message),
                    is_error: !success,
                });
            }
            "subagent.started" | "subagent.completed" | "subagent.failed" => {
                let name = ["agentName", "agentDisplayName", "name"]
                    .iter()
                    .find_map(|field| data.get(*field).and_then(Value::as_str))
                    .unwrap_or("subagent")
                    .to_owned();
                events.emit(if kind == "subagent.started" {
                    AgentEvent::SubagentStart { name }
                } else {
                    AgentEvent::SubagentEnd { name }
                });
            }
            "session.usage_info" => {
                let current = data.get("currentTokens").and_then(Value::as_f64);
                let limit = data.get("tokenLimit").and_then(Value::as_f64);
                if let (Some(current), Some(limit)) = (current, limit)
                    && limit > 0.0
                {
                    events.emit(AgentEvent::ContextWindow {
                        fraction: (current / limit).clamp(0.0, 1.0),
                    });
                }
            }
            "session.error" => self.error = Some(classify(data)),
            "result" => self.result = Some(line.clone()),
            _ => {}
        }
    }
}

/// Classifies a `session.error` (`errorType`, `statusCode`, `message`).
fn classify(data: &Value) -> ProviderError {
    let message = data
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("the session failed")
        .to_owned();
    let status = data
        .get("statusCode")
        .and_then(Value::as_u64)
        .and_then(|status| u16::try_from(status).ok());
    let kind = data
        .get("errorType")
        .and_then(Value::as_str)
        .unwrap_or_default();
    match (kind, status) {
        ("rate_limit", _) | (_, Some(429)) => ProviderError::rate_limited(NAME, None),
        (_, Some(503 | 529)) => ProviderError::overloaded(NAME, None),
        (_, Some(status @ 500..=599)) => ProviderError::server(NAME, status, message),
        ("authentication", status) => ProviderError::rejected(NAME, status.unwrap_or(401), message),
        (_, status) => ProviderError::rejected(
            NAME,
            status.unwrap_or(0),
            if kind.is_empty() {
                message
            } else {
                format!("{kind}: {message}")
            },
        ),
    }
}

fn config(message: &str) -> ProviderError {
    ProviderError::config(NAME, message.to_owned())
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;
    use crate::providers::{Answered, PermissionAnswer};

    /// Lines as the pinned CLI prints them (trimmed of fields the adapter ignores).
    const TRANSCRIPT: &str = r#"{"type":"session.tools_updated","data":{"model":"m"},"ephemeral":true}
{"type":"user.message","data":{"content":"edit it"}}
{"type":"assistant.turn_start","data":{"turnId":"0"}}
{"type":"assistant.message","data":{"messageId":"m1","content":"","toolRequests":[{"toolCallId":"t0","name":"edit","arguments":{"path":"/w/a"}}]}}
{"type":"tool.execution_start","data":{"toolCallId":"t0","toolName":"edit","arguments":{"path":"/w/a"}}}
{"type":"tool.execution_complete","data":{"toolCallId":"t0","success":true,"result":{"content":"File /w/a updated with changes."}}}
{"type":"assistant.turn_end","data":{"turnId":"0"}}
{"type":"assistant.turn_start","data":{"turnId":"1"}}
{"type":"assistant.message_delta","data":{"messageId":"m2","deltaContent":"Done."},"ephemeral":true}
{"type":"assistant.message","data":{"messageId":"m2","content":"Done."}}
{"type":"session.usage_info","data":{"tokenLimit":1000,"currentTokens":250}}
{"type":"assistant.turn_end","data":{"turnId":"1"}}
{"type":"result","sessionId":"s1","exitCode":0}"#;

    #[test]
    fn maps_jsonl_events() {
        let events = Mutex::new(Vec::new());
        let sink = |event: AgentEvent| events.lock().expect("not poisoned").push(event);
        let mut stream = Stream::default();
        for line in TRANSCRIPT.lines() {
            stream.handle(&serde_json::from_str(line).expect("valid"), &sink);
        }
        assert_eq!(stream.last_text, "Done.");
        assert_eq!(stream.turns, 2);
        assert!(stream.result.is_some());
        let events = events.into_inner().expect("not poisoned");
        assert_eq!(
            events,
            [
                AgentEvent::ToolStart {
                    id: "t0".to_owned(),
                    name: "edit".to_owned(),
                    input: serde_json::json!({"path": "/w/a"}),
                },
                AgentEvent::ToolComplete {
                    id: "t0".to_owned(),
                    name: "edit".to_owned(),
                    summary: "File /w/a updated with changes.".to_owned(),
                    is_error: false,
                },
                AgentEvent::TextDelta {
                    text: "Done.".to_owned()
                },
                AgentEvent::MessageComplete {
                    text: "Done.".to_owned()
                },
                AgentEvent::ContextWindow { fraction: 0.25 },
            ]
        );
    }

    /// A refused edit as the pinned CLI (1.0.102) prints it in this mode: no
    /// `permission.*` event, a `"denied"` completion naming why.
    const REFUSED_EDIT: &str = r#"{"type":"tool.execution_start","data":{"toolCallId":"t0","toolName":"edit","arguments":{"path":"/w/a.txt","old_str":"a","new_str":"b"},"toolTitle":"Editing file"}}
{"type":"tool.execution_complete","data":{"toolCallId":"t0","success":false,"error":{"message":"Permission denied because no interactive user response was available. Retry in an interactive session so the user can approve it, or try an alternative that does not require this permission.","code":"denied"}}}"#;

    fn stream_of(transcript: &str, asking: bool) -> (Stream, Vec<AgentEvent>) {
        let events = Mutex::new(Vec::new());
        let sink = |event: AgentEvent| events.lock().expect("not poisoned").push(event);
        let mut stream = Stream {
            asking,
            ..Stream::default()
        };
        for line in transcript.lines() {
            stream.handle(&serde_json::from_str(line).expect("valid"), &sink);
        }
        (stream, events.into_inner().expect("not poisoned"))
    }

    fn edit_ask() -> PermissionAsk {
        PermissionAsk {
            tool: "write".to_owned(),
            input: serde_json::json!({"tool": "edit", "arguments": {"path": "/w/a.txt", "old_str": "a", "new_str": "b"}}),
        }
    }

    #[test]
    fn a_refusal_nobody_decided_is_asked_and_a_decided_one_is_not() {
        let (mut stream, events) = stream_of(REFUSED_EDIT, true);
        assert!(events.contains(&AgentEvent::PermissionRequest {
            tool: "write".to_owned(),
            granted: false
        }));
        assert_eq!(
            stream.undecided(&mut Approvals::default()),
            Some(edit_ask())
        );
        assert_eq!(stream.undecided(&mut Approvals::default()), None, "once");

        // Answered (either way), or the kind allowed for the run: the refusal stands.
        for answer in [PermissionAnswer::Allow, PermissionAnswer::Deny] {
            let (mut stream, _) = stream_of(REFUSED_EDIT, true);
            let mut approvals = Approvals {
                tools: Vec::new(),
                answered: Some(Answered {
                    ask: edit_ask(),
                    answer,
                }),
            };
            assert_eq!(stream.undecided(&mut approvals), None, "{answer:?}");
        }
        let (mut stream, _) = stream_of(REFUSED_EDIT, false);
        assert_eq!(
            stream.undecided(&mut Approvals::default()),
            None,
            "only asked under `ask`"
        );

        // A refusal by a rule was decided by it; a call interrupted in an earlier process
        // (closed when its session resumes) is not this call's.
        let by_rule = REFUSED_EDIT.replace(
            "Permission denied because no interactive user response was available. Retry in an interactive session so the user can approve it, or try an alternative that does not require this permission.",
            "Permission to run this tool was denied due to the following rules: `write`",
        );
        let (mut stream, _) = stream_of(&by_rule, true);
        assert_eq!(stream.undecided(&mut Approvals::default()), None);
        let interrupted = r#"{"type":"tool.execution_complete","data":{"toolCallId":"t9","success":false,"error":{"message":"Tool execution was interrupted before a result was recorded.","code":"interrupted"}}}"#;
        let (_, events) = stream_of(interrupted, true);
        assert_eq!(events, []);
    }

    #[test]
    fn answers_become_the_narrowest_rules_the_cli_has() {
        let working = Path::new("/w");
        let allowed = |ask: PermissionAsk, tools: &[&str]| {
            let approvals = Approvals {
                tools: tools.iter().map(|tool| (*tool).to_owned()).collect(),
                answered: Some(Answered {
                    ask,
                    answer: PermissionAnswer::Allow,
                }),
            };
            ask_rules(&approvals, working).join(" ")
        };
        assert_eq!(allowed(edit_ask(), &[]), "--allow-tool write(/w/a.txt)");
        let outside = PermissionAsk {
            tool: "write".to_owned(),
            input: serde_json::json!({"tool": "create", "arguments": {"path": "/elsewhere/b.txt"}}),
        };
        assert_eq!(
            allowed(outside, &["shell"]),
            "--allow-tool shell --allow-tool write(/elsewhere/b.txt) --add-dir /elsewhere"
        );
        let redirect = PermissionAsk {
            tool: "shell".to_owned(),
            input: serde_json::json!({"tool": "bash", "arguments": {"command": "echo hi > x"}, "writes": ["x"]}),
        };
        assert_eq!(
            allowed(redirect, &["read"]),
            "--allow-tool shell --allow-tool write --allow-all-paths"
        );
        let denied = Approvals {
            tools: Vec::new(),
            answered: Some(Answered {
                ask: edit_ask(),
                answer: PermissionAnswer::Deny,
            }),
        };
        assert!(ask_rules(&denied, working).is_empty(), "refused by default");
    }

    #[test]
    fn session_errors_are_classified() {
        let cases = [
            (
                r#"{"errorType":"rate_limit","message":"slow","statusCode":429}"#,
                "rate-limit",
            ),
            (r#"{"errorType":"server","statusCode":529}"#, "overloaded"),
            (r#"{"errorType":"server","statusCode":502}"#, "server-error"),
            (
                r#"{"errorType":"authentication","message":"no"}"#,
                "provider",
            ),
        ];
        for (data, class) in cases {
            let data: Value = serde_json::from_str(data).expect("valid");
            assert_eq!(classify(&data).class().name(), class, "{data}");
        }
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
        assert_ne!(id, new_uuid());
    }

    #[test]
    fn usage_sums_the_models_of_the_report() {
        let report = serde_json::json!({"modelMetrics": {
            "a": {"usage": {"inputTokens": 10, "outputTokens": 7, "cacheReadTokens": 1, "cacheWriteTokens": 2}},
            "b": {"usage": {"inputTokens": 5, "outputTokens": 1}}
        }});
        assert_eq!(
            usage_of(&report),
            Usage {
                input_tokens: 15,
                output_tokens: 8,
                cache_read_tokens: 1,
                cache_write_tokens: 2
            }
        );
    }
}
