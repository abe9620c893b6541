//! `undeclared-variable`: a template reads a name that does not exist where it is read.
//!
//! ## What it does
//! Every template sees `input`, `state`, `outputs`, `run` and `env`. Inside a `for-each`
//! parallel it also sees the item (`item`, or the `as=` name) and `index`; in a node marked
//! `recovery=#true` or targeted by an `on-error "goto"` (and inside it) it sees `error`.
//! This rule reports any other root, an `input.<name>` that is not a declared input, a
//! `state.<name>` that is not a declared field, and a `run.<name>` other than `run.id`,
//! `run.step` and `run.iteration`.
//! (`outputs.<id>` and `env.<NAME>` have their own rules.)
//!
//! ## Why is this bad?
//! An unknown name renders as nothing: the agent gets a prompt with a hole in it, and a
//! condition silently becomes false.
//!
//! ## Example
//! ```kdl
//! agent "fix" { prompt "Fix {{ state.finding }} in {{ target }}"; }
//! ```
//!
//! ## Use instead
//! ```kdl
//! agent "fix" { prompt "Fix {{ state.findings }} in {{ input.target }}"; }
//! ```

use std::collections::HashSet;

use crate::diagnostic::{Code, Diagnostic, Fix, did_you_mean, expected_one_of};
use crate::ir::NodeKind;

use super::super::driver::Facts;
use super::super::model::{Site, has_output};
use super::super::reads::{Read, dashed_member, is_dash_tail};

/// The members of `run`.
pub(crate) const RUN_FIELDS: &[&str] = &["id", "step", "iteration"];

/// The roots every template sees.
const ROOTS: &[&str] = crate::check::TEMPLATE_ROOTS;

/// Reports reads of names not in scope.
pub(crate) fn check(facts: &Facts<'_>, out: &mut Vec<Diagnostic>) {
    for site in facts.model.sites.iter().filter(|site| !site.inherited) {
        let mut seen = HashSet::new();
        for read in site.reads() {
            if seen.insert(read.head())
                && let Some(diagnostic) = judge(facts, site, read)
            {
                out.push(diagnostic);
            }
        }
    }
}

fn judge(facts: &Facts<'_>, site: &Site<'_>, read: &Read) -> Option<Diagnostic> {
    let workflow = facts.workflow;
    let scope = facts.model.scope(site.node);
    let root = read.root();
    let undeclared = |message: String, label: &str| {
        Diagnostic::new(Code::UndeclaredVariable, read.span, message).label(label.to_owned())
    };
    match (root, read.member()) {
        ("outputs" | "env", _) | (_, None) if ROOTS.contains(&root) => None,
        ("input", Some(name)) => {
            if workflow.input(name).is_some() {
                return None;
            }
            if let Some(full) = dashed_member(site.template, read, |n| workflow.input(n).is_some())
            {
                return Some(needs_brackets(read, "input", &full));
            }
            let names = workflow
                .inputs
                .iter()
                .map(|input| input.name.value.as_str());
            let near = did_you_mean(name, names);
            let help = match near {
                Some(near) => format!("did you mean `input.{near}`?"),
                None => format!("declare it in the workflow: `input \"{name}\" type=\"string\"`"),
            };
            Some(
                undeclared(
                    format!("`input.{name}` is not a declared input"),
                    "no such input",
                )
                .help(help)
                .maybe_fix(
                    near.zip(read.head_span())
                        .map(|(near, span)| Fix::rename(span, format!("input.{near}"))),
                ),
            )
        }
        ("state", Some(name)) => {
            if workflow.field(name).is_some() {
                return None;
            }
            if let Some(full) = dashed_member(site.template, read, |n| workflow.field(n).is_some())
            {
                return Some(needs_brackets(read, "state", &full));
            }
            let names = workflow.state.iter().map(|field| field.name.value.as_str());
            let near = did_you_mean(name, names);
            let help = match near {
                Some(near) => format!("did you mean `state.{near}`?"),
                None => format!("declare it: `state {{ field \"{name}\" type=\"string\" }}`"),
            };
            Some(
                undeclared(
                    format!("`state.{name}` is not a declared state field"),
                    "no such field",
                )
                .help(help)
                .maybe_fix(
                    near.zip(read.head_span())
                        .map(|(near, span)| Fix::rename(span, format!("state.{near}"))),
                ),
            )
        }
        ("run", Some(name)) => {
            if RUN_FIELDS.contains(&name) {
                return None;
            }
            let paths: Vec<String> = RUN_FIELDS
                .iter()
                .map(|field| format!("run.{field}"))
                .collect();
            let near = did_you_mean(name, RUN_FIELDS.iter().copied());
            let help = match near {
                Some(near) => format!("did you mean `run.{near}`?"),
                None => format!("`run` has {}", expected_one_of(&paths)),
            };
            Some(
                undeclared(
                    format!("`run.{name}` is not a run value"),
                    "no such run value",
                )
                .help(help)
                .maybe_fix(
                    near.zip(read.head_span())
                        .map(|(near, span)| Fix::rename(span, format!("run.{near}"))),
                ),
            )
        }
        ("error", _) if scope.recovery => None,
        ("error", _) => Some(
            undeclared(
                "`error` is only defined in a node marked `recovery=#true`".to_owned(),
                "not inside a recovery node",
            )
            .help("read the failure in the recovery node that `on-error \"goto\"` jumps to"),
        ),
        _ if scope.items.iter().any(|(_, name)| name == root) => None,
        ("index", _) if !scope.items.is_empty() => None,
        _ if is_dash_tail(site.template, read) => None,
        _ => Some(unknown_root(facts, site, read)),
    }
}

