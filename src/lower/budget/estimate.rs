//! The worst-case computation over regions (see the module docs of `budget`).

use std::collections::HashMap;

use petgraph::algo::kosaraju_scc;
use petgraph::graph::{DiGraph, NodeIndex};
use petgraph::visit::{Bfs, EdgeRef};

use crate::ir::{Block, Node, NodeIdx, NodeKind, OnError, Retry, Strategy};
use crate::lower::{EdgeKind, Plan, StepIdx, StepKind};

use super::cost::{Cost, Dims};
use super::report::Budget;

/// Attempts of a node with `on-error "retry"` and no `retry` policy.
const DEFAULT_RETRY_ATTEMPTS: u32 = 3;

/// The worst case of running `plan` once.
#[must_use]
pub fn budget(plan: &Plan) -> Budget {
    let mut estimator = Estimator {
        plan,
        memo: HashMap::new(),
        bounded: true,
    };
    let total = estimator.region(Region::Top);
    let (untimed, unpriced) = unmeasured(plan);
    Budget::new(plan, &total, untimed, unpriced, estimator.bounded)
}

/// A block whose statements are costed together.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Region {
    /// The workflow body, from `Start` to `End`.
    Top,
    /// One iteration of a loop's body, from its head to its tail.
    Loop(NodeIdx),
    /// One branch of a parallel, from its fork to its join.
    Branch(NodeIdx, u32),
}

/// Local node numbers in a region's graph.
const ENTRY: usize = 0;
const EXIT: usize = 1;

struct Estimator<'a> {
    plan: &'a Plan,
    /// Costs of loops and parallels, computed once each.
    memo: HashMap<NodeIdx, Cost>,
    /// Cleared when a region has a cycle of unbounded edges (an invalid plan).
    bounded: bool,
}

