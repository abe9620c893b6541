//! Sandboxes for steps: what a `sandbox` declaration means for one step's processes, made
//! concrete — the paths it may write, the paths it may not read, the hosts it may reach —
//! and the parts that enforce it while the step runs: the kernel's confinement of its
//! processes (`process::Confinement`, Landlock) and the egress proxy that is their only way
//! out ([`egress`]).
//!
//! A sandboxed step's processes write only beneath the workspace (the branch's worktree in
//! an isolated parallel), a private temp directory made for the step (its `TMPDIR`) and the
//! declaration's `write` paths; read everything but [`CREDENTIAL_STORES`] and the `hide`
//! paths; and open TCP connections only to the proxy, which lets through the `network`
//! hosts. What the proxy refuses reaches the run as `sandbox-denied` events.
//!
//! This module imports the IR and the process module only.

pub mod egress;

use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use egress::{Allowed, Egress, Loopback, Refusals, Refused};

use crate::ir::{ProviderDecl, Sandbox};
use crate::process::Confinement;

/// Where people keep credentials, below their home directory: never readable in a sandbox.
/// An agent CLI's own directory among them is given back to that CLI (its sessions and
/// login live there).
pub const CREDENTIAL_STORES: &[&str] = &[
    ".ssh",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".config/gh",
    ".gnupg",
    ".netrc",
    ".git-credentials",
    ".config/git/credentials",
    ".docker",
    ".kube",
    ".npmrc",
    ".pypirc",
    ".cargo/credentials.toml",
    ".password-store",
    ".local/share/keyrings",
    ".claude",
    ".claude.json",
    ".codex",
    ".gemini",
    ".copilot",
    ".config/github-copilot",
    ".local/share/opencode",
    ".config/opencode",
];

/// The paths below the home directory an agent CLI keeps its own state in (sessions,
/// settings, its login): writable for its own calls, and not hidden from it.
#[must_use]
pub fn cli_home(adapter: &str) -> &'static [&'static str] {
    match adapter {
        "claude-code" => &[".claude", ".claude.json", ".cache"],
        "codex" => &[".codex", ".cache"],
        "gemini" | "acp" => &[".gemini", ".cache"],
        "copilot" => &[".copilot", ".config/github-copilot", ".cache"],
        "opencode" => &[
            ".local/share/opencode",
            ".config/opencode",
            ".local/state/opencode",
            ".cache",
        ],
        _ => &[],
    }
}

/// The hosts an agent CLI talks to its model at when its provider names no `base-url=`.
#[must_use]
pub fn cli_endpoints(adapter: &str) -> &'static [&'static str] {
    match adapter {
        "claude-code" | "anthropic" => &["api.anthropic.com"],
        "codex" | "openai" => &["api.openai.com", "chatgpt.com"],
        "gemini" | "acp" => &["generativelanguage.googleapis.com", "oauth2.googleapis.com"],
        "copilot" => &["api.githubcopilot.com", "api.github.com"],
        _ => &[],
    }
}

/// The model endpoints a provider's own configuration names, beyond `base-url=`: the
/// `baseURL` of each model provider in OpenCode's `option "config"`.
#[must_use]
pub fn configured_endpoints(provider: &ProviderDecl) -> Vec<String> {
    if provider.adapter.value != "opencode" {
        return Vec::new();
    }
    crate::ir::opencode_config(provider.options.get("config"))["provider"]
        .as_object()
        .into_iter()
        .flat_map(|providers| providers.values())
        .filter_map(|model| model["options"]["baseURL"].as_str())
        .map(str::to_owned)
        .collect()
}

/// A step's sandbox made concrete (see the module).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reach {
    /// Where it may write.
    pub writable: Vec<PathBuf>,
    /// What it may not read.
    pub hidden: Vec<PathBuf>,
    /// The hosts it may reach.
    pub allowed: Allowed,
    /// Loopback ports it may connect to directly (a model endpoint on this machine, which
    /// clients do not send through a proxy).
    pub direct: Vec<u16>,
}

impl Reach {
    /// What `sandbox` lets a step working in `workspace` reach; `home` is the user's home
    /// directory (for `~/…` and the credential stores), `own` the paths below it that are
    /// the step's program's own (an agent CLI's home: writable, not hidden).
    #[must_use]
    pub fn of(sandbox: &Sandbox, workspace: &Path, home: Option<&Path>, own: &[&str]) -> Self {
        let place = |path: &str| -> PathBuf {
            match (path.strip_prefix("~/"), home) {
                (Some(below), Some(home)) => home.join(below),
                _ if path == "~" => home.map_or_else(|| PathBuf::from(path), Path::to_path_buf),
                _ => workspace.join(path),
            }
        };
        let mut writable = vec![workspace.to_path_buf()];
        writable.extend(sandbox.write.iter().map(|path| place(&path.value)));
        let mut hidden: Vec<PathBuf> = sandbox.hide.iter().map(|path| place(&path.value)).collect();
        if let Some(home) = home {
            hidden.extend(
                CREDENTIAL_STORES
                    .iter()
                    .filter(|store| !own.contains(store))
                    .map(|store| home.join(store)),
            );
            writable.extend(own.iter().map(|path| home.join(path)));
        }
        Self {
            writable,
            hidden,
            allowed: Allowed::new(sandbox.network.iter().map(|host| host.value.clone())),
            direct: Vec::new(),
        }
    }

