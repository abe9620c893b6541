//! `undefined-output`: `outputs.<id>` names no node, or a node that has no output.
//!
//! ## What it does
//! `outputs.<id>` is the result of an `agent` (its reply), a `tool` (its stdout), a `wait`
//! (the answer), a `subgraph` (the called workflow's state) or a `parallel` (how many
//! branches ran and which won). This rule reports ids that are not nodes, and nodes of
//! other kinds (`set`, `decision`, `loop`).
//!
//! ## Why is this bad?
//! The read is always empty, so the prompt or condition is not what it looks like.
//!
//! ## Example
//! ```kdl
//! agent "fix" { prompt "Fix {{ outputs.reveiw }}"; }
//! ```
//!
//! ## Use instead
//! ```kdl
//! agent "fix" { prompt "Fix {{ outputs.review }}"; }
//! ```

use std::collections::HashSet;

use crate::diagnostic::{Code, Diagnostic, Fix, did_you_mean};
use crate::ir::NodeKind;

use super::super::driver::Facts;
use super::super::model::has_output;
use super::super::reads::dashed_member;

/// Reports `outputs.<id>` reads of nodes without output.
pub(crate) fn check(facts: &Facts<'_>, out: &mut Vec<Diagnostic>) {
    let workflow = facts.workflow;
    for site in facts.model.sites.iter().filter(|site| !site.inherited) {
        let mut seen = HashSet::new();
        for read in site.reads() {
            let ("outputs", Some(id)) = (read.root(), read.member()) else {
                continue;
            };
            if !seen.insert(id) {
                continue;
            }
            match facts.model.node(id) {
                Some(node) if has_output(&workflow.node(node).kind) => {}
                Some(node) => {
                    let node = workflow.node(node);
                    let help = match &node.kind {
                        NodeKind::Set(set) => {
                            format!("read the field it writes: `state.{}`", set.field.value)
                        }
                        _ => "only `agent`, `tool`, `wait`, `subgraph` and `parallel` nodes have outputs"
                            .to_owned(),
                    };
                    out.push(
                        Diagnostic::new(
                            Code::UndefinedOutput,
                            read.span,
                            format!("`{id}` is a `{}` and has no output", node.kind.name()),
                        )
                        .label("no output to read")
                        .with_label(node.id.span, format!("`{id}` is defined here"))
                        .help(help),
                    );
                }
                None if let Some(full) =
                    dashed_member(site.template, read, |name| facts.model.node(name).is_some()) =>
                {
                    out.push(
                        Diagnostic::new(
                            Code::UndefinedOutput,
                            read.span,
                            format!("`outputs.{full}` must be written `outputs[\"{full}\"]`"),
                        )
                        .label(format!("read as `outputs.{id}` minus more names"))
                        .help(format!(
                            "ids containing `-` need brackets: `outputs[\"{full}\"]`"
                        )),
                    );
                }
                None => {
                    let candidates = workflow
                        .nodes
                        .iter()
                        .filter(|node| has_output(&node.kind))
                        .map(|node| node.id.value.as_str());
                    let near = did_you_mean(id, candidates);
                    let help = match near {
                        Some(near) => format!("did you mean `outputs.{near}`?"),
                        None => {
                            "`outputs.<id>` reads the result of the node with that id".to_owned()
                        }
                    };
                    out.push(
                        Diagnostic::new(
                            Code::UndefinedOutput,
                            read.span,
                            format!("`outputs.{id}` names no node"),
                        )
                        .label(format!("no node `{id}`"))
                        .help(help)
                        .maybe_fix(
                            near.zip(read.head_span())
                                .map(|(near, span)| Fix::rename(span, format!("outputs.{near}"))),
                        ),
                    );
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::check::analyze::testing::{Builder, messages, only, run};
    use crate::diagnostic::Code;
    use crate::ir::ValueType;

    #[test]
    fn reports_unknown_ids_and_nodes_without_output() {
        let mut b = Builder::new();
        b.field("rounds", ValueType::Integer, Some(0.into()));
        b.agent("review", "x");
        b.set("rounds", "1");
        b.agent(
            "fix",
            "{{ outputs.reveiw }} {{ outputs['set-rounds'] }} {{ outputs.review }}",
        );
        let found = only(run(&b.finish()), Code::UndefinedOutput);
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].message, "`outputs.reveiw` names no node");
        assert_eq!(
            found[0].help.as_deref(),
            Some("did you mean `outputs.review`?")
        );
        assert_eq!(
            found[1].message,
            "`set-rounds` is a `set` and has no output"
        );
        assert_eq!(
            found[1].help.as_deref(),
            Some("read the field it writes: `state.rounds`")
        );
        assert_eq!(found[1].labels.len(), 1);
    }

    #[test]
    fn dashed_ids_written_with_dots_get_a_bracket_hint() {
        let mut b = Builder::new();
        b.agent("re-review", "x");
        b.agent(
            "fix",
            "{{ outputs.re-review }} {{ outputs[\"re-review\"] }}",
        );
        let found = run(&b.finish());
        assert_eq!(
            messages(&found, Code::UndefinedOutput),
            ["`outputs.re-review` must be written `outputs[\"re-review\"]`"]
        );
        assert!(messages(&found, Code::UndeclaredVariable).is_empty());
    }
}
