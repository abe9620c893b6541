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

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::OnceCell;

mod errors;
mod server;
mod turn;

use self::server::start_server;
use self::turn::{ContextLimits, PermissionReply, Turn, context_limits};
use super::agent_cli::{
    BaseUrl, Cli, CliAgent, CliSpec, Credentials, KeyVar, Program, refuse_unsupported,
};
use super::http::{SseReader, build_client, classify};
use super::mcp_config::{PrivateFile, ResolvedMcp, render_servers};
use super::{AgentEvent, AgentReply, AgentRequest, EventSink, ProviderContext, ProviderError};
use crate::ir::{PermissionMode, ProviderDecl};
use crate::process::Child;

const NAME: &str = "opencode";

/// Default wait for a started server to say it is listening.
const STARTUP_LIMIT: Duration = Duration::from_secs(60);

/// Limit on the plain (non-streaming) API calls.
const REQUEST_LIMIT: Duration = Duration::from_secs(60);

/// The longest the event stream may stay silent (the node's timeout bounds the turn).
const EVENT_SILENCE_LIMIT: Duration = Duration::from_secs(30 * 60);

/// How long summarising a session (a model call) may take.
const SUMMARIZE_LIMIT: Duration = Duration::from_secs(600);

/// How atomic starts `opencode serve` (without `base-url=`).
const SPEC: CliSpec = CliSpec {
    adapter: NAME,
    program: Program::Npm {
        command: "opencode",
        package: "opencode-ai",
    },
    settings: &[],
    setting_prefixes: &["OPENCODE_"],
    credential_vars: &["OPENCODE_SERVER_PASSWORD"],
    // `base-url=` means a running server: atomic connects instead of starting one.
    base_url: BaseUrl::Dialect,
    // Referenced from the server's config as `{env:NAME}`.
    key: KeyVar::Own,
    endpoint: None,
    defaults: &[("OPENCODE_DISABLE_AUTOUPDATE", "1")],
};

/// The OpenCode server adapter.
#[derive(Debug)]
pub struct OpenCode {
    launch: Launch,
    server: OnceCell<Server>,
    client: reqwest::Client,
    model: Option<String>,
    /// The key from `api-key-env=` (with `base-url=`: the server's password).
    credentials: Credentials,
    /// Context-window sizes by project directory (the project's config may add models).
    context_limits: Mutex<HashMap<PathBuf, ContextLimits>>,
}