impl Estimator<'_> {
    /// The worst cost of one pass through `region`.
    fn region(&mut self, region: Region) -> Cost {
        let plan = self.plan;
        let (block, entry_edges) = self.region_entry(region);
        let members: Vec<NodeIdx> = block
            .nodes
            .iter()
            .copied()
            .filter(|&node| plan.step_of(node).is_some())
            .collect();
        // Which local node each step inside the region belongs to.
        let mut owner: HashMap<StepIdx, usize> = HashMap::new();
        for (position, &member) in members.iter().enumerate() {
            for step in steps_within(plan, member) {
                owner.entry(step).or_insert(position + 2);
            }
        }
        let mut costs = vec![Cost::default(), Cost::default()];
        for &member in &members {
            let cost = self.member(member);
            costs.push(cost);
        }
        let local = |step: StepIdx| owner.get(&step).copied().unwrap_or(EXIT);
        let mut edges: Vec<(usize, usize, Option<u32>)> = Vec::new();
        for edge in entry_edges {
            edges.push((ENTRY, local(plan.target(edge)), None));
        }
        for (position, &member) in members.iter().enumerate() {
            let from = position + 2;
            let entry = plan.step_of(member);
            for step in steps_within(plan, member) {
                for &edge in plan.out_edges(step) {
                    let weight = plan.edge(edge);
                    let target = plan.target(edge);
                    let to = local(target);
                    let reenters = Some(target) == entry && weight.kind != EdgeKind::LoopBack;
                    if to == from && !reenters {
                        continue; // inside the member: costed by the member itself
                    }
                    edges.push((from, to, weight.bound.map(|bound| bound.max)));
                }
            }
        }
        self.longest(&costs, &edges)
    }

    /// The block of a region and the edges entering it.
    fn region_entry(&self, region: Region) -> (&Block, Vec<crate::lower::EdgeIdx>) {
        let plan = self.plan;
        let workflow = plan.workflow();
        let empty: &Block = &workflow.body;
        match region {
            Region::Top => (&workflow.body, plan.out_edges(plan.start()).to_vec()),
            Region::Loop(node) => {
                let NodeKind::Loop(ir) = &workflow.node(node).kind else {
                    return (empty, Vec::new());
                };
                let head = plan.step_of(node);
                let edges = head.map_or_else(Vec::new, |head| {
                    plan.out_edges(head)
                        .iter()
                        .copied()
                        .filter(|&edge| plan.edge(edge).kind == EdgeKind::LoopBody)
                        .collect()
                });
                (&ir.body, edges)
            }
            Region::Branch(node, index) => {
                let NodeKind::Parallel(ir) = &workflow.node(node).kind else {
                    return (empty, Vec::new());
                };
                let Some(branch) = ir.branches.get(index as usize) else {
                    return (empty, Vec::new());
                };
                let fork = plan.step_of(node);
                let edges = fork.map_or_else(Vec::new, |fork| {
                    plan.out_edges(fork)
                        .iter()
                        .copied()
                        .filter(|&edge| plan.edge(edge).kind == EdgeKind::Branch { index })
                        .collect()
                });
                (&branch.body, edges)
            }
        }
    }

    /// The cost of one statement of a region.
    fn member(&mut self, idx: NodeIdx) -> Cost {
        if let Some(cost) = self.memo.get(&idx) {
            return cost.clone();
        }
        let node = self.plan.workflow().node(idx);
        let cost = match &node.kind {
            NodeKind::Loop(ir) => {
                let body = self.region(Region::Loop(idx));
                let check = Cost::fixed(Dims {
                    steps: 1,
                    ..Dims::default()
                });
                // Each iteration passes the head and the tail; the last head check exits.
                let iteration = body.plus(&check).plus(&check);
                let max = ir.max.as_ref().map_or(0, |max| max.value);
                iteration.times(u64::from(max)).plus(&check)
            }
            NodeKind::Parallel(ir) => {
                let branches: Vec<Cost> = (0..ir.branches.len())
                    .map(|index| {
                        let index = u32::try_from(index).expect("fewer than 2^32 branches");
                        self.region(Region::Branch(idx, index))
                    })
                    .collect();
                let concurrency = ir.max_concurrency.as_ref().map(|max| max.value);
                let combined = if ir.for_each.is_some() {
                    let body = branches.into_iter().next().unwrap_or_default();
                    per_item(idx, &body, concurrency)
                } else {
                    combine(&branches, ir.strategy, concurrency)
                };
                // Fork and join.
                combined.plus(&Cost::fixed(Dims {
                    steps: 2,
                    ..Dims::default()
                }))
            }
            _ => Cost::fixed(step_cost(node)),
        };
        self.memo.insert(idx, cost.clone());
        cost
    }

    /// The worst path from `ENTRY` through a region's local graph: a longest path over its
    /// strongly connected components in topological order.
    fn longest(&mut self, costs: &[Cost], edges: &[(usize, usize, Option<u32>)]) -> Cost {
        let mut graph: DiGraph<(), Option<u32>> = DiGraph::with_capacity(costs.len(), edges.len());
        for _ in costs {
            graph.add_node(());
        }
        for &(from, to, bound) in edges {
            graph.add_edge(NodeIndex::new(from), NodeIndex::new(to), bound);
        }
        // Kosaraju is iterative: long regions cannot overflow the stack.
        let components = kosaraju_scc(&graph);
        let mut component_of = vec![0; costs.len()];
        for (index, component) in components.iter().enumerate() {
            for node in component {
                if let Some(slot) = component_of.get_mut(node.index()) {
                    *slot = index;
                }
            }
        }
        let order = topological(&graph, &components, &component_of);
        let mut into: Vec<Option<Cost>> = vec![None; components.len()];
        if let Some(slot) = component_of.get(ENTRY).and_then(|&c| into.get_mut(c)) {
            *slot = Some(Cost::default());
        }
        let mut worst = Cost::default();
        for index in order {
            let Some(before) = into.get_mut(index).and_then(Option::take) else {
                continue; // not reachable from the entry
            };
            let Some(component) = components.get(index) else {
                continue;
            };
            let here = before.plus(&self.component_cost(&graph, component, costs, &component_of));
            worst = worst.max(&here);
            for &node in component {
                for next in graph.neighbors(node) {
                    let target = component_of.get(next.index()).copied().unwrap_or(index);
                    if target != index
                        && let Some(slot) = into.get_mut(target)
                    {
                        *slot = Some(slot.take().map_or_else(|| here.clone(), |c| c.max(&here)));
                    }
                }
            }
        }
        worst
    }

    /// A strongly connected component's cost: its node's cost, or, for a cycle held
    /// together by bounded edges, `(1 + Σ max)` × its longest path without them.
    fn component_cost(
        &mut self,
        graph: &DiGraph<(), Option<u32>>,
        component: &[NodeIndex],
        costs: &[Cost],
        component_of: &[usize],
    ) -> Cost {
        let cost_of = |node: NodeIndex| costs.get(node.index()).cloned().unwrap_or_default();
        let this = component
            .first()
            .and_then(|first| component_of.get(first.index()));
        let mut bounded_total: u64 = 0;
        let mut cyclic = component.len() > 1;
        // Unbounded edges inside the component, as adjacency lists with in-degrees.
        let mut successors: HashMap<NodeIndex, Vec<NodeIndex>> = HashMap::new();
        let mut indegree: HashMap<NodeIndex, usize> = component.iter().map(|&n| (n, 0)).collect();
        for &node in component {
            for edge in graph.edges(node) {
                if component_of.get(edge.target().index()) != this {
                    continue;
                }
                if edge.target() == node {
                    cyclic = true;
                }
                match edge.weight() {
                    Some(max) => bounded_total = bounded_total.saturating_add(u64::from(*max)),
                    None => {
                        successors.entry(node).or_default().push(edge.target());
                        *indegree.entry(edge.target()).or_default() += 1;
                    }
                }
            }
        }
        if !cyclic {
            return component
                .first()
                .map(|&node| cost_of(node))
                .unwrap_or_default();
        }
        // Longest path over the unbounded edges, which must be acyclic (Kahn's algorithm).
        let mut ready: Vec<NodeIndex> = component
            .iter()
            .copied()
            .filter(|n| indegree.get(n) == Some(&0))
            .collect();
        let mut best: HashMap<NodeIndex, Cost> = HashMap::new();
        let mut done = 0;
        let mut longest = Cost::default();
        while let Some(node) = ready.pop() {
            done += 1;
            let here = best.remove(&node).unwrap_or_default().plus(&cost_of(node));
            longest = longest.max(&here);
            for &next in successors.get(&node).map_or(&[][..], Vec::as_slice) {
                let slot = best.entry(next).or_default();
                *slot = slot.max(&here);
                if let Some(degree) = indegree.get_mut(&next) {
                    *degree -= 1;
                    if *degree == 0 {
                        ready.push(next);
                    }
                }
            }
        }
        if done < component.len() {
            // A cycle with no bound: the plan is invalid (`unbounded-cycle`).
            self.bounded = false;
            return component
                .iter()
                .fold(Cost::default(), |sum, &node| sum.plus(&cost_of(node)));
        }
        longest.times(bounded_total.saturating_add(1))
    }
}

