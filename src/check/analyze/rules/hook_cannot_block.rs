//! `hook-cannot-block`: an `agent.tool.before` hook meant to stop tools cannot stop an
//! agent's.
//!
//! ## What it does
//! Reports each agent whose adapter runs its own tools where atomic cannot stop them
//! (`hooks_block_tools` false: OpenCode, Copilot, Codex, Gemini, ACP agents) in a workflow
//! with an `agent.tool.before` hook.
//!
//! ## Why is this bad?
//! A failing `agent.tool.before` hook refuses the tool where atomic is asked first (the
//! model APIs, Claude Code); on these backends the hook sees the tool as it starts and its
//! failure is only reported: a guard against `rm -rf` does not guard.
//!
//! ## Example
//! ```kdl
//! on "agent.tool.before" { run "./guard.sh"; }
//! provider "g" adapter="gemini" api-key-env="GEMINI_API_KEY"
//! agent "fix" provider="g" permission="bypass" { prompt "Fix it"; }
//! ```
//!
//! ## Use instead
//! ```kdl
//! on "agent.tool.before" { run "./guard.sh"; }
//! provider "c" adapter="claude-code"
//! agent "fix" provider="c" permission="bypass" { prompt "Fix it"; }
//! ```

use crate::diagnostic::{Code, Diagnostic};
use crate::ir::{NodeKind, adapter_info};

use super::super::driver::Facts;

/// Reports agents whose tools the workflow's `agent.tool.before` hooks cannot stop.
pub(crate) fn check(facts: &Facts<'_>, out: &mut Vec<Diagnostic>) {
    let workflow = facts.workflow;
    let Some(hook) = workflow
        .hooks
        .iter()
        .find(|hook| hook.event.value == "agent.tool.before")
    else {
        return;
    };
    for node in &workflow.nodes {
        let NodeKind::Agent(agent) = &node.kind else {
            continue;
        };
        let Some(provider) = workflow
            .agent_provider_name(agent)
            .and_then(|name| workflow.provider(&name.value))
        else {
            continue;
        };
        let Some(info) = adapter_info(&provider.adapter.value) else {
            continue;
        };
        if !info.own_tools || info.hooks_block_tools {
            continue;
        }
        out.push(
            Diagnostic::new(
                Code::HookCannotBlock,
                hook.event.span,
                format!(
                    "this hook cannot stop the tools of agent `{}`: the `{}` adapter runs them itself",
                    node.id.value, provider.adapter.value
                ),
            )
            .label("sees each tool as it starts, after it was decided")
            .with_label(
                provider.adapter.span,
                format!(
                    "provider `{}` uses `{}`",
                    provider.name.value, provider.adapter.value
                ),
            )
            .help("to refuse tools by rule, use an adapter whose tools the hook can stop (`claude-code`, `anthropic`, `openai`); to bound what they can reach, put the agent in a `sandbox` (and silence this with `// atomic-ignore: hook-cannot-block`)"),
        );
    }
}
