//! `adapter="codex"`: the OpenAI Codex CLI (`@openai/codex`) in its non-interactive JSONL
//! mode, one process per call (protocols.md §6, checked against the pinned CLI), driven by
//! the agent-CLI driver; this module holds only its dialect.
//!
//! Spawned as `codex exec [resume <thread id>] --json --skip-git-repo-check -c key=value…
//! [-m MODEL] -`, the prompt written to stdin (`-`). stdout is one event per line
//! (`events.rs`): `thread.started` (the thread id, which is the session id),
//! `turn.started`, `item.started` / `item.updated` / `item.completed` (`agent_message`,
//! `reasoning`, `command_execution`, `file_change`, `mcp_tool_call`, `web_search`,
//! `todo_list` — the plan, its tool switched on —, `error`), `turn.completed` (token
//! usage, cumulative over the thread), `turn.failed` and `error`.
//! A patch the sandbox refuses has no item there; it is read from the session's rollout
//! file (`rollout.rs`) and reported as a failed `file_change`.
//!
//! Every setting goes in as a `-c` override, so the CLI reads nothing of the user's: it runs
//! with its own `CODEX_HOME`, a directory this provider creates (and deletes when it is
//! dropped) unless `option "codex-home"` names one. The overrides switch off what would
//! reach the network besides the model (update checks, analytics, plugin and app sync).
//! `base-url=` declares a custom model provider speaking the Responses API
//! (`model_providers.atomic`, `wire_api = "responses"`); the key reaches the CLI as
//! `CODEX_API_KEY`, which `codex exec` reads for OpenAI and which the custom provider names
//! as its `env_key`. `system` becomes `developer_instructions`.
//!
//! Permission modes map onto the sandbox (`approval_policy` is always `never`: nobody can
//! answer in this mode): `default` and `plan` → `read-only`, `acceptEdits` →
//! `workspace-write`, `bypassPermissions` → `danger-full-access`.

mod events;
mod rollout;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde_json::Value;

use super::agent_cli::{
    BaseUrl, Cli, CliProvider, CliSpec, Dialect, Exit, Flow, Input, Invocation, KeyVar, Program,
    end_call,
};
use super::mcp_config::{ResolvedMcp, passed_through};
use super::{
    AgentEvent, AgentReply, AgentRequest, EventSink, ProviderContext, ProviderError, Usage,
};
use crate::ir::{McpTransport, PermissionMode, ProviderDecl};
use events::{Stream, http_status, minus};

const NAME: &str = "codex";

/// The variable the CLI reads the key from (`codex exec`'s own, and the custom provider's
/// `env_key`).
const KEY_VAR: &str = "CODEX_API_KEY";

const SPEC: CliSpec = CliSpec {
    adapter: NAME,
    program: Program::Npm {
        command: "codex",
        package: "@openai/codex",
    },
    settings: &[],
    setting_prefixes: &[],
    credential_vars: &[KEY_VAR, "OPENAI_API_KEY"],
    // A custom model provider, declared in `-c` overrides.
    base_url: BaseUrl::Dialect,
    key: KeyVar::Fixed(KEY_VAR),
    endpoint: Some("https://api.openai.com/v1"),
    defaults: &[],
};

/// Overrides that keep the CLI off the network except for its model: no update check, no
/// analytics, no curated-plugin sync (git and HTTPS to github.com, chatgpt.com), no apps.
/// Each was seen connecting out in the pinned version without them.
const OFFLINE: &[&str] = &[
    "check_for_update_on_startup=false",
    "analytics.enabled=false",
    "features.plugins=false",
    "features.remote_plugin=false",
    "features.apps=false",
];

/// The model key stays with the model client: the commands Codex runs for the agent get
/// its environment without the key variables (Codex's own `shell_environment_policy`;
/// the key is read once, by the CLI itself).
const KEY_HELD_BACK: &str =
    r#"shell_environment_policy.exclude=["CODEX_API_KEY","OPENAI_API_KEY"]"#;

