//! The `in-process` adapter: a scripted model inside atomic, for tests and benchmarks.
//! No process, no network; with no latency a call costs a few allocations.
//!
//! ```kdl
//! provider "echo" adapter="in-process" latency="50ms"   // wait before replying (default 0)
//! provider "bot" adapter="in-process" {
//!     option "reply" "LGTM"                  // a fixed reply (default: echo the prompt)
//!     option "replies" "[\"no\", \"yes\"]"   // or the reply for call 0, 1, … (last repeats)
//!     option "fail" "rate-limit"             // raise this `retry-on` class…
//!     option "fail-calls" 2                  // …for calls 0 and 1 only (default: every call)
//!     option "asks" "Bash"                   // with permission="ask": ask to use this tool
//! }
//! ```
//!
//! Options may also be set per node (`option` children of the agent), overriding the
//! provider's. Usage counts are estimates (4 bytes a token), so budgets can be tested.

use std::time::Duration;

use serde_json::Value;

use super::cassette::RecordedError;
use super::options::Options;
use super::{
    AgentEvent, AgentReply, AgentRequest, EventSink, PermissionAsk, Provider, ProviderError,
    ProviderFuture, Usage, Verdict,
};
use crate::ir::{ErrorClass, PermissionMode, ProviderDecl};

const ADAPTER: &str = "in-process";

/// The in-process model.
#[derive(Debug, Clone, Default)]
pub struct InProcess {
    options: serde_json::Map<String, Value>,
    latency: Duration,
}

impl InProcess {
    /// An echo model with no latency.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the latency of every call.
    #[must_use]
    pub fn with_latency(mut self, latency: Duration) -> Self {
        self.latency = latency;
        self
    }

    /// Builds the provider a `provider … adapter="in-process"` declares.
    ///
    /// # Errors
    /// [`ProviderError::Config`] for a malformed option.
    pub fn from_decl(decl: &ProviderDecl) -> Result<Self, ProviderError> {
        let options = Options::provider(&decl.options);
        let latency = options.duration(ADAPTER, "latency")?.unwrap_or_default();
        let model = Self {
            options: decl.options.clone(),
            latency,
        };
        // Check the options once, so a typo fails before the run starts.
        let _checked = model.script(&AgentRequest::default())?;
        Ok(model)
    }

    /// What the call should do: its latency, then a reply or an error.
    fn script(
        &self,
        request: &AgentRequest,
    ) -> Result<(Duration, Result<String, ProviderError>), ProviderError> {
        let options = Options {
            node: Some(&request.options),
            provider: &self.options,
        };
        let latency = options
            .duration(ADAPTER, "latency")?
            .unwrap_or(self.latency);
        if let Some(class) = options.string(ADAPTER, "fail")? {
            let failing_calls = options.number(ADAPTER, "fail-calls")?;
            if failing_calls.is_none_or(|calls| f64::from(request.call.index) < calls) {
                return Ok((latency, Err(failure(class)?)));
            }
        }
        let reply = if let Some(reply) = options.string(ADAPTER, "reply")? {
            reply.to_owned()
        } else if let Some(replies) = options.get("replies") {
            pick(replies, request.call.index)?
        } else {
            request.prompt.text.clone()
        };
        Ok((latency, Ok(reply)))
    }
}

impl InProcess {
    /// Under `permission="ask"` with `option "asks"`: the request for that tool, and what
    /// the call's approvals say of it.
    fn asks(
        &self,
        request: &AgentRequest,
    ) -> Result<Option<(PermissionAsk, Verdict)>, ProviderError> {
        let options = Options {
            node: Some(&request.options),
            provider: &self.options,
        };
        let Some(tool) = options
            .string(ADAPTER, "asks")?
            .filter(|_| request.grants.permission == Some(PermissionMode::Ask))
        else {
            return Ok(None);
        };
        let ask = PermissionAsk {
            tool: tool.to_owned(),
            input: serde_json::json!({"for": request.call.node_id}),
        };
        let verdict = request.grants.approvals.clone().decide(&ask);
        Ok(Some((ask, verdict)))
    }
}

