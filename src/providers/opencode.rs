//! `adapter="opencode"`: an `opencode serve` server over HTTP and its SSE event stream
//! (protocols.md §3).
//!
//! Without `base-url=` atomic starts `opencode serve --hostname 127.0.0.1 --port <free>` on the
//! first call (with a random server password) and kills its process group when the provider
//! is dropped; with `base-url=` it talks to a running server. One call: create a session (or
//! continue `resume_session`, summarised first when the request asks to `compact`) with
//! permission rules from the node's permission mode and granted tools, subscribe to
//! `GET /event`, `POST …/prompt_async`, map the session's events onto [`AgentEvent`]s,
//! answer `permission.asked` per the permission mode, and end on `session.status` idle; the
//! reply text is read back from the turn's last assistant message.
//! The context-window fraction is the last model call's prompt tokens over the model's
//! `limit.context` from `GET /config/providers` (fetched once per project directory).
//! Dropping the call posts `…/abort`.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;
use tokio::sync::OnceCell;

use super::binary::find_binary;
use super::env::{ChildEnv, Environment, api_key, redact};
use super::http::{SseReader, build_client, classify};
use super::process::ProcessGroup;
use super::{
    AgentEvent, AgentReply, AgentRequest, EventSink, Provider, ProviderError, ProviderFuture, Usage,
};
use crate::ir::{PermissionMode, ProviderDecl};

const NAME: &str = "opencode";

/// Default wait for a started server to say it is listening.
const STARTUP_LIMIT: Duration = Duration::from_secs(60);

/// Limit on the plain (non-streaming) API calls.
const REQUEST_LIMIT: Duration = Duration::from_secs(60);

/// The longest the event stream may stay silent (the node's timeout bounds the turn).
const EVENT_SILENCE_LIMIT: Duration = Duration::from_secs(30 * 60);

/// How long summarising a session (a model call) may take.
const SUMMARIZE_LIMIT: Duration = Duration::from_secs(600);

/// The OpenCode server adapter.
#[derive(Debug)]
pub struct OpenCode {
    launch: Launch,
    server: OnceCell<Server>,
    client: reqwest::Client,
    model: Option<String>,
    /// The key from `api-key-env=`, scrubbed from error messages.
    secret: Option<String>,
    /// Context-window sizes by project directory (the project's config may add models).
    context_limits: Mutex<HashMap<PathBuf, ContextLimits>>,
}

/// `limit.context` by `provider/model`, as `GET /config/providers` reports them.
type ContextLimits = HashMap<String, u64>;

/// Where the server comes from.
#[derive(Debug)]
enum Launch {
    /// atomic starts one.
    Spawn {
        bin: PathBuf,
        env: ChildEnv,
        startup: Duration,
    },
    /// A running server.
    Connect {
        base: String,
        password: Option<String>,
    },
}

/// A server ready for calls.
#[derive(Debug)]
struct Server {
    base: String,
    password: Option<String>,
    /// The process atomic started (killed with the provider).
    _process: Option<ProcessGroup>,
    /// Drains its stdout so it never blocks on a full pipe.
    _drain: Option<AbortOnDrop>,
}

