//! The agent's MCP servers in a chat-adapter call: at the start of the call each stdio
//! server is started (in its own process group, in the agent's working directory, with the
//! tools' environment plus its declared `env`) and each streamable-HTTP server (`url=`) is
//! reached (with `Authorization: Bearer` and the value of `bearer-env=`); the rmcp client
//! initializes it and asks for its tools, which the model is offered as `<server>__<tool>`.
//! Dropping the [`Connection`] (when the call's [`ToolSet`](super::ToolSet) goes) ends the
//! session and kills a stdio server's process group.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, CallToolResult, Tool};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::Value;

use super::tools::ToolOutcome;
use crate::ir::{McpServer, McpTransport};
use crate::process::{Child, Launch};
use crate::providers::mcp_config::{passed_through, server_env};
use crate::providers::{ProviderError, ToolEnv, child};

/// Longest a server may take to start, initialize and list its tools.
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// Longest a tool name may be: both APIs (Anthropic's `^[a-zA-Z0-9_-]{1,64}$`, OpenAI's
/// function names) allow 64 characters.
pub(super) const MAX_TOOL_NAME: usize = 64;

/// A running MCP server of one call.
pub(crate) struct Connection {
    /// Its declared name.
    pub(crate) name: String,
    /// The client session; dropped before the process group.
    client: RunningService<RoleClient, ()>,
    /// A stdio server's process group, killed when dropped.
    _group: Option<Child>,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// What the caller gives a server: where it runs and its environment.
pub(crate) struct Start<'a> {
    /// The agent's working directory.
    pub(crate) working_dir: &'a Path,
    /// The tools' environment (atomic's without provider keys).
    pub(crate) tool_env: &'a ToolEnv,
    /// The provider's key variable, kept from the server too.
    pub(crate) hide_env: Option<&'a str>,
}

/// The name the model sees for `tool` of `server`: `<server>__<tool>`, with any character
/// the APIs do not allow in a tool name (anything but letters, digits, `_` and `-`) as `_`.
pub(super) fn tool_name(server: &str, tool: &str) -> String {
    let clean: String = tool
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{server}__{clean}")
}

/// Starts `server` and lists its tools.
///
/// # Errors
/// [`ProviderError::Config`] naming the server: a variable passed through that is not set,
/// a command that cannot be started, or a server that cannot be reached, does not
/// initialize or list its tools in time.
pub(crate) async fn connect(
    adapter: &'static str,
    server: &McpServer,
    start: &Start<'_>,
) -> Result<(Arc<Connection>, Vec<Tool>), ProviderError> {
    let name = server.name.value.clone();
    let command = match &server.transport {
        McpTransport::Stdio { command } => command,
        McpTransport::Http { url, bearer_env } => {
            return connect_http(adapter, name, &url.value, bearer_env.as_ref(), start).await;
        }
    };
    let declared = server_env(adapter, server, &start.tool_env.env)?;
    let Some((program, args)) = command.split_first() else {
        return Err(ProviderError::config(
            adapter,
            format!("MCP server `{name}` has no command"),
        ));
    };
    let launch = Launch::new(&program.value)
        .args(args.iter().map(|arg| arg.value.clone()))
        .cwd(start.working_dir)
        .envs(
            start
                .tool_env
                .env
                .iter()
                .filter(|(var, _)| Some(*var) != start.hide_env),
        )
        .envs(declared);
    let launch = start.tool_env.confine(launch);
    let mut group =
        child::spawn(adapter, start.tool_env.spawner.as_ref(), launch).map_err(|error| {
            let why = match error {
                ProviderError::Config { message, .. } => message,
                other => other.to_string(),
            };
            ProviderError::config(
                adapter,
                format!("MCP server `{name}` could not be started: {why}"),
            )
        })?;
    let failed = |group: &Child, what: String| {
        let stderr = group.stderr_tail();
        let stderr = if stderr.is_empty() {
            String::new()
        } else {
            format!("; its stderr: {}", start.tool_env.redactor.redact(&stderr))
        };
        ProviderError::config(adapter, format!("MCP server `{name}` {what}{stderr}"))
    };
    let (Some(stdout), Some(stdin)) = (group.take_stdout(), group.take_stdin()) else {
        return Err(failed(&group, "has no stdio".to_owned()));
    };
    let (client, tools) = handshake((stdout, stdin))
        .await
        .map_err(|what| failed(&group, what))?;
    let connection = Connection {
        name,
        client,
        _group: Some(group),
    };
    Ok((Arc::new(connection), tools))
}

