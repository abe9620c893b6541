//! `adapter="claude-code"`: the Claude Code CLI as a child process, one process per call
//! (protocols.md §2).
//!
//! Spawned as `claude -p --input-format stream-json --output-format stream-json --verbose
//! [--model M] [--append-system-prompt S] [--allowedTools A,B] [--permission-mode P]
//! [--max-turns N] [--resume=ID]` in the node's working directory; the prompt goes to stdin as
//! one stream-json user message and stdin is closed, so the process exits after its `result`
//! line. stdout is NDJSON, mapped onto [`AgentEvent`]s; the `result` line gives the reply text,
//! session id, usage, cost and turn count. Dropping the call kills the process group.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Map, Value, json};
use tokio::io::AsyncWriteExt;

use super::binary::find_binary;
use super::child;
use super::env::{ChildEnv, Environment, api_key, redact};
use super::mcp_config::{PrivateFile, held_secrets, mcp_servers_json, private_dir};
use super::ndjson::NdjsonReader;
use super::{
    AgentEvent, AgentReply, AgentRequest, Approvals, EventSink, PermissionAsk, Provider,
    ProviderError, ProviderFuture, RetryPolicy, Usage, Verdict, tool_summary,
};
use crate::ir::{PermissionMode, ProviderDecl};
use crate::process::{self, Launch};

const NAME: &str = "claude-code";

/// Where Claude Code reads its reasoning effort (`low` … `max`), set from `option "effort"`.
const EFFORT_VAR: &str = "CLAUDE_CODE_EFFORT_LEVEL";

/// The variable bounding Claude Code's own API retries.
const MAX_RETRIES_VAR: &str = "CLAUDE_CODE_MAX_RETRIES";

/// The variables that may hold the CLI's credentials: kept from the MCP servers it starts.
const CLI_SECRETS: &[&str] = &[
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "CLAUDE_CODE_OAUTH_TOKEN",
];

/// How long the process may take to exit after its `result` line.
const EXIT_GRACE: Duration = Duration::from_secs(10);

/// The Claude Code CLI adapter.
#[derive(Debug)]
pub struct ClaudeCode {
    bin: PathBuf,
    model: Option<String>,
    env: ChildEnv,
    options: Map<String, Value>,
    /// The key from `api-key-env=`, scrubbed from error messages.
    secret: Option<String>,
    /// The variable the key is given to the CLI in (`api-key-var`).
    key_var: Option<String>,
    /// atomic's environment: the variables an `mcp` server is given are read from it.
    outer_env: Environment,
    /// Where a call's private files (its MCP configuration) are written.
    temp_dir: PathBuf,
}

impl ClaudeCode {
    /// Configures the adapter from its `provider` block.
    ///
    /// `base-url=` becomes `ANTHROPIC_BASE_URL`; the variable named by `api-key-env=` is
    /// given to the CLI as `ANTHROPIC_API_KEY` (or the variable named by
    /// `option "api-key-var"`, e.g. `ANTHROPIC_AUTH_TOKEN` for gateways). Without a key the
    /// CLI uses its own login. Options: `bin`, `pass-env`, `env.NAME`, `max-budget-usd`,
    /// `fallback-model`, `settings`, `mcp-config`, `strict-mcp-config`, `disallowed-tools`,
    /// `add-dir` (the last ones also per node).
    ///
    /// # Errors
    /// [`ProviderError::Config`]: the CLI is not installed, the key variable is unset, or an
    /// option has the wrong type.
    pub fn new(decl: &ProviderDecl, env: &Environment) -> Result<Self, ProviderError> {
        let bin = find_binary(
            NAME,
            "claude",
            "@anthropic-ai/claude-code",
            &decl.options,
            env,
        )?;
        let mut child = ChildEnv::new(
            env,
            &[
                "CLAUDE_CONFIG_DIR",
                "ANTHROPIC_BASE_URL",
                "ANTHROPIC_MODEL",
                "ANTHROPIC_SMALL_FAST_MODEL",
                "DISABLE_TELEMETRY",
                "DISABLE_ERROR_REPORTING",
                "DISABLE_AUTOUPDATER",
                "IS_SANDBOX",
            ],
            &["CLAUDE_CODE_", "ANTHROPIC_DEFAULT_"],
            &["CLAUDE_CODE_OAUTH_TOKEN"],
        );
        child.apply_options(NAME, env, &decl.options)?;
        if let Some(url) = &decl.base_url {
            child.set("ANTHROPIC_BASE_URL", url.value.as_str());
        }
        let key_env = decl.api_key_env.as_ref().map(|name| name.value.as_str());
        let secret = api_key(NAME, env, key_env)?;
        let mut key_var = None;
        if let Some(key) = &secret {
            let var = string_option(&decl.options, "api-key-var")?
                .unwrap_or_else(|| "ANTHROPIC_API_KEY".to_owned());
            child.set(var.clone(), key.as_str());
            key_var = Some(var);
        }
        child.set_default("DISABLE_AUTOUPDATER", "1");
        let temp_dir = private_dir(env);
        Ok(Self {
            key_var,
            outer_env: env.clone(),
            temp_dir,
            bin,
            model: decl.model.as_ref().map(|model| model.value.clone()),
            env: child,
            options: decl.options.clone(),
            secret,
        })
    }

