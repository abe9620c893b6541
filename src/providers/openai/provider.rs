//! The `openai` provider: any OpenAI-compatible Chat Completions server, streamed, with a
//! tool-use loop over the custom tools the agent is granted.

use crate::providers::chat::call::{self, LoopParts, Prepared};
use reqwest::header::{AUTHORIZATION, HeaderMap};
use serde_json::{Map, Value, json};

use super::ADAPTER;
use super::config::{CallSettings, OpenAiConfig};
use super::stream::{ChunkAccumulator, Step};
use crate::ir::ProviderDecl;
use crate::providers::chat::{
    Conversation, Next, Session, ToolCall, ToolOutcome, ToolSet, Turn, messages,
};
use crate::providers::http::{StreamPost, build_client, endpoint};
use crate::providers::{
    AgentEvent, AgentReply, AgentRequest, EventSink, Provider, ProviderError, ProviderFuture,
    ToolEnv,
};

/// Talks to an OpenAI-compatible server (OpenAI, vLLM, llama.cpp, Ollama, gateways).
/// Shared by every node using the provider; holds one connection pool.
#[derive(Debug)]
pub struct OpenAiProvider {
    config: OpenAiConfig,
    client: reqwest::Client,
    url: reqwest::Url,
    tool_env: ToolEnv,
}

