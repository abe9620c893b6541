//! A custom tool's arguments and the JSON Schema the model sees: built from `argument`
//! children, or read from a `schema="file.json"` next to the tool file.
//!
//! ```kdl
//! argument "filter" type="string" description="Only tests whose name contains this" required=#false
//! ```

use std::path::Path;

use serde_json::{Map, Value, json};

use super::tool_file::string;
use crate::check::Checked;
use crate::diagnostic::{Code, Diagnostic};
use crate::ir::ToolArgument;
use crate::source::{Files, ReadError, Span, Spanned};
use crate::syntax::kdl;

/// The arguments declared by `argument` children (already checked against the grammar),
/// and their object schema.
pub(super) fn from_children(
    children: &[&Checked<'_>],
    out: &mut Vec<Diagnostic>,
) -> (Vec<ToolArgument>, Value) {
    let mut arguments: Vec<ToolArgument> = Vec::new();
    let mut properties = Map::new();
    let mut required = Vec::new();
    for node in children {
        let Some(name) = string(node.arg(0)) else {
            continue;
        };
        if let Some(first) = arguments.iter().find(|arg| arg.name.value == name.value) {
            out.push(
                Diagnostic::declared_twice("argument", &name.value, name.span, first.name.span)
                    .help("remove one of them, or rename it"),
            );
            continue;
        }
        // The grammar checked `type` against its choices.
        let ty = string(node.prop("type")).map_or_else(|| "string".to_owned(), |ty| ty.value);
        let mut property = Map::new();
        property.insert("type".to_owned(), json!(ty));
        if let Some(description) = string(node.prop("description")) {
            property.insert("description".to_owned(), json!(description.value));
        }
        let is_required = node
            .prop("required")
            .and_then(|entry| match entry.value {
                kdl::Value::Bool(value) => Some(value),
                _ => None,
            })
            .unwrap_or(true);
        if is_required {
            required.push(json!(name.value));
        }
        properties.insert(name.value.clone(), Value::Object(property));
        arguments.push(ToolArgument {
            name,
            required: is_required,
        });
    }
    let schema = json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    });
    (arguments, schema)
}

/// The schema file at `written` (relative to the tool file's directory `dir`) and the
/// arguments it declares: its `properties`, required when listed in `required`. `None`
/// (reported) when it is missing, not JSON, or not an object schema.
pub(super) fn from_schema_file(
    files: &dyn Files,
    dir: &Path,
    written: &Spanned<String>,
    out: &mut Vec<Diagnostic>,
) -> Option<(Vec<ToolArgument>, Value)> {
    let path = dir.join(&written.value);
    let text = match files.read(&path) {
        Ok(text) => text,
        Err(ReadError::NotFound) => {
            out.push(
                Diagnostic::new(
                    Code::MissingSchemaFile,
                    written.span,
                    format!("schema file `{}` does not exist", written.value),
                )
                .label("no such file")
                .help(
                    "create it, or fix the path: it is relative to the directory of the tool file",
                ),
            );
            return None;
        }
        Err(error) => {
            out.push(Diagnostic::unreadable(
                written.span,
                "schema file",
                &path,
                &error,
            ));
            return None;
        }
    };
    let problem = |label: String| {
        Diagnostic::new(
            Code::InvalidSchema,
            written.span,
            format!("schema file `{}` is not a valid tool schema", written.value),
        )
        .label(label)
        .help("a tool's schema is a JSON Schema object: `{\"type\": \"object\", \"properties\": {…}}`")
    };
    let schema: Value = match serde_json::from_str(&text) {
        Ok(schema) => schema,
        Err(error) => {
            out.push(problem(format!("not JSON: {error}")));
            return None;
        }
    };
    if let Err(error) = jsonschema::meta::validate(&schema) {
        out.push(problem(format!("not a JSON Schema: {error}")));
        return None;
    }
    if schema.get("type").and_then(Value::as_str) != Some("object") {
        out.push(problem("its `type` is not `\"object\"`".to_owned()));
        return None;
    }
    Some((schema_arguments(&schema, written.span), schema))
}

/// The arguments of an object schema, each spanned at the `schema=` that declared it.
fn schema_arguments(schema: &Value, span: Span) -> Vec<ToolArgument> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut arguments: Vec<ToolArgument> = schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|properties| {
            properties
                .keys()
                .map(|name| ToolArgument {
                    name: Spanned::new(name.clone(), span),
                    required: required.contains(&name.as_str()),
                })
                .collect()
        })
        .unwrap_or_default();
    arguments.sort_by(|a, b| a.name.value.cmp(&b.name.value));
    arguments
}