/// Codex's plan tool (`update_plan`), which `codex exec` leaves out unless asked: on, so the
/// agent keeps a plan as it does interactively, and atomic reports it (`todo_list` items,
/// `events.rs`).
const PLAN_TOOL: &str = "tools.update_plan.enabled=true";

/// The Codex dialect, with what a Codex provider keeps between calls.
#[derive(Debug)]
pub(crate) struct Codex {
    home: Home,
    /// `-c` overrides every call gets.
    overrides: Vec<String>,
    /// Thread id → its token totals after this provider's last call on it: `turn.completed`
    /// reports the thread's totals, so a continued session's call is the difference.
    totals: Mutex<HashMap<String, Usage>>,
}

/// The `CODEX_HOME` the CLI runs with.
#[derive(Debug)]
enum Home {
    /// Created for this provider, removed when it is dropped.
    Owned(PathBuf),
    /// `option "codex-home"`: the user's, left alone.
    Given(PathBuf),
}

impl Home {
    fn path(&self) -> &Path {
        match self {
            Self::Owned(path) | Self::Given(path) => path,
        }
    }
}

impl Drop for Home {
    fn drop(&mut self) {
        if let Self::Owned(path) = self {
            let _ = std::fs::remove_dir_all(path);
        }
    }
}

/// Builds a `codex` provider (see the module docs). Options: `bin`, `pass-env`,
/// `env.NAME`, `codex-home`.
///
/// # Errors
/// As [`Cli::new`]; also no way to authenticate given, or a home directory that cannot be
/// made or is not one.
pub(crate) fn provider(
    decl: &ProviderDecl,
    cx: &ProviderContext<'_>,
) -> Result<CliProvider<Codex>, ProviderError> {
    let mut cli = Cli::new(&SPEC, decl, cx)?;
    let home = match decl.options.get("codex-home") {
        None => Home::Owned(create_home(cli.temp_dir())?),
        Some(Value::String(path)) if !path.is_empty() => Home::Given(given_home(path)?),
        Some(_) => return Err(config("option `codex-home` must be a directory path")),
    };
    let keyed = cli.credentials().key().is_some();
    if !keyed && cli.base_url().is_none() && matches!(home, Home::Owned(_)) {
        return Err(config(
            "the Codex CLI has no credentials: name the variable holding an OpenAI API key \
             with `api-key-env=`, point `base-url=` at a Responses API server, or set \
             `option \"codex-home\"` to a directory where `codex login` was run",
        ));
    }
    cli.set_env("CODEX_HOME", home.path().display().to_string());
    let mut overrides: Vec<String> = OFFLINE.iter().map(|item| (*item).to_owned()).collect();
    overrides.push(KEY_HELD_BACK.to_owned());
    overrides.push(PLAN_TOOL.to_owned());
    if let Some(url) = cli.base_url() {
        overrides.extend([
            "model_provider=\"atomic\"".to_owned(),
            "model_providers.atomic.name=\"atomic\"".to_owned(),
            format!("model_providers.atomic.base_url={}", toml_string(url)),
            "model_providers.atomic.wire_api=\"responses\"".to_owned(),
        ]);
        if keyed {
            overrides.push(format!("model_providers.atomic.env_key=\"{KEY_VAR}\""));
        }
    }
    let codex = Codex {
        home,
        overrides,
        totals: Mutex::new(HashMap::new()),
    };
    Ok(CliProvider::new(cli, codex))
}

/// A Codex call in progress.
#[derive(Debug)]
pub(crate) struct Call {
    stream: Stream,
    model: Option<String>,
    /// The session the call continues, if any.
    resumed: Option<String>,
}

impl Dialect for Codex {
    type Call = Call;

    fn prepare(
        &self,
        cli: &Cli,
        request: &AgentRequest,
        mcp: &[ResolvedMcp],
    ) -> Result<(Invocation, Call), ProviderError> {
        let (mcp_overrides, env) = mcp_servers(cli, request, mcp)?;
        let invocation = Invocation {
            args: self.args(cli, request, mcp_overrides),
            env,
            // The prompt comes on stdin: no argument-length limit, nothing in `ps`.
            input: Input::Text(request.prompt.text.clone()),
            leftovers: Vec::new(),
        };
        let call = Call {
            stream: Stream::default(),
            model: cli.model(request),
            resumed: request.session.resume.clone(),
        };
        Ok((invocation, call))
    }

