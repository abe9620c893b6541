//! The [`Budget`] value: what `atomic check --budget` prints and `--format json` emits.

use std::fmt;

use serde::Serialize;

use crate::lower::Plan;

use super::cost::{Cost, Dims};

/// The worst case of one run of a workflow. Each figure is an upper bound on its own.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Budget {
    /// The workflow's name.
    pub workflow: String,
    /// The figures that do not depend on `for-each` item counts.
    pub total: Dims,
    /// What each item of a `for-each` parallel adds (item counts are known only at run
    /// time, so they are reported per item rather than guessed).
    pub per_item: Vec<PerItem>,
    /// Reachable steps with no `timeout` (waits: no `auto-approve` either): while any is
    /// left, wall time has no bound beyond the workflow's `limits timeout`.
    pub untimed: Vec<String>,
    /// Reachable agents with no `budget-usd`: their spend is not in `cost_usd`.
    pub unpriced: Vec<String>,
    /// The workflow's run-wide limits, which cap the figures at run time.
    pub limits: Limits,
    /// `false` when the plan has a cycle with no bound (it also has an `unbounded-cycle`
    /// error); the figures then count that cycle once.
    pub bounded: bool,
}

/// The cost of one item of a `for-each` parallel.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PerItem {
    /// The for-each parallels, outermost first: the cost is per item of each (nested
    /// for-each multiply).
    pub for_each: Vec<String>,
    /// Their item expressions, in the same order.
    pub items: Vec<String>,
    /// What one item adds. Wall time is already divided by `max-concurrency` (and is 0
    /// without one: all items run at once).
    pub cost: Dims,
}

/// `limits …` of the workflow.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Limits {
    /// `max-steps`.
    pub max_steps: Option<u64>,
    /// `timeout`, in milliseconds.
    pub timeout_ms: Option<u64>,
    /// `max-budget-usd`.
    pub max_budget_usd: Option<f64>,
}

impl Budget {
    pub(super) fn new(
        plan: &Plan,
        cost: &Cost,
        untimed: Vec<String>,
        unpriced: Vec<String>,
        bounded: bool,
    ) -> Self {
        let workflow = plan.workflow();
        let per_item = cost
            .per_item
            .iter()
            .map(|(key, dims)| {
                let nodes: Vec<&crate::ir::Node> =
                    key.iter().map(|&idx| workflow.node(idx)).collect();
                PerItem {
                    for_each: nodes.iter().map(|node| node.id.value.clone()).collect(),
                    items: nodes
                        .iter()
                        .map(|node| match &node.kind {
                            crate::ir::NodeKind::Parallel(ir) => ir
                                .for_each
                                .as_ref()
                                .map_or_else(String::new, |each| each.items.source.clone()),
                            _ => String::new(),
                        })
                        .collect(),
                    cost: *dims,
                }
            })
            .collect();
        let limits = &workflow.limits;
        Self {
            workflow: workflow.name.value.clone(),
            total: cost.fixed,
            per_item,
            untimed,
            unpriced,
            limits: Limits {
                max_steps: limits.max_steps.as_ref().map(|max| max.value),
                timeout_ms: limits.timeout.as_ref().map(|timeout| timeout.value.0),
                max_budget_usd: limits.max_budget_usd.as_ref().map(|max| max.value),
            },
            bounded,
        }
    }

    /// The worst-case wall time, if it is bounded: the timed total (capped by the
    /// workflow's `limits timeout`) when every step is timed and no `for-each` adds time
    /// per item; the timeout limit alone otherwise; `None` when nothing bounds it.
    #[must_use]
    pub fn wall_time_ms(&self) -> Option<u64> {
        let per_item_time = self.per_item.iter().any(|item| item.cost.wall_time_ms > 0);
        let timed = self.untimed.is_empty() && !per_item_time && self.bounded;
        match (timed, self.limits.timeout_ms) {
            (true, Some(limit)) => Some(self.total.wall_time_ms.min(limit)),
            (true, None) => Some(self.total.wall_time_ms),
            (false, limit) => limit,
        }
    }
}