    /// The same, also reaching the model endpoint at `url` (`http(s)://host[:port]/…`): its
    /// host through the proxy, or when the host is this machine its port alone (directly
    /// and through the proxy).
    #[must_use]
    pub fn with_endpoint(mut self, url: &str) -> Self {
        let (scheme, rest) = url.split_once("://").unwrap_or(("https", url));
        let authority = rest.split(['/', '?']).next().unwrap_or_default();
        let (host, port) = match authority.rsplit_once(':') {
            Some((host, port)) if !host.ends_with(']') || authority.starts_with('[') => {
                (host.trim_matches(['[', ']']), port.parse().ok())
            }
            _ => (authority, None),
        };
        let port = port.or(match scheme {
            "http" => Some(80),
            "https" => Some(443),
            _ => None,
        });
        if host.is_empty() {
            return self;
        }
        // On this machine by port, never the whole host: its other ports stay closed.
        if matches!(host, "127.0.0.1" | "localhost" | "::1") {
            self.direct.extend(port);
        } else {
            self.allowed.add(host);
        }
        self
    }

    /// The same, also reaching `hosts` through the proxy.
    #[must_use]
    pub fn with_hosts(mut self, hosts: &[&str]) -> Self {
        for host in hosts {
            self.allowed.add(host);
        }
        self
    }
}

/// A step's sandbox while it runs: the proxy, the private temp directory, and what its
/// processes are started with. Dropping it stops the proxy and removes the directory.
#[derive(Debug)]
pub struct Running {
    /// The kernel's confinement for every process the step starts.
    pub confinement: Arc<Confinement>,
    /// The variables its processes get: the proxy (`HTTPS_PROXY`, …) and `TMPDIR`.
    pub env: Vec<(String, String)>,
    /// The loopback ports its proxy lets through (a port opened later counts too).
    pub loopback: Loopback,
    egress: Egress,
    temp: PrivateTemp,
}

impl Running {
    /// Starts the step's proxy and makes its temp directory.
    ///
    /// # Errors
    /// When the proxy cannot listen or the directory cannot be made.
    pub async fn start(reach: &Reach, refusals: Refusals) -> std::io::Result<Self> {
        let loopback = Loopback::new(reach.direct.iter().copied());
        let egress = Egress::start(reach.allowed.clone(), loopback.clone(), refusals).await?;
        let temp = PrivateTemp::make()?;
        let mut writable = reach.writable.clone();
        writable.push(temp.0.clone());
        // Writing to the terminal and the null device is not writing files.
        writable.extend(
            [
                "/dev/null",
                "/dev/zero",
                "/dev/tty",
                "/dev/ptmx",
                "/dev/pts",
                "/dev/shm",
            ]
            .map(PathBuf::from),
        );
        let mut ports = vec![egress.port()];
        ports.extend(&reach.direct);
        let confinement = Arc::new(Confinement {
            writable,
            hidden: reach.hidden.clone(),
            ports,
        });
        let proxy = egress.url();
        let mut env: Vec<(String, String)> = [
            "HTTPS_PROXY",
            "HTTP_PROXY",
            "ALL_PROXY",
            "https_proxy",
            "http_proxy",
            "all_proxy",
        ]
        .iter()
        .map(|name| ((*name).to_owned(), proxy.clone()))
        .collect();
        // Nothing goes around the proxy: not even loopback, whose other ports are closed.
        env.push(("NO_PROXY".to_owned(), String::new()));
        env.push(("no_proxy".to_owned(), String::new()));
        env.push(("TMPDIR".to_owned(), temp.0.display().to_string()));
        Ok(Self {
            confinement,
            env,
            loopback,
            egress,
            temp,
        })
    }

    /// The proxy's port.
    #[must_use]
    pub fn proxy_port(&self) -> u16 {
        self.egress.port()
    }

    /// The private temp directory.
    #[must_use]
    pub fn temp_dir(&self) -> &Path {
        &self.temp.0
    }
}

/// A directory only this user can enter, removed with its contents when dropped.
#[derive(Debug)]
struct PrivateTemp(PathBuf);

impl PrivateTemp {
    fn make() -> std::io::Result<Self> {
        use std::os::unix::fs::DirBuilderExt;
        let path = std::env::temp_dir().join(format!(
            "atomic-sandbox-{}-{:016x}",
            std::process::id(),
            rand::random::<u64>()
        ));
        std::fs::DirBuilder::new().mode(0o700).create(&path)?;
        Ok(Self(path))
    }
}

impl Drop for PrivateTemp {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::{Span, Spanned};

    fn spanned(text: &str) -> Spanned<String> {
        Spanned::new(text.to_owned(), Span::default())
    }

    #[test]
    fn paths_are_placed_and_credential_stores_hidden_but_a_clis_own() {
        let sandbox = Sandbox {
            none: false,
            write: vec![
                spanned("target"),
                spanned("~/.cache/cargo"),
                spanned("/opt/out"),
            ],
            hide: vec![spanned("secrets")],
            network: vec![spanned("crates.io")],
            span: Span::default(),
        };
        let reach = Reach::of(
            &sandbox,
            Path::new("/w"),
            Some(Path::new("/home/me")),
            &[".claude", ".claude.json"],
        );
        assert_eq!(
            reach.writable,
            [
                "/w",
                "/w/target",
                "/home/me/.cache/cargo",
                "/opt/out",
                "/home/me/.claude",
                "/home/me/.claude.json"
            ]
            .map(PathBuf::from)
        );
        assert!(reach.hidden.contains(&PathBuf::from("/w/secrets")));
        assert!(reach.hidden.contains(&PathBuf::from("/home/me/.ssh")));
        assert!(reach.hidden.contains(&PathBuf::from("/home/me/.codex")));
        assert!(!reach.hidden.contains(&PathBuf::from("/home/me/.claude")));
        assert!(reach.allowed.allows("crates.io"));
        assert!(!reach.allowed.allows("example.com"));
    }
}