/// The reply for `call` from a `replies` list (the last one repeats).
fn pick(replies: &Value, call: u32) -> Result<String, ProviderError> {
    let parsed;
    let list = match replies {
        Value::Array(list) => list,
        Value::String(text) => {
            parsed = serde_json::from_str::<Value>(text).ok();
            parsed
                .as_ref()
                .and_then(Value::as_array)
                .ok_or_else(|| bad_replies(replies))?
        }
        _ => return Err(bad_replies(replies)),
    };
    let reply = list
        .get(call as usize)
        .or_else(|| list.last())
        .ok_or_else(|| bad_replies(replies))?;
    Ok(match reply {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    })
}

fn bad_replies(found: &Value) -> ProviderError {
    ProviderError::config(
        ADAPTER,
        format!("option `replies` must be a non-empty JSON array of replies, found `{found}`"),
    )
}

fn failure(class: &str) -> Result<ProviderError, ProviderError> {
    let parsed = ErrorClass::ALL.iter().find(|known| known.name() == class);
    let recorded = parsed.map(|class| RecordedError {
        class: *class,
        message: format!("scripted {class} failure", class = class.name()),
        status: None,
        after_ms: None,
        code: Some(1),
    });
    recorded.and_then(|error| error.to_error(ADAPTER)).ok_or_else(|| ProviderError::config(ADAPTER, format!(
            "option `fail` must be a provider error class (rate-limit, overloaded, server-error, network, stream-cut, timeout, process-exit, bad-output, provider), found `{class}`"
        )))
}

fn estimate_tokens(text: &str) -> u64 {
    text.len().div_ceil(4) as u64
}