#[derive(Debug)]
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl OpenCode {
    /// Configures the adapter from its `provider` block.
    ///
    /// `model=` is `provider/model` as OpenCode spells it. Started servers get
    /// `option "config" "<json>"` as `OPENCODE_CONFIG_CONTENT`, the `OPENCODE_*` variables
    /// of the environment, `pass-env`/`env.NAME` options, and the variable named by
    /// `api-key-env=` under its own name (reference it in the config as `{env:NAME}`). With
    /// `base-url=`, `api-key-env=` names the variable holding that server's password.
    /// Option `startup-timeout` (seconds) bounds the server start.
    ///
    /// # Errors
    /// [`ProviderError::Config`]: the CLI is not installed, a named variable is unset, or an
    /// option has the wrong type.
    pub fn new(decl: &ProviderDecl, env: &Environment) -> Result<Self, ProviderError> {
        let key_env = decl.api_key_env.as_ref().map(|name| name.value.as_str());
        let key = api_key(NAME, env, key_env)?;
        let secret = key.clone();
        let launch = if let Some(base) = &decl.base_url {
            Launch::Connect {
                base: base.value.trim_end_matches('/').to_owned(),
                password: key,
            }
        } else {
            let bin = find_binary(NAME, "opencode", "opencode-ai", &decl.options, env)?;
            let mut child = ChildEnv::new(env, &[], &["OPENCODE_"], &["OPENCODE_SERVER_PASSWORD"]);
            child.apply_options(NAME, env, &decl.options)?;
            if let (Some(name), Some(key)) = (key_env, key) {
                child.set(name, key);
            }
            match decl.options.get("config") {
                None => {}
                Some(Value::String(config)) => {
                    child.set("OPENCODE_CONFIG_CONTENT", config.as_str())
                }
                Some(Value::Object(config)) => {
                    child.set(
                        "OPENCODE_CONFIG_CONTENT",
                        Value::Object(config.clone()).to_string(),
                    );
                }
                Some(_) => return Err(config_error("option `config` must be a JSON string")),
            }
            child.set_default("OPENCODE_DISABLE_AUTOUPDATE", "1");
            let startup = match decl.options.get("startup-timeout") {
                None => STARTUP_LIMIT,
                Some(value) => value
                    .as_f64()
                    .filter(|secs| *secs > 0.0)
                    .map(Duration::from_secs_f64)
                    .ok_or_else(|| config_error("option `startup-timeout` must be seconds"))?,
            };
            Launch::Spawn {
                bin,
                env: child,
                startup,
            }
        };
        let client = build_client(NAME, Duration::from_secs(10))?;
        Ok(Self {
            launch,
            server: OnceCell::new(),
            client,
            model: decl.model.as_ref().map(|model| model.value.clone()),
            secret,
            context_limits: Mutex::new(HashMap::new()),
        })
    }

    /// The server's base URL once it is running.
    #[must_use]
    pub fn server_url(&self) -> Option<&str> {
        self.server.get().map(|server| server.base.as_str())
    }

    /// Compacts a session's history (`POST /session/{id}/summarize`, which asks the model
    /// for a summary that replaces the history), for [`AgentRequest::compact`].
    ///
    /// # Errors
    /// The server could not be reached or refused.
    pub async fn summarize(
        &self,
        session_id: &str,
        model: Option<&str>,
        directory: &Path,
    ) -> Result<(), ProviderError> {
        let server = self.server(directory).await?;
        let (provider_id, model_id) = split_model(model.or(self.model.as_deref()))?
            .ok_or_else(|| config_error("summarizing needs a `provider/model` model"))?;
        let url = format!("{}/session/{session_id}/summarize", server.base);
        self.send(
            server,
            self.client
                .post(url)
                .json(&json!({"providerID": provider_id, "modelID": model_id})),
            directory,
            SUMMARIZE_LIMIT,
        )
        .await
        .map(drop)
    }

    async fn server(&self, directory: &Path) -> Result<&Server, ProviderError> {
        self.server
            .get_or_try_init(|| async {
                match &self.launch {
                    Launch::Connect { base, password } => Ok(Server {
                        base: base.clone(),
                        password: password.clone(),
                        _process: None,
                        _drain: None,
                    }),
                    Launch::Spawn { bin, env, startup } => {
                        start_server(bin, env, directory, *startup).await
                    }
                }
            })
            .await
    }

    /// Sends one API request; JSON answer or `Null` for an empty body.
    async fn send(
        &self,
        server: &Server,
        builder: reqwest::RequestBuilder,
        directory: &Path,
        limit: Duration,
    ) -> Result<Value, ProviderError> {
        let mut builder = builder
            .header("x-opencode-directory", directory_header(directory))
            .timeout(limit);
        if let Some(password) = &server.password {
            builder = builder.basic_auth("opencode", Some(password));
        }
        let response = builder
            .send()
            .await
            .map_err(|error| classify::from_send_error(NAME, &error, limit))?;
        let status = response.status();
        let headers = response.headers().clone();
        let body = response
            .text()
            .await
            .map_err(|error| classify::from_send_error(NAME, &error, limit))?;
        if !status.is_success() {
            return Err(classify::from_status(
                NAME,
                status.as_u16(),
                &headers,
                &body,
                None,
            ));
        }
        Ok(serde_json::from_str(&body).unwrap_or(Value::Null))
    }

    async fn call(
        &self,
        request: &AgentRequest,
        events: &dyn EventSink,
    ) -> Result<AgentReply, ProviderError> {
        let directory = std::path::absolute(&request.working_dir)
            .map_err(|error| config_error(&format!("bad working directory: {error}")))?;
        if let Some(custom) = request.tools.iter().find(|tool| !tool.command.is_empty()) {
            return Err(config_error(&format!(
                "custom tool `{}` cannot be given to OpenCode; grant its built-in tools by name",
                custom.name
            )));
        }
        let model = request.model.as_deref().or(self.model.as_deref());
        let model = split_model(model)?;
        let server = self.server(&directory).await?;
        let base = &server.base;

        let session_id = match &request.resume_session {
            Some(id) => id.clone(),
            None => {
                let body = json!({
                    "title": format!("atomic {}", request.node_id),
                    "permission": permission_rules(request),
                });
                let session = self
                    .send(
                        server,
                        self.client.post(format!("{base}/session")).json(&body),
                        &directory,
                        REQUEST_LIMIT,
                    )
                    .await?;
                session
                    .get("id")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
                    .ok_or_else(|| bad_output("`POST /session` returned no session id"))?
            }
        };
        events.emit(AgentEvent::SessionStart {
            session_id: Some(session_id.clone()),
            model: model
                .as_ref()
                .map(|(provider, model)| format!("{provider}/{model}")),
        });

        if request.compact && request.resume_session.is_some() {
            self.summarize(&session_id, request.model.as_deref(), &directory)
                .await?;
        }

        // Subscribe before prompting so no event of the turn is missed.
        let mut subscribe = self
            .client
            .get(format!("{base}/event"))
            .header("x-opencode-directory", directory_header(&directory));
        if let Some(password) = &server.password {
            subscribe = subscribe.basic_auth("opencode", Some(password));
        }
        let response = subscribe
            .send()
            .await
            .map_err(|error| classify::from_send_error(NAME, &error, REQUEST_LIMIT))?;
        if !response.status().is_success() {
            let status = response.status().as_u16();
            let headers = response.headers().clone();
            let body = response.text().await.unwrap_or_default();
            return Err(classify::from_status(NAME, status, &headers, &body, None));
        }
        // The stream is quiet while the model thinks or a tool runs; the node's timeout
        // bounds the turn, this only catches a server that stopped talking altogether.
        let mut stream = SseReader::new(NAME, response, EVENT_SILENCE_LIMIT);
        let connected = tokio::time::timeout(REQUEST_LIMIT, stream.next()).await;
        if !matches!(connected, Ok(Ok(Some(_)))) {
            return Err(ProviderError::stream_cut(
                NAME,
                "the event stream closed before `server.connected`",
            ));
        }

        let mut prompt = json!({"parts": [{"type": "text", "text": request.prompt}]});
        if let Some((provider_id, model_id)) = &model {
            prompt["model"] = json!({"providerID": provider_id, "modelID": model_id});
        }
        if let Some(system) = request.system.as_ref().filter(|s| !s.is_empty()) {
            prompt["system"] = json!(system);
        }
        if request.permission == Some(PermissionMode::Plan) {
            prompt["agent"] = json!("plan");
        }
        let url = format!("{base}/session/{session_id}/prompt_async");
        self.send(
            server,
            self.client.post(url).json(&prompt),
            &directory,
            REQUEST_LIMIT,
        )
        .await?;
        let mut abort = AbortGuard {
            request: Some(
                self.with_auth(
                    server,
                    self.client
                        .post(format!("{base}/session/{session_id}/abort"))
                        .header("x-opencode-directory", directory_header(&directory))
                        .timeout(Duration::from_secs(10)),
                ),
            ),
        };

        let mut turn = Turn::new(&session_id, request, model);
        while !turn.idle {
            let Some(event) = stream.next().await? else {
                return Err(ProviderError::stream_cut(
                    NAME,
                    "the event stream ended before the session went idle",
                ));
            };
            let Ok(payload) = serde_json::from_str::<Value>(&event.data) else {
                continue;
            };
            if let Some((permission_id, granted)) = turn.handle(&payload, events) {
                let reply = if granted { "once" } else { "reject" };
                let url = format!("{base}/permission/{permission_id}/reply");
                self.send(
                    server,
                    self.client.post(url).json(&json!({"reply": reply})),
                    &directory,
                    REQUEST_LIMIT,
                )
                .await?;
            }
        }
        abort.request = None;
        if let Some(error) = turn.error.take() {
            return Err(error);
        }

        let url = format!("{base}/session/{session_id}/message");
        let messages = self
            .send(server, self.client.get(url), &directory, REQUEST_LIMIT)
            .await?;
        // Only ask for the window when there is a model call to measure against it.
        let context_limit = match (turn.last_call, &turn.model) {
            (Some(_), Some(model)) => self.context_limit(server, &directory, model).await,
            _ => None,
        };
        turn.finish(&messages, context_limit, events)
    }

    /// The model's context window (`limit.context`), `None` when the server does not know it
    /// or cannot say. The limits are fetched once per directory; a failed fetch is retried on
    /// the next call rather than failing this one (the fraction is informational).
    async fn context_limit(
        &self,
        server: &Server,
        directory: &Path,
        (provider_id, model_id): &(String, String),
    ) -> Option<u64> {
        let key = format!("{provider_id}/{model_id}");
        if let Some(limits) = self.known_limits().get(directory) {
            return limits.get(&key).copied();
        }
        let url = format!("{}/config/providers", server.base);
        let answer = self
            .send(server, self.client.get(url), directory, REQUEST_LIMIT)
            .await
            .ok()?;
        let limits = context_limits(&answer);
        let limit = limits.get(&key).copied();
        self.known_limits().insert(directory.to_owned(), limits);
        limit
    }

    fn known_limits(&self) -> std::sync::MutexGuard<'_, HashMap<PathBuf, ContextLimits>> {
        // A panic while holding the lock cannot leave the map half-written: recover it.
        self.context_limits
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn with_auth(
        &self,
        server: &Server,
        builder: reqwest::RequestBuilder,
    ) -> reqwest::RequestBuilder {
        match &server.password {
            Some(password) => builder.basic_auth("opencode", Some(password)),
            None => builder,
        }
    }
}

