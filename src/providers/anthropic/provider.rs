//! The `anthropic` provider: the Messages API, streamed, with a tool-use loop over the
//! custom tools the agent is granted.

use crate::providers::chat::call::{self, LoopParts, Prepared};
use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderName, HeaderValue};
use serde_json::{Map, Value, json};

use super::ADAPTER;
use super::config::{AnthropicConfig, CallSettings};
use super::stream::{MessageBuilder, Step};
use crate::ir::ProviderDecl;
use crate::providers::chat::{
    Conversation, Next, Session, ToolCall, ToolOutcome, ToolSet, Turn, messages,
};
use crate::providers::http::{StreamPost, build_client, endpoint};
use crate::providers::{
    AgentEvent, AgentReply, AgentRequest, EventSink, Provider, ProviderError, ProviderFuture,
    ToolEnv,
};

/// The `anthropic-version` header value the wire format follows.
const API_VERSION: &str = "2023-06-01";

/// Talks to the Anthropic Messages API (or anything speaking it). Shared by every node
/// using the provider; holds one connection pool.
#[derive(Debug)]
pub struct AnthropicProvider {
    config: AnthropicConfig,
    client: reqwest::Client,
    url: reqwest::Url,
    tool_env: ToolEnv,
}

impl AnthropicProvider {
    /// A provider for `config`. Its options are checked now, so a misspelt option fails
    /// before any node runs.
    pub fn new(config: AnthropicConfig) -> Result<Self, ProviderError> {
        let settings = CallSettings::read(&config.options, &Map::new())?;
        let client = build_client(ADAPTER, settings.connect_timeout)?;
        let url = endpoint(&config.base_url, "/v1/messages");
        Ok(Self {
            config,
            client,
            url,
            tool_env: ToolEnv::default(),
        })
    }

    /// Runs custom tools with `tool_env` (without it they get an empty environment).
    #[must_use]
    pub fn with_tool_env(mut self, tool_env: ToolEnv) -> Self {
        self.tool_env = tool_env;
        self
    }

    /// A provider for a `provider … adapter="anthropic"` declaration; `env` looks up
    /// environment variables (the key's).
    pub fn from_decl(
        decl: &ProviderDecl,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Self, ProviderError> {
        Self::new(AnthropicConfig::from_decl(decl, env)?)
    }

    async fn call(
        &self,
        request: &AgentRequest,
        events: &dyn EventSink,
    ) -> Result<AgentReply, ProviderError> {
        let Prepared { model, tools } = call::prepare(
            ADAPTER,
            "the Messages API",
            request,
            self.config.model.as_deref(),
            (&self.tool_env, Some(&self.config.api_key_env)),
        )
        .await?;
        let settings = CallSettings::read(&self.config.options, &request.options)?;
        let mut conversation = AnthropicConversation {
            provider: self,
            headers: self.headers(&settings)?,
            body: request_body(&model, request, &tools, &settings),
            model,
            settings: settings.clone(),
        };
        let parts = LoopParts {
            tool_timeout: settings.tool_timeout,
            pricing: settings.pricing,
            retry: settings.retry,
            hide_env: Some(&self.config.api_key_env),
            tool_env: &self.tool_env,
        };
        call::run(ADAPTER, &mut conversation, request, &tools, parts, events).await
    }

    fn headers(&self, settings: &CallSettings) -> Result<HeaderMap, ProviderError> {
        let mut headers = HeaderMap::new();
        let key = &self.config.api_key;
        if settings.bearer {
            headers.insert(AUTHORIZATION, key.header_value(ADAPTER, "Bearer ")?);
        } else {
            headers.insert(
                HeaderName::from_static("x-api-key"),
                key.header_value(ADAPTER, "")?,
            );
        }
        headers.insert(
            HeaderName::from_static("anthropic-version"),
            HeaderValue::from_static(API_VERSION),
        );
        if !settings.beta.is_empty() {
            let beta = HeaderValue::from_str(&settings.beta.join(",")).map_err(|_| {
                ProviderError::config(
                    ADAPTER,
                    "option `beta` holds characters not allowed in a header".to_owned(),
                )
            })?;
            headers.insert(HeaderName::from_static("anthropic-beta"), beta);
        }
        Ok(headers)
    }
}

impl Provider for AnthropicProvider {
    fn adapter(&self) -> &'static str {
        ADAPTER
    }

    fn run<'a>(
        &'a self,
        request: &'a AgentRequest,
        events: &'a dyn EventSink,
    ) -> ProviderFuture<'a> {
        Box::pin(self.call(request, events))
    }
}

/// The first request's body: everything but the growing `messages`.
fn request_body(
    model: &str,
    request: &AgentRequest,
    tools: &ToolSet,
    settings: &CallSettings,
) -> Value {
    let mut body = json!({
        "model": model,
        "max_tokens": settings.max_tokens,
        "stream": true,
        "messages": [{"role": "user", "content": request.prompt.text}],
    });
    let fields = body.as_object_mut().expect("the body is an object");
    if let Some(system) = request.prompt.system.as_deref().filter(|s| !s.is_empty()) {
        fields.insert("system".to_owned(), json!(system));
    }
    if !tools.is_empty() {
        let specs: Vec<Value> = tools
            .iter()
            .map(|tool| {
                json!({
                    "name": tool.name,
                    "description": tool.description,
                    "input_schema": tool.input_schema,
                })
            })
            .collect();
        fields.insert("tools".to_owned(), Value::Array(specs));
    }
    let optional = [
        ("temperature", settings.temperature.map(Value::from)),
        ("top_p", settings.top_p.map(Value::from)),
        ("top_k", settings.top_k.map(Value::from)),
        (
            "stop_sequences",
            (!settings.stop.is_empty()).then(|| json!(settings.stop)),
        ),
        (
            "thinking",
            settings
                .thinking_budget
                .map(|budget| json!({"type": "enabled", "budget_tokens": budget})),
        ),
    ];
    for (name, value) in optional {
        if let Some(value) = value {
            fields.insert(name.to_owned(), value);
        }
    }
    body
}

