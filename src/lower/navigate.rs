//! How control moves through a [`Plan`]: the interpreter's side of the graph.
//!
//! Input: a plan, the step just finished, the run's [`Counters`] and a way to evaluate a
//! condition. Output: the next step. Not here: evaluating expressions (the caller passes
//! `eval`, so this module stays free of minijinja and runtime state) and executing steps.
//!
//! Every transfer goes through [`Plan::take`], which maintains the counters: taking a
//! bounded edge counts one use, and arriving at a loop head over anything but its own
//! back edge resets that loop's iteration counter.

use crate::ir::{Expr, NodeIdx, NodeKind};

use super::plan::{Bound, CounterIdx, Counters, EdgeIdx, EdgeKind, Plan, StepIdx, StepKind};

/// One route of a decision, as [`Plan::routes`] lists them.
#[derive(Clone, Copy, Debug)]
pub struct RouteEdge<'a> {
    /// The edge.
    pub edge: EdgeIdx,
    /// `Some(i)` for the i-th `when`; `None` for `otherwise` and the final fall-through.
    pub index: Option<u32>,
    /// The condition; `None` means always true.
    pub when: Option<&'a Expr>,
    /// How often it may be taken.
    pub bound: Option<Bound>,
    /// Where it goes.
    pub target: StepIdx,
}

/// The parts of a loop, from [`Plan::loop_parts`].
#[derive(Clone, Copy, Debug)]
pub struct LoopParts<'a> {
    /// The `loop` node.
    pub node: NodeIdx,
    /// Its head step.
    pub head: StepIdx,
    /// Its tail step.
    pub tail: StepIdx,
    /// The first step of the body (the tail when the body is empty).
    pub body: StepIdx,
    /// `max=` (0 when missing, which `check` reports as an error).
    pub max: u32,
    /// The iteration counter.
    pub counter: CounterIdx,
    /// `while=`, tested by the head before each iteration.
    pub while_: Option<&'a Expr>,
    /// `until=`, tested by the tail after each iteration.
    pub until: Option<&'a Expr>,
}

/// One branch of a parallel, from [`Plan::branches`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BranchEntry {
    /// Position among the branches.
    pub index: u32,
    /// The `Branch` edge from the fork; pass it to [`Plan::take`] to enter the branch.
    pub edge: EdgeIdx,
    /// The branch's first step (the join when the branch is empty).
    pub entry: StepIdx,
}

/// Where a failure goes, from [`Plan::on_error`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ErrorRoute {
    /// The step to continue at.
    pub target: StepIdx,
    /// The node whose `on-error` applies: its fallback `set`s (for `skip`) are applied
    /// before continuing.
    pub handler: NodeIdx,
    /// `true` for `on-error "goto"` (the failure is available at the recovery node),
    /// `false` for `on-error "skip"`.
    pub recover: bool,
}

impl Plan {
    /// Follows `edge`, updating `counters`, and returns where it leads.
    pub fn take(&self, edge: EdgeIdx, counters: &mut Counters) -> StepIdx {
        let weight = self.edge(edge);
        if let Some(bound) = weight.bound
            && weight.kind != EdgeKind::LoopBack
        {
            counters.set(bound.counter, counters.get(bound.counter).saturating_add(1));
        }
        let target = self.target(edge);
        if let StepKind::LoopHead { counter, .. } = self.step(target).kind
            && weight.kind != EdgeKind::LoopBack
        {
            counters.set(counter, 0);
        }
        target
    }

    /// The step after `step` finished successfully, or `None` when `step` is `End`.
    /// `eval` evaluates a decision's, `while`'s or `until`'s condition; its error is passed
    /// on. For a `Fork` this is its `Join`: run the branches first (see [`Plan::branches`]).
    ///
    /// # Errors
    /// Whatever `eval` returns.
    pub fn next<E>(
        &self,
        step: StepIdx,
        counters: &mut Counters,
        eval: &mut dyn FnMut(&Expr) -> Result<bool, E>,
    ) -> Result<Option<StepIdx>, E> {
        let next = match self.step(step).kind {
            StepKind::End => None,
            StepKind::Fork { join } => Some(join),
            StepKind::Decision => {
                let mut chosen = None;
                for route in self.routes(step) {
                    if !counters.allows(route.bound) {
                        continue;
                    }
                    let holds = match route.when {
                        Some(condition) => eval(condition)?,
                        None => true,
                    };
                    if holds {
                        chosen = Some(self.take(route.edge, counters));
                        break;
                    }
                }
                chosen
            }
            StepKind::LoopHead { counter, .. } => {
                let parts = self.loop_parts(step).expect("a loop head has loop parts");
                let iterations = counters.get(counter);
                let enter = iterations < parts.max
                    && match parts.while_ {
                        Some(condition) => eval(condition)?,
                        None => true,
                    };
                if enter {
                    counters.set(counter, iterations.saturating_add(1));
                    self.first_of(step, counters, |kind| kind == EdgeKind::LoopBody)
                } else {
                    self.exit(step, counters)
                }
            }
            StepKind::LoopTail { head } => {
                let parts = self.loop_parts(head).expect("a loop tail has a head");
                let done = match parts.until {
                    Some(condition) => eval(condition)?,
                    None => false,
                };
                if done {
                    self.exit(step, counters)
                } else {
                    self.first_of(step, counters, |kind| kind == EdgeKind::LoopBack)
                }
            }
            StepKind::Start
            | StepKind::Agent
            | StepKind::Tool
            | StepKind::Wait
            | StepKind::Subgraph
            | StepKind::Set
            | StepKind::Emit
            | StepKind::Join { .. } => self.exit(step, counters),
        };
        Ok(next)
    }

