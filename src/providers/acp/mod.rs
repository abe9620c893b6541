//! `adapter="acp"`: any agent that speaks the Agent Client Protocol over stdio (the Gemini
//! CLI's `--acp`, `claude-code-acp`, `codex-acp`, …), driven through the official
//! `agent-client-protocol` SDK, one agent process per call.
//!
//! The provider's `command "program" "arg"…` starts the agent in the node's working
//! directory, in its own process group (a timeout or a cancelled run kills the group). atomic
//! is the ACP client: `initialize` (offering `fs/read_text_file` and `fs/write_text_file`),
//! `session/new` with the agent's MCP servers (or `session/load` to continue a session),
//! the model through the session's `model` config option, then `session/prompt`. While the
//! turn runs, `session/update` notifications become agent events (text, thinking, tool calls
//! and results, context use); permission requests are answered from the node's
//! `permission=` mode and its granted tool kinds (`policy.rs`); file requests are served
//! inside the working directory only, writes only when the mode allows edits.
//!
//! The agent authenticates its own way: `api-key-env=` passes that variable to it under its
//! own name, `option "env.NAME"` sets others (a base URL, say). The system prompt goes before
//! the prompt: ACP has no stable way to add to an agent's own.

mod client;
mod policy;
mod turn;

use std::path::PathBuf;
use std::time::Duration;

use agent_client_protocol::ByteStreams;
use agent_client_protocol::v1::schema::{
    EnvVariable, HttpHeader, McpServer, McpServerHttp, McpServerStdio, Meta, PromptResponse,
    StopReason,
};
use tokio::sync::mpsc;
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};

use super::binary::{is_executable, search_path};
use super::child;
use super::env::{ChildEnv, Environment, api_key, redact};
use super::mcp_config::{ResolvedMcp, held_secrets, resolve_mcp_servers};
use super::{
    AgentEvent, AgentReply, AgentRequest, EventSink, Provider, ProviderError, ProviderFuture, Usage,
};
use crate::ir::ProviderDecl;
use crate::process::{self, Child, Launch};
use client::{Failure, Setup};
use policy::Policy;
use turn::Turn;

const NAME: &str = "acp";

/// The npm packages of the ACP agents atomic is tested with, named when one is missing.
const KNOWN_AGENTS: &[(&str, &str)] = &[
    ("gemini", "@google/gemini-cli"),
    ("claude-code-acp", "@zed-industries/claude-code-acp"),
    ("codex-acp", "@zed-industries/codex-acp"),
];

/// How long a finished agent may take to exit before its group is killed.
const EXIT_GRACE: Duration = Duration::from_secs(2);

/// The ACP adapter.
#[derive(Debug)]
pub struct Acp {
    program: PathBuf,
    args: Vec<String>,
    env: ChildEnv,
    model: Option<String>,
    /// The `api-key-env=` variable, named in authentication failures.
    key_variable: Option<String>,
    /// Its value, scrubbed from error messages.
    secret: Option<String>,
    /// atomic's environment: the variables an `mcp` server is given are read from it.
    outer_env: Environment,
}

impl Acp {
    /// Configures the adapter from its `provider` block (see the module docs). Options:
    /// `pass-env`, `env.NAME`.
    ///
    /// # Errors
    /// [`ProviderError::Config`]: no `command`, the agent is not installed, the key variable
    /// is unset, `base-url=` is given, or an option has the wrong type.
    pub fn new(decl: &ProviderDecl, env: &Environment) -> Result<Self, ProviderError> {
        let Some((program, args)) = decl.command.split_first() else {
            return Err(config(format!(
                "provider `{}` needs a `command \"program\" \"arg\"…` child: the ACP agent to \
                 start, e.g. `command \"gemini\" \"--acp\"`",
                decl.name.value
            )));
        };
        if decl.base_url.is_some() {
            return Err(config(
                "`base-url=` means nothing to an ACP agent: give the agent's own setting with \
                 `option \"env.NAME\" \"…\"` (e.g. `GOOGLE_GEMINI_BASE_URL`, \
                 `ANTHROPIC_BASE_URL`)"
                    .to_owned(),
            ));
        }
        let program = locate(&program.value, env)?;
        let mut child = ChildEnv::new(env, &[], &[], &[]);
        child.apply_options(NAME, env, &decl.options)?;
        let key_variable = decl.api_key_env.as_ref().map(|name| name.value.clone());
        let secret = api_key(NAME, env, key_variable.as_deref())?;
        if let (Some(name), Some(key)) = (&key_variable, &secret) {
            child.set(name, key.as_str());
        }
        Ok(Self {
            program,
            args: args.iter().map(|arg| arg.value.clone()).collect(),
            env: child,
            model: decl.model.as_ref().map(|model| model.value.clone()),
            key_variable,
            secret,
            outer_env: env.clone(),
        })
    }

