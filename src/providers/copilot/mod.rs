//! `adapter="copilot"`: the GitHub Copilot CLI in its non-interactive JSONL mode, one process
//! per call (protocols.md §4, "non-interactive alternative", checked against the pinned CLI),
//! driven by the agent-CLI driver; this module holds only its dialect.
//!
//! Spawned as `copilot -p <prompt> --output-format json --no-auto-update --no-ask-user
//! [--model M] [--session-id <new uuid> | --resume=<id>] [--allow-all | --allow-tool …]
//! --usage-output-file <tmp>` in the node's working directory. stdout is one session event
//! per line (`assistant.message_delta`, `assistant.message`, `tool.execution_start`,
//! `tool.execution_complete`, `session.error`, …) ending with a `result` line; token usage
//! comes from the usage file. Bring-your-own-key: `base-url=` becomes
//! `COPILOT_PROVIDER_BASE_URL` (with `COPILOT_OFFLINE=true`, so no GitHub traffic at all),
//! `option "provider-type"` (`openai`, `azure`, `anthropic`) and `option "wire-api"` select
//! the wire format, and the `api-key-env=` variable becomes `COPILOT_PROVIDER_API_KEY`.
//! Without `base-url=` the key variable is the GitHub token (`COPILOT_GITHUB_TOKEN`).
//! The CLI has no system-prompt flag: `system` is put before the prompt.
//!
//! In this mode the CLI cannot ask anyone: a tool call its rules do not allow ends as a
//! `tool.execution_complete` with `error.code` `"denied"` (it prints no `permission.*`
//! events; those only reach its own session log). Under `permission="ask"` such a refusal
//! stops the call to ask a person (see `Stream::undecided`), and the answer comes back
//! as rules for the call that continues the session (see [`ask_rules`]).

mod stream;

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::agent_cli::{
    BaseUrl, Cli, CliProvider, CliSpec, Dialect, Exit, Flow, Input, Invocation, KeyVar, Program,
    end_call, new_session_id, session_for,
};
use super::env::ChildEnv;
use super::mcp_config::{PrivateFile, ResolvedMcp, render_servers};
use super::{
    AgentEvent, AgentReply, AgentRequest, Approvals, EventSink, ProviderContext, ProviderError,
};
use crate::ir::{PermissionMode, ProviderDecl};
use stream::{Stream, classify, usage_of};

const NAME: &str = "copilot";

/// Non-secret settings passed through from the environment.
const SETTINGS: &[&str] = &[
    "COPILOT_HOME",
    "COPILOT_OFFLINE",
    "COPILOT_MODEL",
    "COPILOT_AUTO_UPDATE",
    "COPILOT_PROVIDER_BASE_URL",
    "COPILOT_PROVIDER_TYPE",
    "COPILOT_PROVIDER_WIRE_API",
    "COPILOT_PROVIDER_TRANSPORT",
    "COPILOT_PROVIDER_MODEL_ID",
    "COPILOT_PROVIDER_WIRE_MODEL",
    "COPILOT_PROVIDER_MAX_PROMPT_TOKENS",
    "COPILOT_PROVIDER_MAX_OUTPUT_TOKENS",
    "COPILOT_PROVIDER_AZURE_API_VERSION",
    "GH_HOST",
    "COPILOT_GH_HOST",
];

const SPEC: CliSpec = CliSpec {
    adapter: NAME,
    program: Program::Npm {
        command: "copilot",
        package: "@github/copilot",
    },
    settings: SETTINGS,
    setting_prefixes: &[],
    credential_vars: &[
        "COPILOT_GITHUB_TOKEN",
        "COPILOT_PROVIDER_API_KEY",
        "GH_TOKEN",
        "GITHUB_TOKEN",
    ],
    base_url: BaseUrl::Env("COPILOT_PROVIDER_BASE_URL"),
    key: KeyVar::Chosen(key_var),
    endpoint: None,
    defaults: &[("COPILOT_AUTO_UPDATE", "false")],
};