impl Provider for OpenCode {
    fn adapter(&self) -> &'static str {
        NAME
    }

    fn can_compact(&self) -> bool {
        true
    }

    fn run<'a>(
        &'a self,
        request: &'a AgentRequest,
        events: &'a dyn EventSink,
    ) -> ProviderFuture<'a> {
        Box::pin(async move {
            self.call(request, events)
                .await
                .map_err(|error| redact(error, self.secret.as_deref()))
        })
    }
}

/// Posts `…/abort` if the call is dropped before the turn ended.
struct AbortGuard {
    request: Option<reqwest::RequestBuilder>,
}

impl Drop for AbortGuard {
    fn drop(&mut self) {
        if let Some(request) = self.request.take()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            runtime.spawn(async move {
                let _ = request.send().await;
            });
        }
    }
}

/// Starts `opencode serve` on a free loopback port and waits until it listens.
async fn start_server(
    bin: &Path,
    env: &ChildEnv,
    directory: &Path,
    startup: Duration,
) -> Result<Server, ProviderError> {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map_err(|error| ProviderError::network(NAME, format!("no free loopback port: {error}")))?
        .port();
    let password: String = {
        use rand::Rng;
        let mut rng = rand::rng();
        (0..32)
            .map(|_| format!("{:x}", rng.random_range(0..16_u8)))
            .collect()
    };
    let mut command = Command::new(bin);
    command
        .args([
            "serve",
            "--hostname",
            "127.0.0.1",
            "--port",
            &port.to_string(),
        ])
        .current_dir(directory)
        .env_clear()
        .envs(env.iter())
        .env("OPENCODE_SERVER_PASSWORD", &password);
    let mut process = ProcessGroup::spawn(NAME, command)?;
    let stdout = process
        .take_stdout()
        .ok_or_else(|| bad_output("the server has no stdout"))?;
    let mut lines = BufReader::new(stdout).lines();
    let ready = tokio::time::timeout(startup, async {
        while let Ok(Some(line)) = lines.next_line().await {
            if line.contains("opencode server listening") {
                return true;
            }
        }
        false
    })
    .await;
    match ready {
        Ok(true) => {}
        Ok(false) => {
            let status = process.wait(Duration::from_secs(5)).await.ok();
            return Err(ProviderError::process_exit(
                NAME,
                status.and_then(|status| status.code()),
                process.stderr_tail(),
            ));
        }
        Err(_) => {
            return Err(ProviderError::timeout(NAME, startup));
        }
    }
    let drain = tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    Ok(Server {
        base: format!("http://127.0.0.1:{port}"),
        password: Some(password),
        _process: Some(process),
        _drain: Some(AbortOnDrop(drain)),
    })
}

