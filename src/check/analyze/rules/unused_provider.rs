//! `unused-provider`: a declared provider is used by no agent and is not the default.
//!
//! ## What it does
//! Reports a `provider` that no `agent` uses and that is not the workflow's default
//! (`workflow … provider="…"`). An agent uses the provider the runtime would call for it
//! ([`Workflow::agent_provider_name`](crate::ir::Workflow::agent_provider_name)): its own,
//! its `use` source's, the workflow default, or the only one declared.
//!
//! ## Why is this bad?
//! It is dead configuration, or an agent meant to use it names another one.
//!
//! ## Example
//! ```kdl
//! provider "claude" adapter="anthropic" model="claude-sonnet-4-5"
//! provider "local" adapter="openai" base-url="http://127.0.0.1:8080/v1"
//! agent "review" provider="claude" { prompt "…"; }
//! ```
//!
//! ## Use instead
//! Remove `local`, or use it.

use std::collections::HashSet;

use crate::diagnostic::{Code, Diagnostic};
use crate::ir::NodeKind;

use super::super::driver::Facts;

/// Reports providers nothing uses.
pub(crate) fn check(facts: &Facts<'_>, out: &mut Vec<Diagnostic>) {
    let workflow = facts.workflow;
    let mut used: HashSet<&str> = HashSet::new();
    if let Some(default) = &workflow.default_provider {
        used.insert(&default.value);
    }
    for node in &workflow.nodes {
        if let NodeKind::Agent(agent) = &node.kind
            && let Some(provider) = workflow.agent_provider_name(agent)
        {
            used.insert(&provider.value);
        }
    }
    for provider in &workflow.providers {
        if used.contains(provider.name.value.as_str()) {
            continue;
        }
        out.push(
            Diagnostic::new(
                Code::UnusedProvider,
                provider.name.span,
                format!("provider `{}` is never used", provider.name.value),
            )
            .label("declared here")
            .help(format!(
                "use it with `provider=\"{}\"` on an agent or the workflow, or remove it",
                provider.name.value
            )),
        );
    }
}

#[cfg(test)]
mod tests {
    use crate::check::analyze::testing::{Builder, messages, run};
    use crate::diagnostic::Code;
    use crate::source::Spanned;

    #[test]
    fn reports_providers_nothing_names() {
        let mut b = Builder::new();
        b.provider("claude", "anthropic");
        b.provider("local", "openai");
        b.provider("default", "replay");
        let agent = b.agent("review", "x");
        let name = b.name("claude");
        b.agent_mut(agent).provider = Some(name);
        let span = b.span(7);
        b.workflow_mut().default_provider = Some(Spanned::new("default".into(), span));
        assert_eq!(
            messages(&run(&b.finish()), Code::UnusedProvider),
            ["provider `local` is never used"]
        );
    }
}
