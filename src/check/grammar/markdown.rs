//! The grammar as Markdown: one section per node kind with its arguments, properties and
//! children. `grammar/README.md` embeds this text between markers, and a test keeps the
//! two in sync.

use std::fmt::Write as _;

use super::{ArgumentSpec, Grammar, NodeSpec, PropertySpec, ValueKind};

/// The reference tables for every node kind, in grammar order.
#[must_use]
pub fn reference_markdown(grammar: &Grammar) -> String {
    let mut out = String::new();
    for node in &grammar.nodes {
        section(grammar, node, &mut out);
    }
    out
}

fn section(grammar: &Grammar, node: &NodeSpec, out: &mut String) {
    let title = match node.id.split_once('/') {
        None if node.id == node.name => format!("`{}`", node.name),
        None => format!("`{}` ({})", node.name, node.id.replace('-', " ")),
        Some((parent, _)) => format!("`{}` in `{parent}`", node.name),
    };
    let _ = writeln!(out, "### {title}\n\n{}\n", node.doc);
    let contexts: Vec<String> = node
        .contexts
        .iter()
        .map(|context| match context.as_str() {
            "document" => "the top level".to_owned(),
            "tool-file" => {
                "the top level of a custom tool file (`.atomic/tools/<name>.kdl`)".to_owned()
            }
            other => format!("`{other}`"),
        })
        .collect();
    let kind = if node.statement {
        "Statement; appears"
    } else {
        "Appears"
    };
    let _ = writeln!(out, "{kind} in {}.\n", contexts.join(", "));
    let _ = writeln!(out, "Form: `{}`\n", form(node));
    if !node.arguments.is_empty() {
        out.push_str("| argument | type | required | meaning |\n| --- | --- | --- | --- |\n");
        for argument in &node.arguments {
            argument_row(argument, out);
        }
        out.push('\n');
    }
    if !node.properties.is_empty() {
        out.push_str("| property | type | default | meaning |\n| --- | --- | --- | --- |\n");
        for property in &node.properties {
            property_row(property, out);
        }
        out.push('\n');
    }
    let children: Vec<String> = grammar
        .children(node)
        .map(|(child, spec)| {
            let mut text = format!("`{}`", spec.name);
            if child.required {
                text.push_str(" (required)");
            }
            if child.repeatable {
                text.push_str(" (repeatable)");
            }
            text
        })
        .collect();
    if !children.is_empty() {
        let _ = writeln!(out, "Children: {}.\n", children.join(", "));
    }
}

/// `agent "<id>" provider=… { … }`: how a node kind is written (also the language server's
/// hover).
pub(crate) fn form(node: &NodeSpec) -> String {
    let mut form = node.name.clone();
    for argument in &node.arguments {
        let text = if argument.kind == ValueKind::Integer {
            format!("<{}>", argument.name)
        } else {
            format!("\"<{}>\"", argument.name)
        };
        let text = if argument.variadic {
            format!("{text}…")
        } else {
            text
        };
        let _ = write!(
            form,
            " {}",
            if argument.required {
                text
            } else {
                format!("[{text}]")
            }
        );
    }
    for property in node.properties.iter().filter(|property| property.required) {
        let _ = write!(form, " {}=…", property.name);
    }
    if node.properties.iter().any(|property| !property.required) {
        form.push_str(" [property=…]");
    }
    if !node.children.is_empty() {
        form.push_str(" { … }");
    }
    form
}

fn type_name(kind: ValueKind, choices: &[String]) -> String {
    if kind == ValueKind::Enum {
        choices
            .iter()
            .map(|choice| format!("`{choice}`"))
            .collect::<Vec<_>>()
            .join(" \\| ")
    } else {
        kind.name().to_owned()
    }
}

fn argument_row(argument: &ArgumentSpec, out: &mut String) {
    let name = if argument.variadic {
        format!("{}…", argument.name)
    } else {
        argument.name.clone()
    };
    let _ = writeln!(
        out,
        "| {name} | {} | {} | {} |",
        type_name(argument.kind, &argument.choices),
        if argument.required { "yes" } else { "no" },
        escape(&argument.doc)
    );
}

fn property_row(property: &PropertySpec, out: &mut String) {
    let default = match (&property.default, property.required) {
        (_, true) => "required".to_owned(),
        (Some(serde_json::Value::Bool(value)), _) => format!("`#{value}`"),
        (Some(serde_json::Value::String(text)), _) => format!("`\"{text}\"`"),
        (Some(value), _) => format!("`{value}`"),
        (None, false) => "—".to_owned(),
    };
    let mut meaning = escape(&property.doc);
    match (property.min, property.max) {
        // A duration's bound is in milliseconds; the only one used is "not zero".
        (Some(_), _) if property.kind == ValueKind::Duration => {
            meaning.push_str(" (more than zero)");
        }
        (Some(min), Some(max)) => {
            let _ = write!(meaning, " ({min} to {max})");
        }
        (Some(min), None) => {
            let _ = write!(meaning, " (at least {min})");
        }
        _ => {}
    }
    if let Some(above) = property.above {
        let _ = write!(meaning, " (more than {above})");
    }
    let _ = writeln!(
        out,
        "| `{}` | {} | {default} | {meaning} |",
        property.name,
        type_name(property.kind, &property.choices)
    );
}

fn escape(text: &str) -> String {
    text.replace('|', "\\|")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::grammar::grammar;

    #[test]
    fn every_node_kind_has_a_section() {
        let text = reference_markdown(grammar());
        for node in &grammar().nodes {
            assert!(text.contains(&format!("{}\n\n", node.doc)), "{}", node.id);
        }
        assert!(text.contains("Form: `agent \"<id>\" [property=…] { … }`"));
        assert!(text.contains("| `attempts` | integer | `3` |"));
        assert!(text.contains("Form: `ok-codes <codes>…`"));
    }
}
