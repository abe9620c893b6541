//! When to write a full-state snapshot, and the live state a store tracks per run to write
//! one. A snapshot is due every [`SnapshotPolicy::every_steps`] steps, or when the deltas
//! since the last one outweigh it, so reconstructing a state reads at most about twice its
//! size and the store grows by what changed, not by the state's size per step.

use super::delta::DeltaError;
use super::{State, StateDelta};

/// When snapshots are taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SnapshotPolicy {
    /// Most steps between snapshots (bounds how many deltas a load applies).
    pub every_steps: u64,
    /// Delta bytes since the last snapshot that always allow a new one; below the last
    /// snapshot's size, a snapshot is taken only after `every_steps`.
    pub min_bytes: usize,
}

impl Default for SnapshotPolicy {
    fn default() -> Self {
        Self {
            every_steps: 1000,
            min_bytes: 64 * 1024,
        }
    }
}

/// A run's state as of its last committed step, plus the bookkeeping of the policy.
#[derive(Clone, Debug)]
pub(super) struct LiveState {
    /// The state after step `seq`.
    pub(super) state: State,
    /// The latest output of each node after step `seq`.
    pub(super) outputs: State,
    /// The last step applied.
    pub(super) seq: u64,
    steps_since: u64,
    bytes_since: usize,
    snapshot_bytes: usize,
}

impl LiveState {
    /// The state and outputs right after a snapshot of `snapshot_bytes` bytes at `seq`.
    pub(super) fn from_snapshot(
        state: State,
        outputs: State,
        seq: u64,
        snapshot_bytes: usize,
    ) -> Self {
        Self {
            state,
            outputs,
            seq,
            steps_since: 0,
            bytes_since: 0,
            snapshot_bytes,
        }
    }

    /// Applies step `seq`'s delta and outputs (`delta_bytes` long as JSON). Returns whether
    /// a snapshot of the new state is due; the caller then writes it and calls
    /// [`Self::snapshotted`].
    pub(super) fn advance(
        &mut self,
        seq: u64,
        delta: &StateDelta,
        outputs: &State,
        delta_bytes: usize,
        policy: SnapshotPolicy,
    ) -> Result<bool, DeltaError> {
        delta.apply(&mut self.state)?;
        self.outputs.extend(
            outputs
                .iter()
                .map(|(node, value)| (node.clone(), value.clone())),
        );
        self.seq = seq;
        self.steps_since += 1;
        self.bytes_since += delta_bytes;
        let by_steps = self.steps_since >= policy.every_steps;
        let by_bytes = self.bytes_since >= self.snapshot_bytes.max(policy.min_bytes);
        Ok(by_steps || by_bytes)
    }

    /// Records that a snapshot of `bytes` bytes was written at the current step.
    pub(super) fn snapshotted(&mut self, bytes: usize) {
        self.steps_since = 0;
        self.bytes_since = 0;
        self.snapshot_bytes = bytes;
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::store::Change;

    #[test]
    fn snapshots_are_due_by_steps_or_by_bytes() {
        let policy = SnapshotPolicy {
            every_steps: 3,
            min_bytes: 10,
        };
        let mut live = LiveState::from_snapshot(State::new(), State::new(), 0, 100);
        let mut delta = StateDelta::new();
        delta.record("n", Change::Set(json!(1)), &json!(1));
        assert!(!live.advance(1, &delta, &State::new(), 5, policy).unwrap());
        assert!(!live.advance(2, &delta, &State::new(), 5, policy).unwrap());
        assert!(
            live.advance(3, &delta, &State::new(), 5, policy).unwrap(),
            "third step"
        );
        live.snapshotted(10);
        assert!(
            live.advance(4, &delta, &State::new(), 11, policy).unwrap(),
            "bytes exceed the snapshot"
        );
        assert_eq!(live.state["n"], json!(1));
        assert_eq!(live.seq, 4);
    }
}
