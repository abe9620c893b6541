//! `state { field "<name>" type=… schema=… default=… reduce=… merge-by=… max-items=N }`.

use super::default::default_value;
use super::resolver::Resolver;
use crate::check::structure::Checked;
use crate::check::value::is_name;
use crate::diagnostic::{Code, Diagnostic};
use crate::ir::{Reducer, StateField, ValueType};
use crate::source::Spanned;

/// The state fields.
pub(super) fn resolve_state(r: &mut Resolver<'_>, state: &Checked<'_>) -> Vec<StateField> {
    let mut fields: Vec<StateField> = Vec::new();
    // `version=` as written (`state_version` resolves it): a migration judges it even when
    // it is not a valid version, which `state_version` reports.
    let written_version = state.prop("version").map(|entry| match entry.value {
        crate::syntax::kdl::Value::Integer(n) => Some(n),
        _ => None,
    });
    for field in state.children_of("field") {
        let Some(name) = r.string(field.arg(0)) else {
            continue;
        };
        if !check_name_unique(r, &name, "state field", fields.iter().map(|f| &f.name)) {
            continue;
        }
        let ty = declared_type(r, field);
        let default = field
            .prop("default")
            .map(|entry| match default_value(&ty, entry) {
                Ok(value) => value,
                Err(diagnostic) => {
                    r.report(diagnostic);
                    // The value as written stands in: the field has a default, so data
                    // flow does not add "may be unset" to the error (the workflow cannot
                    // run with it anyway).
                    Resolver::json(&entry.value)
                }
            });
        let reducer = reducer(r, field, &ty);
        let max_items = r.integer(field.prop("max-items"));
        if let (Some(max_items), false) = (&max_items, reducer == Reducer::Append) {
            r.report(
                Diagnostic::new(
                    Code::InvalidValue,
                    max_items.span,
                    "`max-items` applies only to `append` fields",
                )
                .label(format!("on a `{}` field", reducer.name()))
                .help("add `reduce=\"append\"`, or remove `max-items`"),
            );
        }
        let migrate = r.template(field.prop("migrate"));
        if let Some(migrate) = &migrate {
            check_migrate(r, migrate, written_version);
        }
        fields.push(StateField {
            name,
            ty,
            default,
            default_span: field.prop("default").map(|entry| entry.value_span),
            reducer,
            max_items: max_items.map(|n| n.value),
            description: r.string(field.prop("description")).map(|text| text.value),
            migrate,
            span: field.node.span,
        });
    }
    fields
}

/// `state version=N`.
pub(super) fn state_version(r: &mut Resolver<'_>, state: &Checked<'_>) -> Option<Spanned<u32>> {
    r.integer(state.prop("version"))
}

/// What a `migrate=` expression may read.
const MIGRATE_READS: [&str; 4] = ["old", "state", "version", "input"];

/// A `migrate=` expression parses, reads only what a migration has, and has a version to
/// migrate to.
fn check_migrate(
    r: &mut Resolver<'_>,
    migrate: &crate::ir::Template,
    version: Option<Option<i128>>,
) {
    let env = minijinja::Environment::new();
    match env.compile_expression(&migrate.source) {
        Err(error) => r.report(
            Diagnostic::new(
                Code::TemplateSyntax,
                migrate.span,
                format!(
                    "`migrate` is not an expression: {}",
                    error.detail().unwrap_or("syntax error")
                ),
            )
            .label("does not parse")
            .help("write a bare expression of `old`, `state` and `version`, such as `[old]`"),
        ),
        Ok(expr) => {
            let mut unknown: Vec<String> = expr
                .undeclared_variables(false)
                .into_iter()
                .filter(|name| !MIGRATE_READS.contains(&name.as_str()))
                .collect();
            unknown.sort();
            if let Some(name) = unknown.first() {
                r.report(
                    Diagnostic::new(
                        Code::UndeclaredVariable,
                        migrate.span,
                        format!("`migrate` reads `{name}`, which a migration does not have"),
                    )
                    .label("not `old`, `state`, `version` or `input`")
                    .help("a migration sees the stored value as `old`, the stored state as `state`, its version as `version`, and the run's `input`"),
                );
            }
        }
    }
    // Runs stored without a version are version 1: a migration to version 1 (or to none)
    // has nothing older to start from.
    let never_runs = match version {
        None => Some("no `version=`: the state is version 1, like every run stored without one"),
        Some(Some(version)) if version <= 1 => {
            Some("version 1 is the version of runs stored without one: none is older")
        }
        // Not an integer: `version=` reports it.
        Some(_) => None,
    };
    if let Some(why) = never_runs {
        r.report(
            Diagnostic::new(
                Code::UnusedMigration,
                migrate.span,
                "this `migrate` can never run",
            )
            .label(why)
            .help("give the state a version above the one stored runs have (`state version=2 { … }`) when the field changes, or remove `migrate=`"),
        );
    }
}

