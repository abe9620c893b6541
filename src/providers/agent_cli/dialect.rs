//! [`Dialect`]: what is an agent CLI's own — its command line and its output format. The
//! driver ([`CliProvider`](super::CliProvider)) does everything else.

use std::path::PathBuf;
use std::process::ExitStatus;

use serde_json::Value;

use super::launcher::Cli;
use crate::providers::mcp_config::ResolvedMcp;
use crate::providers::{
    AgentReply, AgentRequest, EventSink, PermissionAsk, ProviderError, ToolCheck,
};

/// One agent CLI's wire format, for the driver: one process per call, its output one JSON
/// object per line.
pub(crate) trait Dialect: Send + Sync + std::fmt::Debug {
    /// What the driver keeps for a call while it runs: what the CLI's output has said so
    /// far, and whatever the call needs until it ends (a private file, a session id).
    type Call: Send;

    /// The command line, added variables and input of one call; `mcp` holds the agent's
    /// MCP servers, resolved ([`Cli::mcp_servers`]) for the dialect to write in its CLI's
    /// own form.
    ///
    /// # Errors
    /// What keeps the call from starting (a file that cannot be written, an option of the
    /// wrong kind).
    fn prepare(
        &self,
        cli: &Cli,
        request: &AgentRequest,
        mcp: &[ResolvedMcp],
    ) -> Result<(Invocation, Self::Call), ProviderError>;

    /// Once the CLI started, before its first line (a dialect whose CLI never says its
    /// session reports it here).
    fn started(
        &self,
        _cli: &Cli,
        _call: &mut Self::Call,
        _request: &AgentRequest,
        _events: &dyn EventSink,
    ) {
    }

    /// One line of the CLI's output: mapped onto events, and what happens next.
    fn line(&self, cli: &Cli, call: &mut Self::Call, line: &Value, events: &dyn EventSink) -> Flow;

    /// The reply, or the error, once the output ended (or [`Flow::Done`] said the result
    /// is in) and the process exited (or did not in time: [`Exit::status`]).
    ///
    /// # Errors
    /// The call's failure, classified.
    fn finish(
        &self,
        cli: &Cli,
        call: Self::Call,
        exit: Exit,
        events: &dyn EventSink,
    ) -> Result<AgentReply, ProviderError>;
}

/// What to start for one call.
#[derive(Debug)]
pub(crate) struct Invocation {
    /// The arguments.
    pub(crate) args: Vec<String>,
    /// Variables added to the CLI's environment for this call.
    pub(crate) env: Vec<(String, String)>,
    /// Its standard input.
    pub(crate) input: Input,
    /// Files of atomic's the CLI writes (a usage report), removed once its process and
    /// everything it started are gone: a CLI ended early writes them as it exits, after the
    /// call is dropped.
    pub(crate) leftovers: Vec<PathBuf>,
}

/// What goes to a CLI's standard input.
#[derive(Debug)]
pub(crate) enum Input {
    /// Nothing: closed at once (the prompt is in the arguments; the CLI would read more).
    Closed,
    /// This text, then the end of input.
    Text(String),
    /// These JSON lines, with standard input kept open for the dialect's replies
    /// ([`Flow::Reply`], [`Flow::Guard`]) until the output ends: a control protocol.
    Conversation(Vec<Value>),
}

/// What the driver does after a line.
#[derive(Debug)]
pub(crate) enum Flow {
    /// Read on.
    Continue,
    /// Write this JSON line to the CLI's input (an answer to its request), then read on.
    Reply(Value),
    /// The CLI asks whether a tool may run: ask the call's tool guard (its
    /// `agent.tool.before` hooks), then write the line `reply` makes of the verdict.
    Guard {
        /// The tool call.
        check: ToolCheck,
        /// The answer to write, from the verdict (`Err`: refused, and why).
        reply: GuardReply,
    },
    /// The result is in: stop reading, let the process exit.
    Done,
    /// Nobody has decided what the agent asks: end the CLI (waiting for it, its input
    /// still open, so it can save its session) and pause the run for a person.
    Pause {
        /// The request.
        ask: PermissionAsk,
        /// The session to continue once answered.
        session_id: Option<String>,
    },
    /// The call failed: end the CLI now.
    Fail(ProviderError),
}

/// Makes a CLI's answer from a tool guard's verdict (see [`Flow::Guard`]).
pub(crate) struct GuardReply(pub(crate) Box<dyn FnOnce(Result<(), String>) -> Value + Send>);

impl std::fmt::Debug for GuardReply {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("GuardReply")
    }
}

/// How a CLI's process ended.
#[derive(Debug)]
pub(crate) struct Exit {
    /// Its status, or why there is none (it did not exit in time and is being ended).
    pub(crate) status: Result<ExitStatus, ProviderError>,
    /// The end of its stderr, trimmed.
    pub(crate) stderr: String,
}

impl Exit {
    /// The failure of a CLI that ended without `what` completes a call (its result line):
    /// why it did not exit, or a process exit with its stderr.
    pub(crate) fn unfinished(self, adapter: &'static str, what: &str) -> ProviderError {
        match self.status {
            Err(error) => error,
            Ok(status) => ProviderError::process_exit(
                adapter,
                status.code(),
                if self.stderr.is_empty() {
                    format!("the CLI exited without {what}")
                } else {
                    self.stderr
                },
            ),
        }
    }
}
