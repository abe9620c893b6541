//! What a run's steps did to the workspace's files, as its log says: each
//! `step-finished` event of a step that recorded them carries the snapshots before and
//! after it and the paths it changed.

use crate::runtime::FilesChanged;
use crate::store::RunDetail;

/// One step's files, by the step's number in the run.
#[derive(Clone, Debug)]
pub(in crate::cli) struct StepFiles {
    /// The step's number (`atomic runs show`'s first column).
    pub(in crate::cli) seq: u64,
    /// Its node.
    pub(in crate::cli) node: String,
    /// The snapshots and the changed paths.
    pub(in crate::cli) files: FilesChanged,
}

/// The steps of `detail` that recorded files, in order.
pub(in crate::cli) fn of_run(detail: &RunDetail) -> Vec<StepFiles> {
    detail
        .events
        .iter()
        .filter(|record| record.event.get("type").and_then(|t| t.as_str()) == Some("step-finished"))
        .filter_map(|record| {
            let files = record.event.get("files")?;
            Some(StepFiles {
                seq: record.step,
                node: record.event.get("node")?.as_str()?.to_owned(),
                files: serde_json::from_value(files.clone()).ok()?,
            })
        })
        .collect()
}

/// The step `which` names: its number, or a node id (its last run).
pub(in crate::cli) fn find<'a>(steps: &'a [StepFiles], which: &str) -> Option<&'a StepFiles> {
    match which.parse::<u64>() {
        Ok(seq) => steps.iter().find(|step| step.seq == seq),
        Err(_) => steps.iter().rev().find(|step| step.node == which),
    }
}
