//! Mermaid `flowchart TD`. Shapes by kind: agent rectangle, tool hexagon, decision rhombus,
//! wait parallelogram, subgraph subroutine, set stadium, loop head/tail trapezoids, fork
//! and join asymmetric flags, start circle, end double circle; one `classDef` colour per
//! kind. Loops and parallel branches are `subgraph`s. Edges: routes and `otherwise` solid
//! with their condition, `goto` and error edges dotted, loop back edges thick.
//!
//! Every label is a quoted string with `"`, `#`, `<`, `>`, `&`, `|` and backticks written as
//! Mermaid entity codes, so no user text can end a label or a statement early. Ids are
//! `s_<node id>` with anything but ASCII letters, digits and `_` replaced by `_` (made
//! unique with a suffix), `c_<n>` for clusters; none can be a Mermaid keyword.

use std::collections::{BTreeMap, HashSet};
use std::fmt::Write as _;

use crate::lower::{Plan, StepIdx, StepKind};

use super::edges::{Tail, drawn};
use super::label::{EdgeStyle, step_lines};
use super::tree::{Cluster, Item, cluster_id, tree};

/// The plan as a Mermaid flowchart.
#[must_use]
pub fn mermaid(plan: &Plan) -> String {
    let ids = Ids::new(plan);
    let mut out = String::from("flowchart TD\n");
    for item in tree(plan) {
        write_item(&mut out, plan, &ids, &item, 1);
    }
    for edge in drawn(plan) {
        let from = match edge.from {
            Tail::Step(step) => ids.step(step).to_owned(),
            Tail::Cluster(node, _) => format!("c_{}", cluster_id(node)),
        };
        let arrow = match edge.style {
            EdgeStyle::Plain | EdgeStyle::Route => "-->",
            EdgeStyle::Jump | EdgeStyle::Error => "-.->",
            EdgeStyle::Back => "==>",
        };
        let label = edge
            .label
            .as_deref()
            .map(|label| format!("|\"{}\"|", escape(label)))
            .unwrap_or_default();
        let _ = writeln!(out, "  {from} {arrow}{label} {}", ids.step(edge.to));
    }
    let mut classes: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for step in plan.steps() {
        classes
            .entry(class(plan.step(step).kind))
            .or_default()
            .push(ids.step(step));
    }
    for (class, style) in CLASSES {
        if let Some(members) = classes.get(class) {
            let _ = writeln!(out, "  classDef {class} {style}");
            let _ = writeln!(out, "  class {} {class}", members.join(","));
        }
    }
    out
}

/// Colours per kind: `(class, style)`.
const CLASSES: [(&str, &str); 11] = [
    ("terminal", "fill:#111827,stroke:#111827,color:#ffffff"),
    ("agent", "fill:#dbeafe,stroke:#2563eb"),
    ("tool", "fill:#dcfce7,stroke:#16a34a"),
    ("decision", "fill:#fef3c7,stroke:#b45309"),
    ("wait", "fill:#fde2e2,stroke:#dc2626"),
    ("subgraph", "fill:#ede9fe,stroke:#7c3aed"),
    ("set", "fill:#f1f5f9,stroke:#64748b"),
    ("loop", "fill:#bfdbfe,stroke:#2563eb"),
    ("fork", "fill:#334155,stroke:#334155,color:#ffffff"),
    ("join", "fill:#334155,stroke:#334155,color:#ffffff"),
    ("other", "fill:#ffffff,stroke:#64748b"),
];

fn class(kind: StepKind) -> &'static str {
    match kind {
        StepKind::Start | StepKind::End => "terminal",
        StepKind::Agent => "agent",
        StepKind::Tool => "tool",
        StepKind::Decision => "decision",
        StepKind::Wait => "wait",
        StepKind::Subgraph => "subgraph",
        StepKind::Set => "set",
        StepKind::Emit => "emit",
        StepKind::LoopHead { .. } | StepKind::LoopTail { .. } => "loop",
        StepKind::Fork { .. } => "fork",
        StepKind::Join { .. } => "join",
    }
}

