//! Checks one node and, recursively, its children against their specs.

use super::Checked;
use super::value::{Expect, What, check_value};
use crate::check::grammar::{Grammar, NodeSpec};
use crate::diagnostic::{Code, Diagnostic, did_you_mean, expected_one_of};
use crate::source::Span;
use crate::syntax::kdl::{Entry, Node, Value};

/// Nesting deeper than this is not descended into (and reported once), so hostile input
/// cannot overflow the stack.
pub(super) const MAX_DEPTH: usize = 64;

/// Checks `node` as a `spec`, reporting into `out`.
pub(super) fn check_node<'a>(
    grammar: &'static Grammar,
    spec: &'static NodeSpec,
    node: &'a Node,
    depth: usize,
    out: &mut Vec<Diagnostic>,
) -> Checked<'a> {
    let args = check_arguments(spec, node, out);
    let props = check_properties(grammar, spec, node, out);
    let children = check_children(grammar, spec, node, depth, out);
    Checked {
        spec,
        node,
        args,
        props,
        children,
    }
}

fn check_arguments<'a>(
    spec: &NodeSpec,
    node: &'a Node,
    out: &mut Vec<Diagnostic>,
) -> Vec<Option<&'a Entry>> {
    let mut args = Vec::new();
    for (position, entry) in node
        .entries
        .iter()
        .filter(|entry| entry.key.is_none())
        .enumerate()
    {
        let Some(argument) = spec.argument(position) else {
            out.push(unexpected_argument(spec, entry));
            continue;
        };
        let expect = Expect {
            kind: argument.kind,
            choices: &argument.choices,
            min: None,
            above: None,
            max: None,
            what: What::Argument {
                name: &argument.name,
                node: &spec.name,
            },
        };
        let valid = check_value(&expect, entry, out);
        args.push(valid.then_some(entry));
    }
    for (position, argument) in spec.arguments.iter().enumerate() {
        if argument.required && args.len() <= position {
            out.push(
                Diagnostic::new(
                    Code::MissingProperty,
                    node.name.span,
                    format!("`{}` needs its `{}` argument", spec.name, argument.name),
                )
                .label(format!("`{}` without `{}`", spec.name, argument.name))
                .help(format!(
                    "write it after `{}`: {}",
                    spec.name,
                    lower_first(&argument.doc)
                )),
            );
        }
    }
    args
}

fn unexpected_argument(spec: &NodeSpec, entry: &Entry) -> Diagnostic {
    let takes = match spec.arguments.len() {
        0 => "no arguments".to_owned(),
        1 => format!("1 argument (`{}`)", spec.arguments[0].name),
        n => format!(
            "{n} arguments ({})",
            spec.arguments
                .iter()
                .map(|a| format!("`{}`", a.name))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let diagnostic = Diagnostic::new(
        Code::UnexpectedArgument,
        entry.span,
        format!("unexpected argument to `{}`", spec.name),
    )
    .label("extra argument");
    if spec.properties.is_empty() {
        diagnostic.help(format!("`{}` takes {takes}; remove this one", spec.name))
    } else {
        diagnostic.help(format!(
            "`{}` takes {takes}; for a setting, write a property like `{}=…`",
            spec.name, spec.properties[0].name
        ))
    }
}

fn check_properties<'a>(
    grammar: &Grammar,
    spec: &NodeSpec,
    node: &'a Node,
    out: &mut Vec<Diagnostic>,
) -> Vec<&'a Entry> {
    let mut props: Vec<&'a Entry> = Vec::new();
    let mut seen: Vec<&'a Entry> = Vec::new();
    for entry in &node.entries {
        let Some(key) = &entry.key else { continue };
        if let Some(first) = seen
            .iter()
            .find(|first| first.key.as_ref().is_some_and(|k| k.value == key.value))
        {
            out.push(
                Diagnostic::new(
                    Code::DuplicateProperty,
                    key.span,
                    format!("property `{}` is given twice on `{}`", key.value, spec.name),
                )
                .label("given again here")
                .with_label(first.span, "first given here")
                .help("remove one of them"),
            );
            continue;
        }
        seen.push(entry);
        let Some(property) = spec.property(&key.value) else {
            out.push(unknown_property(grammar, spec, entry));
            out.extend(secrets_in(entry));
            continue;
        };
        let expect = Expect {
            kind: property.kind,
            choices: &property.choices,
            min: property.min,
            above: property.above,
            max: property.max,
            what: What::Property(&property.name),
        };
        if check_value(&expect, entry, out) {
            props.push(entry);
        }
    }
    for property in spec.properties.iter().filter(|property| property.required) {
        if !seen
            .iter()
            .any(|entry| entry.key.as_ref().is_some_and(|k| k.value == property.name))
        {
            out.push(
                Diagnostic::new(
                    Code::MissingProperty,
                    node.name.span,
                    format!("`{}` needs the `{}` property", spec.name, property.name),
                )
                .label(format!("`{}` without `{}`", spec.name, property.name))
                .help(format!(
                    "add `{}=…`: {}",
                    property.name,
                    lower_first(&property.doc)
                )),
            );
        }
    }
    props
}

