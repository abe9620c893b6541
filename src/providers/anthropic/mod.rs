//! The `anthropic` adapter: the Anthropic Messages API over HTTPS with SSE streaming
//! (protocols.md §1). Text, thinking and tool-use blocks stream as events; the tool-use
//! loop runs the agent's custom tool commands, bounded by `max-turns`. The adapter never
//! retries: failures come back classified (with the server's `retry-after`) for the
//! runtime's retry policy.

mod config;
mod provider;
mod stream;

pub use config::{AnthropicConfig, DEFAULT_BASE_URL, DEFAULT_KEY_ENV};
pub use provider::AnthropicProvider;

/// The adapter name.
const ADAPTER: &str = "anthropic";