/// Session permission rules for the node's mode and granted tools (the last matching rule
/// wins in OpenCode, so the mode's denials come last).
fn permission_rules(request: &AgentRequest) -> Vec<Value> {
    let rule = |permission: &str, action: &str| json!({"permission": permission, "pattern": "*", "action": action});
    let mut rules = Vec::new();
    match request.permission {
        Some(PermissionMode::Bypass) => rules.push(rule("*", "allow")),
        Some(PermissionMode::AcceptEdits) => rules.push(rule("edit", "allow")),
        _ => {}
    }
    for tool in &request.tools {
        rules.push(rule(&tool.name.to_lowercase(), "allow"));
    }
    if request.permission == Some(PermissionMode::Plan) {
        rules.push(rule("edit", "deny"));
        rules.push(rule("bash", "deny"));
    }
    rules
}

/// The `x-opencode-directory` header: the path, non-ASCII and control bytes percent-encoded.
fn directory_header(directory: &Path) -> String {
    let text = directory.to_string_lossy();
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_graphic() || byte == b' ' {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// `provider/model` → its two halves.
fn split_model(model: Option<&str>) -> Result<Option<(String, String)>, ProviderError> {
    let Some(model) = model else {
        return Ok(None);
    };
    model
        .split_once('/')
        .filter(|(provider, model)| !provider.is_empty() && !model.is_empty())
        .map(|(provider, model)| Some((provider.to_owned(), model.to_owned())))
        .ok_or_else(|| {
            config_error(&format!(
                "model `{model}` must be written `provider/model` (e.g. `anthropic/claude-sonnet-4-5`)"
            ))
        })
}

/// The non-zero `limit.context` of every model in a `GET /config/providers` answer
/// (`{providers: [{id, models: {<id>: {limit: {context, output}}}}], default}`).
fn context_limits(answer: &Value) -> ContextLimits {
    let providers = answer.get("providers").and_then(Value::as_array);
    providers
        .into_iter()
        .flatten()
        .filter_map(|provider| {
            let id = provider.get("id").and_then(Value::as_str)?;
            let models = provider.get("models").and_then(Value::as_object)?;
            Some((id, models))
        })
        .flat_map(|(provider_id, models)| {
            models.iter().filter_map(move |(model_id, model)| {
                let context = model.pointer("/limit/context").and_then(Value::as_u64)?;
                (context > 0).then(|| (format!("{provider_id}/{model_id}"), context))
            })
        })
        .collect()
}

/// Tokens an assistant message's model call was prompted with: fresh input plus cached
/// reads and writes (OpenCode counts the cache apart from `input`), as claude-code does.
fn prompt_tokens(info: &Value) -> u64 {
    ["/tokens/input", "/tokens/cache/read", "/tokens/cache/write"]
        .iter()
        .filter_map(|pointer| info.pointer(pointer).and_then(Value::as_u64))
        .sum()
}

/// The used fraction of a context window, `None` for an unknown (zero) window.
fn context_fraction(prompt_tokens: u64, window: u64) -> Option<f64> {
    #[allow(
        clippy::cast_precision_loss,
        reason = "token counts are far below 2^52"
    )]
    (window > 0).then(|| (prompt_tokens as f64 / window as f64).clamp(0.0, 1.0))
}

/// One turn's view of the event stream.
#[derive(Debug)]
struct Turn {
    session_id: String,
    permission: Option<PermissionMode>,
    granted_tools: HashSet<String>,
    /// Message id → role.
    roles: HashMap<String, String>,
    /// Assistant message ids of this turn, in order.
    assistant: Vec<String>,
    /// Part id → part type.
    part_types: HashMap<String, String>,
    /// Tool call ids already started / finished.
    started: HashSet<String>,
    finished: HashSet<String>,
    error: Option<ProviderError>,
    /// The session was seen working on this turn (an idle before that is stale).
    busy: bool,
    idle: bool,
    /// The model the turn ran on: the request's, then what its assistant messages name.
    model: Option<(String, String)>,
    /// Prompt tokens of the turn's latest model call that reported any.
    last_call: Option<u64>,
}

impl Turn {
    fn new(session_id: &str, request: &AgentRequest, model: Option<(String, String)>) -> Self {
        Self {
            session_id: session_id.to_owned(),
            permission: request.permission,
            granted_tools: request
                .tools
                .iter()
                .map(|tool| tool.name.to_lowercase())
                .collect(),
            roles: HashMap::new(),
            assistant: Vec::new(),
            part_types: HashMap::new(),
            started: HashSet::new(),
            finished: HashSet::new(),
            error: None,
            busy: false,
            idle: false,
            model,
            last_call: None,
        }
    }

