//! `adapter="claude-code"`: the Claude Code CLI, one process per call (protocols.md §2),
//! driven by the agent-CLI driver; this module holds only its dialect.
//!
//! Spawned as `claude -p --input-format stream-json --output-format stream-json --verbose
//! [--model M] [--append-system-prompt S] [--allowedTools A,B] [--permission-mode P]
//! [--max-turns N] [--resume=ID]`; the prompt goes to stdin as one stream-json user
//! message, and stdin is closed unless a person may be asked (`permission="ask"`: then it
//! carries the answers to the CLI's permission requests, `control.rs`). stdout is NDJSON
//! (`stream.rs`); the `result` line gives the reply text, session id, usage, cost and turn
//! count. The agent's plan comes from its `TodoWrite` calls, or from its task tools'
//! results (`tasks.rs`).
//!
//! `base-url=` becomes `ANTHROPIC_BASE_URL`; the key goes in `ANTHROPIC_API_KEY` (or the
//! variable `option "api-key-var"` names, e.g. `ANTHROPIC_AUTH_TOKEN` for gateways).
//! Without a key the CLI uses its own login. Options: `bin`, `pass-env`, `env.NAME`,
//! `max-budget-usd`, `fallback-model`, `settings`, `mcp-config`, `strict-mcp-config`,
//! `disallowed-tools`, `add-dir`, `effort` (the last ones also per agent).

mod control;
mod stream;
mod tasks;

use std::process::ExitStatus;

use serde_json::{Value, json};

use super::agent_cli::{
    BaseUrl, Cli, CliProvider, CliSpec, Dialect, Exit, Flow, Input, Invocation, KeyVar, Program,
};
use super::mcp_config::{PrivateFile, ResolvedMcp, mcp_servers_json};
use super::{
    AgentReply, AgentRequest, Approvals, EventSink, ProviderContext, ProviderError, RetryPolicy,
};
use crate::ir::{PermissionMode, ProviderDecl};
use control::{ControlAnswer, control_response, initialize_with_guard};
use stream::Stream;

const NAME: &str = "claude-code";

/// Where Claude Code reads its reasoning effort (`low` … `max`), set from `option "effort"`.
const EFFORT_VAR: &str = "CLAUDE_CODE_EFFORT_LEVEL";

/// The variable bounding Claude Code's own API retries.
const MAX_RETRIES_VAR: &str = "CLAUDE_CODE_MAX_RETRIES";

const SPEC: CliSpec = CliSpec {
    adapter: NAME,
    program: Program::Npm {
        command: "claude",
        package: "@anthropic-ai/claude-code",
    },
    settings: &[
        "CLAUDE_CONFIG_DIR",
        "ANTHROPIC_BASE_URL",
        "ANTHROPIC_MODEL",
        "ANTHROPIC_SMALL_FAST_MODEL",
        "DISABLE_TELEMETRY",
        "DISABLE_ERROR_REPORTING",
        "DISABLE_AUTOUPDATER",
        "IS_SANDBOX",
    ],
    setting_prefixes: &["CLAUDE_CODE_", "ANTHROPIC_DEFAULT_"],
    credential_vars: &[
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "CLAUDE_CODE_OAUTH_TOKEN",
    ],
    base_url: BaseUrl::Env("ANTHROPIC_BASE_URL"),
    key: KeyVar::Fixed("ANTHROPIC_API_KEY"),
    endpoint: Some("https://api.anthropic.com"),
    defaults: &[("DISABLE_AUTOUPDATER", "1")],
};

/// The Claude Code dialect.
#[derive(Debug)]
pub(crate) struct ClaudeCode;

/// Builds a `claude-code` provider: all it needs is in [`SPEC`].
///
/// # Errors
/// As [`Cli::new`].
pub(crate) fn provider(
    decl: &ProviderDecl,
    cx: &ProviderContext<'_>,
) -> Result<CliProvider<ClaudeCode>, ProviderError> {
    Ok(CliProvider::new(Cli::new(&SPEC, decl, cx)?, ClaudeCode))
}

