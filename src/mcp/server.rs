//! The MCP server: discovery of what to serve, `tools/list` and `tools/call` over the
//! custom-tool runner the tool loop uses, and the stdio transport.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::Value;

use crate::diagnostic::Diagnostic;
use crate::ir::CustomTool;
use crate::providers::{ToolCall, ToolEnv, ToolGrant, ToolSet};
use crate::registry::{discover_tools, tool_dirs};
use crate::source::{Files, SourceId, Sources};

/// The longest a call may run when its tool sets no `timeout`: the HTTP adapters'
/// `tool-timeout` default.
pub const DEFAULT_TOOL_TIMEOUT: Duration = Duration::from_secs(600);

/// The adapter name the runner puts in its errors.
const ADAPTER: &str = "mcp";

/// What discovery found for the project at a root.
#[derive(Debug)]
pub struct Discovered {
    /// The tools to serve: those whose files have no errors, sorted by name.
    pub tools: Vec<CustomTool>,
    /// The tool files read, for rendering `problems`.
    pub sources: Sources,
    /// Every problem in the tool files; a tool whose file has an error is not served.
    pub problems: Vec<Diagnostic>,
}

/// The custom tools a workflow at `root` would see: `root`'s `.atomic/tools/` (or the
/// nearest above it, as for workflows) over `user_dir/tools` (`user_dir` is `~/.atomic`).
/// A file with an error does not hide the others: its tool is left out, and the problem
/// is in [`Discovered::problems`].
#[must_use]
pub fn discover(files: &dyn Files, root: &Path, user_dir: Option<&Path>) -> Discovered {
    // `tool_dirs` starts from a workflow's path; a file at the root finds the root's tools.
    let dirs = tool_dirs(files, &root.join("mcp.kdl"), user_dir);
    let mut sources = Sources::new();
    let found = discover_tools(&mut sources, files, &dirs);
    // A tool file with an error may still resolve (say, with its schema file missing, to
    // a tool taking no arguments); serving that would run it with the wrong contract.
    let broken: HashSet<SourceId> = found
        .diagnostics
        .iter()
        .filter(|problem| problem.is_error())
        .map(|problem| problem.span.source)
        .collect();
    let tools = found
        .value
        .unwrap_or_default()
        .into_iter()
        .filter(|tool| !broken.contains(&tool.span.source))
        .collect();
    Discovered {
        tools,
        sources,
        problems: found.diagnostics,
    }
}

/// The server: the tools as MCP lists them, and the runner that calls them.
#[derive(Debug)]
pub struct ToolServer {
    tools: ToolSet,
    listed: Vec<Tool>,
    working_dir: PathBuf,
    tool_env: ToolEnv,
}

impl ToolServer {
    /// Serves `tools`, each run in `working_dir` with `tool_env` (its environment and the
    /// secrets redacted from its output). A tool the runner refuses (a schema that cannot
    /// be compiled) is left out; the second value says why, one message per tool.
    #[must_use]
    pub fn new(
        tools: &[CustomTool],
        working_dir: PathBuf,
        tool_env: ToolEnv,
    ) -> (Self, Vec<String>) {
        let mut grants = Vec::with_capacity(tools.len());
        let mut problems = Vec::new();
        for tool in tools {
            let grant = ToolGrant {
                name: tool.name.value.clone(),
                description: tool.description.clone(),
                input_schema: Some(tool.schema.clone()),
                command: tool.command.clone(),
                timeout: tool.timeout.as_ref().map(|timeout| timeout.value.to_std()),
            };
            // Checked alone, so one unusable tool does not take the others down.
            match ToolSet::from_grants(ADAPTER, std::slice::from_ref(&grant)) {
                Ok(_) => grants.push(grant),
                Err(error) => {
                    problems.push(format!("tool `{}` is not served: {error}", grant.name))
                }
            }
        }
        let tools = ToolSet::from_grants(ADAPTER, &grants)
            .expect("every grant was accepted alone, and discovery gives each name once");
        let listed = tools
            .iter()
            .map(|tool| {
                // The registry only returns object schemas.
                let schema = tool.input_schema.as_object().cloned().unwrap_or_default();
                Tool::new(tool.name.clone(), tool.description.clone(), schema)
            })
            .collect();
        let server = Self {
            tools,
            listed,
            working_dir,
            tool_env,
        };
        (server, problems)
    }

    /// The names served, in order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.listed.iter().map(|tool| tool.name.as_ref())
    }
}

