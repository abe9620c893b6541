//! `agent "<id>" provider=… model=… use=… { system …; prompt …; tools …; output …; … }`.

use super::output::resolve_outputs;
use super::resolver::{OptionSite, Resolver, exact};
use crate::check::structure::Checked;
use crate::diagnostic::{Code, Diagnostic};
use crate::ir::{Agent, ContextPolicy, PermissionMode, Template};

/// The agent's settings. Names (provider, `use`, `session`) are checked later.
pub(super) fn resolve_agent(r: &mut Resolver<'_>, checked: &Checked<'_>) -> Agent {
    let use_ = r.string(checked.prop("use"));
    let prompt = prompt(r, checked);
    // `use` of a node or a `command:` supplies the prompt; a discovered agent or skill
    // only supplies the system prompt, so the task must still be written.
    let prompt_supplied = use_
        .as_ref()
        .is_some_and(|used| !used.value.starts_with("agent:") && !used.value.starts_with("skill:"));
    if prompt.is_none() && !prompt_supplied && !wrote_prompt(checked) {
        r.report(
            Diagnostic::new(
                Code::MissingProperty,
                checked.name_span(),
                "`agent` needs a prompt",
            )
            .label("agent without a prompt")
            .help(
                "add `prompt \"…\"` inside its block, or `use=\"<agent>\"` to take another agent's (a discovered `agent:` or `skill:` still needs the task as its prompt)",
            ),
        );
    }
    let permission = r.string(checked.prop("permission")).and_then(|mode| {
        let parsed = serde_json::from_value::<PermissionMode>(mode.value.clone().into()).ok()?;
        Some(crate::source::Spanned::new(parsed, mode.span))
    });
    Agent {
        provider: r.string(checked.prop("provider")),
        model: r.string(checked.prop("model")),
        use_,
        system: checked
            .child("system")
            .and_then(|system| r.template(system.arg(0))),
        prompt,
        tools: checked
            .child("tools")
            .map(|tools| exact(tools.args_from(0).filter_map(|arg| r.string(Some(arg)))))
            .unwrap_or_default(),
        permission,
        max_turns: r.integer(checked.prop("max-turns")),
        budget_usd: r.number(checked.prop("budget-usd")),
        session: r.string(checked.prop("session")),
        context: checked
            .child("context")
            .map(|context| context_policy(r, context)),
        options: options(r, checked),
        outputs: resolve_outputs(r, checked, "agent/output"),
        mcp: super::mcp::resolve_mcp(r, checked),
        sandbox: super::sandbox::resolve_sandbox(r, checked),
        cwd: checked.child("cwd").and_then(|cwd| r.template(cwd.arg(0))),
        definition: None,
    }
}

/// `prompt=` or a `prompt` child (agents and waits); both is reported.
pub(super) fn prompt(r: &mut Resolver<'_>, checked: &Checked<'_>) -> Option<Template> {
    let property = r.template(checked.prop("prompt"));
    let child = checked
        .child("prompt")
        .and_then(|child| r.template(child.arg(0)));
    match (property, child) {
        (Some(property), Some(child)) => {
            r.report(
                Diagnostic::new(
                    Code::DuplicateProperty,
                    child.span,
                    format!("`{}` has two prompts", checked.name()),
                )
                .label("prompt given as a child here")
                .with_label(property.span, "and as a property here")
                .help("keep one: the `prompt=` property or the `prompt` child"),
            );
            Some(property)
        }
        (property, child) => property.or(child),
    }
}

/// Whether a prompt was written at all (valid or not), to avoid reporting it missing twice.
pub(super) fn wrote_prompt(checked: &Checked<'_>) -> bool {
    checked.wrote("prompt")
        || checked
            .node
            .children
            .as_ref()
            .is_some_and(|block| block.nodes.iter().any(|node| node.name.value == "prompt"))
}

fn context_policy(r: &mut Resolver<'_>, context: &Checked<'_>) -> ContextPolicy {
    let warn = r.number(context.prop("warn"));
    let act = r.number(context.prop("act"));
    match (&warn, &act) {
        (Some(warn), Some(act)) if warn.value > act.value => r.report(
            Diagnostic::new(Code::InvalidValue, warn.span, "`warn` is above `act`")
                .label(format!("warns at {}", warn.value))
                .with_label(act.span, format!("acts at {}", act.value))
                .help("the warning should come first: make `warn` at most `act`"),
        ),
        (Some(warn), None) if warn.value > ContextPolicy::DEFAULT_ACT => r.report(
            Diagnostic::new(
                Code::InvalidValue,
                warn.span,
                format!(
                    "`warn` is above the default `act` of {}",
                    ContextPolicy::DEFAULT_ACT
                ),
            )
            .label(format!("warns at {}", warn.value))
            .help("the warning should come first: add `act=` at least `warn`"),
        ),
        _ => {}
    }
    // A value outside the choices was reported by the structure check; the default then
    // only fills the IR of a workflow that will not run.
    let action = r
        .string(context.prop("action"))
        .and_then(|action| serde_json::from_value(action.value.into()).ok())
        .unwrap_or_default();
    ContextPolicy {
        warn: warn.map_or(ContextPolicy::DEFAULT_WARN, |warn| warn.value),
        act: act.map_or(ContextPolicy::DEFAULT_ACT, |act| act.value),
        action,
        span: context.node.span,
    }
}