    /// The command-line arguments for one call.
    fn args(&self, request: &AgentRequest) -> Result<Vec<String>, ProviderError> {
        let mut args: Vec<String> = [
            "-p",
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
            "--verbose",
        ]
        .map(str::to_owned)
        .to_vec();
        if let Some(model) = request.model.as_ref().or(self.model.as_ref()) {
            args.extend(["--model".to_owned(), model.clone()]);
        }
        if let Some(system) = request.system.as_ref().filter(|s| !s.is_empty()) {
            args.extend(["--append-system-prompt".to_owned(), system.clone()]);
        }
        if let Some(custom) = request.tools.iter().find(|tool| !tool.command.is_empty()) {
            return Err(ProviderError::config(
                NAME,
                format!(
                    "custom tool `{}` cannot be given to the Claude Code CLI; grant its built-in \
                     tools by name, or use the `anthropic` adapter for custom tools",
                    custom.name
                ),
            ));
        }
        // Tools a person allowed for the run (`permission="ask"`) are granted like the
        // node's own.
        let names: Vec<&str> = request
            .tools
            .iter()
            .map(|tool| tool.name.as_str())
            .chain(request.approvals.tools.iter().map(String::as_str))
            .collect();
        if !names.is_empty() {
            args.extend(["--allowedTools".to_owned(), names.join(",")]);
        }
        if let Some(mode) = request.permission {
            args.extend([
                "--permission-mode".to_owned(),
                permission_mode(mode).to_owned(),
            ]);
            if mode == PermissionMode::Ask {
                args.extend(["--permission-prompt-tool".to_owned(), "stdio".to_owned()]);
            }
        }
        if let Some(turns) = request.max_turns {
            args.extend(["--max-turns".to_owned(), turns.to_string()]);
        }
        if let Some(session) = &request.resume_session {
            args.push(format!("--resume={session}"));
        }
        for (option, flag) in [
            ("max-budget-usd", "--max-budget-usd"),
            ("fallback-model", "--fallback-model"),
            ("settings", "--settings"),
            ("mcp-config", "--mcp-config"),
            ("disallowed-tools", "--disallowedTools"),
            ("add-dir", "--add-dir"),
        ] {
            let value = request.options.get(option).or(self.options.get(option));
            match value {
                None => {}
                Some(Value::String(text)) => args.extend([flag.to_owned(), text.clone()]),
                Some(Value::Number(number)) => args.extend([flag.to_owned(), number.to_string()]),
                Some(_) => {
                    return Err(ProviderError::config(
                        NAME,
                        format!("option `{option}` must be a string or number"),
                    ));
                }
            }
        }
        // The node's `budget-usd`, or what is left of the run's `max-budget-usd` when that
        // is less, stops Claude Code itself once spent (an explicit `max-budget-usd` option
        // wins).
        let budget_option = request
            .options
            .get("max-budget-usd")
            .or(self.options.get("max-budget-usd"));
        let budget = match (request.budget_usd, request.run_budget_left_usd) {
            (Some(node), Some(run)) => Some(node.min(run)),
            (node, run) => node.or(run),
        };
        if let (None, Some(budget)) = (budget_option, budget) {
            args.extend(["--max-budget-usd".to_owned(), budget.to_string()]);
        }
        let strict = request
            .options
            .get("strict-mcp-config")
            .or(self.options.get("strict-mcp-config"));
        if strict == Some(&Value::Bool(true)) {
            args.push("--strict-mcp-config".to_owned());
        }
        Ok(args)
    }

