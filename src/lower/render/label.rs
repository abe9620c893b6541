//! What each step and edge says, independent of the output format. Lines are plain text;
//! each renderer escapes them.

use crate::ir::{NodeKind, Strategy};
use crate::lower::{Edge, EdgeKind, Plan, StepIdx, StepKind};

/// Longest expression or command shown before it is cut with `…`.
const WIDTH: usize = 40;

/// The lines of a step's label.
pub(super) fn step_lines(plan: &Plan, step: StepIdx) -> Vec<String> {
    let kind = plan.step(step).kind;
    let Some(node) = plan.node(step) else {
        return vec![
            if kind == StepKind::End {
                "end"
            } else {
                "start"
            }
            .to_owned(),
        ];
    };
    let id = node.id.value.clone();
    let mut lines = match (&node.kind, kind) {
        (NodeKind::Agent(agent), _) => {
            let mut detail = "agent".to_owned();
            if let Some(provider) = &agent.provider {
                detail.push_str(&format!(" · {}", provider.value));
            }
            if let Some(model) = &agent.model {
                detail.push_str(&format!(" · {}", model.value));
            }
            vec![id, detail]
        }
        (NodeKind::Tool(tool), _) => {
            let command = match &tool.use_ {
                Some(name) => format!("use {}", name.value),
                None => tool
                    .run
                    .iter()
                    .map(|arg| arg.source.as_str())
                    .collect::<Vec<_>>()
                    .join(" "),
            };
            vec![id, format!("tool · {}", cut(&command))]
        }
        (NodeKind::Wait(_), _) => vec![id, "wait".to_owned()],
        (NodeKind::Subgraph(subgraph), _) => {
            vec![id, format!("subgraph · {}", cut(&subgraph.workflow.value))]
        }
        (NodeKind::Set(set), _) => vec![id, format!("set {}", set.field.value)],
        (NodeKind::Emit(emit), _) => vec![id, format!("emit {}", emit.event.value)],
        (NodeKind::Decision(_), _) => vec![id],
        (NodeKind::Loop(ir), StepKind::LoopTail { .. }) => vec![match &ir.until {
            Some(until) => format!("until {}", cut(&until.source)),
            None => "repeat".to_owned(),
        }],
        (NodeKind::Loop(ir), _) => {
            let mut lines = vec![
                id,
                ir.max
                    .as_ref()
                    .map_or_else(|| "loop".to_owned(), |max| format!("loop ≤{}", max.value)),
            ];
            if let Some(condition) = &ir.while_ {
                lines.push(format!("while {}", cut(&condition.source)));
            }
            lines
        }
        (NodeKind::Parallel(_), StepKind::Join { .. }) => vec![format!("join {id}")],
        (NodeKind::Parallel(ir), _) => {
            let strategy = match ir.strategy {
                Strategy::All => "all",
                Strategy::Race => "race",
                Strategy::Any => "any",
            };
            let what = if ir.tasks.is_some() {
                "task-loop"
            } else if ir.for_each.is_some() {
                "for-each"
            } else {
                "parallel"
            };
            let mut detail = format!("{what} · {strategy}");
            if let Some(max) = &ir.max_concurrency {
                detail.push_str(&format!(" · ≤{} at once", max.value));
            }
            vec![id, detail]
        }
    };
    if kind.is_action() {
        let mut limits = Vec::new();
        if let Some(timeout) = &node.timeout {
            limits.push(format!(
                "timeout {}",
                crate::lower::budget::duration(timeout.value.0)
            ));
        }
        if let Some(retry) = &node.retry
            && retry.attempts > 1
        {
            limits.push(format!("×{} attempts", retry.attempts));
        }
        if node.recovery {
            limits.push("recovery".to_owned());
        }
        if !limits.is_empty() {
            lines.push(limits.join(", "));
        }
    }
    lines
}

/// An edge's label, if it has one.
pub(super) fn edge_label(plan: &Plan, from: StepIdx, edge: &Edge) -> Option<String> {
    let bound = edge
        .bound
        .map(|bound| format!(" ≤{}", bound.max))
        .unwrap_or_default();
    let node = plan.node(from);
    match edge.kind {
        EdgeKind::Next | EdgeKind::LoopBody => None,
        EdgeKind::Goto => Some(format!("goto{bound}")),
        EdgeKind::Route { index } => {
            let condition = match node.map(|node| &node.kind) {
                Some(NodeKind::Decision(decision)) => decision
                    .routes
                    .get(index as usize)
                    .and_then(|route| route.when.as_ref())
                    .map_or_else(String::new, |when| cut(&when.source)),
                _ => String::new(),
            };
            Some(format!("when {condition}{bound}"))
        }
        EdgeKind::Otherwise => Some(format!("otherwise{bound}")),
        EdgeKind::LoopBack => Some(if bound.is_empty() {
            "loop".to_owned()
        } else {
            format!("loop{bound}")
        }),
        EdgeKind::LoopExit => Some("exit".to_owned()),
        EdgeKind::Branch { index } => match node.map(|node| &node.kind) {
            Some(NodeKind::Parallel(ir)) if ir.tasks.is_some() => {
                Some("each ready task".to_owned())
            }
            Some(NodeKind::Parallel(ir)) if ir.for_each.is_some() => Some("each item".to_owned()),
            Some(NodeKind::Parallel(ir)) => ir
                .branches
                .get(index as usize)
                .map(|branch| branch.name.value.clone()),
            _ => None,
        },
        EdgeKind::Skip { .. } => Some("error: skip".to_owned()),
        EdgeKind::Recover { .. } => Some("error".to_owned()),
    }
}

/// How an edge is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum EdgeStyle {
    /// Fall-through and structural flow.
    Plain,
    /// `goto=`.
    Jump,
    /// A decision's route or `otherwise`.
    Route,
    /// A loop's back edge.
    Back,
    /// On failure.
    Error,
}

pub(super) fn edge_style(kind: EdgeKind) -> EdgeStyle {
    match kind {
        EdgeKind::Next | EdgeKind::LoopBody | EdgeKind::LoopExit | EdgeKind::Branch { .. } => {
            EdgeStyle::Plain
        }
        EdgeKind::Goto => EdgeStyle::Jump,
        EdgeKind::Route { .. } | EdgeKind::Otherwise => EdgeStyle::Route,
        EdgeKind::LoopBack => EdgeStyle::Back,
        EdgeKind::Skip { .. } | EdgeKind::Recover { .. } => EdgeStyle::Error,
    }
}

/// Text on one line, cut to [`WIDTH`] characters.
pub(super) fn cut(text: &str) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= WIDTH {
        flat
    } else {
        let mut short: String = flat.chars().take(WIDTH - 1).collect();
        short.push('…');
        short
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_and_multi_line_text_is_cut_to_one_line() {
        assert_eq!(cut("a\n  b"), "a b");
        let long = "x".repeat(50);
        let short = cut(&long);
        assert_eq!(short.chars().count(), WIDTH);
        assert!(short.ends_with('…'));
    }
}