/// A secret pasted into a property the grammar does not know (`api-key="sk-…"`): the IR
/// drops the property, so the secret is reported here or nowhere.
fn secrets_in(entry: &Entry) -> Option<Diagnostic> {
    let Value::String(text) = &entry.value else {
        return None;
    };
    let (_, kind) = crate::check::value::find_secrets(text).into_iter().next()?;
    Some(
        Diagnostic::new(
            Code::InlineSecret,
            entry.value_span,
            format!("this looks like {kind} written in the workflow"),
        )
        .label("secret")
        .help("remove it and rotate it; read secrets from the environment (`api-key-env=` on a provider, or `env \"NAME\"` and `{{ env.NAME }}`)"),
    )
}

fn unknown_property(grammar: &Grammar, spec: &NodeSpec, entry: &Entry) -> Diagnostic {
    let key = entry.key.as_ref().expect("only properties are looked up");
    let names = spec.property_names();
    let diagnostic = Diagnostic::new(
        Code::UnknownProperty,
        key.span,
        format!("unknown property `{}` on `{}`", key.value, spec.name),
    )
    .label(format!("not a property of `{}`", spec.name));
    if grammar.child(spec, &key.value).is_some() {
        return diagnostic.help(format!(
            "`{}` is a child node here: write `{} …` inside the `{{ }}` block of `{}`",
            key.value, key.value, spec.name
        ));
    }
    suggest(diagnostic, &key.value, &names, "properties")
}

fn check_children<'a>(
    grammar: &'static Grammar,
    spec: &'static NodeSpec,
    node: &'a Node,
    depth: usize,
    out: &mut Vec<Diagnostic>,
) -> Vec<Checked<'a>> {
    let Some(block) = &node.children else {
        missing_children(grammar, spec, node, &[], out);
        return Vec::new();
    };
    if spec.children.is_empty() {
        if let Some(first) = block.nodes.first() {
            out.push(
                Diagnostic::new(
                    Code::UnknownChild,
                    first.name.span,
                    format!("`{}` takes no children", spec.name),
                )
                .label(format!("child of `{}`", spec.name))
                .help("remove the `{ … }` block"),
            );
        }
        return Vec::new();
    }
    if depth >= MAX_DEPTH {
        // The block's `{`, not the block: a label over a thousand nested lines would
        // echo them all.
        let brace = Span::new(
            block.span.source,
            block.span.start as usize,
            block.span.start as usize + 1,
        );
        out.push(
            Diagnostic::new(
                Code::NestingTooDeep,
                brace,
                format!("blocks are nested more than {MAX_DEPTH} levels deep"),
            )
            .label(format!("level {} opens here; what it holds is not checked", MAX_DEPTH + 1))
            .help("flatten the workflow: move the inner part into a workflow of its own and call it with `subgraph`"),
        );
        return Vec::new();
    }
    // Sized once: the checked tree of a large file is held through resolving.
    let mut checked = Vec::with_capacity(block.nodes.len());
    let mut seen: Vec<&'a Node> = Vec::new();
    for child in &block.nodes {
        let Some((child_spec_ref, child_spec)) = grammar.child(spec, &child.name.value) else {
            out.push(unknown_child(grammar, spec, child));
            continue;
        };
        if !child_spec_ref.repeatable
            && let Some(first) = seen
                .iter()
                .find(|first| first.name.value == child.name.value)
        {
            out.push(
                Diagnostic::new(
                    Code::DuplicateChild,
                    child.name.span,
                    format!(
                        "`{}` may appear only once in `{}`",
                        child.name.value, spec.name
                    ),
                )
                .label("given again here")
                .with_label(first.name.span, "first given here")
                .help("merge them into one, or remove one"),
            );
            continue;
        }
        seen.push(child);
        checked.push(check_node(grammar, child_spec, child, depth + 1, out));
    }
    missing_children(grammar, spec, node, &seen, out);
    checked
}

fn missing_children(
    grammar: &Grammar,
    spec: &NodeSpec,
    node: &Node,
    seen: &[&Node],
    out: &mut Vec<Diagnostic>,
) {
    for (child, child_spec) in grammar.children(spec).filter(|(child, _)| child.required) {
        let _ = child;
        if !seen.iter().any(|node| node.name.value == child_spec.name) {
            out.push(
                Diagnostic::new(
                    Code::MissingProperty,
                    node.name.span,
                    format!("`{}` needs a `{}` child", spec.name, child_spec.name),
                )
                .label(format!("`{}` without `{}`", spec.name, child_spec.name))
                .help(format!(
                    "add `{} …` inside its block: {}",
                    child_spec.name,
                    lower_first(&child_spec.doc)
                )),
            );
        }
    }
}

