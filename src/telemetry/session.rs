//! What the CLI holds while a run exports its trace: the sink the run's events go through,
//! the providers its agent calls go through, and the bounded flush at the end.

use std::sync::Arc;
use std::time::Duration;

use opentelemetry::InstrumentationScope;
use opentelemetry::trace::TracerProvider as _;

use super::Settings;
use super::conventions::trace_id;
use super::export::Pipeline;
use super::observed::Observed;
use super::trace::RunTrace;
use crate::providers::{Provider, Redactor};
use crate::runtime::{Providers, RunEvent, RunSink};

/// How long the end of a run waits for its last spans to be sent.
const FLUSH_WAIT: Duration = Duration::from_secs(3);

/// One stretch of a run (`atomic run`, or one `atomic resume`) being traced.
pub struct Telemetry {
    pipeline: Pipeline,
    trace: Arc<RunTrace>,
}

impl Telemetry {
    /// Starts exporting the run `run_id` as `settings` say; every text is redacted by
    /// `redactor`. Must be called outside an async runtime (the exporter's blocking client
    /// is built here).
    ///
    /// # Errors
    /// The exporter cannot be built (a malformed endpoint).
    pub fn start(settings: &Settings, run_id: &str, redactor: Redactor) -> Result<Self, String> {
        let pipeline = Pipeline::start(settings, trace_id(run_id))?;
        let scope = InstrumentationScope::builder("atomic")
            .with_version(env!("CARGO_PKG_VERSION"))
            .build();
        let tracer = pipeline.provider.tracer_with_scope(scope);
        Ok(Self {
            pipeline,
            trace: Arc::new(RunTrace::new(tracer, settings.capture_content, redactor)),
        })
    }

    /// A sink giving each event to the trace, then to `inner`.
    #[must_use]
    pub fn sink(&self, inner: Arc<dyn RunSink>) -> Arc<dyn RunSink> {
        Arc::new(Tee {
            trace: Arc::clone(&self.trace),
            inner,
        })
    }

    /// `providers` with their calls traced.
    #[must_use]
    pub fn observe(&self, providers: Providers) -> Providers {
        providers.map(|name, inner| {
            Arc::new(Observed {
                name: name.to_owned(),
                inner,
                trace: Arc::clone(&self.trace),
            }) as Arc<dyn Provider>
        })
    }

    /// Ends the spans still open, sends what is queued (waiting a few seconds at most) and
    /// returns the one warning to print when the trace could not be delivered. Must be
    /// called outside an async runtime.
    #[must_use]
    pub fn finish(self) -> Option<String> {
        self.trace.close();
        self.pipeline.finish(FLUSH_WAIT)
    }
}

/// The trace, then the run's other sink.
struct Tee {
    trace: Arc<RunTrace>,
    inner: Arc<dyn RunSink>,
}

impl RunSink for Tee {
    fn emit(&self, event: &RunEvent) {
        self.trace.observe(event);
        self.inner.emit(event);
    }
}
