//! One assistant message assembled from a Messages API event stream: content blocks by
//! index (text, thinking with its signature, tool_use with its input JSON reassembled from
//! `input_json_delta` fragments, and any other block kept verbatim), the stop reason, and
//! usage (`message_delta` usage is cumulative: it replaces, never adds).

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::providers::http::{ApiKey, ErrorBody, from_stream_error};
use crate::providers::{ProviderError, Usage};

use super::ADAPTER;

/// What an event means for the caller.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Step {
    /// Nothing to report (a ping, a block start or stop, an unknown event).
    Quiet,
    /// `message_start`, with the model the server used.
    Started(Option<String>),
    /// A piece of text.
    Text(String),
    /// A piece of thinking.
    Thinking(String),
    /// The message's usage so far (after `message_start` and each `message_delta` that
    /// carries usage), for the budget to see mid-stream.
    Usage(Usage),
    /// `message_stop`: the message is complete.
    Stopped,
}

/// A content block being received.
#[derive(Debug)]
struct Block {
    /// The block as it will be sent back (deltas applied).
    value: Map<String, Value>,
    /// `input_json_delta` fragments of a tool_use block.
    partial_json: String,
}

/// The message being received.
#[derive(Debug, Default)]
pub(super) struct MessageBuilder {
    blocks: BTreeMap<u64, Block>,
    stop_reason: Option<String>,
    usage: Map<String, Value>,
    stopped: bool,
}

/// A received message.
#[derive(Debug, PartialEq)]
pub(super) struct Message {
    /// Content blocks, in index order, exactly as they must be sent back.
    pub(super) content: Vec<Value>,
    /// `stop_reason`.
    pub(super) stop_reason: Option<String>,
    /// Tokens of this message.
    pub(super) usage: Usage,
}

