//! Cassettes: recorded agent calls that the `replay` adapter plays back and
//! `atomic run --record FILE` writes. Described by `schemas/cassette.schema.json`.
//!
//! A cassette is a stream of JSON values, usually one per line (JSONL): a header, then one
//! call per value. A single document `{"cassette": 1, "calls": […]}` is read too, so
//! hand-written cassettes can be pretty-printed.
//!
//! ```text
//! {"cassette":1,"workflow":"review","recorded-with":"atomic 0.1.0"}
//! {"node":"review","call":0,"prompt":"Review src/","events":[{"type":"text-delta","text":"Looks"},…],"delays-ms":[0,120,…],"reply":{"text":"Looks good","turns":1}}
//! {"node":"review","call":1,"prompt":"Review src/","error":{"class":"rate-limit","message":"slow down","after-ms":1000}}
//! ```
//!
//! - `node` + `call` identify a call: the agent node's id and how many calls that node made
//!   before it in the run ([`AgentRequest::call_index`], retries included).
//! - `prompt` is the rendered prompt the call was recorded with; replay checks it unless the
//!   provider sets `option "match" "node"`. A call without `prompt` matches any prompt
//!   (hand-written demo cassettes whose inputs vary). `system` and `model` are informational.
//! - `events` are [`AgentEvent`]s in order (kebab-case `type` tags); when absent, replay
//!   synthesises session-start, one text-delta, message-complete and session-end from the
//!   reply. `delays-ms[i]` is the time before event `i` (for `option "speed"`).
//! - Exactly one of `reply` (an [`AgentReply`]; only `text` is required) or `error` (a
//!   `retry-on` class and message, raised as the matching [`ProviderError`]).
//!
//! Version 1 is the only version; readers refuse others by number.

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{AgentEvent, AgentReply, ProviderError, Usage};
use crate::ir::ErrorClass;

/// The cassette format version this build reads and writes.
pub const CASSETTE_VERSION: u32 = 1;

/// The first value of a cassette.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct CassetteHeader {
    /// The format version: [`CASSETTE_VERSION`].
    pub cassette: u32,
    /// The workflow recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workflow: Option<String>,
    /// `atomic <version>` that wrote it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recorded_with: Option<String>,
    /// Calls, in the single-document form.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub calls: Vec<CassetteCall>,
}

/// One recorded agent call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct CassetteCall {
    /// The agent node's id.
    pub node: String,
    /// The node's call index.
    pub call: u32,
    /// The rendered prompt; `None` (hand-written cassettes) matches any prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    /// The rendered system prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system: Option<String>,
    /// The model asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The provider's events, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<AgentEvent>,
    /// Milliseconds before each event.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub delays_ms: Vec<u64>,
    /// The reply or the error.
    #[serde(flatten)]
    pub outcome: CallOutcome,
}

/// How a recorded call ended.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CallOutcome {
    /// It returned this reply.
    Reply(RecordedReply),
    /// It failed.
    Error(RecordedError),
}

/// An [`AgentReply`] with every field but `text` optional.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RecordedReply {
    /// The final assistant text.
    pub text: String,
    /// The session id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// Token usage.
    #[serde(skip_serializing_if = "is_zero")]
    pub usage: RecordedUsage,
    /// Cost in USD.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// Turns taken.
    pub turns: u32,
}

/// [`Usage`] with every count optional.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct RecordedUsage {
    /// Prompt tokens not from cache.
    pub input_tokens: u64,
    /// Completion tokens.
    pub output_tokens: u64,
    /// Prompt tokens read from cache.
    pub cache_read_tokens: u64,
    /// Prompt tokens written to cache.
    pub cache_write_tokens: u64,
}

fn is_zero(usage: &RecordedUsage) -> bool {
    *usage == RecordedUsage::default()
}

/// A recorded failure: its `retry-on` class and what the backend said.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct RecordedError {
    /// The class (`rate-limit`, `overloaded`, `server-error`, `network`, `stream-cut`,
    /// `timeout`, `process-exit`, `bad-output`, `provider`).
    pub class: ErrorClass,
    /// The message (stderr tail for `process-exit`).
    #[serde(default)]
    pub message: String,
    /// HTTP status (`server-error`, `provider`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// Retry-after (`rate-limit`, `overloaded`) or the limit (`timeout`), in ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after_ms: Option<u64>,
    /// Exit code (`process-exit`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<i32>,
}

