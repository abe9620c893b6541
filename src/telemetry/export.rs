//! The OTLP pipeline of one run: spans go through the SDK's batch processor (its own
//! thread, a bounded queue: spans past it are dropped, the run never waits) to an OTLP/HTTP
//! protobuf exporter with a short timeout, guarded so that a collector that is down costs
//! one failed request, not one per batch.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use opentelemetry::KeyValue;
use opentelemetry::trace::{SpanId, TraceId};
use opentelemetry_otlp::{Protocol, RetryPolicy, WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::error::{OTelSdkError, OTelSdkResult};
use opentelemetry_sdk::trace::{
    BatchConfigBuilder, BatchSpanProcessor, IdGenerator, RandomIdGenerator, SdkTracerProvider,
    SpanData, SpanExporter,
};

use super::Settings;

/// How long one export request may take.
const EXPORT_TIMEOUT: Duration = Duration::from_secs(3);
/// After a failed export, batches are dropped unsent for this long.
const REST_AFTER_FAILURE: Duration = Duration::from_secs(10);
/// Spans waiting for export; past this they are dropped.
const MAX_QUEUE: usize = 4096;
/// Spans per request.
const MAX_BATCH: usize = 512;
/// How often the queue is sent while the run goes on.
const EXPORT_EVERY: Duration = Duration::from_secs(2);

/// The run's tracer provider, and what became of its exports.
pub(crate) struct Pipeline {
    pub(crate) provider: SdkTracerProvider,
    health: Arc<Health>,
    url: String,
}

impl Pipeline {
    /// Builds the pipeline to `settings.traces_url`; the run's spans all get `trace`.
    pub(crate) fn start(settings: &Settings, trace: TraceId) -> Result<Self, String> {
        crate::tls::install();
        let exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_protocol(Protocol::HttpBinary)
            .with_endpoint(settings.traces_url.clone())
            .with_timeout(EXPORT_TIMEOUT)
            .with_retry_policy(RetryPolicy::recommended().with_max_retries(1))
            .build()
            .map_err(|error| error.to_string())?;
        let health = Arc::new(Health::default());
        let guarded = Guarded {
            inner: exporter,
            health: Arc::clone(&health),
        };
        let batches = BatchConfigBuilder::default()
            .with_max_queue_size(MAX_QUEUE)
            .with_max_export_batch_size(MAX_BATCH)
            .with_scheduled_delay(EXPORT_EVERY)
            .build();
        let resource = Resource::builder()
            .with_service_name(settings.service_name.clone())
            .with_attribute(KeyValue::new("service.version", env!("CARGO_PKG_VERSION")))
            .build();
        let provider = SdkTracerProvider::builder()
            .with_span_processor(
                BatchSpanProcessor::builder(guarded)
                    .with_batch_config(batches)
                    .build(),
            )
            .with_id_generator(RunIds {
                trace,
                spans: RandomIdGenerator::default(),
            })
            .with_resource(resource)
            .build();
        Ok(Self {
            provider,
            health,
            url: settings.traces_url.clone(),
        })
    }

    /// Sends what is queued, waiting at most `wait`, and stops the pipeline. Returns the
    /// one line to warn with when spans could not be delivered.
    pub(crate) fn finish(self, wait: Duration) -> Option<String> {
        let flushed = self.provider.shutdown_with_timeout(wait);
        let lost = self.health.lost.load(Ordering::Relaxed);
        let first = self
            .health
            .first_error
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        match (lost, first, flushed) {
            (0, None, Ok(())) => None,
            (_, Some(error), _) => Some(format!(
                "warning: the run's trace was not fully exported to {} ({lost} spans lost): {error}",
                self.url
            )),
            (_, None, Err(error)) => Some(format!(
                "warning: the run's trace may not be fully exported to {}: {error}",
                self.url
            )),
            (_, None, Ok(())) => None,
        }
    }
}

/// Every span of the run in the run's trace; span ids random.
#[derive(Debug)]
struct RunIds {
    trace: TraceId,
    spans: RandomIdGenerator,
}

impl IdGenerator for RunIds {
    fn new_trace_id(&self) -> TraceId {
        self.trace
    }

    fn new_span_id(&self) -> SpanId {
        self.spans.new_span_id()
    }
}

/// What became of the exports.
#[derive(Debug, Default)]
struct Health {
    /// Spans not delivered.
    lost: AtomicU64,
    /// The first failure.
    first_error: Mutex<Option<String>>,
    /// When the last export failed.
    failed_at: Mutex<Option<Instant>>,
}

impl Health {
    fn resting(&self) -> bool {
        self.failed_at
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .is_some_and(|at| at.elapsed() < REST_AFTER_FAILURE)
    }

    fn failed(&self, spans: usize, error: Option<String>) {
        self.lost.fetch_add(spans as u64, Ordering::Relaxed);
        if let Some(error) = error {
            *self
                .failed_at
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(Instant::now());
            self.first_error
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .get_or_insert(error);
        }
    }
}

/// The OTLP exporter, resting after a failure: a collector that is down is asked once per
/// [`REST_AFTER_FAILURE`], and batches in between are dropped at once.
#[derive(Debug)]
struct Guarded {
    inner: opentelemetry_otlp::SpanExporter,
    health: Arc<Health>,
}

impl SpanExporter for Guarded {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        let spans = batch.len();
        if self.health.resting() {
            self.health.failed(spans, None);
            return Err(OTelSdkError::InternalFailure(
                "the collector failed recently".to_owned(),
            ));
        }
        let result = self.inner.export(batch).await;
        if let Err(error) = &result {
            self.health.failed(spans, Some(error.to_string()));
        }
        result
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.inner.shutdown_with_timeout(timeout)
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.inner.force_flush()
    }

    fn set_resource(&mut self, resource: &Resource) {
        self.inner.set_resource(resource);
    }
}
