//! The entry point: the `workflow` node and its declarations, then the statements, then
//! the name checks over the finished IR.

use super::ids::IdAllocator;
use super::resolver::Resolver;
use super::{features, input, mcp, names, provider, state, statement, version};
use crate::check::structure::{Checked, check_statement, check_workflow, split_document};
use crate::check::value::is_name;
use crate::diagnostic::{Code, Diagnostic, Outcome};
use crate::ir::{Block, Hook, Limits, Workflow};
use crate::source::{SourceId, Sources, Spanned};
use crate::syntax::kdl::Document;

/// Checks a parsed workflow file against the language and builds its IR.
///
/// The value is `Some` (possibly partial) whenever the file has a `workflow` node; every
/// structure and name problem is reported, each once. The tree is consumed: each
/// top-level statement is checked, resolved and freed in turn, so a large file's tree,
/// its checked view and its IR are never all held at once.
#[must_use]
pub fn resolve(sources: &Sources, file: SourceId, document: Document) -> Outcome<Workflow> {
    let mut out = Vec::new();
    let Some(parts) = split_document(file, document, &mut out) else {
        return Outcome::new(None, out);
    };
    // One walk of the raw tree: the ids written anywhere (generated `set` ids avoid them)
    // and how many statements the arena will hold.
    let mut ids = IdAllocator::default();
    let mut statements = 0;
    parts.visit_statements(&mut |spec, statement| {
        ids.take_written(spec, statement);
        statements += 1;
    });
    let checked = check_workflow(&parts.workflow, &mut out);
    let mut r = Resolver::new(sources, out);
    // The arena holds every statement; sized up front, it is not regrown (a regrowth holds
    // the old and the new buffer at once, the peak of the whole check on large files).
    r.nodes.reserve_exact(statements);
    let mut workflow = declarations(&mut r, &checked);
    let mut body = Block {
        nodes: Vec::with_capacity(parts.statements.len()),
        span: checked
            .node
            .children
            .as_ref()
            .map_or(checked.node.span, |block| block.span),
    };
    for (spec, statement) in parts.statements {
        let checked = check_statement(spec, &statement, &mut r.out);
        body.nodes.push(statement::resolve_statement(
            &mut r, &mut ids, &checked, None,
        ));
    }
    if body.nodes.is_empty() {
        r.report(
            Diagnostic::new(
                Code::EmptyBlock,
                checked.name_span(),
                "the workflow has no statements",
            )
            .label("nothing to run")
            .help("add a statement such as `agent`, `tool` or `set` to the workflow block"),
        );
    }
    workflow.body = body;
    workflow.nodes = std::mem::take(&mut r.nodes);
    let option_sites = std::mem::take(&mut r.option_sites);
    let mut out = std::mem::take(&mut r.out);
    names::check_unique_ids(&workflow, &mut out);
    names::resolve_names(&mut workflow, &mut out);
    features::check_providers(&workflow, &mut out);
    features::check_options(&workflow, &option_sites, &mut out);
    Outcome::new(Some(workflow), out)
}

/// The workflow's own properties and its declaration children.
fn declarations(r: &mut Resolver<'_>, checked: &Checked<'_>) -> Workflow {
    let name = r
        .string(checked.arg(0))
        .unwrap_or_else(|| Spanned::new(String::new(), checked.name_span()));
    let min_atomic_version = r.string(checked.prop("min-atomic-version"));
    if let Some(min) = &min_atomic_version {
        version::check_compatible(r, min);
    }
    let description = checked
        .child("description")
        .and_then(|child| r.string(child.arg(0)))
        .map(|text| text.value);
    let aliases = unique_names(r, checked, "alias", "alias", |_| true);
    let env = unique_names(r, checked, "env", "environment variable", is_name);
    Workflow {
        name,
        version: r.string(checked.prop("version")),
        min_atomic_version,
        description,
        aliases,
        inputs: input::resolve_inputs(r, checked),
        env,
        state: checked
            .child("state")
            .map(|state| state::resolve_state(r, state))
            .unwrap_or_default(),
        state_version: checked
            .child("state")
            .and_then(|state| state::state_version(r, state)),
        providers: provider::resolve_providers(r, checked),
        default_provider: r.string(checked.prop("provider")),
        default_model: r.string(checked.prop("model")),
        limits: limits(r, checked),
        workspace: checked
            .child("workspace")
            .and_then(|child| r.string(child.arg(0)))
            .and_then(|mode| {
                crate::ir::WorkspaceMode::named(&mode.value)
                    .map(|value| Spanned::new(value, mode.span))
            }),
        sandbox: super::sandbox::resolve_sandbox(r, checked),
        hooks: hooks(r, checked),
        mcp: mcp::resolve_mcp(r, checked),
        custom_tools: Vec::new(),
        nodes: Vec::new(),
        body: crate::ir::Block::default(),
        span: checked.node.span,
    }
}

