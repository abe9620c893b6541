//! When to write a keyframe — a full copy of a run's state, with only deltas between two
//! keyframes, as in video — and the live state a store tracks per run to write one. A
//! keyframe is due every [`KeyframePolicy::every_steps`] steps, or when the deltas since
//! the last one outweigh it, so reconstructing a state reads at most about twice its size
//! and the store grows by what changed, not by the state's size per step.

use super::delta::DeltaError;
use super::{State, StateDelta};

/// When keyframes are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyframePolicy {
    /// Most steps between keyframes (bounds how many deltas a load applies).
    pub every_steps: u64,
    /// Delta bytes since the last keyframe that always allow a new one; below the last
    /// keyframe's size, a keyframe is written only after `every_steps`.
    pub min_bytes: usize,
}

impl Default for KeyframePolicy {
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
    keyframe_bytes: usize,
}

impl LiveState {
    /// The state and outputs right after a keyframe of `keyframe_bytes` bytes at `seq`.
    pub(super) fn from_keyframe(
        state: State,
        outputs: State,
        seq: u64,
        keyframe_bytes: usize,
    ) -> Self {
        Self {
            state,
            outputs,
            seq,
            steps_since: 0,
            bytes_since: 0,
            keyframe_bytes,
        }
    }

    /// Applies step `seq`'s delta and outputs (`delta_bytes` long as JSON). Returns whether
    /// a keyframe of the new state is due; the caller then writes it and calls
    /// [`Self::keyframe_written`].
    pub(super) fn advance(
        &mut self,
        seq: u64,
        delta: &StateDelta,
        outputs: &State,
        delta_bytes: usize,
        policy: KeyframePolicy,
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
        let by_bytes = self.bytes_since >= self.keyframe_bytes.max(policy.min_bytes);
        Ok(by_steps || by_bytes)
    }

    /// Records that a keyframe of `bytes` bytes was written at the current step.
    pub(super) fn keyframe_written(&mut self, bytes: usize) {
        self.steps_since = 0;
        self.bytes_since = 0;
        self.keyframe_bytes = bytes;
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::store::Change;

    #[test]
    fn keyframes_are_due_by_steps_or_by_bytes() {
        let policy = KeyframePolicy {
            every_steps: 3,
            min_bytes: 10,
        };
        let mut live = LiveState::from_keyframe(State::new(), State::new(), 0, 100);
        let mut delta = StateDelta::new();
        delta.record("n", Change::Set(json!(1)), &json!(1));
        assert!(!live.advance(1, &delta, &State::new(), 5, policy).unwrap());
        assert!(!live.advance(2, &delta, &State::new(), 5, policy).unwrap());
        assert!(
            live.advance(3, &delta, &State::new(), 5, policy).unwrap(),
            "third step"
        );
        live.keyframe_written(10);
        assert!(
            live.advance(4, &delta, &State::new(), 11, policy).unwrap(),
            "bytes exceed the keyframe"
        );
        assert_eq!(live.state["n"], json!(1));
        assert_eq!(live.seq, 4);
    }
}
