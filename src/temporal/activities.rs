//! The activities: an agent call and a command, run on whichever worker picks them up,
//! beating while they run (so a dead worker's step moves to another within seconds) and
//! stopping when the workflow cancels them. What they return enters Temporal's history, so
//! it is redacted first, as the store would be; a command's environment is this worker's
//! (without provider keys) beneath what the workflow set.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::FutureExt;
use temporalio_macros::activities;
use temporalio_sdk::activities::{ActivityContext, ActivityError};

use super::engine::Engine;
use super::wire::{
    AgentCall, AgentDone, CommandCall, CommandDone, FileCall, FileDone, RemoteFailure,
};
use crate::ir::ErrorClass;
use crate::providers::{AgentEvent, CallJournal, JournalBackend, Redactor};
use crate::runtime::executor::{
    CommandError, CommandSpec, Executor, LocalExecutor, OutputStream, read_text, write_text,
};

/// How often a running activity tells Temporal it is alive.
pub(super) const BEAT_EVERY: Duration = Duration::from_secs(2);

/// The activities of a worker.
pub struct Activities {
    engine: Arc<Engine>,
    local: LocalExecutor,
}

impl Activities {
    /// The activities of a worker with `engine`.
    pub(super) fn new(engine: Arc<Engine>) -> Self {
        Self {
            engine,
            local: LocalExecutor::default(),
        }
    }
}

#[activities]
impl Activities {
    /// One agent call, through this worker's provider.
    #[activity(name = "atomic-agent")]
    pub async fn agent(
        self: Arc<Self>,
        ctx: ActivityContext,
        call: AgentCall,
    ) -> Result<AgentDone, ActivityError> {
        let prepared = match self.engine.prepared(&call.workflow) {
            Ok(prepared) => prepared,
            Err(message) => return Ok(refused(message)),
        };
        let Some(provider) = prepared.providers.get(&call.provider).cloned() else {
            return Ok(refused(format!(
                "provider `{}` is not available on this worker",
                call.provider
            )));
        };
        let events: Mutex<Vec<AgentEvent>> = Mutex::default();
        let sink = |event: AgentEvent| {
            // The pieces of a message are in its `message-complete`: the history keeps that.
            if !matches!(
                event,
                AgentEvent::TextDelta { .. } | AgentEvent::ThinkingDelta { .. }
            ) {
                events
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .push(event);
            }
        };
        let beats = Arc::new(Beats::new(&ctx));
        let mut request = call.request;
        // A retried call (its worker died) continues the conversation it had saved.
        request.hooks.journal = Some(CallJournal(Arc::clone(&beats) as Arc<dyn JournalBackend>));
        let result = beats.while_running(provider.run(&request, &sink)).await?;
        let mut done = AgentDone {
            result: result.map_err(|error| RemoteFailure::of(&error)),
            events: events
                .into_inner()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        };
        redact_agent(&prepared.redactor, &mut done);
        Ok(done)
    }

    /// Reads or replaces a file the run keeps its work in.
    #[activity(name = "atomic-file")]
    pub async fn file(
        self: Arc<Self>,
        _ctx: ActivityContext,
        call: FileCall,
    ) -> Result<FileDone, ActivityError> {
        Ok(match call {
            FileCall::Read { path } => read_text(Path::new(&path)).map(Some),
            FileCall::Write { path, text } => write_text(Path::new(&path), &text).map(|()| None),
        })
    }