/// Reaches streamable-HTTP server `name` at `url`, with the bearer token from the variable
/// `bearer_env` names (read from the tools' environment).
async fn connect_http(
    adapter: &'static str,
    name: String,
    url: &str,
    bearer_env: Option<&crate::source::Spanned<String>>,
    start: &Start<'_>,
) -> Result<(Arc<Connection>, Vec<Tool>), ProviderError> {
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_owned());
    if let Some(var) = bearer_env {
        config = config.auth_header(passed_through(
            adapter,
            &name,
            &var.value,
            &start.tool_env.env,
        )?);
    }
    let failed = |what: String| {
        let what = start.tool_env.redactor.redact(&what).into_owned();
        ProviderError::config(adapter, format!("MCP server `{name}` at `{url}` {what}"))
    };
    let transport = StreamableHttpClientTransport::with_client(crate::tls::client(), config);
    let (client, tools) = handshake(transport).await.map_err(failed)?;
    let connection = Connection {
        name,
        client,
        _group: None,
    };
    Ok((Arc::new(connection), tools))
}

/// Initializes a session over `transport` and lists the server's tools, within
/// [`START_TIMEOUT`]; the error says which step failed.
async fn handshake<T, E, A>(
    transport: T,
) -> Result<(RunningService<RoleClient, ()>, Vec<Tool>), String>
where
    T: rmcp::transport::IntoTransport<RoleClient, E, A> + Send + 'static,
    E: std::error::Error + Send + Sync + 'static,
{
    let started = tokio::time::timeout(START_TIMEOUT, async {
        let client =
            ().serve(transport)
                .await
                .map_err(|error| format!("did not initialize: {error}"))?;
        let tools = client
            .list_all_tools()
            .await
            .map_err(|error| format!("did not list its tools: {error}"))?;
        Ok((client, tools))
    })
    .await;
    started.unwrap_or_else(|_elapsed| {
        Err(format!(
            "did not initialize and list its tools within {START_TIMEOUT:?}"
        ))
    })
}

impl Connection {
    /// Calls `tool` with `input`: its content as text, and its `isError` as a tool error.
    pub(super) async fn call(&self, tool: &str, input: &Value) -> ToolOutcome {
        let mut params = CallToolRequestParams::new(tool.to_owned());
        if let Value::Object(arguments) = input {
            params = params.with_arguments(arguments.clone());
        }
        match self.client.call_tool(params).await {
            Ok(result) => outcome(&result),
            Err(error) => ToolOutcome {
                content: format!(
                    "the call to `{tool}` of MCP server `{}` failed: {error}",
                    self.name
                ),
                is_error: true,
            },
        }
    }
}

