//! Custom tools granted to an agent: each is a command that gets the tool input as JSON
//! on stdin and answers on stdout. A non-zero exit is a tool error the model is shown, not
//! a failure of the call, so the model can react to it; so is input that does not match
//! the tool's schema, which never reaches the command. `atomic mcp` runs its tools through
//! the same [`ToolSet`], so both callers get the same checks, environment and redaction.
//! The tools of the agent's MCP servers join the set (`super::mcp`), and their calls take
//! the same path: schema check, timeout, redaction; a result marked `isError` is a tool error.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::mcp::{self, Connection};
use crate::ir::McpServer;
use crate::process::Launch;
use crate::providers::{ProviderError, ToolEnv, ToolGrant, ToolGuard, child};

/// Most characters of tool output sent back to the model.
const MAX_OUTPUT: usize = 100_000;
/// Most characters of a tool result in a `ToolComplete` summary.
/// The tools of one call.
#[derive(Clone, Debug)]
pub(crate) struct ToolSet {
    adapter: &'static str,
    tools: Vec<CustomTool>,
}

/// One tool the model may call.
#[derive(Clone, Debug)]
pub(crate) struct CustomTool {
    /// The name the model sees.
    pub(crate) name: String,
    /// What it does.
    pub(crate) description: String,
    /// JSON Schema of its input (an object schema).
    pub(crate) input_schema: Value,
    command: Vec<String>,
    /// Its own limit, over the call's default.
    timeout: Option<Duration>,
    /// `input_schema`, compiled once for every call.
    validator: Arc<jsonschema::Validator>,
    /// For a tool of an MCP server: the server, and the tool's name there (the command is
    /// then empty).
    mcp: Option<(Arc<Connection>, String)>,
}

/// A tool call the model made.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ToolCall {
    /// The backend's call id.
    pub(crate) id: String,
    /// The tool's name.
    pub(crate) name: String,
    /// Its input.
    pub(crate) input: Value,
}

/// What a tool answered.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ToolOutcome {
    /// The text the model sees.
    pub(crate) content: String,
    /// Whether the tool failed.
    pub(crate) is_error: bool,
}

impl ToolOutcome {
    fn error(content: String) -> Self {
        Self {
            content,
            is_error: true,
        }
    }

    /// A tool call the tool guard refused: an error the model sees, saying why.
    pub(crate) fn refused(name: &str, reason: &str) -> Self {
        Self::error(ToolGuard::refusal(name, reason))
    }

    /// The `ToolComplete` summary.
    pub(crate) fn summary(&self) -> String {
        crate::providers::tool_summary(&self.content)
    }
}

impl ToolSet {
    /// The granted tools. HTTP model APIs have no built-in tools, so a grant without a
    /// command is refused.
    pub(crate) fn from_grants(
        adapter: &'static str,
        grants: &[ToolGrant],
    ) -> Result<Self, ProviderError> {
        let mut tools: Vec<CustomTool> = Vec::with_capacity(grants.len());
        for grant in grants {
            if grant.command.is_empty() {
                return Err(ProviderError::config(
                    adapter,
                    format!(
                        "`{adapter}` has no built-in tool `{}`; give the tool a command to run",
                        grant.name
                    ),
                ));
            }
            if tools.iter().any(|tool| tool.name == grant.name) {
                return Err(ProviderError::config(
                    adapter,
                    format!("tool `{}` is granted twice", grant.name),
                ));
            }
            let input_schema = grant
                .input_schema
                .clone()
                .unwrap_or_else(|| json!({"type": "object", "properties": {}}));
            // The registry checked the schema against the meta-schema; what can still fail
            // here is a `$ref` that cannot be resolved offline.
            let validator = jsonschema::validator_for(&input_schema).map_err(|error| {
                ProviderError::config(
                    adapter,
                    format!(
                        "the input schema of tool `{}` cannot be used: {error}; fix the tool's \
                         `argument`s or its `schema=` file",
                        grant.name
                    ),
                )
            })?;
            tools.push(CustomTool {
                name: grant.name.clone(),
                description: grant
                    .description
                    .clone()
                    .unwrap_or_else(|| format!("Runs `{}`.", grant.command.join(" "))),
                input_schema,
                command: grant.command.clone(),
                timeout: grant.timeout,
                validator: Arc::new(validator),
                mcp: None,
            });
        }
        Ok(Self { adapter, tools })
    }

