//! A control-flow graph of the structured IR, for the data rules (definite assignment,
//! unbounded appends). It is not the executable graph `lower` builds; it only has to be
//! sound: every way a run can go is an edge here.
//!
//! Points: the entry of every node (point index = node index), the workflow's start and
//! end, and per compound node the places where control meets: a `while` loop's test before
//! each iteration, an `until` loop's test after each, a loop's exit, the end of each
//! `parallel` branch and the parallel's join.
//!
//! Edges carry what happens on them ([`Effect`]): a simple node's edge from its entry to
//! its successor writes its outputs (a parallel's, from its join); a failing node's
//! `on-error "skip"` edge writes its fallbacks only; jumps write nothing.
//!
//! Approximations (sound for "must have been written"): a `for-each` may have no items; a
//! `while` loop may not run; an `until` loop (or one with neither) runs at least once when
//! `max` ≥ 1; a `when` route with `max=` is just an edge; a failure anywhere inside a node
//! with `on-error` takes the handler edge from that node's entry, so nothing written inside
//! it counts; `goto` into or out of a parallel branch is an ordinary edge (`lower` reports
//! it).

use super::edges_by_point::EdgesByPoint;
use crate::ir::{Block, Jump, NodeIdx, NodeKind, OnError, Strategy, Workflow};

/// Index of a point.
pub(crate) type Point = usize;

/// What a point is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PointKind {
    /// Before a node runs.
    Entry(NodeIdx),
    /// The start of the run.
    Start,
    /// The end of the run.
    End,
    /// Before a loop's `while` test.
    LoopHead(NodeIdx),
    /// After a loop body, before its `until` test.
    LoopTest(NodeIdx),
    /// After a loop.
    LoopExit(NodeIdx),
    /// The end of branch `usize` of a parallel.
    BranchEnd(NodeIdx, usize),
    /// Where a parallel's branches join.
    Join(NodeIdx),
}

impl PointKind {
    /// The node the point belongs to.
    pub(crate) fn node(self) -> Option<NodeIdx> {
        match self {
            Self::Entry(node)
            | Self::LoopHead(node)
            | Self::LoopTest(node)
            | Self::LoopExit(node)
            | Self::BranchEnd(node, _)
            | Self::Join(node) => Some(node),
            Self::Start | Self::End => None,
        }
    }
}

/// How incoming values combine at a point.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Meet {
    /// Any incoming edge may be the one taken.
    Any,
    /// Every incoming edge is taken (the join of a `strategy="all"` parallel).
    Every,
}

/// What happens along an edge.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Effect {
    /// Nothing is written.
    None,
    /// The node completed: its outputs and `outputs.<id>` are written.
    Completes(NodeIdx),
    /// The node failed and was skipped: its `on-error` fallbacks are written.
    Skipped(NodeIdx),
}

/// An edge.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Edge {
    pub from: Point,
    pub to: Point,
    pub effect: Effect,
}

/// The graph.
#[derive(Debug)]
pub(crate) struct Cfg {
    /// What each point is.
    pub points: Vec<PointKind>,
    /// How each point combines its incoming edges.
    pub meets: Vec<Meet>,
    /// Every edge.
    pub edges: Vec<Edge>,
    /// Per point, the indices of its incoming edges.
    pub incoming: EdgesByPoint,
    /// Per point, the indices of its outgoing edges.
    pub outgoing: EdgesByPoint,
    /// The start point.
    pub start: Point,
    /// Per loop node: its test point (`LoopHead` for `while`, `LoopTest` otherwise).
    tests: Vec<Option<Point>>,
}

impl Cfg {
    /// Builds the graph of `workflow`.
    pub(crate) fn new(workflow: &Workflow) -> Self {
        Builder::new(workflow).build()
    }

    /// The point where a node's condition is evaluated: a loop's test point for
    /// `until`/`while`, otherwise the node's entry.
    pub(crate) fn test_point(&self, node: NodeIdx) -> Option<Point> {
        self.tests.get(node.index()).copied().flatten()
    }

    /// The entry point of a node.
    pub(crate) fn entry(node: NodeIdx) -> Point {
        node.index()
    }

    /// Points in reverse post-order from the start (unreachable points left out).
    pub(crate) fn reverse_post_order(&self) -> Vec<Point> {
        let mut visited = vec![false; self.points.len()];
        let mut order = Vec::with_capacity(self.points.len());
        let mut stack: Vec<(Point, usize)> = vec![(self.start, 0)];
        visited[self.start] = true;
        while let Some((point, next)) = stack.last_mut() {
            let point = *point;
            if let Some(&edge) = self.outgoing[point].get(*next) {
                *next += 1;
                let to = self.edges[edge].to;
                if !visited[to] {
                    visited[to] = true;
                    stack.push((to, 0));
                }
            } else {
                order.push(point);
                stack.pop();
            }
        }
        order.reverse();
        order
    }