/// A Claude Code call in progress.
#[derive(Debug)]
pub(crate) struct Call {
    stream: Stream,
    approvals: Approvals,
    /// The agent's MCP servers, in a file only this user reads (their variables may be
    /// secrets), removed when the call ends.
    _mcp_file: Option<PrivateFile>,
}

impl Dialect for ClaudeCode {
    type Call = Call;

    fn prepare(
        &self,
        cli: &Cli,
        request: &AgentRequest,
        mcp: &[ResolvedMcp],
    ) -> Result<(Invocation, Call), ProviderError> {
        let mut args = args(cli, request)?;
        let mcp_file = if mcp.is_empty() {
            None
        } else {
            let file = cli.private_file("atomic-mcp", &mcp_servers_json(mcp).to_string())?;
            args.extend(["--mcp-config".to_owned(), file.path().display().to_string()]);
            Some(file)
        };
        let mut env = Vec::new();
        // Claude Code retries failed API requests by itself (10 times by default, a 401
        // for minutes): bound its loop by the node's retry policy, as atomic's own HTTP
        // adapters are, unless the workflow set the variable itself. The node's timeout
        // still ends it.
        if cli.env().get(MAX_RETRIES_VAR).is_none() {
            let attempts = request
                .limits
                .retry
                .as_ref()
                .map_or(RetryPolicy::model_requests().attempts, |policy| {
                    policy.attempts
                });
            env.push((
                MAX_RETRIES_VAR.to_owned(),
                attempts.saturating_sub(1).to_string(),
            ));
        }
        // Reasoning effort: Claude Code reads it from its environment.
        if let Some(Value::String(effort)) = cli.option(request, "effort") {
            env.push((EFFORT_VAR.to_owned(), effort.clone()));
        }
        let message = json!({
            "type": "user",
            "message": {"role": "user", "content": request.prompt.text},
            "parent_tool_use_id": null,
            "session_id": "",
        });
        // Asking a person, or guarding its tools: stdin stays open for the answers to the
        // CLI's requests (its control protocol). A guard registers a `PreToolUse` hook
        // callback, which the CLI asks before every tool, in every permission mode.
        let guarded = request.hooks.tool_guard.is_some();
        let input = if guarded {
            Input::Conversation(vec![initialize_with_guard(), message])
        } else if request.grants.permission == Some(PermissionMode::Ask) {
            Input::Conversation(vec![message])
        } else {
            Input::Text(format!("{message}\n"))
        };
        let call = Call {
            stream: Stream::default(),
            approvals: request.grants.approvals.clone(),
            _mcp_file: mcp_file,
        };
        // What it writes to its temp directory (`claude-<uid>/`: task output, probe
        // directories it leaves behind) is the call's, removed with the CLI (unless the
        // workflow passes its own `CLAUDE_CODE_TMPDIR`).
        let temp = cli.private_temp_dir(request)?;
        env.push(("TMPDIR".to_owned(), temp.display().to_string()));
        let invocation = Invocation {
            args,
            env,
            input,
            leftovers: vec![temp],
        };
        Ok((invocation, call))
    }

    fn line(&self, _cli: &Cli, call: &mut Call, line: &Value, events: &dyn EventSink) -> Flow {
        if line.get("type").and_then(Value::as_str) == Some("control_request") {
            return match control_response(line, &mut call.approvals, events) {
                ControlAnswer::Pause(ask) => Flow::Pause {
                    ask,
                    session_id: call.stream.session_id.clone(),
                },
                ControlAnswer::Reply(response) => Flow::Reply(response),
                ControlAnswer::Guard(check, reply) => Flow::Guard { check, reply },
            };
        }
        call.stream.handle(line, events);
        if call.stream.result.is_some() {
            Flow::Done
        } else {
            Flow::Continue
        }
    }

