//! `type-mismatch`: a value whose type is known cannot go where it is written or iterated.
//!
//! ## What it does
//! Reports, wherever the checker knows a value's type: a `set` of a constant that does not
//! convert to the field's type (`set "count" "lots"`), a `set` copying an input or field of
//! another type (`expr="input.name"` into an integer), an `output` whose source or `parse=`
//! gives a type the field cannot take (a tool's `exit-code` into a boolean, `parse="lines"`
//! into a string), and a `for-each` over an input or field that is neither a list nor an
//! object (whose entries it goes over). Values are
//! judged by the conversion the runtime applies ([`crate::ir::value`]); only what can never
//! convert is reported (a string may hold a number or JSON).
//!
//! ## Why is this bad?
//! The write fails when the step runs, after the steps before it have run (and been paid
//! for).
//!
//! ## Example
//! ```kdl
//! state { field "count" type="integer" default=0; }
//! set "count" "lots"
//! ```
//!
//! ## Use instead
//! ```kdl
//! state { field "count" type="integer" default=0; }
//! set "count" expr="state.count + 1"
//! ```

use crate::diagnostic::{Code, Diagnostic};
use crate::ir::{
    Expr, NodeKind, OutputMap, OutputSource, ParseMode, StateField, Tool, ValueType, Workflow,
    value,
};

use super::super::driver::Facts;
use super::super::infer::{Inferred, infer_expression};
use super::super::model::replaces;

/// Reports writes and iterations of the wrong type.
pub(crate) fn check(facts: &Facts<'_>, out: &mut Vec<Diagnostic>) {
    let workflow = facts.workflow;
    for node in &workflow.nodes {
        let id = &node.id.value;
        match &node.kind {
            NodeKind::Set(set) => {
                let Some(field) = replaced_field(workflow, &set.field.value) else {
                    continue;
                };
                // A value that is missing or not a string (already reported) stands in
                // as an empty template at the node's name, before the field.
                let placeholder =
                    set.value.source.is_empty() && set.value.span.start < set.field.span.start;
                if placeholder {
                    continue;
                }
                if !set.is_expr && set.value.is_literal() {
                    let text = &set.value.source;
                    if let Err(reason) =
                        value::coerce(&field.ty, serde_json::Value::String(text.clone()))
                    {
                        out.push(
                            Diagnostic::new(
                                Code::TypeMismatch,
                                set.value.span,
                                format!(
                                    "`{id}` writes `{text}` to `{}`, a field of type `{}`",
                                    field.name.value,
                                    field.ty.name()
                                ),
                            )
                            .label(reason)
                            .help(format!(
                                "write {} (or an expression: `expr=\"…\"`), or change the field's type",
                                field.ty.article()
                            )),
                        );
                    }
                } else if set.is_expr {
                    let inferred = infer_expression(workflow, &set.value.source);
                    let Some(reason) = inferred.never_converts(&field.ty) else {
                        continue;
                    };
                    let message = match path_type(workflow, &set.value) {
                        Some((path, from)) => format!(
                            "`{id}` copies `{path}` ({}) into `{}`, a field of type `{}`",
                            from.article(),
                            field.name.value,
                            field.ty.name()
                        ),
                        None => format!(
                            "`{id}` writes {} to `{}`, a field of type `{}`",
                            inferred.describe(),
                            field.name.value,
                            field.ty.name()
                        ),
                    };
                    out.push(
                        Diagnostic::new(Code::TypeMismatch, set.value.span, message)
                            .label(reason)
                            .help(format!(
                                "make the expression give {}{}, or change the field's type",
                                field.ty.article(),
                                conversion(&field.ty)
                            )),
                    );
                }
            }
            NodeKind::Agent(_) | NodeKind::Tool(_) => {
                for output in node.kind.outputs() {
                    check_output(workflow, id, output, out);
                }
                if let NodeKind::Tool(tool) = &node.kind {
                    check_tool_arguments(facts, id, tool, out);
                }
            }
            NodeKind::Parallel(parallel) => {
                // A task-loop's items are read from its file, not evaluated.
                let (Some(each), None) = (&parallel.for_each, &parallel.tasks) else {
                    continue;
                };
                let Some(ty) = infer_expression(workflow, &each.items.source).ty() else {
                    continue;
                };
                // The runtime goes over a list, or an object's entries; nothing else.
                if !matches!(
                    ty,
                    ValueType::Array | ValueType::Object | ValueType::Any | ValueType::Schema(_)
                ) {
                    out.push(
                        Diagnostic::new(
                            Code::TypeMismatch,
                            each.items.span,
                            format!(
                                "`for-each` of `{id}` goes over `{}`, {}, not a list",
                                each.items.source.trim(),
                                ty.article()
                            ),
                        )
                        .label(format!("{}, never a list", ty.article()))
                        .help("go over an array (or an object's entries): declare it `type=\"array\"`, or build one in the expression, like `range(input.count)`"),
                    );
                }
            }
            _ => {}
        }
    }
}

