//! `atomic mcp`: the project's custom tools (`.atomic/tools/*.kdl`) served over the Model
//! Context Protocol on stdin/stdout, so any MCP client (Claude Code's `--mcp-config`, an
//! editor) can call them.
//!
//! Input: the tools `registry` discovers (the project's over the user's), read through
//! [`Files`](crate::source::Files). Output: the protocol on stdout, nothing else. A call
//! runs through the HTTP adapters' own custom-tool runner (`providers::ToolSet`): the same
//! argument check against the tool's schema, environment (atomic's without provider keys),
//! timeout and output redaction. This module neither prints nor reads the process
//! environment: `cli::mcp` hands it the environment and renders the discovery problems.

mod server;

pub use server::{DEFAULT_TOOL_TIMEOUT, Discovered, ToolServer, discover, serve_stdio};
