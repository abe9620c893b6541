//! The executable graph: [`Plan`], its [`Step`]s and [`Edge`]s.
//!
//! Input: nothing (these are types); `lower::lower` builds a `Plan` from an
//! [`ir::Workflow`](crate::ir::Workflow) and the flow checks establish the invariants below.
//! Output: what the interpreter walks. Not here: how a step *executes* (rendering prompts,
//! running tools) — that is `runtime`; this module only says where control goes.
//!
//! # Shape
//!
//! Every statement of the workflow becomes one step, except the block statements, which
//! become two:
//!
//! | statement  | steps                                   | out-edges, in this order                          |
//! |------------|-----------------------------------------|---------------------------------------------------|
//! | (workflow) | [`StepKind::Start`], [`StepKind::End`]  | Start: one `Next`; End: none                      |
//! | `agent`, `tool`, `wait`, `subgraph`, `set` | one action step | exits (below), then its error edge if any |
//! | `decision` | [`StepKind::Decision`]                  | `Route(0)`…`Route(n-1)`, `Otherwise`, (`Next`), error |
//! | `loop`     | [`StepKind::LoopHead`] … body … [`StepKind::LoopTail`] | head: `LoopBody`, exits, error (if `while`); tail: `LoopBack`, exits, error (if `until`) |
//! | `parallel` | [`StepKind::Fork`] … branches … [`StepKind::Join`] | fork: `Branch(0)`…`Branch(n-1)` (a `Next` to the join if there are none), error; join: exits |
//!
//! *Exits* are how control leaves a finished statement: `[Goto]` then `[Next | LoopExit]`.
//! A node's `goto=` **wins over its fall-through**: without `goto-max` the `Goto` edge is the
//! only exit (the next statement is not reached from here — `goto-shadows-next` warns
//! when nothing else leads to it);
//! with `goto-max=N` the `Goto` edge is tried first and the fall-through edge is taken once
//! the bound is used up. The fall-through of the last statement of a block is the block's
//! continuation: the loop's tail, the parallel's join, or `End` at top level.
//!
//! Out-edges are returned by [`Plan::out_edges`] in the order of the table; that order is
//! the priority order the interpreter follows.
//!
//! # Invariants the interpreter may rely on
//!
//! A `Plan` returned by `lower::lower` *without errors* guarantees:
//!
//! 1. **Bounded cycles.** Every cycle passes a bounded edge (an edge with a [`Bound`], or a
//!    `LoopBack`). Taking a bounded edge increments its counter; once the counter reaches
//!    `max` the edge is skipped as if its condition were false. So every run terminates
//!    (waits aside). A cycle that re-enters a loop afresh (resetting its counter) always
//!    contains a shorter cycle avoiding the loop's back edge, so it needs a bound of its own.
//! 2. **Total routing.** Every step except `End` has at least one out-edge that needs no
//!    condition and no bound: an action's, head's, tail's or join's last exit, a decision's
//!    final `Otherwise` (or the `Next` after a bounded `Otherwise`), a fork's branches.
//!    [`Plan::next`] therefore always finds a successor. This holds by construction, even
//!    for a partial IR: a decision without `otherwise` gets a bare one, and a loop without
//!    `max` counts as `max=0` (`check` reports both as errors).
//! 3. **Single-entry parallel regions.** Every step inside branch `i` of a parallel has
//!    [`Step::branch`] = that branch; all its edges stay inside the branch or go to the
//!    parallel's `Join`. No `goto`, route or recovery edge crosses a branch boundary
//!    (`goto-across-parallel`), and errors inside a branch do not propagate past it: a step in
//!    a branch with no error edge fails its branch, and the parallel's `strategy` decides.
//! 4. **Everything reachable ends.** From every reachable step a path reaches `End`
//!    (`no-path-to-end`).
//!    Unreachable statements are only warned about (`unreachable-node`); they are still
//!    lowered.
//! 5. **Stable, source-ordered indices.** Steps are created in source order, so the same
//!    workflow always lowers to the same indices; [`Step::key`] is a readable stable name
//!    (`review`, `fix#tail`, `fan#join`, `#start`, `#end`) for checkpoints and renderers.
//!
//! # How the interpreter picks the next step
//!
//! Use [`Plan::next`] (in `lower/navigate.rs`) after a step succeeded, and
//! [`Plan::on_error`] after it failed; both keep the [`Counters`] up to date. Per kind:
//!
//! - **Start**: its `Next`.
//! - **Action** (`Agent`, `Tool`, `Wait`, `Subgraph`, `Set`): execute the node, then take the
//!   first exit whose bound is not used up.
//! - **Decision**: evaluate the `when` conditions in order, skipping routes whose bound is
//!   used up; the first true one is taken; else `Otherwise` if its bound allows; else `Next`.
//! - **LoopHead**: arriving over any edge but its own `LoopBack` starts the loop afresh
//!   (its iteration counter is reset to 0). Then: if the counter has reached `max`, or the
//!   `while` condition is false, exit; otherwise count one iteration and take `LoopBody`.
//!   (A jump from outside into the middle of a body does not pass the head: the loop
//!   continues with its current count.)
//! - **LoopTail**: if the `until` condition holds, exit; otherwise take `LoopBack`.
//! - **Fork**: executing it means running [`Plan::branches`] (one walk per branch, or per
//!   item for `for-each`), each entered with [`Plan::take`] on its `Branch` edge and walked
//!   until it reaches [`Plan::join_of`]; each walk uses its own copy of the counters
//!   (bounds inside a branch count per branch run; no edge inside a branch touches a
//!   counter outside it). If the parallel fails (per its `strategy`), the fork failed:
//!   use its error edge. Otherwise `next(fork)` is the join.
//! - **Join**: a no-op (the branches' writes were merged by the fork); its exits.
//! - **End**: the run completed.
//!
//! On failure (after the node's retry policy), [`Plan::on_error`] gives the error edge: a
//! `Recover` edge to a `recovery=#true` node (`on-error "goto"`), or a `Skip` edge to the
//! fall-through (`on-error "skip"`, after applying the handler's fallback `set`s). A node
//! without its own `on-error` inherits the nearest enclosing block's (`loop`, `parallel`),
//! never past a parallel branch. No error edge: the run (or the branch) fails.

