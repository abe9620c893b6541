//! Each agent has a provider (its own, its `use` source's, the workflow default, or the only
//! one declared: [`Workflow::agent_provider_name`]), and asks it only for what its adapter
//! supports ([`crate::ir::AdapterInfo`]).

use super::resolver::OptionSite;
use crate::diagnostic::{Code, Diagnostic, did_you_mean, expected_one_of};
use crate::ir::{Agent, NodeKind, OptionProblem, ProviderDecl, Workflow, adapter_info};
use crate::source::{Span, Spanned};

/// Reports `missing-provider` and `unsupported-feature`.
pub(super) fn check_providers(workflow: &Workflow, out: &mut Vec<Diagnostic>) {
    for node in &workflow.nodes {
        let NodeKind::Agent(agent) = &node.kind else {
            continue;
        };
        let Some(name) = workflow.agent_provider_name(agent) else {
            out.push(missing_provider(workflow, &node.id));
            continue;
        };
        let Some(provider) = workflow.provider(&name.value) else {
            continue;
        };
        check_features(workflow, agent, provider, out);
    }
}

/// The `unsupported-feature` reports of the agents whose provider `on` picks, judged
/// against each provider's adapter as it stands: run before and after a swap of adapters
/// (`--provider`, the project's `adapter`), so the workflow is judged as it will run.
#[must_use]
pub fn agent_features(workflow: &Workflow, on: impl Fn(&ProviderDecl) -> bool) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for node in &workflow.nodes {
        let NodeKind::Agent(agent) = &node.kind else {
            continue;
        };
        let provider = workflow
            .agent_provider_name(agent)
            .and_then(|name| workflow.provider(&name.value));
        if let Some(provider) = provider.filter(|provider| on(provider)) {
            check_features(workflow, agent, provider, &mut out);
        }
    }
    out
}

/// Reports options the adapter does not read (`unknown-option`), options that belong on the
/// provider written on an agent, and values of the wrong kind (`wrong-type`): the same table
/// the adapters are built from ([`crate::ir::AdapterInfo::check_option`]).
pub(super) fn check_options(workflow: &Workflow, sites: &[OptionSite], out: &mut Vec<Diagnostic>) {
    for site in sites {
        let (provider, on_agent) = match workflow.providers.iter().find(|p| p.span == site.owner) {
            Some(provider) => (provider, false),
            None => {
                let agent = workflow.nodes.iter().find_map(|node| match &node.kind {
                    NodeKind::Agent(agent) if node.span == site.owner => Some(agent),
                    _ => None,
                });
                let Some(provider) = agent
                    .and_then(|agent| workflow.agent_provider_name(agent))
                    .and_then(|name| workflow.provider(&name.value))
                else {
                    continue;
                };
                (provider, true)
            }
        };
        let adapter = provider.adapter.value.as_str();
        let Some(info) = adapter_info(adapter) else {
            continue;
        };
        let name = &site.name.value;
        match info.check_option(name, &site.value, on_agent) {
            Ok(()) => {}
            Err(OptionProblem::Unknown { known }) => {
                let near = did_you_mean(name, known.iter().copied());
                let help = match near {
                    Some(near) => format!("did you mean `{near}`?"),
                    None if known.is_empty() => format!(
                        "`{adapter}` reads no options{}",
                        if on_agent { " set on an agent" } else { "" }
                    ),
                    None => format!("`{adapter}` reads {}", expected_one_of(&known)),
                };
                let help = if info.env_options && !on_agent {
                    format!("{help}; `env.NAME` sets a variable of the process it starts")
                } else {
                    help
                };
                out.push(
                    Diagnostic::new(
                        Code::UnknownOption,
                        site.name.span,
                        format!("`{adapter}` has no option `{name}`"),
                    )
                    .label(format!("not an option of `{adapter}`"))
                    .help(help)
                    .maybe_replace_with(near.map(str::to_owned)),
                );
            }
            Err(OptionProblem::ProviderOnly) => out.push(
                Diagnostic::new(
                    Code::UnknownOption,
                    site.name.span,
                    format!(
                        "option `{name}` of `{adapter}` is set on the provider, not on an agent"
                    ),
                )
                .label("the agent cannot change it")
                .help(format!(
                    "move it to provider `{}`, or declare another provider for this agent",
                    provider.name.value
                )),
            ),
            Err(OptionProblem::WrongKind(kind)) => out.push(
                Diagnostic::new(
                    Code::WrongType,
                    site.value_span,
                    format!("option `{name}` of `{adapter}` must be {}", kind.describe()),
                )
                .label(format!("not {}", kind.describe()))
                .help(format!("write {} here", kind.describe())),
            ),
        }
    }
}

