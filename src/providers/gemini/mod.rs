//! `adapter="gemini"`: the Gemini CLI (`@google/gemini-cli`) in its headless mode, one process
//! per call (protocols.md §6, every fact checked against the pinned 0.61.0 bundle), driven
//! by the agent-CLI driver; this module holds only its dialect.
//!
//! Spawned as `gemini -p <prompt> --output-format stream-json --skip-trust
//! [-m M] [--approval-mode MODE] [--allowed-tools T …] (--session-id <new uuid> | --resume <id>)`
//! in the node's working directory. stdout is one JSON object per line: `init` (session id,
//! model), `message` (the user's prompt, then the model's text as `delta` pieces), `tool_use`
//! (`tool_name`, `tool_id`, `parameters`), `tool_result` (`tool_id`, `status`, `output`,
//! `error`), `error` (warnings and stream problems) and a last `result` (`status`, `error`,
//! `stats` with the token counts).
//!
//! Isolation: the CLI reads its settings, sessions and memory from `$GEMINI_CLI_HOME/.gemini`.
//! Each provider gets its own such home (`option "home"`, by default
//! `$XDG_STATE_HOME/atomic/gemini/<provider>`) holding a settings file atomic writes: API-key
//! auth, usage statistics (Clearcut), telemetry and update checks off, `.env` files of the
//! working directory ignored. The key from `api-key-env=` is its only secret (`GEMINI_API_KEY`);
//! `base-url=` becomes `GOOGLE_GEMINI_BASE_URL`. Each call's `TMPDIR` is a private directory
//! of its own, removed once the CLI is gone: the CLI writes a report of every failed model
//! request there.
//!
//! The CLI has no per-call way to add to its own system prompt (`GEMINI_SYSTEM_MD` replaces
//! it whole, tool instructions included), so `system` goes before the prompt.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::agent_cli::{
    BaseUrl, Cli, CliProvider, CliSpec, Dialect, Exit, Flow, Input, Invocation, KeyVar, Program,
    end_call, new_session_id, session_for,
};
use super::mcp_config::{ResolvedMcp, render_servers};
use super::{AgentReply, AgentRequest, Environment, EventSink, ProviderContext, ProviderError};
use crate::ir::{PermissionMode, ProviderDecl};
use extension::CallExtension;
use stream::{Stream, classify, usage_of};

mod extension;
mod stream;

const NAME: &str = "gemini";

const SPEC: CliSpec = CliSpec {
    adapter: NAME,
    program: Program::Npm {
        command: "gemini",
        package: "@google/gemini-cli",
    },
    settings: &["GOOGLE_GEMINI_BASE_URL", "GEMINI_API_KEY_AUTH_MECHANISM"],
    setting_prefixes: &[],
    credential_vars: &["GEMINI_API_KEY", "GOOGLE_API_KEY"],
    base_url: BaseUrl::Env("GOOGLE_GEMINI_BASE_URL"),
    key: KeyVar::Fixed("GEMINI_API_KEY"),
    endpoint: Some("https://generativelanguage.googleapis.com"),
    defaults: &[],
};

/// The `mcpServers` of the CLI's settings: `{name: {"command", "args", "env"} | {"httpUrl",
/// "headers"}}`.
fn gemini_mcp(servers: &[ResolvedMcp]) -> Value {
    Value::Object(render_servers(
        servers,
        |program, args, env| json!({"command": program, "args": args, "env": env}),
        |url, headers| json!({"httpUrl": url, "headers": headers}),
    ))
}