    /// Per point, whether it lies on a cycle.
    pub(crate) fn on_cycle(&self) -> Vec<bool> {
        let graph = petgraph::graph::DiGraph::<(), ()>::from_edges(
            self.edges
                .iter()
                .map(|edge| (edge.from as u32, edge.to as u32)),
        );
        let mut cyclic = vec![false; self.points.len()];
        for component in petgraph::algo::kosaraju_scc(&graph) {
            let looped = component.len() > 1
                || component.first().is_some_and(|&point| {
                    self.outgoing[point.index()]
                        .iter()
                        .any(|&edge| self.edges[edge].to == point.index())
                });
            if looped {
                for point in component {
                    if let Some(slot) = cyclic.get_mut(point.index()) {
                        *slot = true;
                    }
                }
            }
        }
        cyclic
    }
}

struct Builder<'w> {
    workflow: &'w Workflow,
    cfg: Cfg,
    /// Per node: where control goes when it completes and falls through.
    next: Vec<Point>,
}

impl<'w> Builder<'w> {
    fn new(workflow: &'w Workflow) -> Self {
        let count = workflow.nodes.len();
        let mut points: Vec<PointKind> = (0..count)
            .map(|index| PointKind::Entry(NodeIdx(index as u32)))
            .collect();
        points.push(PointKind::Start);
        points.push(PointKind::End);
        let end = count + 1;
        Self {
            workflow,
            cfg: Cfg {
                meets: vec![Meet::Any; points.len()],
                points,
                edges: Vec::new(),
                incoming: EdgesByPoint::default(),
                outgoing: EdgesByPoint::default(),
                start: count,
                tests: vec![None; count],
            },
            next: vec![end; count],
        }
    }

    fn point(&mut self, kind: PointKind, meet: Meet) -> Point {
        self.cfg.points.push(kind);
        self.cfg.meets.push(meet);
        self.cfg.points.len() - 1
    }

    fn edge(&mut self, from: Point, to: Point, effect: Effect) {
        self.cfg.edges.push(Edge { from, to, effect });
    }

    fn end(&self) -> Point {
        self.cfg.start + 1
    }

    /// Links a block's statements in order, the last one to `after`; returns the block's
    /// first point (`after` when empty).
    fn block(&mut self, block: &Block, after: Point) -> Point {
        let count = self.workflow.nodes.len();
        let nodes: Vec<NodeIdx> = block
            .nodes
            .iter()
            .copied()
            .filter(|node| node.index() < count)
            .collect();
        for (position, node) in nodes.iter().enumerate() {
            self.next[node.index()] = nodes
                .get(position + 1)
                .map_or(after, |next| Cfg::entry(*next));
        }
        nodes.first().map_or(after, |first| Cfg::entry(*first))
    }

    fn jump(&self, jump: Jump, node: NodeIdx) -> Point {
        match jump {
            Jump::Node(target) if target.index() < self.workflow.nodes.len() => Cfg::entry(target),
            Jump::Node(_) | Jump::End => self.end(),
            Jump::Next => self.next[node.index()],
        }
    }