    /// Starts the agent's MCP `servers` and adds their tools, named `<server>__<tool>`,
    /// after the granted ones. The servers run until the last clone of the set is dropped.
    ///
    /// # Errors
    /// [`ProviderError::Config`] naming the server: one that cannot be started or does not
    /// initialize (see [`mcp::connect`]), or a tool whose name is too long, taken, or whose
    /// input schema cannot be used.
    pub(crate) async fn connect_mcp(
        &mut self,
        servers: &[McpServer],
        start: &mcp::Start<'_>,
    ) -> Result<(), ProviderError> {
        let adapter = self.adapter;
        for server in servers {
            let (connection, listed) = mcp::connect(adapter, server, start).await?;
            let server_name = &connection.name;
            for tool in listed {
                let name = mcp::tool_name(server_name, &tool.name);
                let refuse = |why: String| {
                    ProviderError::config(
                        adapter,
                        format!("tool `{}` of MCP server `{server_name}` {why}", tool.name),
                    )
                };
                if name.len() > mcp::MAX_TOOL_NAME {
                    return Err(refuse(format!(
                        "cannot be offered: `{name}` is longer than the {} characters a tool \
                         name may have; give the server a shorter name",
                        mcp::MAX_TOOL_NAME
                    )));
                }
                if self.tools.iter().any(|known| known.name == name) {
                    return Err(refuse(format!(
                        "cannot be offered: the name `{name}` is taken; rename the server or \
                         the custom tool"
                    )));
                }
                let input_schema = Value::Object((*tool.input_schema).clone());
                let validator = jsonschema::validator_for(&input_schema).map_err(|error| {
                    refuse(format!("has an input schema that cannot be used: {error}"))
                })?;
                let description = tool
                    .description
                    .as_deref()
                    .or(tool.title.as_deref())
                    .map_or_else(
                        || format!("Tool `{}` of MCP server `{server_name}`.", tool.name),
                        str::to_owned,
                    );
                self.tools.push(CustomTool {
                    name,
                    description,
                    input_schema,
                    command: Vec::new(),
                    timeout: None,
                    validator: Arc::new(validator),
                    mcp: Some((Arc::clone(&connection), tool.name.to_string())),
                });
            }
        }
        Ok(())
    }

    /// The tools, in grant order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &CustomTool> {
        self.tools.iter()
    }

    /// Whether no tool is granted.
    pub(crate) fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// Runs `call` in `working_dir` with exactly the environment of `tool_env` (never
    /// atomic's own, which holds the provider keys), minus the variable named by `hide_env`
    /// (the provider's API key). Input that does not match the tool's schema is refused
    /// before anything runs, saying which argument is wrong. What it prints is redacted
    /// before the model sees it. Dropping the future kills the tool.
    pub(crate) async fn run(
        &self,
        call: &ToolCall,
        working_dir: &Path,
        timeout: Duration,
        tool_env: &ToolEnv,
        hide_env: Option<&str>,
    ) -> ToolOutcome {
        let Some(tool) = self.tools.iter().find(|tool| tool.name == call.name) else {
            let names: Vec<&str> = self.tools.iter().map(|tool| tool.name.as_str()).collect();
            return ToolOutcome::error(format!(
                "unknown tool `{}`; the tools are: {}",
                call.name,
                names.join(", ")
            ));
        };
        if let Some(problems) = tool.input_problems(&call.input) {
            let mut outcome = ToolOutcome::error(problems);
            // The input is the caller's own, but may quote a secret all the same.
            if let std::borrow::Cow::Owned(clean) = tool_env.redactor.redact(&outcome.content) {
                outcome.content = clean;
            }
            return outcome;
        }
        let timeout = tool.timeout.unwrap_or(timeout);
        let run = async {
            match &tool.mcp {
                Some((server, name)) => {
                    let mut outcome = server.call(name, &call.input).await;
                    outcome.content = truncate(&outcome.content, MAX_OUTPUT);
                    outcome
                }
                None => {
                    tool.execute(
                        self.adapter,
                        &call.input,
                        working_dir,
                        (tool_env, hide_env),
                        timeout,
                    )
                    .await
                }
            }
        };
        let mut outcome = match tokio::time::timeout(timeout, run).await {
            Ok(outcome) => outcome,
            Err(_elapsed) => {
                ToolOutcome::error(format!("tool `{}` timed out after {timeout:?}", tool.name))
            }
        };
        if let std::borrow::Cow::Owned(clean) = tool_env.redactor.redact(&outcome.content) {
            outcome.content = clean;
        }
        outcome
    }
}

impl CustomTool {
    /// How `input` breaks the tool's schema (the first few ways, each at the argument it
    /// concerns), or `None` when it matches.
    fn input_problems(&self, input: &Value) -> Option<String> {
        let problems: Vec<String> = self
            .validator
            .iter_errors(input)
            .take(3)
            .map(|error| {
                let at = error.instance_path().to_string();
                match at.strip_prefix('/') {
                    Some(argument) => format!("argument `{argument}`: {error}"),
                    None => error.to_string(),
                }
            })
            .collect();
        (!problems.is_empty()).then(|| {
            format!(
                "invalid input for tool `{}`: {}; its input schema is {}",
                self.name,
                problems.join("; "),
                self.input_schema
            )
        })
    }

