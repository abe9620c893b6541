//! One assistant message assembled from Chat Completions chunks: content and reasoning
//! pieces, tool-call fragments reassembled by index (a new `id` at an index already in use
//! starts a new call, as Ollama reuses index 0), the finish reason, and usage from the
//! usage chunk. The stream is complete only at `data: [DONE]`.

use serde_json::{Value, json};

use super::ADAPTER;
use crate::providers::chat::ToolCall;
use crate::providers::http::{ApiKey, ErrorBody, from_stream_error};
use crate::providers::{ProviderError, Usage};

/// What a chunk means for the caller.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Step {
    /// The first chunk, with the model the server used.
    Started(Option<String>),
    /// A piece of the answer.
    Text(String),
    /// A piece of reasoning (`reasoning_content` or `reasoning`).
    Thinking(String),
    /// A chunk's usage (the final usage chunk, or any chunk of a server that reports
    /// usage as it streams), for the budget to see.
    Usage(Usage),
    /// `[DONE]`.
    Done,
}

/// A tool call being received.
#[derive(Debug, Default)]
struct PartialCall {
    index: u64,
    id: String,
    name: String,
    arguments: String,
}

/// The message being received.
#[derive(Debug, Default)]
pub(super) struct ChunkAccumulator {
    started: bool,
    text: String,
    calls: Vec<PartialCall>,
    finish_reason: Option<String>,
    usage: Option<Usage>,
    done: bool,
}

/// A received message.
#[derive(Debug, PartialEq)]
pub(super) struct Message {
    /// The answer text.
    pub(super) text: String,
    /// Tool calls, in order.
    pub(super) tool_calls: Vec<ToolCall>,
    /// The assistant message as it must be sent back.
    pub(super) assistant: Value,
    /// `finish_reason`.
    pub(super) finish_reason: Option<String>,
    /// Tokens of this message (zero when the server sent no usage).
    pub(super) usage: Usage,
}