    async fn call(
        &self,
        request: &AgentRequest,
        events: &dyn EventSink,
    ) -> Result<AgentReply, ProviderError> {
        let mut args = self.args(request)?;
        // The agent's MCP servers, in a file only this user reads (their variables may be
        // secrets), beside any `mcp-config` option; deleted when the call ends.
        let _mcp_file = if request.mcp.is_empty() {
            None
        } else {
            let known: Vec<&str> = CLI_SECRETS
                .iter()
                .copied()
                .chain(self.key_var.as_deref())
                .collect();
            let held = held_secrets(self.env.iter(), &known);
            let config = mcp_servers_json(NAME, &request.mcp, &self.outer_env, &held)?;
            let file = PrivateFile::write(NAME, &self.temp_dir, "atomic-mcp", &config.to_string())?;
            args.extend(["--mcp-config".to_owned(), file.path().display().to_string()]);
            Some(file)
        };
        let mut launch = Launch::new(&self.bin)
            .args(args.iter().cloned())
            .cwd(&request.working_dir)
            .envs(self.env.iter());
        // Claude Code retries failed API requests by itself (10 times by default, a 401
        // for minutes): bound its loop by the node's retry policy, as atomic's own HTTP
        // adapters are, unless the workflow set the variable itself. The node's timeout
        // still kills it (dropping this call kills its process group).
        if self.env.get(MAX_RETRIES_VAR).is_none() {
            let attempts = request
                .retry
                .as_ref()
                .map_or(RetryPolicy::model_requests().attempts, |policy| {
                    policy.attempts
                });
            launch = launch.env(MAX_RETRIES_VAR, attempts.saturating_sub(1).to_string());
        }
        // Reasoning effort: Claude Code reads it from its environment; an agent's option
        // overrides its provider's.
        if let Some(Value::String(effort)) =
            request.options.get("effort").or(self.options.get("effort"))
        {
            launch = launch.env(EFFORT_VAR, effort);
        }
        let mut child = child::spawn(NAME, process::local().as_ref(), launch)?;

        let message = json!({
            "type": "user",
            "message": {"role": "user", "content": request.prompt},
            "parent_tool_use_id": null,
            "session_id": "",
        });
        // Asking a person: stdin stays open for the answers to the CLI's permission
        // requests (its control protocol), and is closed after the result.
        let asking = request.permission == Some(PermissionMode::Ask);
        let mut stdin = child.take_stdin();
        if let Some(input) = stdin.as_mut() {
            // A failed write means the process already died; its exit is reported below.
            let _ = write_line(input, &message).await;
        }
        if !asking && let Some(mut input) = stdin.take() {
            let _ = input.shutdown().await;
        }

        let stdout = child
            .take_stdout()
            .ok_or_else(|| ProviderError::bad_output(NAME, "the child has no stdout".to_owned()))?;
        let mut reader = NdjsonReader::new(NAME, stdout);
        let mut stream = Stream::default();
        let mut approvals = request.approvals.clone();
        while let Some(line) = reader.next().await? {
            if line.get("type").and_then(Value::as_str) == Some("control_request") {
                let (response, pause) = control_response(&line, &mut approvals, events);
                if let Some(ask) = pause {
                    // The request stays unanswered: the CLI is ended (and waited for) with
                    // stdin still open, so it saves its session with the call marked
                    // interrupted, and the session continues once a person answers.
                    child.terminate().await;
                    return Err(ProviderError::awaiting_permission(
                        NAME,
                        ask,
                        stream.session_id.clone(),
                    ));
                }
                if let Some(input) = stdin.as_mut() {
                    let _ = write_line(input, &response).await;
                }
                continue;
            }
            stream.handle(&line, events);
            if stream.result.is_some() {
                break;
            }
        }
        if let Some(mut input) = stdin.take() {
            let _ = input.shutdown().await;
        }

        let Some(result) = stream.result.take() else {
            let status = child::wait(NAME, &mut child, EXIT_GRACE).await?;
            let stderr = child.stderr_tail();
            if stderr.contains("cannot be used with root/sudo") {
                return Err(ProviderError::config(
                    NAME,
                    format!(
                        "{stderr}; use `permission=\"accept-edits\"` with granted tools, or run \
                         atomic as a non-root user"
                    ),
                ));
            }
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
        // The result is authoritative; a slow exit only delays us a little.
        let _ = child::wait(NAME, &mut child, EXIT_GRACE).await;
        stream.finish(result, events, &child.stderr_tail())
    }
}

impl Provider for ClaudeCode {
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

/// Writes one NDJSON line to the CLI's stdin.
async fn write_line(stdin: &mut tokio::process::ChildStdin, value: &Value) -> std::io::Result<()> {
    let mut line = value.to_string();
    line.push('\n');
    stdin.write_all(line.as_bytes()).await?;
    stdin.flush().await
}

/// The answer to one `control_request` of the CLI: a `can_use_tool` request decided by the
/// call's approvals (reported as a permission event), or, when nobody has decided it, the
/// request to pause at. Any other request is refused, so the CLI never waits on atomic.
fn control_response(
    line: &Value,
    approvals: &mut Approvals,
    events: &dyn EventSink,
) -> (Value, Option<PermissionAsk>) {
    let id = line.get("request_id").cloned().unwrap_or(Value::Null);
    let request = line.get("request").unwrap_or(&Value::Null);
    let success = |response: Value| json!({"type": "control_response", "response": {"subtype": "success", "request_id": id, "response": response}});
    if request.get("subtype").and_then(Value::as_str) != Some("can_use_tool") {
        let error = json!({"type": "control_response", "response": {"subtype": "error", "request_id": id, "error": "atomic does not handle this request"}});
        return (error, None);
    }
    let input = request.get("input").cloned().unwrap_or(Value::Null);
    let ask = PermissionAsk {
        tool: str_field(request, "tool_name").unwrap_or_default(),
        input: input.clone(),
    };
    let verdict = approvals.decide(&ask);
    if verdict != Verdict::Ask {
        events.emit(AgentEvent::PermissionRequest {
            tool: ask.tool.clone(),
            granted: verdict == Verdict::Allow,
        });
    }
    match verdict {
        Verdict::Allow => (
            success(json!({"behavior": "allow", "updatedInput": input})),
            None,
        ),
        Verdict::Deny(message) => (
            success(json!({"behavior": "deny", "message": message, "interrupt": false})),
            None,
        ),
        Verdict::Ask => (Value::Null, Some(ask)),
    }
}

/// The CLI's spelling of a permission mode.
fn permission_mode(mode: PermissionMode) -> &'static str {
    match mode {
        PermissionMode::Default => "default",
        PermissionMode::AcceptEdits => "acceptEdits",
        PermissionMode::Bypass => "bypassPermissions",
        PermissionMode::Plan => "plan",
        // What the granted tools do not cover is asked through the control protocol.
        PermissionMode::Ask => "default",
    }
}

fn string_option(
    options: &Map<String, Value>,
    name: &str,
) -> Result<Option<String>, ProviderError> {
    match options.get(name) {
        None => Ok(None),
        Some(Value::String(text)) => Ok(Some(text.clone())),
        Some(_) => Err(ProviderError::config(
            NAME,
            format!("option `{name}` must be a string"),
        )),
    }
}

/// What the stdout stream has said so far.
#[derive(Debug, Default)]
struct Stream {
    session_id: Option<String>,
    /// Tool-use id → tool name, for tool results.
    tools: HashMap<String, String>,
    /// Tool-use ids of sub-agent (Task/Agent) calls → their names.
    subagents: HashMap<String, String>,
    /// The assistant message being received: its id and text so far.
    message: Option<(String, String)>,
    /// The text of the last complete top-level assistant message.
    last_text: String,
    /// The `error` of the last assistant line, if any.
    assistant_error: Option<String>,
    /// Prompt tokens of the last model call (for the context-window fraction).
    last_prompt_tokens: u64,
    result: Option<Value>,
}

impl Stream {
    fn handle(&mut self, line: &Value, events: &dyn EventSink) {
        match line.get("type").and_then(Value::as_str) {
            Some("system") if line.get("subtype").and_then(Value::as_str) == Some("init") => {
                self.session_id = str_field(line, "session_id");
                events.emit(AgentEvent::SessionStart {
                    session_id: self.session_id.clone(),
                    model: str_field(line, "model"),
                });
            }
            Some("assistant") => self.assistant(line, events),
            Some("user") => self.tool_results(line, events),
            Some("result") => {
                self.flush(events);
                self.result = Some(line.clone());
            }
            _ => {}
        }
    }

