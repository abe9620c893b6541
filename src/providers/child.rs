//! A provider's child processes (agent CLIs, `command` programs, custom tools, MCP
//! servers): started and waited for through the process module, its failures said as
//! provider errors.

use std::process::ExitStatus;
use std::time::Duration;

use super::ProviderError;
use crate::process::{Child, Launch, Spawner, WaitError};

/// Starts `launch` with `spawner`.
///
/// # Errors
/// [`ProviderError::Config`] naming the program when it cannot be started.
pub(crate) fn spawn(
    adapter: &'static str,
    spawner: &dyn Spawner,
    launch: Launch,
) -> Result<Child, ProviderError> {
    spawner
        .spawn(launch)
        .map_err(|error| ProviderError::config(adapter, error.to_string()))
}

/// Waits for `child` to exit, at most `limit` (past it, its group is ended).
///
/// # Errors
/// [`ProviderError::Timeout`] when it does not exit in time, [`ProviderError::ProcessExit`]
/// when it cannot be waited for.
pub(crate) async fn wait(
    adapter: &'static str,
    child: &mut Child,
    limit: Duration,
) -> Result<ExitStatus, ProviderError> {
    child.wait_for(limit).await.map_err(|error| match error {
        WaitError::TimedOut(limit) => ProviderError::timeout(adapter, limit),
        WaitError::Io(error) => ProviderError::process_exit(
            adapter,
            None,
            format!("could not wait for the process: {error}"),
        ),
    })
}