impl From<AgentReply> for RecordedReply {
    fn from(reply: AgentReply) -> Self {
        let usage = reply.usage;
        Self {
            text: reply.text,
            session_id: reply.session_id,
            usage: RecordedUsage {
                input_tokens: usage.input_tokens,
                output_tokens: usage.output_tokens,
                cache_read_tokens: usage.cache_read_tokens,
                cache_write_tokens: usage.cache_write_tokens,
            },
            cost_usd: reply.cost_usd,
            turns: reply.turns,
        }
    }
}

impl From<&RecordedReply> for AgentReply {
    fn from(reply: &RecordedReply) -> Self {
        let usage = reply.usage;
        Self {
            text: reply.text.clone(),
            session_id: reply.session_id.clone(),
            usage: Usage {
                input_tokens: usage.input_tokens,
                output_tokens: usage.output_tokens,
                cache_read_tokens: usage.cache_read_tokens,
                cache_write_tokens: usage.cache_write_tokens,
            },
            cost_usd: reply.cost_usd,
            turns: reply.turns,
        }
    }
}

impl From<&ProviderError> for RecordedError {
    fn from(error: &ProviderError) -> Self {
        if let ProviderError::Exhausted { last, .. } = error {
            return Self::from(last.as_ref());
        }
        let mut recorded = Self {
            class: error.class(),
            message: String::new(),
            status: None,
            after_ms: None,
            code: None,
        };
        let millis = |d: &Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
        match error {
            ProviderError::RateLimited { retry_after, .. }
            | ProviderError::Overloaded { retry_after, .. } => {
                recorded.after_ms = retry_after.as_ref().map(millis);
            }
            ProviderError::Server {
                status, message, ..
            }
            | ProviderError::Rejected {
                status, message, ..
            }
            | ProviderError::Auth {
                status, message, ..
            } => {
                recorded.status = Some(*status);
                recorded.message.clone_from(message);
            }
            ProviderError::Network { message, .. }
            | ProviderError::StreamCut { message, .. }
            | ProviderError::BadOutput { message, .. }
            | ProviderError::OverBudget { message, .. }
            | ProviderError::Config { message, .. } => recorded.message.clone_from(message),
            ProviderError::Timeout { after, .. } => recorded.after_ms = Some(millis(after)),
            ProviderError::ProcessExit { code, stderr, .. } => {
                recorded.code = *code;
                recorded.message.clone_from(stderr);
            }
            ProviderError::MaxTurns { .. }
            | ProviderError::WaitTooLong { .. }
            | ProviderError::Exhausted { .. }
            | ProviderError::Unavailable { .. }
            | ProviderError::AwaitingPermission { .. }
            | ProviderError::Remote { .. } => recorded.message = error.to_string(),
        }
        recorded
    }
}

impl RecordedError {
    /// The error to raise, attributed to `adapter`; `None` for classes a provider cannot
    /// raise (`schema`, `tool-exit`, `conflict`).
    #[must_use]
    pub fn to_error(&self, adapter: &'static str) -> Option<ProviderError> {
        let message = self.message.clone();
        let after = self.after_ms.map(Duration::from_millis);
        Some(match self.class {
            ErrorClass::RateLimit => ProviderError::rate_limited(adapter, after),
            ErrorClass::Overloaded => ProviderError::overloaded(adapter, after),
            ErrorClass::ServerError => {
                ProviderError::server(adapter, self.status.unwrap_or(500), message)
            }
            ErrorClass::Network => ProviderError::network(adapter, message),
            ErrorClass::StreamCut => ProviderError::stream_cut(adapter, message),
            ErrorClass::Timeout => ProviderError::timeout(adapter, after.unwrap_or_default()),
            ErrorClass::ProcessExit => ProviderError::process_exit(adapter, self.code, message),
            ErrorClass::BadOutput => ProviderError::bad_output(adapter, message),
            ErrorClass::Auth => ProviderError::Auth {
                adapter,
                status: self.status.unwrap_or(401),
                message,
                key_variable: None,
            },
            ErrorClass::Provider => {
                ProviderError::rejected(adapter, self.status.unwrap_or(0), message)
            }
            ErrorClass::Budget => ProviderError::over_budget(adapter, message),
            ErrorClass::Schema | ErrorClass::ToolExit | ErrorClass::Conflict => return None,
        })
    }
}

