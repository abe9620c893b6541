//! The `replay` adapter: plays a recorded [`Cassette`] back, deterministically, with no
//! network and no key — for tests, CI and offline demos.
//!
//! ```kdl
//! provider "fake" adapter="replay" cassette="review.cassette" {
//!     option "match" "node"   // match by node and call only, not the prompt
//!     option "speed" 1.0      // replay at the recorded pace (default 0: instant)
//! }
//! ```
//!
//! Calls are matched by node id and [`AgentRequest::call_index`]. A call the cassette
//! lacks, or (by default) one whose prompt differs from the recording, is a
//! [`ProviderError::Config`] naming the node, the call and the cassette.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::cassette::{CallOutcome, Cassette, CassetteCall};
use super::options::Options;
use super::{AgentEvent, AgentRequest, EventSink, Provider, ProviderError, ProviderFuture};
use crate::ir::ProviderDecl;

const ADAPTER: &str = "replay";

/// The delay before each event of a hand-written call (no `delays-ms`) at speed 1.
const DEFAULT_EVENT_DELAY: Duration = Duration::from_millis(30);

/// A provider that replays a cassette.
#[derive(Debug)]
pub struct Replay {
    cassette: Cassette,
    path: PathBuf,
    /// 0: instant; otherwise recorded delays are divided by it.
    speed: f64,
    match_prompt: bool,
}

impl Replay {
    /// Replays `cassette`, read from `path` (named in errors), instantly, checking prompts.
    #[must_use]
    pub fn new(cassette: Cassette, path: PathBuf) -> Self {
        Self {
            cassette,
            path,
            speed: 0.0,
            match_prompt: true,
        }
    }

    /// Builds the provider a `provider … adapter="replay"` declares: loads its cassette
    /// (relative to `workflow_dir`) and reads `option "speed"` and `option "match"`.
    ///
    /// # Errors
    /// [`ProviderError::Config`]: no `cassette=`, an unreadable or invalid cassette, a bad
    /// option.
    pub fn from_decl(decl: &ProviderDecl, workflow_dir: &Path) -> Result<Self, ProviderError> {
        let Some(cassette) = &decl.cassette else {
            return Err(ProviderError::config(
                ADAPTER,
                format!(
                    "provider `{}` needs `cassette=\"file.cassette\"`",
                    decl.name.value
                ),
            ));
        };
        let path = workflow_dir.join(&cassette.value);
        let options = Options::provider(&decl.options);
        let speed = options.number(ADAPTER, "speed")?.unwrap_or(0.0);
        if !(speed >= 0.0 && speed.is_finite()) {
            return Err(ProviderError::config(
                ADAPTER,
                format!("option `speed` must be 0 (instant) or more, found {speed}"),
            ));
        }
        let match_prompt = match options.string(ADAPTER, "match")? {
            None | Some("prompt") => true,
            Some("node") => false,
            Some(other) => {
                return Err(ProviderError::config(
                    ADAPTER,
                    format!("option `match` must be `prompt` or `node`, found `{other}`"),
                ));
            }
        };
        Ok(Self {
            cassette: Cassette::load(&path)?,
            path,
            speed,
            match_prompt,
        })
    }

    /// Sets the replay speed (0: instant, 1: recorded pace).
    #[must_use]
    pub fn with_speed(mut self, speed: f64) -> Self {
        self.speed = speed.max(0.0);
        self
    }

    fn find(&self, request: &AgentRequest) -> Result<&CassetteCall, ProviderError> {
        let (node, index) = (&request.call.node_id, request.call.index);
        let call = self.cassette.get(node, index).ok_or_else(|| {
            let recorded = self.cassette.calls_of(node);
            self.config(format!(
                "cassette `{}` has no call {index} of node `{node}` (it holds {recorded} call{} of `{node}`); record the workflow again with `atomic run --record`",
                self.path.display(),
                if recorded == 1 { "" } else { "s" },
            ))
        })?;
        let recorded_prompt = call.prompt.as_deref().filter(|_| self.match_prompt);
        if let Some(recorded) = recorded_prompt.filter(|recorded| *recorded != request.prompt.text)
        {
            return Err(self.config(format!(
                "call {index} of node `{node}` in cassette `{}` was recorded with another prompt: {}; record it again, or set `option \"match\" \"node\"` to match by node and call only",
                self.path.display(),
                describe_difference(recorded, &request.prompt.text),
            )));
        }
        Ok(call)
    }

    fn config(&self, message: String) -> ProviderError {
        ProviderError::config(ADAPTER, message)
    }