    /// Handles one event; returns a permission request to answer (id, granted).
    fn handle(&mut self, payload: &Value, events: &dyn EventSink) -> Option<(String, bool)> {
        let kind = payload.get("type").and_then(Value::as_str)?;
        let properties = payload.get("properties")?;
        let session = ["/sessionID", "/info/sessionID", "/part/sessionID"]
            .iter()
            .find_map(|pointer| properties.pointer(pointer).and_then(Value::as_str));
        if session != Some(self.session_id.as_str()) {
            return None;
        }
        match kind {
            "message.updated" => {
                let info = properties.get("info")?;
                let id = info.get("id").and_then(Value::as_str)?.to_owned();
                let role = info.get("role").and_then(Value::as_str).unwrap_or_default();
                if role == "assistant" && !self.assistant.contains(&id) {
                    self.assistant.push(id.clone());
                    self.busy = true;
                }
                if role == "assistant" {
                    self.note_model_call(info);
                }
                if role == "assistant"
                    && let Some(error) = info.get("error")
                {
                    self.error = Some(classify(error));
                }
                self.roles.insert(id, role.to_owned());
            }
            "message.part.updated" => self.part(properties, events),
            "message.part.delta" => {
                let message = properties.get("messageID").and_then(Value::as_str)?;
                if self.roles.get(message).map(String::as_str) == Some("user") {
                    return None;
                }
                let part = properties
                    .get("partID")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let text = properties.get("delta").and_then(Value::as_str)?.to_owned();
                match self.part_types.get(part).map(String::as_str) {
                    Some("reasoning") => events.emit(AgentEvent::ThinkingDelta { text }),
                    Some("text") | None => events.emit(AgentEvent::TextDelta { text }),
                    Some(_) => {}
                }
            }
            "permission.asked" | "permission.updated" => {
                let id = properties.get("id").and_then(Value::as_str)?.to_owned();
                let permission = properties
                    .get("permission")
                    .or_else(|| properties.get("type"))
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned();
                let granted = match self.permission {
                    Some(PermissionMode::Bypass) => true,
                    Some(PermissionMode::Plan) => false,
                    Some(PermissionMode::AcceptEdits) => {
                        permission == "edit" || self.granted_tools.contains(&permission)
                    }
                    Some(PermissionMode::Default) | None => {
                        self.granted_tools.contains(&permission)
                    }
                };
                events.emit(AgentEvent::PermissionRequest {
                    tool: permission,
                    granted,
                });
                return Some((id, granted));
            }
            "session.error" => {
                if let Some(error) = properties.get("error") {
                    self.error = Some(classify(error));
                }
            }
            "session.status" => match properties.pointer("/status/type").and_then(Value::as_str) {
                Some("idle") => self.idle = self.busy,
                Some(_) => self.busy = true,
                None => {}
            },
            "session.idle" => self.idle = self.busy,
            _ => {}
        }
        None
    }

    /// Remembers the model and prompt size of an assistant message that reports tokens. A
    /// message starts with zero counts, so those updates are skipped; the last one seen is the
    /// last model call, whose prompt is what currently fills the context window.
    fn note_model_call(&mut self, info: &Value) {
        let tokens = prompt_tokens(info);
        if tokens == 0 {
            return;
        }
        self.last_call = Some(tokens);
        let field = |name: &str| info.get(name).and_then(Value::as_str).map(str::to_owned);
        if let (Some(provider_id), Some(model_id)) = (field("providerID"), field("modelID")) {
            self.model = Some((provider_id, model_id));
        }
    }

    fn part(&mut self, properties: &Value, events: &dyn EventSink) {
        let Some(part) = properties.get("part") else {
            return;
        };
        let message = part
            .get("messageID")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if self.roles.get(message).map(String::as_str) == Some("user") {
            return;
        }
        let kind = part.get("type").and_then(Value::as_str).unwrap_or_default();
        if let Some(id) = part.get("id").and_then(Value::as_str) {
            self.part_types.insert(id.to_owned(), kind.to_owned());
        }
        let delta = properties
            .get("delta")
            .and_then(Value::as_str)
            .map(str::to_owned);
        match kind {
            "text" => {
                if let Some(text) = delta {
                    events.emit(AgentEvent::TextDelta { text });
                }
            }
            "reasoning" => {
                if let Some(text) = delta {
                    events.emit(AgentEvent::ThinkingDelta { text });
                }
            }
            "tool" => {
                let id = part
                    .get("callID")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned();
                let name = part
                    .get("tool")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned();
                let state = part.get("state").unwrap_or(&Value::Null);
                let status = state
                    .get("status")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                if matches!(status, "running" | "completed" | "error")
                    && self.started.insert(id.clone())
                {
                    events.emit(AgentEvent::ToolStart {
                        id: id.clone(),
                        name: name.clone(),
                        input: state.get("input").cloned().unwrap_or(Value::Null),
                    });
                }
                if matches!(status, "completed" | "error") && self.finished.insert(id.clone()) {
                    let is_error = status == "error";
                    let text = if is_error {
                        state.get("error")
                    } else {
                        state
                            .get("title")
                            .filter(|t| t.as_str().is_some_and(|t| !t.is_empty()))
                            .or_else(|| state.get("output"))
                    };
                    events.emit(AgentEvent::ToolComplete {
                        id,
                        name,
                        summary: first_line(text.and_then(Value::as_str).unwrap_or_default()),
                        is_error,
                    });
                }
            }
            "subtask" => {
                if let Some(agent) = part.get("agent").and_then(Value::as_str) {
                    events.emit(AgentEvent::SubagentStart {
                        name: agent.to_owned(),
                    });
                }
            }
            _ => {}
        }
    }