impl MessageBuilder {
    /// Applies one SSE event (`event:` name and `data:`).
    pub(super) fn apply(
        &mut self,
        name: &str,
        data: &str,
        key: Option<&ApiKey>,
    ) -> Result<Step, ProviderError> {
        if data.trim().is_empty() {
            return Ok(Step::Quiet);
        }
        let event: Value = serde_json::from_str(data)
            .map_err(|error| bad(format!("event `{name}` holds invalid JSON: {error}")))?;
        let kind = event.get("type").and_then(Value::as_str).unwrap_or(name);
        match kind {
            "message_start" => {
                let message = event.get("message");
                if let Some(usage) = message.and_then(|m| m.get("usage")) {
                    self.merge_usage(usage);
                }
                let model = message.and_then(|m| m.get("model")).and_then(Value::as_str);
                Ok(Step::Started(model.map(str::to_owned)))
            }
            "message_delta" if event.get("usage").is_some_and(Value::is_object) => {
                if let Some(reason) = event.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.stop_reason = Some(reason.to_owned());
                }
                if let Some(usage) = event.get("usage") {
                    self.merge_usage(usage);
                }
                Ok(Step::Usage(self.usage()))
            }
            "content_block_start" => {
                let index = index_of(&event)?;
                let Some(Value::Object(block)) = event.get("content_block").cloned() else {
                    return Err(bad(
                        "`content_block_start` without a content block".to_owned()
                    ));
                };
                self.blocks.insert(
                    index,
                    Block {
                        value: block,
                        partial_json: String::new(),
                    },
                );
                Ok(Step::Quiet)
            }
            "content_block_delta" => self.apply_delta(&event),
            "content_block_stop" => {
                let index = index_of(&event)?;
                let block = self.block(index)?;
                if block.value.get("type").and_then(Value::as_str) == Some("tool_use") {
                    let input = if block.partial_json.trim().is_empty() {
                        block
                            .value
                            .get("input")
                            .cloned()
                            .unwrap_or_else(|| Value::Object(Map::new()))
                    } else {
                        serde_json::from_str(&block.partial_json).map_err(|error| {
                            bad(format!(
                                "tool input of block {index} is not valid JSON: {error}"
                            ))
                        })?
                    };
                    block.value.insert("input".to_owned(), input);
                }
                Ok(Step::Quiet)
            }
            "message_delta" => {
                if let Some(reason) = event.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.stop_reason = Some(reason.to_owned());
                }
                if let Some(usage) = event.get("usage") {
                    self.merge_usage(usage);
                }
                Ok(Step::Quiet)
            }
            "message_stop" => {
                self.stopped = true;
                Ok(Step::Stopped)
            }
            "error" => {
                let error = ErrorBody::parse(data);
                Err(from_stream_error(ADAPTER, &error, None, key))
            }
            _ => Ok(Step::Quiet),
        }
    }

    fn apply_delta(&mut self, event: &Value) -> Result<Step, ProviderError> {
        let index = index_of(event)?;
        let block = self.block(index)?;
        let Some(delta) = event.get("delta") else {
            return Ok(Step::Quiet);
        };
        let text = |field: &str| delta.get(field).and_then(Value::as_str).unwrap_or_default();
        let mut append = |field: &str, piece: &str| match block.value.get_mut(field) {
            Some(Value::String(existing)) => existing.push_str(piece),
            _ => {
                block
                    .value
                    .insert(field.to_owned(), Value::String(piece.to_owned()));
            }
        };
        match delta
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or_default()
        {
            "text_delta" => {
                let piece = text("text");
                append("text", piece);
                Ok(Step::Text(piece.to_owned()))
            }
            "thinking_delta" => {
                let piece = text("thinking");
                append("thinking", piece);
                Ok(Step::Thinking(piece.to_owned()))
            }
            "signature_delta" => {
                append("signature", text("signature"));
                Ok(Step::Quiet)
            }
            "input_json_delta" => {
                block.partial_json.push_str(text("partial_json"));
                Ok(Step::Quiet)
            }
            "citations_delta" => {
                if let Some(citation) = delta.get("citation") {
                    match block.value.get_mut("citations") {
                        Some(Value::Array(citations)) => citations.push(citation.clone()),
                        _ => {
                            block.value.insert(
                                "citations".to_owned(),
                                Value::Array(vec![citation.clone()]),
                            );
                        }
                    }
                }
                Ok(Step::Quiet)
            }
            _ => Ok(Step::Quiet),
        }
    }

    fn block(&mut self, index: u64) -> Result<&mut Block, ProviderError> {
        self.blocks.get_mut(&index).ok_or_else(|| {
            bad(format!(
                "an event names content block {index} before its start"
            ))
        })
    }

    fn merge_usage(&mut self, usage: &Value) {
        if let Some(fields) = usage.as_object() {
            for (name, value) in fields {
                if !value.is_null() {
                    self.usage.insert(name.clone(), value.clone());
                }
            }
        }
    }

    /// The message's usage so far (`message_delta` counts replace `message_start`'s).
    pub(super) fn usage(&self) -> Usage {
        let count = |name: &str| self.usage.get(name).and_then(Value::as_u64).unwrap_or(0);
        Usage {
            input_tokens: count("input_tokens"),
            output_tokens: count("output_tokens"),
            cache_read_tokens: count("cache_read_input_tokens"),
            cache_write_tokens: count("cache_creation_input_tokens"),
        }
    }

    /// The finished message; a stream that ended before `message_stop` was cut.
    pub(super) fn finish(self) -> Result<Message, ProviderError> {
        if !self.stopped {
            return Err(ProviderError::stream_cut(
                ADAPTER,
                "the event stream ended before `message_stop`".to_owned(),
            ));
        }
        let usage = self.usage();
        let content = self
            .blocks
            .into_values()
            .map(|block| Value::Object(block.value))
            // The API refuses empty text blocks in a request.
            .filter(|block| {
                block.get("type").and_then(Value::as_str) != Some("text")
                    || block
                        .get("text")
                        .and_then(Value::as_str)
                        .is_some_and(|t| !t.is_empty())
            })
            .collect();
        Ok(Message {
            content,
            stop_reason: self.stop_reason,
            usage,
        })
    }
}

fn index_of(event: &Value) -> Result<u64, ProviderError> {
    event
        .get("index")
        .and_then(Value::as_u64)
        .ok_or_else(|| bad("a content block event without an `index`".to_owned()))
}

