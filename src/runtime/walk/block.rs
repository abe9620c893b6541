//! Starting a block's walk again on resume: its state rebuilt from the writes of its
//! committed steps, its counters and `error` from the last one, and where it continues —
//! at a step, at a wait with the answer `atomic resume` brought, at a wait still pending,
//! or nowhere (it had finished).

use super::{ScopePath, Start};
use crate::lower::{StepIdx, StepKind};
use crate::runtime::NodeError;
use crate::runtime::frame::Frame;
use crate::runtime::shared::Shared;
use crate::runtime::state::Delta;

/// Where a block continues.
#[derive(Debug)]
pub(crate) struct Resumed {
    pub(crate) start: Start,
    /// Steps it had committed.
    pub(crate) local: u64,
    /// It had reached its end (the join, or its plan's end).
    pub(crate) finished: bool,
}

/// Rebuilds `frame` (as the block began) to where the block at `scope` stopped, if it
/// committed anything; otherwise it starts at `entry`.
///
/// # Errors
/// When its committed steps no longer fit the workflow (edited and resumed with `--force`).
pub(crate) fn resume_block(
    shared: &Shared,
    frame: &mut Frame,
    scope: &ScopePath,
    entry: StepIdx,
    stop_at: Option<StepIdx>,
) -> Result<Resumed, NodeError> {
    let steps = shared.journal.recovery.steps_of(scope);
    let Some(last) = steps.last() else {
        return Ok(Resumed {
            start: Start::At(entry),
            local: 0,
            finished: false,
        });
    };
    let where_ = scope.as_str().unwrap_or_default();
    let schema = frame.state.schema().clone();
    for step in &steps {
        let writes = step
            .writes
            .iter()
            .cloned()
            .map(|write| write.decode(&schema))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|message| {
                NodeError::fatal(format!("the block `{where_}` cannot continue: {message}"))
            })?;
        frame
            .apply(writes, &mut Delta::default())
            .map_err(|error| {
                NodeError::fatal(format!(
                    "the block `{where_}` cannot continue: replaying what it wrote failed: {}",
                    error.message
                ))
            })?;
    }
    frame.counters = last.counters.clone();
    frame.error = last.error.clone();
    let plan = &shared.program.plan;
    let next = last.next.unwrap_or_else(|| plan.end());
    let fits = next.index() < plan.len()
        && last
            .next_key
            .as_ref()
            .is_none_or(|key| *key == plan.step(next).key);
    if !fits {
        return Err(NodeError::fatal(format!(
            "the block `{where_}` continues at `{}`, which this version of the workflow does not have at that place; was the workflow edited?",
            last.next_key.as_deref().unwrap_or("?")
        )));
    }
    let start = if last.waiting {
        match (
            shared.journal.recovery.take_answer(scope),
            last.auto_answer_at,
        ) {
            (Some(answer), _) => Start::Answer(next, answer),
            (None, Some(at)) => Start::AutoWait(next, at),
            (None, None) => Start::StillWaiting(next),
        }
    } else {
        Start::At(next)
    };
    let finished =
        !last.waiting && (Some(next) == stop_at || plan.step(next).kind == StepKind::End);
    Ok(Resumed {
        start,
        local: last.local,
        finished,
    })
}
