//! The adapter contract: what every [`Provider`](super::Provider) promises, whatever it
//! drives (a model API, an agent CLI, a server, a cassette). The runtime, the views and the
//! traces rely on it; [`check_call`] states it as code, so a test of any adapter (and the
//! conformance kit every adapter passes) asserts the same text.
//!
//! # One call
//!
//! `run(request, events)` runs one agent call: it streams [`AgentEvent`]s into `events` as
//! they happen and returns the [`AgentReply`] or a [`ProviderError`]. Dropping the future
//! cancels the call: no request, process or file of the call outlives the drop (processes
//! end by the process module's rule; HTTP requests are aborted by dropping them).
//!
//! # Events: order and cardinality
//!
//! 1. `session-start` comes first, once.
//! 2. `text-delta` and `thinking-delta` carry pieces of the reply as they stream; each
//!    assistant message that has text ends with one `message-complete` carrying its whole
//!    text.
//! 3. Every `tool-start` has a distinct id and exactly one `tool-complete` with the same id
//!    and name after it; there is no `tool-complete` without its `tool-start`. That holds
//!    whatever the outcome: a tool the call could not see finish (it failed, paused to ask
//!    a person, or the backend never reported the result) is completed as an error saying
//!    why when the call ends ([`ToolLedger`]).
//! 4. Every `subagent-end` follows a `subagent-start` of the same name.
//! 5. `usage` is cumulative for the call: its counts never go down, and the last one is
//!    the reply's [`AgentReply::usage`]. A successful call reports at least one.
//! 6. `context-window` is a fraction in `0..=1`.
//! 7. `session-end` is last, at most once; a successful call ends with it, naming the
//!    reply's session. A failed call may end without it.
//! 8. `permission-request` says how a request was answered; it may come anywhere after
//!    `session-start` and before `session-end`.
//! 9. `plan` carries the agent's whole current todo list (`todos.rs`) each time it changes,
//!    never a part of it; it may come anywhere after `session-start` and before
//!    `session-end`. Where the plan is a tool the agent calls (Claude Code's `TodoWrite`,
//!    Gemini's `write_todos`), the call is still a `tool-start` and `tool-complete` pair,
//!    and the plan follows its `tool-start` (or its `tool-complete`, where only the result
//!    says what changed: Claude Code's task tools).
//!
//! # The reply
//!
//! - `text` is the final assistant message (what the node's `output` parses).
//! - `turns` counts model turns: one for a reply without tools, and one more for each
//!   round of tool results the model answered. Backends that report their own count
//!   (Claude Code's `num_turns`) give it; the others count an assistant output that begins
//!   the call or follows tool results as the start of a turn.
//! - `session_id` is the backend's session, for `session=` and resuming; `None` where
//!   the backend has none.
//!
//! # Errors by class
//!
//! A failure a backend reports with an HTTP status is classified by [`error_for_status`],
//! the same for every adapter: 401 and 403 are `auth` (the key's variable named, never
//! retried) — and so is a 400 whose body says the key is not valid (Google's way) —,
//! 429 is `rate-limit`, 503 and 529 are `overloaded`, 408, 409 and other 5xx are
//! `server-error`, any other 4xx is `provider`. Adapters add what only their wire says
//! (a spend limit is `provider`, Claude Code's budget stop is `budget`, a cut stream is
//! `stream-cut`). A process that ends without finishing its call is `process-exit` with
//! the end of its stderr; the key is never in any message.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use super::{AgentEvent, AgentReply, EventSink, ProviderError};

/// What a tool the agent was about to run says when its call stopped to ask a person
/// ([`ProviderError::AwaitingPermission`]): it did not fail, it waits.
pub const PAUSED_FOR_PERMISSION: &str = "not run: the agent stopped to ask a person for permission";

/// The events of one call on their way out, with the tools started and not completed, so
/// the call completes each of them when it ends (rule 3), before a `session-end` (rule 7).
/// Every adapter that reports tools passes its events through one: the agent-CLI `run`
/// (`agent_cli::CliAgent`) and the model APIs' tool loop (`chat::call::run`).
pub(crate) struct ToolLedger<'a> {
    sink: &'a dyn EventSink,
    /// Open tools, in the order they started: (id, name).
    open: Mutex<Vec<(String, String)>>,
}