fn unknown_child(grammar: &Grammar, spec: &NodeSpec, child: &Node) -> Diagnostic {
    let name = &child.name.value;
    let names: Vec<&str> = grammar
        .children(spec)
        .map(|(_, spec)| spec.name.as_str())
        .collect();
    let (code, message, label) = if grammar.accepts_statements(spec) {
        (
            Code::UnknownNodeKind,
            format!("unknown node kind `{name}`"),
            format!(
                "not a statement{}",
                if spec.id == "workflow" {
                    " or declaration"
                } else {
                    ""
                }
            ),
        )
    } else {
        (
            Code::UnknownChild,
            format!("unknown child `{name}` in `{}`", spec.name),
            format!("not a child of `{}`", spec.name),
        )
    };
    let diagnostic = Diagnostic::new(code, child.name.span, message).label(label);
    if spec.property(name).is_some() {
        return diagnostic.help(format!(
            "`{name}` is a property here: write `{name}=…` on `{}`",
            spec.name
        ));
    }
    if let Some(elsewhere) = grammar.nodes_named(name).next() {
        let places = elsewhere
            .contexts
            .iter()
            .map(|c| c.rsplit('/').next().unwrap_or(c))
            .collect::<Vec<_>>();
        return diagnostic.help(format!(
            "`{name}` belongs in {}; here {}",
            expected_one_of(&places),
            expect_list(&names)
        ));
    }
    suggest(diagnostic, name, &names, "children")
}

/// Help "did you mean `x`? expected one of …" (with the fix that writes `x`) or
/// "expected one of …".
fn suggest(diagnostic: Diagnostic, found: &str, names: &[&str], what: &str) -> Diagnostic {
    if names.is_empty() {
        return diagnostic.help(format!("it takes no {what}; remove it"));
    }
    let expected = expect_list(names);
    match did_you_mean(found, names.iter().copied()) {
        Some(near) => diagnostic
            .help(format!("did you mean `{near}`? {expected}"))
            .replace_with(near),
        None => diagnostic.help(expected),
    }
}

fn expect_list(names: &[&str]) -> String {
    format!("expected one of {}", expected_one_of(names))
}

/// A doc line as the tail of a help sentence: first letter lowercased, final period removed.
fn lower_first(doc: &str) -> String {
    let doc = doc.strip_suffix('.').unwrap_or(doc);
    let mut chars = doc.chars();
    match chars.next() {
        Some(first) if !doc.starts_with('`') => first.to_lowercase().chain(chars).collect(),
        _ => doc.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use crate::check::testing::{codes, only};
    use crate::diagnostic::Code;

    const HEAD: &str = "provider \"p\" adapter=\"replay\" cassette=\"c\"\n";

    fn flow(body: &str) -> String {
        format!("workflow \"w\" provider=\"p\" {{\n{HEAD}{body}\n}}\n")
    }

    #[test]
    fn a_child_written_as_a_property_is_pointed_out() {
        let (diagnostic, at) = only(
            &flow("agent \"a\" tools=\"Read\" { prompt \"x\"; }"),
            Code::UnknownProperty,
        );
        assert_eq!(at, "tools");
        assert!(diagnostic.help.unwrap().contains("is a child node here"));
    }

    #[test]
    fn a_property_written_as_a_child_is_pointed_out() {
        let (diagnostic, at) = only(
            &flow("agent \"a\" { prompt \"x\"; model \"m\"; }"),
            Code::UnknownChild,
        );
        assert_eq!(at, "model");
        assert!(
            diagnostic
                .help
                .unwrap()
                .contains("`model` is a property here")
        );
    }

    #[test]
    fn a_child_in_the_wrong_parent_says_where_it_belongs() {
        let (diagnostic, _) = only(
            &flow("tool \"t\" { run \"x\"; choice \"a\"; }"),
            Code::UnknownChild,
        );
        assert!(
            diagnostic
                .help
                .unwrap()
                .starts_with("`choice` belongs in `wait`")
        );
    }

    #[test]
    fn missing_arguments_and_required_children() {
        let (diagnostic, at) = only(&flow("agent { prompt \"x\"; }"), Code::MissingProperty);
        assert_eq!(at, "agent");
        assert_eq!(diagnostic.message, "`agent` needs its `id` argument");
        let (_, at) = only(
            &flow("on \"run.end\"\nagent \"a\" prompt=\"x\""),
            Code::MissingProperty,
        );
        assert_eq!(at, "on");
    }

    #[test]
    fn leaf_nodes_take_no_children() {
        let (_, at) = only(
            &flow("description \"d\" { extra; }\nagent \"a\" prompt=\"x\""),
            Code::UnknownChild,
        );
        assert_eq!(at, "extra");
    }

    #[test]
    fn variadic_arguments_are_each_typed() {
        let (_, at) = only(
            &flow("tool \"t\" { run \"x\"; ok-codes 0 \"1\"; }"),
            Code::WrongType,
        );
        assert_eq!(at, "\"1\"");
    }

    #[test]
    fn every_bad_item_is_reported_once() {
        let text = flow(
            "agent \"a\" modle=\"m\" timeout=\"5 min\" { promt \"x\"; prompt \"y\"; retry attempts=0; }\n\
             tool \"t\" shell=\"yes\" { run \"x\"; }",
        );
        assert_eq!(
            codes(&text),
            [
                Code::UnknownProperty,
                Code::InvalidDuration,
                Code::UnknownChild,
                Code::InvalidValue,
                Code::WrongType
            ]
        );
    }
}