    fn assistant(&mut self, line: &Value, events: &dyn EventSink) {
        let top_level = line.get("parent_tool_use_id").is_none_or(Value::is_null);
        let message = line.get("message").unwrap_or(&Value::Null);
        if let Some(error) = str_field(line, "error") {
            self.assistant_error = Some(error);
        }
        if top_level {
            let id = str_field(message, "id").unwrap_or_default();
            if self
                .message
                .as_ref()
                .is_some_and(|(current, _)| *current != id)
            {
                self.flush(events);
            }
            if self.message.is_none() {
                self.message = Some((id, String::new()));
            }
            if let Some(usage) = message.get("usage") {
                self.last_prompt_tokens = [
                    "input_tokens",
                    "cache_read_input_tokens",
                    "cache_creation_input_tokens",
                ]
                .iter()
                .map(|field| u64_field(usage, field))
                .sum();
            }
        }
        let blocks = message.get("content").and_then(Value::as_array);
        for block in blocks.into_iter().flatten() {
            match block.get("type").and_then(Value::as_str) {
                Some("text") if top_level => {
                    let text = str_field(block, "text").unwrap_or_default();
                    if let Some((_, so_far)) = self.message.as_mut() {
                        so_far.push_str(&text);
                    }
                    events.emit(AgentEvent::TextDelta { text });
                }
                Some("thinking") if top_level => {
                    let text = str_field(block, "thinking").unwrap_or_default();
                    events.emit(AgentEvent::ThinkingDelta { text });
                }
                Some("tool_use") => {
                    let id = str_field(block, "id").unwrap_or_default();
                    let name = str_field(block, "name").unwrap_or_default();
                    let input = block.get("input").cloned().unwrap_or(Value::Null);
                    if name == "Task" || name == "Agent" {
                        let agent = ["subagent_type", "description"]
                            .iter()
                            .find_map(|field| str_field(&input, field))
                            .unwrap_or_else(|| name.clone());
                        events.emit(AgentEvent::SubagentStart {
                            name: agent.clone(),
                        });
                        self.subagents.insert(id.clone(), agent);
                    }
                    self.tools.insert(id.clone(), name.clone());
                    events.emit(AgentEvent::ToolStart { id, name, input });
                }
                _ => {}
            }
        }
    }