/// Where the key goes: a model provider's key when the CLI is pointed at one
/// (bring-your-own-key), else the GitHub token.
fn key_var(env: &ChildEnv) -> &'static str {
    if env.get("COPILOT_PROVIDER_BASE_URL").is_some() {
        "COPILOT_PROVIDER_API_KEY"
    } else {
        "COPILOT_GITHUB_TOKEN"
    }
}

/// The Copilot CLI dialect.
#[derive(Debug)]
pub(crate) struct Copilot;

/// Builds a `copilot` provider (see the module docs). Options: `bin`, `pass-env`,
/// `env.NAME`, `provider-type`, `wire-api`, `offline` (default true with `base-url=`),
/// `api-key-var`.
///
/// # Errors
/// As [`Cli::new`], and `provider-type` or `wire-api` not a string.
pub(crate) fn provider(
    decl: &ProviderDecl,
    cx: &ProviderContext<'_>,
) -> Result<CliProvider<Copilot>, ProviderError> {
    let mut cli = Cli::new(&SPEC, decl, cx)?;
    for (option, var) in [
        ("provider-type", "COPILOT_PROVIDER_TYPE"),
        ("wire-api", "COPILOT_PROVIDER_WIRE_API"),
    ] {
        match decl.options.get(option) {
            None => {}
            Some(Value::String(value)) => cli.set_env(var, value.as_str()),
            Some(_) => {
                return Err(ProviderError::config(
                    NAME,
                    format!("option `{option}` must be a string"),
                ));
            }
        }
    }
    // Pointed at a model provider of its own, the CLI needs nothing of GitHub.
    if cli.base_url().is_some() && decl.options.get("offline") != Some(&Value::Bool(false)) {
        cli.set_env("COPILOT_OFFLINE", "true");
    }
    Ok(CliProvider::new(cli, Copilot))
}

/// A Copilot call in progress.
#[derive(Debug)]
pub(crate) struct Call {
    stream: Stream,
    approvals: Approvals,
    /// The session: the one continued, or a new id atomic chose.
    session_id: String,
    /// Where the CLI writes the call's token usage (an [`Invocation::leftovers`], removed
    /// once the CLI is gone: it writes the file as it exits, when stopped too).
    usage_file: PathBuf,
    /// The agent's MCP servers, in a file only this user reads.
    _mcp_file: Option<PrivateFile>,
}

impl Dialect for Copilot {
    type Call = Call;

    fn prepare(
        &self,
        cli: &Cli,
        request: &AgentRequest,
        mcp: &[ResolvedMcp],
    ) -> Result<(Invocation, Call), ProviderError> {
        let session_id = session_for(request);
        // Written by the CLI: where a sandboxed one may write.
        let usage_file = cli
            .call_temp_dir(request)
            .join(format!("atomic-copilot-usage-{}.json", new_session_id()));
        let mut args = args(cli, request, &session_id, &usage_file);
        let mcp_file = if mcp.is_empty() {
            None
        } else {
            let file = cli.private_file("atomic-copilot-mcp", &copilot_mcp(mcp).to_string())?;
            args.extend([
                "--additional-mcp-config".to_owned(),
                format!("@{}", file.path().display()),
            ]);
            Some(file)
        };
        let invocation = Invocation {
            args,
            env: Vec::new(),
            input: Input::Closed,
            leftovers: vec![usage_file.clone()],
        };
        let call = Call {
            stream: Stream::new(request.grants.permission == Some(PermissionMode::Ask)),
            approvals: request.grants.approvals.clone(),
            session_id,
            usage_file,
            _mcp_file: mcp_file,
        };
        Ok((invocation, call))
    }

    // The CLI never says its session; it is the one atomic chose.
    fn started(&self, cli: &Cli, call: &mut Call, request: &AgentRequest, events: &dyn EventSink) {
        events.emit(AgentEvent::SessionStart {
            session_id: Some(call.session_id.clone()),
            model: cli.model(request),
        });
    }