/// `type=` or `schema=` (not both); `any` when neither.
pub(super) fn declared_type(r: &mut Resolver<'_>, checked: &Checked<'_>) -> ValueType {
    let schema = r.string(checked.prop("schema"));
    let ty = r.string(checked.prop("type"));
    if let (Some(schema), Some(ty)) = (&schema, &ty) {
        r.report(
            Diagnostic::new(
                Code::InvalidValue,
                schema.span,
                "both `type` and `schema` are given",
            )
            .label("schema")
            .with_label(ty.span, "type")
            .help("keep one: a schema already says the type"),
        );
    }
    if let Some(schema) = schema {
        return ValueType::Schema(schema);
    }
    ty.and_then(|ty| ValueType::from_name(&ty.value))
        .unwrap_or(ValueType::Any)
}

/// Reports an invalid or repeated name; `true` when the name is usable.
pub(super) fn check_name_unique<'n>(
    r: &mut Resolver<'_>,
    name: &Spanned<String>,
    what: &str,
    mut existing: impl Iterator<Item = &'n Spanned<String>>,
) -> bool {
    if !is_name(&name.value) {
        r.report(
            Diagnostic::new(Code::InvalidId, name.span, format!("`{}` is not a valid {what} name", name.value))
                .label("not a name")
                .help(format!(
                    "templates read it as `{}.<name>`: use letters, digits and `_`, not starting with a digit",
                    if what == "input" { "input" } else { "state" }
                )),
        );
        return false;
    }
    if let Some(first) = existing.find(|first| first.value == name.value) {
        r.report(
            Diagnostic::declared_twice(what, &name.value, name.span, first.span)
                .help("remove one, or rename it"),
        );
        return false;
    }
    true
}

/// `reduce=` and `merge-by=`, checked against the field's type.
fn reducer(r: &mut Resolver<'_>, field: &Checked<'_>, ty: &ValueType) -> Reducer {
    let reduce = r.string(field.prop("reduce"));
    let merge_by = r.string(field.prop("merge-by"));
    let reducer = match (reduce.as_deref().map(String::as_str), merge_by) {
        (None | Some("merge-by"), Some(key)) => Reducer::MergeBy(key.value),
        (Some("merge-by"), None) => {
            if !field.wrote("merge-by") {
                r.report(
                    Diagnostic::new(Code::MissingProperty, field.name_span(), "`reduce=\"merge-by\"` needs `merge-by`")
                        .label("no key field")
                        .help("add `merge-by=\"<key>\"`: the field that identifies an item, e.g. `merge-by=\"id\"`"),
                );
            }
            Reducer::Replace
        }
        (Some(name), merge_by) => {
            if let Some(key) = merge_by {
                r.report(
                    Diagnostic::new(
                        Code::InvalidValue,
                        key.span,
                        format!("`merge-by` does not apply to `reduce=\"{name}\"`"),
                    )
                    .label("key for a different reducer")
                    .help("remove `reduce`, or remove `merge-by`"),
                );
            }
            by_name(name)
        }
        (None, None) => Reducer::Replace,
    };
    if let Some(expected) = mismatch(&reducer, ty) {
        let span = reduce
            .as_ref()
            .map_or(field.name_span(), |reduce| reduce.span);
        r.report(
            Diagnostic::new(
                Code::ReducerTypeMismatch,
                span,
                format!(
                    "the `{}` reducer cannot combine `{}` values",
                    reducer.name(),
                    ty.name()
                ),
            )
            .label(format!("needs {expected}"))
            .help(format!(
                "declare the field as {expected}, or choose another reducer"
            )),
        );
    }
    reducer
}

