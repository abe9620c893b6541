//! The JSON the pages read: a run's view without the steps' output (sent whenever it
//! changes; each step's agent plan with it), one step with its output and the files it changed (fetched when opened), and
//! the runs list.

use serde::Serialize;
use serde_json::{Map, Value};

use crate::providers::{Todo, Usage};
use crate::runtime::RunEvent;
use crate::store::RunRecord;
use crate::view::{NodeState, NodeView, OutputItem, RunPhase, RunView, WaitView};

/// How many of the latest events a run's summary carries.
const SUMMARY_EVENTS: usize = 100;

/// A run, as the run page keeps it current.
#[derive(Debug, Serialize)]
pub(super) struct RunSummary<'a> {
    run_id: &'a str,
    workflow: &'a str,
    phase: RunPhase,
    step: u64,
    usage: Usage,
    cost_usd: Option<f64>,
    waits: &'a [WaitView],
    error: Option<&'a str>,
    event_count: u64,
    nodes: Vec<StepSummary<'a>>,
    state: &'a Map<String, Value>,
    events: Vec<&'a RunEvent>,
}

/// One step without its output.
#[derive(Debug, Serialize)]
struct StepSummary<'a> {
    key: &'a str,
    node: Option<&'a str>,
    kind: &'a str,
    state: NodeState,
    attempts: u32,
    runs: u32,
    usage: Usage,
    cost_usd: Option<f64>,
    elapsed_ms: Option<u64>,
    error: Option<&'a str>,
    /// How many output items it has (the page refetches an open step when this changes).
    outputs: usize,
    /// The last line of its last text, for a glance.
    last: Option<&'a str>,
    /// How many files its last finished step changed (none when no files were recorded).
    files_changed: Option<usize>,
    /// Its agent's latest plan (it changes without new output, so it comes with the run).
    #[serde(skip_serializing_if = "<[Todo]>::is_empty")]
    plan: &'a [Todo],
}

impl<'a> RunSummary<'a> {
    /// The summary of `view`.
    pub(super) fn of(view: &'a RunView) -> Self {
        let skip = view.events.len().saturating_sub(SUMMARY_EVENTS);
        Self {
            run_id: &view.run_id,
            workflow: &view.workflow,
            phase: view.phase,
            step: view.step,
            usage: view.usage,
            cost_usd: view.cost_usd,
            waits: &view.waits,
            error: view.error.as_deref(),
            event_count: view.event_count,
            nodes: view.nodes.iter().map(StepSummary::of).collect(),
            state: &view.state,
            events: view.events.iter().skip(skip).collect(),
        }
    }
}

impl<'a> StepSummary<'a> {
    fn of(node: &'a NodeView) -> Self {
        let last = node.output.iter().rev().find_map(|item| match item {
            OutputItem::Text { text } => text.lines().rev().find(|line| !line.trim().is_empty()),
            _ => None,
        });
        Self {
            key: &node.key,
            node: node.node.as_deref(),
            kind: &node.kind,
            state: node.state,
            attempts: node.attempts,
            runs: node.runs,
            usage: node.usage,
            cost_usd: node.cost_usd,
            elapsed_ms: node.elapsed_ms,
            error: node.error.as_deref(),
            outputs: node.output.len(),
            last,
            files_changed: node.files.as_ref().map(|files| files.changed.len()),
            plan: &node.plan,
        }
    }
}

/// One run in the runs list.
#[derive(Debug, Serialize)]
pub(super) struct RunRow {
    id: String,
    workflow: String,
    status: &'static str,
    steps: u64,
    started: String,
    duration_ms: u64,
    cost_usd: Option<f64>,
}

impl RunRow {
    /// The row of `run`, with its cost where known.
    pub(super) fn of(run: &RunRecord, cost_usd: Option<f64>) -> Self {
        Self {
            id: run.id.as_str().to_owned(),
            workflow: run.workflow.clone(),
            status: run.status.as_str(),
            steps: run.steps,
            started: crate::store::utc(run.created_at),
            duration_ms: run.updated_at.0.saturating_sub(run.created_at.0),
            cost_usd,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::TodoStatus;

    #[test]
    fn a_steps_plan_comes_with_the_run_and_no_plan_is_left_out() {
        let mut planned = NodeView::default();
        planned.plan = vec![Todo {
            content: "Run the tests".to_owned(),
            status: TodoStatus::InProgress,
            active_form: Some("Running the tests".to_owned()),
        }];
        let json = serde_json::to_value(StepSummary::of(&planned)).unwrap();
        assert_eq!(
            json["plan"],
            serde_json::json!([{"content": "Run the tests", "status": "in-progress",
                "active_form": "Running the tests"}])
        );
        let json = serde_json::to_value(StepSummary::of(&NodeView::default())).unwrap();
        assert!(json.get("plan").is_none(), "{json}");
    }
}
