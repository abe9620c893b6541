//! A [`Frame`]: the data one walk of the plan reads and writes — the top-level run, or one
//! parallel branch (which works on a copy-on-write clone and records its writes so the
//! join can merge them in branch order).

use std::sync::{Arc, Mutex};

use minijinja::Value as Template;
use serde_json::Value;

use crate::lower::Counters;
use crate::runtime::NodeError;
use crate::runtime::state::{Delta, FieldIdx, State};
use crate::runtime::template::{Locals, Outputs};
use crate::workspace::Workspace;

/// One write a step makes.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Write {
    /// A value for a state field, combined by its reducer.
    Field(FieldIdx, Value),
    /// A node's output (`outputs.<node>`).
    Output(Arc<str>, Value),
}

/// The data of one walk.
#[derive(Clone, Debug)]
pub(crate) struct Frame {
    pub(crate) state: Arc<State>,
    pub(crate) outputs: Arc<Outputs>,
    pub(crate) counters: Counters,
    /// `item`/`index`/`as` in a for-each branch.
    pub(crate) locals: Option<Locals>,
    /// `error` after an `on-error "goto"`.
    pub(crate) error: Option<Value>,
    /// The parallel branch this walk runs, if any.
    pub(crate) branch: Option<u32>,
    /// In a branch: every write, in order, for the join to replay.
    pub(crate) log: Option<Vec<Write>>,
    /// In a branch of a `parallel … isolation="worktree"` (and the blocks inside it): the
    /// worktree its agents and tools work in. `None`: the run's workspace.
    pub(crate) tree: Option<Arc<BranchTree>>,
}

/// The git worktree a branch of a `parallel … isolation="worktree"` works in: its agents
/// and tools run there, and its steps' snapshots go on a chain of its own.
#[derive(Debug)]
pub(crate) struct BranchTree {
    /// The worktree: its root and its snapshot store.
    pub(crate) workspace: Workspace,
    /// Its snapshot chain, `<run>/<parallel key>/<branch>`.
    pub(crate) chain: String,
    /// The block levels (`#`) of the branch's scope: a step below more of them shares the
    /// worktree with siblings (a parallel inside the branch).
    pub(crate) depth: usize,
    /// The snapshot the branch's last committed step left: what its commits' cursors name.
    pub(crate) committed: Mutex<Option<String>>,
}

impl BranchTree {
    /// The snapshot the branch's last committed step left.
    pub(crate) fn committed(&self) -> Option<String> {
        self.committed
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Records the snapshot a step of the branch left.
    pub(crate) fn set_committed(&self, commit: String) {
        *self
            .committed
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(commit);
    }
}

impl Frame {
    /// Applies `writes` through the reducers, recording what changed in `delta`. All or
    /// nothing: when one write is refused, the frame is left as it was.
    pub(crate) fn apply(&mut self, writes: Vec<Write>, delta: &mut Delta) -> Result<(), NodeError> {
        let fields = writes
            .iter()
            .filter(|write| matches!(write, Write::Field(..)))
            .count();
        let before = (fields > 1).then(|| (self.state.clone(), delta.clone()));
        for write in &writes {
            match write {
                Write::Field(idx, value) => {
                    if let Err(error) =
                        Arc::make_mut(&mut self.state).write(*idx, value.clone(), delta)
                    {
                        if let Some((state, saved)) = before {
                            self.state = state;
                            *delta = saved;
                        }
                        return Err(error.into());
                    }
                }
                Write::Output(node, value) => {
                    Arc::make_mut(&mut self.outputs).insert(node.clone(), value.clone());
                    delta.record_output(node, value.clone());
                }
            }
        }
        if let Some(log) = &mut self.log {
            log.extend(writes);
        }
        Ok(())
    }

    /// Locals plus `error`, as template values.
    pub(crate) fn locals(&self) -> Option<Locals> {
        match (&self.locals, &self.error) {
            (locals, None) => locals.clone(),
            (locals, Some(error)) => {
                let mut all: Vec<(Arc<str>, Template)> = locals
                    .as_ref()
                    .map(|l| l.as_ref().clone())
                    .unwrap_or_default();
                all.push((
                    Arc::from("error"),
                    Template::from(minijinja::value::Serde(error)),
                ));
                Some(Arc::new(all))
            }
        }
    }
}
