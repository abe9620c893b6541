//! The plan as data for a view that draws it itself (`atomic ui`): its steps with their node
//! ids, kinds and labels, and the same edges DOT and Mermaid draw.

use serde::Serialize;

use crate::lower::Plan;

use super::edges::{Tail, drawn};
use super::label::{EdgeStyle, step_lines};

/// The steps and edges of a plan.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Outline {
    /// Every step, in source order.
    pub steps: Vec<OutlineStep>,
    /// The edges between them.
    pub edges: Vec<OutlineEdge>,
}

/// One step.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct OutlineStep {
    /// Its key: the node id, or `<id>#tail`, `#start`, `#end`, ….
    pub key: String,
    /// The node it runs (run events name it), none for the start and the end.
    pub node: Option<String>,
    /// `agent`, `tool`, `decision`, `loop`, `fork`, `start`, `end`, ….
    pub kind: &'static str,
    /// What the graph shows on it.
    pub label: String,
}

/// One edge.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct OutlineEdge {
    /// The key of the step it leaves.
    pub from: String,
    /// The key of the step it reaches.
    pub to: String,
    /// Its condition or bound, if any.
    pub label: Option<String>,
    /// `plain`, `jump`, `route`, `back` or `error`.
    pub style: &'static str,
    /// Whether it goes back in source order.
    pub backward: bool,
}

/// The outline of `plan`.
#[must_use]
pub fn outline(plan: &Plan) -> Outline {
    let steps = plan
        .steps()
        .map(|step| OutlineStep {
            key: String::from(&*plan.step(step).key),
            node: plan.node(step).map(|node| node.id.value.to_string()),
            kind: plan.step(step).kind.name(),
            label: step_lines(plan, step).join("\n"),
        })
        .collect();
    let edges = drawn(plan)
        .into_iter()
        .map(|edge| {
            let from = match edge.from {
                Tail::Step(step) | Tail::Cluster(_, step) => step,
            };
            OutlineEdge {
                from: String::from(&*plan.step(from).key),
                to: String::from(&*plan.step(edge.to).key),
                label: edge.label,
                style: match edge.style {
                    EdgeStyle::Plain => "plain",
                    EdgeStyle::Jump => "jump",
                    EdgeStyle::Route => "route",
                    EdgeStyle::Back => "back",
                    EdgeStyle::Error => "error",
                },
                backward: edge.backward,
            }
        })
        .collect();
    Outline { steps, edges }
}