impl ChunkAccumulator {
    /// Applies one `data:` payload.
    pub(super) fn apply(
        &mut self,
        data: &str,
        key: Option<&ApiKey>,
    ) -> Result<Vec<Step>, ProviderError> {
        let data = data.trim();
        if data == "[DONE]" {
            self.done = true;
            return Ok(vec![Step::Done]);
        }
        if data.is_empty() {
            return Ok(Vec::new());
        }
        let chunk: Value = serde_json::from_str(data)
            .map_err(|error| bad(format!("a chunk holds invalid JSON: {error}")))?;
        if let Some(error) = chunk.get("error").filter(|error| !error.is_null()) {
            let code = error.get("code").and_then(|code| {
                code.as_u64()
                    .or_else(|| code.as_str().and_then(|c| c.parse().ok()))
            });
            let body = ErrorBody::parse(data);
            return Err(from_stream_error(
                ADAPTER,
                &body,
                code.and_then(|c| u16::try_from(c).ok()),
                key,
            ));
        }
        let mut steps = Vec::new();
        if !self.started {
            self.started = true;
            let model = chunk
                .get("model")
                .and_then(Value::as_str)
                .map(str::to_owned);
            steps.push(Step::Started(model));
        }
        if let Some(usage) = chunk.get("usage").filter(|usage| usage.is_object()) {
            let usage = read_usage(usage);
            self.usage = Some(usage);
            steps.push(Step::Usage(usage));
        }
        let choices = chunk
            .get("choices")
            .and_then(Value::as_array)
            .map(Vec::as_slice);
        for choice in choices.unwrap_or_default() {
            if choice.get("index").and_then(Value::as_u64).unwrap_or(0) != 0 {
                continue;
            }
            if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
                self.finish_reason = Some(reason.to_owned());
            }
            let Some(delta) = choice.get("delta") else {
                continue;
            };
            for field in ["reasoning_content", "reasoning"] {
                if let Some(piece) = delta
                    .get(field)
                    .and_then(Value::as_str)
                    .filter(|p| !p.is_empty())
                {
                    steps.push(Step::Thinking(piece.to_owned()));
                }
            }
            if let Some(piece) = delta
                .get("content")
                .and_then(Value::as_str)
                .filter(|p| !p.is_empty())
            {
                self.text.push_str(piece);
                steps.push(Step::Text(piece.to_owned()));
            }
            let fragments = delta
                .get("tool_calls")
                .and_then(Value::as_array)
                .map(Vec::as_slice);
            for (position, fragment) in fragments.unwrap_or_default().iter().enumerate() {
                self.apply_tool_fragment(position as u64, fragment);
            }
        }
        Ok(steps)
    }

    fn apply_tool_fragment(&mut self, position: u64, fragment: &Value) {
        let index = fragment
            .get("index")
            .and_then(Value::as_u64)
            .unwrap_or(position);
        let id = fragment
            .get("id")
            .and_then(Value::as_str)
            .filter(|id| !id.is_empty());
        let function = fragment.get("function");
        let name = function.and_then(|f| f.get("name")).and_then(Value::as_str);
        let arguments = function
            .and_then(|f| f.get("arguments"))
            .and_then(|arguments| {
                // Some servers send the arguments as an object rather than a JSON string.
                arguments
                    .as_str()
                    .map(str::to_owned)
                    .or_else(|| (!arguments.is_null()).then(|| arguments.to_string()))
            });
        let current = self.calls.iter().rposition(|call| call.index == index);
        let starts_new = match (current, id) {
            (None, _) => true,
            (Some(at), Some(id)) => !self.calls[at].id.is_empty() && self.calls[at].id != id,
            (Some(_), None) => false,
        };
        if starts_new {
            self.calls.push(PartialCall {
                index,
                ..PartialCall::default()
            });
        }
        let call = self
            .calls
            .iter_mut()
            .rev()
            .find(|call| call.index == index)
            .expect("a call for this index was just ensured");
        if let Some(id) = id {
            call.id = id.to_owned();
        }
        if let Some(name) = name.filter(|name| !name.is_empty()) {
            // Names normally come whole in the first fragment; a server repeating the name
            // must not double it, one streaming it in pieces gets them joined.
            if call.name != name {
                call.name.push_str(name);
            }
        }
        if let Some(arguments) = arguments {
            call.arguments.push_str(&arguments);
        }
    }

    /// The finished message; a stream that ended before `[DONE]` was cut.
    pub(super) fn finish(self) -> Result<Message, ProviderError> {
        if !self.done {
            return Err(ProviderError::stream_cut(
                ADAPTER,
                "the event stream ended before `data: [DONE]`".to_owned(),
            ));
        }
        let mut tool_calls = Vec::with_capacity(self.calls.len());
        let mut wire_calls = Vec::with_capacity(self.calls.len());
        for (number, call) in self.calls.into_iter().enumerate() {
            if call.name.is_empty() {
                return Err(bad(format!("tool call {number} has no function name")));
            }
            let id = if call.id.is_empty() {
                format!("call_{number}")
            } else {
                call.id
            };
            let arguments = if call.arguments.trim().is_empty() {
                "{}".to_owned()
            } else {
                call.arguments
            };
            let input: Value = serde_json::from_str(&arguments).map_err(|error| {
                bad(format!(
                    "arguments of tool call `{}` are not valid JSON: {error}",
                    call.name
                ))
            })?;
            wire_calls.push(json!({
                "id": id,
                "type": "function",
                "function": {"name": call.name, "arguments": arguments},
            }));
            tool_calls.push(ToolCall {
                id,
                name: call.name,
                input,
            });
        }
        let mut assistant = json!({
            "role": "assistant",
            "content": if self.text.is_empty() && !wire_calls.is_empty() { Value::Null } else { json!(self.text) },
        });
        if !wire_calls.is_empty() {
            assistant["tool_calls"] = Value::Array(wire_calls);
        }
        Ok(Message {
            text: self.text,
            tool_calls,
            assistant,
            finish_reason: self.finish_reason,
            usage: self.usage.unwrap_or_default(),
        })
    }
}

/// `prompt_tokens` counts cached tokens too; ours are split into fresh and cached.
fn read_usage(usage: &Value) -> Usage {
    let count = |pointer: &str| usage.pointer(pointer).and_then(Value::as_u64).unwrap_or(0);
    let cached = count("/prompt_tokens_details/cached_tokens");
    Usage {
        input_tokens: count("/prompt_tokens").saturating_sub(cached),
        output_tokens: count("/completion_tokens"),
        cache_read_tokens: cached,
        cache_write_tokens: 0,
    }
}

