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

use std::time::Duration;

use agent_client_protocol::ByteStreams;
use agent_client_protocol::v1::schema::{
    EnvVariable, HttpHeader, McpServer, McpServerHttp, McpServerStdio, Meta, PromptResponse,
    StopReason,
};
use tokio::sync::mpsc;
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};

use super::agent_cli::{BaseUrl, Cli, CliAgent, CliSpec, Credentials, KeyVar, Program, end_call};
use super::child;
use super::mcp_config::ResolvedMcp;
use super::{
    AgentEvent, AgentReply, AgentRequest, EventSink, ProviderContext, ProviderError, Usage,
};
use crate::ir::ProviderDecl;
use crate::process::Child;
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

const SPEC: CliSpec = CliSpec {
    adapter: NAME,
    program: Program::Declared {
        known: KNOWN_AGENTS,
    },
    settings: &[],
    setting_prefixes: &[],
    credential_vars: &[],
    base_url: BaseUrl::Refused(
        "`base-url=` means nothing to an ACP agent: give the agent's own setting with \
         `option \"env.NAME\" \"…\"` (e.g. `GOOGLE_GEMINI_BASE_URL`, `ANTHROPIC_BASE_URL`)",
    ),
    key: KeyVar::Own,
    endpoint: None,
    defaults: &[],
};

/// The ACP adapter: the agent started by the provider's `command`, its environment and key
/// placed by the agent-CLI launcher.
#[derive(Debug)]
pub struct Acp {
    cli: Cli,
}

impl Acp {
    /// Configures the adapter from its `provider` block (see the module docs). Options:
    /// `pass-env`, `env.NAME`.
    ///
    /// # Errors
    /// [`ProviderError::Config`]: no `command`, the agent is not installed, the key variable
    /// is unset, `base-url=` is given, or an option has the wrong type.
    pub fn new(decl: &ProviderDecl, cx: &ProviderContext<'_>) -> Result<Self, ProviderError> {
        Ok(Self {
            cli: Cli::new(&SPEC, decl, cx)?,
        })
    }

    /// The agent's MCP servers in ACP's shape; stdio servers start without the agent's key.
    fn mcp_servers(&self, request: &AgentRequest) -> Result<Vec<McpServer>, ProviderError> {
        let servers = self.cli.mcp_servers(request)?;
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

    /// The error a failed conversation is: the agent's own words, with its exit status and
    /// stderr when it died.
    async fn failed(&self, failure: Failure, child: &mut Child) -> ProviderError {
        let error = match failure {
            Failure::Unsupported(message) => return config(message),
            Failure::Protocol(error) => error,
        };
        let credentials = self.cli.credentials();
        if client::is_auth_required(&error) {
            return credentials.status_error(401, &error.message);
        }
        // The agent answered with an error naming the backend's HTTP status as its code
        // (the Gemini CLI does).
        let code = i32::from(error.code);
        if let Ok(status @ 400..=599) = u16::try_from(code) {
            return credentials.status_error(status, &error.message);
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
        classify(&message, credentials)
    }
}

impl CliAgent for Acp {
    fn adapter(&self) -> &'static str {
        NAME
    }

    fn credentials(&self) -> &Credentials {
        self.cli.credentials()
    }

    async fn call(
        &self,
        request: &AgentRequest,
        events: &dyn EventSink,
    ) -> Result<AgentReply, ProviderError> {
        self.cli.refuse_unsupported(request)?;
        let policy = Policy::new(request)?;
        let prompt = match request.prompt.system.as_ref().filter(|s| !s.is_empty()) {
            Some(system) => format!("{system}\n\n{}", request.prompt.text),
            None => request.prompt.text.clone(),
        };
        let setup = Setup {
            cwd: std::path::absolute(request.workspace.root())
                .unwrap_or_else(|_| request.workspace.root().to_path_buf()),
            resume: request.session.resume.clone(),
            mcp: self.mcp_servers(request)?,
            model: self.cli.model(request),
            prompt,
        };
        // What the agent writes to its temp directory (the Gemini CLI's report of a failed
        // model request, the request in it) is the call's, removed once the agent is gone.
        let temp = self.cli.private_temp_dir(request)?;
        let tmpdir = vec![("TMPDIR".to_owned(), temp.display().to_string())];
        let mut child = self
            .cli
            .spawn_leaving(request, Vec::new(), tmpdir, vec![temp])?;
        let (Some(stdin), Some(stdout)) = (child.take_stdin(), child.take_stdout()) else {
            return Err(ProviderError::bad_output(
                NAME,
                "the agent has no stdin or stdout".to_owned(),
            ));
        };
        events.emit(AgentEvent::SessionStart {
            session_id: request.session.resume.clone(),
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
        turn.finish_tools(events);
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
        let usage = usage_of(response).unwrap_or_default();
        Ok(end_call(
            events,
            AgentReply {
                text: turn.reply_text().to_owned(),
                session_id: Some(finished.session_id),
                usage,
                cost_usd: turn.cost_usd,
                turns: turn.turns(),
            },
        ))
    }
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
fn classify(message: &str, credentials: &Credentials) -> ProviderError {
    let status = message
        .split(|c: char| !c.is_ascii_digit())
        .filter(|word| word.len() == 3)
        .filter_map(|word| word.parse::<u16>().ok())
        .find(|status| (400..600).contains(status));
    match status {
        Some(status) => credentials.status_error(status, message),
        None => ProviderError::rejected(NAME, 0, credentials.scrub(message)),
    }
}

fn config(message: impl Into<String>) -> ProviderError {
    ProviderError::config(NAME, message.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn credentials(key_variable: Option<&str>) -> Credentials {
        let mut decl = crate::providers::registry::test_decl("a", NAME);
        let mut env = crate::providers::Environment::default();
        if let Some(name) = key_variable {
            decl.api_key_env = Some(crate::source::Spanned::new(
                name.to_owned(),
                crate::source::Span::default(),
            ));
            env = env.with(name, "k-1");
        }
        Credentials::from_decl(NAME, &decl, &env).expect("set")
    }

    #[test]
    fn a_missing_known_agent_names_its_package() {
        let env = crate::providers::Environment::default().with("PATH", "/nonexistent");
        let cx = ProviderContext::new(std::path::Path::new("."), &env);
        let agent = |command: &str| {
            let mut decl = crate::providers::registry::test_decl("a", NAME);
            decl.command = vec![crate::source::Spanned::new(
                command.to_owned(),
                crate::source::Span::default(),
            )];
            Acp::new(&decl, &cx).expect_err("missing")
        };
        let error = agent("claude-code-acp");
        assert!(
            error
                .to_string()
                .contains("npm install -g @zed-industries/claude-code-acp"),
            "{error}"
        );
        let error = agent("my-agent");
        assert!(error.to_string().contains("install the agent"), "{error}");
    }

    #[test]
    fn errors_are_classified_by_the_status_they_name() {
        assert!(matches!(
            classify("[API Error: 429 Too Many Requests]", &credentials(None)),
            ProviderError::RateLimited { .. }
        ));
        assert!(matches!(
            classify("got status 401 from the model", &credentials(Some("KEY"))),
            ProviderError::Auth { status: 401, .. }
        ));
        assert!(matches!(
            classify("Internal error", &credentials(None)),
            ProviderError::Rejected { status: 0, .. }
        ));
    }
}
