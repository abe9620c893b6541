//! The cursor: everything besides state needed to continue a run after its last committed
//! step. Stored with each step as opaque JSON (the store does not read it).

use std::collections::BTreeMap;

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::PendingContextAction;
use super::frame::Write;
use super::state::StateSchema;
use crate::lower::{Counters, StepIdx};
use crate::providers::Usage;

/// Where a walk continues and the bookkeeping that must survive a restart: of the run
/// itself, or of a block inside it (a parallel branch, a subgraph), whose steps are
/// committed with their block's scope and carry their writes.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Cursor {
    /// The step to run next (`None` once the run reached its end).
    pub next: Option<StepIdx>,
    /// That step's key, to detect a workflow edited between run and resume.
    pub next_key: Option<Arc<str>>,
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
    /// Tools a person allowed for the rest of the run (`permission="ask"`, `allow-run`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allowed_tools: Vec<String>,
    /// Tokens used so far. Left out while none were (every step's checkpoint carries the
    /// cursor: a run without agents would store 110 bytes of zeros per step).
    #[serde(default, skip_serializing_if = "no_usage")]
    pub usage: Usage,
    /// Cost so far in USD (left out while nothing was spent).
    #[serde(default, skip_serializing_if = "no_cost")]
    pub cost_usd: f64,
    /// Action steps run so far (for `max-steps`; parallel branch steps count too).
    #[serde(default)]
    pub steps_taken: u64,
    /// The workspace snapshot (a commit in the run's chain) of the last step committed
    /// that recorded files: a resume that finds the chain's newest snapshot taken after
    /// a step (not yet committed) knows that step was in flight.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub files: Option<String>,
    /// The failure a recovery node sees as `error`, once one was routed there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<serde_json::Value>,
    /// The workflow's `state version` the state was written at (`None`: 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state_version: Option<u32>,
    /// Steps this walk (the run, or one block) has committed: numbers the blocks it enters.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub local: u64,
    /// In a block: the writes of the step, replayed on resume.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub writes: Vec<StoredWrite>,
}

#[allow(clippy::trivially_copy_pass_by_ref)]
fn no_usage(usage: &Usage) -> bool {
    *usage == Usage::default()
}

fn no_cost(cost: &f64) -> bool {
    *cost == 0.0
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// A write as a block's step cursor keeps it: by field name, so it reads back whatever
/// index the field has.
///
/// Kept in a block step's [`Cursor`], so a resumed block replays what it wrote.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StoredWrite {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    field: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    output: Option<String>,
    value: Value,
}

impl StoredWrite {
    pub(crate) fn encode(schema: &StateSchema, write: &Write) -> Self {
        match write {
            Write::Field(idx, value) => Self {
                field: Some(schema.spec(*idx).name.to_string()),
                output: None,
                value: value.clone(),
            },
            Write::Output(node, value) => Self {
                field: None,
                output: Some(node.to_string()),
                value: value.clone(),
            },
        }
    }

    pub(crate) fn decode(self, schema: &StateSchema) -> Result<Write, String> {
        match (self.field, self.output) {
            (Some(field), _) => schema
                .find(&field)
                .map(|idx| Write::Field(idx, self.value))
                .ok_or_else(|| {
                    format!("it wrote the field `{field}`, which is no longer declared")
                }),
            (None, Some(node)) => Ok(Write::Output(Arc::from(node), self.value)),
            (None, None) => Err("a stored write names no field or output".to_owned()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cursor_without_spending_stores_no_usage_and_reads_back_the_same() {
        let idle = Cursor {
            steps_taken: 3,
            ..Cursor::default()
        };
        let text = serde_json::to_string(&idle).unwrap();
        assert!(
            !text.contains("usage") && !text.contains("cost_usd"),
            "{text}"
        );
        assert_eq!(serde_json::from_str::<Cursor>(&text).unwrap(), idle);
        let spent = Cursor {
            usage: Usage {
                input_tokens: 5,
                ..Usage::default()
            },
            cost_usd: 0.25,
            ..Cursor::default()
        };
        let text = serde_json::to_string(&spent).unwrap();
        assert_eq!(serde_json::from_str::<Cursor>(&text).unwrap(), spent);
        // A cursor stored before usage was left out reads as it was.
        let old = r#"{"next":null,"next_key":null,"counters":[],"usage":{"input_tokens":0,"output_tokens":0,"cache_read_tokens":0,"cache_write_tokens":0},"cost_usd":0.0,"steps_taken":3}"#;
        assert_eq!(serde_json::from_str::<Cursor>(old).unwrap(), idle);
    }
}