    fn line(&self, cli: &Cli, call: &mut Call, line: &Value, events: &dyn EventSink) -> Flow {
        if let Some(thread) = call.stream.handle(line, events) {
            events.emit(AgentEvent::SessionStart {
                session_id: Some(thread),
                model: call.model.clone(),
            });
        }
        match call.stream.failure.as_ref().filter(|f| f.is_auth()) {
            // The CLI retries a refused key five times with backoff; waiting never fixes a
            // key, so the call stops at the first refusal.
            Some(failure) => Flow::Fail(classify(cli, &failure.message)),
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
        // A retry notice (`error`) before a completed turn was only a notice.
        if let Some(failure) = call.stream.failure.take()
            && (failure.fatal || call.stream.total.is_none())
        {
            return Err(classify(cli, &failure.message));
        }
        let (Some(thread), Some(total)) = (call.stream.thread.clone(), call.stream.total) else {
            return Err(self.exit_error(call.resumed.as_deref(), exit));
        };
        if !status.success() {
            return Err(self.exit_error(call.resumed.as_deref(), exit));
        }
        // A patch the sandbox refused is on record only in the session's rollout.
        for patch in rollout::refused_patches(self.home.path(), &thread) {
            let id = format!("refused-{}", patch.call_id);
            events.emit(AgentEvent::ToolStart {
                id: id.clone(),
                name: "file_change".to_owned(),
                input: patch.input,
            });
            events.emit(AgentEvent::ToolComplete {
                id,
                name: "file_change".to_owned(),
                summary: crate::providers::tool_summary(&patch.output),
                is_error: true,
            });
        }
        let usage = {
            let mut totals = self.totals.lock().expect("totals lock is never poisoned");
            let before = totals.insert(thread.clone(), total).unwrap_or_default();
            minus(total, before)
        };
        Ok(end_call(
            events,
            AgentReply {
                text: call.stream.last_text,
                session_id: Some(thread),
                usage,
                cost_usd: None,
                turns: call.stream.turns,
            },
        ))
    }
}

impl Codex {
    /// The command line of one call.
    fn args(&self, cli: &Cli, request: &AgentRequest, mcp: Vec<String>) -> Vec<String> {
        let sandbox = match request.grants.permission {
            None | Some(PermissionMode::Default | PermissionMode::Plan) => "read-only",
            Some(PermissionMode::AcceptEdits) => "workspace-write",
            Some(PermissionMode::Bypass) => "danger-full-access",
            // Refused by the adapter table before a call starts.
            Some(PermissionMode::Ask) => "read-only",
        };
        let mut args = vec!["exec".to_owned()];
        if request.session.resume.is_some() {
            args.push("resume".to_owned());
        }
        args.extend(["--json".to_owned(), "--skip-git-repo-check".to_owned()]);
        let mut overrides = self.overrides.clone();
        overrides.push(format!("sandbox_mode=\"{sandbox}\""));
        overrides.push("approval_policy=\"never\"".to_owned());
        if let Some(system) = request.prompt.system.as_deref().filter(|s| !s.is_empty()) {
            overrides.push(format!("developer_instructions={}", toml_string(system)));
        }
        overrides.extend(mcp);
        for item in overrides {
            args.extend(["-c".to_owned(), item]);
        }
        if let Some(model) = cli.model(request) {
            args.extend(["-m".to_owned(), model]);
        }
        if let Some(session) = &request.session.resume {
            args.push(session.clone());
        }
        args.push("-".to_owned());
        args
    }

