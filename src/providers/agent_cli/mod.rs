//! The agent-CLI driver: one flow for every adapter that drives a coding agent's own
//! program, so each adapter keeps only what is its own — its wire format.
//!
//! ```text
//!  provider "…" ──▶ Cli::new ─────────── the program found, the child's environment, the
//!                   (launcher.rs)         endpoint (base URL and key) placed where the
//!                                         CLI reads it, the credentials kept for errors
//!  each call ─────▶ refuse (refusal.rs)   what the adapter table says it cannot do
//!                   mcp (mcp.rs)          the agent's MCP servers, with one list of
//!                                         secrets held back from them
//!                   Dialect::prepare      the command line, extra variables, stdin
//!                   spawn (process/)      one process group per call
//!                   Dialect::line         each NDJSON line: events, replies on stdin,
//!                                         a pause to ask a person, a failure
//!                   Exit + Dialect::finish the reply, or the error (statuses classified
//!                                         by `contract::error_for_status`)
//!                   CliAgent → Provider   the key scrubbed from every error
//! ```
//!
//! Claude Code, Copilot, Codex and Gemini are [`Dialect`]s driven by [`CliProvider`]. ACP
//! (an SDK conversation) and OpenCode (a server over HTTP) have flows of their own but use
//! the same launcher, credentials, MCP resolution, refusals and classification.

mod agent;
mod credentials;
mod dialect;
mod driver;
mod gateway;
mod launcher;
mod mcp;
mod refusal;
mod session;

pub(crate) use agent::CliAgent;
pub(crate) use credentials::Credentials;
pub(crate) use dialect::{Dialect, Exit, Flow, GuardReply, Input, Invocation};
pub(crate) use driver::CliProvider;
pub(crate) use launcher::{BaseUrl, Cli, CliSpec, KeyVar, Program};
pub(crate) use refusal::refuse_unsupported;
pub(crate) use session::{end_call, new_session_id, session_for};
