//! `set "<field>" "<template>"` or `set "<field>" expr="<expression>"` (also a fallback
//! write inside `on-error "skip"`).

use super::resolver::Resolver;
use crate::check::structure::Checked;
use crate::diagnostic::{Code, Diagnostic};
use crate::ir::{Set, Template};
use crate::source::Spanned;

/// The write. A missing field leaves it empty (already reported).
pub(super) fn resolve_set(r: &mut Resolver<'_>, checked: &Checked<'_>) -> Set {
    let field = r
        .string(checked.arg(0))
        .unwrap_or_else(|| Spanned::new(String::new(), checked.name_span()));
    let argument = r.template(checked.arg(1));
    let expr = r.template(checked.prop("expr"));
    let (value, is_expr) = match (argument, expr) {
        (Some(value), None) => (value, false),
        (None, Some(expr)) => (expr, true),
        (Some(value), Some(expr)) => {
            r.report(
                Diagnostic::new(
                    Code::UnexpectedArgument,
                    value.span,
                    "`set` has both a value and `expr`",
                )
                .label("value given here")
                .with_label(expr.span, "and as an expression here")
                .help("keep either the template argument or `expr=`"),
            );
            (expr, true)
        }
        (None, None) => {
            if !checked.has_arg(1) && !checked.wrote("expr") {
                r.report(
                    Diagnostic::new(Code::MissingProperty, checked.name_span(), format!("`set` of `{}` has no value", field.value))
                        .label("no value")
                        .help("add a template (`set \"rounds\" \"{{ state.rounds + 1 }}\"`) or an expression (`expr=\"state.rounds + 1\"`)"),
                );
            }
            (empty(checked), false)
        }
    };
    Set {
        field,
        value,
        is_expr,
    }
}

/// An empty template at the node's name, standing in for a missing value.
pub(super) fn empty(checked: &Checked<'_>) -> Template {
    Template {
        source: String::new(),
        span: checked.name_span(),
        exact: false,
        offset: 0,
        shifts: None,
    }
}
