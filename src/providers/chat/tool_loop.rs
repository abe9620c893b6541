//! The tool-use loop of the HTTP chat adapters: send the conversation, stream one assistant
//! turn, run the tools it calls, append their results, and repeat until the model answers
//! without calling tools. `max-turns` bounds the number of model turns.
//!
//! Events, in order: `SessionStart` (when the first response starts, with the model the
//! server reports), per turn the backend's `TextDelta`/`ThinkingDelta`s with cumulative
//! `Usage` as the server reports it mid-stream (Anthropic at the message's start and in
//! each `message_delta`, OpenAI-compatible servers in any chunk that carries usage),
//! `MessageComplete`, the turn's cumulative `Usage` unless just reported, then a `ToolStart`/`ToolComplete` pair per tool; `SessionEnd` after
//! the last turn. A failed call ends with its error and no `SessionEnd`.
//!
//! A failed turn is sent again under the request retry policy (`http::RequestRetry`): the
//! history only grows when a turn succeeds, so a retry re-sends the conversation so far,
//! tool results included, and no tool runs twice. The deltas a failed turn streamed before
//! it failed are not taken back; its retry streams the turn again.
//!
//! Before a tool runs, the call's tool guard (the workflow's `agent.tool.before` hooks) is
//! asked; a refused tool does not run, and its result, an error the model sees, says why.
//!
//! After each round of tool calls the conversation is saved to the call's journal (when
//! the runtime gives one): a run resumed after a crash sends the next turn from there, so
//! only tools that were running at the crash run again.

use std::future::Future;
use std::path::Path;
use std::time::Duration;

use super::pricing::Pricing;
use super::tools::{ToolCall, ToolOutcome, ToolSet};
use crate::providers::http::RequestRetry;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::providers::{
    AgentEvent, AgentReply, CallJournal, EventSink, ProviderError, ToolCheck, ToolEnv, ToolGuard,
    Usage,
};

/// Model turns allowed when the agent sets no `max-turns`.
pub(crate) const DEFAULT_MAX_TURNS: u32 = 25;

/// What to do after a turn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Next {
    /// The answer is complete.
    Done,
    /// Run the turn's tool calls and send their results.
    Tools,
    /// Ask again without new input (Anthropic's `pause_turn`).
    Continue,
}

/// One assistant turn, already appended to the conversation by the backend.
#[derive(Clone, Debug)]
pub(crate) struct Turn {
    /// Its text.
    pub(crate) text: String,
    /// The tools it called, in order.
    pub(crate) tool_calls: Vec<ToolCall>,
    /// Tokens of this turn only.
    pub(crate) usage: Usage,
    /// What comes next.
    pub(crate) next: Next,
}

/// The event sink of a call, remembering whether the session start was announced, and
/// what the turns before the current one used (so a turn can report its usage as it
/// streams, cumulative for the call, and the budget guard can stop it mid-stream).
pub(crate) struct Session<'a> {
    events: &'a dyn EventSink,
    started: bool,
    before: Usage,
    pricing: Pricing,
    /// The last cumulative usage reported: the same counts are not reported twice.
    reported: Option<Usage>,
}

impl Session<'_> {
    /// Announces the session once, with the model the server says it used.
    pub(crate) fn start(&mut self, model: Option<&str>) {
        if !self.started {
            self.started = true;
            self.emit(AgentEvent::SessionStart {
                session_id: None,
                model: model.map(str::to_owned),
            });
        }
    }

    /// Passes an event on.
    pub(crate) fn emit(&self, event: AgentEvent) {
        self.events.emit(event);
    }

    /// Reports the usage of the turn being streamed, so far: a cumulative `Usage` event
    /// for the call (priced when the provider sets prices).
    pub(crate) fn streamed_usage(&mut self, turn: Usage) {
        let mut usage = self.before;
        usage.add(turn);
        self.report_usage(usage);
    }

    /// Reports the call's cumulative usage, unless it is what was last reported.
    fn report_usage(&mut self, usage: Usage) {
        if self.reported != Some(usage) {
            self.reported = Some(usage);
            self.emit(AgentEvent::Usage {
                usage,
                cost_usd: self.pricing.cost(usage),
            });
        }
    }
}

/// A backend's side of the loop: it owns the wire format of the history.
pub(crate) trait Conversation: Send {
    /// Sends the history, streams one assistant turn (emitting its deltas), and appends
    /// the assistant message to the history.
    fn turn(
        &mut self,
        session: &mut Session<'_>,
    ) -> impl Future<Output = Result<Turn, ProviderError>> + Send;

    /// Appends the results of the last turn's tool calls.
    fn push_tool_results(&mut self, results: &[(ToolCall, ToolOutcome)]);

    /// The history in the backend's wire format (what the journal keeps).
    fn messages(&mut self) -> &mut Vec<Value>;
}

/// The `messages` array of a chat request body (both wire formats keep the history there),
/// created when missing.
pub(crate) fn messages(body: &mut Value) -> &mut Vec<Value> {
    if !body.get("messages").is_some_and(Value::is_array) {
        body["messages"] = Value::Array(Vec::new());
    }
    match body.get_mut("messages") {
        Some(Value::Array(messages)) => messages,
        _ => unreachable!("set to an array above"),
    }
}

/// What the journal keeps after each round of tool calls: enough to send the next turn.
#[derive(Debug, Serialize, Deserialize)]
struct Progress {
    messages: Vec<Value>,
    turns: u32,
    usage: Usage,
}

