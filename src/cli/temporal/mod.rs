//! `--temporal`: the same commands on runs that live on a Temporal server, and
//! `atomic worker`, which runs them. Without the `temporal` feature each says how to get it.

#[cfg(not(feature = "temporal"))]
use super::Exit;
use super::args::TemporalArgs;
use super::project::Project;

#[cfg(feature = "temporal")]
mod commands;
#[cfg(feature = "temporal")]
mod follow;
#[cfg(feature = "temporal")]
mod prepare;

#[cfg(feature = "temporal")]
pub(super) use commands::{cancel, resume, runs, start, worker};

/// The default server (Temporal's own default port).
const DEFAULT_ADDRESS: &str = "127.0.0.1:7233";
/// The default namespace.
const DEFAULT_NAMESPACE: &str = "default";
/// The default task queue.
const DEFAULT_TASK_QUEUE: &str = "atomic";

/// Where runs on Temporal are, resolved: the flags, then `ATOMIC_TEMPORAL`, then the
/// project's `temporal "…"`, then the defaults.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Target {
    /// `HOST:PORT`.
    pub(super) address: String,
    /// The namespace.
    pub(super) namespace: String,
    /// The task queue.
    pub(super) task_queue: String,
}

impl Target {
    /// Resolves `args` in `project`.
    pub(super) fn resolve(project: &Project, args: &TemporalArgs) -> Self {
        let mut sources = crate::source::Sources::new();
        let (config, _) = project.config(&mut sources);
        let configured = config.temporal().cloned().unwrap_or_default();
        let from_env = std::env::var("ATOMIC_TEMPORAL")
            .ok()
            .filter(|value| !value.trim().is_empty());
        let address = args
            .temporal
            .clone()
            .filter(|value| !value.trim().is_empty())
            .or(from_env)
            .or(configured.address)
            .unwrap_or_else(|| DEFAULT_ADDRESS.to_owned());
        Self {
            address,
            namespace: args
                .namespace
                .clone()
                .or(configured.namespace)
                .unwrap_or_else(|| DEFAULT_NAMESPACE.to_owned()),
            task_queue: args
                .task_queue
                .clone()
                .or(configured.task_queue)
                .unwrap_or_else(|| DEFAULT_TASK_QUEUE.to_owned()),
        }
    }

    /// What commands about a run on it need after the run id.
    pub(super) fn via(&self) -> String {
        let mut via = format!(" --temporal {}", self.address);
        if self.namespace != DEFAULT_NAMESPACE {
            via.push_str(&format!(" --namespace {}", self.namespace));
        }
        if self.task_queue != DEFAULT_TASK_QUEUE {
            via.push_str(&format!(" --task-queue {}", self.task_queue));
        }
        via
    }
}

/// Whether a command goes to Temporal.
pub(super) fn wanted(args: &TemporalArgs) -> bool {
    args.temporal.is_some()
}

/// This build has no Temporal engine: says how to get one.
#[cfg(not(feature = "temporal"))]
pub(super) fn unavailable() -> Exit {
    eprintln!(
        "error: this atomic was built without Temporal support\nhelp: build it with the `temporal` feature: `cargo install --path . --features temporal` (or `cargo run --features temporal -- …`)"
    );
    Exit::Usage
}

#[cfg(not(feature = "temporal"))]
mod absent {
    use super::{Exit, unavailable};
    use crate::cli::args::{CancelArgs, ResumeArgs, RunArgs, RunsArgs, WorkerArgs};

    pub(in crate::cli) fn start(_: &RunArgs) -> Exit {
        unavailable()
    }
    pub(in crate::cli) fn resume(_: &ResumeArgs) -> Exit {
        unavailable()
    }
    pub(in crate::cli) fn cancel(_: &CancelArgs) -> Exit {
        unavailable()
    }
    pub(in crate::cli) fn runs(_: &RunsArgs) -> Exit {
        unavailable()
    }
    pub(in crate::cli) fn worker(_: &WorkerArgs) -> Exit {
        unavailable()
    }
}

#[cfg(not(feature = "temporal"))]
pub(super) use absent::{cancel, resume, runs, start, worker};
