//! The interpreter: runs a lowered [`Plan`](crate::lower::Plan) on tokio.
//!
//! Input: a plan, a [`RunContext`] (providers, checkpoint store, environment, files,
//! subgraph loader, event sink, cancellation token). Output: a [`RunOutcome`] and a
//! stream of [`RunEvent`]s. The runtime never prints and never reads the process
//! environment; the CLI builds the context and renders the events.
//!
//! Durability: every action step is committed (state delta, cursor, events) through the
//! [`Store`](crate::store::Store) before the next starts — in a parallel branch or a
//! subgraph too, under the block's scope; a parallel or subgraph is also one step of its
//! own when it ends; a wait is a step of its own and its answer another. [`resume`]
//! continues the run and every block it was inside from their last committed steps,
//! re-running only the steps that were in flight.

mod agent_hooks;
mod context;
mod context_window;
mod cursor;
mod error;
mod event;
mod exec;
// The words the agent is told after a person answered its permission request, shared
// with `atomic chat`.
pub(crate) use exec::permission::{Asker, continuation_prompt};
pub mod executor;
mod frame;
mod hooks;
mod journal;
mod output;
mod pattern;
mod redacted;
mod retry;
mod run;
mod shared;
pub mod state;
pub mod template;
#[cfg(test)]
mod testing;
mod walk;

pub use context::{Providers, RunContext, SubgraphLoader};
pub use context_window::{PendingContextAction, SessionAction};
pub use cursor::{Cursor, StoredWrite};
pub use error::{NodeError, RunError};
pub use event::{
    Choice, FailAction, FailureClass, FilesChanged, RunEvent, RunSink, StepOutcome, StreamModes,
};
pub use executor::{Clock, Executor, LocalExecutor, SystemClock};
pub use hooks::HookEvent;
pub use output::{Schemas, parse_output};
pub use redacted::RedactingStore;
pub use run::{
    ForkPlace, HistoryError, Moved, ResumeError, ResumeOptions, RunEnd, RunOutcome, check_fits,
    check_pending_answer, default_worktree, fork, is_undo_copy, resume, resume_with, rewind, run,
    run_with_id, undo_id, undo_rewind,
};