    fn tool_results(&mut self, line: &Value, events: &dyn EventSink) {
        let content = line.pointer("/message/content").and_then(Value::as_array);
        for block in content.into_iter().flatten() {
            if block.get("type").and_then(Value::as_str) != Some("tool_result") {
                continue;
            }
            self.flush(events);
            let id = str_field(block, "tool_use_id").unwrap_or_default();
            let name = self.tools.get(&id).cloned().unwrap_or_default();
            events.emit(AgentEvent::ToolComplete {
                id: id.clone(),
                name,
                summary: summary(block.get("content").unwrap_or(&Value::Null)),
                is_error: block
                    .get("is_error")
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
            });
            if let Some(agent) = self.subagents.remove(&id) {
                events.emit(AgentEvent::SubagentEnd { name: agent });
            }
        }
    }

    /// Ends the assistant message being received.
    fn flush(&mut self, events: &dyn EventSink) {
        if let Some((_, text)) = self.message.take()
            && !text.is_empty()
        {
            self.last_text.clone_from(&text);
            events.emit(AgentEvent::MessageComplete { text });
        }
    }

    /// Turns the `result` line into the reply or a classified error.
    fn finish(
        self,
        result: Value,
        events: &dyn EventSink,
        stderr: &str,
    ) -> Result<AgentReply, ProviderError> {
        let session_id = str_field(&result, "session_id").or(self.session_id);
        let usage = result.get("usage").unwrap_or(&Value::Null);
        let usage = Usage {
            input_tokens: u64_field(usage, "input_tokens"),
            output_tokens: u64_field(usage, "output_tokens"),
            cache_read_tokens: u64_field(usage, "cache_read_input_tokens"),
            cache_write_tokens: u64_field(usage, "cache_creation_input_tokens"),
        };
        let cost_usd = result.get("total_cost_usd").and_then(Value::as_f64);
        events.emit(AgentEvent::Usage { usage, cost_usd });
        let window = result
            .get("modelUsage")
            .and_then(Value::as_object)
            .and_then(|models| models.values().find_map(|model| model.get("contextWindow")))
            .and_then(Value::as_u64)
            .filter(|window| *window > 0);
        if let Some(window) = window
            && self.last_prompt_tokens > 0
        {
            #[allow(
                clippy::cast_precision_loss,
                reason = "token counts are far below 2^52"
            )]
            let fraction = (self.last_prompt_tokens as f64 / window as f64).clamp(0.0, 1.0);
            events.emit(AgentEvent::ContextWindow { fraction });
        }
        events.emit(AgentEvent::SessionEnd {
            session_id: session_id.clone(),
        });
        if result.get("is_error").and_then(Value::as_bool) == Some(true)
            || str_field(&result, "subtype").is_some_and(|subtype| subtype != "success")
        {
            return Err(classify(&result, self.assistant_error.as_deref(), stderr));
        }
        let text = str_field(&result, "result")
            .filter(|text| !text.is_empty())
            .unwrap_or(self.last_text);
        Ok(AgentReply {
            text,
            session_id,
            usage,
            cost_usd,
            turns: u32::try_from(u64_field(&result, "num_turns")).unwrap_or(u32::MAX),
        })
    }
}