fn bad(message: String) -> ProviderError {
    ProviderError::bad_output(ADAPTER, message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::ErrorClass;
    use serde_json::json;

    /// The tool-use transcript of protocols.md §1.
    const TOOL_TURN: &[(&str, &str)] = &[
        (
            "message_start",
            r#"{"type":"message_start","message":{"id":"msg_01A","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":412,"cache_creation_input_tokens":7,"cache_read_input_tokens":100,"output_tokens":1}}}"#,
        ),
        (
            "content_block_start",
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
        ),
        ("ping", r#"{"type":"ping"}"#),
        (
            "content_block_delta",
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Reading it."}}"#,
        ),
        (
            "content_block_stop",
            r#"{"type":"content_block_stop","index":0}"#,
        ),
        (
            "content_block_start",
            r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_01B","name":"open_file","input":{}}}"#,
        ),
        (
            "content_block_delta",
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":""}}"#,
        ),
        (
            "content_block_delta",
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"path\": \"src/ma"}}"#,
        ),
        (
            "content_block_delta",
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"in.rs\"}"}}"#,
        ),
        (
            "content_block_stop",
            r#"{"type":"content_block_stop","index":1}"#,
        ),
        (
            "message_delta",
            r#"{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":58}}"#,
        ),
        ("message_stop", r#"{"type":"message_stop"}"#),
    ];

    fn run(events: &[(&str, &str)]) -> (Vec<Step>, Result<Message, ProviderError>) {
        let mut builder = MessageBuilder::default();
        let mut steps = Vec::new();
        for (name, data) in events {
            match builder.apply(name, data, None) {
                Ok(step) => steps.push(step),
                Err(error) => return (steps, Err(error)),
            }
        }
        (steps, builder.finish())
    }

    #[test]
    fn assembles_a_tool_use_turn() {
        let (steps, message) = run(TOOL_TURN);
        assert_eq!(
            steps[0],
            Step::Started(Some("claude-sonnet-4-5".to_owned()))
        );
        assert!(steps.contains(&Step::Text("Reading it.".to_owned())));
        let message = message.expect("complete");
        assert_eq!(message.stop_reason.as_deref(), Some("tool_use"));
        assert_eq!(
            message.content,
            vec![
                json!({"type":"text","text":"Reading it."}),
                json!({"type":"tool_use","id":"toolu_01B","name":"open_file","input":{"path":"src/main.rs"}}),
            ]
        );
        assert_eq!(
            message.usage,
            Usage {
                input_tokens: 412,
                output_tokens: 58,
                cache_read_tokens: 100,
                cache_write_tokens: 7
            }
        );
    }

    #[test]
    fn keeps_thinking_with_its_signature() {
        let (steps, message) = run(&[
            (
                "message_start",
                r#"{"type":"message_start","message":{"model":"m","usage":{"input_tokens":1,"output_tokens":1}}}"#,
            ),
            (
                "content_block_start",
                r#"{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}"#,
            ),
            (
                "content_block_delta",
                r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Hmm."}}"#,
            ),
            (
                "content_block_delta",
                r#"{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"sig=="}}"#,
            ),
            (
                "content_block_stop",
                r#"{"type":"content_block_stop","index":0}"#,
            ),
            (
                "content_block_start",
                r#"{"type":"content_block_start","index":1,"content_block":{"type":"redacted_thinking","data":"opaque"}}"#,
            ),
            (
                "content_block_stop",
                r#"{"type":"content_block_stop","index":1}"#,
            ),
            (
                "content_block_start",
                r#"{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"t","name":"n","input":{}}}"#,
            ),
            (
                "content_block_stop",
                r#"{"type":"content_block_stop","index":2}"#,
            ),
            (
                "message_delta",
                r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":9}}"#,
            ),
            ("message_stop", r#"{"type":"message_stop"}"#),
        ]);
        assert!(steps.contains(&Step::Thinking("Hmm.".to_owned())));
        let content = message.expect("complete").content;
        assert_eq!(
            content[0],
            json!({"type":"thinking","thinking":"Hmm.","signature":"sig=="})
        );
        assert_eq!(
            content[1],
            json!({"type":"redacted_thinking","data":"opaque"})
        );
        assert_eq!(
            content[2],
            json!({"type":"tool_use","id":"t","name":"n","input":{}})
        );
    }

    #[test]
    fn a_missing_message_stop_is_a_cut_stream() {
        let (_, message) = run(&TOOL_TURN[..6]);
        assert_eq!(message.expect_err("cut").class(), ErrorClass::StreamCut);
    }

    #[test]
    fn an_error_event_is_classified() {
        let mut events = TOOL_TURN[..4].to_vec();
        events.push((
            "error",
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
        ));
        let (_, message) = run(&events);
        assert_eq!(message.expect_err("error").class(), ErrorClass::Overloaded);
    }

    #[test]
    fn broken_tool_json_is_bad_output() {
        let mut events = TOOL_TURN[..6].to_vec();
        events.push(("content_block_delta", r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"pa"}}"#));
        events.push((
            "content_block_stop",
            r#"{"type":"content_block_stop","index":1}"#,
        ));
        let (_, message) = run(&events);
        assert_eq!(
            message.expect_err("bad json").class(),
            ErrorClass::BadOutput
        );
    }
}