/// A loaded cassette: its header and its calls by (node, call index).
#[derive(Clone, Debug, Default)]
pub struct Cassette {
    /// The header (its `calls` moved into `calls`).
    pub workflow: Option<String>,
    calls: HashMap<(String, u32), CassetteCall>,
}

impl Cassette {
    /// Reads a cassette file.
    ///
    /// # Errors
    /// [`ProviderError::Config`] naming the file (and line) when it cannot be read, is not
    /// a version-1 cassette, or holds a call twice.
    pub fn load(path: &Path) -> Result<Self, ProviderError> {
        let text = std::fs::read_to_string(path).map_err(|error| {
            config(format!(
                "cannot read cassette `{}`: {error}",
                path.display()
            ))
        })?;
        Self::parse(&text)
            .map_err(|message| config(format!("cassette `{}`: {message}", path.display())))
    }

    /// Parses cassette text; errors name the line.
    ///
    /// # Errors
    /// A message saying what is wrong where.
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut stream = serde_json::Deserializer::from_str(text).into_iter::<serde_json::Value>();
        let line_at = |offset: usize| text[..offset.min(text.len())].matches('\n').count() + 1;
        let header = match stream.next() {
            None => return Err("is empty; expected a header like {\"cassette\":1}".to_owned()),
            Some(Err(error)) => return Err(format!("line {}: {error}", error.line())),
            Some(Ok(value)) => value,
        };
        let version = header.get("cassette").and_then(serde_json::Value::as_u64);
        if version != Some(u64::from(CASSETTE_VERSION)) {
            return Err(match version {
                Some(found) => {
                    format!("is version {found}; this atomic reads version {CASSETTE_VERSION}")
                }
                None => "line 1: expected a header like {\"cassette\":1}".to_owned(),
            });
        }
        let header: CassetteHeader =
            serde_json::from_value(header).map_err(|error| format!("line 1: {error}"))?;
        let mut cassette = Self {
            workflow: header.workflow,
            calls: HashMap::new(),
        };
        for call in header.calls {
            cassette.insert(call, 1)?;
        }
        loop {
            let start = stream.byte_offset();
            let Some(value) = stream.next() else { break };
            let value = value.map_err(|error| format!("line {}: {error}", error.line()))?;
            let line = line_at(start + leading_whitespace(&text[start..]));
            let call: CassetteCall =
                serde_json::from_value(value).map_err(|error| format!("line {line}: {error}"))?;
            cassette.insert(call, line)?;
        }
        Ok(cassette)
    }

    fn insert(&mut self, call: CassetteCall, line: usize) -> Result<(), String> {
        if let CallOutcome::Error(error) = &call.outcome
            && error.to_error("replay").is_none()
        {
            return Err(format!(
                "line {line}: error class `{}` is not a provider error",
                error.class.name()
            ));
        }
        let key = (call.node.clone(), call.call);
        if self.calls.insert(key, call).is_some() {
            return Err(format!(
                "line {line}: a second recording of the same node and call"
            ));
        }
        Ok(())
    }

    /// The recorded call `call` of `node`.
    #[must_use]
    pub fn get(&self, node: &str, call: u32) -> Option<&CassetteCall> {
        self.calls.get(&(node.to_owned(), call))
    }

    /// How many calls of `node` were recorded.
    #[must_use]
    pub fn calls_of(&self, node: &str) -> usize {
        self.calls.keys().filter(|(name, _)| name == node).count()
    }

    /// How many calls there are.
    #[must_use]
    pub fn len(&self) -> usize {
        self.calls.len()
    }

    /// Whether there are none.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.calls.is_empty()
    }
}

fn leading_whitespace(text: &str) -> usize {
    text.len() - text.trim_start().len()
}

fn config(message: String) -> ProviderError {
    ProviderError::config("replay", message)
}

#[cfg(test)]
mod tests {
    use super::*;

    const JSONL: &str = r#"{"cassette":1,"workflow":"w"}
{"node":"a","call":0,"prompt":"p","reply":{"text":"hi"}}

{"node":"a","call":1,"prompt":"p","error":{"class":"rate-limit","message":"slow","after-ms":250}}
"#;