/// The settings every call runs with, written into the provider's own home.
fn settings() -> Value {
    json!({
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "privacy": {"usageStatisticsEnabled": false},
        "telemetry": {"enabled": false},
        "general": {"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
        "advanced": {"ignoreLocalEnv": true}
    })
}

/// The Gemini CLI dialect, with the provider's own home.
#[derive(Debug)]
pub(crate) struct Gemini {
    /// `$GEMINI_CLI_HOME`: settings and sessions of this provider only.
    home: PathBuf,
}

/// Builds a `gemini` provider (see the module docs). Options: `bin`, `home`, `pass-env`,
/// `env.NAME`.
///
/// # Errors
/// As [`Cli::new`], and `option "home"` not a path.
pub(crate) fn provider(
    decl: &ProviderDecl,
    cx: &ProviderContext<'_>,
) -> Result<CliProvider<Gemini>, ProviderError> {
    let mut cli = Cli::new(&SPEC, decl, cx)?;
    let home = match decl.options.get("home") {
        Some(Value::String(home)) if !home.is_empty() => PathBuf::from(home),
        Some(_) => return Err(config("option `home` must be a directory path")),
        None => default_home(cx.env, &decl.name.value),
    };
    cli.set_env("GEMINI_CLI_HOME", home.display().to_string());
    // The launcher otherwise re-spawns itself (a second node process) to raise its heap.
    cli.set_env("GEMINI_CLI_NO_RELAUNCH", "true");
    cli.set_env("GEMINI_TELEMETRY_ENABLED", "false");
    Ok(CliProvider::new(cli, Gemini { home }))
}

/// A Gemini call in progress.
#[derive(Debug)]
pub(crate) struct Call {
    stream: Stream,
    /// The session: the one continued, or a new id atomic chose.
    session_id: String,
    /// The call's MCP servers, an extension of this call only.
    _extension: Option<CallExtension>,
}

impl Dialect for Gemini {
    type Call = Call;

    fn prepare(
        &self,
        cli: &Cli,
        request: &AgentRequest,
        mcp: &[ResolvedMcp],
    ) -> Result<(Invocation, Call), ProviderError> {
        let session_id = session_for(request);
        let mut args = args(cli, request, &session_id);
        self.prepare_home()?;
        let extension = if mcp.is_empty() {
            None
        } else {
            Some(CallExtension::write(&self.home, gemini_mcp(mcp))?)
        };
        // Only this call's extension is active: another call's, written side by side in the
        // same home, is never loaded.
        args.extend([
            "--extensions".to_owned(),
            extension
                .as_ref()
                .map_or("none", CallExtension::name)
                .to_owned(),
        ]);
        // The CLI writes a report of every failed model request (`gemini-client-error-*.json`:
        // the request and its context, readable by anyone) into `os.tmpdir()`: a directory of
        // this call's, removed with the CLI. Not kept: the failure is the call's error
        // (the result's message, or the exit with the end of stderr).
        let temp = cli.private_temp_dir(request)?;
        let invocation = Invocation {
            args,
            env: vec![("TMPDIR".to_owned(), temp.display().to_string())],
            // The prompt is in the arguments; the CLI would append anything read from stdin.
            input: Input::Closed,
            leftovers: vec![temp],
        };
        let call = Call {
            stream: Stream::default(),
            session_id,
            _extension: extension,
        };
        Ok((invocation, call))
    }

    fn line(&self, _cli: &Cli, call: &mut Call, line: &Value, events: &dyn EventSink) -> Flow {
        call.stream.handle(line, events);
        Flow::Continue
    }

    fn finish(
        &self,
        cli: &Cli,
        mut call: Call,
        exit: Exit,
        events: &dyn EventSink,
    ) -> Result<AgentReply, ProviderError> {
        let status = exit.status.clone()?;
        let Some(result) = call.stream.result.take() else {
            return Err(exit.unfinished(NAME, "a result line"));
        };
        if result.get("status").and_then(Value::as_str) != Some("success") {
            return Err(classify(&result, cli.credentials()));
        }
        if !status.success() {
            return Err(ProviderError::process_exit(
                NAME,
                status.code(),
                exit.stderr,
            ));
        }
        let usage = usage_of(result.get("stats").unwrap_or(&Value::Null));
        let session_id = call.stream.session_id.take().unwrap_or(call.session_id);
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

impl Gemini {
    /// Writes the provider's settings (atomically: calls may run side by side).
    fn prepare_home(&self) -> Result<(), ProviderError> {
        let dir = self.home.join(".gemini");
        let fail = |error: std::io::Error| {
            config(&format!(
                "could not prepare the Gemini CLI home `{}`: {error}",
                self.home.display()
            ))
        };
        std::fs::create_dir_all(&dir).map_err(fail)?;
        let temp = dir.join(format!("settings.json.{}", new_session_id()));
        std::fs::write(&temp, settings().to_string()).map_err(fail)?;
        std::fs::rename(&temp, dir.join("settings.json")).map_err(fail)
    }
}

/// The command line of one call (without `--extensions`).
fn args(cli: &Cli, request: &AgentRequest, session_id: &str) -> Vec<String> {
    let prompt = match request.prompt.system.as_ref().filter(|s| !s.is_empty()) {
        Some(system) => format!("{system}\n\n{}", request.prompt.text),
        None => request.prompt.text.clone(),
    };
    let mut args = vec![
        "-p".to_owned(),
        prompt,
        "--output-format".to_owned(),
        "stream-json".to_owned(),
        // atomic was told to run here; the CLI otherwise refuses an untrusted folder.
        "--skip-trust".to_owned(),
    ];
    if let Some(model) = cli.model(request) {
        args.extend(["--model".to_owned(), model]);
    }
    if let Some(mode) = request.grants.permission {
        args.extend(["--approval-mode".to_owned(), approval_mode(mode).to_owned()]);
    }
    for tool in &request.grants.tools {
        args.extend(["--allowed-tools".to_owned(), tool.name.clone()]);
    }
    if request.session.resume.is_some() {
        args.extend(["--resume".to_owned(), session_id.to_owned()]);
    } else {
        args.extend(["--session-id".to_owned(), session_id.to_owned()]);
    }
    args
}

/// `$XDG_STATE_HOME/atomic/gemini/<provider>` (`~/.local/state` without it): kept between
/// runs, because the CLI keeps the sessions `--resume` continues there.
fn default_home(env: &Environment, provider: &str) -> PathBuf {
    let nonempty = |name: &str| env.get(name).filter(|value| !value.is_empty());
    let state = nonempty("XDG_STATE_HOME")
        .map(PathBuf::from)
        .or_else(|| nonempty("HOME").map(|home| Path::new(home).join(".local/state")))
        .unwrap_or_else(|| {
            PathBuf::from(nonempty("TMPDIR").unwrap_or("/tmp")).join("atomic-state")
        });
    let name: String = provider
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    state.join("atomic").join("gemini").join(name)
}

/// The CLI's `--approval-mode` for a node's `permission`. In headless mode the CLI asks no
/// one: `default` leaves out every tool that would need an approval (edits, shell, web
/// fetch), `auto_edit` adds the file-editing tools, `yolo` everything, `plan` is read-only.
fn approval_mode(mode: PermissionMode) -> &'static str {
    match mode {
        // `ask` is refused by the adapter table before a call starts.
        PermissionMode::Default | PermissionMode::Ask => "default",
        PermissionMode::AcceptEdits => "auto_edit",
        PermissionMode::Bypass => "yolo",
        PermissionMode::Plan => "plan",
    }
}

fn config(message: &str) -> ProviderError {
    ProviderError::config(NAME, message.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permission_modes_map_to_approval_modes() {
        assert_eq!(approval_mode(PermissionMode::AcceptEdits), "auto_edit");
        assert_eq!(approval_mode(PermissionMode::Bypass), "yolo");
        assert_eq!(approval_mode(PermissionMode::Plan), "plan");
        assert_eq!(approval_mode(PermissionMode::Default), "default");
    }

    /// Records what it is asked to start, and starts nothing.
    #[derive(Debug, Default)]
    struct Refusing(std::sync::Mutex<Vec<Vec<(String, String)>>>);

    impl crate::process::Spawner for Refusing {
        fn spawn(
            &self,
            launch: crate::process::Launch,
        ) -> Result<crate::process::Child, crate::process::SpawnError> {
            self.0.lock().expect("lock").push(launch.env);
            Err(crate::process::SpawnError {
                program: "gemini".to_owned(),
                source: std::io::Error::other("not started"),
            })
        }
    }

    #[test]
    fn each_call_gets_its_own_private_tmpdir_left_to_be_removed_with_the_cli() {
        let root = tempfile::tempdir().expect("temp dir");
        let env = Environment::default()
            .with("PATH", "/bin")
            .with("TMPDIR", root.path().display().to_string());
        let mut cx = ProviderContext::new(Path::new("."), &env);
        let spawner = std::sync::Arc::new(Refusing::default());
        cx.spawner = spawner.clone();
        let mut decl = crate::providers::registry::test_decl("g", NAME);
        for (name, value) in [
            ("bin", "/bin/sh".to_owned()),
            ("home", root.path().join("home").display().to_string()),
        ] {
            decl.options.insert(name.to_owned(), Value::String(value));
        }
        let gemini = provider(&decl, &cx).expect("configured");
        let prepare = |request: &AgentRequest| {
            let (invocation, _call) = gemini
                .dialect()
                .prepare(gemini.cli(), request, &[])
                .expect("prepared");
            let tmpdir = invocation
                .env
                .iter()
                .find(|(name, _)| name == "TMPDIR")
                .map(|(_, dir)| PathBuf::from(dir))
                .expect("a TMPDIR");
            (invocation, tmpdir)
        };

        let (invocation, tmpdir) = prepare(&AgentRequest::default());
        assert_eq!(invocation.leftovers, std::slice::from_ref(&tmpdir));
        assert_eq!(tmpdir.parent(), Some(root.path()), "{tmpdir:?}");
        assert_eq!(std::fs::read_dir(&tmpdir).expect("a directory").count(), 0);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let meta = std::fs::metadata(&tmpdir).expect("made");
            assert_eq!(meta.permissions().mode() & 0o777, 0o700);
        }
        let (_, another) = prepare(&AgentRequest::default());
        assert_ne!(another, tmpdir, "one per call");

        // Sandboxed: inside the sandbox's temp dir, and the CLI's TMPDIR over the sandbox's.
        let sandbox_temp = root.path().join("sandbox");
        std::fs::create_dir(&sandbox_temp).expect("sandbox temp dir");
        let request = AgentRequest {
            sandbox: Some(crate::providers::CallSandbox {
                env: vec![("TMPDIR".to_owned(), sandbox_temp.display().to_string())],
                temp_dir: sandbox_temp.clone(),
                ..crate::providers::CallSandbox::default()
            }),
            ..AgentRequest::default()
        };
        let (invocation, tmpdir) = prepare(&request);
        assert_eq!(tmpdir.parent(), Some(sandbox_temp.as_path()), "{tmpdir:?}");
        let started = gemini.cli().spawn_leaving(
            &request,
            invocation.args,
            invocation.env,
            invocation.leftovers,
        );
        assert!(started.is_err(), "nothing was started");
        let launched = spawner.0.lock().expect("lock").pop().expect("a launch");
        let last_tmpdir = launched
            .iter()
            .rev()
            .find(|(name, _)| name == "TMPDIR")
            .map(|(_, dir)| dir.as_str());
        assert_eq!(last_tmpdir, tmpdir.to_str());
        // Not started: removed at once.
        assert!(!tmpdir.exists(), "{tmpdir:?}");
    }

    #[test]
    fn the_default_home_is_per_provider_state() {
        let env = Environment::default().with("HOME", "/home/u");
        assert_eq!(
            default_home(&env, "my gem"),
            Path::new("/home/u/.local/state/atomic/gemini/my_gem")
        );
        let env = env.with("XDG_STATE_HOME", "/s");
        assert_eq!(default_home(&env, "g"), Path::new("/s/atomic/gemini/g"));
    }
}