impl ServerHandler for ToolServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("atomic", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "The project's custom tools (.atomic/tools/*.kdl). Each runs a command in the \
                 project with the call's arguments as JSON on stdin; its stdout is the result.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.listed.clone()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.listed.iter().find(|tool| tool.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if self.get_tool(&request.name).is_none() {
            // The protocol's answer to a name the server does not have (not a tool error).
            let names: Vec<&str> = self.names().collect();
            return Err(ErrorData::invalid_params(
                format!(
                    "unknown tool `{}`; this server has: {}",
                    request.name,
                    if names.is_empty() {
                        "no tools (add `.atomic/tools/<name>.kdl` files)".to_owned()
                    } else {
                        names.join(", ")
                    }
                ),
                None,
            ));
        }
        let call = ToolCall {
            id: context.id.to_string(),
            name: request.name.to_string(),
            input: Value::Object(request.arguments.unwrap_or_default()),
        };
        let run = self.tools.run(
            &call,
            &self.working_dir,
            DEFAULT_TOOL_TIMEOUT,
            &self.tool_env,
            None,
        );
        // Dropping the run kills the tool's process group.
        let outcome = tokio::select! {
            biased;
            () = context.ct.cancelled() => {
                tracing::info!(tool = %call.name, "tool call cancelled by the client");
                return Err(ErrorData::internal_error("the call was cancelled", None));
            }
            outcome = run => outcome,
        };
        tracing::info!(tool = %call.name, is_error = outcome.is_error, "tool call finished");
        let content = vec![ContentBlock::text(outcome.content)];
        let result = if outcome.is_error {
            CallToolResult::error(content)
        } else {
            CallToolResult::success(content)
        };
        Ok(result.into())
    }
}

/// Serves `server` on stdin/stdout until the client closes stdin.
///
/// # Errors
/// When the client does not complete the protocol's initialization.
pub async fn serve_stdio(server: ToolServer) -> Result<(), String> {
    let running = server
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|error| format!("the MCP client did not initialize the session: {error}"))?;
    running
        .waiting()
        .await
        .map_err(|error| format!("the MCP session ended abnormally: {error}"))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::diagnostic::Code;
    use crate::source::MemoryFiles;

    #[test]
    fn a_broken_tool_file_hides_only_its_own_tool() {
        let mut files = MemoryFiles::new();
        files.insert(
            "/p/.atomic/tools/ok.kdl",
            r#"tool "ok" description="Fine" { argument "a"; command "cat"; }"#,
        );
        files.insert(
            "/p/.atomic/tools/schema.kdl",
            r#"tool "schema" schema="missing.json" { command "cat"; }"#,
        );
        files.insert("/p/.atomic/tools/junk.kdl", r#"tool "junk" {"#);
        files.insert(
            "/home/u/.atomic/tools/ok.kdl",
            r#"tool "ok" { command "user-ok"; }"#,
        );
        files.insert(
            "/home/u/.atomic/tools/mine.kdl",
            r#"tool "mine" { command "user-mine"; }"#,
        );
        let found = discover(&files, Path::new("/p"), Some(Path::new("/home/u/.atomic")));
        let served: Vec<(&str, &str)> = found
            .tools
            .iter()
            .map(|tool| (tool.name.value.as_str(), tool.command[0].as_str()))
            .collect();
        assert_eq!(served, [("mine", "user-mine"), ("ok", "cat")]);
        let codes: Vec<Code> = found.problems.iter().map(|problem| problem.code).collect();
        assert!(codes.contains(&Code::MissingSchemaFile), "{codes:?}");
        assert!(codes.contains(&Code::UnclosedBlock), "{codes:?}");
    }

    #[test]
    fn the_listing_is_what_the_tool_loop_shows_the_model() {
        let mut files = MemoryFiles::new();
        files.insert(
            "/p/.atomic/tools/edit.kdl",
            r#"tool "edit" description="Edits" { argument "text" type="string"; command "cat"; timeout "5s"; }"#,
        );
        files.insert(
            "/p/.atomic/tools/bare.kdl",
            r#"tool "bare" { command "ls" "-l"; }"#,
        );
        let found = discover(&files, Path::new("/p"), None);
        let (server, problems) =
            ToolServer::new(&found.tools, PathBuf::from("/p"), ToolEnv::default());
        assert_eq!(problems, Vec::<String>::new());
        let listed: Vec<Value> = server
            .listed
            .iter()
            .map(|tool| serde_json::to_value(tool).expect("serializable"))
            .collect();
        assert_eq!(listed[0]["name"], "bare");
        // The runner's default description, as the model sees it in the tool loop.
        assert_eq!(listed[0]["description"], "Runs `ls -l`.");
        assert_eq!(listed[1]["name"], "edit");
        assert_eq!(
            listed[1]["inputSchema"],
            json!({
                "type": "object",
                "properties": {"text": {"type": "string"}},
                "required": ["text"],
                "additionalProperties": false,
            })
        );
    }

    #[test]
    fn a_schema_the_runner_cannot_compile_is_left_out_with_the_reason() {
        let mut unusable = discover(
            &{
                let mut files = MemoryFiles::new();
                files.insert("/p/.atomic/tools/a.kdl", r#"tool "a" { command "cat"; }"#);
                files.insert("/p/.atomic/tools/b.kdl", r#"tool "b" { command "cat"; }"#);
                files
            },
            Path::new("/p"),
            None,
        )
        .tools;
        // A `$ref` to a remote document: resolving it would need the network.
        unusable[1].schema = json!({"type": "object", "properties": {"x": {"$ref": "https://example.invalid/s.json"}}});
        let (server, problems) =
            ToolServer::new(&unusable, PathBuf::from("/p"), ToolEnv::default());
        assert_eq!(server.names().collect::<Vec<_>>(), ["a"]);
        assert_eq!(problems.len(), 1);
        assert!(
            problems[0].starts_with("tool `b` is not served:")
                && problems[0].contains("the input schema of tool `b` cannot be used"),
            "{problems:?}"
        );
    }
}