impl Provider for InProcess {
    fn adapter(&self) -> &'static str {
        ADAPTER
    }

    fn is_instant(&self) -> bool {
        true
    }

    fn run<'a>(
        &'a self,
        request: &'a AgentRequest,
        events: &'a dyn EventSink,
    ) -> ProviderFuture<'a> {
        Box::pin(async move {
            let (latency, outcome) = self.script(request)?;
            events.emit(AgentEvent::SessionStart {
                session_id: None,
                model: request.model.clone(),
            });
            if !latency.is_zero() {
                tokio::time::sleep(latency).await;
            }
            let text = match self.asks(request)? {
                Some((ask, Verdict::Ask)) => {
                    let session = format!("in-process-{}", request.call.node_id);
                    return Err(ProviderError::awaiting_permission(
                        ADAPTER,
                        ask,
                        Some(session),
                    ));
                }
                // The model reports what it was told.
                Some((ask, verdict)) => {
                    let granted = verdict == Verdict::Allow;
                    events.emit(AgentEvent::PermissionRequest {
                        tool: ask.tool.clone(),
                        granted,
                    });
                    format!(
                        "{}: {}",
                        ask.tool,
                        if granted { "allowed" } else { "denied" }
                    )
                }
                None => outcome?,
            };
            let usage = Usage {
                input_tokens: estimate_tokens(&request.prompt.text),
                output_tokens: estimate_tokens(&text),
                ..Usage::default()
            };
            events.emit(AgentEvent::TextDelta { text: text.clone() });
            events.emit(AgentEvent::MessageComplete { text: text.clone() });
            events.emit(AgentEvent::Usage {
                usage,
                cost_usd: None,
            });
            events.emit(AgentEvent::SessionEnd { session_id: None });
            Ok(AgentReply {
                text,
                session_id: None,
                usage,
                cost_usd: None,
                turns: 1,
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use serde_json::json;

    use super::*;
    use crate::providers::registry::test_decl;
    use crate::providers::{CallId, Prompt};

    fn request(call: u32, prompt: &str) -> AgentRequest {
        AgentRequest {
            call: CallId {
                node_id: "n".into(),
                index: call,
            },
            prompt: Prompt {
                text: prompt.into(),
                ..Prompt::default()
            },
            ..AgentRequest::default()
        }
    }

    fn model(options: Value) -> InProcess {
        let mut decl = test_decl("m", "in-process");
        decl.options = options.as_object().unwrap().clone();
        InProcess::from_decl(&decl).unwrap()
    }

    #[tokio::test]
    async fn echoes_by_default_and_streams_events() {
        let count = AtomicUsize::new(0);
        let sink = |_event: AgentEvent| {
            count.fetch_add(1, Ordering::Relaxed);
        };
        let reply = InProcess::new()
            .run(&request(0, "hello there"), &sink)
            .await
            .unwrap();
        assert_eq!(
            (reply.text.as_str(), reply.usage.input_tokens),
            ("hello there", 3)
        );
        assert_eq!(count.load(Ordering::Relaxed), 5);
    }

    #[tokio::test]
    async fn fixed_scripted_and_per_node_replies() {
        let sink = |_: AgentEvent| {};
        let fixed = model(json!({"reply": "LGTM"}));
        assert_eq!(
            fixed.run(&request(3, "x"), &sink).await.unwrap().text,
            "LGTM"
        );
        let scripted = model(json!({"replies": "[\"no\", \"yes\"]"}));
        let texts = [
            scripted.run(&request(0, "x"), &sink).await.unwrap().text,
            scripted.run(&request(1, "x"), &sink).await.unwrap().text,
            scripted.run(&request(5, "x"), &sink).await.unwrap().text,
        ];
        assert_eq!(texts, ["no", "yes", "yes"]);
        let mut per_node = request(0, "x");
        per_node.options = json!({"reply": "node says"}).as_object().unwrap().clone();
        assert_eq!(fixed.run(&per_node, &sink).await.unwrap().text, "node says");
    }

    #[tokio::test]
    async fn scripted_failures_for_the_first_calls() {
        let sink = |_: AgentEvent| {};
        let flaky = model(json!({"fail": "rate-limit", "fail-calls": 2, "reply": "ok"}));
        let first = flaky.run(&request(0, "x"), &sink).await.unwrap_err();
        assert_eq!(first.class(), ErrorClass::RateLimit);
        assert!(flaky.run(&request(1, "x"), &sink).await.is_err());
        assert_eq!(flaky.run(&request(2, "x"), &sink).await.unwrap().text, "ok");
    }

    #[test]
    fn bad_options_fail_at_build() {
        let mut decl = test_decl("m", "in-process");
        decl.options = json!({"fail": "schema"}).as_object().unwrap().clone();
        let error = InProcess::from_decl(&decl).unwrap_err();
        assert!(error.to_string().contains("option `fail`"), "{error}");
        decl.options = json!({"latency": "soon"}).as_object().unwrap().clone();
        assert!(
            InProcess::from_decl(&decl)
                .unwrap_err()
                .to_string()
                .contains("latency")
        );
    }

    #[tokio::test(start_paused = true)]
    async fn latency_delays_the_reply() {
        let sink = |_: AgentEvent| {};
        let slow = model(json!({"latency": "50ms"}));
        let started = tokio::time::Instant::now();
        slow.run(&request(0, "x"), &sink).await.unwrap();
        assert_eq!(started.elapsed(), Duration::from_millis(50));
        // Cancelling (dropping) a slow call returns at once.
        let second = request(1, "x");
        let call = slow.run(&second, &sink);
        assert!(
            tokio::time::timeout(Duration::from_millis(10), call)
                .await
                .is_err()
        );
    }

    #[tokio::test]
    async fn zero_latency_calls_are_cheap() {
        let sink = |_: AgentEvent| {};
        let echo = InProcess::new();
        let request = request(0, "x");
        let started = std::time::Instant::now();
        for _ in 0..10_000 {
            echo.run(&request, &sink).await.unwrap();
        }
        // Unoptimised build: generous, but a sleep or a thread hop per call would blow it.
        assert!(
            started.elapsed() < Duration::from_secs(1),
            "{:?}",
            started.elapsed()
        );
    }
}