impl<'a> ToolLedger<'a> {
    pub(crate) fn new(sink: &'a dyn EventSink) -> Self {
        Self {
            sink,
            open: Mutex::new(Vec::new()),
        }
    }

    /// Completes every tool still open as an error saying why the call did not see it
    /// finish.
    pub(crate) fn close(&self, outcome: &Result<AgentReply, ProviderError>) {
        let why = match outcome {
            Ok(_) => "the agent ended without reporting the tool's result".to_owned(),
            Err(ProviderError::AwaitingPermission { .. }) => PAUSED_FOR_PERMISSION.to_owned(),
            Err(error) => format!("not finished: the call failed ({})", error.class()),
        };
        self.complete_open(&why);
    }

    /// Completes every open tool as an error saying `why`.
    fn complete_open(&self, why: &str) {
        let open = std::mem::take(&mut *self.open.lock().unwrap_or_else(PoisonError::into_inner));
        for (id, name) in open {
            self.sink.emit(AgentEvent::ToolComplete {
                id,
                name,
                summary: why.to_owned(),
                is_error: true,
            });
        }
    }
}

impl EventSink for ToolLedger<'_> {
    fn emit(&self, event: AgentEvent) {
        {
            let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
            match &event {
                AgentEvent::ToolStart { id, name, .. } => open.push((id.clone(), name.clone())),
                AgentEvent::ToolComplete { id, .. } => open.retain(|(open_id, _)| open_id != id),
                _ => {}
            }
        }
        // Nothing may follow `session-end` (rule 7): what is still open is completed first.
        if matches!(event, AgentEvent::SessionEnd { .. }) {
            self.complete_open("the agent ended without reporting the tool's result");
        }
        self.sink.emit(event);
    }
}

/// The error for a failure the backend reported with HTTP `status`: the contract's one
/// table of classes by status (see the module docs). `key_variable` names the variable the
/// key came from (for `auth`), `retry_after` is the wait the backend asked for.
#[must_use]
pub fn error_for_status(
    adapter: &'static str,
    status: u16,
    message: String,
    key_variable: Option<&str>,
    retry_after: Option<Duration>,
) -> ProviderError {
    match status {
        429 => ProviderError::rate_limited(adapter, retry_after),
        503 | 529 => ProviderError::overloaded(adapter, retry_after),
        401 | 403 => ProviderError::Auth {
            adapter,
            status,
            message,
            key_variable: key_variable.map(str::to_owned),
        },
        400 if refuses_the_key(&message) => ProviderError::Auth {
            adapter,
            status,
            message,
            key_variable: key_variable.map(str::to_owned),
        },
        // A request timeout and a conflict (a lock held elsewhere) clear by waiting: the
        // SDKs retry both.
        408 | 409 | 500..=599 => ProviderError::server(adapter, status, message),
        400..=499 => ProviderError::rejected(adapter, status, message),
        _ => ProviderError::bad_output(
            adapter,
            format!("unexpected HTTP status {status}: {message}"),
        ),
    }
}

/// Whether a 400's body says the key was refused: Google's APIs answer a bad key with 400
/// `INVALID_ARGUMENT`, reason `API_KEY_INVALID` ("API key not valid"), not 401.
fn refuses_the_key(message: &str) -> bool {
    message.contains("API_KEY_INVALID")
        || message.to_ascii_lowercase().contains("api key not valid")
}

/// One way a call broke the contract, with the index of the event where it showed (the
/// number of events for a problem found at the end).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// The event's index.
    pub at: usize,
    /// What is wrong, as the module docs' rule says it.
    pub rule: String,
}

/// Every way `events` and `outcome` (one call's) break the contract, in order; empty when
/// they keep it.
#[must_use]
pub fn check_call(
    events: &[AgentEvent],
    outcome: &Result<AgentReply, ProviderError>,
) -> Vec<Violation> {
    let mut check = Checker::default();
    for (at, event) in events.iter().enumerate() {
        check.event(at, event);
    }
    check.end(events.len(), outcome);
    check.violations
}