fn missing_provider(workflow: &Workflow, id: &Spanned<String>) -> Diagnostic {
    let names: Vec<&str> = workflow
        .providers
        .iter()
        .map(|provider| provider.name.value.as_str())
        .collect();
    let help = if names.is_empty() {
        "declare a provider (`provider \"claude\" adapter=\"claude-code\"`) and name it with `provider=` on the agent or the workflow".to_owned()
    } else {
        format!(
            "add `provider=` to the agent or the workflow: {}",
            expected_one_of(&names)
        )
    };
    Diagnostic::new(
        Code::MissingProvider,
        id.span,
        format!("agent `{}` has no provider", id.value),
    )
    .label(if workflow.providers.len() > 1 {
        "no provider on the agent, its `use` source or the workflow, and several are declared"
    } else {
        "no provider on the agent, its `use` source or the workflow"
    })
    .help(help)
}

fn check_features(
    workflow: &Workflow,
    agent: &Agent,
    provider: &ProviderDecl,
    out: &mut Vec<Diagnostic>,
) {
    let Some(info) = adapter_info(&provider.adapter.value) else {
        return;
    };
    let mut asks: Vec<(Span, &str, bool)> = Vec::new();
    if let (Some(first), Some(last)) = (agent.tools.first(), agent.tools.last()) {
        asks.push((first.span.to(last.span), "tools", info.tools));
    }
    if let Some(permission) = &agent.permission {
        asks.push((permission.span, "permission modes", info.permission_modes));
        if permission.value == crate::ir::PermissionMode::Ask && info.permission_modes {
            asks.push((
                permission.span,
                "asking a person for permission (`permission=\"ask\"`)",
                info.asks_people,
            ));
        }
    }
    if let Some(system) = &agent.system {
        asks.push((system.span, "a system prompt", info.system_prompt));
    }
    // A discovered agent or skill reaches the model as system prompt.
    if let Some(used) = agent
        .use_
        .as_ref()
        .filter(|used| used.value.starts_with("agent:") || used.value.starts_with("skill:"))
    {
        asks.push((used.span, "a system prompt", info.system_prompt));
    }
    if let Some(session) = &agent.session {
        asks.push((session.span, "resumed sessions", info.sessions));
    }
    if let Some(max_turns) = &agent.max_turns {
        asks.push((max_turns.span, "a turn limit", info.max_turns));
    }
    // The agent's own sandbox, or the workflow's it runs in.
    if let Some(sandbox) = agent
        .sandbox
        .as_ref()
        .or(workflow.sandbox.as_ref())
        .filter(|sandbox| sandbox.confines())
    {
        asks.push((sandbox.span, "running in a `sandbox`", info.sandboxes));
    }
    // The workflow's servers go to the agents whose adapter takes them; an agent's own
    // must be usable (a recording played back has its calls of them already).
    for server in &agent.mcp {
        asks.push((
            server.span,
            "MCP servers",
            crate::ir::takes_mcp(info.name) || crate::ir::plays_back(info.name),
        ));
    }
    for (span, feature, supported) in asks {
        if supported {
            continue;
        }
        out.push(
            Diagnostic::new(
                Code::UnsupportedFeature,
                span,
                format!("the `{}` adapter does not support {feature}", info.name),
            )
            .label(format!("needs {feature}"))
            .with_label(
                provider.adapter.span,
                format!("provider `{}` uses `{}`", provider.name.value, info.name),
            )
            .help(format!(
                "remove it, or use a provider whose adapter supports {feature}"
            )),
        );
    }
}

