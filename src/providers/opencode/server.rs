//! Starting `opencode serve`: a free loopback port, a random password, and waiting until
//! it says it listens.

use std::path::Path;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};

use super::{AbortOnDrop, NAME, Server, bad_output};
use crate::providers::agent_cli::Cli;
use crate::providers::child;
use crate::providers::{AgentRequest, ProviderError};

/// Starts `opencode serve` on a free loopback port, `env` added to its environment, and
/// waits until it listens; for `call`, a server of the call's own, in its sandbox if it
/// has one.
pub(super) async fn start_server(
    cli: &Cli,
    directory: &Path,
    startup: Duration,
    env: Vec<(String, String)>,
    call: Option<&AgentRequest>,
) -> Result<Server, ProviderError> {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map_err(|error| ProviderError::network(NAME, format!("no free loopback port: {error}")))?
        .port();
    let password: String = {
        use rand::Rng;
        let mut rng = rand::rng();
        (0..32)
            .map(|_| format!("{:x}", rng.random_range(0..16_u8)))
            .collect()
    };
    let mut env = env;
    env.push(("OPENCODE_SERVER_PASSWORD".to_owned(), password.clone()));
    let args = [
        "serve",
        "--hostname",
        "127.0.0.1",
        "--port",
        &port.to_string(),
    ]
    .map(str::to_owned)
    .to_vec();
    let mut process = match call {
        Some(request) => cli.spawn(request, args, env)?,
        None => cli.spawn_in(directory, args, env)?,
    };
    let stdout = process
        .take_stdout()
        .ok_or_else(|| bad_output("the server has no stdout"))?;
    let mut lines = BufReader::new(stdout).lines();
    let ready = tokio::time::timeout(startup, async {
        while let Ok(Some(line)) = lines.next_line().await {
            if line.contains("opencode server listening") {
                return true;
            }
        }
        false
    })
    .await;
    match ready {
        Ok(true) => {}
        Ok(false) => {
            let status = child::wait(NAME, &mut process, Duration::from_secs(5))
                .await
                .ok();
            return Err(ProviderError::process_exit(
                NAME,
                status.and_then(|status| status.code()),
                process.stderr_tail(),
            ));
        }
        Err(_) => {
            return Err(ProviderError::timeout(NAME, startup));
        }
    }
    let drain = tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    Ok(Server {
        base: format!("http://127.0.0.1:{port}"),
        password: Some(password),
        _process: Some(process),
        _drain: Some(AbortOnDrop(drain)),
    })
}