    /// Builds the reply from the session's messages (`GET /session/{id}/message`); with the
    /// model's context window known, also reports how full the last model call left it.
    fn finish(
        self,
        messages: &Value,
        context_limit: Option<u64>,
        events: &dyn EventSink,
    ) -> Result<AgentReply, ProviderError> {
        let messages = messages
            .as_array()
            .ok_or_else(|| bad_output("`GET /session/{id}/message` did not return a list"))?;
        let mine: Vec<&Value> = messages
            .iter()
            .filter(|message| {
                message
                    .pointer("/info/id")
                    .and_then(Value::as_str)
                    .is_some_and(|id| self.assistant.iter().any(|mine| mine == id))
            })
            .collect();
        let mut usage = Usage::default();
        let mut cost = 0.0;
        let mut text = String::new();
        for message in &mine {
            let info = message.get("info").unwrap_or(&Value::Null);
            let tokens = info.get("tokens").unwrap_or(&Value::Null);
            let count =
                |pointer: &str| tokens.pointer(pointer).and_then(Value::as_u64).unwrap_or(0);
            usage.add(Usage {
                input_tokens: count("/input"),
                output_tokens: count("/output") + count("/reasoning"),
                cache_read_tokens: count("/cache/read"),
                cache_write_tokens: count("/cache/write"),
            });
            cost += info.get("cost").and_then(Value::as_f64).unwrap_or(0.0);
            let parts: Vec<&str> = message
                .get("parts")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter(|part| part.get("type").and_then(Value::as_str) == Some("text"))
                .filter(|part| part.get("synthetic").and_then(Value::as_bool) != Some(true))
                .filter_map(|part| part.get("text").and_then(Value::as_str))
                .collect();
            if !parts.is_empty() {
                text = parts.concat();
                events.emit(AgentEvent::MessageComplete { text: text.clone() });
            }
        }
        if mine.is_empty() {
            return Err(bad_output("the turn ended without an assistant message"));
        }
        events.emit(AgentEvent::Usage {
            usage,
            cost_usd: Some(cost),
        });
        if let Some(fraction) = self
            .last_call
            .zip(context_limit)
            .and_then(|(tokens, window)| context_fraction(tokens, window))
        {
            events.emit(AgentEvent::ContextWindow { fraction });
        }
        events.emit(AgentEvent::SessionEnd {
            session_id: Some(self.session_id.clone()),
        });
        Ok(AgentReply {
            text,
            session_id: Some(self.session_id),
            usage,
            cost_usd: Some(cost),
            turns: u32::try_from(mine.len()).unwrap_or(u32::MAX),
        })
    }
}

/// Classifies an OpenCode error object (`{name, data}`) as the HTTP adapters classify the
/// same failure: an `APIError` carries the model API's status (and its response headers,
/// so `retry-after` and `x-should-retry` count), a `ProviderAuthError` is `auth`.
fn classify(error: &Value) -> ProviderError {
    let name = error
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or("UnknownError");
    let data = error.get("data").unwrap_or(&Value::Null);
    let message = data
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or(name)
        .to_owned();
    let status = data
        .get("statusCode")
        .and_then(Value::as_u64)
        .and_then(|status| u16::try_from(status).ok());
    match (name, status) {
        ("APIError", Some(status)) => {
            let headers = response_headers(data.get("responseHeaders"));
            let body = data
                .get("responseBody")
                .and_then(Value::as_str)
                .unwrap_or(&message);
            classify::from_status(NAME, status, &headers, body, None)
        }
        ("ProviderAuthError", _) => ProviderError::Auth {
            adapter: NAME,
            status: 401,
            message,
            key_variable: None,
        },
        ("MessageOutputLengthError" | "StructuredOutputError", _) => {
            ProviderError::bad_output(NAME, format!("{name}: {message}"))
        }
        _ => ProviderError::rejected(NAME, 0, format!("{name}: {message}")),
    }
}

/// The model API's response headers as OpenCode reports them (`{"retry-after": "2"}`).
fn response_headers(headers: Option<&Value>) -> reqwest::header::HeaderMap {
    let mut map = reqwest::header::HeaderMap::new();
    for (name, value) in headers.and_then(Value::as_object).into_iter().flatten() {
        if let (Ok(name), Some(Ok(value))) = (
            reqwest::header::HeaderName::from_bytes(name.as_bytes()),
            value.as_str().map(reqwest::header::HeaderValue::from_str),
        ) {
            map.insert(name, value);
        }
    }
    map
}

fn first_line(text: &str) -> String {
    let line = text
        .lines()
        .map(str::trim)
        .find(|line| !line.is_empty())
        .unwrap_or_default();
    let mut short: String = line.chars().take(120).collect();
    if short.len() < line.len() {
        short.push('…');
    }
    short
}

fn config_error(message: &str) -> ProviderError {
    ProviderError::config(NAME, message.to_owned())
}