    /// The error for a CLI that ended without completing its turn.
    fn exit_error(&self, resumed: Option<&str>, exit: Exit) -> ProviderError {
        if let Some(session) = resumed
            && exit.stderr.contains("no rollout found")
        {
            let home = match &self.home {
                Home::Owned(_) => {
                    "the provider's own CODEX_HOME, which lasts as long as the run's process; \
                     set `option \"codex-home\"` to keep sessions across runs"
                }
                Home::Given(_) => "the directory `option \"codex-home\"` names",
            };
            return ProviderError::rejected(
                NAME,
                0,
                format!("session `{session}` is not in {home}"),
            );
        }
        exit.unfinished(NAME, "completing its turn")
    }
}

/// The agent's MCP servers as `-c mcp_servers.<name>.…` overrides, and the variables the
/// CLI is given for them. What is secret never goes on the command line: a passed-through
/// variable is given to the CLI under its own name and named in the server's `env_vars`
/// (Codex hands a stdio server only the variables it names, besides `PATH`, `HOME` and the
/// like), a bearer token likewise through `bearer_token_env_var`. A stdio server starts
/// through `env -u` anyway, so the key never reaches it whatever the CLI passes on.
///
/// # Errors
/// [`ProviderError::Config`]: a variable passed through is not set.
fn mcp_servers(
    cli: &Cli,
    request: &AgentRequest,
    resolved: &[ResolvedMcp],
) -> Result<(Vec<String>, McpVars), ProviderError> {
    let mut overrides = Vec::new();
    let mut vars = Vec::new();
    for (server, resolved) in request.grants.mcp.iter().zip(resolved) {
        let key = format!("mcp_servers.{}", server.name.value);
        match resolved {
            ResolvedMcp::Stdio {
                program, args, env, ..
            } => {
                overrides.push(format!("{key}.command={}", toml_string(program)));
                overrides.push(format!("{key}.args={}", toml_array(args)));
                let mut literal = Vec::new();
                let mut passed = Vec::new();
                for (declared, (name, value)) in server.env.iter().zip(env) {
                    if declared.value.is_some() {
                        literal.push(format!("{}={}", toml_string(name), toml_string(value)));
                    } else {
                        passed.push(name.clone());
                        vars.push((name.clone(), value.clone()));
                    }
                }
                if !literal.is_empty() {
                    overrides.push(format!("{key}.env={{{}}}", literal.join(",")));
                }
                if !passed.is_empty() {
                    overrides.push(format!("{key}.env_vars={}", toml_array(&passed)));
                }
            }
            ResolvedMcp::Http { url, .. } => {
                overrides.push(format!("{key}.url={}", toml_string(url)));
                if let McpTransport::Http {
                    bearer_env: Some(var),
                    ..
                } = &server.transport
                {
                    let token =
                        passed_through(NAME, &server.name.value, &var.value, cli.outer_env())?;
                    overrides.push(format!(
                        "{key}.bearer_token_env_var={}",
                        toml_string(&var.value)
                    ));
                    vars.push((var.value.clone(), token));
                }
            }
        }
    }
    Ok((overrides, vars))
}

/// Classifies a failure the CLI reported (`unexpected status 401 Unauthorized: …`).
fn classify(cli: &Cli, message: &str) -> ProviderError {
    let credentials = cli.credentials();
    match http_status(message) {
        Some(status) => credentials.status_error(status, message),
        None if message.contains("stream disconnected") || message.contains("stream closed") => {
            ProviderError::stream_cut(NAME, credentials.scrub(message))
        }
        None => ProviderError::rejected(NAME, 0, credentials.scrub(message)),
    }
}

/// A fresh private directory in `base` for the CLI's home.
fn create_home(base: &Path) -> Result<PathBuf, ProviderError> {
    let suffix: u64 = rand::random();
    let path = base.join(format!("atomic-codex-{suffix:016x}"));
    let mut builder = std::fs::DirBuilder::new();
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(&path).map_err(|error| {
        config(&format!(
            "could not create a CODEX_HOME at {}: {error}; set `option \"codex-home\"`",
            path.display()
        ))
    })?;
    Ok(path)
}

/// `option "codex-home"`, made absolute (the CLI runs in the node's working directory):
/// it must be an existing directory.
fn given_home(path: &str) -> Result<PathBuf, ProviderError> {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| PathBuf::from(path));
    if absolute.is_dir() {
        Ok(absolute)
    } else {
        Err(config(&format!(
            "option `codex-home` names `{path}`, which is not a directory; create it (and run \
             `CODEX_HOME={path} codex login` there if you want its login) or remove the option"
        )))
    }
}

