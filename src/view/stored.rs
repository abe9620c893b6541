//! A [`RunView`] from what a store keeps of a run: its logged events, then its record
//! (status, waits, error), which is the truth where the log is silent — a run another
//! process is driving shows its steps as they commit.

use serde::Deserialize;
use serde_json::Value;

use super::run::{RunPhase, RunView, WaitView};
use crate::lower::Outline;
use crate::runtime::{Choice, RunEvent};
use crate::store::{EventRecord, RunDetail, RunRecord, RunStatus};

impl RunView {
    /// The view of a stored run.
    #[must_use]
    pub fn from_detail(detail: &RunDetail, outline: &Outline) -> Self {
        let mut view = Self::new(detail.run.id.as_str(), outline);
        view.workflow.clone_from(&detail.run.workflow);
        view.apply_records(&detail.events);
        view.settle(&detail.run);
        view
    }

    /// Applies logged events (those that do not parse, from another version, are skipped).
    pub fn apply_records(&mut self, records: &[EventRecord]) {
        for record in records {
            if let Ok(event) = RunEvent::deserialize(record.event.clone()) {
                self.apply(&event);
            }
        }
    }

    /// Takes the run's status, waits and error from its record.
    pub fn settle(&mut self, run: &RunRecord) {
        self.phase = match run.status {
            RunStatus::Running => RunPhase::Running,
            RunStatus::Paused => RunPhase::Paused,
            RunStatus::Completed => RunPhase::Completed,
            RunStatus::Failed => RunPhase::Failed,
            RunStatus::Cancelled => RunPhase::Cancelled,
        };
        self.step = self.step.max(run.steps);
        if run.error.is_some() {
            self.error.clone_from(&run.error);
        }
        if run.status == RunStatus::Paused {
            self.waits = run
                .waits
                .iter()
                .map(|wait| WaitView {
                    node: wait.node_id.clone(),
                    header: wait.header.clone(),
                    prompt: wait.prompt.clone(),
                    answer: wait.answer.clone(),
                    choices: wait.choices.iter().map(Choice::from).collect(),
                })
                .collect();
            for wait in &run.waits {
                if let Some(at) = self
                    .nodes
                    .iter()
                    .position(|n| n.node.as_deref() == Some(&wait.node_id))
                {
                    self.nodes[at].state = super::NodeState::Waiting;
                }
            }
        } else {
            self.waits.clear();
        }
    }
}

/// The state a store holds, as the view's fields (an object, else nothing).
#[must_use]
pub fn state_fields(state: &Value) -> serde_json::Map<String, Value> {
    state.as_object().cloned().unwrap_or_default()
}