impl fmt::Display for Budget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "worst case of `{}` (upper bounds, each on its own worst path)",
            self.workflow
        )?;
        if !self.bounded {
            writeln!(
                f,
                "  warning: the workflow has an unbounded cycle; it is counted once"
            )?;
        }
        let count = |f: &mut fmt::Formatter<'_>, name: &str, total: u64, get: fn(&Dims) -> u64| {
            write!(f, "  {name:<14}{total}")?;
            for item in &self.per_item {
                let value = get(&item.cost);
                if value > 0 {
                    write!(f, " + {value} {}", per(item))?;
                }
            }
            writeln!(f)
        };
        count(f, "agent calls", self.total.agent_calls, |d| d.agent_calls)?;
        count(f, "tool runs", self.total.tool_runs, |d| d.tool_runs)?;
        if self.total.subgraph_runs > 0 || self.per_item.iter().any(|i| i.cost.subgraph_runs > 0) {
            count(f, "subgraph runs", self.total.subgraph_runs, |d| {
                d.subgraph_runs
            })?;
        }
        if self.total.waits > 0 || self.per_item.iter().any(|i| i.cost.waits > 0) {
            count(f, "waits", self.total.waits, |d| d.waits)?;
        }
        write!(f, "  {:<14}{}", "steps", self.total.steps)?;
        for item in &self.per_item {
            if item.cost.steps > 0 {
                write!(f, " + {} {}", item.cost.steps, per(item))?;
            }
        }
        if let Some(max) = self.limits.max_steps {
            write!(f, " (limit: max-steps={max})")?;
        }
        writeln!(f)?;
        self.fmt_time(f)?;
        self.fmt_cost(f)?;
        if self.total.subgraph_runs > 0 {
            writeln!(
                f,
                "  note: subgraph runs are counted, not what their workflows do"
            )?;
        }
        Ok(())
    }
}

impl Budget {
    fn fmt_time(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "  {:<14}", "wall time")?;
        let mut timed = duration(self.total.wall_time_ms);
        for item in &self.per_item {
            if item.cost.wall_time_ms > 0 {
                timed.push_str(&format!(
                    " + {} {}",
                    duration(item.cost.wall_time_ms),
                    per(item)
                ));
            }
        }
        if self.untimed.is_empty() {
            write!(f, "{timed}")?;
        } else {
            let names: Vec<String> = self.untimed.iter().map(|id| format!("`{id}`")).collect();
            write!(f, "unbounded: no timeout on {}", names.join(", "))?;
            if self.total.wall_time_ms > 0 || timed != "0s" {
                write!(f, " (timed steps: {timed})")?;
            }
        }
        if let Some(limit) = self.limits.timeout_ms {
            write!(f, " (limit: timeout={})", duration(limit))?;
        }
        writeln!(f)
    }

    fn fmt_cost(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "  {:<14}${:.2}", "cost", self.total.cost_usd)?;
        for item in &self.per_item {
            if item.cost.cost_usd > 0.0 {
                write!(f, " + ${:.2} {}", item.cost.cost_usd, per(item))?;
            }
        }
        if let Some(max) = self.limits.max_budget_usd {
            write!(f, " (limit: max-budget-usd={max:.2})")?;
        }
        if !self.unpriced.is_empty() {
            let names: Vec<String> = self.unpriced.iter().map(|id| format!("`{id}`")).collect();
            write!(f, "; not priced (no budget-usd): {}", names.join(", "))?;
        }
        writeln!(f)
    }
}

/// "per item of `files`", "per item of `outer` × item of `inner`".
fn per(item: &PerItem) -> String {
    let names: Vec<String> = item
        .for_each
        .iter()
        .map(|id| format!("item of `{id}`"))
        .collect();
    format!("per {}", names.join(" × "))
}

/// `1h 2m 3s`, `500ms`, `0s`.
pub(in crate::lower) fn duration(ms: u64) -> String {
    if ms == 0 {
        return "0s".to_owned();
    }
    if ms < 1000 {
        return format!("{ms}ms");
    }
    let mut seconds = ms.div_ceil(1000);
    let mut parts = Vec::new();
    for (unit, size) in [("d", 86_400), ("h", 3600), ("m", 60)] {
        if seconds >= size {
            parts.push(format!("{}{unit}", seconds / size));
            seconds %= size;
        }
    }
    if seconds > 0 {
        parts.push(format!("{seconds}s"));
    }
    parts.join(" ")
}

#[cfg(test)]
mod tests {
    use super::duration;

    #[test]
    fn durations_read_like_the_language_writes_them() {
        assert_eq!(duration(0), "0s");
        assert_eq!(duration(500), "500ms");
        assert_eq!(duration(1_500), "2s");
        assert_eq!(duration(90_000), "1m 30s");
        assert_eq!(duration(3_600_000 * 26), "1d 2h");
    }
}
