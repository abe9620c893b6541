//! What `atomic run` and `atomic resume` share: loading and compiling the workflow,
//! inputs, the environment, providers, subgraphs, the store, and driving the run on tokio
//! with progress, Ctrl-C handling and the final summary.

mod drive;
pub(crate) mod env;
pub(crate) mod inputs;
mod live;
pub(crate) mod providers;
mod setup;
pub(crate) mod store;
pub(crate) mod subgraphs;
pub(crate) mod workflow;
pub(crate) mod workspace;

pub(crate) use drive::{Ended, Launch, Start, drive, runtime};
pub(crate) use setup::setup;