    /// One command (a tool's, a custom tool's or a hook's).
    #[activity(name = "atomic-command")]
    pub async fn command(
        self: Arc<Self>,
        ctx: ActivityContext,
        call: CommandCall,
    ) -> Result<CommandDone, ActivityError> {
        let prepared = match self.engine.prepared(&call.workflow) {
            Ok(prepared) => prepared,
            Err(message) => {
                return Ok(CommandDone {
                    result: Err(CommandError::Start {
                        program: call.spec.argv.first().cloned().unwrap_or_default(),
                        reason: message,
                    }),
                    lines: Vec::new(),
                });
            }
        };
        let redactor = &prepared.redactor;
        let mut spec: CommandSpec = call.spec;
        // The worker's environment (without provider keys) beneath what the workflow set.
        let mut env: Vec<(String, String)> = prepared
            .tool_env
            .iter()
            .filter(|(name, _)| !spec.env.iter().any(|(set, _)| set == name))
            .map(|(name, value)| (name.to_owned(), value.to_owned()))
            .collect();
        env.append(&mut spec.env);
        spec.env = env;
        let lines: Mutex<Vec<(OutputStream, String)>> = Mutex::default();
        let keep = |stream: OutputStream, line: &str| {
            lines
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push((stream, line.to_owned()));
        };
        let result = Beats::new(&ctx)
            .while_running(
                self.local
                    .run_command(&spec, call.lines.then_some(&keep as &_)),
            )
            .await?;
        let mut done = CommandDone {
            result,
            lines: lines
                .into_inner()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        };
        if let Ok(output) = &mut done.result {
            output.stdout = redactor.redact(&output.stdout).into_owned();
            output.stderr = redactor.redact(&output.stderr).into_owned();
        }
        for (_, line) in &mut done.lines {
            *line = redactor.redact(line).into_owned();
        }
        Ok(done)
    }
}

/// An activity's heartbeats: every [`BEAT_EVERY`] while it runs, carrying the progress its
/// call last saved (so a call retried on another worker reads it back).
struct Beats {
    ctx: ActivityContext,
    saved: Mutex<serde_json::Value>,
}

impl Beats {
    fn new(ctx: &ActivityContext) -> Self {
        let saved = ctx
            .heartbeat_details()
            .deserialize::<serde_json::Value>()
            .ok()
            .flatten()
            .unwrap_or_default();
        Self {
            ctx: ctx.clone(),
            saved: Mutex::new(saved),
        }
    }

    fn saved(&self) -> serde_json::Value {
        self.saved
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Runs `work` while beating; a cancellation from the workflow drops it (ending its
    /// processes) and reports the activity cancelled.
    async fn while_running<T>(&self, work: impl Future<Output = T>) -> Result<T, ActivityError> {
        let mut work = std::pin::pin!(work.fuse());
        let mut cancelled = std::pin::pin!(self.ctx.cancelled().fuse());
        loop {
            let beat = tokio::time::sleep(BEAT_EVERY).fuse();
            let mut beat = std::pin::pin!(beat);
            futures_util::select_biased! {
                done = work.as_mut() => return Ok(done),
                () = cancelled.as_mut() => return Err(ActivityError::cancelled()),
                () = beat.as_mut() => {
                    let _ = self.ctx.record_heartbeat(self.saved()).await;
                }
            }
        }
    }
}

fn refused(message: String) -> AgentDone {
    AgentDone {
        result: Err(RemoteFailure {
            class: ErrorClass::Provider,
            message,
            retry_after_ms: None,
            retried: false,
            awaiting: None,
        }),
        events: Vec::new(),
    }
}

fn redact_agent(redactor: &Redactor, done: &mut AgentDone) {
    match &mut done.result {
        Ok(reply) => reply.text = redactor.redact(&reply.text).into_owned(),
        Err(failure) => {
            failure.message = redactor.redact(&failure.message).into_owned();
            if let Some((ask, _)) = &mut failure.awaiting {
                redactor.redact_value(&mut ask.input);
            }
        }
    }
    for event in &mut done.events {
        let mut value = serde_json::to_value(&*event).unwrap_or_default();
        redactor.redact_value(&mut value);
        if let Ok(clean) = serde_json::from_value(value) {
            *event = clean;
        }
    }
}

impl JournalBackend for Beats {
    fn load(
        &self,
    ) -> std::pin::Pin<Box<dyn Future<Output = Option<serde_json::Value>> + Send + '_>> {
        let saved = Some(self.saved()).filter(|value| !value.is_null());
        Box::pin(std::future::ready(saved))
    }

    fn save(
        &self,
        progress: serde_json::Value,
    ) -> std::pin::Pin<Box<dyn Future<Output = Result<(), String>> + Send + '_>> {
        *self
            .saved
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = progress.clone();
        Box::pin(async move {
            self.ctx
                .record_heartbeat(progress)
                .await
                .map_err(|error| error.to_string())
        })
    }
}
