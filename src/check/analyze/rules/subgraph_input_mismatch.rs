//! `subgraph-input-mismatch`: a subgraph's `input` mappings do not fit the called workflow.
//!
//! ## What it does
//! With the called workflow loaded, reports an `input "<name>"` the callee does not
//! declare, a callee input without default that is not mapped, and a value that cannot
//! have the input's declared type: a literal (`"abc"` for an `integer`) or a lone
//! `{{ input.x }}` / `{{ state.x }}` whose declared type differs (`integer` into
//! `number` is fine; `any` and schema types are not compared).
//!
//! ## Why is this bad?
//! The called workflow refuses its inputs when the subgraph starts, after everything
//! before it has run.
//!
//! ## Example
//! ```kdl
//! subgraph "checks" workflow="./checks.kdl" { input "taget" "src/"; input "rounds" "many"; }
//! ```
//!
//! ## Use instead
//! ```kdl
//! subgraph "checks" workflow="./checks.kdl" { input "target" "src/"; input "rounds" "3"; }
//! ```

use crate::diagnostic::{Code, Diagnostic, did_you_mean, expected_one_of};
use crate::ir::{NodeKind, Template, ValueType, Workflow};

use super::super::driver::Facts;
use super::super::reads::template_reads;

/// Reports input mappings that do not fit the callee.
pub(crate) fn check(facts: &Facts<'_>, out: &mut Vec<Diagnostic>) {
    let workflow = facts.workflow;
    let mut calls: Vec<_> = facts.callees.by_node.iter().collect();
    calls.sort_by_key(|(node, _)| **node);
    for (&idx, callee) in calls {
        let node = workflow.node(idx);
        let NodeKind::Subgraph(subgraph) = &node.kind else {
            continue;
        };
        let callee_name = &subgraph.workflow.value;
        for (name, value) in &subgraph.inputs {
            let Some(input) = callee.input(&name.value) else {
                let names = callee.inputs.iter().map(|input| input.name.value.as_str());
                let near = did_you_mean(&name.value, names);
                let help = match near {
                    Some(near) => format!("did you mean `{near}`?"),
                    None if callee.inputs.is_empty() => format!("`{callee_name}` takes no inputs"),
                    None => {
                        let all: Vec<&str> = callee
                            .inputs
                            .iter()
                            .map(|input| input.name.value.as_str())
                            .collect();
                        format!("`{callee_name}` takes {}", expected_one_of(&all))
                    }
                };
                out.push(
                    Diagnostic::new(
                        Code::SubgraphInputMismatch,
                        name.span,
                        format!("`{callee_name}` has no input `{}`", name.value),
                    )
                    .label("not an input of the called workflow")
                    .help(help)
                    .maybe_replace_with(near.map(str::to_owned)),
                );
                continue;
            };
            // Any literal text is a valid string.
            let literal_string = value.is_literal() && input.ty == ValueType::String;
            if let Some(found) = value_type(workflow, value)
                && !literal_string
                && !fits(&found, &input.ty)
            {
                out.push(
                    Diagnostic::new(
                        Code::SubgraphInputMismatch,
                        value.span,
                        format!(
                            "input `{}` of `{callee_name}` is `{}`, but this value is `{found}`",
                            name.value,
                            input.ty.name()
                        ),
                    )
                    .label(format!("a `{found}`"))
                    .with_label(
                        input.name.span,
                        format!("declared `{}` here", input.ty.name()),
                    )
                    .help(format!("pass {}", input.ty.article())),
                );
            }
        }
        for input in callee.inputs.iter().filter(|input| input.default.is_none()) {
            if subgraph
                .inputs
                .iter()
                .any(|(name, _)| name.value == input.name.value)
            {
                continue;
            }
            out.push(
                Diagnostic::new(
                    Code::SubgraphInputMismatch,
                    subgraph.workflow.span,
                    format!(
                        "subgraph `{}` does not give the required input `{}` of `{callee_name}`",
                        node.id.value, input.name.value
                    ),
                )
                .label("called without it")
                .help(format!(
                    "add `input \"{}\" \"…\"` to the subgraph",
                    input.name.value
                )),
            );
        }
    }
}