fn needs_brackets(read: &Read, root: &str, full: &str) -> Diagnostic {
    Diagnostic::new(
        Code::UndeclaredVariable,
        read.span,
        format!("`{root}.{full}` must be written `{root}[\"{full}\"]`"),
    )
    .label(format!("read as `{}` minus more names", read.path))
    .help(format!(
        "names containing `-` need brackets: `{root}[\"{full}\"]`"
    ))
}

fn unknown_root(facts: &Facts<'_>, site: &Site<'_>, read: &Read) -> Diagnostic {
    let workflow = facts.workflow;
    let root = read.root();
    let for_each_names: Vec<(String, String)> = workflow
        .nodes
        .iter()
        .filter_map(|node| match &node.kind {
            NodeKind::Parallel(parallel) => parallel
                .for_each
                .as_ref()
                .map(|for_each| (node.id.value.clone(), for_each.as_.value.clone())),
            _ => None,
        })
        .collect();
    if let Some((parallel, _)) = for_each_names.iter().find(|(_, name)| name == root) {
        return Diagnostic::new(
            Code::UndeclaredVariable,
            read.span,
            format!("`{root}` is only defined inside for-each `{parallel}`"),
        )
        .label("outside the for-each")
        .help(format!("read `{root}` inside the body of `{parallel}`"));
    }
    if root == "index" || root == "item" {
        return Diagnostic::new(
            Code::UndeclaredVariable,
            read.span,
            format!("`{root}` is only defined inside a `for-each` parallel"),
        )
        .label("not inside a for-each")
        .help("use `for-each=\"…\"` on a `parallel` to run a branch per item");
    }
    // The name written in a place that has it (`state.x` for a field `x`), or the
    // closest root.
    let mut roots_help = None;
    let suggestion = if workflow.field(root).is_some() {
        Some(format!("state.{root}"))
    } else if workflow.input(root).is_some() {
        Some(format!("input.{root}"))
    } else if facts
        .model
        .node(root)
        .is_some_and(|node| has_output(&workflow.node(node).kind))
    {
        Some(format!("outputs.{root}"))
    } else {
        let scope = facts.model.scope(site.node);
        let mut roots: Vec<&str> = ROOTS.to_vec();
        roots.extend(scope.items.iter().map(|(_, name)| name.as_str()));
        if !scope.items.is_empty() {
            roots.push("index");
        }
        if scope.recovery {
            roots.push("error");
        }
        let near = did_you_mean(root, roots.iter().copied()).map(str::to_owned);
        if near.is_none() {
            roots_help = Some(format!("templates can read {}", expected_one_of(&roots)));
        }
        near
    };
    let help = match (&suggestion, roots_help) {
        (Some(name), _) => format!("did you mean `{name}`?"),
        (None, Some(help)) => help,
        (None, None) => String::new(),
    };
    // Only the root is replaced: `summary.text` becomes `state.summary.text`.
    let root_span = (read.span.len() == read.path.len() && read.path.starts_with(root))
        .then(|| read.span.slice(0..root.len()));
    let diagnostic = Diagnostic::new(
        Code::UndeclaredVariable,
        read.span,
        format!("undeclared variable `{root}`"),
    )
    .label("not an input, state field, output or run value")
    .help(help);
    match (suggestion, root_span) {
        (Some(name), Some(span)) => diagnostic.with_fix(Fix::rename(span, name)),
        _ => diagnostic,
    }
}

