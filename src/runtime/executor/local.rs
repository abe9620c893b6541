//! [`LocalExecutor`]: the effects in this process.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;

use super::{Clock, CommandError, CommandOutput, CommandSpec, Executor, LineSink, SystemClock};
use crate::process::{self, Spawner};
use crate::providers::{AgentRequest, EventSink, ProviderError, ProviderFuture};
use crate::runtime::RunContext;
use crate::store::Timestamp;

/// Acts in this process: the run's providers, child processes (started by its spawner),
/// tokio's timers, a clock.
#[derive(Clone, Debug)]
pub struct LocalExecutor {
    clock: Arc<dyn Clock>,
    spawner: Arc<dyn Spawner>,
}

impl Default for LocalExecutor {
    fn default() -> Self {
        Self::with_clock(Arc::new(SystemClock))
    }
}

impl LocalExecutor {
    /// A local executor reading the time from `clock`, starting commands unconfined.
    #[must_use]
    pub fn with_clock(clock: Arc<dyn Clock>) -> Self {
        Self {
            clock,
            spawner: process::local(),
        }
    }

    /// The same executor, starting commands with `spawner`.
    #[must_use]
    pub fn with_spawner(mut self, spawner: Arc<dyn Spawner>) -> Self {
        self.spawner = spawner;
        self
    }
}

impl Executor for LocalExecutor {
    fn call_agent<'a>(
        &'a self,
        ctx: &'a RunContext,
        provider: &'a str,
        request: &'a AgentRequest,
        events: &'a dyn EventSink,
    ) -> ProviderFuture<'a> {
        match ctx.providers.get(provider) {
            Some(found) => Box::pin(async move { found.run(request, events).await }),
            None => Box::pin(std::future::ready(Err(ProviderError::unavailable(
                provider,
            )))),
        }
    }

    fn can_compact(&self, ctx: &RunContext, provider: &str) -> bool {
        ctx.providers
            .get(provider)
            .is_some_and(|found| found.can_compact())
    }

    fn run_command<'a>(
        &'a self,
        command: &'a CommandSpec,
        lines: Option<&'a LineSink<'a>>,
    ) -> BoxFuture<'a, Result<CommandOutput, CommandError>> {
        super::command::run(self.spawner.as_ref(), command, lines).boxed()
    }

    fn timer(&self, duration: Duration) -> BoxFuture<'static, ()> {
        tokio::time::sleep(duration).boxed()
    }

    fn now(&self) -> Timestamp {
        self.clock.now()
    }

    // Synchronous, so a read-modify-write in this process never yields between its parts.
    fn read_text<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, Result<String, String>> {
        std::future::ready(super::read_text(path)).boxed()
    }

    fn write_text<'a>(&'a self, path: &'a Path, text: String) -> BoxFuture<'a, Result<(), String>> {
        std::future::ready(super::write_text(path, &text)).boxed()
    }

    fn random_unit(&self) -> f64 {
        rand::random_range(0.0..1.0)
    }

    fn snapshots(&self, ctx: &RunContext) -> Option<Arc<crate::workspace::snapshot::Snapshots>> {
        ctx.workspace.snapshots()
    }

    fn dropped_effects_ended(&self) -> BoxFuture<'static, ()> {
        Box::pin(crate::process::ended())
    }
}
