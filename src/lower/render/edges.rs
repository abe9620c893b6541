//! The edges the renderers draw. Error edges of a loop's `on-error` (which every step in
//! the loop inherits) are drawn once, from the loop's cluster, instead of once per step.

use std::collections::BTreeSet;

use crate::ir::{NodeIdx, NodeKind};
use crate::lower::{EdgeKind, Plan, StepIdx};

use super::label::{EdgeStyle, edge_label, edge_style};

/// Where a drawn edge starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Tail {
    /// A step.
    Step(StepIdx),
    /// The cluster of a loop (for inherited error edges); `StepIdx` is its head.
    Cluster(NodeIdx, StepIdx),
}

/// One edge to draw.
#[derive(Debug)]
pub(super) struct Drawn {
    pub(super) from: Tail,
    pub(super) to: StepIdx,
    pub(super) label: Option<String>,
    pub(super) style: EdgeStyle,
    /// Whether it goes back in source order (renderers keep it from shaping the layout).
    pub(super) backward: bool,
}

/// Every edge to draw, in step order then priority order; inherited error edges last.
pub(super) fn drawn(plan: &Plan) -> Vec<Drawn> {
    let mut edges = Vec::new();
    let mut inherited: BTreeSet<(NodeIdx, StepIdx, bool)> = BTreeSet::new();
    for step in plan.steps() {
        let own = plan.step(step).node;
        for &edge in plan.out_edges(step) {
            let weight = plan.edge(edge);
            let to = plan.target(edge);
            if let EdgeKind::Skip { handler } | EdgeKind::Recover { handler } = weight.kind
                && (Some(handler) != own || is_loop(plan, handler))
            {
                let recover = matches!(weight.kind, EdgeKind::Recover { .. });
                inherited.insert((handler, to, recover));
                continue;
            }
            edges.push(Drawn {
                from: Tail::Step(step),
                to,
                label: edge_label(plan, step, weight),
                style: edge_style(weight.kind),
                backward: to <= step,
            });
        }
    }
    for (handler, to, recover) in inherited {
        let Some(head) = plan.step_of(handler) else {
            continue;
        };
        edges.push(Drawn {
            from: Tail::Cluster(handler, head),
            to,
            label: Some(
                if recover {
                    "error (any step)"
                } else {
                    "error: skip (any step)"
                }
                .to_owned(),
            ),
            style: EdgeStyle::Error,
            backward: to <= head,
        });
    }
    edges
}

fn is_loop(plan: &Plan, node: NodeIdx) -> bool {
    matches!(plan.workflow().node(node).kind, NodeKind::Loop(_))
}
