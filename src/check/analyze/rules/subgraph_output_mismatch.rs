//! `subgraph-output-mismatch`: a subgraph `output` mapping reads a field the called
//! workflow does not have, or one whose type differs from the caller's field.
//!
//! ## What it does
//! `output "<caller field>" from="<callee field>"` copies a state field of the called
//! workflow when it ends. With the callee loaded, this rule reports a `from=` field it
//! does not declare, and declared types that cannot match (`integer` into `number` is fine;
//! `any` and schema types are not compared). The caller's field is checked by the resolver
//! (`undefined-state-field`).
//!
//! ## Why is this bad?
//! The mapping copies nothing, or a value of the wrong type, after the whole subgraph ran.
//!
//! ## Example
//! ```kdl
//! subgraph "checks" workflow="./checks.kdl" { output "summary" from="reprot"; }
//! ```
//!
//! ## Use instead
//! ```kdl
//! subgraph "checks" workflow="./checks.kdl" { output "summary" from="report"; }
//! ```

use crate::diagnostic::{Code, Diagnostic, did_you_mean};
use crate::ir::{NodeKind, ValueType};

use super::super::driver::Facts;

/// Reports output mappings that do not fit the callee.
pub(crate) fn check(facts: &Facts<'_>, out: &mut Vec<Diagnostic>) {
    let workflow = facts.workflow;
    let mut calls: Vec<_> = facts.callees.by_node.iter().collect();
    calls.sort_by_key(|(node, _)| **node);
    for (&idx, callee) in calls {
        let NodeKind::Subgraph(subgraph) = &workflow.node(idx).kind else {
            continue;
        };
        let callee_name = &subgraph.workflow.value;
        for (caller_field, from) in &subgraph.outputs {
            let Some(source) = callee.field(&from.value) else {
                let names = callee.state.iter().map(|field| field.name.value.as_str());
                let near = did_you_mean(&from.value, names);
                let help = match near {
                    Some(near) => format!("did you mean `{near}`?"),
                    None => format!("`from=` names a state field of `{callee_name}`"),
                };
                out.push(
                    Diagnostic::new(
                        Code::SubgraphOutputMismatch,
                        from.span,
                        format!("`{callee_name}` has no state field `{}`", from.value),
                    )
                    .label("not a field of the called workflow")
                    .help(help)
                    .maybe_replace_with(near.map(str::to_owned)),
                );
                continue;
            };
            let Some(target) = workflow.field(&caller_field.value) else {
                continue;
            };
            if !compatible(&source.ty, &target.ty) {
                out.push(
                    Diagnostic::new(
                        Code::SubgraphOutputMismatch,
                        from.span,
                        format!(
                            "`{}` of `{callee_name}` is `{}`, but `{}` is `{}`",
                            from.value,
                            source.ty.name(),
                            caller_field.value,
                            target.ty.name()
                        ),
                    )
                    .label(format!("a `{}`", source.ty.name()))
                    .with_label(
                        target.name.span,
                        format!("declared `{}` here", target.ty.name()),
                    )
                    .help("map it into a field of the same type"),
                );
            }
        }
    }
}

/// Whether a value declared `from` may be stored in a field declared `into`.
fn compatible(from: &ValueType, into: &ValueType) -> bool {
    match (from, into) {
        (ValueType::Any | ValueType::Schema(_), _) | (_, ValueType::Any | ValueType::Schema(_)) => {
            true
        }
        (ValueType::Integer, ValueType::Number) => true,
        (from, into) => from == into,
    }
}

#[cfg(test)]
mod tests {
    use crate::check::analyze::testing::{Builder, messages, run_with_callees};
    use crate::diagnostic::Code;
    use crate::ir::ValueType;

    #[test]
    fn reports_unknown_and_mistyped_fields() {
        let mut callee = Builder::new();
        callee.field("report", ValueType::String, None);
        callee.field("count", ValueType::Integer, None);
        let mut b = Builder::new();
        b.field("summary", ValueType::String, None);
        b.field("total", ValueType::Number, None);
        b.field("flag", ValueType::Boolean, None);
        let call = b.subgraph("checks", "./checks.kdl");
        for (into, from) in [
            ("summary", "reprot"),
            ("total", "count"),
            ("flag", "report"),
        ] {
            let into = b.name(into);
            let from = b.name(from);
            b.subgraph_mut(call).outputs.push((into, from));
        }
        let found = run_with_callees(&b.finish(), &[("checks.kdl", callee.finish())]);
        assert_eq!(
            messages(&found, Code::SubgraphOutputMismatch),
            [
                "`./checks.kdl` has no state field `reprot`",
                "`report` of `./checks.kdl` is `string`, but `flag` is `boolean`",
            ]
        );
    }
}