    /// The agent's MCP servers in ACP's shape; stdio servers start without the agent's key.
    fn mcp_servers(&self, request: &AgentRequest) -> Result<Vec<McpServer>, ProviderError> {
        let known: Vec<&str> = self.key_variable.as_deref().into_iter().collect();
        let scrub = held_secrets(self.env.iter(), &known);
        let servers = resolve_mcp_servers(NAME, &request.mcp, &self.outer_env, &scrub)?;
        Ok(servers
            .into_iter()
            .map(|server| match server {
                ResolvedMcp::Stdio {
                    name,
                    program,
                    args,
                    env,
                } => McpServer::Stdio(
                    McpServerStdio::new(name, program).args(args).env(
                        env.into_iter()
                            .map(|(name, value)| EnvVariable::new(name, value))
                            .collect::<Vec<_>>(),
                    ),
                ),
                ResolvedMcp::Http { name, url, headers } => McpServer::Http(
                    McpServerHttp::new(name, url).headers(
                        headers
                            .into_iter()
                            .map(|(name, value)| HttpHeader::new(name, value))
                            .collect::<Vec<_>>(),
                    ),
                ),
            })
            .collect())
    }

    async fn call(
        &self,
        request: &AgentRequest,
        events: &dyn EventSink,
    ) -> Result<AgentReply, ProviderError> {
        let policy = Policy::new(request)?;
        let prompt = match request.system.as_ref().filter(|s| !s.is_empty()) {
            Some(system) => format!("{system}\n\n{}", request.prompt),
            None => request.prompt.clone(),
        };
        let setup = Setup {
            cwd: std::path::absolute(&request.working_dir)
                .unwrap_or_else(|_| request.working_dir.clone()),
            resume: request.resume_session.clone(),
            mcp: self.mcp_servers(request)?,
            model: request.model.clone().or_else(|| self.model.clone()),
            prompt,
        };
        let launch = Launch::new(&self.program)
            .args(self.args.iter().cloned())
            .cwd(&request.working_dir)
            .envs(self.env.iter());
        let mut child = child::spawn(NAME, process::local().as_ref(), launch)?;
        let (Some(stdin), Some(stdout)) = (child.take_stdin(), child.take_stdout()) else {
            return Err(ProviderError::bad_output(
                NAME,
                "the agent has no stdin or stdout".to_owned(),
            ));
        };
        events.emit(AgentEvent::SessionStart {
            session_id: request.resume_session.clone(),
            model: setup.model.clone(),
        });
        let (sender, mut inbound) = mpsc::unbounded_channel();
        let transport = ByteStreams::new(stdin.compat_write(), stdout.compat());
        let conversation = client::converse(transport, sender, setup);
        tokio::pin!(conversation);
        let mut turn = Turn::default();
        let outcome = loop {
            tokio::select! {
                biased;
                Some(message) = inbound.recv() => turn.handle(message, &policy, events),
                outcome = &mut conversation => break outcome,
            }
        };
        while let Ok(message) = inbound.try_recv() {
            turn.handle(message, &policy, events);
        }
        turn.finish_message(events);
        let finished = match outcome {
            Ok(finished) => finished,
            Err(failure) => return Err(self.failed(failure, &mut child).await),
        };
        child.end();
        let _ = child::wait(NAME, &mut child, EXIT_GRACE).await;
        let response = &finished.response;
        match response.stop_reason {
            StopReason::EndTurn => {}
            StopReason::MaxTokens | StopReason::MaxTurnRequests => {
                return Err(ProviderError::stream_cut(
                    NAME,
                    format!(
                        "the agent stopped its turn early ({:?})",
                        response.stop_reason
                    ),
                ));
            }
            StopReason::Refusal => {
                return Err(ProviderError::rejected(
                    NAME,
                    0,
                    "the agent refused to continue".to_owned(),
                ));
            }
            StopReason::Cancelled | _ => {
                return Err(ProviderError::stream_cut(
                    NAME,
                    "the agent cancelled its turn".to_owned(),
                ));
            }
        }
        let usage = usage_of(response);
        if let Some(usage) = usage {
            events.emit(AgentEvent::Usage {
                usage,
                cost_usd: turn.cost_usd,
            });
        }
        events.emit(AgentEvent::SessionEnd {
            session_id: Some(finished.session_id.clone()),
        });
        Ok(AgentReply {
            text: turn.reply_text().to_owned(),
            session_id: Some(finished.session_id),
            usage: usage.unwrap_or_default(),
            cost_usd: turn.cost_usd,
            turns: 1 + turn.tool_calls,
        })
    }