    async fn execute(
        &self,
        adapter: &'static str,
        input: &Value,
        working_dir: &Path,
        (tool_env, hide_env): (&ToolEnv, Option<&str>),
        timeout: Duration,
    ) -> ToolOutcome {
        let (program, args) = self.command.split_first().expect("grants have a command");
        let launch = Launch::new(program)
            .args(args.iter().cloned())
            .cwd(working_dir)
            .envs(
                tool_env
                    .env
                    .iter()
                    .filter(|(name, _)| Some(*name) != hide_env),
            );
        let launch = tool_env.confine(launch);
        // Its own process group: dropping `group` (a cancelled call, a timeout) ends the
        // tool and everything it started.
        let mut group = match child::spawn(adapter, tool_env.spawner.as_ref(), launch) {
            Ok(group) => group,
            Err(error) => {
                return ToolOutcome::error(format!("cannot run `{program}`: {error}"));
            }
        };
        let stdin = group.take_stdin();
        let stdout = group.take_stdout();
        let input = input.to_string();
        let write = async move {
            if let Some(mut stdin) = stdin {
                // A tool that exits without reading its input is not an error.
                let _ = stdin.write_all(input.as_bytes()).await;
                let _ = stdin.shutdown().await;
            }
        };
        let mut bytes = Vec::new();
        let status = {
            let reading = async {
                if let Some(mut stdout) = stdout {
                    let _ = stdout.read_to_end(&mut bytes).await;
                }
            };
            let waiting = async {
                write.await;
                child::wait(adapter, &mut group, timeout).await
            };
            // A process the tool left running may hold its output open: not waited for.
            crate::process::read_until_exit(reading, waiting).await
        };
        let status = match status {
            Ok(status) => status,
            Err(error) => return ToolOutcome::error(format!("`{}` failed: {error}", self.name)),
        };
        let stdout = String::from_utf8_lossy(&bytes);
        if status.success() {
            return ToolOutcome {
                content: truncate(&stdout, MAX_OUTPUT),
                is_error: false,
            };
        }
        let stderr = group.stderr_tail();
        let status = status
            .code()
            .map_or_else(|| "a signal".to_owned(), |code| format!("code {code}"));
        let mut content = format!("`{}` exited with {status}", self.name);
        for (label, text) in [("stdout", stdout.trim()), ("stderr", stderr.trim())] {
            if !text.is_empty() {
                content.push_str(&format!("\n{label}:\n{text}"));
            }
        }
        ToolOutcome::error(truncate(&content, MAX_OUTPUT))
    }
}