/// The components in topological order of the condensation (Kahn's algorithm), whatever
/// order the SCC algorithm produced them in.
fn topological(
    graph: &DiGraph<(), Option<u32>>,
    components: &[Vec<NodeIndex>],
    component_of: &[usize],
) -> Vec<usize> {
    let mut successors: Vec<Vec<usize>> = vec![Vec::new(); components.len()];
    let mut indegree = vec![0usize; components.len()];
    for (index, component) in components.iter().enumerate() {
        for &node in component {
            for next in graph.neighbors(node) {
                let target = component_of.get(next.index()).copied().unwrap_or(index);
                if target != index
                    && let (Some(list), Some(degree)) =
                        (successors.get_mut(index), indegree.get_mut(target))
                {
                    list.push(target);
                    *degree += 1;
                }
            }
        }
    }
    let mut ready: Vec<usize> = (0..components.len())
        .filter(|&index| indegree.get(index) == Some(&0))
        .collect();
    let mut order = Vec::with_capacity(components.len());
    while let Some(index) = ready.pop() {
        order.push(index);
        for &next in successors.get(index).map_or(&[][..], Vec::as_slice) {
            if let Some(degree) = indegree.get_mut(next) {
                *degree -= 1;
                if *degree == 0 {
                    ready.push(next);
                }
            }
        }
    }
    order
}

/// Every step of a statement: its own, and those of everything nested in it.
fn steps_within(plan: &Plan, node: NodeIdx) -> Vec<StepIdx> {
    let mut steps = Vec::new();
    let mut pending = vec![node];
    let workflow = plan.workflow();
    while let Some(idx) = pending.pop() {
        let Some(entry) = plan.step_of(idx) else {
            continue;
        };
        steps.push(entry);
        match plan.step(entry).kind {
            StepKind::LoopHead { tail, .. } => steps.push(tail),
            StepKind::Fork { join } => steps.push(join),
            _ => {}
        }
        match &workflow.node(idx).kind {
            NodeKind::Loop(ir) => pending.extend(ir.body.nodes.iter().copied()),
            NodeKind::Parallel(ir) => {
                for branch in &ir.branches {
                    pending.extend(branch.body.nodes.iter().copied());
                }
            }
            _ => {}
        }
    }
    steps
}