fn bad(message: String) -> ProviderError {
    ProviderError::bad_output(ADAPTER, message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::ErrorClass;

    /// The tool-call transcript of protocols.md §5.
    const TOOL_TURN: &[&str] = &[
        r#"{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1763800000,"model":"qwen3","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}],"usage":null}"#,
        r#"{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1763800000,"model":"qwen3","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":""}}]},"finish_reason":null}],"usage":null}"#,
        r#"{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1763800000,"model":"qwen3","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\": \"Pa"}}]},"finish_reason":null}],"usage":null}"#,
        r#"{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1763800000,"model":"qwen3","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"ris\"}"}}]},"finish_reason":null}],"usage":null}"#,
        r#"{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1763800000,"model":"qwen3","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}],"usage":null}"#,
        r#"{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1763800000,"model":"qwen3","choices":[],"usage":{"prompt_tokens":96,"completion_tokens":21,"total_tokens":117,"prompt_tokens_details":{"cached_tokens":64}}}"#,
        "[DONE]",
    ];

    fn run(chunks: &[&str]) -> (Vec<Step>, Result<Message, ProviderError>) {
        let mut accumulator = ChunkAccumulator::default();
        let mut steps = Vec::new();
        for chunk in chunks {
            match accumulator.apply(chunk, None) {
                Ok(more) => steps.extend(more),
                Err(error) => return (steps, Err(error)),
            }
        }
        (steps, accumulator.finish())
    }

    #[test]
    fn reassembles_tool_calls() {
        let (steps, message) = run(TOOL_TURN);
        assert_eq!(
            steps.first(),
            Some(&Step::Started(Some("qwen3".to_owned())))
        );
        let message = message.expect("complete");
        assert_eq!(
            message.tool_calls,
            vec![ToolCall {
                id: "call_1".to_owned(),
                name: "get_weather".to_owned(),
                input: json!({"city": "Paris"})
            }]
        );
        assert_eq!(
            message.assistant,
            json!({"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function",
                   "function":{"name":"get_weather","arguments":"{\"city\": \"Paris\"}"}}]})
        );
        assert_eq!(message.finish_reason.as_deref(), Some("tool_calls"));
        assert_eq!(
            message.usage,
            Usage {
                input_tokens: 32,
                output_tokens: 21,
                cache_read_tokens: 64,
                cache_write_tokens: 0
            }
        );
    }

    #[test]
    fn ollama_reuses_index_zero_for_parallel_calls() {
        let (_, message) = run(&[
            r#"{"model":"llama","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"{\"x\":1}"}}]}}]}"#,
            r#"{"model":"llama","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"b","function":{"name":"g","arguments":{"y":2}}}]},"finish_reason":"stop"}]}"#,
            "[DONE]",
        ]);
        let calls = message.expect("complete").tool_calls;
        assert_eq!(calls.len(), 2);
        assert_eq!(
            (calls[0].name.as_str(), &calls[0].input),
            ("f", &json!({"x": 1}))
        );
        assert_eq!(
            (calls[1].name.as_str(), &calls[1].input),
            ("g", &json!({"y": 2}))
        );
    }

    #[test]
    fn text_and_reasoning() {
        let (steps, message) = run(&[
            r#"{"model":"m","choices":[{"index":0,"delta":{"reasoning_content":"think"}}]}"#,
            r#"{"model":"m","choices":[{"index":0,"delta":{"reasoning":"more"}}]}"#,
            r#"{"model":"m","choices":[{"index":0,"delta":{"content":"It is "}}]}"#,
            r#"{"model":"m","choices":[{"index":0,"delta":{"content":"18°C."},"finish_reason":"stop"}]}"#,
            "[DONE]",
        ]);
        assert!(steps.contains(&Step::Thinking("think".to_owned())));
        assert!(steps.contains(&Step::Thinking("more".to_owned())));
        let message = message.expect("complete");
        assert_eq!(message.text, "It is 18°C.");
        assert_eq!(
            message.assistant,
            json!({"role":"assistant","content":"It is 18°C."})
        );
        assert_eq!(message.usage, Usage::default());
    }

    #[test]
    fn failures() {
        let (_, cut) = run(&TOOL_TURN[..3]);
        assert_eq!(cut.expect_err("cut").class(), ErrorClass::StreamCut);
        let (_, died) = run(&[
            TOOL_TURN[0],
            r#"{"error":{"message":"engine died","type":"InternalServerError","code":500}}"#,
        ]);
        let died = died.expect_err("error chunk");
        assert_eq!(died.class(), ErrorClass::ServerError);
        assert!(died.to_string().contains("engine died"), "{died}");
        let (_, broken) = run(&[
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"{"}}]}}]}"#,
            "[DONE]",
        ]);
        assert_eq!(broken.expect_err("bad json").class(), ErrorClass::BadOutput);
    }
}
