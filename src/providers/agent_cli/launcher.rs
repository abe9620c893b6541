//! [`Cli`]: an agent CLI as a provider declaration configures it — its program found, the
//! environment its processes get, and the endpoint (base URL and key) placed where the CLI
//! reads it. [`CliSpec`] says, per adapter, what differs: the program, the variables it
//! reads, where the key and base URL go.
//!
//! Where the key and base URL go is decided in one place ([`place_endpoint`]). Where atomic
//! holds the key (`ProviderDecl::key_held`), the CLI never gets it: it is pointed at
//! atomic's [`Gateway`] on 127.0.0.1 with a placeholder ([`Cli::hold_key`]), and the
//! gateway puts the key on each request.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Map, Value};

use super::credentials::Credentials;
use super::gateway::Gateway;
use crate::ir::{AdapterInfo, KnownWire, ProviderDecl, adapter_info};
use crate::process::{Child, Launch, Spawner};
use crate::providers::binary::{find_binary, is_executable, search_path};
use crate::providers::env::{ChildEnv, Environment};
use crate::providers::mcp_config::{PrivateFile, private_dir};
use crate::providers::{AgentRequest, ProviderContext, ProviderError, child};

/// Where an agent CLI's executable comes from.
#[derive(Debug)]
pub(crate) enum Program {
    /// A CLI installed from npm: `command` on `PATH`, or the path `option "bin"` gives.
    Npm {
        /// The executable's name.
        command: &'static str,
        /// The npm package that installs it, named when it is missing.
        package: &'static str,
    },
    /// The provider's `command "program" "arg"…` child (any ACP agent); `known` names the
    /// npm packages of the agents atomic is tested with, for the hint when one is missing.
    Declared {
        /// `(executable, npm package)`.
        known: &'static [(&'static str, &'static str)],
    },
}