/// The single-argument children of kind `id` (`alias`, `env`), each name once and valid.
fn unique_names(
    r: &mut Resolver<'_>,
    checked: &Checked<'_>,
    id: &str,
    what: &str,
    valid: fn(&str) -> bool,
) -> Vec<Spanned<String>> {
    let mut names: Vec<Spanned<String>> = Vec::new();
    for child in checked.children_of(id) {
        let Some(name) = r.string(child.arg(0)) else {
            continue;
        };
        if !valid(&name.value) {
            r.report(
                Diagnostic::new(
                    Code::InvalidId,
                    name.span,
                    format!("`{}` is not a valid {what} name", name.value),
                )
                .label("not a name")
                .help("use letters, digits and `_`, not starting with a digit"),
            );
            continue;
        }
        if let Some(first) = names.iter().find(|first| first.value == name.value) {
            r.report(
                Diagnostic::declared_twice(what, &name.value, name.span, first.span)
                    .help("remove one of them"),
            );
            continue;
        }
        names.push(name);
    }
    names
}

fn limits(r: &mut Resolver<'_>, checked: &Checked<'_>) -> Limits {
    let Some(limits) = checked.child("limits") else {
        return Limits::default();
    };
    Limits {
        max_steps: r.integer(limits.prop("max-steps")),
        timeout: r.duration(limits.prop("timeout")),
        max_budget_usd: r.number(limits.prop("max-budget-usd")),
    }
}

fn hooks(r: &mut Resolver<'_>, checked: &Checked<'_>) -> Vec<Hook> {
    checked
        .children_of("on")
        .filter_map(|on| {
            let event = r.string(on.arg(0))?;
            let run = on
                .child("on/run")
                .map(|run| {
                    run.args_from(0)
                        .filter_map(|arg| r.string(Some(arg)))
                        .collect()
                })
                .unwrap_or_default();
            Some(Hook {
                event,
                run,
                span: on.node.span,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use crate::check::testing::resolve_text;
    use crate::ir::{Jump, NodeKind};

    const EXAMPLE: &str = r#"
workflow "review-and-fix" version="1.0.0" {
    description "Review a change, fix what the review finds, repeat until clean"
    input "target" type="string" description="Path to review"

    state {
        field "findings" type="array" default="[]"
        field "test_logs" type="array" reduce="append" default="[]"
        field "rounds" type="integer" default=0
        field "approved" type="boolean" default=#false
    }

    provider "claude" adapter="anthropic" model="claude-sonnet-4-5"

    agent "review" provider="claude" {
        prompt "Review {{ input.target }}. Reply with a JSON array of findings."
        output "findings" parse="json" schema="schemas/findings.json"
        retry attempts=3 backoff="2s" factor=2
    }
    loop "fix-until-clean" until="state.findings | length == 0" max=5 {
        agent "fix" provider="claude" { prompt "Fix: {{ state.findings | tojson }}"; }
        tool "test" timeout="10m" {
            run "cargo" "test"
            output "test_logs"
        }
        agent "re-review" use="review"
        set "rounds" "{{ state.rounds + 1 }}"
    }
    wait "approve" prompt="Ship it?" { output "approved" parse="yes-no"; }
    decision "gate" {
        when "state.approved" goto="ship"
        otherwise goto="end"
    }
    tool "ship" { run "gh" "pr" "create" "--fill"; }
}
"#;

    #[test]
    fn the_spec_example_resolves_cleanly() {
        let (outcome, _) = resolve_text(EXAMPLE);
        assert_eq!(outcome.diagnostics, vec![]);
        let workflow = outcome.value.expect("a workflow");
        assert_eq!(workflow.name.value, "review-and-fix");
        assert_eq!(workflow.body.nodes.len(), 5);
        let ids: Vec<&str> = workflow
            .nodes
            .iter()
            .map(|node| node.id.value.as_str())
            .collect();
        assert_eq!(
            ids,
            [
                "review",
                "fix-until-clean",
                "fix",
                "test",
                "re-review",
                "set-rounds",
                "approve",
                "gate",
                "ship"
            ]
        );
        let gate = workflow.node(workflow.find_node("gate").unwrap());
        let NodeKind::Decision(decision) = &gate.kind else {
            panic!("decision")
        };
        assert_eq!(
            decision.routes[0].jump,
            Jump::Node(workflow.find_node("ship").unwrap())
        );
        assert_eq!(decision.otherwise.as_ref().unwrap().jump, Jump::End);
        let fix = workflow.node(workflow.find_node("fix").unwrap());
        assert_eq!(fix.parent, workflow.find_node("fix-until-clean"));
        assert_eq!(workflow.state[0].default, Some(serde_json::json!([])));
    }

    #[test]
    fn a_file_without_workflow_has_no_value() {
        let (outcome, _) = resolve_text("agent \"x\"\n");
        assert!(outcome.value.is_none());
        let codes: Vec<_> = outcome.diagnostics.iter().map(|d| d.code.name()).collect();
        assert_eq!(codes, ["missing-workflow"]);
    }
}
