//! A run's inputs from the command line: `--input-file f.json` (a JSON object), then each
//! `--input name=value` over it, each value converted to the input's declared type.

use std::path::Path;

use serde_json::{Map, Value};

use crate::diagnostic::{did_you_mean, expected_one_of};
use crate::ir::{ValueType, Workflow};
use crate::runtime::state::coerce;

/// The inputs given, typed, checked against the workflow's declarations (required
/// inputs with no default are left to the runtime, which names the missing one).
///
/// # Errors
/// A message naming the input (or the file) and what is wrong with it.
pub(crate) fn gather(
    workflow: &Workflow,
    pairs: &[String],
    file: Option<&Path>,
) -> Result<Map<String, Value>, String> {
    let mut given = match file {
        Some(path) => read_file(path)?,
        None => Map::new(),
    };
    for pair in pairs {
        let (name, value) = split(pair)?;
        given.insert(name, value);
    }
    let mut typed = Map::new();
    for (name, value) in given {
        let value = typed_value(workflow, &name, value)?;
        typed.insert(name, value);
    }
    check_required(workflow, &typed)?;
    Ok(typed)
}

/// `base` (a run's inputs) with each `--input name=value` of `pairs` over it, typed and
/// checked like [`gather`]'s: a fork's own inputs.
///
/// # Errors
/// A message naming the input and what is wrong with it.
pub(crate) fn gather_over(
    workflow: &Workflow,
    base: Map<String, Value>,
    pairs: &[String],
) -> Result<Map<String, Value>, String> {
    let mut typed = base;
    for pair in pairs {
        let (name, value) = split(pair)?;
        let value = typed_value(workflow, &name, value)?;
        typed.insert(name, value);
    }
    check_required(workflow, &typed)?;
    Ok(typed)
}

/// `name=value` split, the name trimmed.
fn split(pair: &str) -> Result<(String, Value), String> {
    let Some((name, value)) = pair.split_once('=') else {
        return Err(format!(
            "`--input {pair}` is not `name=value`; write `--input {pair}=…`"
        ));
    };
    Ok((name.trim().to_owned(), Value::String(value.to_owned())))
}

/// `value` as input `name` of `workflow` takes it.
fn typed_value(workflow: &Workflow, name: &str, value: Value) -> Result<Value, String> {
    let Some(input) = workflow.input(name) else {
        return Err(unknown(workflow, name));
    };
    Ok(match (&input.ty, value) {
        // `any` inputs given on the command line are JSON when they parse as JSON.
        (ValueType::Any, Value::String(text)) => {
            serde_json::from_str(&text).unwrap_or(Value::String(text))
        }
        (ty, value) => coerce(ty, value)
            .map_err(|message| format!("input `{name}` is declared `{}`: {message}", ty.name()))?,
    })
}

/// Every required input (one without a default) is in `typed`.
fn check_required(workflow: &Workflow, typed: &Map<String, Value>) -> Result<(), String> {
    if let Some(missing) = workflow
        .inputs
        .iter()
        .find(|input| input.default.is_none() && !typed.contains_key(&input.name.value))
    {
        let name = &missing.name.value;
        return Err(format!(
            "input `{name}` is required: pass `--input {name}=…`{}",
            missing
                .description
                .as_ref()
                .map(|text| format!(" ({text})"))
                .unwrap_or_default()
        ));
    }
    Ok(())
}

fn read_file(path: &Path) -> Result<Map<String, Value>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|error| format!("cannot read `{}`: {error}", path.display()))?;
    match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(format!(
            "`{}` must hold a JSON object of inputs",
            path.display()
        )),
        Err(error) => Err(format!("`{}` is not valid JSON: {error}", path.display())),
    }
}

fn unknown(workflow: &Workflow, name: &str) -> String {
    let names: Vec<&str> = workflow
        .inputs
        .iter()
        .map(|input| input.name.value.as_str())
        .collect();
    if names.is_empty() {
        return format!(
            "the workflow `{}` takes no inputs, but `{name}` was given",
            workflow.name.value
        );
    }
    let hint = did_you_mean(name, names.iter().copied())
        .map(|close| format!(" (did you mean `{close}`?)"))
        .unwrap_or_default();
    format!(
        "the workflow `{}` has no input `{name}`{hint}: expected {}",
        workflow.name.value,
        expected_one_of(&names)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::Input;
    use crate::source::{Span, Spanned};

    fn workflow() -> Workflow {
        let input = |name: &str, ty: ValueType| Input {
            name: Spanned::new(name.to_owned(), Span::default()),
            ty,
            default: None,
            default_span: None,
            description: None,
            span: Span::default(),
        };
        let text = r#"workflow "w" { input "count" type="integer"; input "tags" type="array"; input "x"; set "y" "1" }"#;
        let mut sources = crate::source::Sources::new();
        let file = sources.add("w.kdl", text);
        let parsed = crate::syntax::kdl::parse(text, file);
        let mut workflow = crate::check::resolve(&sources, file, parsed.document)
            .value
            .expect("a workflow");
        workflow.inputs = vec![
            input("count", ValueType::Integer),
            input("tags", ValueType::Array),
            input("x", ValueType::Any),
        ];
        workflow
    }

    #[test]
    fn values_take_their_declared_types() {
        let pairs = [
            "count=3".to_owned(),
            "tags=[\"a\"]".to_owned(),
            "x={\"k\":1}".to_owned(),
        ];
        let inputs = gather(&workflow(), &pairs, None).unwrap();
        let error = gather(&workflow(), &pairs[..1], None).unwrap_err();
        assert_eq!(error, "input `tags` is required: pass `--input tags=…`");
        assert_eq!(inputs["count"], serde_json::json!(3));
        assert_eq!(inputs["tags"], serde_json::json!(["a"]));
        assert_eq!(inputs["x"], serde_json::json!({"k": 1}));
    }

    #[test]
    fn errors_name_the_input() {
        let error = gather(&workflow(), &["count=many".to_owned()], None).unwrap_err();
        assert!(
            error.starts_with("input `count` is declared `integer`"),
            "{error}"
        );
        let error = gather(&workflow(), &["cuont=1".to_owned()], None).unwrap_err();
        assert!(
            error.contains("no input `cuont` (did you mean `count`?)"),
            "{error}"
        );
        let error = gather(&workflow(), &["count".to_owned()], None).unwrap_err();
        assert!(error.contains("not `name=value`"), "{error}");
    }
}