/// Branches run together: counts add up; wall time is the longest branch (`race`: the
/// shortest, since the first to finish ends it), and with `max-concurrency=c` below the
/// branch count at most `ceil(n / c)` × the longest (greedy scheduling), never more than
/// running them one after another.
fn combine(branches: &[Cost], strategy: Strategy, concurrency: Option<u32>) -> Cost {
    let mut total = branches
        .iter()
        .fold(Cost::default(), |sum, branch| sum.plus(branch));
    let times: Vec<u64> = branches.iter().map(|b| b.fixed.wall_time_ms).collect();
    let longest = times.iter().copied().max().unwrap_or(0);
    let sum = times.iter().fold(0u64, |sum, &t| sum.saturating_add(t));
    let count = times.len() as u64;
    let time = match (strategy, concurrency) {
        (Strategy::Race, _) => times.iter().copied().min().unwrap_or(0),
        (_, Some(slots)) if u64::from(slots) < count && slots > 0 => {
            sum.min(count.div_ceil(u64::from(slots)).saturating_mul(longest))
        }
        _ => longest,
    };
    total.fixed = total.fixed.with_time(time);
    for (key, dims) in &mut total.per_item {
        let longest = branches
            .iter()
            .filter_map(|branch| branch.per_item.get(key))
            .map(|dims| dims.wall_time_ms)
            .max()
            .unwrap_or(0);
        *dims = dims.with_time(longest);
    }
    total
}

/// A `for-each` parallel: its body's cost is per item. With no `max-concurrency` all items
/// run at once, so wall time does not grow with the item count; with `c`, items run in
/// `ceil(n / c)` batches: `t / c` per item plus one `t`.
fn per_item(parallel: NodeIdx, body: &Cost, concurrency: Option<u32>) -> Cost {
    let mut cost = Cost::default();
    let spread = |dims: Dims, cost: &mut Cost, key: Vec<NodeIdx>| {
        let time = dims.wall_time_ms;
        cost.fixed.wall_time_ms = cost.fixed.wall_time_ms.saturating_add(time);
        let per_item_time = match concurrency {
            Some(slots) if slots > 0 => time.div_ceil(u64::from(slots)),
            _ => 0,
        };
        let slot = cost.per_item.entry(key).or_default();
        *slot = slot.plus(dims.with_time(per_item_time));
    };
    spread(body.fixed, &mut cost, vec![parallel]);
    for (key, dims) in &body.per_item {
        let mut nested = vec![parallel];
        nested.extend(key.iter().copied());
        spread(*dims, &mut cost, nested);
    }
    cost
}

/// The worst case of one action, decision or set step, retries included.
fn step_cost(node: &Node) -> Dims {
    let attempts = attempts(node);
    let timeout = node.timeout.as_ref().map(|timeout| timeout.value.0);
    let time = timeout.map_or(0, |timeout| {
        timeout.saturating_mul(u64::from(attempts)).saturating_add(
            node.retry
                .as_ref()
                .map_or(0, |retry| backoff_total(retry, attempts)),
        )
    });
    let attempts = u64::from(attempts);
    let base = Dims {
        steps: 1,
        ..Dims::default()
    };
    match &node.kind {
        NodeKind::Agent(agent) => Dims {
            agent_calls: attempts,
            wall_time_ms: time,
            #[expect(clippy::cast_precision_loss, reason = "attempt counts are small")]
            cost_usd: agent
                .budget_usd
                .as_ref()
                .map_or(0.0, |usd| usd.value * attempts as f64),
            ..base
        },
        NodeKind::Tool(_) => Dims {
            tool_runs: attempts,
            wall_time_ms: time,
            ..base
        },
        NodeKind::Subgraph(_) => Dims {
            subgraph_runs: attempts,
            wall_time_ms: time,
            ..base
        },
        NodeKind::Wait(wait) => Dims {
            waits: 1,
            wall_time_ms: wait
                .auto_approve
                .as_ref()
                .map(|auto| auto.after.value.0)
                .or(timeout)
                .unwrap_or(0),
            ..base
        },
        NodeKind::Decision(_)
        | NodeKind::Set(_)
        | NodeKind::Emit(_)
        | NodeKind::Loop(_)
        | NodeKind::Parallel(_) => base,
    }
}

