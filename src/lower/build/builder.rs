//! The builder's state and its two passes.

use petgraph::graph::DiGraph;

use crate::ir::{NodeIdx, Workflow};
use crate::lower::plan::{
    Bound, BranchRef, CounterIdx, Edge, EdgeIdx, EdgeKind, Plan, Step, StepIdx, StepKind,
};
use crate::source::Span;

/// Lowers a workflow into its plan (see the module docs of `lower/plan.rs`).
pub(in crate::lower) fn build(workflow: Workflow) -> Plan {
    let mut builder = Builder::new(&workflow);
    builder.create_steps(&workflow);
    builder.create_edges(&workflow);
    builder.finish(workflow)
}

/// What both passes share.
pub(super) struct Builder {
    pub(super) graph: DiGraph<Step, Edge>,
    pub(super) start: StepIdx,
    pub(super) end: StepIdx,
    /// `NodeIdx` → the node's entry step.
    pub(super) entries: Vec<Option<StepIdx>>,
    /// `NodeIdx` → its loop tail or parallel join (the step that ends the block).
    pub(super) closers: Vec<Option<StepIdx>>,
    /// `NodeIdx` → the innermost branch containing it.
    pub(super) branches: Vec<Option<BranchRef>>,
    /// `NodeIdx` → where control falls through to after the node (pass 2).
    pub(super) falls: Vec<Option<StepIdx>>,
    /// Out-edges per step, in insertion (= priority) order.
    pub(super) outs: Vec<Vec<EdgeIdx>>,
    /// Counters handed out so far.
    pub(super) counters: u32,
}

impl Builder {
    fn new(workflow: &Workflow) -> Self {
        let count = workflow.nodes.len();
        let mut builder = Self {
            graph: DiGraph::with_capacity(count + 2, count * 2 + 2),
            start: StepIdx(0),
            end: StepIdx(0),
            entries: vec![None; count],
            closers: vec![None; count],
            branches: vec![None; count],
            falls: vec![None; count],
            outs: Vec::with_capacity(count + 2),
            counters: 0,
        };
        builder.start =
            builder.add_step(StepKind::Start, None, workflow.span, None, "#start".into());
        builder
    }

    fn finish(mut self, workflow: Workflow) -> Plan {
        self.outs.resize(self.graph.node_count(), Vec::new());
        Plan {
            workflow,
            graph: self.graph,
            start: self.start,
            end: self.end,
            entries: self.entries,
            outs: self.outs,
            counters: self.counters,
        }
    }

    pub(super) fn add_step(
        &mut self,
        kind: StepKind,
        node: Option<NodeIdx>,
        span: Span,
        branch: Option<BranchRef>,
        key: String,
    ) -> StepIdx {
        let step = StepIdx::from(self.graph.add_node(Step {
            kind,
            node,
            span,
            branch,
            key: key.into(),
        }));
        self.outs.push(Vec::new());
        step
    }

    pub(super) fn add_edge(
        &mut self,
        from: StepIdx,
        to: StepIdx,
        kind: EdgeKind,
        bound: Option<Bound>,
        span: Span,
    ) {
        let edge = EdgeIdx::from(self.graph.add_edge(
            from.into(),
            to.into(),
            Edge { kind, bound, span },
        ));
        if let Some(outs) = self.outs.get_mut(from.index()) {
            outs.push(edge);
        }
    }

    pub(super) fn new_counter(&mut self) -> CounterIdx {
        let counter = CounterIdx(self.counters);
        self.counters += 1;
        counter
    }

    pub(super) fn entry(&self, node: NodeIdx) -> Option<StepIdx> {
        self.entries.get(node.index()).copied().flatten()
    }

    pub(super) fn closer(&self, node: NodeIdx) -> Option<StepIdx> {
        self.closers.get(node.index()).copied().flatten()
    }

    pub(super) fn fall(&self, node: NodeIdx) -> StepIdx {
        self.falls
            .get(node.index())
            .copied()
            .flatten()
            .unwrap_or(self.end)
    }

    /// Mutable access to a step's kind, to fill in links created after the step.
    pub(super) fn kind_mut(&mut self, step: StepIdx) -> &mut StepKind {
        &mut self.graph[petgraph::graph::NodeIndex::from(step)].kind
    }
}
