//! What an agent CLI cannot do, refused before anything starts, read from the adapter's
//! row in the catalogue ([`crate::ir::AdapterInfo`]) — the same table `atomic check`
//! reports from, so a request that reached a CLI anyway (a provider swapped at run time)
//! is refused for the same reason, never passed on for the CLI to ignore.

use super::launcher::Cli;
use crate::ir::{AdapterInfo, PermissionMode};
use crate::providers::{AgentRequest, ProviderError};

impl Cli {
    /// [`refuse_unsupported`] by this CLI's row in the catalogue.
    ///
    /// # Errors
    /// As [`refuse_unsupported`].
    pub(crate) fn refuse_unsupported(&self, request: &AgentRequest) -> Result<(), ProviderError> {
        refuse_unsupported(self.info(), request)
    }
}

/// Refuses `request` when it asks for what the adapter's row (`info`) says it cannot do:
/// tools at all, custom tools (commands atomic would run), or stopping to ask a person.
///
/// # Errors
/// [`ProviderError::Config`] saying what cannot be done and what to do instead.
pub(crate) fn refuse_unsupported(
    info: &AdapterInfo,
    request: &AgentRequest,
) -> Result<(), ProviderError> {
    {
        let refuse = |message: String| Err(ProviderError::config(info.name, message));
        if let Some(tool) = request.grants.tools.first()
            && !info.tools
        {
            return refuse(format!(
                "tool `{}` cannot be granted: the `{}` adapter takes no `tools` (its CLI has \
                 no per-tool permissions); `permission=` sets what the agent may do",
                tool.name, info.name
            ));
        }
        if let Some(custom) = request
            .grants
            .tools
            .iter()
            .find(|tool| !tool.command.is_empty())
            && !info.custom_tools
        {
            return refuse(format!(
                "custom tool `{}` cannot be given to the `{}` adapter, whose agent runs only \
                 its own built-in tools; grant those by name, or use the `anthropic` or \
                 `openai` adapter, which run custom tools",
                custom.name, info.name
            ));
        }
        if request.grants.permission == Some(PermissionMode::Ask) && !info.asks_people {
            return refuse(format!(
                "`permission=\"ask\"` is not supported by the `{}` adapter: its agent cannot \
                 stop at a permission request for a person to answer; choose `accept-edits`, \
                 `bypass` or `plan`",
                info.name
            ));
        }
        Ok(())
    }
}
