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
            default_span: input.prop("default").map(|entry| entry.value_span),
            description: r.string(input.prop("description")).map(|text| text.value),
            span: input.node.span,
        });
    }
    inputs
}

#[cfg(test)]
mod tests {
    use crate::check::testing::{codes, resolve_text};
    use crate::diagnostic::Code;

    fn flow(inputs: &str) -> String {
        format!("workflow \"w\" {{\n{inputs}\nstate {{ field \"x\"; }}\nset \"x\" \"1\"\n}}")
    }

    #[test]
    fn required_and_defaults() {
        let (outcome, _) = resolve_text(&flow(
            "input \"a\" type=\"integer\" default=3\ninput \"b\" required=#false\ninput \"c\"",
        ));
        assert_eq!(outcome.diagnostics, vec![]);
        let inputs = outcome.value.unwrap().inputs;
        assert_eq!(inputs[0].default, Some(serde_json::json!(3)));
        assert_eq!(inputs[1].default, Some(serde_json::Value::Null));
        assert_eq!(inputs[2].default, None);
        assert_eq!(
            codes(&flow("input \"a\" required=#true default=1")),
            [Code::InvalidDefault]
        );
        assert_eq!(
            codes(&flow("input \"a\" type=\"boolean\" default=1")),
            [Code::InvalidDefault]
        );
        assert_eq!(
            codes(&flow("input \"a\"\ninput \"a\"")),
            [Code::DuplicateId]
        );
        assert_eq!(codes(&flow("input \"a b\"")), [Code::InvalidId]);
        assert_eq!(
            codes(&flow("env \"A\"\nenv \"A\"\nenv \"B-C\"")),
            [Code::DuplicateId, Code::InvalidId]
        );
    }
}