use std::sync::Arc;

use petgraph::graph::{DiGraph, EdgeIndex, NodeIndex};
use serde::{Deserialize, Serialize};

use crate::ir::{Node, NodeIdx, Workflow};
use crate::source::Span;

/// Index of a step in [`Plan::graph`]. Stable for a given workflow (see invariant 5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct StepIdx(pub u32);

impl StepIdx {
    /// The position in the graph's node list.
    #[must_use]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl From<NodeIndex> for StepIdx {
    fn from(index: NodeIndex) -> Self {
        Self(u32::try_from(index.index()).expect("graph indices are u32"))
    }
}

impl From<StepIdx> for NodeIndex {
    fn from(step: StepIdx) -> Self {
        NodeIndex::new(step.index())
    }
}

/// Index of an edge in [`Plan::graph`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct EdgeIdx(pub u32);

impl EdgeIdx {
    /// The position in the graph's edge list.
    #[must_use]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl From<EdgeIndex> for EdgeIdx {
    fn from(index: EdgeIndex) -> Self {
        Self(u32::try_from(index.index()).expect("graph indices are u32"))
    }
}

impl From<EdgeIdx> for EdgeIndex {
    fn from(edge: EdgeIdx) -> Self {
        EdgeIndex::new(edge.index())
    }
}

/// Index of a counter in [`Counters`]: one per bounded route, bounded `goto=` and loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct CounterIdx(pub u32);

/// One vertex of the executable graph.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    /// What the step does.
    pub kind: StepKind,
    /// The statement it comes from (`None` for `Start` and `End`).
    pub node: Option<NodeIdx>,
    /// Where to point at: the node's span (the workflow's for `Start`/`End`).
    pub span: Span,
    /// The innermost parallel branch containing the step. A parallel's own `Fork` and
    /// `Join` are outside its branches.
    pub branch: Option<BranchRef>,
    /// Stable readable name: the node id for a statement's main step, `<id>#tail` for a
    /// loop's tail, `<id>#join` for a parallel's join, `#start` and `#end`.
    pub key: Arc<str>,
}

/// A branch of a parallel: the parallel's node and the branch position.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct BranchRef {
    /// The `parallel` node.
    pub parallel: NodeIdx,
    /// Which branch, in source order.
    pub index: u32,
}

/// What a step does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum StepKind {
    /// Where every run begins.
    Start,
    /// Where every completed run ends.
    End,
    /// An `agent` node.
    Agent,
    /// A `tool` node.
    Tool,
    /// A `wait` node: the run pauses here.
    Wait,
    /// A `subgraph` node.
    Subgraph,
    /// A `set` node.
    Set,
    /// An `emit` node.
    Emit,
    /// A `decision` node: routes are its out-edges.
    Decision,
    /// A `loop`'s entry: counts iterations, tests `max` and `while`.
    LoopHead {
        /// The same loop's tail.
        tail: StepIdx,
        /// The loop's iteration counter.
        counter: CounterIdx,
    },
    /// A `loop`'s end of body: tests `until`, then jumps back.
    LoopTail {
        /// The same loop's head.
        head: StepIdx,
    },
    /// A `parallel`'s start: spawns its branches.
    Fork {
        /// The same parallel's join.
        join: StepIdx,
    },
    /// A `parallel`'s end: every branch's last step leads here.
    Join {
        /// The same parallel's fork.
        fork: StepIdx,
    },
}