    /// The error a failed conversation is: the agent's own words, with its exit status and
    /// stderr when it died.
    async fn failed(&self, failure: Failure, child: &mut Child) -> ProviderError {
        let error = match failure {
            Failure::Unsupported(message) => return config(message),
            Failure::Protocol(error) => error,
        };
        if client::is_auth_required(&error) {
            return ProviderError::Auth {
                adapter: NAME,
                status: 401,
                message: error.message,
                key_variable: self.key_variable.clone(),
            };
        }
        // The agent answered with an error naming the backend's HTTP status as its code
        // (the Gemini CLI does).
        let code = i32::from(error.code);
        if let Ok(status @ 400..=599) = u16::try_from(code) {
            return classify(
                &format!("status {status}: {}", error.message),
                self.key_variable.as_deref(),
            );
        }
        // A connection that broke because the agent exited says less than its stderr. The
        // SDK does not always say it broke (a write to a dead agent is an internal error
        // with a broken pipe), so an agent found exited a moment later is one too.
        let broken = agent_client_protocol::is_connection_terminated(&error)
            || agent_client_protocol::is_incoming_transport_closed(&error);
        let grace = Duration::from_millis(if broken { 500 } else { 50 });
        if let Ok(status) = child::wait(NAME, child, grace).await {
            let stderr = child.stderr_tail();
            return ProviderError::process_exit(
                NAME,
                status.code(),
                if stderr.is_empty() {
                    format!("the agent exited: {}", error.message)
                } else {
                    stderr
                },
            );
        }
        let mut message = error.message.clone();
        if let Some(data) = &error.data {
            message = format!("{message}: {data}");
        }
        classify(&message, self.key_variable.as_deref())
    }
}

impl Provider for Acp {
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

/// The agent's executable: a path, or a name on `PATH`.
fn locate(program: &str, env: &Environment) -> Result<PathBuf, ProviderError> {
    let found = if program.contains('/') {
        Some(PathBuf::from(program)).filter(|path| is_executable(path))
    } else {
        search_path(program, env)
    };
    found.ok_or_else(|| {
        let name = program.rsplit('/').next().unwrap_or(program);
        let install = KNOWN_AGENTS
            .iter()
            .find(|(known, _)| *known == name)
            .map_or_else(
                || "install the agent, or give the path to its executable".to_owned(),
                |(_, package)| format!("install it with `npm install -g {package}`"),
            );
        config(format!(
            "the ACP agent `{program}` was not found{}; {install}",
            if program.contains('/') {
                ""
            } else {
                " on PATH"
            }
        ))
    })
}

/// The turn's token usage: the prompt response's `usage`, else the Gemini CLI's
/// `_meta.quota.token_count`.
fn usage_of(response: &PromptResponse) -> Option<Usage> {
    if let Some(usage) = &response.usage {
        return Some(Usage {
            input_tokens: usage.input_tokens,
            output_tokens: usage.output_tokens,
            cache_read_tokens: usage.cached_read_tokens.unwrap_or_default(),
            cache_write_tokens: usage.cached_write_tokens.unwrap_or_default(),
        });
    }
    let meta: &Meta = response.meta.as_ref()?;
    let count = meta.get("quota")?.get("token_count")?;
    Some(Usage {
        input_tokens: count.get("input_tokens")?.as_u64()?,
        output_tokens: count.get("output_tokens")?.as_u64()?,
        ..Usage::default()
    })
}

/// An error the agent reported for its turn, by the HTTP status it names, if any.
fn classify(message: &str, key_variable: Option<&str>) -> ProviderError {
    let status = message
        .split(|c: char| !c.is_ascii_digit())
        .filter(|word| word.len() == 3)
        .filter_map(|word| word.parse::<u16>().ok())
        .find(|status| (400..600).contains(status));
    match status {
        Some(status @ (401 | 403)) => ProviderError::Auth {
            adapter: NAME,
            status,
            message: message.to_owned(),
            key_variable: key_variable.map(str::to_owned),
        },
        Some(429) => ProviderError::rate_limited(NAME, None),
        Some(503 | 529) => ProviderError::overloaded(NAME, None),
        Some(status @ 500..=599) => ProviderError::server(NAME, status, message.to_owned()),
        Some(status) => ProviderError::rejected(NAME, status, message.to_owned()),
        None => ProviderError::rejected(NAME, 0, message.to_owned()),
    }
}

fn config(message: impl Into<String>) -> ProviderError {
    ProviderError::config(NAME, message.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_known_agent_names_its_package() {
        let env = Environment::default().with("PATH", "/nonexistent");
        let error = locate("claude-code-acp", &env).expect_err("missing");
        assert!(
            error
                .to_string()
                .contains("npm install -g @zed-industries/claude-code-acp"),
            "{error}"
        );
        let error = locate("my-agent", &env).expect_err("missing");
        assert!(error.to_string().contains("install the agent"), "{error}");
    }

    #[test]
    fn errors_are_classified_by_the_status_they_name() {
        assert!(matches!(
            classify("[API Error: 429 Too Many Requests]", None),
            ProviderError::RateLimited { .. }
        ));
        assert!(matches!(
            classify("got status 401 from the model", Some("KEY")),
            ProviderError::Auth { status: 401, .. }
        ));
        assert!(matches!(
            classify("Internal error", None),
            ProviderError::Rejected { status: 0, .. }
        ));
    }
}
