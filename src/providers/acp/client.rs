//! The ACP conversation of one call, over the `agent-client-protocol` SDK: `initialize`,
//! `session/new` (or `session/load` to continue), the model chosen through the session's
//! config options, then `session/prompt`. Everything the agent sends meanwhile goes to the
//! call as [`Inbound`], in order, to be answered there.

use std::path::PathBuf;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    ClientCapabilities, ContentBlock, FileSystemCapabilities, Implementation, InitializeRequest,
    LoadSessionRequest, McpServer, NewSessionRequest, PromptRequest, PromptResponse,
    ReadTextFileRequest, RequestPermissionRequest, SessionConfigKind, SessionConfigOption,
    SessionConfigOptionCategory, SessionConfigOptionValue, SessionId, SessionNotification,
    SetSessionConfigOptionRequest, TextContent, WriteTextFileRequest,
};
use agent_client_protocol::{Agent, Client, ConnectTo, Error as AcpError, ErrorCode};
use tokio::sync::mpsc::UnboundedSender;

use super::turn::Inbound;

/// What the conversation needs.
#[derive(Debug)]
pub(super) struct Setup {
    /// The session's working directory.
    pub cwd: PathBuf,
    /// A session to continue.
    pub resume: Option<String>,
    /// The agent's MCP servers.
    pub mcp: Vec<McpServer>,
    /// A model to choose.
    pub model: Option<String>,
    /// The prompt (with the system prompt before it).
    pub prompt: String,
}

/// How the prompt turn ended.
#[derive(Debug)]
pub(super) struct Finished {
    /// The session it ran in.
    pub session_id: String,
    /// The agent's answer to `session/prompt`.
    pub response: PromptResponse,
}

/// Why a conversation failed before its turn ended.
#[derive(Debug)]
pub(super) enum Failure {
    /// The agent answered with an error (or the connection broke).
    Protocol(AcpError),
    /// The agent cannot do what the node asks; the message says what.
    Unsupported(String),
}

impl From<AcpError> for Failure {
    fn from(error: AcpError) -> Self {
        Self::Protocol(error)
    }
}

/// Runs the conversation over `transport`.
pub(super) async fn converse(
    transport: impl ConnectTo<Client> + 'static,
    inbound: UnboundedSender<Inbound>,
    setup: Setup,
) -> Result<Finished, Failure> {
    let updates = inbound.clone();
    let permissions = inbound.clone();
    let reads = inbound.clone();
    let writes = inbound.clone();
    let mut unsupported = None;
    let outcome = Client
        .v1()
        .name("atomic")
        .on_receive_notification(
            async move |notification: SessionNotification, _connection| {
                let _ = updates.send(Inbound::Update(Box::new(notification)));
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .on_receive_request(
            async move |request: RequestPermissionRequest, responder, _connection| {
                let _ = permissions.send(Inbound::Permission(Box::new(request), responder));
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: ReadTextFileRequest, responder, _connection| {
                let _ = reads.send(Inbound::Read(request, responder));
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: WriteTextFileRequest, responder, _connection| {
                let _ = writes.send(Inbound::Write(request, responder));
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .connect_with(
            transport,
            async |connection: ConnectionTo<Agent>| match session(&connection, &inbound, setup)
                .await
            {
                Ok(finished) => Ok(Some(finished)),
                Err(Failure::Protocol(error)) => Err(error),
                Err(Failure::Unsupported(message)) => {
                    unsupported = Some(message);
                    Ok(None)
                }
            },
        )
        .await?;
    outcome.ok_or_else(|| Failure::Unsupported(unsupported.unwrap_or_default()))
}

async fn session(
    connection: &ConnectionTo<Agent>,
    inbound: &UnboundedSender<Inbound>,
    setup: Setup,
) -> Result<Finished, Failure> {
    // Writes go through atomic, which keeps them inside the workspace and to what the node's
    // mode allows. Reads are not offered: the agents read the disk themselves anyway, and
    // the Gemini CLI (0.61) cannot create a file when a client read says it is missing.
    let capabilities =
        ClientCapabilities::new().fs(FileSystemCapabilities::new().write_text_file(true));
    let init = connection
        .send_request(
            InitializeRequest::new(ProtocolVersion::V1)
                .client_capabilities(capabilities)
                .client_info(Implementation::new("atomic", env!("CARGO_PKG_VERSION"))),
        )
        .block_task()
        .await?;
    let (session_id, options) = match setup.resume {
        Some(id) => {
            if !init.agent_capabilities.load_session {
                return Err(Failure::Unsupported(
                    "the agent cannot continue a session (it does not offer `session/load`); \
                     drop `session=` from the node"
                        .to_owned(),
                ));
            }
            let loaded = connection
                .send_request(
                    LoadSessionRequest::new(SessionId::new(id.clone()), setup.cwd)
                        .mcp_servers(setup.mcp),
                )
                .block_task()
                .await?;
            (id, loaded.config_options.unwrap_or_default())
        }
        None => {
            let created = connection
                .send_request(NewSessionRequest::new(setup.cwd).mcp_servers(setup.mcp))
                .block_task()
                .await?;
            (
                created.session_id.0.to_string(),
                created.config_options.unwrap_or_default(),
            )
        }
    };
    if let Some(model) = setup.model {
        let Some(option) = model_option(&options) else {
            return Err(Failure::Unsupported(format!(
                "the agent offers no choice of model, so `model=\"{model}\"` cannot be applied; \
                 drop `model=` or pass the agent's own model flag in the provider's `command`"
            )));
        };
        connection
            .send_request(SetSessionConfigOptionRequest::new(
                SessionId::new(session_id.clone()),
                option.id.clone(),
                SessionConfigOptionValue::value_id(model),
            ))
            .block_task()
            .await?;
    }
    let _ = inbound.send(Inbound::Prompting);
    let response = connection
        .send_request(PromptRequest::new(
            SessionId::new(session_id.clone()),
            vec![ContentBlock::Text(TextContent::new(setup.prompt))],
        ))
        .block_task()
        .await?;
    Ok(Finished {
        session_id,
        response,
    })
}

/// The session's model selector: a select option in the `model` category.
fn model_option(options: &[SessionConfigOption]) -> Option<&SessionConfigOption> {
    options.iter().find(|option| {
        option.category == Some(SessionConfigOptionCategory::Model)
            && matches!(option.kind, SessionConfigKind::Select(_))
    })
}

/// Whether the agent said authentication is required.
pub(super) fn is_auth_required(error: &AcpError) -> bool {
    error.code == ErrorCode::AUTH_REQUIRED
}
