//! The quantities a budget adds up, and their arithmetic: sums along a path, component-wise
//! maxima across alternatives, multiples for repetition. All saturating.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::ir::NodeIdx;

/// One set of worst-case figures.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Dims {
    /// Agent calls (attempts included).
    pub agent_calls: u64,
    /// Tool runs (attempts included).
    pub tool_runs: u64,
    /// Subgraph runs (their contents are not counted).
    pub subgraph_runs: u64,
    /// Human waits.
    pub waits: u64,
    /// Steps taken (compare with `limits max-steps`).
    pub steps: u64,
    /// Wall time in milliseconds over timed steps; see [`Budget::untimed`](super::Budget::untimed).
    pub wall_time_ms: u64,
    /// Spend in US dollars over priced agents; see [`Budget::unpriced`](super::Budget::unpriced).
    pub cost_usd: f64,
}

impl Dims {
    /// Component-wise sum.
    #[must_use]
    pub fn plus(self, other: Self) -> Self {
        Self {
            agent_calls: self.agent_calls.saturating_add(other.agent_calls),
            tool_runs: self.tool_runs.saturating_add(other.tool_runs),
            subgraph_runs: self.subgraph_runs.saturating_add(other.subgraph_runs),
            waits: self.waits.saturating_add(other.waits),
            steps: self.steps.saturating_add(other.steps),
            wall_time_ms: self.wall_time_ms.saturating_add(other.wall_time_ms),
            cost_usd: self.cost_usd + other.cost_usd,
        }
    }

    /// Component-wise maximum.
    #[must_use]
    pub fn max(self, other: Self) -> Self {
        Self {
            agent_calls: self.agent_calls.max(other.agent_calls),
            tool_runs: self.tool_runs.max(other.tool_runs),
            subgraph_runs: self.subgraph_runs.max(other.subgraph_runs),
            waits: self.waits.max(other.waits),
            steps: self.steps.max(other.steps),
            wall_time_ms: self.wall_time_ms.max(other.wall_time_ms),
            cost_usd: self.cost_usd.max(other.cost_usd),
        }
    }

    /// `times` repetitions.
    #[must_use]
    pub fn times(self, times: u64) -> Self {
        Self {
            agent_calls: self.agent_calls.saturating_mul(times),
            tool_runs: self.tool_runs.saturating_mul(times),
            subgraph_runs: self.subgraph_runs.saturating_mul(times),
            waits: self.waits.saturating_mul(times),
            steps: self.steps.saturating_mul(times),
            wall_time_ms: self.wall_time_ms.saturating_mul(times),
            #[expect(clippy::cast_precision_loss, reason = "repetition counts are small")]
            cost_usd: self.cost_usd * times as f64,
        }
    }

    /// The same figures with wall time replaced.
    #[must_use]
    pub fn with_time(self, wall_time_ms: u64) -> Self {
        Self {
            wall_time_ms,
            ..self
        }
    }
}

/// A cost that may depend on the item counts of `for-each` parallels: `fixed` plus, per
/// chain of nested for-each nodes (outermost first), a cost per item of each of them.
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct Cost {
    pub(super) fixed: Dims,
    pub(super) per_item: BTreeMap<Vec<NodeIdx>, Dims>,
}

impl Cost {
    pub(super) fn fixed(dims: Dims) -> Self {
        Self {
            fixed: dims,
            per_item: BTreeMap::new(),
        }
    }

    pub(super) fn plus(&self, other: &Self) -> Self {
        let mut per_item = self.per_item.clone();
        for (key, dims) in &other.per_item {
            let slot = per_item.entry(key.clone()).or_default();
            *slot = slot.plus(*dims);
        }
        Self {
            fixed: self.fixed.plus(other.fixed),
            per_item,
        }
    }

    pub(super) fn max(&self, other: &Self) -> Self {
        let mut per_item = self.per_item.clone();
        for (key, dims) in &other.per_item {
            let slot = per_item.entry(key.clone()).or_default();
            *slot = slot.max(*dims);
        }
        Self {
            fixed: self.fixed.max(other.fixed),
            per_item,
        }
    }

    pub(super) fn times(&self, times: u64) -> Self {
        Self {
            fixed: self.fixed.times(times),
            per_item: self
                .per_item
                .iter()
                .map(|(key, dims)| (key.clone(), dims.times(times)))
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn calls(agent_calls: u64, wall_time_ms: u64) -> Dims {
        Dims {
            agent_calls,
            wall_time_ms,
            ..Dims::default()
        }
    }

    #[test]
    fn dims_add_take_maxima_and_multiply() {
        assert_eq!(calls(1, 10).plus(calls(2, 5)), calls(3, 15));
        assert_eq!(calls(1, 10).max(calls(2, 5)), calls(2, 10));
        assert_eq!(calls(2, 10).times(3), calls(6, 30));
        assert_eq!(calls(u64::MAX, 1).times(2).agent_calls, u64::MAX);
    }

    #[test]
    fn per_item_terms_combine_by_key() {
        let key = vec![NodeIdx(4)];
        let mut a = Cost::fixed(calls(1, 0));
        a.per_item.insert(key.clone(), calls(2, 0));
        let b = Cost::fixed(calls(5, 0));
        assert_eq!(a.plus(&b).fixed, calls(6, 0));
        assert_eq!(a.plus(&b).per_item[&key], calls(2, 0));
        assert_eq!(a.max(&b).fixed, calls(5, 0));
        assert_eq!(a.times(2).per_item[&key], calls(4, 0));
    }
}