    fn line(&self, _cli: &Cli, call: &mut Call, line: &Value, events: &dyn EventSink) -> Flow {
        call.stream.handle(line, events);
        // A refusal nobody has decided: the call stops as the model is about to go on
        // without the tool; the session continues once a person answers.
        match call.stream.undecided(&mut call.approvals) {
            Some(ask) => Flow::Pause {
                ask,
                session_id: Some(call.session_id.clone()),
            },
            None => Flow::Continue,
        }
    }

    fn finish(
        &self,
        cli: &Cli,
        mut call: Call,
        exit: Exit,
        events: &dyn EventSink,
    ) -> Result<AgentReply, ProviderError> {
        let status = exit.status.clone()?;
        if let Some(error) = call.stream.error.take() {
            return Err(classify(&error, cli.credentials()));
        }
        let Some(result) = call.stream.result.take() else {
            return Err(exit.unfinished(NAME, "a result line"));
        };
        let exit_code = result
            .get("exitCode")
            .and_then(Value::as_i64)
            .and_then(|code| i32::try_from(code).ok());
        if exit_code.is_some_and(|code| code != 0) || !status.success() {
            return Err(ProviderError::process_exit(
                NAME,
                exit_code.or(status.code()),
                exit.stderr,
            ));
        }
        let usage = std::fs::read_to_string(&call.usage_file)
            .ok()
            .and_then(|text| serde_json::from_str::<Value>(&text).ok())
            .map(|report| usage_of(&report))
            .unwrap_or(call.stream.usage);
        let session_id = result
            .get("sessionId")
            .and_then(Value::as_str)
            .map_or(call.session_id, str::to_owned);
        Ok(end_call(
            events,
            AgentReply {
                text: call.stream.last_text,
                session_id: Some(session_id),
                usage,
                cost_usd: None,
                turns: call.stream.turns,
            },
        ))
    }
}

/// The command line of one call.
fn args(cli: &Cli, request: &AgentRequest, session_id: &str, usage_file: &Path) -> Vec<String> {
    let prompt = match request.prompt.system.as_ref().filter(|s| !s.is_empty()) {
        Some(system) => format!("{system}\n\n{}", request.prompt.text),
        None => request.prompt.text.clone(),
    };
    let mut args = vec![
        "-p".to_owned(),
        prompt,
        "--output-format".to_owned(),
        "json".to_owned(),
        "--no-auto-update".to_owned(),
        "--no-ask-user".to_owned(),
    ];
    if let Some(model) = cli.model(request) {
        args.extend(["--model".to_owned(), model]);
    }
    if request.session.resume.is_some() {
        args.push(format!("--resume={session_id}"));
    } else {
        args.push(format!("--session-id={session_id}"));
    }
    match request.grants.permission {
        Some(PermissionMode::Bypass) => args.push("--allow-all".to_owned()),
        Some(PermissionMode::AcceptEdits) => {
            args.extend(["--allow-tool".to_owned(), "write".to_owned()]);
        }
        Some(PermissionMode::Plan) => args.extend(["--mode".to_owned(), "plan".to_owned()]),
        // The CLI cannot wait for an answer in this mode: what a person decided becomes
        // its rules, and anything else it refuses stops the call.
        Some(PermissionMode::Ask) => {
            args.extend(ask_rules(
                &request.grants.approvals,
                request.workspace.root(),
            ));
        }
        Some(PermissionMode::Default) | None => {}
    }
    for tool in &request.grants.tools {
        args.extend(["--allow-tool".to_owned(), tool.name.clone()]);
    }
    args.push(format!("--usage-output-file={}", usage_file.display()));
    args
}

/// `--additional-mcp-config`'s form: `{"mcpServers": {name: {"type": "local", "command",
/// "args", "env", "tools": ["*"]} | {"type": "http", "url", "headers", "tools": ["*"]}}}`.
fn copilot_mcp(servers: &[ResolvedMcp]) -> Value {
    let servers = render_servers(
        servers,
        |program, args, env| json!({"type": "local", "command": program, "args": args, "env": env, "tools": ["*"]}),
        |url, headers| json!({"type": "http", "url": url, "headers": headers, "tools": ["*"]}),
    );
    json!({ "mcpServers": servers })
}