fn bad_output(message: &str) -> ProviderError {
    ProviderError::bad_output(NAME, message.to_owned())
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    /// The replay transcript of protocols.md §3, plus a tool part and the newer delta form.
    const EVENTS: &str = r#"{"type":"server.connected","properties":{}}
{"type":"session.status","properties":{"sessionID":"ses_A","status":{"type":"idle"}}}
{"type":"session.status","properties":{"sessionID":"ses_A","status":{"type":"busy"}}}
{"type":"message.updated","properties":{"info":{"id":"msg_U","sessionID":"ses_A","role":"user"}}}
{"type":"message.part.updated","properties":{"part":{"id":"prt_1","sessionID":"ses_A","messageID":"msg_U","type":"text","text":"Say hi"}}}
{"type":"message.updated","properties":{"info":{"id":"msg_A","sessionID":"ses_A","role":"assistant","providerID":"anthropic","modelID":"claude-sonnet-4-5","tokens":{"input":0,"output":0,"reasoning":0,"cache":{"read":0,"write":0}}}}}
{"type":"message.part.updated","properties":{"part":{"id":"prt_t","sessionID":"ses_A","messageID":"msg_A","type":"tool","callID":"c1","tool":"edit","state":{"status":"running","input":{"filePath":"/w/a"}}}}}
{"type":"message.part.updated","properties":{"part":{"id":"prt_t","sessionID":"ses_A","messageID":"msg_A","type":"tool","callID":"c1","tool":"edit","state":{"status":"completed","input":{"filePath":"/w/a"},"output":"done","title":"a"}}}}
{"type":"message.part.updated","properties":{"part":{"id":"prt_3","sessionID":"ses_A","messageID":"msg_A","type":"text","text":"Hi"},"delta":"Hi"}}
{"type":"message.part.delta","properties":{"sessionID":"ses_A","messageID":"msg_A","partID":"prt_3","field":"text","delta":" there."}}
{"type":"message.part.delta","properties":{"sessionID":"ses_B","messageID":"msg_X","partID":"prt_9","field":"text","delta":"other session"}}
{"type":"message.updated","properties":{"info":{"id":"msg_A","sessionID":"ses_A","role":"assistant","providerID":"anthropic","modelID":"claude-sonnet-4-5","tokens":{"total":20,"input":10,"output":4,"reasoning":1,"cache":{"read":2,"write":3}},"finish":"stop","time":{"created":1,"completed":2}}}}
{"type":"permission.asked","properties":{"id":"per_1","sessionID":"ses_A","permission":"bash","patterns":["ls"],"metadata":{},"always":[]}}
{"type":"session.status","properties":{"sessionID":"ses_A","status":{"type":"idle"}}}"#;

    #[test]
    fn maps_session_events_and_answers_permissions() {
        let events = Mutex::new(Vec::new());
        let sink = |event: AgentEvent| events.lock().expect("not poisoned").push(event);
        let request = AgentRequest {
            permission: Some(PermissionMode::AcceptEdits),
            ..AgentRequest::default()
        };
        let mut turn = Turn::new("ses_A", &request, None);
        let mut answers = Vec::new();
        for (index, line) in EVENTS.lines().enumerate() {
            let payload: Value = serde_json::from_str(line).expect("valid");
            answers.extend(turn.handle(&payload, &sink));
            assert!(
                !turn.idle || index == EVENTS.lines().count() - 1,
                "stale idle at line {index}"
            );
        }
        assert!(turn.idle);
        assert_eq!(answers, [("per_1".to_owned(), false)]);
        let messages = json!([
            {"info": {"id": "msg_U", "role": "user"}, "parts": [{"type": "text", "text": "Say hi"}]},
            {"info": {"id": "msg_A", "role": "assistant", "cost": 0.5,
                      "tokens": {"input": 10, "output": 4, "reasoning": 1, "cache": {"read": 2, "write": 3}}},
             "parts": [{"type": "step-start"}, {"type": "text", "text": "Hi there."}]}
        ]);
        let reply = turn.finish(&messages, Some(150), &sink).expect("a reply");
        assert_eq!(reply.text, "Hi there.");
        assert_eq!(reply.session_id.as_deref(), Some("ses_A"));
        assert_eq!(
            reply.usage,
            Usage {
                input_tokens: 10,
                output_tokens: 5,
                cache_read_tokens: 2,
                cache_write_tokens: 3
            }
        );
        let events = events.into_inner().expect("not poisoned");
        let texts: Vec<&str> = events
            .iter()
            .filter_map(|event| match event {
                AgentEvent::TextDelta { text } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(texts, ["Hi", " there."]);
        assert!(events.contains(&AgentEvent::ToolComplete {
            id: "c1".to_owned(),
            name: "edit".to_owned(),
            summary: "a".to_owned(),
            is_error: false,
        }));
        assert!(events.contains(&AgentEvent::PermissionRequest {
            tool: "bash".to_owned(),
            granted: false,
        }));
        // Prompt tokens 10 + 2 + 3 of a 150-token window.
        assert!(events.contains(&AgentEvent::ContextWindow { fraction: 0.1 }));
    }

    /// An assistant `message.updated` as the pinned CLI sends it once a model call finished.
    fn assistant_update(id: &str, input: u64, cache_read: u64, cache_write: u64) -> Value {
        json!({"type": "message.updated", "properties": {"info": {
            "id": id, "sessionID": "ses_A", "role": "assistant",
            "providerID": "anthropic", "modelID": "claude-sonnet-4-5",
            "tokens": {"input": input, "output": 7, "reasoning": 0,
                       "cache": {"read": cache_read, "write": cache_write}},
            "time": {"created": 1, "completed": 2}}}})
    }

    /// The context-window events of a turn whose assistant messages report these
    /// (input, cache read, cache write) counts, finished against `limit`.
    fn context_events(calls: &[(u64, u64, u64)], limit: Option<u64>) -> Vec<f64> {
        let events = Mutex::new(Vec::new());
        let sink = |event: AgentEvent| events.lock().expect("not poisoned").push(event);
        let mut turn = Turn::new("ses_A", &AgentRequest::default(), None);
        let mut messages = Vec::new();
        for (index, (input, read, write)) in calls.iter().enumerate() {
            let update = assistant_update(&format!("msg_{index}"), *input, *read, *write);
            turn.handle(&update, &sink);
            messages.push(json!({"info": update["properties"]["info"], "parts": []}));
        }
        turn.finish(&Value::Array(messages), limit, &sink)
            .expect("a reply");
        events
            .into_inner()
            .expect("not poisoned")
            .into_iter()
            .filter_map(|event| match event {
                AgentEvent::ContextWindow { fraction } => Some(fraction),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn the_context_window_is_the_last_calls_prompt_over_the_limit() {
        // Two model calls: the second prompt (50 + 1950 + 0) is what fills the window now;
        // summing the calls would double-count the history each one re-sends.
        assert_eq!(
            context_events(&[(100, 900, 0), (50, 1950, 0)], Some(8000)),
            [0.25]
        );
        assert_eq!(context_events(&[(10, 0, 3000)], Some(2000)), [1.0]);
    }

    #[test]
    fn no_context_window_without_a_limit_or_a_counted_call() {
        assert!(context_events(&[(100, 900, 0)], None).is_empty());
        assert!(context_events(&[(0, 0, 0)], Some(8000)).is_empty());
        assert_eq!(context_fraction(100, 0), None);
    }

    #[test]
    fn the_model_comes_from_the_assistant_message() {
        let sink = |_: AgentEvent| {};
        let model = split_model(Some("fake/requested")).expect("valid");
        let mut turn = Turn::new("ses_A", &AgentRequest::default(), model.clone());
        turn.handle(&assistant_update("msg_0", 0, 0, 0), &sink);
        assert_eq!(
            turn.model, model,
            "a message without counts changes nothing"
        );
        turn.handle(&assistant_update("msg_0", 12, 0, 0), &sink);
        assert_eq!(
            turn.model,
            Some(("anthropic".to_owned(), "claude-sonnet-4-5".to_owned()))
        );
        assert_eq!(turn.last_call, Some(12));
    }

    #[test]
    fn context_limits_are_read_from_config_providers() {
        // Trimmed from the pinned CLI's answer, with a config override of one model's limit.
        let answer = json!({
            "providers": [
                {"id": "opencode", "name": "OpenCode", "source": "custom", "env": [], "options": {},
                 "models": {"big-pickle": {"id": "big-pickle", "providerID": "opencode",
                     "limit": {"context": 200000, "input": 160000, "output": 32000}}}},
                {"id": "anthropic", "name": "Anthropic", "source": "config", "env": [], "options": {},
                 "models": {
                     "claude-sonnet-4-5": {"id": "claude-sonnet-4-5", "providerID": "anthropic",
                         "limit": {"context": 2000, "output": 500}},
                     "unsized": {"id": "unsized", "providerID": "anthropic",
                         "limit": {"context": 0, "output": 0}}}}
            ],
            "default": {"opencode": "big-pickle", "anthropic": "claude-sonnet-4-6"}
        });
        let limits = context_limits(&answer);
        assert_eq!(limits.get("anthropic/claude-sonnet-4-5"), Some(&2000));
        assert_eq!(limits.get("opencode/big-pickle"), Some(&200_000));
        assert_eq!(
            limits.get("anthropic/unsized"),
            None,
            "a zero limit is unknown"
        );
        assert_eq!(limits.len(), 2);
        assert!(context_limits(&json!({"name": "NotFoundError"})).is_empty());
    }

    #[test]
    fn errors_are_classified() {
        let cases = [
            (
                json!({"name": "APIError", "data": {"message": "slow down", "statusCode": 429}}),
                "rate-limit",
            ),
            (
                json!({"name": "APIError", "data": {"message": "busy", "statusCode": 529}}),
                "overloaded",
            ),
            (
                json!({"name": "APIError", "data": {"message": "boom", "statusCode": 500}}),
                "server-error",
            ),
            (
                json!({"name": "ProviderAuthError", "data": {"message": "no key"}}),
                "auth",
            ),
            (
                json!({"name": "APIError", "data": {"message": "bad key", "statusCode": 401}}),
                "auth",
            ),
            (
                json!({"name": "APIError", "data": {"message": "locked", "statusCode": 409}}),
                "server-error",
            ),
            (
                json!({"name": "APIError", "data": {"message": "no", "statusCode": 500,
                    "responseHeaders": {"x-should-retry": "false"}}}),
                "provider",
            ),
            (
                json!({"name": "MessageOutputLengthError", "data": {}}),
                "bad-output",
            ),
        ];
        for (error, class) in cases {
            assert_eq!(classify(&error).class().name(), class, "{error}");
        }
        let limited = classify(&json!({"name": "APIError", "data": {"message": "slow down",
            "statusCode": 429, "responseHeaders": {"retry-after": "7"}}}));
        assert!(
            matches!(limited, ProviderError::RateLimited { retry_after: Some(wait), .. } if wait == Duration::from_secs(7)),
            "{limited:?}"
        );
    }

    #[test]
    fn rules_follow_the_permission_mode() {
        let request = AgentRequest {
            permission: Some(PermissionMode::Plan),
            tools: vec![super::super::ToolGrant {
                name: "Read".to_owned(),
                timeout: None,
                description: None,
                input_schema: None,
                command: Vec::new(),
            }],
            ..AgentRequest::default()
        };
        let rules: Vec<String> = permission_rules(&request)
            .iter()
            .map(|rule| {
                format!(
                    "{}={}",
                    rule["permission"].as_str().unwrap_or_default(),
                    rule["action"].as_str().unwrap_or_default()
                )
            })
            .collect();
        assert_eq!(rules, ["read=allow", "edit=deny", "bash=deny"]);
        assert!(split_model(Some("nope")).is_err());
        assert_eq!(
            split_model(Some("anthropic/claude-sonnet-4-5")).expect("valid"),
            Some(("anthropic".to_owned(), "claude-sonnet-4-5".to_owned()))
        );
    }
}