    fn build(mut self) -> Cfg {
        let workflow = self.workflow;
        let end = self.end();
        let first = self.block(&workflow.body, end);
        self.edge(self.cfg.start, first, Effect::None);
        // Blocks first, so every node's fall-through successor is known.
        let mut compound = Vec::new();
        for (index, node) in workflow.nodes.iter().enumerate() {
            let idx = NodeIdx(index as u32);
            match &node.kind {
                NodeKind::Loop(lp) => {
                    let exit = self.point(PointKind::LoopExit(idx), Meet::Any);
                    let test = if lp.while_.is_some() {
                        self.point(PointKind::LoopHead(idx), Meet::Any)
                    } else {
                        self.point(PointKind::LoopTest(idx), Meet::Any)
                    };
                    self.cfg.tests[index] = Some(test);
                    let body = self.block(&lp.body, test);
                    compound.push((idx, vec![body], vec![test], exit));
                }
                NodeKind::Parallel(parallel) => {
                    let meet = if parallel.strategy == Strategy::All && parallel.for_each.is_none()
                    {
                        Meet::Every
                    } else {
                        Meet::Any
                    };
                    let join = self.point(PointKind::Join(idx), meet);
                    let mut firsts = Vec::new();
                    let mut ends = Vec::new();
                    for (branch_index, branch) in parallel.branches.iter().enumerate() {
                        let branch_end =
                            self.point(PointKind::BranchEnd(idx, branch_index), Meet::Any);
                        firsts.push(self.block(&branch.body, branch_end));
                        ends.push(branch_end);
                    }
                    compound.push((idx, firsts, ends, join));
                }
                _ => {}
            }
        }
        for (index, node) in workflow.nodes.iter().enumerate() {
            let idx = NodeIdx(index as u32);
            let entry = Cfg::entry(idx);
            let after = match &node.goto {
                Some(route) => self.jump(route.jump, idx),
                None => self.next[index],
            };
            match &node.kind {
                NodeKind::Decision(decision) => {
                    for route in &decision.routes {
                        let to = self.jump(route.jump, idx);
                        self.edge(entry, to, Effect::None);
                    }
                    let otherwise = decision
                        .otherwise
                        .as_ref()
                        .map_or(self.next[index], |route| self.jump(route.jump, idx));
                    self.edge(entry, otherwise, Effect::None);
                }
                NodeKind::Loop(_) | NodeKind::Parallel(_) => {}
                _ => self.edge(entry, after, Effect::Completes(idx)),
            }
            match node.on_error.as_deref() {
                Some(OnError::Skip { .. }) => {
                    let next = self.next[index];
                    self.edge(entry, next, Effect::Skipped(idx));
                }
                Some(OnError::Goto { jump, .. }) => {
                    let to = self.jump(*jump, idx);
                    self.edge(entry, to, Effect::None);
                }
                _ => {}
            }
        }
        for (idx, firsts, ends, exit) in compound {
            let entry = Cfg::entry(idx);
            let node = workflow.node(idx);
            let after = match &node.goto {
                Some(route) => self.jump(route.jump, idx),
                None => self.next[idx.index()],
            };
            match &node.kind {
                NodeKind::Loop(lp) => {
                    let test = ends[0];
                    let body = firsts[0];
                    let runs = lp.max.as_ref().is_none_or(|max| max.value > 0);
                    if lp.while_.is_some() {
                        self.edge(entry, test, Effect::None);
                        if runs && body != test {
                            self.edge(test, body, Effect::None);
                        }
                    } else if runs && body != test {
                        self.edge(entry, body, Effect::None);
                        self.edge(test, body, Effect::None);
                    } else {
                        self.edge(entry, exit, Effect::None);
                    }
                    self.edge(test, exit, Effect::None);
                    self.edge(exit, after, Effect::None);
                }
                NodeKind::Parallel(parallel) => {
                    for (first, end) in firsts.iter().zip(&ends) {
                        self.edge(entry, *first, Effect::None);
                        self.edge(*end, exit, Effect::None);
                    }
                    if parallel.for_each.is_some() || parallel.branches.is_empty() {
                        self.edge(entry, exit, Effect::None);
                    }
                    // The parallel's own output is written when it completes.
                    self.edge(exit, after, Effect::Completes(idx));
                }
                _ => {}
            }
        }
        let points = self.cfg.points.len();
        let edges = &self.cfg.edges;
        self.cfg.incoming = EdgesByPoint::group(points, edges.iter().map(|edge| edge.to));
        self.cfg.outgoing = EdgesByPoint::group(points, edges.iter().map(|edge| edge.from));
        self.cfg
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::analyze::testing::Builder as Ir;

    fn edges(cfg: &Cfg) -> Vec<(PointKind, PointKind)> {
        cfg.edges
            .iter()
            .map(|edge| (cfg.points[edge.from], cfg.points[edge.to]))
            .collect()
    }

    #[test]
    fn statements_run_in_order() {
        let mut b = Ir::new();
        let a = b.agent("a", "x");
        let c = b.agent("c", "x");
        let cfg = Cfg::new(&b.finish());
        assert_eq!(
            edges(&cfg),
            [
                (PointKind::Start, PointKind::Entry(a)),
                (PointKind::Entry(a), PointKind::Entry(c)),
                (PointKind::Entry(c), PointKind::End),
            ]
        );
        assert_eq!(cfg.reverse_post_order().len(), 4);
        assert!(cfg.on_cycle().iter().all(|cyclic| !cyclic));
    }

    #[test]
    fn until_loops_run_their_body_first_and_cycle() {
        let mut b = Ir::new();
        let lp = b.loop_("l", Some("state.done"), None, 3, |b| {
            b.agent("a", "x");
        });
        let workflow = b.finish();
        let a = workflow.find_node("a").unwrap();
        let cfg = Cfg::new(&workflow);
        let all = edges(&cfg);
        assert!(all.contains(&(PointKind::Entry(lp), PointKind::Entry(a))));
        assert!(all.contains(&(PointKind::Entry(a), PointKind::LoopTest(lp))));
        assert!(!all.contains(&(PointKind::Entry(lp), PointKind::LoopExit(lp))));
        let cyclic = cfg.on_cycle();
        assert!(cyclic[a.index()]);
        assert!(!cyclic[lp.index()]);
        assert_eq!(
            cfg.points[cfg.test_point(lp).unwrap()],
            PointKind::LoopTest(lp)
        );
    }

    #[test]
    fn decisions_jump_and_on_error_adds_edges() {
        let mut b = Ir::new();
        let d = b.decision("d", &[("state.ok", "end")], Some("next"));
        let a = b.agent("a", "x");
        let span = b.span(1);
        b.on_error(
            a,
            OnError::Skip {
                fallback: Vec::new(),
                span,
            },
        );
        let cfg = Cfg::new(&b.finish());
        let all = edges(&cfg);
        assert!(all.contains(&(PointKind::Entry(d), PointKind::End)));
        assert!(all.contains(&(PointKind::Entry(d), PointKind::Entry(a))));
        assert_eq!(
            cfg.edges
                .iter()
                .filter(|edge| edge.from == a.index() && edge.to == cfg.start + 1)
                .count(),
            2
        );
    }
}
