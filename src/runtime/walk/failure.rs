//! Routing a failed step: `on-error "skip"` (fallback writes), `"goto"` (with `error`
//! bound), or the walk stops.

use std::time::Instant;

use super::commit::Ended;
use super::{Stop, Walker};
use crate::ir::{NodeIdx, OnError};
use crate::lower::StepIdx;
use crate::runtime::exec;
use crate::runtime::state::Delta;
use crate::runtime::{FailAction, NodeError, RunEvent, StepOutcome};
use crate::store::Timestamp;

impl Walker<'_> {
    /// Routes a failure of the step `at` and says where the walk goes next.
    pub(super) async fn fail(
        &mut self,
        at: StepIdx,
        node: NodeIdx,
        error: NodeError,
        attempts: u32,
        started_at: Timestamp,
    ) -> Result<StepIdx, Stop> {
        let shared = self.shared;
        let id = shared.id(node).clone();
        let Some(route) = shared.program.plan.on_error(at, &mut self.frame.counters) else {
            let action = if self.frame.branch.is_some() {
                FailAction::FailBranch
            } else {
                FailAction::FailRun
            };
            shared.emit(RunEvent::NodeFailed {
                node: id.clone(),
                class: error.failure_class(),
                message: error.message.clone(),
                action,
            });
            return Err(Stop::Failed { node: id, error });
        };
        shared.emit(RunEvent::NodeFailed {
            node: id.clone(),
            class: error.failure_class(),
            message: error.message.clone(),
            action: if route.recover {
                FailAction::Recover
            } else {
                FailAction::Skip
            },
        });
        let mut delta = Delta::default();
        let mut kept = Vec::new();
        if route.recover {
            self.frame.error = Some(error.to_json(&id));
        } else if let Some(OnError::Skip { fallback, .. }) =
            shared.workflow().node(route.handler).on_error.as_deref()
        {
            let writes = exec::eval_sets(shared, &self.frame, Some(node), fallback, self.step_no())
                .and_then(|writes| {
                    if self.keeps_writes() {
                        kept.clone_from(&writes);
                    }
                    self.apply_checked(writes, &mut delta)
                });
            if let Err(fallback_error) = writes {
                return Err(Stop::Failed {
                    node: id,
                    error: fallback_error,
                });
            }
        }
        self.finish(Ended {
            node,
            outcome: if route.recover {
                StepOutcome::Recovered
            } else {
                StepOutcome::Skipped
            },
            delta,
            files: None,
            writes: kept,
            attempts,
            started: Instant::now(),
            started_at,
            next: route.target,
            error: Some(error.message),
        })
        .await?;
        Ok(route.target)
    }
}
