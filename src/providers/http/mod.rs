//! What the HTTP adapters share: the client setup, streaming POSTs, server-sent events
//! with idle timeouts, `retry-after` parsing, error classification, request retries, reading the base URL
//! and key of a `provider` declaration, and the API key type that keeps secrets out of
//! logs.

pub(crate) mod classify;
mod client;
mod decl;
mod retry;
mod retry_after;
mod secret;
mod sse;

pub(crate) use classify::{ErrorBody, from_stream_error};
pub(crate) use client::{StreamPost, build_client, endpoint};
pub(crate) use decl::{base_url, require_key};
pub(crate) use retry::{DEFAULT_MAX_RETRY_AFTER, RequestRetry, RetrySettings};
pub use secret::ApiKey;
pub(crate) use sse::SseReader;