/// Where the CLI reads its key (the value of the variable `api-key-env=` names).
#[derive(Debug)]
pub(crate) enum KeyVar {
    /// This variable; `option "api-key-var"` names another, where the adapter reads it
    /// (a gateway's token variable).
    Fixed(&'static str),
    /// The variable `api-key-env=` names, under its own name (the agent knows its own).
    Own,
    /// Chosen once the base URL and settings are in place (Copilot: a model provider's key
    /// with a base URL, else a GitHub token).
    Chosen(fn(&ChildEnv) -> &'static str),
}

/// Where the CLI reads `base-url=`.
#[derive(Debug)]
pub(crate) enum BaseUrl {
    /// This variable.
    Env(&'static str),
    /// The dialect places [`Cli::base_url`] itself (in its command line, or it means
    /// something else there).
    Dialect,
    /// It means nothing to this CLI: the message says what to do instead.
    Refused(&'static str),
}

/// What an agent CLI adapter reads and where (see the module docs).
#[derive(Debug)]
pub(crate) struct CliSpec {
    /// `adapter="…"`.
    pub(crate) adapter: &'static str,
    /// Its executable.
    pub(crate) program: Program,
    /// Non-secret settings passed through from atomic's environment, by name.
    pub(crate) settings: &'static [&'static str],
    /// … and by name prefix.
    pub(crate) setting_prefixes: &'static [&'static str],
    /// Variables that may hold the CLI's credentials: never passed through (only
    /// `api-key-env=` supplies a key), never given to the MCP servers it starts.
    pub(crate) credential_vars: &'static [&'static str],
    /// Where `base-url=` goes.
    pub(crate) base_url: BaseUrl,
    /// Where the key goes.
    pub(crate) key: KeyVar,
    /// The model's public endpoint, where atomic's gateway forwards when neither
    /// `base-url=` nor the CLI's base URL variable names one (`None`: none without them).
    pub(crate) endpoint: Option<&'static str>,
    /// Set unless the environment or the workflow sets them (update checks off, …).
    pub(crate) defaults: &'static [(&'static str, &'static str)],
}

/// An agent CLI configured by its provider declaration (see the module docs).
#[derive(Debug)]
pub(crate) struct Cli {
    spec: &'static CliSpec,
    info: &'static AdapterInfo,
    program: PathBuf,
    /// Arguments the declaration gives before the call's own (a declared command's).
    program_args: Vec<String>,
    env: ChildEnv,
    model: Option<String>,
    options: Map<String, Value>,
    base_url: Option<String>,
    credentials: Credentials,
    /// The variable of the child's environment the key (or its placeholder) was placed in.
    key_var: Option<String>,
    /// atomic's model gateway, when it holds the key.
    gateway: Option<Gateway>,
    /// atomic's environment: the variables an `mcp` server is given are read from it.
    outer_env: Environment,
    /// Where a call's private files go.
    temp_dir: PathBuf,
    spawner: Arc<dyn Spawner>,
}

impl Cli {
    /// Configures the CLI `spec` describes from its `provider` block: finds the program,
    /// builds the child's environment (base variables, the adapter's settings, `pass-env`
    /// and `env.NAME` options), places the endpoint and sets the defaults.
    ///
    /// # Errors
    /// [`ProviderError::Config`]: the CLI is not installed, the key variable is unset, the
    /// base URL means nothing to it, or an option has the wrong type.
    pub(crate) fn new(
        spec: &'static CliSpec,
        decl: &ProviderDecl,
        cx: &ProviderContext<'_>,
    ) -> Result<Self, ProviderError> {
        let adapter = spec.adapter;
        let info = adapter_info(adapter).expect("every agent CLI adapter is in the catalogue");
        let (program, program_args) = locate(spec, decl, cx.env)?;
        let mut env = ChildEnv::new(
            cx.env,
            spec.settings,
            spec.setting_prefixes,
            spec.credential_vars,
        );
        env.apply_options(adapter, cx.env, &decl.options)?;
        let declared_url = decl.base_url.as_ref().map(|url| url.value.clone());
        let credentials = Credentials::from_decl(adapter, decl, cx.env)?;
        let Placed {
            key_var,
            behind,
            base_url,
        } = place_endpoint(spec, decl, &mut env, declared_url, &credentials)?;
        for (name, value) in spec.defaults {
            env.set_default(name, value);
        }
        let mut cli = Self {
            spec,
            info,
            program,
            program_args,
            env,
            model: decl.model.as_ref().map(|model| model.value.clone()),
            options: decl.options.clone(),
            base_url,
            credentials,
            key_var,
            gateway: None,
            outer_env: cx.env.clone(),
            temp_dir: private_dir(cx.env),
            spawner: Arc::clone(&cx.spawner),
        };
        if let Some(Behind { upstream, url_var }) = behind
            && let Some(url) = cli.hold_key(&upstream)?
        {
            match url_var {
                Some(var) => cli.env.set(var, url),
                None => cli.base_url = Some(url),
            }
        }
        Ok(cli)
    }

    /// `adapter="…"`.
    pub(crate) fn adapter(&self) -> &'static str {
        self.spec.adapter
    }