    fn finish(
        &self,
        cli: &Cli,
        mut call: Call,
        exit: Exit,
        events: &dyn EventSink,
    ) -> Result<AgentReply, ProviderError> {
        // The result line is authoritative; the exit status only goes into a failure's
        // message.
        let Some(result) = call.stream.result.take() else {
            if exit.status.is_ok() && exit.stderr.contains("cannot be used with root/sudo") {
                return Err(ProviderError::config(
                    NAME,
                    format!(
                        "{}; use `permission=\"accept-edits\"` with granted tools, or run \
                         atomic as a non-root user",
                        exit.stderr
                    ),
                ));
            }
            return Err(exit.unfinished(NAME, "a result line"));
        };
        call.stream.finish(
            result,
            events,
            (
                cli.credentials(),
                &exit.stderr,
                exit.status.as_ref().ok().and_then(ExitStatus::code),
            ),
        )
    }
}

/// The command-line arguments for one call.
fn args(cli: &Cli, request: &AgentRequest) -> Result<Vec<String>, ProviderError> {
    let mut args: Vec<String> = [
        "-p",
        "--input-format",
        "stream-json",
        "--output-format",
        "stream-json",
        "--verbose",
    ]
    .map(str::to_owned)
    .to_vec();
    if let Some(model) = cli.model(request) {
        args.extend(["--model".to_owned(), model]);
    }
    if let Some(system) = request.prompt.system.as_ref().filter(|s| !s.is_empty()) {
        args.extend(["--append-system-prompt".to_owned(), system.clone()]);
    }
    // Tools a person allowed for the run (`permission="ask"`) are granted like the node's
    // own.
    let names: Vec<&str> = request
        .grants
        .tools
        .iter()
        .map(|tool| tool.name.as_str())
        .chain(request.grants.approvals.tools.iter().map(String::as_str))
        .collect();
    if !names.is_empty() {
        args.extend(["--allowedTools".to_owned(), names.join(",")]);
    }
    if let Some(mode) = request.grants.permission {
        args.extend([
            "--permission-mode".to_owned(),
            permission_mode(mode).to_owned(),
        ]);
        if mode == PermissionMode::Ask {
            args.extend(["--permission-prompt-tool".to_owned(), "stdio".to_owned()]);
        }
    }
    if let Some(turns) = request.limits.max_turns {
        args.extend(["--max-turns".to_owned(), turns.to_string()]);
    }
    if let Some(session) = &request.session.resume {
        args.push(format!("--resume={session}"));
        if request.session.fork {
            // A new session id from the old session's history: the old one stays as it was.
            args.push("--fork-session".to_owned());
        }
    }
    for (option, flag) in [
        ("max-budget-usd", "--max-budget-usd"),
        ("fallback-model", "--fallback-model"),
        ("settings", "--settings"),
        ("mcp-config", "--mcp-config"),
        ("disallowed-tools", "--disallowedTools"),
        ("add-dir", "--add-dir"),
    ] {
        match cli.option(request, option) {
            None => {}
            Some(Value::String(text)) => args.extend([flag.to_owned(), text.clone()]),
            Some(Value::Number(number)) => args.extend([flag.to_owned(), number.to_string()]),
            Some(_) => {
                return Err(ProviderError::config(
                    NAME,
                    format!("option `{option}` must be a string or number"),
                ));
            }
        }
    }
    // The node's `budget-usd`, or what is left of the run's `max-budget-usd` when that is
    // less, stops Claude Code itself once spent (an explicit `max-budget-usd` option wins).
    let budget = match (
        request.limits.budget_usd,
        request.limits.run_budget_left_usd,
    ) {
        (Some(node), Some(run)) => Some(node.min(run)),
        (node, run) => node.or(run),
    };
    if let (None, Some(budget)) = (cli.option(request, "max-budget-usd"), budget) {
        args.extend(["--max-budget-usd".to_owned(), budget.to_string()]);
    }
    if cli.option(request, "strict-mcp-config") == Some(&Value::Bool(true)) {
        args.push("--strict-mcp-config".to_owned());
    }
    Ok(args)
}

