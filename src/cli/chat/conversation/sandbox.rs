//! The project's `sandbox`, around each call of the chat as around a run's agent steps:
//! the workspace writable, the CLI's own home writable, its model endpoint reachable
//! through the egress proxy, nothing else; a call never runs unconfined when one is
//! configured.

use std::path::PathBuf;
use std::sync::Arc;

use crate::ir::{Sandbox, adapter_info};
use crate::process::Confinement;
use crate::providers::CallSandbox;
use crate::sandbox::{Reach, Refusals, Running, cli_endpoints, cli_home, configured_endpoints};

use super::ChatError;
use super::backend::declaration;

/// The sandbox every call of the chat runs in.
pub(super) struct ChatSandbox {
    sandbox: Arc<Sandbox>,
    root: PathBuf,
    home: Option<PathBuf>,
}

impl ChatSandbox {
    /// The project's sandbox, when it confines anything.
    pub(super) fn of(
        sandbox: Option<&Sandbox>,
        root: PathBuf,
        home: Option<PathBuf>,
    ) -> Option<Self> {
        let sandbox = sandbox.filter(|sandbox| sandbox.confines())?;
        Some(Self {
            sandbox: Arc::new(sandbox.clone()),
            root,
            home,
        })
    }

    /// Refuses what cannot be confined: an adapter that cannot run in a sandbox, or a
    /// system without the kernel's confinement.
    ///
    /// # Errors
    /// [`ChatError::Sandbox`], saying what to do.
    pub(super) fn check(&self, adapter: &str) -> Result<(), ChatError> {
        if adapter_info(adapter).is_some_and(|info| !info.sandboxes) {
            return Err(ChatError::Sandbox(format!(
                "the project runs agents in a sandbox (`sandbox` in .atomic/config.kdl), and the `{adapter}` adapter cannot run in one yet: chat with another adapter (`--provider`)"
            )));
        }
        Confinement::check().map_err(|error| {
            ChatError::Sandbox(format!(
                "the project runs agents in a sandbox (`sandbox` in .atomic/config.kdl), which this system cannot give: {error}"
            ))
        })
    }

    /// Starts the sandbox of one call on `adapter` (refused connections go to
    /// `refused`); the call's processes are confined while the returned [`Running`] is
    /// held.
    ///
    /// # Errors
    /// When the proxy or the temp directory cannot be made.
    pub(super) async fn start(
        &self,
        adapter: &str,
        refused: Refusals,
    ) -> Result<(Running, CallSandbox), String> {
        let root = std::path::absolute(&self.root).unwrap_or_else(|_| self.root.clone());
        let reach = Reach::of(
            &self.sandbox,
            &root,
            self.home.as_deref(),
            cli_home(adapter),
        )
        .with_hosts(cli_endpoints(adapter));
        let reach = configured_endpoints(&declaration(adapter))
            .iter()
            .fold(reach, |reach, url| reach.with_endpoint(url));
        let running = Running::start(&reach, refused)
            .await
            .map_err(|error| format!("the sandbox could not start: {error}"))?;
        let call = CallSandbox {
            confinement: Arc::clone(&running.confinement),
            env: running.env.clone(),
            temp_dir: running.temp_dir().to_path_buf(),
            loopback: running.loopback.clone(),
        };
        Ok((running, call))
    }
}