    #[test]
    fn reads_jsonl_and_documents() {
        let cassette = Cassette::parse(JSONL).unwrap();
        assert_eq!((cassette.len(), cassette.calls_of("a")), (2, 2));
        assert_eq!(cassette.workflow.as_deref(), Some("w"));
        let CallOutcome::Reply(reply) = &cassette.get("a", 0).unwrap().outcome else {
            panic!("a reply")
        };
        assert_eq!(reply.text, "hi");
        let CallOutcome::Error(error) = &cassette.get("a", 1).unwrap().outcome else {
            panic!("an error")
        };
        let raised = error.to_error("replay").unwrap();
        assert_eq!(raised.retry_after(), Some(Duration::from_millis(250)));

        let document = r#"{
            "cassette": 1,
            "calls": [{"node": "b", "call": 0, "prompt": "q", "reply": {"text": "ok"}}]
        }"#;
        assert!(Cassette::parse(document).unwrap().get("b", 0).is_some());
    }

    #[test]
    fn errors_name_the_line() {
        let bad = "{\"cassette\":1}\n{\"node\":\"a\",\"call\":0,\"prompt\":\"p\",\"reply\":{\"text\":\"x\"}}\n{\"node\":\"a\",\"call\":\"zero\"}\n";
        let error = Cassette::parse(bad).unwrap_err();
        assert!(error.starts_with("line 3:"), "{error}");
        let duplicate = "{\"cassette\":1}\n{\"node\":\"a\",\"call\":0,\"prompt\":\"\",\"reply\":{}}\n{\"node\":\"a\",\"call\":0,\"prompt\":\"\",\"reply\":{}}";
        assert!(
            Cassette::parse(duplicate)
                .unwrap_err()
                .contains("line 3: a second")
        );
        assert!(
            Cassette::parse("{\"cassette\":2}")
                .unwrap_err()
                .contains("version 2")
        );
        assert!(Cassette::parse("").unwrap_err().contains("empty"));
        let schema = "{\"cassette\":1}\n{\"node\":\"a\",\"call\":0,\"prompt\":\"\",\"error\":{\"class\":\"schema\"}}";
        assert!(
            Cassette::parse(schema)
                .unwrap_err()
                .contains("not a provider error")
        );
    }

    #[test]
    fn every_provider_error_survives_a_round_trip() {
        let errors = [
            ProviderError::rate_limited("x", Some(Duration::from_secs(2))),
            ProviderError::overloaded("x", None),
            ProviderError::server("x", 502, "bad gateway"),
            ProviderError::network("x", "reset"),
            ProviderError::stream_cut("x", "eof"),
            ProviderError::timeout("x", Duration::from_secs(30)),
            ProviderError::process_exit("x", Some(2), "boom"),
            ProviderError::bad_output("x", "not json"),
            ProviderError::rejected("x", 400, "no"),
        ];
        for error in errors {
            let recorded = RecordedError::from(&error);
            let text = serde_json::to_string(&recorded).unwrap();
            let back: RecordedError = serde_json::from_str(&text).unwrap();
            let raised = back.to_error("x").unwrap();
            assert_eq!(raised.to_string(), error.to_string(), "{text}");
            assert_eq!(raised.class(), error.class());
        }
    }

    /// The cassettes shipped in `examples/` load and are valid against the schema.
    #[test]
    fn shipped_cassettes_load_and_match_the_schema() {
        let schema: serde_json::Value =
            serde_json::from_str(include_str!("../../schemas/cassette.schema.json")).unwrap();
        let validator = jsonschema::validator_for(&schema).unwrap();
        let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
        let mut found = 0;
        for entry in std::fs::read_dir(&examples).unwrap() {
            let path = entry.unwrap().path();
            if !path.to_string_lossy().contains(".cassette") {
                continue;
            }
            found += 1;
            let cassette = Cassette::load(&path).unwrap();
            assert!(!cassette.is_empty(), "{}", path.display());
            let text = std::fs::read_to_string(&path).unwrap();
            for value in serde_json::Deserializer::from_str(&text).into_iter::<serde_json::Value>()
            {
                let value = value.unwrap();
                let errors: Vec<String> = validator
                    .iter_errors(&value)
                    .map(|e| e.to_string())
                    .collect();
                assert!(errors.is_empty(), "{}: {errors:?}", path.display());
            }
        }
        assert!(found > 0, "no cassettes in {}", examples.display());
    }
}
