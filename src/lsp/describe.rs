//! Markdown for hovers and completion details: node kinds, properties and arguments from the
//! grammar; node ids, state fields, providers and inputs from their declarations; template
//! variables by what they read.

use std::fmt::Write as _;

use crate::check::grammar::{ArgumentSpec, NodeSpec, PropertySpec, ValueKind, form, grammar};
use crate::syntax::kdl::{Node, Value};

use super::index::SymbolKind;
use super::snapshot::Snapshot;
use super::tree;

/// A node kind: how it is written, what it does, its properties and children.
pub(crate) fn node_kind(spec: &NodeSpec) -> String {
    let mut out = format!("```kdl\n{}\n```\n{}", form(spec), spec.doc);
    if !spec.properties.is_empty() {
        let names: Vec<String> = spec
            .properties
            .iter()
            .map(|property| format!("`{}`", property.name))
            .collect();
        let _ = write!(out, "\n\nProperties: {}", names.join(", "));
    }
    let children: Vec<String> = grammar()
        .children(spec)
        .map(|(_, child)| format!("`{}`", child.name))
        .collect();
    if !children.is_empty() {
        let _ = write!(out, "\n\nChildren: {}", children.join(", "));
    }
    out
}

/// A property: its type, default and meaning.
pub(crate) fn property(node: &NodeSpec, property: &PropertySpec) -> String {
    let mut out = format!(
        "`{}` property of `{}`: {}",
        property.name,
        node.name,
        type_name(property.kind, &property.choices)
    );
    if property.required {
        out.push_str(", required");
    } else if let Some(default) = &property.default {
        let _ = write!(out, ", default `{}`", kdl_value(default));
    }
    let _ = write!(out, "\n\n{}", property.doc);
    match (property.min, property.max) {
        (Some(min), Some(max)) => {
            let _ = write!(out, " ({min} to {max})");
        }
        (Some(min), None) => {
            let _ = write!(out, " (at least {min})");
        }
        _ => {}
    }
    if let Some(above) = property.above {
        let _ = write!(out, " (more than {above})");
    }
    out
}

/// A positional argument.
pub(crate) fn argument(node: &NodeSpec, argument: &ArgumentSpec) -> String {
    format!(
        "`{}` argument of `{}`: {}{}\n\n{}",
        argument.name,
        node.name,
        type_name(argument.kind, &argument.choices),
        if argument.required { ", required" } else { "" },
        argument.doc
    )
}

fn type_name(kind: ValueKind, choices: &[String]) -> String {
    if kind == ValueKind::Enum {
        let choices: Vec<String> = choices.iter().map(|choice| format!("`{choice}`")).collect();
        format!("one of {}", choices.join(", "))
    } else {
        kind.name().to_owned()
    }
}

fn kdl_value(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::Bool(value) => format!("#{value}"),
        serde_json::Value::String(text) => format!("\"{text}\""),
        serde_json::Value::Null => "#null".to_owned(),
        other => other.to_string(),
    }
}

