//! What the model-API adapters (`anthropic`, `openai`) share above HTTP: the tool-use
//! loop, custom tool commands, the agent's MCP servers, option reading and pricing.

pub(crate) mod call;
mod mcp;
mod options;
mod pricing;
mod tool_loop;
mod tools;

pub(crate) use options::Options;
pub(crate) use pricing::Pricing;
pub(crate) use tool_loop::{
    Conversation, DEFAULT_MAX_TURNS, LoopSettings, Next, Session, Turn, messages, run_loop,
};
pub(crate) use tools::{ToolCall, ToolOutcome, ToolSet};
