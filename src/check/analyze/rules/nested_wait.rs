//! `nested-wait`: a `wait` where the run cannot pause: inside a `parallel` branch, or in a
//! workflow called as a subgraph.
//!
//! ## What it does
//! Reports a `wait` inside a `parallel` (its branch, or a `for-each` body), and a
//! `subgraph` whose called workflow has a `wait`.
//!
//! ## Why is this bad?
//! A run pauses only at its top level for now. Anywhere else the `wait` fails when it is
//! reached, after the steps before it (and its sibling branches) have had their effects.
//!
//! ## Example
//! ```kdl
//! parallel "ship" {
//!     tool "build" { run "make"; }
//!     wait "approve" prompt="Ship it?"
//! }
//! ```
//!
//! ## Use instead
//! ```kdl
//! wait "approve" prompt="Ship it?"
//! parallel "ship" { tool "build" { run "make"; } }
//! ```

use crate::diagnostic::{Code, Diagnostic};
use crate::ir::{NodeIdx, NodeKind};

use super::super::driver::Facts;

/// Reports waits that cannot pause the run.
pub(crate) fn check(facts: &Facts<'_>, out: &mut Vec<Diagnostic>) {
    let workflow = facts.workflow;
    for (index, node) in workflow.nodes.iter().enumerate() {
        match &node.kind {
            NodeKind::Wait(_) => {
                let Some(&(parallel, _)) = facts.model.branches.get(index).and_then(|c| c.first())
                else {
                    continue;
                };
                let parallel_id = &workflow.node(parallel).id.value;
                out.push(
                    Diagnostic::new(
                        Code::NestedWait,
                        node.id.span,
                        format!(
                            "wait `{}` is inside parallel `{parallel_id}`, where the run cannot pause",
                            node.id.value
                        ),
                    )
                    .label("a run pauses only at its top level")
                    .with_label(
                        workflow.node(parallel).id.span,
                        "the parallel it is in",
                    )
                    .help(format!(
                        "move the wait before or after `{parallel_id}`"
                    )),
                );
            }
            NodeKind::Subgraph(subgraph) => {
                let idx = NodeIdx(u32::try_from(index).unwrap_or(u32::MAX));
                let Some(callee) = facts.callees.by_node.get(&idx) else {
                    continue;
                };
                let Some(wait) = callee
                    .nodes
                    .iter()
                    .find(|callee_node| matches!(callee_node.kind, NodeKind::Wait(_)))
                else {
                    continue;
                };
                out.push(
                    Diagnostic::new(
                        Code::NestedWait,
                        subgraph.workflow.span,
                        format!(
                            "`{}` waits for an answer (`{}`), which a called workflow cannot do",
                            subgraph.workflow.value, wait.id.value
                        ),
                    )
                    .label("called as a subgraph")
                    .with_label(wait.id.span, "the wait")
                    .help(format!(
                        "ask in this workflow, before or after `{}`, and pass the answer in as an input",
                        node.id.value
                    )),
                );
            }
            _ => {}
        }
    }
}