/// The CLI rules for what a person decided under `permission="ask"`. A kind allowed for
/// the run is allowed whole. The answered request, when allowed, is allowed as narrowly as
/// the CLI's patterns can say it, for the call that continues the session: a file by its
/// path (`write(<path>)`, with `--add-dir` for a path outside the working directory), a
/// shell command by the kind (the CLI matches commands by name, not by their arguments),
/// plus `write` when it writes through a redirection. A refused request needs no rule: in
/// this mode the CLI refuses whatever no rule allows, and the agent is told.
fn ask_rules(approvals: &Approvals, working_dir: &Path) -> Vec<String> {
    let mut patterns = Vec::new();
    let mut flags = Vec::new();
    for kind in &approvals.tools {
        match kind.as_str() {
            "read" => flags.push("--allow-all-paths".to_owned()),
            kind => patterns.push(kind.to_owned()),
        }
    }
    if let Some(answered) = approvals.answered.as_ref().filter(|a| a.answer.allows()) {
        let working_dir = std::path::absolute(working_dir).unwrap_or_else(|_| working_dir.into());
        let input = &answered.ask.input;
        let path = input
            .pointer("/arguments/path")
            .and_then(Value::as_str)
            .map(|path| working_dir.join(path));
        let directory = match (answered.ask.tool.as_str(), path) {
            ("write", Some(path)) => {
                patterns.push(format!("write({})", path.display()));
                path.parent().map(Path::to_path_buf)
            }
            ("read", Some(path)) if path.is_dir() => Some(path),
            ("read", Some(path)) => path.parent().map(Path::to_path_buf),
            ("shell", _) => {
                patterns.push("shell".to_owned());
                if input.get("writes").is_some() {
                    patterns.push("write".to_owned());
                }
                None
            }
            (kind, _) => {
                patterns.push(kind.to_owned());
                None
            }
        };
        if let Some(directory) = directory.filter(|dir| !dir.starts_with(&working_dir)) {
            flags.extend(["--add-dir".to_owned(), directory.display().to_string()]);
        }
    }
    patterns
        .into_iter()
        .flat_map(|pattern| ["--allow-tool".to_owned(), pattern])
        .chain(flags)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::{Answered, PermissionAnswer, PermissionAsk};

    fn edit_ask() -> PermissionAsk {
        PermissionAsk {
            tool: "write".to_owned(),
            input: serde_json::json!({"tool": "edit", "arguments": {"path": "/w/a.txt", "old_str": "a", "new_str": "b"}}),
        }
    }

    #[test]
    fn answers_become_the_narrowest_rules_the_cli_has() {
        let working = Path::new("/w");
        let allowed = |ask: PermissionAsk, tools: &[&str]| {
            let approvals = Approvals {
                tools: tools.iter().map(|tool| (*tool).to_owned()).collect(),
                answered: Some(Answered {
                    ask,
                    answer: PermissionAnswer::Allow,
                }),
            };
            ask_rules(&approvals, working).join(" ")
        };
        assert_eq!(allowed(edit_ask(), &[]), "--allow-tool write(/w/a.txt)");
        let outside = PermissionAsk {
            tool: "write".to_owned(),
            input: serde_json::json!({"tool": "create", "arguments": {"path": "/elsewhere/b.txt"}}),
        };
        assert_eq!(
            allowed(outside, &["shell"]),
            "--allow-tool shell --allow-tool write(/elsewhere/b.txt) --add-dir /elsewhere"
        );
        let redirect = PermissionAsk {
            tool: "shell".to_owned(),
            input: serde_json::json!({"tool": "bash", "arguments": {"command": "echo hi > x"}, "writes": ["x"]}),
        };
        assert_eq!(
            allowed(redirect, &["read"]),
            "--allow-tool shell --allow-tool write --allow-all-paths"
        );
        let denied = Approvals {
            tools: Vec::new(),
            answered: Some(Answered {
                ask: edit_ask(),
                answer: PermissionAnswer::Deny,
            }),
        };
        assert!(ask_rules(&denied, working).is_empty(), "refused by default");
    }
}