fn write_item(out: &mut String, plan: &Plan, ids: &Ids, item: &Item, depth: usize) {
    let indent = "  ".repeat(depth);
    match item {
        Item::Step(step) => {
            let label = step_lines(plan, *step)
                .iter()
                .map(|line| escape(line))
                .collect::<Vec<_>>()
                .join("<br/>");
            let (open, close) = shape(plan.step(*step).kind);
            let _ = writeln!(out, "{indent}{}{open}\"{label}\"{close}", ids.step(*step));
        }
        Item::Cluster(Cluster {
            id, label, items, ..
        }) => {
            let _ = writeln!(out, "{indent}subgraph c_{id} [\"{}\"]", escape(label));
            let _ = writeln!(out, "{indent}  direction TB");
            for inner in items {
                write_item(out, plan, ids, inner, depth + 1);
            }
            let _ = writeln!(out, "{indent}end");
        }
    }
}

/// Opening and closing brackets of a kind's shape.
fn shape(kind: StepKind) -> (&'static str, &'static str) {
    match kind {
        StepKind::Start => ("((", "))"),
        StepKind::End => ("(((", ")))"),
        StepKind::Agent => ("[", "]"),
        StepKind::Tool => ("{{", "}}"),
        StepKind::Decision => ("{", "}"),
        StepKind::Wait => ("[/", "/]"),
        StepKind::Subgraph => ("[[", "]]"),
        StepKind::Set | StepKind::Emit => ("([", "])"),
        StepKind::LoopHead { .. } => ("[/", "\\]"),
        StepKind::LoopTail { .. } => ("[\\", "/]"),
        StepKind::Fork { .. } | StepKind::Join { .. } => (">", "]"),
    }
}

/// Escapes text for a quoted Mermaid label with entity codes.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '"' => out.push_str("#quot;"),
            '#' => out.push_str("#35;"),
            '<' => out.push_str("#lt;"),
            '>' => out.push_str("#gt;"),
            '&' => out.push_str("#amp;"),
            '|' => out.push_str("#124;"),
            '`' => out.push_str("#96;"),
            '\n' | '\r' | '\t' => out.push(' '),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// Unique Mermaid ids for steps.
struct Ids {
    ids: Vec<String>,
}

impl Ids {
    fn new(plan: &Plan) -> Self {
        let mut taken = HashSet::new();
        let mut ids = Vec::with_capacity(plan.len());
        for step in plan.steps() {
            let key = &plan.step(step).key;
            let base = match plan.step(step).kind {
                StepKind::Start => "s_start_".to_owned(),
                StepKind::End => "s_end_".to_owned(),
                _ => {
                    let clean: String = key
                        .chars()
                        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
                        .collect();
                    format!("s_{clean}")
                }
            };
            let mut id = base.clone();
            let mut suffix = 2;
            while !taken.insert(id.clone()) {
                id = format!("{base}_{suffix}");
                suffix += 1;
            }
            ids.push(id);
        }
        Self { ids }
    }

    fn step(&self, step: StepIdx) -> &str {
        self.ids
            .get(step.index())
            .map_or("s_unknown", String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::testing::plan;

    #[test]
    fn labels_cannot_break_out_of_their_quotes() {
        assert_eq!(
            escape("a \"b\" <c> & d | #e `f`\ng"),
            "a #quot;b#quot; #lt;c#gt; #amp; d #124; #35;e #96;f#96; g"
        );
    }

    #[test]
    fn ids_are_safe_and_unique() {
        let plan = plan(|b| {
            b.agent("fix-tail");
            b.loop_("fix", Some(1), |b| {
                b.agent("end");
            });
        });
        let mermaid = mermaid(&plan);
        for id in [
            "s_start_",
            "s_fix_tail",
            "s_fix",
            "s_fix_tail_2",
            "s_end",
            "s_end_",
        ] {
            assert!(
                mermaid.contains(&format!("  {id}")),
                "{id} missing in\n{mermaid}"
            );
        }
    }
}
