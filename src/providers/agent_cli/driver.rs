//! [`CliProvider`]: the one flow of an agent CLI call (see the module docs), for any
//! [`Dialect`].

use std::time::Duration;

use serde_json::Value;
use tokio::io::AsyncWriteExt;
use tokio::process::ChildStdin;

use super::agent::CliAgent;
use super::credentials::Credentials;
use super::dialect::{Dialect, Exit, Flow, Input};
use super::launcher::Cli;
use crate::providers::ndjson::NdjsonReader;
use crate::providers::{AgentReply, AgentRequest, EventSink, ProviderError, ToolGuard, child};

/// How long the process may take to exit after its output ended.
const EXIT_GRACE: Duration = Duration::from_secs(10);

/// An agent CLI provider: the driver, speaking `D`'s dialect.
#[derive(Debug)]
pub(crate) struct CliProvider<D> {
    cli: Cli,
    dialect: D,
}

impl<D: Dialect> CliProvider<D> {
    /// `cli`, configured, speaking `dialect`.
    pub(crate) fn new(cli: Cli, dialect: D) -> Self {
        Self { cli, dialect }
    }

    /// The configured CLI.
    #[cfg(test)]
    pub(crate) fn cli(&self) -> &Cli {
        &self.cli
    }

    /// The dialect.
    #[cfg(test)]
    pub(crate) fn dialect(&self) -> &D {
        &self.dialect
    }
}

impl<D: Dialect> CliAgent for CliProvider<D> {
    fn adapter(&self) -> &'static str {
        self.cli.adapter()
    }

    fn credentials(&self) -> &Credentials {
        self.cli.credentials()
    }

    async fn call(
        &self,
        request: &AgentRequest,
        events: &dyn EventSink,
    ) -> Result<AgentReply, ProviderError> {
        let adapter = self.cli.adapter();
        self.cli.refuse_unsupported(request)?;
        let mcp = self.cli.mcp_servers(request)?;
        let (invocation, mut call) = self.dialect.prepare(&self.cli, request, &mcp)?;
        // The leftovers are removed with the process group, not before: `child` is dropped
        // last, after `finish` read them.
        let mut child = self.cli.spawn_leaving(
            request,
            invocation.args,
            invocation.env,
            invocation.leftovers,
        )?;
        let mut stdin = child.take_stdin();
        match invocation.input {
            Input::Closed => drop(stdin.take()),
            Input::Text(text) => {
                if let Some(mut pipe) = stdin.take() {
                    // A failed write means the CLI already exited; its exit says why.
                    let _ = pipe.write_all(text.as_bytes()).await;
                    let _ = pipe.shutdown().await;
                }
            }
            Input::Conversation(lines) => {
                if let Some(pipe) = stdin.as_mut() {
                    for line in &lines {
                        let _ = write_line(pipe, line).await;
                    }
                }
            }
        }
        self.dialect.started(&self.cli, &mut call, request, events);
        let stdout = child
            .take_stdout()
            .ok_or_else(|| ProviderError::bad_output(adapter, "the CLI has no stdout"))?;
        let mut reader = NdjsonReader::new(adapter, stdout);
        while let Some(line) = reader.next().await? {
            match self.dialect.line(&self.cli, &mut call, &line, events) {
                Flow::Continue => {}
                Flow::Reply(reply) => {
                    if let Some(pipe) = stdin.as_mut() {
                        let _ = write_line(pipe, &reply).await;
                    }
                }
                Flow::Guard { check, reply } => {
                    // The CLI waits for the answer: the tool runs only if the guard lets it.
                    let verdict =
                        ToolGuard::allows(request.hooks.tool_guard.as_ref(), &check).await;
                    if let Some(pipe) = stdin.as_mut() {
                        let _ = write_line(pipe, &(reply.0)(verdict)).await;
                    }
                }
                Flow::Done => break,
                Flow::Pause { ask, session_id } => {
                    // The request stays unanswered. The CLI is ended and waited for with its
                    // input still open, so one that saves its session when asked to stop
                    // saves it with the call marked interrupted (not failed), and the
                    // session continues once a person answers.
                    child.terminate().await;
                    return Err(ProviderError::awaiting_permission(adapter, ask, session_id));
                }
                Flow::Fail(error) => return Err(error),
            }
        }
        if let Some(mut pipe) = stdin.take() {
            let _ = pipe.shutdown().await;
        }
        let status = child::wait(adapter, &mut child, EXIT_GRACE).await;
        let exit = Exit {
            status,
            stderr: child.stderr_tail(),
        };
        self.dialect.finish(&self.cli, call, exit, events)
    }
}

/// Writes one NDJSON line to the CLI's input.
async fn write_line(stdin: &mut ChildStdin, value: &Value) -> std::io::Result<()> {
    let mut line = value.to_string();
    line.push('\n');
    stdin.write_all(line.as_bytes()).await?;
    stdin.flush().await
}