/// How often a node may run: its `retry` attempts, 3 for `on-error "retry"` without a
/// policy, else once. Waits are answered, not retried.
fn attempts(node: &Node) -> u32 {
    if matches!(node.kind, NodeKind::Wait(_)) {
        return 1;
    }
    match (&node.retry, node.on_error.as_deref()) {
        (Some(retry), _) => retry.attempts.max(1),
        (None, Some(OnError::Retry { .. })) => DEFAULT_RETRY_ATTEMPTS,
        _ => 1,
    }
}

/// The delays before retries 1..attempts: `backoff × factor^k`, capped by `max-backoff`,
/// ×1.5 with jitter (its worst case).
fn backoff_total(retry: &Retry, attempts: u32) -> u64 {
    let mut total = 0.0_f64;
    let mut delay = retry.backoff.0 as f64;
    let cap = retry.max_backoff.map_or(f64::INFINITY, |max| max.0 as f64);
    for _ in 1..attempts {
        total += delay.min(cap);
        delay *= retry.factor.max(1.0);
    }
    if retry.jitter {
        total *= 1.5;
    }
    #[expect(
        clippy::cast_possible_truncation,
        reason = "saturating float to int is intended"
    )]
    let total = total.min(u64::MAX as f64) as u64;
    total
}

/// Reachable nodes whose wall time has no bound (no `timeout`, and for waits no
/// `auto-approve`), and reachable agents with no `budget-usd`: ids in source order.
fn unmeasured(plan: &Plan) -> (Vec<String>, Vec<String>) {
    let graph = plan.graph();
    let mut reachable = vec![false; graph.node_count()];
    let mut bfs = Bfs::new(graph, plan.start().into());
    while let Some(step) = bfs.next(graph) {
        if let Some(slot) = reachable.get_mut(step.index()) {
            *slot = true;
        }
    }
    let mut untimed = Vec::new();
    let mut unpriced = Vec::new();
    for step in plan.steps() {
        if !reachable.get(step.index()).copied().unwrap_or(false)
            || !plan.step(step).kind.is_action()
        {
            continue;
        }
        let Some(node) = plan.node(step) else {
            continue;
        };
        let timed = node.timeout.is_some()
            || matches!(&node.kind, NodeKind::Set(_))
            || matches!(&node.kind, NodeKind::Wait(wait) if wait.auto_approve.is_some());
        if !timed {
            untimed.push(node.id.value.clone());
        }
        if let NodeKind::Agent(agent) = &node.kind
            && agent.budget_usd.is_none()
        {
            unpriced.push(node.id.value.clone());
        }
    }
    (untimed, unpriced)
}

#[cfg(test)]
mod tests {
    use crate::lower::budget;
    use crate::lower::testing::plan;

    #[test]
    fn a_sequence_adds_up_with_retries() {
        let plan = plan(|b| {
            b.agent("a").timeout_ms(1_000).retry(3, 100).budget_usd(0.5);
            b.tool("t").timeout_ms(2_000);
            b.set("s");
        });
        let budget = budget(&plan);
        assert_eq!(budget.total.agent_calls, 3);
        assert_eq!(budget.total.tool_runs, 1);
        assert_eq!(budget.total.steps, 3);
        // 3 × 1s + backoff 100ms + 200ms, then 2s.
        assert_eq!(budget.total.wall_time_ms, 3_000 + 300 + 2_000);
        assert!((budget.total.cost_usd - 1.5).abs() < 1e-9);
        assert!(budget.untimed.is_empty());
        assert_eq!(budget.wall_time_ms(), Some(5_300));
    }

    #[test]
    fn loops_multiply_their_body_by_max() {
        let plan = plan(|b| {
            b.loop_("l", Some(5), |b| {
                b.agent("x").timeout_ms(10);
                b.loop_("inner", Some(2), |b| {
                    b.tool("t").timeout_ms(1);
                });
            });
        });
        let budget = budget(&plan);
        assert_eq!(budget.total.agent_calls, 5);
        assert_eq!(budget.total.tool_runs, 10);
        assert_eq!(budget.total.wall_time_ms, 5 * (10 + 2));
    }