#[cfg(test)]
mod tests {
    use crate::check::testing::codes;
    use crate::diagnostic::Code;

    fn flow(adapter: &str, agent: &str) -> String {
        // What each adapter needs to be declared at all.
        let needs = match adapter {
            "command" | "acp" => " { command \"m\"; }",
            "gemini" => " api-key-env=\"GEMINI_API_KEY\"",
            _ => "",
        };
        format!("workflow \"w\" {{\nprovider \"p\" adapter=\"{adapter}\"{needs}\n{agent}\n}}")
    }

    #[test]
    fn adapter_capabilities() {
        let agent = "agent \"a\" provider=\"p\" permission=\"plan\" max-turns=3 { prompt \"x\"; system \"s\"; tools \"Read\"; }";
        assert_eq!(codes(&flow("claude-code", agent)), []);
        assert_eq!(
            codes(&flow("command", agent)),
            [Code::UnsupportedFeature; 4]
        );
        assert_eq!(codes(&flow("anthropic", agent)), [Code::UnsupportedFeature]);
        assert_eq!(codes(&flow("opencode", agent)), [Code::UnsupportedFeature]);
    }

    #[test]
    fn asking_a_person_needs_an_adapter_that_can_stop_for_one() {
        let agent = "agent \"a\" provider=\"p\" permission=\"ask\" { prompt \"x\"; }";
        for adapter in ["claude-code", "opencode", "copilot", "in-process"] {
            assert_eq!(codes(&flow(adapter, agent)), [], "{adapter}");
        }
        // `replay` takes permission modes but cannot stop for a person.
        assert_eq!(codes(&flow("replay", agent)), [Code::UnsupportedFeature]);
        // Without permission modes at all, one diagnostic, not two.
        assert_eq!(codes(&flow("anthropic", agent)), [Code::UnsupportedFeature]);
    }

    #[test]
    fn an_agents_own_mcp_servers_need_an_adapter_that_takes_them() {
        let agent = "agent \"a\" provider=\"p\" { prompt \"x\"; mcp \"m\" { command \"srv\"; }; }";
        assert_eq!(codes(&flow("claude-code", agent)), []);
        assert_eq!(codes(&flow("command", agent)), [Code::UnsupportedFeature]);
    }

    #[test]
    fn providers_are_inherited_through_use() {
        let base = "agent \"base\" provider=\"p\" { prompt \"x\"; }\n";
        assert_eq!(
            codes(&flow("openai", &format!("{base}agent \"a\" use=\"base\""))),
            []
        );
        // With one provider declared, that one is used.
        assert_eq!(
            codes(&flow(
                "openai",
                "agent \"a\" use=\"agent:reviewer\" prompt=\"x\""
            )),
            []
        );
        // With several and no default, an agent must say which.
        let two = "workflow \"w\" {\nprovider \"p\" adapter=\"openai\"\nprovider \"q\" adapter=\"openai\"\nagent \"a\" prompt=\"x\"\n}";
        assert_eq!(codes(two), [Code::MissingProvider]);
    }

    #[test]
    fn discovered_agents_and_skills_need_a_system_prompt() {
        for used in ["agent:reviewer", "skill:pdf"] {
            assert_eq!(
                codes(&flow(
                    "command",
                    &format!("agent \"a\" provider=\"p\" use=\"{used}\" prompt=\"x\"")
                )),
                [Code::UnsupportedFeature]
            );
        }
        assert_eq!(
            codes(&flow(
                "command",
                "agent \"a\" provider=\"p\" use=\"command:fix\""
            )),
            []
        );
    }
}