    /// The adapter's row in the catalogue.
    pub(crate) fn info(&self) -> &'static AdapterInfo {
        self.info
    }

    /// The spec it was configured from.
    pub(crate) fn spec(&self) -> &'static CliSpec {
        self.spec
    }

    /// The model a call uses: the request's (node → workflow), else the provider's.
    pub(crate) fn model(&self, request: &AgentRequest) -> Option<String> {
        request.model.clone().or_else(|| self.model.clone())
    }

    /// Option `name`: the agent's own, else the provider's.
    pub(crate) fn option<'a>(&'a self, request: &'a AgentRequest, name: &str) -> Option<&'a Value> {
        request.options.get(name).or_else(|| self.options.get(name))
    }

    /// `base-url=` as the CLI is to use it (atomic's gateway, when it holds the key), for
    /// a dialect that places it itself.
    pub(crate) fn base_url(&self) -> Option<&str> {
        self.base_url.as_deref()
    }

    /// The key and where it came from.
    pub(crate) fn credentials(&self) -> &Credentials {
        &self.credentials
    }

    /// The variable of the child's environment holding the key (or its placeholder), if
    /// it was given one.
    pub(crate) fn key_var(&self) -> Option<&str> {
        self.key_var.as_deref()
    }

    /// The environment every process of the CLI gets.
    pub(crate) fn env(&self) -> &ChildEnv {
        &self.env
    }

    /// Sets a variable of that environment (an adapter's own, while it is configured).
    pub(crate) fn set_env(&mut self, name: &str, value: impl Into<String>) {
        self.env.set(name, value);
    }

    /// atomic's own environment (what MCP servers are given variables from).
    pub(crate) fn outer_env(&self) -> &Environment {
        &self.outer_env
    }

    /// Where a call's private files go (`TMPDIR`, else `/tmp`).
    pub(crate) fn temp_dir(&self) -> &Path {
        &self.temp_dir
    }

    /// Holds the key from now on (an adapter that finds the model's endpoint itself):
    /// binds atomic's gateway to `upstream`, gives the CLI the placeholder in the key's
    /// place, and returns the URL the CLI is to use for `upstream`. `None` without a key.
    ///
    /// # Errors
    /// [`ProviderError::Config`] when the gateway cannot listen or `upstream` is no URL.
    pub(crate) fn hold_key(&mut self, upstream: &str) -> Result<Option<String>, ProviderError> {
        let (Some(key), Some(var)) = (self.credentials.key(), self.key_var.clone()) else {
            return Ok(None);
        };
        let gateway = Gateway::bind(self.spec.adapter, upstream, key)?;
        let url = gateway.url_for(upstream);
        self.env.set(var, gateway.placeholder());
        self.gateway = Some(gateway);
        Ok(Some(url))
    }

    /// Where a file the CLI itself writes during `request` goes: the call's private temp
    /// directory when it runs in a sandbox (the only one it may write outside the
    /// workspace), else [`Cli::temp_dir`].
    pub(crate) fn call_temp_dir(&self, request: &AgentRequest) -> PathBuf {
        request
            .sandbox
            .as_ref()
            .map_or_else(|| self.temp_dir.clone(), |sandbox| sandbox.temp_dir.clone())
    }

    /// A fresh directory only this user may enter, in [`Cli::call_temp_dir`], for the CLI
    /// to use as its `TMPDIR` during `request`: what a CLI writes to its temp directory
    /// (the Gemini CLI's report of a failed model request, the request in it, readable by
    /// anyone) stays the call's. It is the caller's to remove: pass it to
    /// [`Cli::spawn_leaving`] (or a dialect's [`Invocation::leftovers`](super::Invocation)).
    ///
    /// # Errors
    /// [`ProviderError::Config`] naming the directory when it cannot be made.
    pub(crate) fn private_temp_dir(
        &self,
        request: &AgentRequest,
    ) -> Result<PathBuf, ProviderError> {
        let parent = self.call_temp_dir(request);
        let path = parent.join(format!(
            "atomic-{}-tmp-{:016x}",
            self.adapter(),
            rand::random::<u64>()
        ));
        let mut builder = std::fs::DirBuilder::new();
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder.create(&path).map_err(|error| {
            ProviderError::config(
                self.adapter(),
                format!(
                    "cannot make a private temp directory in `{}`: {error}; set TMPDIR to a \
                     writable directory",
                    parent.display()
                ),
            )
        })?;
        Ok(path)
    }

    /// A file only this user reads, holding `text`, removed when dropped.
    ///
    /// # Errors
    /// [`ProviderError::Config`] naming the directory when it cannot be written.
    pub(crate) fn private_file(
        &self,
        prefix: &str,
        text: &str,
    ) -> Result<PrivateFile, ProviderError> {
        PrivateFile::write(self.adapter(), &self.temp_dir, prefix, text)
    }

    /// Starts the CLI for `request` with `args` (after the declaration's own) and `env`
    /// added to its environment, in the request's working directory.
    ///
    /// # Errors
    /// [`ProviderError::Config`] when it cannot be started.
    pub(crate) fn spawn(
        &self,
        request: &AgentRequest,
        args: Vec<String>,
        env: Vec<(String, String)>,
    ) -> Result<Child, ProviderError> {
        let Some(sandbox) = &request.sandbox else {
            return self.spawn_in(request.workspace.root(), args, env);
        };
        self.serve_gateway()?;
        // The CLI's own state may live where its variables say (`CODEX_HOME`, the XDG
        // directories, …) rather than below the home directory: it may write there too.
        let mut confinement = sandbox.confinement.as_ref().clone();
        let own = self.own_dirs(&env);
        // A rule needs its directory to exist: made now, as the CLI would make it.
        for dir in &own {
            let _ = std::fs::create_dir_all(dir);
        }
        confinement.hidden.retain(|hidden| {
            !own.iter()
                .any(|dir| dir.starts_with(hidden) || hidden.starts_with(dir))
        });
        confinement.writable.extend(own);
        if let Some(gateway) = &self.gateway {
            confinement.ports.push(gateway.port());
            sandbox.loopback.open(gateway.port());
        }
        // The call's own variables after the sandbox's: a `TMPDIR` of the call's, inside the
        // sandbox's. The proxy is the only way out whatever they say (the confinement's ports).
        let launch = self
            .launch_in(request.workspace.root(), args, Vec::new())
            .envs(sandbox.env.iter().cloned())
            .envs(env)
            .confined(Some(std::sync::Arc::new(confinement)));
        child::spawn(self.adapter(), self.spawner.as_ref(), launch)
    }

    /// The directories the CLI keeps its own state in, as its environment (and `extra`,
    /// the call's variables) places them.
    fn own_dirs(&self, extra: &[(String, String)]) -> Vec<PathBuf> {
        let get = |name: &str| -> Option<PathBuf> {
            extra
                .iter()
                .rev()
                .find(|(var, _)| var == name)
                .map(|(_, value)| value.as_str())
                .or_else(|| self.env.get(name))
                .filter(|value| !value.is_empty())
                .map(PathBuf::from)
        };
        let mut dirs: Vec<PathBuf> = [
            "CODEX_HOME",
            "GEMINI_CLI_HOME",
            "COPILOT_HOME",
            "CLAUDE_CONFIG_DIR",
            "XDG_CACHE_HOME",
        ]
        .iter()
        .filter_map(|name| get(name))
        .collect();
        let program = match self.adapter() {
            "opencode" => Some("opencode"),
            "copilot" => Some("github-copilot"),
            _ => None,
        };
        if let Some(program) = program {
            for name in ["XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"] {
                if let Some(dir) = get(name) {
                    dirs.push(dir.join(program));
                }
            }
        }
        dirs
    }

    /// [`Cli::spawn`], and `leftovers` (files or directories of atomic's the CLI writes in)
    /// removed once it and everything it started are gone ([`Child::remove_when_gone`]),
    /// or at once when it could not be started.
    ///
    /// # Errors
    /// As [`Cli::spawn`].
    pub(crate) fn spawn_leaving(
        &self,
        request: &AgentRequest,
        args: Vec<String>,
        env: Vec<(String, String)>,
        leftovers: Vec<PathBuf>,
    ) -> Result<Child, ProviderError> {
        match self.spawn(request, args, env) {
            Ok(child) => {
                for path in leftovers {
                    child.remove_when_gone(path);
                }
                Ok(child)
            }
            Err(error) => {
                crate::process::groups::remove(&leftovers);
                Err(error)
            }
        }
    }

    /// [`Cli::spawn`] in `dir` (a server started for a project rather than for a call).
    ///
    /// # Errors
    /// [`ProviderError::Config`] when it cannot be started.
    pub(crate) fn spawn_in(
        &self,
        dir: &Path,
        args: Vec<String>,
        env: Vec<(String, String)>,
    ) -> Result<Child, ProviderError> {
        self.serve_gateway()?;
        let launch = self.launch_in(dir, args, env);
        child::spawn(self.adapter(), self.spawner.as_ref(), launch)
    }

    /// Starts the gateway (on the runtime of the first call), if atomic holds the key.
    fn serve_gateway(&self) -> Result<(), ProviderError> {
        self.gateway
            .as_ref()
            .map_or(Ok(()), |gateway| gateway.serve(self.adapter()))
    }

    /// The CLI's launch in `dir` with `args` and `env` over its own environment.
    fn launch_in(&self, dir: &Path, args: Vec<String>, env: Vec<(String, String)>) -> Launch {
        let mut launch = Launch::new(&self.program)
            .args(self.program_args.iter().cloned())
            .args(args)
            .envs(self.env.iter())
            .envs(env);
        if !dir.as_os_str().is_empty() {
            launch = launch.cwd(dir);
        }
        launch
    }
}

