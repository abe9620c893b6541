//! Reachability facts shared by several checks, computed once.

use petgraph::visit::{Bfs, Reversed};

use crate::lower::{Plan, StepIdx};

/// Which steps the start reaches, and which reach the end, over every edge (error edges
/// included: a node reached only through `on-error` is reachable).
pub(super) struct Facts {
    reachable: Vec<bool>,
    reaches_end: Vec<bool>,
}

impl Facts {
    pub(super) fn compute(plan: &Plan) -> Self {
        let graph = plan.graph();
        let mut reachable = vec![false; graph.node_count()];
        let mut bfs = Bfs::new(graph, plan.start().into());
        while let Some(step) = bfs.next(graph) {
            if let Some(slot) = reachable.get_mut(step.index()) {
                *slot = true;
            }
        }
        let mut reaches_end = vec![false; graph.node_count()];
        let reversed = Reversed(graph);
        let mut bfs = Bfs::new(reversed, plan.end().into());
        while let Some(step) = bfs.next(reversed) {
            if let Some(slot) = reaches_end.get_mut(step.index()) {
                *slot = true;
            }
        }
        Self {
            reachable,
            reaches_end,
        }
    }

    /// Whether some path from the start leads to `step`.
    pub(super) fn is_reachable(&self, step: StepIdx) -> bool {
        self.reachable.get(step.index()).copied().unwrap_or(false)
    }

    /// Whether some path from `step` leads to the end.
    pub(super) fn reaches_end(&self, step: StepIdx) -> bool {
        self.reaches_end.get(step.index()).copied().unwrap_or(false)
    }

    /// Reachable but cannot reach the end: the run would be trapped there.
    pub(super) fn is_trapped(&self, step: StepIdx) -> bool {
        self.is_reachable(step) && !self.reaches_end(step)
    }
}
