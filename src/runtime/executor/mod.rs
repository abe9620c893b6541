//! The executor: where the interpreter's effects happen. The interpreter decides — which
//! step runs, with what rendered input, what its result means for the state — and asks the
//! executor to act: call an agent's provider, run a command, start a timer, read the clock.
//! [`LocalExecutor`] acts in this process (the providers, child processes in their own
//! groups, tokio's timers, the system clock); another engine (Temporal: activities, timers
//! and workflow time) implements the same trait, and the interpreter does not change.
//! Tests use `ScriptedExecutor` (effects answered from a script, every call recorded) on a
//! `ManualClock` (time moves only when the test moves it).

mod clock;
mod command;
mod files;
mod local;
#[cfg(test)]
mod manual_clock;
#[cfg(test)]
mod scripted;

use std::fmt::Debug;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;

pub use clock::{Clock, SystemClock};
pub use files::{read_text, write_text};
pub use local::LocalExecutor;
#[cfg(test)]
pub(crate) use manual_clock::ManualClock;
#[cfg(test)]
pub(crate) use scripted::{Scripted, ScriptedExecutor};

use super::RunContext;
use crate::providers::{AgentRequest, EventSink, ProviderFuture};
use crate::store::Timestamp;
use crate::workspace::snapshot::Snapshots;

/// Acts for the interpreter.
pub trait Executor: Send + Sync + Debug {
    /// One call of an agent: `request` to the provider named `provider`, its events to
    /// `events`. `ctx` is the run's context (the local engine finds its providers there).
    fn call_agent<'a>(
        &'a self,
        ctx: &'a RunContext,
        provider: &'a str,
        request: &'a AgentRequest,
        events: &'a dyn EventSink,
    ) -> ProviderFuture<'a>;

    /// Whether the provider `provider` can compact a session it continues (otherwise a
    /// full session is continued fresh).
    fn can_compact(&self, ctx: &RunContext, provider: &str) -> bool;

    /// Runs a command to its end (or its limit), its output lines to `lines` as they come.
    /// Dropping the future ends the command and everything it started.
    fn run_command<'a>(
        &'a self,
        command: &'a CommandSpec,
        lines: Option<&'a LineSink<'a>>,
    ) -> BoxFuture<'a, Result<CommandOutput, CommandError>>;

    /// A timer: resolves after `duration`.
    fn timer(&self, duration: Duration) -> BoxFuture<'static, ()>;

    /// The current time.
    fn now(&self) -> Timestamp;

    /// Reads a text file the run keeps its work in (a `task-loop`'s tasks file).
    fn read_text<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, Result<String, String>>;

    /// Replaces a text file the run keeps its work in, atomically (a sibling file renamed
    /// over it).
    fn write_text<'a>(&'a self, path: &'a Path, text: String) -> BoxFuture<'a, Result<(), String>>;

    /// A random number in `0..1` (retry jitter): drawn afresh locally, from a seeded
    /// sequence on an engine that must decide the same way when it replays a run.
    fn random_unit(&self) -> f64;

    /// The snapshots of the run's workspace, when this engine keeps them where the files
    /// are: locally, the workspace's own (git, in this process). An engine whose steps
    /// run where the files are not (Temporal's workers) keeps none here yet.
    fn snapshots(&self, ctx: &RunContext) -> Option<Arc<Snapshots>> {
        let _ = ctx;
        None
    }

    /// Whether a sandboxed step's processes can run here, beside the egress proxy this
    /// process starts for them: locally yes; an engine whose commands run on other
    /// machines (Temporal's workers) cannot, and a sandboxed step there is refused.
    fn can_sandbox(&self) -> bool {
        true
    }

    /// Resolves once what the effects dropped so far had started is gone: the processes
    /// of a race's losers, so the step after the race never runs beside them. Bounded
    /// (locally by the grace before SIGKILL). An engine whose effects end elsewhere (an
    /// activity's worker) has nothing to wait for here.
    fn dropped_effects_ended(&self) -> BoxFuture<'static, ()> {
        Box::pin(std::future::ready(()))
    }
}

/// Where a command's output line came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OutputStream {
    /// Standard output.
    Stdout,
    /// Standard error.
    Stderr,
}

impl OutputStream {
    /// `stdout` or `stderr`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Stdout => "stdout",
            Self::Stderr => "stderr",
        }
    }
}

impl std::fmt::Display for OutputStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.name())
    }
}

/// Receives a command's output lines (without their line ends).
pub type LineSink<'a> = dyn Fn(OutputStream, &str) + Send + Sync + 'a;

/// A command to run: a tool's, a custom tool's or a hook's, fully rendered.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CommandSpec {
    /// The program and its arguments (with `shell`, the words of one `sh -c` line).
    pub argv: Vec<String>,
    /// Run `argv` joined as one `sh -c` line.
    pub shell: bool,
    /// The working directory.
    pub cwd: PathBuf,
    /// The whole environment (nothing else is inherited).
    pub env: Vec<(String, String)>,
    /// Text on standard input (closed at its end); `None`: no input.
    pub stdin: Option<String>,
    /// Keep standard output (a hook's is discarded).
    pub capture_stdout: bool,
    /// End the command after this long.
    pub limit: Option<Duration>,
    /// The sandbox it runs in (`None`: unconfined).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confine: Option<crate::process::Confinement>,
}

/// What a finished command left.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CommandOutput {
    /// Standard output (bounded; a marker where it was cut).
    pub stdout: String,
    /// Standard error (bounded the same way).
    pub stderr: String,
    /// The exit code (`None`: ended by a signal).
    pub code: Option<i32>,
}

/// Why a command did not finish.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error, serde::Serialize, serde::Deserialize)]
pub enum CommandError {
    /// It has no program.
    #[error("there is no command to run")]
    Empty,
    /// It could not be started.
    #[error("could not start `{program}`: {reason}")]
    Start {
        /// The program.
        program: String,
        /// Why.
        reason: String,
    },
    /// It could not be waited for.
    #[error("could not be waited for: {0}")]
    Wait(String),
    /// It reached its limit and was ended.
    #[error("timed out after {0:?}")]
    TimedOut(Duration),
}