    fn delay(&self, call: &CassetteCall, index: usize) -> Option<Duration> {
        if self.speed == 0.0 {
            return None;
        }
        let recorded = call
            .delays_ms
            .get(index)
            .map(|ms| Duration::from_millis(*ms));
        Some(recorded.unwrap_or(DEFAULT_EVENT_DELAY).div_f64(self.speed))
    }
}

impl Provider for Replay {
    fn adapter(&self) -> &'static str {
        ADAPTER
    }

    /// The cassette is read once, when the provider is built: a call reads memory only.
    fn is_instant(&self) -> bool {
        true
    }

    fn run<'a>(
        &'a self,
        request: &'a AgentRequest,
        events: &'a dyn EventSink,
    ) -> ProviderFuture<'a> {
        Box::pin(async move {
            let call = self.find(request)?;
            let synthesised;
            let recorded = if call.events.is_empty() {
                synthesised = synthesise(call);
                &synthesised
            } else {
                &call.events
            };
            for (index, event) in recorded.iter().enumerate() {
                if let Some(delay) = self.delay(call, index) {
                    tokio::time::sleep(delay).await;
                }
                events.emit(event.clone());
            }
            match &call.outcome {
                CallOutcome::Reply(reply) => Ok(reply.into()),
                CallOutcome::Error(error) => Err(error
                    .to_error(ADAPTER)
                    .expect("cassettes with non-provider error classes are refused on load")),
            }
        })
    }
}

/// The events of a hand-written call that lists none.
fn synthesise(call: &CassetteCall) -> Vec<AgentEvent> {
    let CallOutcome::Reply(reply) = &call.outcome else {
        return Vec::new();
    };
    let session_id = reply.session_id.clone();
    vec![
        AgentEvent::SessionStart {
            session_id: session_id.clone(),
            model: call.model.clone(),
        },
        AgentEvent::TextDelta {
            text: reply.text.clone(),
        },
        AgentEvent::MessageComplete {
            text: reply.text.clone(),
        },
        AgentEvent::SessionEnd { session_id },
    ]
}

/// Where two prompts part, with a little context from each.
fn describe_difference(recorded: &str, rendered: &str) -> String {
    let at = recorded
        .char_indices()
        .zip(rendered.chars())
        .find(|((_, a), b)| a != b)
        .map_or_else(
            || recorded.len().min(rendered.len()),
            |((index, _), _)| index,
        );
    let start = floor_char_boundary(recorded, at.saturating_sub(20))
        .min(floor_char_boundary(rendered, at.saturating_sub(20)));
    let excerpt = |text: &str| {
        let from = floor_char_boundary(text, start);
        let snippet: String = text[from..].chars().take(50).collect();
        format!("{}{snippet:?}", if from > 0 { "…" } else { "" })
    };
    format!(
        "they differ at byte {at} (recorded {}, rendered {})",
        excerpt(recorded),
        excerpt(rendered)
    )
}