impl OpenAiProvider {
    /// A provider for `config`. Its options are checked now, so a misspelt option fails
    /// before any node runs.
    pub fn new(config: OpenAiConfig) -> Result<Self, ProviderError> {
        let settings = CallSettings::read(&config.options, &Map::new())?;
        let client = build_client(ADAPTER, settings.connect_timeout)?;
        let url = endpoint(&config.base_url, "/v1/chat/completions");
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

    /// A provider for a `provider … adapter="openai"` declaration; `env` looks up
    /// environment variables (the key's, when `api-key-env` names one).
    pub fn from_decl(
        decl: &ProviderDecl,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Self, ProviderError> {
        Self::new(OpenAiConfig::from_decl(decl, env)?)
    }

    async fn call(
        &self,
        request: &AgentRequest,
        events: &dyn EventSink,
    ) -> Result<AgentReply, ProviderError> {
        let Prepared { model, tools } = call::prepare(
            ADAPTER,
            "Chat Completions",
            request,
            self.config.model.as_deref(),
            (&self.tool_env, self.config.api_key_env.as_deref()),
        )
        .await?;
        let settings = CallSettings::read(&self.config.options, &request.options)?;
        let mut headers = HeaderMap::new();
        if let Some(key) = &self.config.api_key {
            headers.insert(AUTHORIZATION, key.header_value(ADAPTER, "Bearer ")?);
        }
        let mut conversation = OpenAiConversation {
            provider: self,
            headers,
            body: request_body(&model, request, &tools, &settings),
            model,
            settings: settings.clone(),
        };
        let parts = LoopParts {
            tool_timeout: settings.tool_timeout,
            pricing: settings.pricing,
            retry: settings.retry,
            hide_env: self.config.api_key_env.as_deref(),
            tool_env: &self.tool_env,
        };
        call::run(ADAPTER, &mut conversation, request, &tools, parts, events).await
    }
}

impl Provider for OpenAiProvider {
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
    let mut messages = Vec::new();
    if let Some(system) = request.prompt.system.as_deref().filter(|s| !s.is_empty()) {
        messages.push(json!({"role": "system", "content": system}));
    }
    messages.push(json!({"role": "user", "content": request.prompt.text}));
    let mut body = json!({"model": model, "stream": true, "messages": messages});
    let fields = body.as_object_mut().expect("the body is an object");
    if settings.stream_usage {
        fields.insert("stream_options".to_owned(), json!({"include_usage": true}));
    }
    if !tools.is_empty() {
        let specs: Vec<Value> = tools
            .iter()
            .map(|tool| {
                json!({"type": "function", "function": {
                    "name": tool.name,
                    "description": tool.description,
                    "parameters": tool.input_schema,
                }})
            })
            .collect();
        fields.insert("tools".to_owned(), Value::Array(specs));
    }
    let optional = [
        ("max_tokens", settings.max_tokens.map(Value::from)),
        (
            "max_completion_tokens",
            settings.max_completion_tokens.map(Value::from),
        ),
        ("temperature", settings.temperature.map(Value::from)),
        ("top_p", settings.top_p.map(Value::from)),
        ("seed", settings.seed.map(Value::from)),
        (
            "stop",
            (!settings.stop.is_empty()).then(|| json!(settings.stop)),
        ),
        (
            "reasoning_effort",
            settings.reasoning_effort.clone().map(Value::from),
        ),
        (
            "parallel_tool_calls",
            settings.parallel_tool_calls.map(Value::from),
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
struct OpenAiConversation<'p> {
    provider: &'p OpenAiProvider,
    headers: HeaderMap,
    body: Value,
    model: String,
    settings: CallSettings,
}

impl OpenAiConversation<'_> {
    fn push_message(&mut self, message: Value) {
        messages(&mut self.body).push(message);
    }
}

impl Conversation for OpenAiConversation<'_> {
    async fn turn(&mut self, session: &mut Session<'_>) -> Result<Turn, ProviderError> {
        let key = self.provider.config.api_key.as_ref();
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
        let mut accumulator = ChunkAccumulator::default();
        'stream: while let Some(event) = reader.next().await? {
            for step in accumulator.apply(&event.data, key)? {
                match step {
                    Step::Started(model) => {
                        session.start(Some(model.as_deref().unwrap_or(&self.model)));
                    }
                    Step::Text(text) => session.emit(AgentEvent::TextDelta { text }),
                    Step::Thinking(text) => session.emit(AgentEvent::ThinkingDelta { text }),
                    Step::Usage(usage) => session.streamed_usage(usage),
                    Step::Done => break 'stream,
                }
            }
        }
        let message = accumulator.finish()?;
        // Tool calls are trusted over a `finish_reason` of "stop" (some servers send it).
        let next = if message.tool_calls.is_empty() {
            Next::Done
        } else {
            Next::Tools
        };
        self.push_message(message.assistant);
        Ok(Turn {
            text: message.text,
            tool_calls: message.tool_calls,
            usage: message.usage,
            next,
        })
    }

    fn messages(&mut self) -> &mut Vec<Value> {
        messages(&mut self.body)
    }

    fn push_tool_results(&mut self, results: &[(ToolCall, ToolOutcome)]) {
        for (call, outcome) in results {
            self.push_message(json!({
                "role": "tool",
                "tool_call_id": call.id,
                "content": outcome.content,
            }));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::{Grants, Prompt};

    #[test]
    fn body_carries_system_tools_and_options() {
        let request = AgentRequest {
            prompt: Prompt {
                text: "Weather in Paris?".to_owned(),
                system: Some("You are terse.".to_owned()),
            },
            grants: Grants {
                tools: vec![crate::providers::ToolGrant {
                    name: "get_weather".to_owned(),
                    timeout: None,
                    description: Some("Looks up weather".to_owned()),
                    input_schema: None,
                    command: vec!["weather".to_owned()],
                }],
                ..Grants::default()
            },
            ..AgentRequest::default()
        };
        let options = json!({"max-tokens": 1024, "temperature": 0.2, "seed": 7});
        let settings =
            CallSettings::read(options.as_object().expect("object"), &Map::new()).expect("valid");
        let tools = ToolSet::from_grants(ADAPTER, &request.grants.tools).expect("valid");
        assert_eq!(
            request_body("qwen3", &request, &tools, &settings),
            json!({
                "model": "qwen3",
                "stream": true,
                "stream_options": {"include_usage": true},
                "messages": [{"role": "system", "content": "You are terse."},
                             {"role": "user", "content": "Weather in Paris?"}],
                "tools": [{"type": "function", "function": {"name": "get_weather",
                    "description": "Looks up weather", "parameters": {"type": "object", "properties": {}}}}],
                "max_tokens": 1024,
                "temperature": 0.2,
                "seed": 7,
            })
        );
    }
}