fn by_name(name: &str) -> Reducer {
    match name {
        "append" => Reducer::Append,
        "merge" => Reducer::Merge,
        "sum" => Reducer::Sum,
        "max" => Reducer::Max,
        "min" => Reducer::Min,
        "and" => Reducer::And,
        "or" => Reducer::Or,
        "if-defined" => Reducer::IfDefined,
        _ => Reducer::Replace,
    }
}

/// What a reducer needs when `ty` does not provide it (`any` and schemas always fit).
fn mismatch(reducer: &Reducer, ty: &ValueType) -> Option<&'static str> {
    let fits = matches!(
        (reducer, ty),
        (_, ValueType::Any | ValueType::Schema(_))
            | (Reducer::Replace | Reducer::IfDefined, _)
            | (Reducer::Append | Reducer::MergeBy(_), ValueType::Array)
            | (Reducer::Merge, ValueType::Object)
            | (
                Reducer::Sum | Reducer::Max | Reducer::Min,
                ValueType::Integer | ValueType::Number
            )
            | (Reducer::And | Reducer::Or, ValueType::Boolean)
    );
    if fits {
        return None;
    }
    Some(match reducer {
        Reducer::Append | Reducer::MergeBy(_) => "`type=\"array\"`",
        Reducer::Merge => "`type=\"object\"`",
        Reducer::Sum | Reducer::Max | Reducer::Min => "`type=\"integer\"` or `type=\"number\"`",
        _ => "`type=\"boolean\"`",
    })
}

#[cfg(test)]
mod tests {
    use crate::check::testing::{codes, resolve_text};
    use crate::diagnostic::Code;
    use crate::ir::{Reducer, ValueType};

    fn flow(fields: &str) -> String {
        format!("workflow \"w\" {{\nstate {{ {fields} }}\nset \"x\" \"1\" id=\"s\"\n}}")
    }

    #[test]
    fn reducers() {
        let (outcome, _) = resolve_text(&flow(
            "field \"x\"; field \"t\" type=\"array\" merge-by=\"id\"; field \"c\" type=\"number\" reduce=\"max\"",
        ));
        assert_eq!(outcome.diagnostics, vec![]);
        let state = outcome.value.unwrap().state;
        assert_eq!(state[1].reducer, Reducer::MergeBy("id".to_owned()));
        assert_eq!(state[2].reducer, Reducer::Max);
        assert_eq!(state[0].ty, ValueType::Any);
        assert_eq!(
            codes(&flow("field \"x\"; field \"t\" reduce=\"merge-by\"")),
            [Code::MissingProperty]
        );
        assert_eq!(
            codes(&flow(
                "field \"x\"; field \"t\" reduce=\"append\" merge-by=\"id\""
            )),
            [Code::InvalidValue]
        );
        assert_eq!(
            codes(&flow("field \"x\"; field \"t\" max-items=3")),
            [Code::InvalidValue]
        );
        assert_eq!(
            codes(&flow(
                "field \"x\"; field \"t\" type=\"object\" reduce=\"append\""
            )),
            [Code::ReducerTypeMismatch]
        );
        assert_eq!(
            codes(&flow(
                "field \"x\"; field \"t\" type=\"integer\" reduce=\"or\""
            )),
            [Code::ReducerTypeMismatch]
        );
        assert_eq!(
            codes(&flow(
                "field \"x\"; field \"t\" schema=\"s.json\" reduce=\"sum\""
            )),
            []
        );
    }

    #[test]
    fn names_types_and_defaults() {
        assert_eq!(
            codes(&flow("field \"x\"; field \"x\"")),
            [Code::DuplicateId]
        );
        assert_eq!(
            codes(&flow("field \"x\"; field \"my-field\"")),
            [Code::InvalidId]
        );
        assert_eq!(
            codes(&flow("field \"x\" type=\"array\" schema=\"s.json\"")),
            [Code::InvalidValue]
        );
        assert_eq!(
            codes(&flow("field \"x\" type=\"integer\" default=\"0\"")),
            [Code::InvalidDefault]
        );
        assert_eq!(
            codes(&flow("field \"x\" type=\"object\" default=\"[]\"")),
            [Code::InvalidDefault]
        );
    }
}