/// Where the server comes from.
#[derive(Debug)]
enum Launch {
    /// atomic starts one, `opencode serve` as configured.
    Spawn { cli: Box<Cli>, startup: Duration },
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
    _process: Option<Child>,
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
    pub fn new(decl: &ProviderDecl, cx: &ProviderContext<'_>) -> Result<Self, ProviderError> {
        let credentials = Credentials::from_decl(NAME, decl, cx.env)?;
        let launch = if let Some(base) = &decl.base_url {
            Launch::Connect {
                base: base.value.trim_end_matches('/').to_owned(),
                password: credentials.key().map(str::to_owned),
            }
        } else {
            let mut cli = Cli::new(&SPEC, decl, cx)?;
            let mut config = match decl.options.get("config") {
                None => None,
                Some(Value::String(config)) => {
                    Some(serde_json::from_str::<Value>(config).map_err(|error| {
                        config_error(&format!("option `config` is not JSON: {error}"))
                    })?)
                }
                Some(Value::Object(config)) => Some(Value::Object(config.clone())),
                Some(_) => return Err(config_error("option `config` must be a JSON string")),
            };
            // atomic holds the key: the model's provider is pointed at the gateway, which
            // forwards to the endpoint the config gave it (or its public API).
            if let Some((provider, upstream)) = crate::ir::opencode_model_endpoint(
                decl.model.as_ref().map(|model| model.value.as_str()),
                config.as_ref(),
            ) && let Some(url) = cli.hold_key(&upstream)?
            {
                let config = config.get_or_insert_with(|| json!({}));
                if !config.is_object() {
                    return Err(config_error("option `config` must be a JSON object"));
                }
                config["provider"][&provider]["options"]["baseURL"] = Value::String(url);
            }
            if let Some(config) = config {
                cli.set_env("OPENCODE_CONFIG_CONTENT", config.to_string());
            }
            let startup = match decl.options.get("startup-timeout") {
                None => STARTUP_LIMIT,
                Some(value) => value
                    .as_f64()
                    .filter(|secs| *secs > 0.0)
                    .map(Duration::from_secs_f64)
                    .ok_or_else(|| config_error("option `startup-timeout` must be seconds"))?,
            };
            Launch::Spawn {
                cli: Box::new(cli),
                startup,
            }
        };
        let client = build_client(NAME, Duration::from_secs(10))?;
        Ok(Self {
            launch,
            server: OnceCell::new(),
            client,
            model: decl.model.as_ref().map(|model| model.value.clone()),
            credentials,
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
        self.summarize_on(server, session_id, model, directory)
            .await
    }

    async fn summarize_on(
        &self,
        server: &Server,
        session_id: &str,
        model: Option<&str>,
        directory: &Path,
    ) -> Result<(), ProviderError> {
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
                    Launch::Spawn { cli, startup } => {
                        start_server(cli, directory, *startup, Vec::new(), None).await
                    }
                }
            })
            .await
    }

    /// A server of its own for a call given MCP servers (protocols.md §6) or run in a
    /// sandbox: started with the servers in the `mcp` block of a private config file
    /// (`OPENCODE_CONFIG`, merged by OpenCode with the rest of its config), confined by the
    /// call's sandbox (the server runs the agent's tools), stopped when the call ends, so
    /// one agent's servers and reach never touch another's sessions. A running server
    /// (`base-url=`) can be given neither.
    async fn own_server(
        &self,
        request: &AgentRequest,
        directory: &Path,
    ) -> Result<(Server, Option<PrivateFile>), ProviderError> {
        let Launch::Spawn { cli, startup } = &self.launch else {
            return Err(config_error(if request.grants.mcp.is_empty() {
                "a running OpenCode server (`base-url=`) cannot run in a sandbox: let atomic start the server, or give the agent `sandbox \"none\"`"
            } else {
                "MCP servers cannot be given to a running OpenCode server (`base-url=`); declare them in that server's own config, or let atomic start the server"
            }));
        };
        if request.grants.mcp.is_empty() {
            let server = start_server(cli, directory, *startup, Vec::new(), Some(request)).await?;
            return Ok((server, None));
        }
        if cli.env().get("OPENCODE_CONFIG").is_some() {
            return Err(config_error(
                "MCP servers are given to OpenCode in `OPENCODE_CONFIG`, which the environment already sets; give that config with `option \"config\"` instead",
            ));
        }
        let servers = cli.mcp_servers(request)?;
        let config = json!({ "mcp": opencode_mcp(&servers) });
        let file = cli.private_file("atomic-opencode-mcp", &config.to_string())?;
        let env = vec![(
            "OPENCODE_CONFIG".to_owned(),
            file.path().display().to_string(),
        )];
        let server = start_server(cli, directory, *startup, env, Some(request)).await?;
        Ok((server, Some(file)))
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

impl CliAgent for OpenCode {
    fn adapter(&self) -> &'static str {
        NAME
    }

    fn credentials(&self) -> &Credentials {
        &self.credentials
    }

    fn can_compact(&self) -> bool {
        true
    }

    async fn call(
        &self,
        request: &AgentRequest,
        events: &dyn EventSink,
    ) -> Result<AgentReply, ProviderError> {
        let directory = std::path::absolute(request.workspace.root())
            .map_err(|error| config_error(&format!("bad working directory: {error}")))?;
        // The adapter table's refusals, whether atomic starts the server or not.
        refuse_unsupported(
            crate::ir::adapter_info(NAME).expect("opencode is in the catalogue"),
            request,
        )?;
        let model = request.model.as_deref().or(self.model.as_deref());
        let model = split_model(model)?;
        // A call given MCP servers or a sandbox runs on a server of its own.
        let own_server;
        let server = if request.grants.mcp.is_empty() && request.sandbox.is_none() {
            self.server(&directory).await?
        } else {
            own_server = self.own_server(request, &directory).await?;
            &own_server.0
        };
        let base = &server.base;

        // A fork's copy of the session it inherited (`POST /session/{id}/fork`) leaves the
        // original as it was; a new call makes a session of its own.
        let made = match &request.session.resume {
            Some(id) if request.session.fork => {
                Some((format!("{base}/session/{id}/fork"), json!({})))
            }
            Some(_) => None,
            None => Some((
                format!("{base}/session"),
                json!({
                    "title": format!("atomic {}", request.call.node_id),
                    "permission": permission_rules(request),
                }),
            )),
        };
        let session_id = match (made, &request.session.resume) {
            (Some((url, body)), _) => {
                let session = self
                    .send(
                        server,
                        self.client.post(&url).json(&body),
                        &directory,
                        REQUEST_LIMIT,
                    )
                    .await?;
                session
                    .get("id")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
                    .ok_or_else(|| bad_output(&format!("`POST {url}` returned no session id")))?
            }
            (None, resume) => resume.clone().unwrap_or_default(),
        };
        events.emit(AgentEvent::SessionStart {
            session_id: Some(session_id.clone()),
            model: model
                .as_ref()
                .map(|(provider, model)| format!("{provider}/{model}")),
        });

        if request.session.compact && request.session.resume.is_some() {
            self.summarize_on(server, &session_id, request.model.as_deref(), &directory)
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

        let mut prompt = json!({"parts": [{"type": "text", "text": request.prompt.text}]});
        if let Some((provider_id, model_id)) = &model {
            prompt["model"] = json!({"providerID": provider_id, "modelID": model_id});
        }
        if let Some(system) = request.prompt.system.as_ref().filter(|s| !s.is_empty()) {
            prompt["system"] = json!(system);
        }
        if request.grants.permission == Some(PermissionMode::Plan) {
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
        while !turn.idle && turn.gave_up.is_none() {
            let Some(event) = stream.next().await? else {
                return Err(ProviderError::stream_cut(
                    NAME,
                    "the event stream ended before the session went idle",
                ));
            };
            let Ok(payload) = serde_json::from_str::<Value>(&event.data) else {
                continue;
            };
            match turn.handle(&payload, events) {
                None => {}
                // The request is refused and the turn aborted before the run pauses, not
                // left to the guard: the process may exit before a spawned abort is sent,
                // and a running server (`base-url=`) keeps an unanswered request pending
                // past an abort, holding back every later one. A refusal without a message
                // stops the turn (one with a message would let the model go on). The
                // session continues once a person answers.
                Some(PermissionReply::Pause { id, ask }) => {
                    let url = format!("{base}/permission/{id}/reply");
                    let reject = self.client.post(url).json(&json!({"reply": "reject"}));
                    let _ = self.send(server, reject, &directory, REQUEST_LIMIT).await;
                    if let Some(abort) = abort.request.take() {
                        let _ = abort.send().await;
                    }
                    return Err(ProviderError::awaiting_permission(
                        NAME,
                        ask,
                        Some(session_id.clone()),
                    ));
                }
                Some(PermissionReply::Answer {
                    id,
                    granted,
                    message,
                }) => {
                    let mut reply = json!({"reply": if granted { "once" } else { "reject" }});
                    if let Some(message) = message {
                        reply["message"] = json!(message);
                    }
                    let url = format!("{base}/permission/{id}/reply");
                    self.send(
                        server,
                        self.client.post(url).json(&reply),
                        &directory,
                        REQUEST_LIMIT,
                    )
                    .await?;
                }
            }
        }
        // OpenCode's own retrying went past the node's policy or deadline: stop here (the
        // guard aborts the session).
        if let Some(error) = turn.gave_up.take() {
            return Err(error);
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

/// The `mcp` block of OpenCode's config: `{name: {"type": "local", "command": [program,
/// args…], "environment": {…}} | {"type": "remote", "url", "headers", "oauth": false}}`.
fn opencode_mcp(servers: &[ResolvedMcp]) -> Value {
    Value::Object(render_servers(
        servers,
        |program, args, env| {
            let command: Vec<&str> = std::iter::once(program)
                .chain(args.iter().map(String::as_str))
                .collect();
            json!({"type": "local", "command": command, "environment": env})
        },
        |url, headers| json!({"type": "remote", "url": url, "headers": headers, "oauth": false}),
    ))
}

/// The permissions `permission="ask"` asks a person about.
const ASKED: [&str; 4] = ["edit", "bash", "webfetch", "external_directory"];

/// Session permission rules for the node's mode and granted tools (the last matching rule
/// wins in OpenCode, so the mode's denials come last).
fn permission_rules(request: &AgentRequest) -> Vec<Value> {
    let rule = |permission: &str, action: &str| json!({"permission": permission, "pattern": "*", "action": action});
    let mut rules = Vec::new();
    match request.grants.permission {
        Some(PermissionMode::Bypass) => rules.push(rule("*", "allow")),
        Some(PermissionMode::AcceptEdits) => rules.push(rule("edit", "allow")),
        // What changes things or reaches out is asked, as Claude Code's default mode does;
        // reading stays free.
        Some(PermissionMode::Ask) => {
            for permission in ASKED {
                rules.push(rule(permission, "ask"));
            }
        }
        _ => {}
    }
    let allowed_for_run = request.grants.approvals.tools.iter();
    for tool in request
        .grants
        .tools
        .iter()
        .map(|tool| &tool.name)
        .chain(allowed_for_run)
    {
        rules.push(rule(&tool.to_lowercase(), "allow"));
    }
    if request.grants.permission == Some(PermissionMode::Plan) {
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
pub(super) fn split_model(model: Option<&str>) -> Result<Option<(String, String)>, ProviderError> {
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

fn config_error(message: &str) -> ProviderError {
    ProviderError::config(NAME, message.to_owned())
}

pub(super) fn bad_output(message: &str) -> ProviderError {
    ProviderError::bad_output(NAME, message.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::Grants;

    #[test]
    fn rules_follow_the_permission_mode() {
        let request = AgentRequest {
            grants: Grants {
                permission: Some(PermissionMode::Plan),
                tools: vec![super::super::ToolGrant {
                    name: "Read".to_owned(),
                    timeout: None,
                    description: None,
                    input_schema: None,
                    command: Vec::new(),
                }],
                ..Grants::default()
            },
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

        // Asking: what changes things is asked, and a tool allowed for the run is allowed
        // after it (the last matching rule wins).
        let asking = AgentRequest {
            grants: Grants {
                permission: Some(PermissionMode::Ask),
                approvals: super::super::Approvals {
                    tools: vec!["bash".to_owned()],
                    answered: None,
                },
                ..request.grants.clone()
            },
            ..request
        };
        let rules: Vec<String> = permission_rules(&asking)
            .iter()
            .map(|rule| {
                format!(
                    "{}={}",
                    rule["permission"].as_str().unwrap_or_default(),
                    rule["action"].as_str().unwrap_or_default()
                )
            })
            .collect();
        assert_eq!(
            rules,
            [
                "edit=ask",
                "bash=ask",
                "webfetch=ask",
                "external_directory=ask",
                "read=allow",
                "bash=allow"
            ]
        );
        assert!(split_model(Some("nope")).is_err());
        assert_eq!(
            split_model(Some("anthropic/claude-sonnet-4-5")).expect("valid"),
            Some(("anthropic".to_owned(), "claude-sonnet-4-5".to_owned()))
        );
    }
}