/// The type a mapped value certainly has: a literal's (as the resolver would coerce it),
/// or the declared type of a lone `{{ input.x }}`/`{{ state.x }}`. `None` when unknown.
fn value_type(workflow: &Workflow, value: &Template) -> Option<String> {
    if value.is_literal() {
        return Some(literal_type(&value.source).to_owned());
    }
    let inner = value
        .source
        .trim()
        .strip_prefix("{{")?
        .strip_suffix("}}")?
        .trim();
    if inner.contains(['{', '}', '|', ' ']) {
        return None;
    }
    let reads = template_reads(value).ok()?;
    let [read] = reads.as_slice() else {
        return None;
    };
    if read.path != inner {
        return None;
    }
    let ty = match (read.root(), read.member()) {
        ("input", Some(name)) => &workflow.input(name)?.ty,
        ("state", Some(name)) => &workflow.field(name)?.ty,
        _ => return None,
    };
    match ty {
        ValueType::Any | ValueType::Schema(_) => None,
        ty => Some(ty.name().to_owned()),
    }
}

/// The narrowest type of a literal: `3` is an integer, `true` a boolean, `[…]` an array,
/// `{…}` an object, anything else a string.
fn literal_type(text: &str) -> &'static str {
    match serde_json::from_str::<serde_json::Value>(text.trim()) {
        Ok(serde_json::Value::Number(number)) if number.is_i64() || number.is_u64() => "integer",
        Ok(serde_json::Value::Number(_)) => "number",
        Ok(serde_json::Value::Bool(_)) => "boolean",
        Ok(serde_json::Value::Array(_)) => "array",
        Ok(serde_json::Value::Object(_)) => "object",
        _ => "string",
    }
}

/// Whether a value of type `found` may go where `expected` is declared.
fn fits(found: &str, expected: &ValueType) -> bool {
    match expected {
        ValueType::Any | ValueType::Schema(_) => true,
        ValueType::Number => matches!(found, "number" | "integer"),
        expected => found == expected.name(),
    }
}

#[cfg(test)]
mod tests {
    use crate::check::analyze::testing::{Builder, messages, run_with_callees};
    use crate::diagnostic::Code;
    use crate::ir::{ValueType, Workflow};

    fn callee() -> Workflow {
        let mut b = Builder::new();
        b.input("target", ValueType::String, None);
        b.input("rounds", ValueType::Integer, Some(3.into()));
        b.input("ratio", ValueType::Number, Some(1.into()));
        b.finish()
    }

    #[test]
    fn reports_unknown_missing_and_mistyped_inputs() {
        let mut b = Builder::new();
        b.input("count", ValueType::Boolean, None);
        let call = b.subgraph("checks", "./checks.kdl");
        let names = [
            ("taget", "src/"),
            ("rounds", "many"),
            ("ratio", "{{ input.count }}"),
        ];
        for (name, value) in names {
            let name = b.name(name);
            let value = b.tpl(value);
            b.subgraph_mut(call).inputs.push((name, value));
        }
        let found = run_with_callees(&b.finish(), &[("checks.kdl", callee())]);
        assert_eq!(
            messages(&found, Code::SubgraphInputMismatch),
            [
                "subgraph `checks` does not give the required input `target` of `./checks.kdl`",
                "`./checks.kdl` has no input `taget`",
                "input `rounds` of `./checks.kdl` is `integer`, but this value is `string`",
                "input `ratio` of `./checks.kdl` is `number`, but this value is `boolean`",
            ]
        );
    }

    #[test]
    fn fitting_inputs_pass() {
        let mut b = Builder::new();
        b.input("n", ValueType::Integer, None);
        let call = b.subgraph("checks", "./checks.kdl");
        for (name, value) in [
            ("target", "{{ input.n }} files"),
            ("rounds", "4"),
            ("ratio", "{{ input.n }}"),
        ] {
            let name = b.name(name);
            let value = b.tpl(value);
            b.subgraph_mut(call).inputs.push((name, value));
        }
        let found = run_with_callees(&b.finish(), &[("checks.kdl", callee())]);
        assert!(
            messages(&found, Code::SubgraphInputMismatch).is_empty(),
            "{found:#?}"
        );
    }
}
