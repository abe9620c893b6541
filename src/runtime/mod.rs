//! The interpreter: runs a lowered [`Plan`](crate::lower::Plan) on tokio.
//!
//! Input: a plan, a [`RunContext`] (providers, checkpoint store, environment, files,
//! subgraph loader, event sink, cancellation token). Output: a [`RunOutcome`] and a
//! stream of [`RunEvent`]s. The runtime never prints and never reads the process
//! environment; the CLI builds the context and renders the events.
//!
//! Durability: every action step is committed (state delta, cursor, events) through the
//! [`Store`](crate::store::Store) before the next starts; a parallel is one step, committed
//! at its join; a wait is a step of its own and its answer another. [`resume`] continues
//! from the last committed step, re-running only the one that was in flight.

mod context;
mod context_window;
mod cursor;
mod error;
mod event;
mod exec;
mod frame;
mod hooks;
mod interpreter;
mod journal;
mod output;
mod pattern;
mod process_group;
mod retry;
mod run;
mod shared;
pub mod state;
pub mod template;

pub use context::{Providers, RunContext, SubgraphLoader};
pub use context_window::{PendingContextAction, SessionAction};
pub use cursor::Cursor;
pub use error::{NodeError, RunError};
pub use event::{Choice, RunEvent, RunSink, StreamModes};
pub use output::{Schemas, parse_output};
pub use run::{RunEnd, RunOutcome, resume, run, run_with_id};
