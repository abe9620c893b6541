//! The `openai` adapter: any OpenAI-compatible Chat Completions server (OpenAI, vLLM,
//! llama.cpp, Ollama, gateways) with `stream: true` (protocols.md §5). Content, reasoning
//! and tool-call deltas stream as events; usage comes from the final chunk; the tool-use
//! loop runs the agent's custom tool commands, bounded by `max-turns`. The adapter never
//! retries: failures come back classified for the runtime's retry policy.

mod config;
mod provider;
mod stream;

pub use config::{DEFAULT_BASE_URL, OpenAiConfig};
pub use provider::OpenAiProvider;

/// The adapter name.
const ADAPTER: &str = "openai";