impl StepKind {
    /// Whether the step runs a node's work (agent, tool, wait, subgraph, set).
    #[must_use]
    pub fn is_action(self) -> bool {
        matches!(
            self,
            Self::Agent | Self::Tool | Self::Wait | Self::Subgraph | Self::Set | Self::Emit
        )
    }

    /// A short lowercase name for renderers and events.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Start => "start",
            Self::End => "end",
            Self::Agent => "agent",
            Self::Tool => "tool",
            Self::Wait => "wait",
            Self::Subgraph => "subgraph",
            Self::Set => "set",
            Self::Emit => "emit",
            Self::Decision => "decision",
            Self::LoopHead { .. } => "loop",
            Self::LoopTail { .. } => "loop-tail",
            Self::Fork { .. } => "fork",
            Self::Join { .. } => "join",
        }
    }
}

/// A bound on how often an edge may be taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Bound {
    /// The most times the edge is taken (per run; per branch run inside a parallel; per
    /// loop entry for a `LoopBack`).
    pub max: u32,
    /// The counter that counts it. Several edges may share one (the exits of a `loop` with
    /// `goto-max` share the goto's counter).
    pub counter: CounterIdx,
}

/// One edge of the executable graph.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Edge {
    /// What kind of transfer it is.
    pub kind: EdgeKind,
    /// `max=` / `goto-max=` / the loop's `max`; `None` when unbounded.
    pub bound: Option<Bound>,
    /// What made the edge: the `when`/`otherwise`/`goto=`/`on-error` source, or the node.
    pub span: Span,
}

impl Edge {
    /// Whether the edge breaks cycles for the termination check: it has a bound, or it is
    /// a loop's back edge (the loop head bounds it by `max`).
    #[must_use]
    pub fn is_bounded(&self) -> bool {
        self.bound.is_some() || self.kind == EdgeKind::LoopBack
    }
}

/// The kinds of edge.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum EdgeKind {
    /// Fall-through: to the next statement, or to the block's continuation.
    Next,
    /// A node's `goto=`; wins over `Next` (see the module docs).
    Goto,
    /// A decision's `when` route, by position.
    Route {
        /// Position among the decision's `when` routes.
        index: u32,
    },
    /// A decision's `otherwise`.
    Otherwise,
    /// Loop head → first statement of the body (the tail when the body is empty).
    LoopBody,
    /// Loop tail → loop head.
    LoopBack,
    /// Loop head or tail → the statement after the loop.
    LoopExit,
    /// Fork → first statement of a branch (the join when the branch is empty).
    Branch {
        /// Position among the parallel's branches.
        index: u32,
    },
    /// On failure: to the fall-through, after the handler's fallback writes
    /// (`on-error "skip"`).
    Skip {
        /// The node whose `on-error` applies (the step's own, or an enclosing block's).
        handler: NodeIdx,
    },
    /// On failure: to a `recovery=#true` node (`on-error "goto"`).
    Recover {
        /// The node whose `on-error` applies.
        handler: NodeIdx,
    },
}

impl EdgeKind {
    /// Whether the edge is taken only when its source fails.
    #[must_use]
    pub fn is_error(self) -> bool {
        matches!(self, Self::Skip { .. } | Self::Recover { .. })
    }

    /// Whether the edge is an explicit jump written by the user (`goto=`, a route,
    /// `otherwise`, `on-error "goto"`), as opposed to structural flow.
    #[must_use]
    pub fn is_jump(self) -> bool {
        matches!(
            self,
            Self::Goto | Self::Route { .. } | Self::Otherwise | Self::Recover { .. }
        )
    }
}

/// The lowered workflow: the IR it came from plus the graph that executes it.
#[derive(Clone, Debug)]
pub struct Plan {
    pub(super) workflow: Workflow,
    pub(super) graph: DiGraph<Step, Edge>,
    pub(super) start: StepIdx,
    pub(super) end: StepIdx,
    /// `NodeIdx` → the step where the node begins (its head/fork for blocks); `None` for
    /// nodes no block contains (only in a partial IR).
    pub(super) entries: Vec<Option<StepIdx>>,
    /// Out-edges per step, in priority order.
    pub(super) outs: Vec<Vec<EdgeIdx>>,
    /// How many counters the plan uses.
    pub(super) counters: u32,
}

