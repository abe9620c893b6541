//! `undefined-tool`, `unknown-tool-argument` and `missing-tool-argument`: a workflow's uses
//! of custom tools (`.atomic/tools/*.kdl`) checked against the tools discovered for it.
//!
//! ## What it does
//! - A `tool use="<name>"` node must name a discovered custom tool; each of its `arg`s
//!   must name an argument of that tool, and every required argument must be given.
//! - An agent on an adapter without built-in tools (`anthropic`, `openai`) may only be
//!   offered custom tools in `tools`. Other adapters' `tools` name their own built-in
//!   tools, and a custom tool named there is `unsupported-custom-tool`: the CLI cannot
//!   call it. A `replay` agent is offered what its recording was: any tool.
//!
//! ## Why is this bad?
//! Otherwise the run fails when it reaches the node or the agent, after everything before
//! it has already run (and been paid for).
//!
//! ## Example
//! ```kdl
//! tool "test" use="run-test" { arg "filtr" "{{ state.f }}"; }
//! ```
//!
//! ## Use instead
//! ```kdl
//! tool "test" use="run-tests" { arg "filter" "{{ state.f }}"; }
//! ```

use crate::diagnostic::{Code, Diagnostic, did_you_mean};
use crate::ir::{Agent, CustomTool, NodeKind, Tool, adapter_info, plays_back};
use crate::source::Spanned;

use super::super::driver::Facts;

/// Reports uses of undefined custom tools and mismatched arguments.
pub(crate) fn check(facts: &Facts<'_>, out: &mut Vec<Diagnostic>) {
    for node in &facts.workflow.nodes {
        match &node.kind {
            NodeKind::Tool(tool) => check_tool(facts, &node.id, tool, out),
            NodeKind::Agent(agent) => check_agent(facts, &node.id, agent, out),
            _ => {}
        }
    }
}

fn check_tool(facts: &Facts<'_>, id: &Spanned<String>, tool: &Tool, out: &mut Vec<Diagnostic>) {
    let Some(name) = &tool.use_ else { return };
    let Some(custom) = find(facts, name) else {
        out.push(undefined(
            facts,
            name,
            format!("no custom tool `{}`", name.value),
        ));
        return;
    };
    for (arg, _) in &tool.args {
        if custom.argument(&arg.value).is_some() {
            continue;
        }
        let names = custom.arguments.iter().map(|a| a.name.value.as_str());
        let near = did_you_mean(&arg.value, names);
        let help = match near {
            Some(near) => format!("did you mean `{near}`?"),
            None if custom.arguments.is_empty() => {
                format!(
                    "`{}` takes no arguments; remove the `arg`",
                    custom.name.value
                )
            }
            None => format!("its arguments are {}", argument_list(custom)),
        };
        out.push(
            Diagnostic::new(
                Code::UnknownToolArgument,
                arg.span,
                format!(
                    "custom tool `{}` has no argument `{}`",
                    custom.name.value, arg.value
                ),
            )
            .label("unknown argument")
            .help(help)
            .maybe_replace_with(near.map(str::to_owned)),
        );
    }
    for argument in custom.arguments.iter().filter(|a| a.required) {
        if tool
            .args
            .iter()
            .any(|(arg, _)| arg.value == argument.name.value)
        {
            continue;
        }
        out.push(
            Diagnostic::new(
                Code::MissingToolArgument,
                name.span,
                format!(
                    "`{}` does not give `{}` its required argument `{}`",
                    id.value, custom.name.value, argument.name.value
                ),
            )
            .label("required argument missing")
            .help(format!(
                "add `arg \"{}\" \"…\"` inside the node's block",
                argument.name.value
            )),
        );
    }
}

fn check_agent(facts: &Facts<'_>, id: &Spanned<String>, agent: &Agent, out: &mut Vec<Diagnostic>) {
    if agent.tools.is_empty() {
        return;
    }
    let Some(provider) = facts.workflow.agent_provider(agent) else {
        return;
    };
    let Some(info) = adapter_info(&provider.adapter.value) else {
        return;
    };
    // A recording plays back whatever tools the recorded agent was offered, its own or
    // custom: nothing is called, so nothing can be unsupported.
    if plays_back(info.name) {
        return;
    }
    if !info.custom_tools {
        // A CLI's `tools` are its own tools; a custom tool's name would reach it as one.
        for name in &agent.tools {
            if let Some(custom) = find(facts, name) {
                out.push(
                    Diagnostic::new(
                        Code::UnsupportedCustomTool,
                        name.span,
                        format!(
                            "agent `{}` is offered the custom tool `{}`, which `{}` cannot call",
                            id.value, custom.name.value, provider.adapter.value
                        ),
                    )
                    .label("a custom tool, not one of the CLI's own")
                    .help(format!(
                        "run it as a step (`tool \"{0}\" use=\"{0}\"`) or give the agent an `anthropic` or `openai` provider; a `{1}` agent's `tools` name {1}'s own tools",
                        custom.name.value, provider.adapter.value
                    )),
                );
            }
        }
        return;
    }
    for name in &agent.tools {
        if find(facts, name).is_none() {
            let message = format!(
                "agent `{}` is offered `{}`, which is no custom tool; `{}` has no built-in tools",
                id.value, name.value, provider.adapter.value
            );
            out.push(undefined(facts, name, message));
        }
    }
}

fn find<'t>(facts: &Facts<'t>, name: &Spanned<String>) -> Option<&'t CustomTool> {
    facts
        .tools
        .iter()
        .find(|tool| tool.name.value == name.value)
}

fn undefined(facts: &Facts<'_>, name: &Spanned<String>, message: String) -> Diagnostic {
    let names = facts.tools.iter().map(|tool| tool.name.value.as_str());
    let near = did_you_mean(&name.value, names);
    let help = match near {
        Some(near) => format!("did you mean `{near}`?"),
        None => format!(
            "declare it in `.atomic/tools/{}.kdl`: `tool \"{}\" description=\"…\" {{ command \"program\"; }}`",
            name.value, name.value
        ),
    };
    Diagnostic::new(Code::UndefinedTool, name.span, message)
        .label("not declared in `.atomic/tools/`")
        .help(help)
        .maybe_replace_with(near.map(str::to_owned))
}

/// "`a`, `b` (optional)…" for a help.
fn argument_list(tool: &CustomTool) -> String {
    tool.arguments
        .iter()
        .map(|a| {
            if a.required {
                format!("`{}`", a.name.value)
            } else {
                format!("`{}` (optional)", a.name.value)
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}
