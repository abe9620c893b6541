//! [`TemporalExecutor`]: the interpreter's effects as Temporal commands. The interpreter is
//! an ordinary `Send` future; each effect it asks for is queued, with a channel for its
//! result, to the workflow's driver ([`super::workflow`]), which runs in the same workflow
//! task and turns it into an activity or a timer. The order of the commands is the order
//! the interpreter asks for them, so a replay issues the same commands in the same order.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use futures::channel::{mpsc, oneshot};
use futures_util::FutureExt;
use futures_util::future::BoxFuture;

use super::wire::{
    AgentCall, AgentDone, CommandCall, CommandDone, FileCall, FileDone, WorkflowRef,
};
use crate::providers::{AgentRequest, EventSink, ProviderError, ProviderFuture};
use crate::runtime::RunContext;
use crate::runtime::executor::{CommandError, CommandOutput, CommandSpec, Executor, LineSink};
use crate::store::Timestamp;

/// An effect the interpreter asked for, with where its result goes.
pub(super) enum Effect {
    /// An agent call (the `agent` activity).
    Agent(Box<AgentCall>, oneshot::Sender<AgentDone>),
    /// A command (the `command` activity).
    Command(Box<CommandCall>, oneshot::Sender<CommandDone>),
    /// A file read or written (the `file` activity).
    File(FileCall, oneshot::Sender<FileDone>),
    /// A timer.
    Timer(Duration, oneshot::Sender<()>),
}

/// The interpreter's executor inside a Temporal workflow.
#[derive(Debug)]
pub(super) struct TemporalExecutor {
    effects: mpsc::UnboundedSender<Effect>,
    workflow: WorkflowRef,
    /// Workflow time in milliseconds since the epoch, set by the driver at each activation.
    now_ms: Arc<AtomicU64>,
    /// Whether each provider can compact a session (from the plan's providers, which every
    /// worker builds alike from the same workflow).
    compactable: HashMap<String, bool>,
    /// The state of the jitter's draws.
    random: AtomicU64,
}

impl TemporalExecutor {
    /// The executor of run `run_id`, whose effects go to `effects`, reading the time from
    /// `now_ms`.
    pub(super) fn new(
        run_id: &str,
        effects: mpsc::UnboundedSender<Effect>,
        workflow: WorkflowRef,
        now_ms: Arc<AtomicU64>,
        compactable: HashMap<String, bool>,
    ) -> Self {
        // The seed: the run's id, hashed (FNV-1a), so each run draws its own sequence.
        let seed = run_id
            .bytes()
            .fold(0xCBF2_9CE4_8422_2325_u64, |hash, byte| {
                (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01B3)
            });
        Self {
            effects,
            workflow,
            now_ms,
            compactable,
            random: AtomicU64::new(seed),
        }
    }
}

impl TemporalExecutor {
    /// Asks for the `file` activity.
    fn file(&self, call: FileCall) -> BoxFuture<'static, FileDone> {
        let (reply, done) = oneshot::channel();
        let sent = self.effects.unbounded_send(Effect::File(call, reply));
        async move {
            if sent.is_err() {
                return Err(gone());
            }
            done.await.map_err(|_| gone())?
        }
        .boxed()
    }
}

/// The driver is gone: the workflow is ending (evicted, cancelled), so is this run.
fn gone() -> String {
    "the Temporal workflow stopped driving this run".to_owned()
}

impl Executor for TemporalExecutor {
    fn call_agent<'a>(
        &'a self,
        _ctx: &'a RunContext,
        provider: &'a str,
        request: &'a AgentRequest,
        events: &'a dyn EventSink,
    ) -> ProviderFuture<'a> {
        let call = AgentCall {
            workflow: self.workflow.clone(),
            provider: provider.to_owned(),
            request: request.clone(),
        };
        let (reply, done) = oneshot::channel();
        let sent = self
            .effects
            .unbounded_send(Effect::Agent(Box::new(call), reply));
        Box::pin(async move {
            if sent.is_err() {
                return Err(ProviderError::unavailable(provider));
            }
            let done = done.await.map_err(|_| ProviderError::Unavailable {
                provider: format!("{provider} ({})", gone()),
            })?;
            // The call's events, in order, once it is over (a worker elsewhere ran it).
            for event in done.events {
                events.emit(event);
            }
            done.result.map_err(super::wire::RemoteFailure::error)
        })
    }

    fn can_sandbox(&self) -> bool {
        false
    }

    fn can_compact(&self, _ctx: &RunContext, provider: &str) -> bool {
        self.compactable.get(provider).copied().unwrap_or(false)
    }

    fn run_command<'a>(
        &'a self,
        command: &'a CommandSpec,
        lines: Option<&'a LineSink<'a>>,
    ) -> BoxFuture<'a, Result<CommandOutput, CommandError>> {
        let call = CommandCall {
            workflow: self.workflow.clone(),
            spec: command.clone(),
            lines: lines.is_some(),
        };
        let (reply, done) = oneshot::channel();
        let sent = self
            .effects
            .unbounded_send(Effect::Command(Box::new(call), reply));
        async move {
            if sent.is_err() {
                return Err(CommandError::Wait(gone()));
            }
            let done = done.await.map_err(|_| CommandError::Wait(gone()))?;
            if let Some(lines) = lines {
                for (stream, line) in &done.lines {
                    lines(*stream, line);
                }
            }
            done.result
        }
        .boxed()
    }

    fn read_text<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, Result<String, String>> {
        let call = FileCall::Read {
            path: path.display().to_string(),
        };
        let done = self.file(call);
        async move { done.await.map(Option::unwrap_or_default) }.boxed()
    }

    fn write_text<'a>(&'a self, path: &'a Path, text: String) -> BoxFuture<'a, Result<(), String>> {
        let call = FileCall::Write {
            path: path.display().to_string(),
            text,
        };
        let done = self.file(call);
        async move { done.await.map(|_| ()) }.boxed()
    }

    fn timer(&self, duration: Duration) -> BoxFuture<'static, ()> {
        let (reply, done) = oneshot::channel();
        let sent = self.effects.unbounded_send(Effect::Timer(duration, reply));
        async move {
            // Without a driver the timer never fires: the run is being torn down.
            if sent.is_ok() && done.await.is_ok() {
                return;
            }
            std::future::pending::<()>().await;
        }
        .boxed()
    }

    fn now(&self) -> Timestamp {
        Timestamp(self.now_ms.load(Ordering::Relaxed))
    }

    fn random_unit(&self) -> f64 {
        // splitmix64 over a seed from the run id: the same draws, in the same order, on
        // every replay of the run.
        let mut z = self
            .random
            .fetch_add(0x9E37_79B9_7F4A_7C15, Ordering::Relaxed)
            .wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        // The top 53 bits as a fraction.
        (z >> 11) as f64 / (1_u64 << 53) as f64
    }
}
