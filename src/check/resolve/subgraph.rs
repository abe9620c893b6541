//! `subgraph "<id>" workflow="<path or name>" { input "<name>" "<template>"; output "<field>" from="<field>" }`.
//! The called file is found and checked by `analyze` (it needs file access); `path` stays
//! unset here.

use super::resolver::Resolver;
use crate::check::structure::Checked;
use crate::diagnostic::{Code, Diagnostic};
use crate::ir::{Subgraph, Template};
use crate::source::Spanned;

/// The call and its mappings.
pub(super) fn resolve_subgraph(r: &mut Resolver<'_>, checked: &Checked<'_>) -> Subgraph {
    let workflow = r
        .string(checked.prop("workflow"))
        .unwrap_or_else(|| Spanned::new(String::new(), checked.name_span()));
    let mut inputs: Vec<(Spanned<String>, Template)> = Vec::new();
    for input in checked.children_of("subgraph/input") {
        let (Some(name), Some(value)) = (r.string(input.arg(0)), r.template(input.arg(1))) else {
            continue;
        };
        if let Some((first, _)) = inputs.iter().find(|(first, _)| first.value == name.value) {
            r.report(
                Diagnostic::new(
                    Code::DuplicateId,
                    name.span,
                    format!("input `{}` is passed twice", name.value),
                )
                .label("passed again here")
                .with_label(first.span, "first passed here")
                .help("remove one of them"),
            );
            continue;
        }
        inputs.push((name, value));
    }
    let outputs = checked
        .children_of("subgraph/output")
        .filter_map(|output| {
            let field = r.string(output.arg(0))?;
            let from = r
                .string(output.prop("from"))
                .unwrap_or_else(|| field.clone());
            Some((field, from))
        })
        .collect();
    Subgraph {
        workflow,
        path: None,
        inputs,
        outputs,
    }
}