/// `option "name" value` children as a JSON map; a name given twice is reported.
pub(super) fn options(
    r: &mut Resolver<'_>,
    checked: &Checked<'_>,
) -> serde_json::Map<String, serde_json::Value> {
    let mut options = serde_json::Map::new();
    let mut spans = Vec::new();
    for option in checked.children_of("option") {
        let (Some(name), Some(value)) = (r.string(option.arg(0)), option.arg(1)) else {
            continue;
        };
        if let Some((_, first)) = spans.iter().find(|(seen, _)| *seen == name.value) {
            r.report(
                Diagnostic::new(
                    Code::DuplicateProperty,
                    name.span,
                    format!("option `{}` is set twice", name.value),
                )
                .label("set again here")
                .with_label(*first, "first set here")
                .help("remove one of them"),
            );
            continue;
        }
        spans.push((name.value.clone(), name.span));
        let json = Resolver::json(&value.value);
        r.option_sites.push(OptionSite {
            owner: checked.node.span,
            name: name.clone(),
            value: json.clone(),
            value_span: value.value_span,
        });
        options.insert(name.value, json);
    }
    options
}

#[cfg(test)]
mod tests {
    use crate::check::testing::{codes, resolve_text};
    use crate::diagnostic::Code;
    use crate::ir::{ContextAction, NodeKind};

    fn flow(agent: &str) -> String {
        format!(
            "workflow \"w\" provider=\"p\" {{\nprovider \"p\" adapter=\"claude-code\"\n{agent}\n}}"
        )
    }

    #[test]
    fn prompts() {
        assert_eq!(codes(&flow("agent \"a\"")), [Code::MissingProperty]);
        assert_eq!(codes(&flow("agent \"a\" prompt=\"x\"")), []);
        // A discovered agent or skill is the system prompt; the task is still needed.
        assert_eq!(
            codes(&flow("agent \"a\" use=\"agent:reviewer\"")),
            [Code::MissingProperty]
        );
        assert_eq!(
            codes(&flow("agent \"a\" use=\"skill:pdf\"")),
            [Code::MissingProperty]
        );
        // A command is the prompt.
        assert_eq!(codes(&flow("agent \"a\" use=\"command:fix\"")), []);
        assert_eq!(
            codes(&flow("agent \"a\" prompt=\"x\" { prompt \"y\"; }")),
            [Code::DuplicateProperty]
        );
        // An invalid prompt is reported once, not again as missing.
        assert_eq!(codes(&flow("agent \"a\" prompt=1")), [Code::WrongType]);
    }

    #[test]
    fn prompt_templates_point_into_the_literal() {
        let text = flow("agent \"a\" { prompt \"Hi {{ input.x }}\"; }");
        let (outcome, sources) = resolve_text(&text);
        let workflow = outcome.value.unwrap();
        let NodeKind::Agent(agent) = &workflow.nodes[0].kind else {
            panic!()
        };
        let prompt = agent.prompt.as_ref().unwrap();
        assert!(prompt.exact);
        assert_eq!(sources.text(prompt.span_of(3..16)), "{{ input.x }}");
    }

    #[test]
    fn settings() {
        let (outcome, _) = resolve_text(&flow(
            "agent \"a\" permission=\"accept-edits\" max-turns=4 { prompt \"x\"; context warn=0.5; option \"max-budget-usd\" 0.2; }",
        ));
        assert_eq!(outcome.diagnostics, vec![]);
        let workflow = outcome.value.unwrap();
        let NodeKind::Agent(agent) = &workflow.nodes[0].kind else {
            panic!()
        };
        assert_eq!(
            agent.permission.as_ref().unwrap().value,
            crate::ir::PermissionMode::AcceptEdits
        );
        let context = agent.context.as_ref().unwrap();
        assert_eq!(
            (context.warn, context.act, context.action),
            (0.5, 0.6, ContextAction::Compact)
        );
        let (outcome, _) = resolve_text(&flow(
            "agent \"a\" { prompt \"x\"; context action=\"fresh\"; }",
        ));
        let NodeKind::Agent(agent) = &outcome.value.unwrap().nodes[0].kind else {
            panic!()
        };
        assert_eq!(
            agent.context.as_ref().map(|context| context.action),
            Some(ContextAction::Fresh)
        );
        assert_eq!(
            codes(&flow(
                "agent \"a\" { prompt \"x\"; context warn=0.9 act=0.5; }"
            )),
            [Code::InvalidValue]
        );
        assert_eq!(
            codes(&flow("agent \"a\" { prompt \"x\"; context warn=0.7; }")),
            [Code::InvalidValue]
        );
        assert_eq!(
            codes(&flow(
                "agent \"a\" { prompt \"x\"; context warn=0.7 act=0.7; }"
            )),
            []
        );
    }
}