/// One call's history, kept in the request body itself.
struct AnthropicConversation<'p> {
    provider: &'p AnthropicProvider,
    headers: HeaderMap,
    body: Value,
    model: String,
    settings: CallSettings,
}

impl AnthropicConversation<'_> {
    fn push_message(&mut self, message: Value) {
        messages(&mut self.body).push(message);
    }
}

impl Conversation for AnthropicConversation<'_> {
    async fn turn(&mut self, session: &mut Session<'_>) -> Result<Turn, ProviderError> {
        let key = Some(&self.provider.config.api_key);
        let mut reader = StreamPost {
            adapter: ADAPTER,
            url: &self.provider.url,
            headers: self.headers.clone(),
            body: &self.body,
            idle: self.settings.idle_timeout,
            key,
        }
        .send(&self.provider.client)
        .await?;
        let mut builder = MessageBuilder::default();
        while let Some(event) = reader.next().await? {
            match builder.apply(&event.event, &event.data, key)? {
                Step::Started(model) => {
                    session.start(Some(model.as_deref().unwrap_or(&self.model)));
                    session.streamed_usage(builder.usage());
                }
                Step::Usage(usage) => session.streamed_usage(usage),
                Step::Text(text) if !text.is_empty() => {
                    session.emit(AgentEvent::TextDelta { text });
                }
                Step::Thinking(text) if !text.is_empty() => {
                    session.emit(AgentEvent::ThinkingDelta { text });
                }
                Step::Stopped => break,
                Step::Text(_) | Step::Thinking(_) | Step::Quiet => {}
            }
        }
        let message = builder.finish()?;
        let text: String = message
            .content
            .iter()
            .filter(|block| block.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|block| block.get("text").and_then(Value::as_str))
            .collect();
        let tool_calls: Vec<ToolCall> = message
            .content
            .iter()
            .filter(|block| block.get("type").and_then(Value::as_str) == Some("tool_use"))
            .map(|block| ToolCall {
                id: block
                    .get("id")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                name: block
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                input: block.get("input").cloned().unwrap_or_else(|| json!({})),
            })
            .collect();
        let next = match message.stop_reason.as_deref() {
            Some("tool_use") => Next::Tools,
            Some("pause_turn") => Next::Continue,
            Some("refusal") => {
                return Err(ProviderError::rejected(
                    ADAPTER,
                    200,
                    "the model refused to answer (stop reason `refusal`)".to_owned(),
                ));
            }
            _ => Next::Done,
        };
        if !message.content.is_empty() {
            self.push_message(json!({"role": "assistant", "content": message.content}));
        }
        Ok(Turn {
            text,
            tool_calls,
            usage: message.usage,
            next,
        })
    }

    fn messages(&mut self) -> &mut Vec<Value> {
        messages(&mut self.body)
    }

    fn push_tool_results(&mut self, results: &[(ToolCall, ToolOutcome)]) {
        let blocks: Vec<Value> = results
            .iter()
            .map(|(call, outcome)| {
                let content = if outcome.content.is_empty() {
                    "(no output)"
                } else {
                    &outcome.content
                };
                let mut block = json!({
                    "type": "tool_result",
                    "tool_use_id": call.id,
                    "content": content,
                });
                if outcome.is_error {
                    block["is_error"] = Value::Bool(true);
                }
                block
            })
            .collect();
        self.push_message(json!({"role": "user", "content": blocks}));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::ToolGrant;
    use crate::providers::{Grants, Prompt};

    #[test]
    fn body_carries_system_tools_and_options() {
        let request = AgentRequest {
            prompt: Prompt {
                text: "Fix it".to_owned(),
                system: Some("Be brief.".to_owned()),
            },
            grants: Grants {
                tools: vec![ToolGrant {
                    name: "edit".to_owned(),
                    timeout: None,
                    description: Some("Edits a file".to_owned()),
                    input_schema: Some(
                        json!({"type":"object","properties":{"path":{"type":"string"}}}),
                    ),
                    command: vec!["./edit.sh".to_owned()],
                }],
                ..Grants::default()
            },
            ..AgentRequest::default()
        };
        let options = json!({"temperature": 0.2, "stop": "END", "thinking-budget": 1024});
        let settings =
            CallSettings::read(options.as_object().expect("object"), &Map::new()).expect("valid");
        let tools = ToolSet::from_grants(ADAPTER, &request.grants.tools).expect("valid");
        let body = request_body("claude-x", &request, &tools, &settings);
        assert_eq!(
            body,
            json!({
                "model": "claude-x",
                "max_tokens": 8192,
                "stream": true,
                "messages": [{"role": "user", "content": "Fix it"}],
                "system": "Be brief.",
                "tools": [{"name": "edit", "description": "Edits a file",
                           "input_schema": {"type":"object","properties":{"path":{"type":"string"}}}}],
                "temperature": 0.2,
                "stop_sequences": ["END"],
                "thinking": {"type": "enabled", "budget_tokens": 1024},
            })
        );
    }
}
