//! How a run (or a resumed stretch of it) ended: [`RunEnd`] and the [`RunOutcome`] that
//! carries it with the state and totals. The CLI maps each end to an exit code.

use serde_json::Value;

use crate::ir::ErrorClass;
use crate::providers::Usage;
use crate::store::{PendingWait, RunId};

/// How a run (or a resumed stretch of it) ended.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "end", rename_all = "kebab-case")]
pub enum RunEnd {
    /// It reached its end (exit code 0).
    Completed,
    /// It is paused at waits (exit code 4): one of the run itself, or one per paused
    /// block (parallel branch, subgraph); resume it with an answer (naming the wait when
    /// several are pending). An `auto-approve` wait says the answer it gives itself, and
    /// when (`atomic resume RUN` waits out the rest).
    Paused {
        /// The pending waits, in branch order.
        waits: Vec<PendingWait>,
    },
    /// A node failed with no `on-error` route (exit code 1).
    Failed {
        /// The node.
        node: String,
        /// The failure's class (`None`: not retryable, like a template error).
        class: Option<ErrorClass>,
        /// What happened.
        message: String,
    },
    /// A run limit (`max-steps`, `timeout`, `max-budget-usd`) stopped it; it can be resumed
    /// (for example after raising the limit).
    LimitReached {
        /// Which limit, and its value.
        message: String,
    },
    /// It was cancelled (exit code 130); committed steps are kept.
    Cancelled,
}

/// The result of [`run`](super::run()) or [`resume`](super::resume()) (also the result of a
/// run's Temporal workflow).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RunOutcome {
    /// The run.
    pub run_id: RunId,
    /// How it ended.
    pub end: RunEnd,
    /// The state when it ended.
    pub state: Value,
    /// Steps committed so far.
    pub steps: u64,
    /// Tokens used by agent calls.
    pub usage: Usage,
    /// Cost in USD, where known.
    pub cost_usd: f64,
}
