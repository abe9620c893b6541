//! The stage function: build the plan, then check it.

use crate::diagnostic::Outcome;
use crate::ir::Workflow;

use super::{Plan, build, flow};

/// Lowers a resolved workflow to its executable [`Plan`] and runs the flow checks.
///
/// The plan is always returned (so the language server and `atomic graph` can show a
/// workflow with problems), but the interpreter may run it only when no diagnostic is an
/// error: the invariants documented in `lower/plan.rs` hold exactly then.
#[must_use]
pub fn lower(workflow: Workflow) -> Outcome<Plan> {
    let plan = build::build(workflow);
    let diagnostics = flow::check(&plan);
    Outcome::new(Some(plan), diagnostics)
}

#[cfg(test)]
mod tests {
    //! Properties over many random workflows: lowering, budgeting and rendering never panic;
    //! a plan without errors always terminates, whatever the conditions and failures, and
    //! never takes more steps, agent calls or tool runs than its budget says.

    use crate::lower::testing::{Builder, workflow};
    use crate::lower::{Counters, Plan, StepIdx, StepKind, budget, dot, lower, mermaid};

    /// xorshift64: deterministic, no dependency.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
        fn chance(&mut self, percent: u64) -> bool {
            self.next() % 100 < percent
        }
    }

    /// A statement shape, decided before building so jumps can name any id.
    enum Shape {
        Agent,
        Tool,
        Decision(usize),
        Loop(Vec<Shape>),
        Parallel(Vec<Vec<Shape>>),
    }

    fn shapes(rng: &mut Rng, depth: usize, count: &mut usize) -> Vec<Shape> {
        let len = 1 + rng.below(4);
        (0..len)
            .map(|_| {
                *count += 1;
                match rng.below(if depth > 2 { 3 } else { 5 }) {
                    0 => Shape::Agent,
                    1 => Shape::Tool,
                    2 => Shape::Decision(1 + rng.below(2)),
                    3 => Shape::Loop(shapes(rng, depth + 1, count)),
                    _ => Shape::Parallel(
                        (0..1 + rng.below(3))
                            .map(|_| shapes(rng, depth + 1, count))
                            .collect(),
                    ),
                }
            })
            .collect()
    }

    fn build(b: &mut Builder, shapes: &[Shape], rng: &mut Rng, next_id: &mut usize, total: usize) {
        for shape in shapes {
            let id = format!("n{}", *next_id);
            *next_id += 1;
            let target = |rng: &mut Rng| match rng.below(total + 2) {
                n if n < total => format!("n{n}"),
                n if n == total => "end".to_owned(),
                _ => "next".to_owned(),
            };
            let max = |rng: &mut Rng| rng.chance(60).then(|| 1 + rng.below(3) as u32);
            let handle = match shape {
                Shape::Agent => b.agent(&id),
                Shape::Tool => b.tool(&id),
                Shape::Decision(routes) => {
                    let routes: Vec<(String, String, Option<u32>)> = (0..*routes)
                        .map(|_| {
                            let mut to = target(rng);
                            if to == "next" {
                                to = "end".to_owned();
                            }
                            ("c".to_owned(), to, max(rng))
                        })
                        .collect();
                    let routes: Vec<(&str, &str, Option<u32>)> = routes
                        .iter()
                        .map(|(c, t, m)| (c.as_str(), t.as_str(), *m))
                        .collect();
                    let otherwise = target(rng);
                    b.decision(&id, &routes, Some((otherwise.as_str(), max(rng))))
                }
                Shape::Loop(body) => {
                    let bound = 1 + rng.below(3) as u32;
                    b.loop_with(&id, Some(bound), Some("c"), Some("c"), |b| {
                        build(b, body, rng, next_id, total);
                    })
                }
                Shape::Parallel(branches) => b.parallel(&id, |b| {
                    for (index, branch) in branches.iter().enumerate() {
                        b.branch(&format!("b{index}"), |b| {
                            build(b, branch, rng, next_id, total)
                        });
                    }
                }),
            };
            let handle = if rng.chance(20) {
                let to = target(rng);
                if to == "next" {
                    handle
                } else {
                    handle.goto(&to, max(rng))
                }
            } else {
                handle
            };
            if rng.chance(15) {
                let _ = handle.on_error_skip();
            }
        }
    }

    #[derive(Default)]
    struct Walked {
        steps: u64,
        agents: u64,
        tools: u64,
    }

    /// Walks from `at` until `stop`, with random answers and failures. `None` if it runs
    /// past `limit` steps.
    fn walk(
        plan: &Plan,
        mut at: StepIdx,
        stop: StepIdx,
        counters: &mut Counters,
        rng: &mut Rng,
        walked: &mut Walked,
        limit: u64,
    ) -> Option<()> {
        while at != stop {
            let kind = plan.step(at).kind;
            if !matches!(kind, StepKind::Start | StepKind::End) {
                walked.steps += 1;
            }
            match kind {
                StepKind::Agent => walked.agents += 1,
                StepKind::Tool => walked.tools += 1,
                _ => {}
            }
            if walked.steps > limit {
                return None;
            }
            if let StepKind::Fork { join } = kind {
                for branch in plan.branches(at) {
                    let mut inner = counters.clone();
                    let entry = plan.take(branch.edge, &mut inner);
                    walk(plan, entry, join, &mut inner, rng, walked, limit)?;
                }
            }
            if kind.is_action()
                && rng.chance(10)
                && let Some(route) = plan.on_error(at, counters)
            {
                at = route.target;
                continue;
            }
            let mut eval = |_: &crate::ir::Expr| -> Result<bool, ()> { Ok(rng.chance(50)) };
            match plan
                .next(at, counters, &mut eval)
                .expect("eval never fails")
            {
                Some(next) => at = next,
                None => return Some(()),
            }
        }
        Some(())
    }

    #[test]
    fn random_workflows_lower_safely_terminate_and_stay_within_budget() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let mut clean = 0;
        for _ in 0..400 {
            let mut count = 0;
            let tree = shapes(&mut rng, 0, &mut count);
            let flow = workflow(|b| build(b, &tree, &mut rng, &mut 0, count));
            let outcome = lower(flow);
            let plan = outcome.value.as_ref().expect("a plan is always returned");
            let worst = budget(plan);
            let _ = (dot(plan), mermaid(plan));
            if outcome.has_errors() {
                continue;
            }
            clean += 1;
            assert!(worst.bounded);
            for _ in 0..5 {
                let mut walked = Walked::default();
                let mut counters = plan.new_counters();
                let limit = worst.total.steps + 1;
                let ended = walk(
                    plan,
                    plan.start(),
                    plan.end(),
                    &mut counters,
                    &mut rng,
                    &mut walked,
                    limit,
                );
                assert!(
                    ended.is_some(),
                    "a valid plan ran past its budget of {limit} steps:\n{}",
                    crate::lower::testing::sketch(plan)
                );
                assert!(walked.agents <= worst.total.agent_calls);
                assert!(walked.tools <= worst.total.tool_runs);
            }
        }
        assert!(
            clean > 50,
            "too few valid random workflows ({clean}) to mean anything"
        );
    }
}