/// Classifies an `is_error` result for `retry-on`.
fn classify(result: &Value, assistant_error: Option<&str>, stderr: &str) -> ProviderError {
    let subtype = str_field(result, "subtype").unwrap_or_default();
    let errors: Vec<String> = result
        .get("errors")
        .and_then(Value::as_array)
        .map(|errors| {
            errors
                .iter()
                .filter_map(|e| e.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    let mut message = str_field(result, "result").unwrap_or_default();
    if message.is_empty() {
        message = errors.join("; ");
    }
    if message.is_empty() {
        message = format!("the CLI reported `{subtype}`");
    }
    match subtype.as_str() {
        // Claude Code stopped itself at `--max-budget-usd` (the node's `budget-usd`).
        "error_max_budget_usd" => return ProviderError::over_budget(NAME, message),
        "error_max_turns" | "error_max_structured_output_retries" => {
            return ProviderError::rejected(NAME, 0, message);
        }
        "error_during_execution" => {
            return ProviderError::process_exit(
                NAME,
                None,
                if stderr.is_empty() {
                    message
                } else {
                    format!("{message}; stderr: {stderr}")
                },
            );
        }
        _ => {}
    }
    let status = result
        .get("api_error_status")
        .and_then(Value::as_u64)
        .and_then(|status| u16::try_from(status).ok())
        .or_else(|| {
            let rest = message.strip_prefix("API Error: ")?;
            rest.get(..3)?.parse().ok()
        });
    let status = status.or(match assistant_error {
        Some("rate_limit") => Some(429),
        Some("server_error") => Some(500),
        Some("authentication_failed") => Some(401),
        Some("billing_error") => Some(402),
        Some("invalid_request") => Some(400),
        _ => None,
    });
    match status {
        Some(429) => ProviderError::rate_limited(NAME, None),
        Some(503 | 529) => ProviderError::overloaded(NAME, None),
        Some(status @ 500..=599) => ProviderError::server(NAME, status, message),
        Some(status) => ProviderError::rejected(NAME, status, message),
        None if message.to_lowercase().contains("overloaded") => {
            ProviderError::overloaded(NAME, None)
        }
        None => ProviderError::rejected(NAME, 0, message),
    }
}

/// A tool result's summary: its text (a string, or the text of its blocks).
fn summary(content: &Value) -> String {
    match content {
        Value::String(text) => tool_summary(text),
        Value::Array(blocks) => tool_summary(
            &blocks
                .iter()
                .filter_map(|block| block.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n"),
        ),
        _ => String::new(),
    }
}

fn str_field(value: &Value, field: &str) -> Option<String> {
    value.get(field).and_then(Value::as_str).map(str::to_owned)
}

fn u64_field(value: &Value, field: &str) -> u64 {
    value.get(field).and_then(Value::as_u64).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    /// The replay transcript of protocols.md §2.
    const TRANSCRIPT: &str = r#"{"type":"system","subtype":"init","cwd":"/w","session_id":"8f0c2d8e-1111-4222-8333-944455556666","tools":["Read"],"model":"claude-sonnet-4-5","permissionMode":"acceptEdits","uuid":"u1"}
{"type":"assistant","message":{"id":"msg_01","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"tool_use","id":"toolu_01","name":"Read","input":{"file_path":"/w/README.md"}}],"stop_reason":null,"usage":{"input_tokens":3,"cache_creation_input_tokens":1200,"cache_read_input_tokens":14000,"output_tokens":40}},"parent_tool_use_id":null,"session_id":"8f0c2d8e-1111-4222-8333-944455556666","uuid":"u2"}
{"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_01","type":"tool_result","content":"     1\t# Demo\n"}]},"parent_tool_use_id":null,"session_id":"8f0c2d8e-1111-4222-8333-944455556666","uuid":"u3"}
{"type":"assistant","message":{"id":"msg_02","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"The README is a one-line title."}],"stop_reason":null,"usage":{"input_tokens":6,"cache_creation_input_tokens":0,"cache_read_input_tokens":15200,"output_tokens":45}},"parent_tool_use_id":null,"session_id":"8f0c2d8e-1111-4222-8333-944455556666","uuid":"u4"}
{"type":"result","subtype":"success","is_error":false,"num_turns":2,"result":"The README is a one-line title.","session_id":"8f0c2d8e-1111-4222-8333-944455556666","total_cost_usd":0.0123,"usage":{"input_tokens":9,"cache_creation_input_tokens":1200,"cache_read_input_tokens":29200,"output_tokens":85},"modelUsage":{"claude-sonnet-4-5":{"contextWindow":200000}},"uuid":"u5"}"#;

    fn replay(transcript: &str) -> (Result<AgentReply, ProviderError>, Vec<AgentEvent>) {
        let events = Mutex::new(Vec::new());
        let sink = |event: AgentEvent| events.lock().expect("not poisoned").push(event);
        let mut stream = Stream::default();
        let mut result = None;
        for line in transcript.lines() {
            let value: Value = serde_json::from_str(line).expect("valid line");
            stream.handle(&value, &sink);
            if let Some(value) = stream.result.take() {
                result = Some(value);
                break;
            }
        }
        let reply = stream.finish(result.expect("a result line"), &sink, "");
        (reply, events.into_inner().expect("not poisoned"))
    }

    #[test]
    fn maps_the_transcript_onto_events_and_a_reply() {
        let (reply, events) = replay(TRANSCRIPT);
        let reply = reply.expect("success");
        assert_eq!(reply.text, "The README is a one-line title.");
        assert_eq!(
            reply.session_id.as_deref(),
            Some("8f0c2d8e-1111-4222-8333-944455556666")
        );
        assert_eq!(reply.turns, 2);
        assert_eq!(reply.cost_usd, Some(0.0123));
        assert_eq!(
            reply.usage,
            Usage {
                input_tokens: 9,
                output_tokens: 85,
                cache_read_tokens: 29200,
                cache_write_tokens: 1200
            }
        );
        let kinds: Vec<String> = events
            .iter()
            .map(|event| {
                serde_json::to_value(event).expect("serialisable")["type"]
                    .as_str()
                    .expect("tagged")
                    .to_owned()
            })
            .collect();
        assert_eq!(
            kinds,
            [
                "session-start",
                "tool-start",
                "tool-complete",
                "text-delta",
                "message-complete",
                "usage",
                "context-window",
                "session-end"
            ]
        );
        assert!(events.contains(&AgentEvent::ToolComplete {
            id: "toolu_01".to_owned(),
            name: "Read".to_owned(),
            summary: "1\t# Demo".to_owned(),
            is_error: false,
        }));
        assert!(events.contains(&AgentEvent::ContextWindow {
            fraction: 15206.0 / 200_000.0
        }));
    }

    #[test]
    fn error_results_are_classified() {
        let cases = [
            (
                r#"{"type":"result","subtype":"success","is_error":true,"result":"API Error: 529 overloaded","api_error_status":529}"#,
                "overloaded",
            ),
            (
                r#"{"type":"result","subtype":"success","is_error":true,"result":"API Error: 429 rate limited"}"#,
                "rate-limit",
            ),
            (
                r#"{"type":"result","subtype":"success","is_error":true,"result":"API Error: 500 boom"}"#,
                "server-error",
            ),
            (
                r#"{"type":"result","subtype":"error_max_turns","is_error":true,"errors":["Reached maximum number of turns (2)"]}"#,
                "provider",
            ),
            (
                r#"{"type":"result","subtype":"error_max_budget_usd","is_error":true,"total_cost_usd":0.26,"errors":["Reached maximum budget ($0.25)"]}"#,
                "budget",
            ),
            (
                r#"{"type":"result","subtype":"error_during_execution","is_error":true,"errors":["crashed"]}"#,
                "process-exit",
            ),
        ];
        for (line, class) in cases {
            let (reply, _) = replay(line);
            let error = reply.expect_err(line);
            assert_eq!(error.class().name(), class, "{line}: {error}");
        }
    }

    #[test]
    fn args_follow_the_request() {
        let adapter = ClaudeCode {
            bin: PathBuf::from("claude"),
            model: Some("sonnet".to_owned()),
            env: ChildEnv::default(),
            options: Map::new(),
            secret: None,
            key_var: None,
            outer_env: Environment::default(),
            temp_dir: PathBuf::from("/tmp"),
        };
        let request = AgentRequest {
            prompt: "hi".to_owned(),
            system: Some("Be terse.".to_owned()),
            tools: vec![super::super::ToolGrant {
                name: "Edit".to_owned(),
                timeout: None,
                description: None,
                input_schema: None,
                command: Vec::new(),
            }],
            permission: Some(PermissionMode::AcceptEdits),
            max_turns: Some(4),
            resume_session: Some("-abc".to_owned()),
            ..AgentRequest::default()
        };
        let args = adapter.args(&request).expect("valid");
        assert_eq!(
            args.join(" "),
            "-p --input-format stream-json --output-format stream-json --verbose --model sonnet \
             --append-system-prompt Be terse. --allowedTools Edit --permission-mode acceptEdits \
             --max-turns 4 --resume=-abc"
        );
    }

    #[test]
    fn a_nodes_budget_becomes_claude_codes_own_limit() {
        let adapter = ClaudeCode {
            bin: PathBuf::from("claude"),
            model: None,
            env: ChildEnv::default(),
            options: Map::new(),
            secret: None,
            key_var: None,
            outer_env: Environment::default(),
            temp_dir: PathBuf::from("/tmp"),
        };
        let request = AgentRequest {
            budget_usd: Some(0.25),
            ..AgentRequest::default()
        };
        let args = adapter.args(&request).expect("valid").join(" ");
        assert!(args.ends_with("--max-budget-usd 0.25"), "{args}");
        // An explicit option wins.
        let mut options = Map::new();
        options.insert("max-budget-usd".to_owned(), serde_json::json!(1));
        let request = AgentRequest {
            budget_usd: Some(0.25),
            options,
            ..AgentRequest::default()
        };
        let args = adapter.args(&request).expect("valid").join(" ");
        assert!(args.ends_with("--max-budget-usd 1"), "{args}");
        assert!(!args.contains("0.25"), "{args}");
        // What is left of the run's budget, when it is less than the node's.
        let request = AgentRequest {
            budget_usd: Some(0.25),
            run_budget_left_usd: Some(0.1),
            ..AgentRequest::default()
        };
        let args = adapter.args(&request).expect("valid").join(" ");
        assert!(args.ends_with("--max-budget-usd 0.1"), "{args}");
        let request = AgentRequest {
            run_budget_left_usd: Some(0.5),
            ..AgentRequest::default()
        };
        let args = adapter.args(&request).expect("valid").join(" ");
        assert!(args.ends_with("--max-budget-usd 0.5"), "{args}");
    }
}