/// The CLI's spelling of a permission mode.
fn permission_mode(mode: PermissionMode) -> &'static str {
    match mode {
        PermissionMode::Default => "default",
        PermissionMode::AcceptEdits => "acceptEdits",
        PermissionMode::Bypass => "bypassPermissions",
        PermissionMode::Plan => "plan",
        // What the granted tools do not cover is asked through the control protocol.
        PermissionMode::Ask => "default",
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::providers::registry::test_decl;
    use crate::providers::{Continuation, Grants, Limits, Prompt};
    use crate::providers::{Environment, ToolGrant};
    use crate::source::{Span, Spanned};

    fn cli(options: &[(&str, Value)]) -> Cli {
        let mut decl = test_decl("c", NAME);
        decl.model = Some(Spanned::new("sonnet".to_owned(), Span::default()));
        decl.options
            .insert("bin".to_owned(), Value::String("/bin/sh".to_owned()));
        for (name, value) in options {
            decl.options.insert((*name).to_owned(), value.clone());
        }
        let env = Environment::default();
        Cli::new(&SPEC, &decl, &ProviderContext::new(Path::new("."), &env)).expect("configured")
    }

    #[test]
    fn args_follow_the_request() {
        let request = AgentRequest {
            prompt: Prompt {
                text: "hi".to_owned(),
                system: Some("Be terse.".to_owned()),
            },
            session: Continuation {
                resume: Some("-abc".to_owned()),
                ..Continuation::default()
            },
            grants: Grants {
                tools: vec![ToolGrant {
                    name: "Edit".to_owned(),
                    timeout: None,
                    description: None,
                    input_schema: None,
                    command: Vec::new(),
                }],
                permission: Some(PermissionMode::AcceptEdits),
                ..Grants::default()
            },
            limits: Limits {
                max_turns: Some(4),
                ..Limits::default()
            },
            ..AgentRequest::default()
        };
        let args = args(&cli(&[]), &request).expect("valid");
        assert_eq!(
            args.join(" "),
            "-p --input-format stream-json --output-format stream-json --verbose --model sonnet \
             --append-system-prompt Be terse. --allowedTools Edit --permission-mode acceptEdits \
             --max-turns 4 --resume=-abc"
        );
    }

    #[test]
    fn a_nodes_budget_becomes_claude_codes_own_limit() {
        let plain = cli(&[]);
        let request = AgentRequest {
            limits: Limits {
                budget_usd: Some(0.25),
                ..Limits::default()
            },
            ..AgentRequest::default()
        };
        let line = |cli: &Cli, request: &AgentRequest| args(cli, request).expect("valid").join(" ");
        assert!(line(&plain, &request).ends_with("--max-budget-usd 0.25"));
        // An explicit option wins.
        let explicit = cli(&[("max-budget-usd", json!(1))]);
        let args = line(&explicit, &request);
        assert!(
            args.ends_with("--max-budget-usd 1") && !args.contains("0.25"),
            "{args}"
        );
        // What is left of the run's budget, when it is less than the node's.
        let request = AgentRequest {
            limits: Limits {
                budget_usd: Some(0.25),
                run_budget_left_usd: Some(0.1),
                ..Limits::default()
            },
            ..AgentRequest::default()
        };
        assert!(line(&plain, &request).ends_with("--max-budget-usd 0.1"));
        let request = AgentRequest {
            limits: Limits {
                run_budget_left_usd: Some(0.5),
                ..Limits::default()
            },
            ..AgentRequest::default()
        };
        assert!(line(&plain, &request).ends_with("--max-budget-usd 0.5"));
    }

    #[test]
    fn custom_tools_are_refused_by_the_adapter_table() {
        let request = AgentRequest {
            grants: Grants {
                tools: vec![ToolGrant {
                    name: "deploy".to_owned(),
                    timeout: None,
                    description: None,
                    input_schema: None,
                    command: vec!["./deploy".to_owned()],
                }],
                ..Grants::default()
            },
            ..AgentRequest::default()
        };
        let error = cli(&[]).refuse_unsupported(&request).expect_err("refused");
        assert!(
            error
                .to_string()
                .contains("custom tool `deploy` cannot be given"),
            "{error}"
        );
    }
}
