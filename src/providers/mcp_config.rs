//! The `mcp` servers of an agent call, as agent CLIs read them: the `{"mcpServers": {…}}`
//! form (Claude Code's `--mcp-config`), written to a private file so the secrets passed to
//! a server never show in a process listing. Resolved once for every adapter
//! ([`resolve_mcp_servers`]); each writes the result in its CLI's own form.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use super::ProviderError;
use super::env::Environment;
use crate::ir::{McpServer, McpTransport};

/// `{"mcpServers": {name: {type: "stdio", command, args, env} | {type: "http", url,
/// headers}}}` (Claude Code's `--mcp-config`) for servers resolved by
/// [`resolve_mcp_servers`].
pub(crate) fn mcp_servers_json(servers: &[ResolvedMcp]) -> Value {
    let servers = render_servers(
        servers,
        |program, args, env| json!({"type": "stdio", "command": program, "args": args, "env": env}),
        |url, headers| json!({"type": "http", "url": url, "headers": headers}),
    );
    json!({ "mcpServers": servers })
}

/// `servers` as the `{name: entry}` map agent CLIs read, each entry in the CLI's own form:
/// `stdio` writes a server it starts (program, arguments, variables), `http` one it
/// reaches (URL, headers); variables and headers come as JSON objects.
pub(crate) fn render_servers(
    servers: &[ResolvedMcp],
    stdio: impl Fn(&str, &[String], Map<String, Value>) -> Value,
    http: impl Fn(&str, Map<String, Value>) -> Value,
) -> Map<String, Value> {
    let object = |pairs: &[(String, String)]| -> Map<String, Value> {
        pairs
            .iter()
            .map(|(name, value)| (name.clone(), Value::String(value.clone())))
            .collect()
    };
    servers
        .iter()
        .map(|server| match server {
            ResolvedMcp::Stdio {
                name,
                program,
                args,
                env,
            } => (name.clone(), stdio(program, args, object(env))),
            ResolvedMcp::Http { name, url, headers } => (name.clone(), http(url, object(headers))),
        })
        .collect()
}

/// The variables of stdio server `server`'s process that its `env` children declare: the
/// value given, or `env`'s (atomic's environment) for one passed through.
///
/// # Errors
/// [`ProviderError::Config`] naming the server and the variable that is not set.
pub(crate) fn server_env(
    adapter: &'static str,
    server: &McpServer,
    env: &Environment,
) -> Result<Vec<(String, String)>, ProviderError> {
    server
        .env
        .iter()
        .map(|var| {
            let value = match &var.value {
                Some(value) => value.value.clone(),
                None => passed_through(adapter, &server.name.value, &var.name.value, env)?,
            };
            Ok((var.name.value.clone(), value))
        })
        .collect()
}

/// The value of `var`, which MCP server `server` is given from `env` (atomic's environment).
///
/// # Errors
/// [`ProviderError::Config`] naming the server and the variable when it is not set.
pub(crate) fn passed_through(
    adapter: &'static str,
    server: &str,
    var: &str,
    env: &Environment,
) -> Result<String, ProviderError> {
    env.get(var).map(str::to_owned).ok_or_else(|| {
        ProviderError::config(
            adapter,
            format!(
                "MCP server `{server}` is given `{var}` from atomic's environment, but it is not set; set it, or give the value (`env \"{var}\" \"…\"`)"
            ),
        )
    })
}

/// One `mcp` server, resolved for an adapter to write in its CLI's own configuration: the
/// variables passed through read, and a stdio server's command wrapped in `env -u NAME…`
/// (see [`mcp_servers_json`]) so it never inherits the CLI's key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ResolvedMcp {
    /// Started by the CLI: `program args…` with `env` added to its environment.
    Stdio {
        name: String,
        program: String,
        args: Vec<String>,
        env: Vec<(String, String)>,
    },
    /// Reached over streamable HTTP, with `headers` (the bearer token, when declared).
    Http {
        name: String,
        url: String,
        headers: Vec<(String, String)>,
    },
}