/// The text the model sees of `result`: its text blocks, other blocks as JSON, and the
/// structured content when there is no text.
fn outcome(result: &CallToolResult) -> ToolOutcome {
    let mut parts: Vec<String> = result
        .content
        .iter()
        .map(|block| match block.as_text() {
            Some(text) => text.text.clone(),
            None => serde_json::to_string(block).unwrap_or_default(),
        })
        .collect();
    if parts.is_empty()
        && let Some(structured) = &result.structured_content
    {
        parts.push(structured.to_string());
    }
    ToolOutcome {
        content: parts.join("\n"),
        is_error: result.is_error == Some(true),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use rmcp::model::ContentBlock as Content;

    #[test]
    fn an_is_error_result_is_a_tool_error() {
        let failed = outcome(&CallToolResult::error(vec![Content::text("no such note")]));
        assert_eq!(
            failed,
            ToolOutcome {
                content: "no such note".to_owned(),
                is_error: true
            }
        );
        let done = outcome(&CallToolResult::success(vec![
            Content::text("one"),
            Content::text("two"),
        ]));
        assert_eq!(done.content, "one\ntwo");
        assert!(!done.is_error);
    }

    /// Whether `pid` is still running (a zombie counts as gone).
    fn alive(pid: &str) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
            stat.rsplit(')')
                .next()
                .is_some_and(|rest| !rest.trim_start().starts_with('Z'))
        })
    }

    fn spanned(text: &str) -> crate::source::Spanned<String> {
        crate::source::Spanned::new(text.to_owned(), crate::source::Span::default())
    }

    /// The notes server of the integration tests, offered, called and stopped with the set.
    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn a_server_lives_as_long_as_its_tool_set() {
        tokio::time::timeout(Duration::from_secs(60), server_lifetime())
            .await
            .expect("finished within a minute");
    }

    #[cfg(target_os = "linux")]
    async fn server_lifetime() {
        // Without python3 there is no server to start (the integration tests say so).
        let Ok(python) = which_python() else {
            return;
        };
        let dir = tempfile::tempdir().expect("tempdir");
        let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/mcp/notes_server.py");
        let server = McpServer {
            name: spanned("notes"),
            transport: McpTransport::Stdio {
                command: ["sh", "-c", "echo $$ > server.pid; exec \"$0\" \"$1\""]
                    .iter()
                    .map(|arg| spanned(arg))
                    .chain([spanned(&python), spanned(&script.display().to_string())])
                    .collect(),
            },
            env: vec![crate::ir::McpEnv {
                name: spanned("NOTE_FILE"),
                value: Some(spanned(&dir.path().join("notes.txt").display().to_string())),
            }],
            span: crate::source::Span::default(),
        };
        let tool_env = ToolEnv {
            env: crate::providers::Environment::default()
                .with("PATH", std::env::var("PATH").unwrap_or_default()),
            redactor: crate::providers::Redactor::new(),
            ..ToolEnv::default()
        };
        let start = Start {
            working_dir: dir.path(),
            tool_env: &tool_env,
            hide_env: None,
        };
        let mut tools = super::super::ToolSet::from_grants("anthropic", &[]).expect("empty");
        tools.connect_mcp(&[server], &start).await.expect("started");
        let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_str()).collect();
        assert_eq!(names, ["notes__note"]);
        let call = super::super::ToolCall {
            id: "t1".to_owned(),
            name: "notes__note".to_owned(),
            input: serde_json::json!({"text": "hi"}),
        };
        let done = tools
            .run(&call, dir.path(), Duration::from_secs(10), &tool_env, None)
            .await;
        assert_eq!(done.content, "noted", "{done:?}");
        assert_eq!(
            std::fs::read_to_string(dir.path().join("notes.txt")).expect("noted"),
            "hi token=- leaked=False\n"
        );
        let pid = std::fs::read_to_string(dir.path().join("server.pid")).expect("started");
        let pid = pid.trim();
        assert!(alive(pid));
        drop(tools);
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while alive(pid) && std::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(!alive(pid), "the server {pid} outlived its tool set");
    }

    fn which_python() -> Result<String, ()> {
        std::env::var_os("PATH")
            .and_then(|path| {
                std::env::split_paths(&path)
                    .map(|dir| dir.join("python3"))
                    .find(|candidate| candidate.is_file())
            })
            .map(|found| found.display().to_string())
            .ok_or(())
    }

    #[test]
    fn tool_names_keep_to_what_both_apis_allow() {
        assert_eq!(tool_name("notes", "note"), "notes__note");
        assert_eq!(tool_name("fs", "read.file/v2"), "fs__read_file_v2");
    }
}
