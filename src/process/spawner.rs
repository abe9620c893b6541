//! [`Spawner`]: starts a [`Launch`]. [`LocalSpawner`] starts it as described, in a process
//! group of its own.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use super::child::Child;
use super::groups::MARK_VARIABLE;
use super::launch::{Launch, Stdio};

/// Starts children. Every spawn site in atomic goes through one, so another way of starting
/// a program (a sandbox) is another implementation, not another edit at every site.
pub trait Spawner: Send + Sync + std::fmt::Debug {
    /// Starts `launch` in a process group of its own.
    ///
    /// # Errors
    /// [`SpawnError`] when the program cannot be started.
    fn spawn(&self, launch: Launch) -> Result<Child, SpawnError>;
}

/// A program that could not be started.
#[derive(Debug, thiserror::Error)]
#[error("could not start `{program}`: {source}")]
pub struct SpawnError {
    /// The program, as the launch named it.
    pub program: String,
    /// Why.
    #[source]
    pub source: std::io::Error,
}

impl SpawnError {
    /// Why, without the program's name (for messages that name it already).
    #[must_use]
    pub fn reason(&self) -> String {
        self.source.to_string()
    }
}

/// Starts programs in this process's environment of the machine, unconfined.
#[derive(Clone, Copy, Debug, Default)]
pub struct LocalSpawner;

/// The local spawner, shared.
#[must_use]
pub fn local() -> Arc<dyn Spawner> {
    static LOCAL: OnceLock<Arc<dyn Spawner>> = OnceLock::new();
    Arc::clone(LOCAL.get_or_init(|| Arc::new(LocalSpawner)))
}

impl Spawner for LocalSpawner {
    fn spawn(&self, launch: Launch) -> Result<Child, SpawnError> {
        let mark = next_mark();
        let (program, args) = match &launch.confine {
            Some(confinement) => {
                confinement
                    .wrap(&launch.program, &launch.args)
                    .map_err(|source| SpawnError {
                        program: launch.program_name(),
                        source,
                    })?
            }
            None => (launch.program.clone(), launch.args.clone()),
        };
        let mut command = tokio::process::Command::new(&program);
        command
            .args(&args)
            .env_clear()
            .envs(launch.env.iter().map(|(name, value)| (name, value)))
            .env(MARK_VARIABLE, &mark)
            .stdin(stdio(launch.stdin))
            .stdout(stdio(launch.stdout))
            .stderr(stdio(launch.stderr));
        if let Some(dir) = &launch.cwd {
            command.current_dir(dir);
        }
        // Not `kill_on_drop`: the child handle ends the whole group, SIGTERM first.
        #[cfg(unix)]
        command.process_group(0);
        let child = command.spawn().map_err(|source| SpawnError {
            program: launch.program_name(),
            source,
        })?;
        Ok(Child::started(
            child,
            launch.stderr == Stdio::Tail,
            Some(&mark),
        ))
    }
}

/// A value for [`MARK_VARIABLE`] no other launch of any atomic process has: this
/// process's launch prefix (see [`super::orphans::launch_prefix`]) and a count.
fn next_mark() -> String {
    static COUNT: AtomicU64 = AtomicU64::new(0);
    static PREFIX: OnceLock<String> = OnceLock::new();
    let prefix = PREFIX.get_or_init(|| {
        let pid = std::process::id();
        match super::orphans::start_identity(pid) {
            Some(started) => super::orphans::launch_prefix(pid, &started),
            // No `/proc`: nobody can look for orphans by it; unique is enough.
            None => format!("{pid}-{:016x}-", rand::random::<u64>()),
        }
    });
    format!("{prefix}{}", COUNT.fetch_add(1, Ordering::Relaxed))
}

fn stdio(stdio: Stdio) -> std::process::Stdio {
    match stdio {
        Stdio::Null => std::process::Stdio::null(),
        Stdio::Pipe | Stdio::Tail => std::process::Stdio::piped(),
    }
}