#[cfg(test)]
mod tests {
    use crate::check::analyze::testing::{Builder, messages, only, run};
    use crate::diagnostic::Code;
    use crate::ir::{Strategy, ValueType};

    #[test]
    fn reports_unknown_roots_inputs_fields_and_run_values() {
        let mut b = Builder::new();
        b.input("target", ValueType::String, None);
        b.field("findings", ValueType::Array, Some(serde_json::json!([])));
        b.agent(
            "fix",
            "{{ state.finding }} {{ input.targte }} {{ findings }} {{ run.stpe }} {{ bogus }}",
        );
        let found = only(run(&b.finish()), Code::UndeclaredVariable);
        let summary: Vec<(String, String)> = found
            .iter()
            .map(|d| (d.message.clone(), d.help.clone().unwrap()))
            .collect();
        assert_eq!(
            summary,
            [
                (
                    "`state.finding` is not a declared state field".into(),
                    "did you mean `state.findings`?".into()
                ),
                (
                    "`input.targte` is not a declared input".into(),
                    "did you mean `input.target`?".into()
                ),
                (
                    "undeclared variable `findings`".into(),
                    "did you mean `state.findings`?".into()
                ),
                (
                    "`run.stpe` is not a run value".into(),
                    "did you mean `run.step`?".into()
                ),
                (
                    "undeclared variable `bogus`".into(),
                    "templates can read `input`, `state`, `outputs`, `run` or `env`".into()
                ),
            ]
        );
    }

    #[test]
    fn items_and_index_only_inside_their_for_each() {
        let mut b = Builder::new();
        b.input("files", ValueType::Array, None);
        b.parallel("fan", Strategy::All, Some(("input.files", "file")), |b| {
            b.branch("body", |b| {
                b.agent("review", "{{ file }} {{ index }}");
            });
        });
        b.agent("after", "{{ file }} {{ item }}");
        let found = run(&b.finish());
        assert_eq!(
            messages(&found, Code::UndeclaredVariable),
            [
                "`file` is only defined inside for-each `fan`",
                "`item` is only defined inside a `for-each` parallel"
            ]
        );
    }

    #[test]
    fn error_only_in_recovery_nodes() {
        let mut b = Builder::new();
        let recover = b.agent("recover", "{{ error.message }}");
        b.node_mut(recover).recovery = true;
        b.agent("plain", "{{ error }}");
        let found = run(&b.finish());
        assert_eq!(
            messages(&found, Code::UndeclaredVariable),
            ["`error` is only defined in a node marked `recovery=#true`"]
        );
    }

    #[test]
    fn whole_roots_and_declared_names_pass() {
        let mut b = Builder::new();
        b.input("target", ValueType::String, None);
        b.agent(
            "dump",
            "{{ state | tojson }} {{ input }} {{ input.target }} {{ run.id }}",
        );
        assert!(only(run(&b.finish()), Code::UndeclaredVariable).is_empty());
    }
}
