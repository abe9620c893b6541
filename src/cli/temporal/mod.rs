//! `--temporal`: the same commands on runs that live on a Temporal server, and
//! `atomic worker`, which runs them. Without the `temporal` feature each says how to get it.

#[cfg(not(feature = "temporal"))]
use super::Exit;
use super::args::TemporalArgs;

#[cfg(feature = "temporal")]
mod commands;
#[cfg(feature = "temporal")]
mod follow;
#[cfg(feature = "temporal")]
mod prepare;
#[cfg(feature = "temporal")]
mod target;

#[cfg(feature = "temporal")]
pub(super) use commands::{cancel, resume, runs, start, worker};
#[cfg(feature = "temporal")]
pub(in crate::cli) use target::Target;

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
    use crate::cli::execute::workflow::Loaded;
    use crate::cli::output::Output;
    use crate::cli::project::Project;

    pub(in crate::cli) fn start(
        _: &RunArgs,
        _: &Project,
        _: &Output,
        _: &Loaded,
        _: serde_json::Map<String, serde_json::Value>,
    ) -> Exit {
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
