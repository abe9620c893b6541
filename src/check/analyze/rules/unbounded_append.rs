//! `unbounded-append`: an `append` field is written on a cycle and has no `max-items`.
//!
//! ## What it does
//! Reports an `append` state field without `max-items` that is written by a node inside a
//! `loop` or on a `goto` cycle (any cycle of the control-flow graph), once per field, at
//! the first such write.
//!
//! ## Why is this bad?
//! The field grows with every iteration: prompts that include it grow too, until they no
//! longer fit the model's context, and every checkpoint carries it.
//!
//! ## Example
//! ```kdl
//! state { field "logs" type="array" reduce="append" default="[]"; }
//! loop "fix" until="state.ok" max=20 { tool "test" { run "cargo" "test"; output "logs"; } }
//! ```
//!
//! ## Use instead
//! ```kdl
//! state { field "logs" type="array" reduce="append" max-items=5 default="[]"; }
//! ```

use std::collections::HashSet;

use crate::diagnostic::{Code, Diagnostic};
use crate::ir::{NodeIdx, Reducer};

use super::super::driver::Facts;
use super::super::flow::Cfg;

/// Reports append fields that grow without bound.
pub(crate) fn check(facts: &Facts<'_>, out: &mut Vec<Diagnostic>) {
    let workflow = facts.workflow;
    let unbounded = |name: &str| {
        workflow
            .field(name)
            .is_some_and(|field| field.reducer == Reducer::Append && field.max_items.is_none())
    };
    if !workflow
        .state
        .iter()
        .any(|field| unbounded(&field.name.value))
    {
        return;
    }
    let cyclic = facts.cfg.on_cycle();
    let mut reported = HashSet::new();
    for index in 0..workflow.nodes.len() {
        let node = NodeIdx(index as u32);
        if !cyclic[Cfg::entry(node)] {
            continue;
        }
        for write in facts.model.writes(node) {
            let name = write.field.value.as_str();
            if !unbounded(name) || !reported.insert(name) {
                continue;
            }
            let Some(field) = workflow.field(name) else {
                continue;
            };
            out.push(
                Diagnostic::new(
                    Code::UnboundedAppend,
                    write.field.span,
                    format!(
                        "`{name}` grows on every iteration: `{}` appends to it in a cycle",
                        workflow.node(node).id.value
                    ),
                )
                .label("appended to on every pass")
                .with_label(field.name.span, "declared without `max-items`")
                .help(format!(
                    "bound it: `field \"{name}\" … reduce=\"append\" max-items=10`"
                )),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::check::analyze::testing::{Builder, messages, run};
    use crate::diagnostic::Code;
    use crate::ir::{Reducer, ValueType};

    #[test]
    fn reports_appends_in_loops_and_goto_cycles_once_per_field() {
        let mut b = Builder::new();
        let empty = Some(serde_json::json!([]));
        b.field("logs", ValueType::Array, empty.clone()).reducer = Reducer::Append;
        b.field("kept", ValueType::Array, empty.clone()).reducer = Reducer::Append;
        b.field("notes", ValueType::Array, empty.clone()).reducer = Reducer::Append;
        b.field("once", ValueType::Array, empty).reducer = Reducer::Append;
        b.workflow_mut().state[1].max_items = Some(5);
        b.loop_("fix", Some("true"), None, 5, |b| {
            b.agent_to("test", "x", "logs");
            b.agent_to("test-2", "x", "logs");
            b.agent_to("keep", "x", "kept");
        });
        let again = b.agent_to("again", "x", "notes");
        b.goto(again, "again", Some(3));
        b.agent_to("single", "x", "once");
        assert_eq!(
            messages(&run(&b.finish()), Code::UnboundedAppend),
            [
                "`logs` grows on every iteration: `test` appends to it in a cycle",
                "`notes` grows on every iteration: `again` appends to it in a cycle",
            ]
        );
    }
}