/// At most `max` characters, marked when cut.
fn truncate(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grant(name: &str, command: &[&str]) -> ToolGrant {
        ToolGrant {
            timeout: None,
            name: name.to_owned(),
            description: None,
            input_schema: None,
            command: command.iter().map(|part| (*part).to_owned()).collect(),
        }
    }

    fn call(name: &str, input: Value) -> ToolCall {
        ToolCall {
            id: "t1".to_owned(),
            name: name.to_owned(),
            input,
        }
    }

    #[test]
    fn built_in_names_are_refused() {
        let error =
            ToolSet::from_grants("anthropic", &[grant("Read", &[])]).expect_err("no command");
        assert!(
            error.to_string().contains("no built-in tool `Read`"),
            "{error}"
        );
    }

    #[tokio::test]
    async fn input_on_stdin_output_on_stdout() {
        let tools = ToolSet::from_grants("anthropic", &[grant("echo", &["cat"])]).expect("valid");
        let dir = std::env::temp_dir();
        let outcome = tools
            .run(
                &call("echo", json!({"a": 1})),
                &dir,
                Duration::from_secs(10),
                &ToolEnv::default(),
                None,
            )
            .await;
        assert_eq!(
            outcome,
            ToolOutcome {
                content: r#"{"a":1}"#.to_owned(),
                is_error: false
            }
        );
    }

    #[tokio::test]
    async fn input_that_breaks_the_schema_never_reaches_the_command() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut edit = grant("edit", &["sh", "-c", "cat > ran.json"]);
        edit.input_schema = Some(json!({
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
            "additionalProperties": false,
        }));
        let tools = ToolSet::from_grants("anthropic", &[edit]).expect("valid");
        let limit = Duration::from_secs(10);
        let env = ToolEnv::default();
        let wrong_type = tools
            .run(
                &call("edit", json!({"text": 5})),
                dir.path(),
                limit,
                &env,
                None,
            )
            .await;
        assert!(wrong_type.is_error, "{wrong_type:?}");
        assert!(
            wrong_type
                .content
                .starts_with("invalid input for tool `edit`: argument `text`: 5 is not of type"),
            "{}",
            wrong_type.content
        );
        let missing = tools
            .run(
                &call("edit", json!({"txt": "x"})),
                dir.path(),
                limit,
                &env,
                None,
            )
            .await;
        assert!(
            missing.content.contains(r#""text" is a required property"#)
                && missing.content.contains("'txt' was unexpected"),
            "{}",
            missing.content
        );
        assert!(!dir.path().join("ran.json").exists(), "the command ran");
        let valid = tools
            .run(
                &call("edit", json!({"text": "x"})),
                dir.path(),
                limit,
                &env,
                None,
            )
            .await;
        assert!(!valid.is_error, "{valid:?}");
        assert_eq!(
            std::fs::read_to_string(dir.path().join("ran.json")).expect("ran"),
            r#"{"text":"x"}"#
        );
    }

    #[tokio::test]
    async fn failures_are_tool_errors() {
        let tools = ToolSet::from_grants(
            "anthropic",
            &[
                grant("fail", &["sh", "-c", "echo out; echo bad >&2; exit 3"]),
                grant("slow", &["sleep", "5"]),
                grant("missing", &["/nonexistent/tool"]),
            ],
        )
        .expect("valid");
        let dir = std::env::temp_dir();
        let limit = Duration::from_secs(10);
        let failed = tools
            .run(
                &call("fail", json!({})),
                &dir,
                limit,
                &ToolEnv::default(),
                None,
            )
            .await;
        assert!(failed.is_error);
        assert_eq!(
            failed.content,
            "`fail` exited with code 3\nstdout:\nout\nstderr:\nbad"
        );
        assert_eq!(failed.summary(), "`fail` exited with code 3");
        let slow = tools
            .run(
                &call("slow", json!({})),
                &dir,
                Duration::from_millis(50),
                &ToolEnv::default(),
                None,
            )
            .await;
        assert!(
            slow.is_error && slow.content.contains("timed out"),
            "{slow:?}"
        );
        let missing = tools
            .run(
                &call("missing", json!({})),
                &dir,
                limit,
                &ToolEnv::default(),
                None,
            )
            .await;
        assert!(
            missing.is_error && missing.content.contains("cannot run"),
            "{missing:?}"
        );
        let unknown = tools
            .run(
                &call("nope", json!({})),
                &dir,
                limit,
                &ToolEnv::default(),
                None,
            )
            .await;
        assert!(unknown.is_error && unknown.content.contains("unknown tool `nope`"));
    }

    #[tokio::test]
    async fn tools_get_exactly_their_environment_and_their_output_is_redacted() {
        let tools = ToolSet::from_grants(
            "anthropic",
            &[grant(
                "env",
                &[
                    "/bin/sh",
                    "-c",
                    "echo ${VISIBLE:-unset} ${MY_KEY:-unset} ${CARGO_PKG_NAME:-unset}",
                ],
            )],
        )
        .expect("valid");
        let dir = std::env::temp_dir();
        let limit = Duration::from_secs(10);
        let tool_env = ToolEnv {
            env: crate::providers::Environment::default()
                .with("VISIBLE", "seen")
                .with("MY_KEY", "sk-live-0123456789"),
            redactor: crate::providers::Redactor::new().with_secret("sk-live-0123456789"),
            ..ToolEnv::default()
        };
        let shown = tools
            .run(&call("env", json!({})), &dir, limit, &tool_env, None)
            .await;
        // atomic's own environment (which has CARGO_PKG_NAME under cargo) is not inherited,
        // and a secret a tool prints never reaches the model.
        assert_eq!(shown.content.trim(), "seen [REDACTED] unset");
        let hidden = tools
            .run(
                &call("env", json!({})),
                &dir,
                limit,
                &tool_env,
                Some("MY_KEY"),
            )
            .await;
        assert_eq!(hidden.content.trim(), "seen unset unset");
    }

    /// Whether `pid` is still running (a zombie counts as gone).
    fn alive(pid: &str) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
            stat.rsplit(')')
                .next()
                .is_some_and(|rest| !rest.trim_start().starts_with('Z'))
        })
    }

    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn a_timed_out_tool_takes_its_children_with_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        let tools = ToolSet::from_grants(
            "anthropic",
            &[grant(
                "spawner",
                &["sh", "-c", "sleep 30 & echo $! > child.pid; wait"],
            )],
        )
        .expect("valid");
        let outcome = tools
            .run(
                &call("spawner", json!({})),
                dir.path(),
                Duration::from_millis(300),
                &ToolEnv::default(),
                None,
            )
            .await;
        assert!(
            outcome.is_error && outcome.content.contains("timed out"),
            "{outcome:?}"
        );
        let pid = std::fs::read_to_string(dir.path().join("child.pid")).expect("the child started");
        let pid = pid.trim();
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while alive(pid) && std::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(!alive(pid), "the tool's child {pid} outlived it");
    }
}
