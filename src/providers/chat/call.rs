//! The parts of one chat-adapter call that do not depend on the API: what a request must
//! have before the first model request (no session to resume, a model, the granted tools),
//! and how the tool loop is set up around the adapter's conversation.

use crate::providers::contract::ToolLedger;
use std::time::Duration;

use super::{Conversation, DEFAULT_MAX_TURNS, LoopSettings, Pricing, ToolSet, run_loop};
use crate::providers::env::ToolEnv;
use crate::providers::http::{RequestRetry, RetrySettings};
use crate::providers::{AgentReply, AgentRequest, EventSink, ProviderError};

/// A request checked for a chat API (`api` names it in messages: "the Messages API").
pub(crate) struct Prepared {
    /// The model to ask: the request's, else the provider's.
    pub(crate) model: String,
    /// The custom tools the model may call, and the tools of the agent's MCP servers.
    pub(crate) tools: ToolSet,
}

/// Checks `request` before the first model request, and starts the agent's MCP servers
/// (`request.mcp`) with the tools' environment (`tool_env`, without the variable
/// `hide_env`, the provider's key): their tools join the granted ones, and the servers
/// stop when the returned [`ToolSet`] is dropped, at the end of the call.
///
/// # Errors
/// A session to resume (chat APIs keep none), no model anywhere, a granted tool that is
/// not a custom tool, or an MCP server that cannot be used (named).
pub(crate) async fn prepare(
    adapter: &'static str,
    api: &str,
    request: &AgentRequest,
    provider_model: Option<&str>,
    (tool_env, hide_env): (&ToolEnv, Option<&str>),
) -> Result<Prepared, ProviderError> {
    if request.session.resume.is_some() {
        return Err(ProviderError::config(
            adapter,
            format!("{api} keeps no sessions to resume; drop `session=`"),
        ));
    }
    let model = request
        .model
        .clone()
        .or_else(|| provider_model.map(str::to_owned))
        .ok_or_else(|| {
            ProviderError::config(
                adapter,
                "no model: set `model=` on the agent, the workflow or the provider",
            )
        })?;
    let mut tools = ToolSet::from_grants(adapter, &request.grants.tools)?;
    if !request.grants.mcp.is_empty() {
        let call_env = tool_env.for_call(request);
        let start = super::mcp::Start {
            working_dir: request.workspace.root(),
            tool_env: &call_env,
            hide_env,
        };
        tools.connect_mcp(&request.grants.mcp, &start).await?;
    }
    Ok(Prepared { model, tools })
}

/// What the loop takes from an adapter's settings for one call.
pub(crate) struct LoopParts<'a> {
    /// Longest a tool may run.
    pub(crate) tool_timeout: Duration,
    /// Prices for the cost estimate.
    pub(crate) pricing: Pricing,
    /// Request retries.
    pub(crate) retry: RetrySettings,
    /// The variable holding the provider's key, kept from tools.
    pub(crate) hide_env: Option<&'a str>,
    /// The tools' environment and redactions.
    pub(crate) tool_env: &'a ToolEnv,
}

/// Runs the tool loop for `request` over `conversation`, completing any tool it started
/// and did not see finish ([`ToolLedger`]).
///
/// # Errors
/// Whatever the loop fails with.
pub(crate) async fn run<C: Conversation>(
    adapter: &'static str,
    conversation: &mut C,
    request: &AgentRequest,
    tools: &ToolSet,
    parts: LoopParts<'_>,
    events: &dyn EventSink,
) -> Result<AgentReply, ProviderError> {
    let retry = RequestRetry::new(adapter, request, parts.retry);
    let call_env = parts.tool_env.for_call(request);
    let settings = LoopSettings {
        adapter,
        tools,
        max_turns: request.limits.max_turns.unwrap_or(DEFAULT_MAX_TURNS).max(1),
        tool_timeout: parts.tool_timeout,
        working_dir: request.workspace.root(),
        hide_env: parts.hide_env,
        tool_env: &call_env,
        pricing: parts.pricing,
        retry: &retry,
        journal: request.hooks.journal.as_ref(),
        guard: request.hooks.tool_guard.as_ref(),
    };
    let ledger = ToolLedger::new(events);
    let outcome = run_loop(conversation, settings, &ledger).await;
    ledger.close(&outcome);
    outcome
}
