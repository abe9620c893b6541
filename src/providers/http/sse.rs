//! Server-sent events read from a streaming HTTP response, with an idle timeout.
//!
//! Framing (line ends, multi-line `data:`, comments, events split across reads, UTF-8 split
//! across reads) is eventsource-stream's. This wrapper adds what an LLM stream needs: a limit
//! on silence between reads, and errors classified as [`ProviderError`]s. It never
//! reconnects: a completion is a POST, and re-sending it would bill it twice.

use std::pin::Pin;
use std::time::Duration;

use eventsource_stream::{Event, EventStreamError, Eventsource};
use futures_util::{Stream, StreamExt};

use super::classify::{describe, from_body_error};
use crate::providers::ProviderError;

type Events = Pin<Box<dyn Stream<Item = Result<Event, EventStreamError<reqwest::Error>>> + Send>>;

/// The events of one streaming response.
pub(crate) struct SseReader {
    adapter: &'static str,
    events: Events,
    idle: Duration,
}

impl SseReader {
    /// Reads `response`'s body as SSE; `idle` bounds the silence between two events.
    pub(crate) fn new(adapter: &'static str, response: reqwest::Response, idle: Duration) -> Self {
        Self {
            adapter,
            events: Box::pin(response.bytes_stream().eventsource()),
            idle,
        }
    }

    /// The next event, `None` once the body ended (cleanly or not: the caller knows whether
    /// the protocol's final event came).
    pub(crate) async fn next(&mut self) -> Result<Option<Event>, ProviderError> {
        let adapter = self.adapter;
        match tokio::time::timeout(self.idle, self.events.next()).await {
            Err(_elapsed) => Err(ProviderError::timeout(adapter, self.idle)),
            Ok(None) => Ok(None),
            Ok(Some(Ok(event))) => Ok(Some(event)),
            Ok(Some(Err(EventStreamError::Transport(error)))) => {
                Err(from_body_error(adapter, &error))
            }
            Ok(Some(Err(EventStreamError::Utf8(error)))) => Err(ProviderError::bad_output(
                adapter,
                format!("the event stream is not UTF-8: {}", describe(&error)),
            )),
            Ok(Some(Err(EventStreamError::Parser(error)))) => Err(ProviderError::bad_output(
                adapter,
                format!("the event stream is malformed: {error}"),
            )),
        }
    }
}