    #[test]
    fn a_bounded_jump_back_repeats_its_cycle() {
        let plan = plan(|b| {
            b.agent("fix").timeout_ms(10);
            b.tool("test").timeout_ms(1);
            b.decision("gate", &[("failed", "fix", Some(3))], Some(("next", None)));
            b.agent("after").timeout_ms(100);
        });
        let budget = budget(&plan);
        assert_eq!(budget.total.agent_calls, 4 + 1);
        assert_eq!(budget.total.tool_runs, 4);
        assert_eq!(budget.total.wall_time_ms, 4 * 11 + 100);
    }

    #[test]
    fn the_worst_route_counts() {
        let plan = plan(|b| {
            b.decision("d", &[("cheap", "c", None)], Some(("next", None)));
            b.agent("expensive").timeout_ms(1_000);
            b.agent("c").timeout_ms(1);
        });
        let budget = budget(&plan);
        assert_eq!(budget.total.agent_calls, 2);
        assert_eq!(budget.total.wall_time_ms, 1_001);
    }

    #[test]
    fn parallels_add_calls_and_take_the_longest_time() {
        let plan = plan(|b| {
            b.parallel("p", |b| {
                b.agent("x").timeout_ms(10);
                b.agent("y").timeout_ms(30);
                b.agent("z").timeout_ms(20);
            });
        });
        let budget = budget(&plan);
        assert_eq!(budget.total.agent_calls, 3);
        assert_eq!(budget.total.wall_time_ms, 30);
        let limited = crate::lower::testing::plan(|b| {
            b.parallel_with("p", Some(2), None, |b| {
                b.agent("x").timeout_ms(10);
                b.agent("y").timeout_ms(30);
                b.agent("z").timeout_ms(20);
            });
        });
        // ceil(3 / 2) batches × the longest, below the 60 of running them in turn.
        assert_eq!(super::budget(&limited).total.wall_time_ms, 60);
    }

    #[test]
    fn for_each_costs_are_per_item() {
        let plan = plan(|b| {
            b.agent("a").timeout_ms(5);
            b.parallel_with("files", Some(4), Some("input.files"), |b| {
                b.agent("review").timeout_ms(400).budget_usd(0.25);
            });
        });
        let budget = budget(&plan);
        assert_eq!(budget.total.agent_calls, 1);
        assert_eq!(budget.per_item.len(), 1);
        let item = &budget.per_item[0];
        assert_eq!(item.for_each, ["files"]);
        assert_eq!(item.items, ["input.files"]);
        assert_eq!(item.cost.agent_calls, 1);
        assert_eq!(item.cost.wall_time_ms, 100);
        assert_eq!(budget.total.wall_time_ms, 405);
        assert_eq!(
            budget.wall_time_ms(),
            None,
            "time grows with the item count"
        );
        let text = budget.to_string();
        assert!(
            text.contains("agent calls   1 + 1 per item of `files`"),
            "{text}"
        );
        assert!(
            text.contains("cost          $0.00 + $0.25 per item of `files`"),
            "{text}"
        );
    }

    #[test]
    fn untimed_steps_make_wall_time_unbounded_unless_limited() {
        let plan = plan(|b| {
            b.agent("a");
            b.wait("w");
        });
        let budget = budget(&plan);
        assert_eq!(budget.untimed, ["a", "w"]);
        assert_eq!(budget.unpriced, ["a"]);
        assert_eq!(budget.wall_time_ms(), None);
        let text = budget.to_string();
        assert!(
            text.contains("wall time     unbounded: no timeout on `a`, `w`"),
            "{text}"
        );
        assert!(text.contains("not priced (no budget-usd): `a`"), "{text}");
    }

    #[test]
    fn the_budget_serialises_to_json() {
        let plan = plan(|b| {
            b.agent("a").timeout_ms(1);
        });
        let json = serde_json::to_value(budget(&plan)).unwrap();
        assert_eq!(json["workflow"], "test");
        assert_eq!(json["total"]["agent_calls"], 1);
        assert_eq!(json["bounded"], true);
    }

    #[test]
    fn unbounded_cycles_are_flagged_not_looped_on() {
        let plan = plan(|b| {
            b.agent("a").goto("b", None);
            b.agent("b").goto("a", None);
        });
        assert!(!budget(&plan).bounded);
    }
}
