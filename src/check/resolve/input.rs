//! `input "<name>" type=… schema=… default=… required=… description=…`.

use super::default::default_value;
use super::resolver::Resolver;
use super::state::{check_name_unique, declared_type};
use crate::check::structure::Checked;
use crate::diagnostic::{Code, Diagnostic};
use crate::ir::Input;

/// The workflow's inputs.
pub(super) fn resolve_inputs(r: &mut Resolver<'_>, checked: &Checked<'_>) -> Vec<Input> {
    let mut inputs: Vec<Input> = Vec::new();
    for input in checked.children_of("input") {
        let Some(name) = r.string(input.arg(0)) else {
            continue;
        };
        if !check_name_unique(r, &name, "input", inputs.iter().map(|i| &i.name)) {
            continue;
        }
        let ty = declared_type(r, input);
        let mut default = input
            .prop("default")
            .and_then(|entry| match default_value(&ty, entry) {
                Ok(value) => Some(value),
                Err(diagnostic) => {
                    r.report(diagnostic);
                    None
                }
            });
        match (r.boolean(input.prop("required")), input.prop("default")) {
            (Some(true), Some(entry)) => r.report(
                Diagnostic::new(
                    Code::InvalidDefault,
                    entry.value_span,
                    format!("required input `{}` has a default", name.value),
                )
                .label("default of a required input")
                .help("a default makes the input optional: remove `required=#true` or the default"),
            ),
            (Some(false), None) => default = Some(serde_json::Value::Null),
            _ => {}
        }
        inputs.push(Input {
            name,
            ty,
            default,
            description: r.string(input.prop("description")).map(|text| text.value),
            span: input.node.span,
        });
    }
    inputs
}
