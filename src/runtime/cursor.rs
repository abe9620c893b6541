//! The cursor: everything besides state needed to continue a run after its last committed
//! step. Stored with each step as opaque JSON (the store does not read it).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::PendingContextAction;
use crate::lower::{Counters, StepIdx};
use crate::providers::Usage;

/// Where a run continues and the bookkeeping that must survive a restart.
///
/// Parallel regions are committed as one step at their join, so a cursor never points
/// inside a branch; a crash mid-parallel re-runs the whole parallel on resume.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Cursor {
    /// The step to run next (`None` once the run reached its end).
    pub next: Option<StepIdx>,
    /// That step's key, to detect a workflow edited between run and resume.
    pub next_key: Option<String>,
    /// `true` when `next` is a `wait` the run is paused at: resuming needs an answer and
    /// continues after it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub waiting: bool,
    /// When the wait at `next` answers itself (`auto-approve`), as Unix milliseconds: a
    /// resumed run keeps the first deadline instead of starting the delay again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auto_answer_at: Option<u64>,
    /// Loop iterations and bounded-route uses.
    pub counters: Counters,
    /// Provider calls made per agent node (the next call's `call_index`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub calls: BTreeMap<String, u32>,
    /// Provider session ids per agent node, for `session=`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub sessions: BTreeMap<String, String>,
    /// What each full session (by session id) undergoes when it is next continued.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub context_actions: BTreeMap<String, PendingContextAction>,
    /// Tokens used so far.
    #[serde(default)]
    pub usage: Usage,
    /// Cost so far in USD.
    #[serde(default)]
    pub cost_usd: f64,
    /// Action steps run so far (for `max-steps`; parallel branch steps count too).
    #[serde(default)]
    pub steps_taken: u64,
    /// The failure a recovery node sees as `error`, once one was routed there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<serde_json::Value>,
}