#[derive(Default)]
struct Checker {
    violations: Vec<Violation>,
    started: bool,
    ended: Option<Option<String>>,
    /// Tools started and not completed: id → name.
    open_tools: HashMap<String, String>,
    /// Every tool id started.
    tool_ids: std::collections::HashSet<String>,
    /// Sub-agents started and not ended, by name.
    open_subagents: HashMap<String, usize>,
    last_usage: Option<super::Usage>,
}

impl Checker {
    fn fail(&mut self, at: usize, rule: impl Into<String>) {
        self.violations.push(Violation {
            at,
            rule: rule.into(),
        });
    }

    fn event(&mut self, at: usize, event: &AgentEvent) {
        if self.ended.is_some() {
            self.fail(at, "an event after `session-end`");
        }
        match event {
            AgentEvent::SessionStart { .. } => {
                if self.started {
                    self.fail(at, "a second `session-start`");
                } else if at != 0 {
                    self.fail(at, "`session-start` is not the first event");
                }
                self.started = true;
                return;
            }
            AgentEvent::SessionEnd { session_id } => {
                if self.ended.is_none() {
                    self.ended = Some(session_id.clone());
                }
            }
            AgentEvent::ToolStart { id, name, .. } => {
                if !self.tool_ids.insert(id.clone()) {
                    self.fail(at, format!("tool id `{id}` started twice"));
                }
                self.open_tools.insert(id.clone(), name.clone());
            }
            AgentEvent::ToolComplete { id, name, .. } => match self.open_tools.remove(id) {
                Some(started) if started == *name => {}
                Some(started) => self.fail(
                    at,
                    format!("tool `{id}` started as `{started}` and completed as `{name}`"),
                ),
                None => self.fail(at, format!("`tool-complete` of `{id}` without its start")),
            },
            AgentEvent::SubagentStart { name } => {
                *self.open_subagents.entry(name.clone()).or_default() += 1;
            }
            AgentEvent::SubagentEnd { name } => match self.open_subagents.get_mut(name) {
                Some(open) if *open > 0 => *open -= 1,
                _ => self.fail(at, format!("`subagent-end` of `{name}` without its start")),
            },
            AgentEvent::Usage { usage, .. } => {
                if let Some(last) = self.last_usage
                    && (usage.input_tokens < last.input_tokens
                        || usage.output_tokens < last.output_tokens
                        || usage.cache_read_tokens < last.cache_read_tokens
                        || usage.cache_write_tokens < last.cache_write_tokens)
                {
                    self.fail(at, "`usage` went down: it is cumulative for the call");
                }
                self.last_usage = Some(*usage);
            }
            AgentEvent::ContextWindow { fraction } => {
                if !(0.0..=1.0).contains(fraction) {
                    self.fail(at, format!("`context-window` {fraction} is not in 0..=1"));
                }
            }
            AgentEvent::TextDelta { .. }
            | AgentEvent::ThinkingDelta { .. }
            | AgentEvent::MessageComplete { .. }
            | AgentEvent::PermissionRequest { .. }
            | AgentEvent::Plan { .. } => {}
        }
        if !self.started {
            self.fail(at, "an event before `session-start`");
            self.started = true;
        }
    }