/// `servers` resolved for `adapter` ([`ResolvedMcp`]); `scrub` names the variables of the
/// CLI's environment a stdio server must not inherit ([`held_secrets`]).
///
/// # Errors
/// [`ProviderError::Config`] naming the server and the variable that is not set, or a
/// server without a command.
pub(crate) fn resolve_mcp_servers(
    adapter: &'static str,
    servers: &[McpServer],
    env: &Environment,
    scrub: &[String],
) -> Result<Vec<ResolvedMcp>, ProviderError> {
    servers
        .iter()
        .map(|server| {
            let name = server.name.value.clone();
            match &server.transport {
                McpTransport::Stdio { command } => {
                    let vars = server_env(adapter, server, env)?;
                    let Some((first, rest)) = command.split_first() else {
                        return Err(ProviderError::config(
                            adapter,
                            format!("MCP server `{name}` has no command"),
                        ));
                    };
                    let mut unset: Vec<String> = Vec::new();
                    for var in scrub {
                        if !vars.iter().any(|(kept, _)| kept == var) {
                            unset.extend(["-u".to_owned(), var.clone()]);
                        }
                    }
                    let command: Vec<String> = rest.iter().map(|arg| arg.value.clone()).collect();
                    let (program, args) = if unset.is_empty() {
                        (first.value.clone(), command)
                    } else {
                        unset.push(first.value.clone());
                        unset.extend(command);
                        ("env".to_owned(), unset)
                    };
                    Ok(ResolvedMcp::Stdio {
                        name,
                        program,
                        args,
                        env: vars,
                    })
                }
                McpTransport::Http { url, bearer_env } => {
                    let mut headers = Vec::new();
                    if let Some(var) = bearer_env {
                        let token = passed_through(adapter, &name, &var.value, env)?;
                        headers.push(("Authorization".to_owned(), format!("Bearer {token}")));
                    }
                    Ok(ResolvedMcp::Http {
                        name,
                        url: url.value.clone(),
                        headers,
                    })
                }
            }
        })
        .collect()
}

/// The variables of an agent CLI's environment `child` that a stdio MCP server it starts
/// must not inherit: those named in `known` (the CLI's key variables) and any whose name
/// says it is a secret (`…KEY…`, `…TOKEN…`, `…SECRET…`, `…PASSWORD…`).
pub(crate) fn held_secrets<'a>(
    child: impl IntoIterator<Item = (&'a str, &'a str)>,
    known: &[&str],
) -> Vec<String> {
    child
        .into_iter()
        .map(|(name, _)| name)
        .filter(|name| {
            let upper = name.to_ascii_uppercase();
            known.contains(name)
                || ["KEY", "TOKEN", "SECRET", "PASSWORD"]
                    .iter()
                    .any(|word| upper.contains(word))
        })
        .map(str::to_owned)
        .collect()
}

/// Where an adapter writes a call's private files: `TMPDIR` of atomic's environment, else
/// `/tmp`.
pub(crate) fn private_dir(env: &Environment) -> PathBuf {
    env.get("TMPDIR")
        .filter(|dir| !dir.is_empty())
        .map_or_else(|| PathBuf::from("/tmp"), PathBuf::from)
}

/// The servers an agent gets: the workflow's, then its own (a same-named one replaces the
/// workflow's).
#[must_use]
pub fn agent_mcp_servers<'a>(
    workflow: &'a [McpServer],
    own: impl IntoIterator<Item = &'a McpServer>,
) -> Vec<McpServer> {
    let mut servers: Vec<McpServer> = workflow.to_vec();
    for server in own {
        servers.retain(|kept| kept.name.value != server.name.value);
        servers.push(server.clone());
    }
    servers
}

/// A file only this user can read, deleted when dropped.
#[derive(Debug)]
pub(crate) struct PrivateFile(PathBuf);

impl PrivateFile {
    /// Writes `text` to a new file in `dir`.
    ///
    /// # Errors
    /// [`ProviderError::Config`] naming the directory when it cannot be written.
    pub(crate) fn write(
        adapter: &'static str,
        dir: &Path,
        prefix: &str,
        text: &str,
    ) -> Result<Self, ProviderError> {
        let failed = |error: std::io::Error| {
            ProviderError::config(
                adapter,
                format!(
                    "cannot write a private file in `{}`: {error}; set TMPDIR to a writable directory",
                    dir.display()
                ),
            )
        };
        let suffix: u64 = rand::random();
        let path = dir.join(format!("{prefix}-{suffix:016x}.json"));
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let mut file = options.open(&path).map_err(failed)?;
        let file_guard = Self(path);
        file.write_all(text.as_bytes()).map_err(failed)?;
        Ok(file_guard)
    }

    /// Where it is.
    pub(crate) fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for PrivateFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::McpEnv;
    use crate::source::{Span, Spanned};

    fn spanned(text: &str) -> Spanned<String> {
        Spanned::new(text.to_owned(), Span::default())
    }

