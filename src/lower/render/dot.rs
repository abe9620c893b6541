//! Graphviz DOT. Shapes by kind: agent rounded box, tool component, decision diamond,
//! wait parallelogram, subgraph box3d, set note, loop head/tail trapezia, fork and join
//! dark flat bars, start circle, end double circle. Loops and parallel branches are clusters. Edges:
//! routes amber with their condition, `goto` dashed violet, loop back edges bold blue,
//! error edges dashed red.

use std::fmt::Write as _;

use crate::lower::{Plan, StepIdx, StepKind};

use super::edges::{Tail, drawn};
use super::label::{EdgeStyle, step_lines};
use super::tree::{Cluster, Item, cluster_id, tree};

/// The plan as a Graphviz `digraph`.
#[must_use]
pub fn dot(plan: &Plan) -> String {
    let mut out = String::new();
    let name = &plan.workflow().name.value;
    let _ = writeln!(out, "digraph {} {{", quote(name));
    out.push_str("  graph [rankdir=TB, compound=true, fontname=\"Helvetica\", fontsize=11];\n");
    out.push_str(
        "  node [fontname=\"Helvetica\", fontsize=11, style=\"filled\", fillcolor=\"white\"];\n",
    );
    out.push_str("  edge [fontname=\"Helvetica\", fontsize=10];\n");
    for item in tree(plan) {
        write_item(&mut out, plan, &item, 1);
    }
    for edge in drawn(plan) {
        let (from, cluster) = match edge.from {
            Tail::Step(step) => (step, None),
            Tail::Cluster(node, head) => (head, Some(cluster_id(node))),
        };
        let mut attributes = Vec::new();
        if let Some(label) = &edge.label {
            attributes.push(format!("label={}", quote(label)));
        }
        attributes.extend(edge_attributes(edge.style).iter().map(|&a| a.to_owned()));
        if let Some(cluster) = cluster {
            attributes.push(format!("ltail=\"cluster_{cluster}\""));
        }
        if edge.backward {
            // Keep source order top-down: back edges do not rank their target.
            attributes.push("constraint=false".to_owned());
        }
        let _ = write!(out, "  {} -> {}", id(plan, from), id(plan, edge.to));
        if !attributes.is_empty() {
            let _ = write!(out, " [{}]", attributes.join(", "));
        }
        out.push_str(";\n");
    }
    out.push_str("}\n");
    out
}

fn write_item(out: &mut String, plan: &Plan, item: &Item, depth: usize) {
    let indent = "  ".repeat(depth);
    match item {
        Item::Step(step) => {
            let _ = writeln!(
                out,
                "{indent}{} [{}];",
                id(plan, *step),
                node_attributes(plan, *step)
            );
        }
        Item::Cluster(Cluster {
            id,
            label,
            is_loop,
            items,
        }) => {
            let _ = writeln!(out, "{indent}subgraph \"cluster_{id}\" {{");
            let (style, color) = if *is_loop {
                ("rounded", "#2563eb")
            } else {
                ("dashed", "#64748b")
            };
            let _ = writeln!(
                out,
                "{indent}  graph [label={}, style=\"{style}\", color=\"{color}\", fontcolor=\"{color}\"];",
                quote(label)
            );
            for inner in items {
                write_item(out, plan, inner, depth + 1);
            }
            let _ = writeln!(out, "{indent}}}");
        }
    }
}

fn node_attributes(plan: &Plan, step: StepIdx) -> String {
    let label = step_lines(plan, step)
        .iter()
        .map(|line| escape(line))
        .collect::<Vec<_>>()
        .join("\\n");
    let (shape, fill, extra) = match plan.step(step).kind {
        StepKind::Start => ("circle", "#111827", ", fontcolor=\"white\", width=0.5"),
        StepKind::End => (
            "doublecircle",
            "#111827",
            ", fontcolor=\"white\", width=0.4",
        ),
        StepKind::Agent => ("box", "#dbeafe", ", style=\"rounded,filled\""),
        StepKind::Tool => ("component", "#dcfce7", ""),
        StepKind::Decision => ("diamond", "#fef3c7", ""),
        StepKind::Wait => ("parallelogram", "#fde2e2", ""),
        StepKind::Subgraph => ("box3d", "#ede9fe", ""),
        StepKind::Set => ("note", "#f1f5f9", ""),
        StepKind::Emit => ("cds", "#f1f5f9", ""),
        StepKind::LoopHead { .. } => ("trapezium", "#bfdbfe", ""),
        StepKind::LoopTail { .. } => ("invtrapezium", "#bfdbfe", ""),
        StepKind::Fork { .. } | StepKind::Join { .. } => (
            "box",
            "#334155",
            ", fontcolor=\"white\", height=0.25, width=2.2, margin=\"0.05,0.02\"",
        ),
    };
    format!("shape={shape}, label=\"{label}\", fillcolor=\"{fill}\"{extra}")
}

fn edge_attributes(style: EdgeStyle) -> &'static [&'static str] {
    match style {
        EdgeStyle::Plain => &[],
        EdgeStyle::Jump => &[
            "style=\"dashed\"",
            "color=\"#7c3aed\"",
            "fontcolor=\"#7c3aed\"",
        ],
        EdgeStyle::Route => &["color=\"#b45309\"", "fontcolor=\"#b45309\""],
        EdgeStyle::Back => &[
            "style=\"bold\"",
            "color=\"#2563eb\"",
            "fontcolor=\"#2563eb\"",
        ],
        EdgeStyle::Error => &[
            "style=\"dashed\"",
            "color=\"#dc2626\"",
            "fontcolor=\"#dc2626\"",
        ],
    }
}

/// A step's DOT id: its key, quoted.
fn id(plan: &Plan, step: StepIdx) -> String {
    quote(&plan.step(step).key)
}

/// A DOT quoted string.
fn quote(text: &str) -> String {
    format!("\"{}\"", escape(text))
}

/// Escapes text for a DOT quoted string: backslashes and quotes; line breaks become
/// spaces (labels' own line breaks are inserted by the caller as `\n`).
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' | '\r' | '\t' => out.push(' '),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::testing::plan;

    #[test]
    fn quotes_backslashes_and_newlines_are_escaped() {
        assert_eq!(quote("say \"hi\"\\n\nnow"), "\"say \\\"hi\\\"\\\\n now\"");
    }

    #[test]
    fn every_step_and_edge_is_drawn_once() {
        let plan = plan(|b| {
            b.agent("a");
            b.decision(
                "d",
                &[("state.x == \"y\"", "a", Some(2))],
                Some(("end", None)),
            );
        });
        let dot = dot(&plan);
        assert!(dot.starts_with("digraph \"test\" {\n"));
        assert!(dot.ends_with("}\n"));
        assert_eq!(dot.matches("shape=").count(), plan.len());
        assert_eq!(dot.matches(" -> ").count(), plan.graph().edge_count());
        assert!(
            dot.contains("label=\"when state.x == \\\"y\\\" ≤2\""),
            "{dot}"
        );
    }

    #[test]
    fn inherited_error_edges_are_drawn_once_from_the_cluster() {
        let plan = plan(|b| {
            b.loop_("l", Some(2), |b| {
                b.tool("t");
                b.tool("u");
            })
            .on_error_skip();
        });
        let dot = dot(&plan);
        assert_eq!(dot.matches("ltail=\"cluster_n0\"").count(), 1, "{dot}");
        assert!(
            dot.contains("\"l\" -> \"#end\" [label=\"error: skip (any step)\""),
            "{dot}"
        );
    }
}
