//! Definite assignment: at each point of the [`Cfg`], which values have certainly been
//! written on every way there. A forward "must" analysis: a point's set is the
//! intersection over its incoming edges of (source's set ∪ what the edge writes), except a
//! `strategy="all"` join, which takes the union over its branches (all of them ran).
//! Computed to the greatest fixpoint, so unreachable points hold everything and report
//! nothing.
//!
//! Only the values some template reads and that can be unset are tracked (state fields
//! without a default, node outputs), so the sets stay small.

use std::collections::HashMap;

use crate::ir::NodeIdx;

use super::flow::{Cfg, Effect, Meet, Point};
use super::model::Model;

/// A value that may be unset.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Key {
    /// A state field without default, by index in [`Workflow::state`].
    Field(usize),
    /// `outputs.<id>` of a node.
    Output(NodeIdx),
}

/// The result of the analysis.
#[derive(Debug)]
pub(crate) struct Assigned {
    index: HashMap<Key, usize>,
    words: usize,
    /// Per point, `words` words of bits.
    sets: Vec<u64>,
    /// Per edge, the keys it writes.
    gens: Vec<Vec<usize>>,
}

/// Most passes over the graph; structured workflows converge in a few (loop nesting + 2).
const MAX_PASSES: usize = 1_000;

impl Assigned {
    /// Runs the analysis for `keys` over `cfg`.
    pub(crate) fn compute(model: &Model<'_>, cfg: &Cfg, keys: &[Key]) -> Self {
        let index: HashMap<Key, usize> = keys
            .iter()
            .enumerate()
            .map(|(position, key)| (*key, position))
            .collect();
        let words = keys.len().div_ceil(64).max(1);
        let gens = cfg
            .edges
            .iter()
            .map(|edge| edge_gen(model, edge.effect, &index))
            .collect();
        let mut assigned = Self {
            index,
            words,
            sets: vec![u64::MAX; cfg.points.len() * words],
            gens,
        };
        if keys.is_empty() {
            return assigned;
        }
        assigned.set_mut(cfg.start).fill(0);
        let order = cfg.reverse_post_order();
        let mut scratch = vec![0u64; words];
        let mut incoming = vec![0u64; words];
        for _ in 0..MAX_PASSES {
            let mut changed = false;
            for &point in &order {
                if point == cfg.start {
                    continue;
                }
                let every = cfg.meets[point] == Meet::Every;
                scratch.fill(if every { 0 } else { u64::MAX });
                for &edge in &cfg.incoming[point] {
                    incoming.copy_from_slice(assigned.set(cfg.edges[edge].from));
                    for &key in &assigned.gens[edge] {
                        incoming[key / 64] |= 1 << (key % 64);
                    }
                    for (acc, value) in scratch.iter_mut().zip(&incoming) {
                        if every {
                            *acc |= value;
                        } else {
                            *acc &= value;
                        }
                    }
                }
                if assigned.set(point) != scratch.as_slice() {
                    assigned.set_mut(point).copy_from_slice(&scratch);
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        assigned
    }

    fn set(&self, point: Point) -> &[u64] {
        &self.sets[point * self.words..(point + 1) * self.words]
    }

    fn set_mut(&mut self, point: Point) -> &mut [u64] {
        &mut self.sets[point * self.words..(point + 1) * self.words]
    }

    fn bit(&self, point: Point, key: usize) -> bool {
        self.set(point)[key / 64] & (1 << (key % 64)) != 0
    }

    /// Whether `key` has certainly been written when control reaches `point` (always true
    /// for untracked keys and unreachable points).
    pub(crate) fn holds(&self, point: Point, key: Key) -> bool {
        self.index
            .get(&key)
            .is_none_or(|&position| self.bit(point, position))
    }

    /// For each incoming edge of `point`: whether `key` arrives written along it.
    pub(crate) fn arrivals(&self, cfg: &Cfg, point: Point, key: Key) -> Vec<(usize, bool)> {
        let Some(&position) = self.index.get(&key) else {
            return Vec::new();
        };
        cfg.incoming[point]
            .iter()
            .map(|&edge| {
                let from = cfg.edges[edge].from;
                let written = self.bit(from, position) || self.gens[edge].contains(&position);
                (edge, written)
            })
            .collect()
    }
}

fn edge_gen(model: &Model<'_>, effect: Effect, index: &HashMap<Key, usize>) -> Vec<usize> {
    let (node, fallback) = match effect {
        Effect::None => return Vec::new(),
        Effect::Completes(node) => (node, false),
        Effect::Skipped(node) => (node, true),
    };
    let mut written = Vec::new();
    if !fallback && let Some(&position) = index.get(&Key::Output(node)) {
        written.push(position);
    }
    for write in model.writes(node) {
        if write.fallback != fallback {
            continue;
        }
        let field = model
            .workflow
            .state
            .iter()
            .position(|field| field.name.value == write.field.value);
        if let Some(&position) = field.and_then(|field| index.get(&Key::Field(field))) {
            written.push(position);
        }
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::analyze::model::Model;
    use crate::check::analyze::testing::Builder;
    use crate::ir::{Strategy, ValueType, Workflow};

    fn analyse(workflow: &Workflow, keys: &[Key]) -> (Cfg, Assigned) {
        let cfg = Cfg::new(workflow);
        let assigned = Assigned::compute(&Model::new(workflow), &cfg, keys);
        (cfg, assigned)
    }

    #[test]
    fn a_write_before_counts_and_a_write_after_does_not() {
        let mut b = Builder::new();
        b.field("x", ValueType::String, None);
        let read = b.agent("read", "{{ state.x }}");
        b.set("x", "1");
        let again = b.agent("again", "{{ state.x }}");
        let workflow = b.finish();
        let (_, assigned) = analyse(&workflow, &[Key::Field(0), Key::Output(read)]);
        assert!(!assigned.holds(Cfg::entry(read), Key::Field(0)));
        assert!(assigned.holds(Cfg::entry(again), Key::Field(0)));
        assert!(assigned.holds(Cfg::entry(again), Key::Output(read)));
        assert!(!assigned.holds(Cfg::entry(read), Key::Output(read)));
    }

    #[test]
    fn while_loops_may_not_run_until_loops_do() {
        let mut b = Builder::new();
        b.loop_("w", None, Some("true"), 3, |b| {
            b.agent("inside-while", "x");
        });
        b.loop_("u", Some("true"), None, 3, |b| {
            b.agent("inside-until", "x");
        });
        let after = b.agent("after", "x");
        let workflow = b.finish();
        let w = workflow.find_node("inside-while").unwrap();
        let u = workflow.find_node("inside-until").unwrap();
        let (_, assigned) = analyse(&workflow, &[Key::Output(w), Key::Output(u)]);
        assert!(!assigned.holds(Cfg::entry(after), Key::Output(w)));
        assert!(assigned.holds(Cfg::entry(after), Key::Output(u)));
    }

    #[test]
    fn parallel_all_unions_race_intersects() {
        for (strategy, both) in [(Strategy::All, true), (Strategy::Race, false)] {
            let mut b = Builder::new();
            b.parallel("p", strategy, None, |b| {
                b.branch("a", |b| {
                    b.agent("a", "x");
                });
                b.branch("b", |b| {
                    b.agent("b", "x");
                });
            });
            let after = b.agent("after", "x");
            let workflow = b.finish();
            let a = workflow.find_node("a").unwrap();
            let (_, assigned) = analyse(&workflow, &[Key::Output(a)]);
            assert_eq!(assigned.holds(Cfg::entry(after), Key::Output(a)), both);
        }
    }

    #[test]
    fn a_backward_goto_path_is_found() {
        let mut b = Builder::new();
        let first = b.agent("first", "{{ outputs.later }}");
        let later = b.agent("later", "x");
        b.goto(later, "first", Some(2));
        let workflow = b.finish();
        let (cfg, assigned) = analyse(&workflow, &[Key::Output(later)]);
        assert!(!assigned.holds(Cfg::entry(first), Key::Output(later)));
        let arrivals = assigned.arrivals(&cfg, Cfg::entry(first), Key::Output(later));
        assert_eq!(arrivals.len(), 2);
        // From the start it is unwritten; from `later`'s jump back it is written.
        assert_eq!(arrivals.iter().filter(|&&(_, written)| written).count(), 1);
    }
}
