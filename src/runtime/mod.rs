//! The interpreter: runs a lowered [`Plan`](crate::lower::Plan) on tokio.
//!
//! Input: a plan, a [`RunContext`] (providers, checkpoint store, environment, cancellation).
//! Output: a [`RunEnd`] and a stream of [`RunEvent`]s. The runtime never prints; the CLI
//! renders the events.

mod error;
mod event;
mod output;
pub mod state;
pub mod template;

pub use error::{NodeError, RunError};
pub use event::{Choice, RunEvent, RunSink, StreamModes};
pub use output::{Schemas, parse_output};