fn floor_char_boundary(text: &str, mut index: usize) -> usize {
    index = index.min(text.len());
    while !text.is_char_boundary(index) {
        index -= 1;
    }
    index
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;
    use crate::providers::{CallId, Prompt};

    const CASSETTE: &str = r#"{"cassette":1}
{"node":"review","call":0,"prompt":"Review src/","events":[{"type":"session-start","session_id":"s1","model":"m"},{"type":"text-delta","text":"Fine"},{"type":"session-end","session_id":"s1"}],"delays-ms":[0,40,10],"reply":{"text":"Fine","session_id":"s1","turns":1}}
{"node":"review","call":1,"prompt":"Review src/","error":{"class":"overloaded","message":"busy","after-ms":500}}
{"node":"plain","call":0,"reply":{"text":"Hello"}}
"#;

    fn replay() -> Replay {
        Replay::new(
            Cassette::parse(CASSETTE).unwrap(),
            PathBuf::from("t.cassette"),
        )
    }

    fn request(node: &str, call: u32, prompt: &str) -> AgentRequest {
        AgentRequest {
            call: CallId {
                node_id: node.to_owned(),
                index: call,
            },
            prompt: Prompt {
                text: prompt.to_owned(),
                ..Prompt::default()
            },
            ..AgentRequest::default()
        }
    }

    async fn run(
        replay: &Replay,
        request: &AgentRequest,
    ) -> (
        Vec<AgentEvent>,
        Result<super::super::AgentReply, ProviderError>,
    ) {
        let seen = Mutex::new(Vec::new());
        let sink = |event: AgentEvent| seen.lock().unwrap().push(event);
        let result = replay.run(request, &sink).await;
        (seen.into_inner().unwrap(), result)
    }

    #[tokio::test]
    async fn replays_events_then_the_reply() {
        let (events, reply) = run(&replay(), &request("review", 0, "Review src/")).await;
        let reply = reply.unwrap();
        assert_eq!(
            (
                reply.text.as_str(),
                reply.session_id.as_deref(),
                reply.turns
            ),
            ("Fine", Some("s1"), 1)
        );
        assert_eq!(events.len(), 3);
        assert_eq!(
            events[1],
            AgentEvent::TextDelta {
                text: "Fine".to_owned()
            }
        );
    }

    #[tokio::test]
    async fn raises_a_recorded_error() {
        let (events, result) = run(&replay(), &request("review", 1, "Review src/")).await;
        let error = result.unwrap_err();
        assert!(
            matches!(
                error,
                ProviderError::Overloaded {
                    adapter: "replay",
                    ..
                }
            ),
            "{error}"
        );
        assert_eq!(error.retry_after(), Some(Duration::from_millis(500)));
        assert!(events.is_empty());
    }

    #[tokio::test]
    async fn hand_written_calls_match_any_prompt_and_get_events() {
        let (events, reply) = run(&replay(), &request("plain", 0, "any prompt at all")).await;
        assert_eq!(reply.unwrap().text, "Hello");
        let kinds: Vec<String> = events
            .iter()
            .map(|event| {
                serde_json::to_value(event).unwrap()["type"]
                    .as_str()
                    .unwrap()
                    .to_owned()
            })
            .collect();
        assert_eq!(
            kinds,
            [
                "session-start",
                "text-delta",
                "message-complete",
                "session-end"
            ]
        );
    }

    #[tokio::test]
    async fn a_missing_call_names_node_call_and_cassette() {
        let (_, result) = run(&replay(), &request("review", 2, "Review src/")).await;
        let message = result.unwrap_err().to_string();
        assert!(message.contains("no call 2 of node `review`"), "{message}");
        assert!(message.contains("`t.cassette`"), "{message}");
        assert!(message.contains("holds 2 calls"), "{message}");
        let (_, result) = run(&replay(), &request("other", 0, "x")).await;
        assert!(
            result
                .unwrap_err()
                .to_string()
                .contains("holds 0 calls of `other`")
        );
    }

    #[tokio::test]
    async fn a_changed_prompt_is_a_mismatch_unless_matching_by_node() {
        let (_, result) = run(&replay(), &request("review", 0, "Review lib/")).await;
        let message = result.unwrap_err().to_string();
        assert!(message.contains("call 0 of node `review`"), "{message}");
        assert!(message.contains("differ at byte 7"), "{message}");
        let excerpts = r#"(recorded "Review src/", rendered "Review lib/")"#;
        assert!(message.contains(excerpts), "{message}");

        let mut lenient = replay();
        lenient.match_prompt = false;
        let (_, result) = run(&lenient, &request("review", 0, "Review lib/")).await;
        assert_eq!(result.unwrap().text, "Fine");
    }

    #[tokio::test(start_paused = true)]
    async fn speed_scales_recorded_delays() {
        let replay = replay().with_speed(2.0);
        let started = tokio::time::Instant::now();
        let (events, _) = run(&replay, &request("review", 0, "Review src/")).await;
        assert_eq!(events.len(), 3);
        assert_eq!(
            started.elapsed(),
            Duration::from_millis(25),
            "(0 + 40 + 10) / 2"
        );
    }

    #[test]
    fn from_decl_reads_the_cassette_relative_to_the_workflow() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("t.cassette"), CASSETTE).unwrap();
        let mut decl = super::super::registry::test_decl("fake", "replay");
        decl.cassette = Some(crate::source::Spanned::new(
            "t.cassette".to_owned(),
            crate::source::Span::default(),
        ));
        decl.options = serde_json::json!({"speed": 1.5, "match": "node"})
            .as_object()
            .unwrap()
            .clone();
        let replay = Replay::from_decl(&decl, dir.path()).unwrap();
        assert_eq!(
            (replay.speed, replay.match_prompt, replay.cassette.len()),
            (1.5, false, 3)
        );
        decl.cassette = None;
        let error = Replay::from_decl(&decl, dir.path()).unwrap_err();
        assert!(error.to_string().contains("needs `cassette="), "{error}");
    }
}