/// What [`place_endpoint`] decided.
struct Placed {
    key_var: Option<String>,
    /// Where atomic's gateway is to forward, when atomic holds the key.
    behind: Option<Behind>,
    /// The base URL a [`BaseUrl::Dialect`] places.
    base_url: Option<String>,
}

/// The endpoint atomic's gateway forwards to, and the variable the CLI reads its URL from
/// (`None`: the dialect places [`Cli::base_url`]).
struct Behind {
    upstream: String,
    url_var: Option<&'static str>,
}

/// Puts the base URL and the key where the CLI reads them (see [`CliSpec`]), and says where
/// atomic's gateway is to forward when atomic holds the key. The one place that decides
/// what endpoint an agent CLI talks to, and with what key.
fn place_endpoint(
    spec: &CliSpec,
    decl: &ProviderDecl,
    env: &mut ChildEnv,
    declared: Option<String>,
    credentials: &Credentials,
) -> Result<Placed, ProviderError> {
    let base_url = declared;
    match (&spec.base_url, base_url.as_deref()) {
        (_, None) | (BaseUrl::Dialect, _) => {}
        (BaseUrl::Env(var), Some(url)) => env.set(*var, url),
        (BaseUrl::Refused(why), Some(_)) => {
            return Err(ProviderError::config(spec.adapter, *why));
        }
    }
    let Some(key) = credentials.key() else {
        return Ok(Placed {
            key_var: None,
            behind: None,
            base_url,
        });
    };
    let renamed = match decl.options.get("api-key-var") {
        None => None,
        Some(Value::String(var)) if !var.is_empty() => Some(var.clone()),
        Some(_) => {
            return Err(ProviderError::config(
                spec.adapter,
                "option `api-key-var` must be the name of a variable",
            ));
        }
    };
    let key_var = match (&spec.key, renamed) {
        (_, Some(var)) => var,
        (KeyVar::Fixed(var), None) => (*var).to_owned(),
        (KeyVar::Chosen(choose), None) => choose(env).to_owned(),
        (KeyVar::Own, None) => credentials
            .variable()
            .expect("a key is read from the variable api-key-env= names")
            .to_owned(),
    };
    env.set(key_var.clone(), key);
    // OpenCode finds its model's endpoint in its config: its adapter calls `Cli::hold_key`.
    let behind = if decl.key_held() {
        match &spec.base_url {
            BaseUrl::Env(var) => env
                .get(var)
                .map(str::to_owned)
                .or_else(|| spec.endpoint.map(str::to_owned))
                .map(|upstream| Behind {
                    upstream,
                    url_var: Some(*var),
                }),
            BaseUrl::Dialect => base_url
                .clone()
                .or_else(|| spec.endpoint.map(str::to_owned))
                .map(|upstream| Behind {
                    upstream,
                    url_var: None,
                }),
            // An agent of any make: its key's variable says which wire it speaks.
            BaseUrl::Refused(_) => KnownWire::of(&key_var).map(|wire| Behind {
                upstream: env.get(wire.base_url).unwrap_or(wire.endpoint).to_owned(),
                url_var: Some(wire.base_url),
            }),
        }
    } else {
        None
    };
    Ok(Placed {
        key_var: Some(key_var),
        behind,
        base_url,
    })
}

