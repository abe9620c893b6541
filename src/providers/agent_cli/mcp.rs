//! The MCP servers of a call, resolved once for every agent CLI: each adapter then writes
//! them in its CLI's own form (a config file, `-c` overrides, an extension, ACP's session
//! request).

use super::launcher::Cli;
use crate::providers::mcp_config::{ResolvedMcp, held_secrets, resolve_mcp_servers};
use crate::providers::{AgentRequest, ProviderError};

impl Cli {
    /// `request`'s MCP servers: the variables passed through read from atomic's
    /// environment, and each stdio server started so that it inherits none of the CLI's
    /// credentials. What is held back is one list for every adapter: the adapter's
    /// credential variables (set or not: some are added per process), the variable the key
    /// was placed in, the variable `api-key-env=` names, and any variable of the CLI's
    /// environment whose name says it is a secret (`…KEY…`, `…TOKEN…`, `…SECRET…`,
    /// `…PASSWORD…`).
    ///
    /// # Errors
    /// [`ProviderError::Config`] naming the server and the variable that is not set, or a
    /// server without a command.
    pub(crate) fn mcp_servers(
        &self,
        request: &AgentRequest,
    ) -> Result<Vec<ResolvedMcp>, ProviderError> {
        if request.grants.mcp.is_empty() {
            return Ok(Vec::new());
        }
        let known: Vec<&str> = self
            .spec()
            .credential_vars
            .iter()
            .copied()
            .chain(self.key_var())
            .chain(self.credentials().variable())
            .collect();
        let mut held = held_secrets(self.env().iter(), &known);
        // Held back even when not in the environment yet: some are added per process
        // (`opencode serve`'s password).
        for var in known {
            if !held.iter().any(|kept| kept == var) {
                held.push(var.to_owned());
            }
        }
        resolve_mcp_servers(self.adapter(), &request.grants.mcp, self.outer_env(), &held)
    }
}