/// `text` as a TOML basic string (what `-c key=value` parses). JSON's string escapes are a
/// subset of TOML's.
fn toml_string(text: &str) -> String {
    Value::String(text.to_owned()).to_string()
}

/// The variables a call's CLI is given for its MCP servers (name, value).
type McpVars = Vec<(String, String)>;

/// `items` as a TOML array of strings.
fn toml_array(items: &[String]) -> String {
    let items: Vec<String> = items.iter().map(|item| toml_string(item)).collect();
    format!("[{}]", items.join(","))
}

fn config(message: &str) -> ProviderError {
    ProviderError::config(NAME, message.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::Environment;
    use crate::providers::registry::test_decl;
    use crate::providers::{Continuation, Grants, Prompt};
    use crate::source::{Span, Spanned};

    fn decl(key: bool) -> ProviderDecl {
        let mut decl = test_decl("c", "codex");
        decl.options
            .insert("bin".to_owned(), Value::String("/bin/sh".to_owned()));
        decl.base_url = Some(Spanned::new(
            "http://127.0.0.1:9/v1".to_owned(),
            Span::default(),
        ));
        if key {
            decl.api_key_env = Some(Spanned::new("MY_KEY".to_owned(), Span::default()));
        }
        decl
    }

    fn codex(key: Option<&str>) -> CliProvider<Codex> {
        let mut env = Environment::default().with("PATH", "/bin");
        if let Some(key) = key {
            env = env.with("MY_KEY", key);
        }
        provider(
            &decl(key.is_some()),
            &ProviderContext::new(Path::new("."), &env),
        )
        .expect("configured")
    }

    #[test]
    fn failures_are_classified_and_keys_named_never_shown() {
        let codex = codex(Some("sk-secret-1"));
        let auth = classify(
            codex.cli(),
            "unexpected status 401 Unauthorized: Incorrect API key provided: sk-secret-1., url: http://127.0.0.1:9/v1/responses",
        );
        assert!(
            matches!(auth, ProviderError::Auth { status: 401, .. }),
            "{auth}"
        );
        let text = auth.to_string();
        assert!(
            text.contains("`MY_KEY`") && !text.contains("sk-secret-1"),
            "{text}"
        );
        let cases = [
            (
                "unexpected status 429 Too Many Requests: slow",
                "rate-limit",
            ),
            (
                "unexpected status 503 Service Unavailable: busy",
                "overloaded",
            ),
            (
                "unexpected status 500 Internal Server Error: boom",
                "server-error",
            ),
            ("unexpected status 400 Bad Request: no", "provider"),
            ("stream disconnected before completion: eof", "stream-cut"),
            ("something else", "provider"),
        ];
        for (message, class) in cases {
            assert_eq!(
                classify(codex.cli(), message).class().name(),
                class,
                "{message}"
            );
        }
        assert_eq!(
            http_status("Reconnecting... 1/5 (unexpected status 401 Unauthorized)"),
            Some(401)
        );
        assert_eq!(http_status("status unknown"), None);
    }

    #[test]
    fn arguments_map_permissions_resume_and_settings() {
        let codex = codex(Some("sk-secret-1"));
        let args = |request: &AgentRequest| codex.dialect().args(codex.cli(), request, Vec::new());
        let request = AgentRequest {
            prompt: Prompt {
                text: "hi".to_owned(),
                system: Some("Be \"terse\".\nReally.".to_owned()),
            },
            model: Some("m-1".to_owned()),
            grants: Grants {
                permission: Some(PermissionMode::AcceptEdits),
                ..Grants::default()
            },
            ..AgentRequest::default()
        };
        let line = args(&request);
        assert_eq!(&line[..3], ["exec", "--json", "--skip-git-repo-check"]);
        assert_eq!(line.last().map(String::as_str), Some("-"));
        let joined = line.join(" ");
        for expected in [
            "-c sandbox_mode=\"workspace-write\"",
            "-c approval_policy=\"never\"",
            "-c developer_instructions=\"Be \\\"terse\\\".\\nReally.\"",
            "-c model_provider=\"atomic\"",
            // atomic's model gateway, which forwards to the declared base URL.
            "-c model_providers.atomic.base_url=\"http://127.0.0.1:",
            "-c model_providers.atomic.wire_api=\"responses\"",
            "-c model_providers.atomic.env_key=\"CODEX_API_KEY\"",
            "-c features.plugins=false",
            "-c tools.update_plan.enabled=true",
            "-m m-1",
        ] {
            assert!(joined.contains(expected), "{expected} in {joined}");
        }
        assert!(!joined.contains("127.0.0.1:9/"), "{joined}");
        assert!(!joined.contains("sk-secret-1"), "{joined}");
        // atomic holds the key: the CLI gets a placeholder.
        assert!(
            codex
                .cli()
                .env()
                .get(KEY_VAR)
                .is_some_and(|key| key.starts_with("atomic-held-"))
        );

        let resumed = AgentRequest {
            session: Continuation {
                resume: Some("t-1".to_owned()),
                ..request.session.clone()
            },
            grants: Grants {
                permission: Some(PermissionMode::Bypass),
                ..request.grants.clone()
            },
            ..request.clone()
        };
        let line = args(&resumed);
        assert_eq!(&line[..2], ["exec", "resume"]);
        assert_eq!(&line[line.len() - 2..], ["t-1", "-"]);
        assert!(
            line.join(" ")
                .contains("sandbox_mode=\"danger-full-access\"")
        );
        for mode in [
            None,
            Some(PermissionMode::Default),
            Some(PermissionMode::Plan),
        ] {
            let line = args(&AgentRequest {
                grants: Grants {
                    permission: mode,
                    ..request.grants.clone()
                },
                ..request.clone()
            });
            assert!(
                line.join(" ").contains("sandbox_mode=\"read-only\""),
                "{mode:?}"
            );
        }
        let ask = AgentRequest {
            grants: Grants {
                permission: Some(PermissionMode::Ask),
                ..request.grants.clone()
            },
            ..request
        };
        let refused = codex.cli().refuse_unsupported(&ask).expect_err("refused");
        assert!(
            refused.to_string().contains("permission=\"ask\""),
            "{refused}"
        );
    }

    #[test]
    fn a_home_is_created_and_removed_and_credentials_are_required() {
        let codex = codex(None);
        let home = codex.dialect().home.path().to_path_buf();
        assert!(home.is_dir(), "{home:?}");
        assert_eq!(
            codex.cli().env().get("CODEX_HOME"),
            Some(home.to_str().expect("utf-8"))
        );
        drop(codex);
        assert!(!home.exists(), "{home:?}");

        let env = Environment::default();
        let cx = ProviderContext::new(Path::new("."), &env);
        let mut decl = test_decl("c", "codex");
        decl.options
            .insert("bin".to_owned(), Value::String("/bin/sh".to_owned()));
        let error = provider(&decl, &cx).expect_err("no credentials");
        assert!(error.to_string().contains("api-key-env="), "{error}");

        decl.options.insert(
            "codex-home".to_owned(),
            Value::String("/nonexistent-atomic-codex-home".to_owned()),
        );
        let error = provider(&decl, &cx).expect_err("no such directory");
        assert!(error.to_string().contains("not a directory"), "{error}");
        let given = tempfile::tempdir().expect("temp dir");
        decl.options.insert(
            "codex-home".to_owned(),
            Value::String(given.path().display().to_string()),
        );
        let codex = provider(&decl, &cx).expect("a login home suffices");
        drop(codex);
        assert!(given.path().is_dir(), "a given home is left alone");
    }
}