/// A declared name: what its declaration says.
pub(crate) fn symbol(snapshot: &Snapshot, kind: SymbolKind, name: &str) -> Option<String> {
    let declaration = snapshot.index.declaration(kind, name)?;
    let (span, _) = declaration.node.as_ref()?;
    let frame = tree::find(&snapshot.parse.document, *span)?;
    let node = frame.node;
    let written = |key: &str| {
        tree::property(node, key).map(|entry| snapshot.sources.text(entry.value_span).to_owned())
    };
    let string = |key: &str| match tree::property(node, key).map(|entry| &entry.value) {
        Some(Value::String(text)) => Some(text.clone()),
        _ => None,
    };
    let mut out = String::new();
    match kind {
        SymbolKind::Field => {
            let _ = write!(out, "state field `{name}`\n\n{}", value_type(node));
            let reducer = match (string("reduce"), string("merge-by")) {
                (_, Some(key)) => format!("merge-by `{key}`"),
                (Some(reduce), None) => format!("`{reduce}`"),
                (None, None) => "`replace`".to_owned(),
            };
            let _ = write!(out, " · reducer {reducer}");
            match written("default") {
                Some(default) => {
                    let _ = write!(out, " · default `{default}`");
                }
                None => out.push_str(" · no default (unset until written)"),
            }
            if let Some(max) = written("max-items") {
                let _ = write!(out, " · keeps the last {max} items");
            }
            if let Some(description) = string("description") {
                let _ = write!(out, "\n\n{description}");
            }
        }
        SymbolKind::Input => {
            let _ = write!(out, "input `{name}`\n\n{}", value_type(node));
            match written("default") {
                Some(default) => {
                    let _ = write!(out, " · default `{default}`");
                }
                None => out.push_str(" · required"),
            }
            if let Some(description) = string("description") {
                let _ = write!(out, "\n\n{description}");
            }
        }
        SymbolKind::Provider => {
            let _ = write!(out, "provider `{name}`");
            if let Some(adapter) = string("adapter") {
                let _ = write!(out, "\n\nadapter `{adapter}`");
                if let Some(info) = crate::ir::adapter_info(&adapter) {
                    let _ = write!(out, ": {}", info.description);
                }
            }
            if let Some(model) = string("model") {
                let _ = write!(out, "\n\nmodel `{model}`");
            }
        }
        SymbolKind::Node => {
            let kind = &node.name.value;
            let _ = write!(out, "{kind} `{name}`");
            if let Some(spec) = frame.spec {
                let _ = write!(out, "\n\n{}", spec.doc);
            }
            if let Some(output) = output_meaning(kind) {
                let _ = write!(out, "\n\n`outputs.{name}` is {output}");
            }
        }
    }
    Some(out)
}

fn value_type(node: &Node) -> String {
    match (tree::property(node, "type"), tree::property(node, "schema")) {
        (_, Some(entry)) => match &entry.value {
            Value::String(path) => format!("schema `{path}`"),
            _ => "schema".to_owned(),
        },
        (Some(entry), None) => match &entry.value {
            Value::String(ty) => format!("type `{ty}`"),
            _ => "type `any`".to_owned(),
        },
        (None, None) => "type `any`".to_owned(),
    }
}

/// What `outputs.<id>` holds for a node of kind `kind`.
pub(crate) fn output_meaning(kind: &str) -> Option<&'static str> {
    match kind {
        "agent" => Some("the agent's final reply text"),
        "tool" => Some("the tool's standard output"),
        "wait" => Some("the answer given"),
        "subgraph" => Some("the called workflow's final state"),
        _ => None,
    }
}

/// What a template variable path reads, for the roots and members that are not declared
/// names (those are described by [`symbol`]).
pub(crate) fn variable(path: &str) -> Option<String> {
    let mut parts = path.split('.');
    let root = parts.next()?;
    let member = parts.next();
    let text = match (root, member) {
        ("state", None) => "`state`: the workflow's state fields".to_owned(),
        ("input", None) => "`input`: the workflow's inputs".to_owned(),
        ("outputs", None) => "`outputs`: what each node that ran produced, by node id".to_owned(),
        ("run", None) => "`run`: the run's `id`, `step` and `iteration`".to_owned(),
        ("run", Some("id")) => "`run.id`: the id of this run".to_owned(),
        ("run", Some("step")) => {
            "`run.step`: the number of the step being run (1-based)".to_owned()
        }
        ("run", Some("iteration")) => {
            "`run.iteration`: the iteration of the innermost loop (1-based; 0 outside loops)"
                .to_owned()
        }
        ("env", None) => "`env`: the environment variables declared with `env \"NAME\"`".to_owned(),
        ("env", Some(name)) => format!(
            "`env.{name}`: the environment variable `{name}` (declare it with `env \"{name}\"`)"
        ),
        ("item", None) => {
            "`item`: the current item of a `for-each` parallel (rename with `as=`)".to_owned()
        }
        ("index", None) => {
            "`index`: the position of the current item of a `for-each` parallel, from 0".to_owned()
        }
        ("error", _) => {
            "`error`: the failure that routed here, in a node marked `recovery=#true`".to_owned()
        }
        _ => return None,
    };
    Some(text)
}
