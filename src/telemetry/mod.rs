//! OpenTelemetry export of a run: its events become a trace (a span per run, step, attempt,
//! agent call and tool call, with the GenAI semantic conventions for model, tokens and
//! cost, and failures recorded), sent over OTLP/HTTP in batches from a thread of its own.
//!
//! Nothing is sent unless configured ([`Settings::resolve`]: the standard `OTEL_*`
//! variables or the project's `telemetry` block; `DO_NOT_TRACK` turns it all off). The
//! interpreter knows nothing of it: the CLI puts [`Telemetry::sink`] in front of its own
//! sink and [`Telemetry::observe`] around the providers. A collector that is down costs
//! one failed request and one warning line; the run's result and exit code are its own.
//! Prompts, replies and tool inputs are exported only with `capture-content`, through the
//! run's redactor.

mod conventions;
mod export;
mod observed;
mod session;
mod settings;
mod trace;

pub use session::Telemetry;
pub use settings::{DEFAULT_ENDPOINT, Settings};