/// What bounds and prices the loop.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LoopSettings<'a> {
    /// The adapter, for errors.
    pub(crate) adapter: &'static str,
    /// The tools the model may call.
    pub(crate) tools: &'a ToolSet,
    /// Most model turns.
    pub(crate) max_turns: u32,
    /// Longest a tool may run.
    pub(crate) tool_timeout: Duration,
    /// Where tools run.
    pub(crate) working_dir: &'a Path,
    /// The environment variable holding the provider's key, kept from tools.
    pub(crate) hide_env: Option<&'a str>,
    /// The tools' environment and the secrets redacted from their output.
    pub(crate) tool_env: &'a ToolEnv,
    /// Prices for the cost estimate.
    pub(crate) pricing: Pricing,
    /// When a failed turn is sent again.
    pub(crate) retry: &'a RequestRetry,
    /// Where the conversation is kept after each round of tool calls.
    pub(crate) journal: Option<&'a CallJournal>,
    /// Asked before each tool call runs (the `agent.tool.before` hooks).
    pub(crate) guard: Option<&'a ToolGuard>,
}

/// Runs the loop to the final answer.
pub(crate) async fn run_loop<C: Conversation>(
    conversation: &mut C,
    settings: LoopSettings<'_>,
    events: &dyn EventSink,
) -> Result<AgentReply, ProviderError> {
    let mut session = Session {
        events,
        started: false,
        before: Usage::default(),
        pricing: settings.pricing,
        reported: None,
    };
    let mut usage = Usage::default();
    let mut turns = 0;
    // A call resumed after a crash continues from its last round of tool calls: the tools
    // that ran are not run again.
    if let Some(journal) = settings.journal.filter(|_| !settings.tools.is_empty())
        && let Some(saved) = journal.0.load().await
    {
        match serde_json::from_value::<Progress>(saved) {
            Ok(progress) => {
                *conversation.messages() = progress.messages;
                turns = progress.turns;
                usage = progress.usage;
            }
            Err(error) => tracing::warn!(%error, "ignoring unreadable call progress"),
        }
    }
    // Text of paused turns (`Next::Continue`): the continuation extends the same answer.
    let mut carried = String::new();
    loop {
        let mut attempt = 1;
        session.before = usage;
        let turn = loop {
            match conversation.turn(&mut session).await {
                Ok(turn) => break turn,
                Err(error) => {
                    let wait = settings.retry.after(error, attempt)?;
                    tracing::debug!(
                        adapter = settings.adapter,
                        attempt,
                        wait_ms = wait.as_millis(),
                        "model request failed; sending it again"
                    );
                    tokio::time::sleep(wait).await;
                    attempt += 1;
                }
            }
        };
        turns += 1;
        usage.add(turn.usage);
        let cost_usd = settings.pricing.cost(usage);
        session.emit(AgentEvent::MessageComplete {
            text: turn.text.clone(),
        });
        session.report_usage(usage);
        // Lets the budget guard (which checks between polls) stop the call on this usage
        // before any tool of the turn runs.
        tokio::task::yield_now().await;
        let wants_more = match turn.next {
            Next::Done => false,
            Next::Continue => true,
            Next::Tools => !turn.tool_calls.is_empty(),
        };
        if !wants_more {
            session.emit(AgentEvent::SessionEnd { session_id: None });
            carried.push_str(&turn.text);
            return Ok(AgentReply {
                text: carried,
                session_id: None,
                usage,
                cost_usd,
                turns,
            });
        }
        if turns >= settings.max_turns {
            return Err(ProviderError::MaxTurns {
                adapter: settings.adapter,
                max_turns: settings.max_turns,
            });
        }
        if turn.next == Next::Continue {
            carried.push_str(&turn.text);
        } else {
            carried.clear();
            let mut results = Vec::with_capacity(turn.tool_calls.len());
            for call in turn.tool_calls {
                let check = ToolCheck {
                    id: call.id.clone(),
                    name: call.name.clone(),
                    input: call.input.clone(),
                };
                let allowed = ToolGuard::allows(settings.guard, &check).await;
                session.emit(AgentEvent::ToolStart {
                    id: check.id,
                    name: check.name,
                    input: check.input,
                });
                let outcome = match allowed {
                    Ok(()) => {
                        settings
                            .tools
                            .run(
                                &call,
                                settings.working_dir,
                                settings.tool_timeout,
                                settings.tool_env,
                                settings.hide_env,
                            )
                            .await
                    }
                    // The model sees why, and may do something else.
                    Err(reason) => ToolOutcome::refused(&call.name, &reason),
                };
                session.emit(AgentEvent::ToolComplete {
                    id: call.id.clone(),
                    name: call.name.clone(),
                    summary: outcome.summary(),
                    is_error: outcome.is_error,
                });
                results.push((call, outcome));
            }
            conversation.push_tool_results(&results);
            if let Some(journal) = settings.journal {
                let progress = Progress {
                    messages: conversation.messages().clone(),
                    turns,
                    usage,
                };
                let value = serde_json::to_value(&progress).unwrap_or(Value::Null);
                if let Err(error) = journal.0.save(value).await {
                    // The call goes on; a crash now would run this round's tools again.
                    tracing::warn!(%error, "could not save the call's progress");
                }
            }
        }
    }
}