    /// Where a failure of `step` goes (after its retries), or `None` when the run — or,
    /// inside a parallel branch, the branch — fails.
    pub fn on_error(&self, step: StepIdx, counters: &mut Counters) -> Option<ErrorRoute> {
        let edge = self
            .out_edges(step)
            .iter()
            .copied()
            .find(|&edge| self.edge(edge).kind.is_error())?;
        let (handler, recover) = match self.edge(edge).kind {
            EdgeKind::Skip { handler } => (handler, false),
            EdgeKind::Recover { handler } => (handler, true),
            _ => return None,
        };
        let target = self.take(edge, counters);
        Some(ErrorRoute {
            target,
            handler,
            recover,
        })
    }

    /// The step control falls through to after `step`, ignoring any `goto=`: the next
    /// statement or the enclosing block's continuation. `None` for steps with no
    /// fall-through (`End`, forks, loop tails' back edge aside, unbounded-goto steps).
    #[must_use]
    pub fn next_sequential(&self, step: StepIdx) -> Option<StepIdx> {
        self.out_edges(step)
            .iter()
            .copied()
            .find(|&edge| matches!(self.edge(edge).kind, EdgeKind::Next | EdgeKind::LoopExit))
            .map(|edge| self.target(edge))
    }

    /// A decision's routes in the order they are tried: each `when`, then `otherwise`,
    /// then (after a bounded `otherwise`) the fall-through. Empty for other steps.
    #[must_use]
    pub fn routes(&self, step: StepIdx) -> Vec<RouteEdge<'_>> {
        let decision = match self.node(step).map(|node| &node.kind) {
            Some(NodeKind::Decision(decision)) => decision,
            _ => return Vec::new(),
        };
        self.out_edges(step)
            .iter()
            .copied()
            .filter_map(|edge| {
                let weight = self.edge(edge);
                let (index, when) = match weight.kind {
                    EdgeKind::Route { index } => (
                        Some(index),
                        decision
                            .routes
                            .get(index as usize)
                            .and_then(|route| route.when.as_ref()),
                    ),
                    EdgeKind::Otherwise | EdgeKind::Next => (None, None),
                    _ => return None,
                };
                // A `when` route without a condition cannot come from the resolver; never
                // take it rather than always.
                if index.is_some() && when.is_none() {
                    return None;
                }
                Some(RouteEdge {
                    edge,
                    index,
                    when,
                    bound: weight.bound,
                    target: self.target(edge),
                })
            })
            .collect()
    }

    /// The parts of the loop whose head or tail is `step`.
    #[must_use]
    pub fn loop_parts(&self, step: StepIdx) -> Option<LoopParts<'_>> {
        let (head, tail, counter) = match self.step(step).kind {
            StepKind::LoopHead { tail, counter } => (step, tail, counter),
            StepKind::LoopTail { head } => match self.step(head).kind {
                StepKind::LoopHead { tail, counter } => (head, tail, counter),
                _ => return None,
            },
            _ => return None,
        };
        let node = self.step(head).node?;
        let NodeKind::Loop(ir) = &self.workflow.node(node).kind else {
            return None;
        };
        let body = self
            .out_edges(head)
            .iter()
            .copied()
            .find(|&edge| self.edge(edge).kind == EdgeKind::LoopBody)
            .map_or(tail, |edge| self.target(edge));
        Some(LoopParts {
            node,
            head,
            tail,
            body,
            max: ir.max.as_ref().map_or(0, |max| max.value),
            counter,
            while_: ir.while_.as_ref(),
            until: ir.until.as_ref(),
        })
    }

    /// A fork's branches in order. Empty for other steps.
    #[must_use]
    pub fn branches(&self, fork: StepIdx) -> Vec<BranchEntry> {
        let mut branches: Vec<BranchEntry> = self
            .out_edges(fork)
            .iter()
            .copied()
            .filter_map(|edge| match self.edge(edge).kind {
                EdgeKind::Branch { index } => Some(BranchEntry {
                    index,
                    edge,
                    entry: self.target(edge),
                }),
                _ => None,
            })
            .collect();
        branches.sort_by_key(|branch| branch.index);
        branches
    }

    /// The join of a fork (or of the parallel whose fork or join `step` is).
    #[must_use]
    pub fn join_of(&self, step: StepIdx) -> Option<StepIdx> {
        match self.step(step).kind {
            StepKind::Fork { join } => Some(join),
            StepKind::Join { .. } => Some(step),
            _ => None,
        }
    }

    /// The fork of a join (or `step` itself if it is a fork).
    #[must_use]
    pub fn fork_of(&self, step: StepIdx) -> Option<StepIdx> {
        match self.step(step).kind {
            StepKind::Join { fork } => Some(fork),
            StepKind::Fork { .. } => Some(step),
            _ => None,
        }
    }

    /// Takes the first exit (`Goto`, then `Next`/`LoopExit`) whose bound allows it.
    fn exit(&self, step: StepIdx, counters: &mut Counters) -> Option<StepIdx> {
        self.first_of(step, counters, |kind| {
            matches!(kind, EdgeKind::Goto | EdgeKind::Next | EdgeKind::LoopExit)
        })
    }

    /// Takes the first out-edge of a kind accepted by `accept` whose bound allows it.
    fn first_of(
        &self,
        step: StepIdx,
        counters: &mut Counters,
        accept: impl Fn(EdgeKind) -> bool,
    ) -> Option<StepIdx> {
        let edge = self.out_edges(step).iter().copied().find(|&edge| {
            let weight = self.edge(edge);
            accept(weight.kind)
                && (weight.kind == EdgeKind::LoopBack || counters.allows(weight.bound))
        })?;
        Some(self.take(edge, counters))
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use crate::lower::testing::plan;
    use crate::lower::{Counters, Plan, StepIdx, StepKind};

    /// Walks a plan from the start, answering conditions from `answers` (each condition a
    /// queue of results, the last repeated), failing the steps named in `failing` once each.
    fn walk(plan: &Plan, answers: &[(&str, &[bool])], failing: &[&str]) -> Vec<String> {
        let mut answers: HashMap<String, Vec<bool>> = answers
            .iter()
            .map(|(condition, results)| ((*condition).to_owned(), results.to_vec()))
            .collect();
        let mut failing: Vec<String> = failing.iter().map(|&s| s.to_owned()).collect();
        let mut counters = plan.new_counters();
        let mut visited = Vec::new();
        let mut cursor = plan.start();
        for _ in 0..200 {
            cursor = match step(
                plan,
                cursor,
                &mut counters,
                &mut answers,
                &mut failing,
                &mut visited,
            ) {
                Some(next) => next,
                None => return visited,
            };
        }
        panic!("walk did not terminate: {visited:?}");
    }

    fn step(
        plan: &Plan,
        cursor: StepIdx,
        counters: &mut Counters,
        answers: &mut HashMap<String, Vec<bool>>,
        failing: &mut Vec<String>,
        visited: &mut Vec<String>,
    ) -> Option<StepIdx> {
        let key = String::from(&*plan.step(cursor).key);
        visited.push(key.clone());
        if let Some(position) = failing.iter().position(|name| *name == key) {
            failing.remove(position);
            let route = plan
                .on_error(cursor, counters)
                .expect("a failing step has a handler");
            return Some(route.target);
        }
        if let StepKind::Fork { join } = plan.step(cursor).kind {
            for branch in plan.branches(cursor) {
                let mut inner = counters.clone();
                let mut at = plan.take(branch.edge, &mut inner);
                while at != join {
                    at = step(plan, at, &mut inner, answers, failing, visited)
                        .expect("branches end at the join");
                }
            }
        }
        let mut eval = |condition: &crate::ir::Expr| -> Result<bool, ()> {
            let queue = answers
                .get_mut(&condition.source)
                .expect("every condition has answers");
            Ok(if queue.len() > 1 {
                queue.remove(0)
            } else {
                queue[0]
            })
        };
        plan.next(cursor, counters, &mut eval)
            .expect("eval never fails")
    }

    #[test]
    fn a_loop_runs_at_most_max_times() {
        let plan = plan(|b| {
            b.loop_with("l", Some(3), Some("done"), None, |b| {
                b.agent("x");
            });
        });
        let visited = walk(&plan, &[("done", &[false])], &[]);
        let runs = visited.iter().filter(|key| *key == "x").count();
        assert_eq!(runs, 3, "{visited:?}");
        assert_eq!(visited.last().unwrap(), "#end");
    }

    #[test]
    fn until_is_tested_after_and_while_before_each_iteration() {
        let plan = plan(|b| {
            b.loop_with("u", Some(9), Some("done"), None, |b| {
                b.agent("x");
            });
            b.loop_with("w", Some(9), None, Some("more"), |b| {
                b.agent("y");
            });
        });
        let visited = walk(&plan, &[("done", &[false, true]), ("more", &[false])], &[]);
        assert_eq!(
            visited.iter().filter(|k| *k == "x").count(),
            2,
            "{visited:?}"
        );
        assert_eq!(
            visited.iter().filter(|k| *k == "y").count(),
            0,
            "{visited:?}"
        );
    }

    #[test]
    fn a_loop_entered_again_starts_counting_afresh() {
        let plan = plan(|b| {
            b.agent("a");
            b.loop_("l", Some(2), |b| {
                b.agent("x");
            })
            .goto("a", Some(1));
        });
        let visited = walk(&plan, &[], &[]);
        assert_eq!(
            visited.iter().filter(|k| *k == "x").count(),
            4,
            "{visited:?}"
        );
    }

    #[test]
    fn bounded_routes_are_skipped_once_used_up() {
        let plan = plan(|b| {
            b.agent("a");
            b.decision("d", &[("again", "a", Some(2))], Some(("end", None)));
        });
        let visited = walk(&plan, &[("again", &[true])], &[]);
        assert_eq!(visited, ["#start", "a", "d", "a", "d", "a", "d", "#end"]);
    }

    #[test]
    fn the_first_true_route_wins() {
        let plan = plan(|b| {
            b.decision(
                "d",
                &[("no", "x", None), ("yes", "y", None)],
                Some(("x", None)),
            );
            b.agent("x").goto("end", None);
            b.agent("y");
        });
        let visited = walk(&plan, &[("no", &[false]), ("yes", &[true])], &[]);
        assert_eq!(visited, ["#start", "d", "y", "#end"]);
    }

    #[test]
    fn errors_take_the_error_edge() {
        let plan = plan(|b| {
            b.tool("t").on_error_goto("fix");
            b.agent("ok").goto("end", None);
            b.agent("fix").recovery();
        });
        let visited = walk(&plan, &[], &["t"]);
        assert_eq!(visited, ["#start", "t", "fix", "#end"]);
        let t = plan.step_by_key("ok").unwrap();
        assert!(plan.on_error(t, &mut plan.new_counters()).is_none());
    }

    #[test]
    fn parallels_run_every_branch_then_continue_after_the_join() {
        let plan = plan(|b| {
            b.parallel("p", |b| {
                b.agent("x");
                b.agent("y");
            });
            b.agent("after");
        });
        let visited = walk(&plan, &[], &[]);
        assert_eq!(
            visited,
            ["#start", "p", "x", "y", "p#join", "after", "#end"]
        );
        let fork = plan.step_by_key("p").unwrap();
        let join = plan.step_by_key("p#join").unwrap();
        assert_eq!(plan.join_of(fork), Some(join));
        assert_eq!(plan.fork_of(join), Some(fork));
        assert_eq!(plan.branches(fork).len(), 2);
    }

    #[test]
    fn accessors_describe_loops_and_routes() {
        let plan = plan(|b| {
            b.loop_with("l", Some(4), Some("done"), Some("go"), |b| {
                b.decision("d", &[("c", "end", Some(1))], Some(("next", None)));
            });
        });
        let head = plan.step_by_key("l").unwrap();
        let tail = plan.step_by_key("l#tail").unwrap();
        let parts = plan.loop_parts(tail).unwrap();
        assert_eq!((parts.head, parts.tail, parts.max), (head, tail, 4));
        assert_eq!(parts.body, plan.step_by_key("d").unwrap());
        assert_eq!(parts.until.unwrap().source, "done");
        assert_eq!(parts.while_.unwrap().source, "go");
        let routes = plan.routes(parts.body);
        assert_eq!(routes.len(), 2);
        assert_eq!(routes[0].index, Some(0));
        assert_eq!(routes[0].bound.unwrap().max, 1);
        assert_eq!(routes[1].index, None);
        assert_eq!(routes[1].target, tail);
        assert_eq!(plan.next_sequential(head), Some(plan.end()));
        assert!(plan.routes(head).is_empty());
    }
}