/// An `output` whose source or parse mode gives a type its field never takes.
fn check_output(workflow: &Workflow, id: &str, output: &OutputMap, out: &mut Vec<Diagnostic>) {
    let Some(field) = replaced_field(workflow, &output.field.value) else {
        return;
    };
    let (from, what) = match (output.from, output.parse) {
        (OutputSource::ExitCode, _) => (ValueType::Integer, "the exit code"),
        (_, ParseMode::Text) => return,
        (_, ParseMode::YesNo) => (ValueType::Boolean, "`parse=\"yes-no\"`"),
        (_, ParseMode::Number) => (ValueType::Number, "`parse=\"number\"`"),
        (_, ParseMode::Lines) => (ValueType::Array, "`parse=\"lines\"`"),
        (_, ParseMode::Json) => return,
    };
    if !value::never_fits(&from, &field.ty) {
        return;
    }
    out.push(
        Diagnostic::new(
            Code::TypeMismatch,
            output.field.span,
            format!(
                "`{id}` writes {what} ({}) to `{}`, a field of type `{}`",
                from.article(),
                field.name.value,
                field.ty.name()
            ),
        )
        .label(format!("{}, never {}", from.article(), field.ty.article()))
        .help(format!(
            "write it to a field that takes {}, or change `{}`'s type",
            from.article(),
            field.name.value
        )),
    );
}

/// A custom tool's `arg` that can never be the type its schema gives the argument: the
/// runtime parses a non-string argument's text as JSON, and hands over the text when it
/// does not parse, so the tool would get `"four"` for an integer.
fn check_tool_arguments(facts: &Facts<'_>, id: &str, tool: &Tool, out: &mut Vec<Diagnostic>) {
    let Some(custom) = tool.use_.as_ref().and_then(|name| {
        facts
            .tools
            .iter()
            .find(|custom| custom.name.value == name.value)
    }) else {
        return;
    };
    for (name, template) in &tool.args {
        let Some(ty) = custom.schema["properties"][&name.value]["type"]
            .as_str()
            .and_then(ValueType::from_name)
        else {
            continue;
        };
        let inferred = if template.is_literal() {
            Inferred::Const(serde_json::Value::String(template.source.clone()))
        } else if let Some(expression) = whole_expression(&template.source) {
            infer_expression(facts.workflow, expression)
        } else {
            continue;
        };
        let Some(reason) = inferred.never_converts(&ty) else {
            continue;
        };
        out.push(
            Diagnostic::new(
                Code::TypeMismatch,
                template.span,
                format!(
                    "`{id}` gives {} as `{}`, an argument of type `{}` of custom tool `{}`",
                    inferred.describe(),
                    name.value,
                    ty.name(),
                    custom.name.value
                ),
            )
            .label(reason)
            .help(format!("give {}", ty.article())),
        );
    }
}

/// How an expression converts to `ty`, for help texts.
fn conversion(ty: &ValueType) -> &'static str {
    match ty {
        ValueType::Integer => " (`| int` converts)",
        ValueType::Number => " (`| float` converts)",
        ValueType::String => " (`| string` converts)",
        ValueType::Boolean => " (a comparison such as `x > 0` gives one)",
        ValueType::Array => " (`[x]` wraps a value, `| list` converts)",
        ValueType::Object => " (`{'key': x}` builds one)",
        ValueType::Any | ValueType::Schema(_) => "",
    }
}

/// The expression of a template that is exactly one `{{ … }}`.
fn whole_expression(source: &str) -> Option<&str> {
    let inner = source.trim().strip_prefix("{{")?.strip_suffix("}}")?;
    (!inner.contains("{{") && !inner.contains("}}")).then(|| inner.trim_matches('-').trim())
}

/// The declared field `name` when a write replaces its value (reducers that collect or
/// combine have their own checks).
fn replaced_field<'w>(workflow: &'w Workflow, name: &str) -> Option<&'w StateField> {
    workflow
        .field(name)
        .filter(|field| replaces(&field.reducer))
}

/// The declared type of an expression that is one input or state field (`input.name`,
/// `state.count`), with the path as written.
fn path_type<'w>(workflow: &'w Workflow, expr: &Expr) -> Option<(String, &'w ValueType)> {
    let path = expr.source.trim();
    let (root, member) = path.split_once('.')?;
    if member.is_empty()
        || !member
            .chars()
            .all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
    {
        return None;
    }
    let ty = match root {
        "input" => &workflow.input(member)?.ty,
        "state" => &workflow.field(member)?.ty,
        _ => return None,
    };
    Some((path.to_owned(), ty))
}

#[cfg(test)]
mod tests {
    use crate::check::analyze::testing::{Builder, messages, run};
    use crate::diagnostic::Code;
    use crate::ir::ValueType;

    #[test]
    fn constants_and_copies_that_never_convert_are_reported() {
        let mut b = Builder::new();
        b.field("count", ValueType::Integer, Some(serde_json::json!(0)));
        b.field("flag", ValueType::Boolean, Some(serde_json::json!(false)));
        b.set("count", "lots");
        b.set("count", "12");
        b.set_expr("flag", "state.count");
        b.set_expr("count", "state.count + 1");
        assert_eq!(
            messages(&run(&b.finish()), Code::TypeMismatch),
            [
                "`set-count` writes `lots` to `count`, a field of type `integer`",
                "`set-flag` copies `state.count` (an integer) into `flag`, a field of type `boolean`",
            ]
        );
    }
}
