//! The route a dry run took, from its events: each step in the order it finished (with
//! its kind, indented by depth), each decision's choice, each wait's canned answer.

use std::collections::HashMap;

use super::reporter::Depths;
use crate::ir::NodeKeyword;
use crate::runtime::RunEvent;

/// Collects route lines.
pub(super) struct Route {
    depths: Depths,
    kinds: HashMap<String, NodeKeyword>,
    answers: HashMap<String, String>,
    lines: Vec<String>,
}

impl Route {
    pub(super) fn new(depths: Depths) -> Self {
        Self {
            depths,
            kinds: HashMap::new(),
            answers: HashMap::new(),
            lines: Vec::new(),
        }
    }

    fn indent(&self, node: &str) -> String {
        "  ".repeat(self.depths.get(node).copied().unwrap_or(0) + 1)
    }

    pub(super) fn event(&mut self, event: &RunEvent) {
        match event {
            RunEvent::StepStarted { node, kind, .. } => {
                self.kinds.insert(node.to_string(), *kind);
            }
            RunEvent::WaitAutoApprove { node, answer, .. } => {
                self.answers.insert(node.to_string(), answer.clone());
            }
            RunEvent::StepFinished {
                step, node, status, ..
            } => {
                let kind = self
                    .kinds
                    .get(&**node)
                    .copied()
                    .unwrap_or(NodeKeyword::Wait);
                let answered = self
                    .answers
                    .remove(&**node)
                    .map(|answer| format!(" (answered `{answer}`)"))
                    .unwrap_or_default();
                let how = if *status == crate::runtime::StepOutcome::Completed {
                    String::new()
                } else {
                    format!(" [{status}]")
                };
                self.lines.push(format!(
                    "{}{step:>3}  {kind:<8} {node}{answered}{how}",
                    self.indent(node)
                ));
            }
            RunEvent::Route { node, to } => {
                self.lines.push(format!(
                    "{}     {:<8} {node} → {}",
                    self.indent(node),
                    "decision",
                    super::text::target(to)
                ));
            }
            RunEvent::NodeFailed {
                node,
                message,
                action,
                ..
            } => {
                self.lines.push(format!(
                    "{}     failed   {node}: {message} ({action})",
                    self.indent(node)
                ));
            }
            _ => {}
        }
    }

    pub(super) fn lines(self) -> Vec<String> {
        self.lines
    }
}