impl Plan {
    /// The workflow this plan runs.
    #[must_use]
    pub fn workflow(&self) -> &Workflow {
        &self.workflow
    }

    /// Gives the workflow back.
    #[must_use]
    pub fn into_workflow(self) -> Workflow {
        self.workflow
    }

    /// The graph, for algorithms and renderers. Use the methods below to navigate.
    #[must_use]
    pub fn graph(&self) -> &DiGraph<Step, Edge> {
        &self.graph
    }

    /// Where runs begin.
    #[must_use]
    pub fn start(&self) -> StepIdx {
        self.start
    }

    /// Where completed runs end.
    #[must_use]
    pub fn end(&self) -> StepIdx {
        self.end
    }

    /// How many steps there are; `StepIdx(0..len)` are all valid.
    #[must_use]
    pub fn len(&self) -> usize {
        self.graph.node_count()
    }

    /// Whether there are no steps (never true for a built plan: it has `Start` and `End`).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.graph.node_count() == 0
    }

    /// Every step index, in creation (source) order.
    pub fn steps(&self) -> impl ExactSizeIterator<Item = StepIdx> + '_ {
        self.graph.node_indices().map(StepIdx::from)
    }

    /// The step at `idx`.
    ///
    /// # Panics
    /// If `idx` did not come from this plan.
    #[must_use]
    pub fn step(&self, idx: StepIdx) -> &Step {
        &self.graph[NodeIndex::from(idx)]
    }

    /// The edge at `idx`.
    ///
    /// # Panics
    /// If `idx` did not come from this plan.
    #[must_use]
    pub fn edge(&self, idx: EdgeIdx) -> &Edge {
        &self.graph[EdgeIndex::from(idx)]
    }

    /// Where the edge goes.
    #[must_use]
    pub fn target(&self, idx: EdgeIdx) -> StepIdx {
        let (_, to) = self
            .graph
            .edge_endpoints(idx.into())
            .expect("edge indices come from this plan");
        to.into()
    }

    /// Where the edge starts.
    #[must_use]
    pub fn source(&self, idx: EdgeIdx) -> StepIdx {
        let (from, _) = self
            .graph
            .edge_endpoints(idx.into())
            .expect("edge indices come from this plan");
        from.into()
    }

    /// The step's out-edges in priority order (see the module docs).
    #[must_use]
    pub fn out_edges(&self, step: StepIdx) -> &[EdgeIdx] {
        self.outs.get(step.index()).map_or(&[], Vec::as_slice)
    }

    /// The IR node of a step, if it has one.
    #[must_use]
    pub fn node(&self, step: StepIdx) -> Option<&Node> {
        self.step(step).node.map(|idx| self.workflow.node(idx))
    }

    /// The step where a node begins: its only step, a loop's head, a parallel's fork.
    /// `None` only for a node that no block contains (possible only in a partial IR).
    #[must_use]
    pub fn step_of(&self, node: NodeIdx) -> Option<StepIdx> {
        self.entries.get(node.index()).copied().flatten()
    }

    /// The step with this [`Step::key`].
    #[must_use]
    pub fn step_by_key(&self, key: &str) -> Option<StepIdx> {
        self.steps().find(|&idx| &*self.step(idx).key == key)
    }

    /// A zeroed set of counters for a new run.
    #[must_use]
    pub fn new_counters(&self) -> Counters {
        Counters(vec![0; self.counters as usize])
    }

    /// How many counters the plan uses.
    #[must_use]
    pub fn counter_count(&self) -> usize {
        self.counters as usize
    }
}

/// Per-run (per-branch-run inside a parallel) use counts of bounded edges and loop
/// iterations, indexed by [`CounterIdx`]. Part of a run's checkpoint: resuming with the
/// wrong counters would change how often bounded routes can still be taken.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Counters(pub Vec<u32>);

impl Counters {
    /// The current count.
    #[must_use]
    pub fn get(&self, counter: CounterIdx) -> u32 {
        self.0.get(counter.0 as usize).copied().unwrap_or(0)
    }

    /// Sets a count (growing the vector if a plan with more counters is resumed).
    pub fn set(&mut self, counter: CounterIdx, value: u32) {
        let index = counter.0 as usize;
        if self.0.len() <= index {
            self.0.resize(index + 1, 0);
        }
        if let Some(slot) = self.0.get_mut(index) {
            *slot = value;
        }
    }

    /// Whether an edge with this bound may still be taken.
    #[must_use]
    pub fn allows(&self, bound: Option<Bound>) -> bool {
        bound.is_none_or(|bound| self.get(bound.counter) < bound.max)
    }
}