/// The executable (and its leading arguments) `spec` runs for `decl`.
fn locate(
    spec: &CliSpec,
    decl: &ProviderDecl,
    env: &Environment,
) -> Result<(PathBuf, Vec<String>), ProviderError> {
    match &spec.program {
        Program::Npm { command, package } => {
            let bin = find_binary(spec.adapter, command, package, &decl.options, env)?;
            Ok((bin, Vec::new()))
        }
        Program::Declared { known } => {
            let Some((program, args)) = decl.command.split_first() else {
                return Err(ProviderError::config(
                    spec.adapter,
                    format!(
                        "provider `{}` needs a `command \"program\" \"arg\"…` child: the agent \
                         to start, e.g. `command \"gemini\" \"--acp\"`",
                        decl.name.value
                    ),
                ));
            };
            let bin = declared(spec.adapter, &program.value, known, env)?;
            Ok((bin, args.iter().map(|arg| arg.value.clone()).collect()))
        }
    }
}

/// A declared program: a path, or a name on `PATH`.
fn declared(
    adapter: &'static str,
    program: &str,
    known: &[(&str, &str)],
    env: &Environment,
) -> Result<PathBuf, ProviderError> {
    let found = if program.contains('/') {
        Some(PathBuf::from(program)).filter(|path| is_executable(path))
    } else {
        search_path(program, env)
    };
    found.ok_or_else(|| {
        let name = program.rsplit('/').next().unwrap_or(program);
        let install = known.iter().find(|(known, _)| *known == name).map_or_else(
            || "install the agent, or give the path to its executable".to_owned(),
            |(_, package)| format!("install it with `npm install -g {package}`"),
        );
        ProviderError::config(
            adapter,
            format!(
                "the agent `{program}` was not found{}; {install}",
                if program.contains('/') {
                    ""
                } else {
                    " on PATH"
                }
            ),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::registry::test_decl;
    use crate::source::{Span, Spanned};

    /// An adapter whose CLI gets the key (OpenCode's row).
    const SPEC: CliSpec = CliSpec {
        adapter: "opencode",
        program: Program::Npm {
            command: "sh",
            package: "@example/sh",
        },
        settings: &["SETTING"],
        setting_prefixes: &["PREFIX_"],
        credential_vars: &["PREFIX_TOKEN"],
        base_url: BaseUrl::Env("THE_BASE_URL"),
        key: KeyVar::Fixed("THE_KEY"),
        endpoint: None,
        defaults: &[("NO_UPDATES", "1"), ("SETTING", "default")],
    };

    fn env() -> Environment {
        Environment::default()
            .with("PATH", "/usr/bin:/bin")
            .with("SETTING", "mine")
            .with("PREFIX_A", "a")
            .with("PREFIX_TOKEN", "never passed")
            .with("OTHER", "not passed")
            .with("MY_KEY", "sk-9")
    }

    /// A declaration on [`SPEC`]'s adapter, with a `base-url=` and, if `key`, a key.
    fn decl(key: bool) -> ProviderDecl {
        let mut decl = test_decl("p", "opencode");
        decl.base_url = Some(Spanned::new(
            "http://127.0.0.1:9".to_owned(),
            Span::default(),
        ));
        if key {
            decl.api_key_env = Some(Spanned::new("MY_KEY".to_owned(), Span::default()));
        }
        decl
    }

    #[test]
    fn the_environment_holds_settings_the_endpoint_and_defaults_but_no_other_secret() {
        static LEAKED: CliSpec = SPEC;
        let env = env();
        let cli = Cli::new(
            &LEAKED,
            &decl(true),
            &ProviderContext::new(Path::new("."), &env),
        )
        .expect("configured");
        let vars: Vec<(&str, &str)> = cli.env().iter().collect();
        assert_eq!(
            vars,
            [
                ("NO_UPDATES", "1"),
                ("PATH", "/usr/bin:/bin"),
                ("PREFIX_A", "a"),
                ("SETTING", "mine"),
                ("THE_BASE_URL", "http://127.0.0.1:9"),
                ("THE_KEY", "sk-9"),
            ]
        );
        assert_eq!(cli.key_var(), Some("THE_KEY"));
        assert!(!format!("{cli:?}").contains("sk-9"));
    }

    #[test]
    fn a_held_key_never_enters_the_environment_the_cli_gets_a_placeholder_and_the_gateway() {
        static HELD: CliSpec = CliSpec {
            adapter: "claude-code",
            endpoint: Some("https://api.anthropic.com"),
            ..SPEC
        };
        let env = env();
        let cx = ProviderContext::new(Path::new("."), &env);
        let mut held = decl(true);
        held.adapter = Spanned::new("claude-code".to_owned(), Span::default());
        let cli = Cli::new(&HELD, &held, &cx).expect("configured");
        let placeholder = cli.env().get("THE_KEY").expect("a placeholder").to_owned();
        assert!(placeholder.starts_with("atomic-held-"), "{placeholder}");
        assert!(cli.env().iter().all(|(_, value)| !value.contains("sk-9")));
        let url = cli.env().get("THE_BASE_URL").expect("the gateway's URL");
        assert!(url.starts_with("http://127.0.0.1:"), "{url}");
        assert_ne!(url, "http://127.0.0.1:9");

        // ACP: by the key's variable, the wire's base URL variable pointed at the gateway.
        static ANY: CliSpec = CliSpec {
            adapter: "acp",
            base_url: BaseUrl::Refused("no"),
            key: KeyVar::Own,
            ..SPEC
        };
        let env = env.with("GEMINI_API_KEY", "sk-g");
        let cx = ProviderContext::new(Path::new("."), &env);
        let mut acp = test_decl("a", "acp");
        acp.api_key_env = Some(Spanned::new("GEMINI_API_KEY".to_owned(), Span::default()));
        let cli = Cli::new(&ANY, &acp, &cx).expect("configured");
        assert_ne!(cli.env().get("GEMINI_API_KEY"), Some("sk-g"));
        assert!(
            cli.env()
                .get("GOOGLE_GEMINI_BASE_URL")
                .is_some_and(|url| url.starts_with("http://127.0.0.1:"))
        );
        // Another variable: the agent's wire is unknown, so it gets the key.
        acp.api_key_env = Some(Spanned::new("MY_KEY".to_owned(), Span::default()));
        let cli = Cli::new(&ANY, &acp, &cx).expect("configured");
        assert_eq!(cli.env().get("MY_KEY"), Some("sk-9"));
    }

    #[test]
    fn api_key_var_renames_where_the_key_goes_and_own_keeps_its_name() {
        static OWN: CliSpec = CliSpec {
            key: KeyVar::Own,
            ..SPEC
        };
        let env = env();
        let cx = ProviderContext::new(Path::new("."), &env);
        let cli = Cli::new(&OWN, &decl(true), &cx).expect("configured");
        assert_eq!(cli.env().get("MY_KEY"), Some("sk-9"));
        let mut renamed = decl(true);
        renamed.options.insert(
            "api-key-var".to_owned(),
            Value::String("GATEWAY_TOKEN".to_owned()),
        );
        static FIXED: CliSpec = SPEC;
        let cli = Cli::new(&FIXED, &renamed, &cx).expect("configured");
        assert_eq!(cli.env().get("GATEWAY_TOKEN"), Some("sk-9"));
        assert_eq!(cli.env().get("THE_KEY"), None);
    }

    #[test]
    fn a_refused_base_url_and_a_missing_declared_agent_are_configuration_errors() {
        static REFUSED: CliSpec = CliSpec {
            base_url: BaseUrl::Refused("set the agent's own variable instead"),
            ..SPEC
        };
        let env = env();
        let cx = ProviderContext::new(Path::new("."), &env);
        let error = Cli::new(&REFUSED, &decl(false), &cx).expect_err("refused");
        assert!(
            error.to_string().contains("own variable instead"),
            "{error}"
        );

        static DECLARED: CliSpec = CliSpec {
            adapter: "acp",
            program: Program::Declared {
                known: &[("claude-code-acp", "@zed-industries/claude-code-acp")],
            },
            base_url: BaseUrl::Dialect,
            ..SPEC
        };
        let mut acp = test_decl("a", "acp");
        acp.command = vec![Spanned::new("claude-code-acp".to_owned(), Span::default())];
        let error = Cli::new(&DECLARED, &acp, &cx).expect_err("not installed");
        assert!(
            error
                .to_string()
                .contains("npm install -g @zed-industries/claude-code-acp"),
            "{error}"
        );
    }
}