    fn stdio(name: &str, command: &[&str], env: &[(&str, Option<&str>)]) -> McpServer {
        McpServer {
            name: spanned(name),
            transport: McpTransport::Stdio {
                command: command.iter().map(|arg| spanned(arg)).collect(),
            },
            env: env
                .iter()
                .map(|(name, value)| McpEnv {
                    name: spanned(name),
                    value: value.map(spanned),
                })
                .collect(),
            span: Span::default(),
        }
    }

    #[test]
    fn servers_render_with_passed_through_variables() {
        let env = Environment::default().with("TOKEN", "t0k");
        let http = McpServer {
            name: spanned("docs"),
            transport: McpTransport::Http {
                url: spanned("https://example.com/mcp"),
                bearer_env: Some(spanned("TOKEN")),
            },
            env: Vec::new(),
            span: Span::default(),
        };
        let servers = [
            stdio(
                "files",
                &["mcp-files", "."],
                &[("TOKEN", None), ("MODE", Some("ro"))],
            ),
            http,
        ];
        let render = |servers: &[McpServer], env: &Environment, scrub: &[String]| {
            resolve_mcp_servers("test", servers, env, scrub)
                .map(|servers| mcp_servers_json(&servers))
        };
        let rendered = render(&servers, &env, &[]).expect("renders");
        assert_eq!(
            rendered,
            json!({"mcpServers": {
                "files": {"type": "stdio", "command": "mcp-files", "args": ["."], "env": {"TOKEN": "t0k", "MODE": "ro"}},
                "docs": {"type": "http", "url": "https://example.com/mcp", "headers": {"Authorization": "Bearer t0k"}},
            }})
        );
        // The CLI's own key is kept from the server, unless its declaration passes it on.
        let scrubbed = render(
            &servers[..1],
            &env,
            &["MODEL_KEY".to_owned(), "TOKEN".to_owned()],
        )
        .expect("renders");
        assert_eq!(
            scrubbed["mcpServers"]["files"],
            json!({"type": "stdio", "command": "env", "args": ["-u", "MODEL_KEY", "mcp-files", "."], "env": {"TOKEN": "t0k", "MODE": "ro"}})
        );
        let missing = render(&servers, &Environment::default(), &[]).expect_err("TOKEN is not set");
        assert!(missing.to_string().contains("`TOKEN`"), "{missing}");
    }

    #[test]
    fn resolved_servers_wrap_stdio_commands_in_env_unset() {
        let env = Environment::default().with("TOKEN", "t0k");
        let servers = [stdio("files", &["mcp-files", "."], &[("TOKEN", None)])];
        let scrub = held_secrets(
            [
                ("PATH", "/bin"),
                ("MODEL_KEY", "k"),
                ("TOKEN", "t"),
                ("OTHER", "o"),
            ],
            &["OTHER"],
        );
        assert_eq!(scrub, ["MODEL_KEY", "TOKEN", "OTHER"]);
        let resolved = resolve_mcp_servers("test", &servers, &env, &scrub).expect("resolves");
        assert_eq!(
            resolved,
            [ResolvedMcp::Stdio {
                name: "files".to_owned(),
                program: "env".to_owned(),
                args: ["-u", "MODEL_KEY", "-u", "OTHER", "mcp-files", "."]
                    .map(str::to_owned)
                    .to_vec(),
                env: vec![("TOKEN".to_owned(), "t0k".to_owned())],
            }]
        );
        let plain = resolve_mcp_servers("test", &servers, &env, &[]).expect("resolves");
        assert!(
            matches!(&plain[0], ResolvedMcp::Stdio { program, args, .. } if program == "mcp-files" && args == &["."])
        );
    }

    #[test]
    fn an_agents_own_server_replaces_the_workflows_of_that_name() {
        let workflow = [stdio("a", &["one"], &[]), stdio("b", &["two"], &[])];
        let own = [stdio("a", &["three"], &[])];
        let servers = agent_mcp_servers(&workflow, &own);
        let names: Vec<(&str, &str)> = servers
            .iter()
            .map(|server| match &server.transport {
                McpTransport::Stdio { command } => {
                    (server.name.value.as_str(), command[0].value.as_str())
                }
                McpTransport::Http { .. } => ("?", "?"),
            })
            .collect();
        assert_eq!(names, [("b", "two"), ("a", "three")]);
    }

    #[test]
    fn a_private_file_is_for_this_user_only_and_goes_away() {
        let dir = tempfile::tempdir().expect("temp dir");
        let file = PrivateFile::write("test", dir.path(), "mcp", "{}").expect("written");
        let path = file.path().to_owned();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path)
                .expect("exists")
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        drop(file);
        assert!(!path.exists());
    }
}