    fn end(&mut self, at: usize, outcome: &Result<AgentReply, ProviderError>) {
        let mut open: Vec<String> = self.open_tools.keys().cloned().collect();
        open.sort();
        for id in open {
            let rule = format!("tool `{id}` never completed");
            self.fail(at, rule);
        }
        let Ok(reply) = outcome else {
            return;
        };
        if !self.started {
            self.fail(at, "a successful call without `session-start`");
        }
        match &self.ended {
            None => self.fail(at, "a successful call without `session-end`"),
            Some(session) if *session != reply.session_id => self.fail(
                at,
                format!(
                    "`session-end` names {session:?}, the reply {:?}",
                    reply.session_id
                ),
            ),
            Some(_) => {}
        }
        match self.last_usage {
            None => self.fail(at, "a successful call without `usage`"),
            Some(usage) if usage != reply.usage => self.fail(
                at,
                format!(
                    "the last `usage` ({usage:?}) is not the reply's ({:?})",
                    reply.usage
                ),
            ),
            Some(_) => {}
        }
        if reply.turns == 0 {
            self.fail(at, "a successful call of zero turns");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::Usage;

    fn reply(usage: Usage) -> Result<AgentReply, ProviderError> {
        Ok(AgentReply {
            text: "done".to_owned(),
            session_id: Some("s".to_owned()),
            usage,
            cost_usd: None,
            turns: 2,
        })
    }

    fn tool(start: bool, id: &str, name: &str) -> AgentEvent {
        if start {
            AgentEvent::ToolStart {
                id: id.to_owned(),
                name: name.to_owned(),
                input: serde_json::Value::Null,
            }
        } else {
            AgentEvent::ToolComplete {
                id: id.to_owned(),
                name: name.to_owned(),
                summary: String::new(),
                is_error: false,
            }
        }
    }

    fn start() -> AgentEvent {
        AgentEvent::SessionStart {
            session_id: Some("s".to_owned()),
            model: None,
        }
    }

    fn end() -> AgentEvent {
        AgentEvent::SessionEnd {
            session_id: Some("s".to_owned()),
        }
    }

    fn usage(output_tokens: u64) -> AgentEvent {
        AgentEvent::Usage {
            usage: Usage {
                output_tokens,
                ..Usage::default()
            },
            cost_usd: None,
        }
    }

    fn rules(events: &[AgentEvent], outcome: &Result<AgentReply, ProviderError>) -> Vec<String> {
        check_call(events, outcome)
            .into_iter()
            .map(|violation| violation.rule)
            .collect()
    }

    #[test]
    fn a_call_that_keeps_the_contract_has_no_violations() {
        let total = Usage {
            output_tokens: 9,
            ..Usage::default()
        };
        let events = [
            start(),
            tool(true, "t1", "Read"),
            tool(false, "t1", "Read"),
            usage(4),
            AgentEvent::TextDelta {
                text: "done".to_owned(),
            },
            AgentEvent::MessageComplete {
                text: "done".to_owned(),
            },
            usage(9),
            end(),
        ];
        assert_eq!(rules(&events, &reply(total)), Vec::<String>::new());
    }

    #[test]
    fn each_rule_is_reported() {
        let total = Usage::default();
        let cases: [(Vec<AgentEvent>, &str); 8] = [
            (
                vec![usage(0), start(), end()],
                "an event before `session-start`",
            ),
            (
                vec![start(), start(), usage(0), end()],
                "a second `session-start`",
            ),
            (
                vec![start(), tool(true, "t", "Bash"), usage(0), end()],
                "tool `t` never completed",
            ),
            (
                vec![start(), tool(false, "t", "Bash"), usage(0), end()],
                "`tool-complete` of `t` without its start",
            ),
            (
                vec![start(), usage(5), usage(3), end()],
                "`usage` went down: it is cumulative for the call",
            ),
            (
                vec![start(), usage(0)],
                "a successful call without `session-end`",
            ),
            (vec![start(), end()], "a successful call without `usage`"),
            (
                vec![start(), end(), usage(0)],
                "an event after `session-end`",
            ),
        ];
        for (events, rule) in cases {
            let found = rules(&events, &reply(total));
            assert!(found.iter().any(|found| found == rule), "{rule}: {found:?}");
        }
    }

    fn plan() -> AgentEvent {
        AgentEvent::Plan {
            todos: vec![crate::providers::Todo {
                content: "Run the tests".to_owned(),
                status: crate::providers::TodoStatus::InProgress,
                active_form: Some("Running the tests".to_owned()),
            }],
        }
    }

    #[test]
    fn a_plan_may_come_between_the_start_and_the_end() {
        let total = Usage::default();
        let events = [
            start(),
            tool(true, "t1", "TodoWrite"),
            plan(),
            tool(false, "t1", "TodoWrite"),
            plan(),
            usage(0),
            end(),
        ];
        assert_eq!(rules(&events, &reply(total)), Vec::<String>::new());
    }

    #[test]
    fn a_plan_before_the_start_or_after_the_end_is_reported() {
        let total = Usage::default();
        let before = [plan(), start(), usage(0), end()];
        assert_eq!(
            rules(&before, &reply(total)).first().map(String::as_str),
            Some("an event before `session-start`")
        );
        let after = [start(), usage(0), end(), plan()];
        assert_eq!(
            rules(&after, &reply(total)),
            ["an event after `session-end`"]
        );
    }

    #[test]
    fn a_failed_call_still_completes_its_tools() {
        let events = [start(), tool(true, "t", "Bash")];
        let failed = Err(ProviderError::timeout("x", Duration::from_secs(1)));
        assert_eq!(rules(&events, &failed), ["tool `t` never completed"]);
    }

    #[test]
    fn the_ledger_completes_an_unfinished_tool_before_the_session_ends() {
        let seen = Mutex::new(Vec::new());
        let sink = |event: AgentEvent| seen.lock().unwrap().push(event);
        let ledger = ToolLedger::new(&sink);
        ledger.emit(start());
        ledger.emit(tool(true, "lost", "Bash"));
        ledger.emit(end());
        let events = seen.into_inner().unwrap();
        assert!(
            matches!(&events[2], AgentEvent::ToolComplete { id, is_error: true, .. } if id == "lost"),
            "{events:?}"
        );
        assert!(matches!(events.last(), Some(AgentEvent::SessionEnd { .. })));
    }

    #[test]
    fn the_ledger_completes_what_a_paused_call_left_open() {
        let seen = Mutex::new(Vec::new());
        let sink = |event: AgentEvent| seen.lock().unwrap().push(event);
        let ledger = ToolLedger::new(&sink);
        ledger.emit(start());
        ledger.emit(tool(true, "done", "Read"));
        ledger.emit(tool(false, "done", "Read"));
        ledger.emit(tool(true, "asked", "Write"));
        let ask = crate::providers::PermissionAsk {
            tool: "Write".to_owned(),
            input: serde_json::Value::Null,
        };
        let paused = Err(ProviderError::awaiting_permission("x", ask, None));
        ledger.close(&paused);
        let events = seen.into_inner().unwrap();
        assert_eq!(rules(&events, &paused), Vec::<String>::new());
        let Some(AgentEvent::ToolComplete {
            id,
            summary,
            is_error,
            ..
        }) = events.last()
        else {
            panic!("{events:?}");
        };
        assert_eq!((id.as_str(), *is_error), ("asked", true));
        assert!(summary.contains("ask a person"), "{summary}");
    }

    #[test]
    fn statuses_map_to_one_class_each() {
        let class = |status| {
            error_for_status("x", status, String::new(), Some("KEY"), None)
                .class()
                .name()
        };
        for (status, expected) in [
            (401, "auth"),
            (403, "auth"),
            (429, "rate-limit"),
            (503, "overloaded"),
            (529, "overloaded"),
            (500, "server-error"),
            (408, "server-error"),
            (409, "server-error"),
            (400, "provider"),
            (404, "provider"),
            (302, "bad-output"),
        ] {
            assert_eq!(class(status), expected, "{status}");
        }
        let auth = error_for_status("x", 401, "no".to_owned(), Some("MY_KEY"), None);
        assert!(auth.to_string().contains("`MY_KEY`"), "{auth}");
    }

    #[test]
    fn a_bad_request_refusing_the_key_is_auth() {
        let google = r#"{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT","details":[{"reason":"API_KEY_INVALID"}]}}"#;
        let error = error_for_status("gemini", 400, google.to_owned(), Some("GEMINI_KEY"), None);
        assert_eq!(error.class().name(), "auth");
        assert!(error.to_string().contains("`GEMINI_KEY`"), "{error}");
        let other = r#"{"error":{"code":400,"message":"Invalid JSON payload","status":"INVALID_ARGUMENT"}}"#;
        let error = error_for_status("gemini", 400, other.to_owned(), Some("GEMINI_KEY"), None);
        assert_eq!(error.class().name(), "provider");
    }
}
