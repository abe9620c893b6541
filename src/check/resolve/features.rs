//! Each agent has a provider (its own, its `use` source's, the workflow default, or the only
//! one declared: [`Workflow::agent_provider_name`]), and asks it only for what its adapter
//! supports ([`crate::ir::AdapterInfo`]).

use super::resolver::OptionSite;
use crate::diagnostic::{Code, Diagnostic, did_you_mean, expected_one_of};
use crate::ir::{
    AdapterInfo, Agent, NodeKind, OptionProblem, ProviderDecl, Workflow, adapter_info,
};
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
        check_features(workflow, &node.id, agent, provider, out);
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
            check_features(workflow, &node.id, agent, provider, &mut out);
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

/// Something an agent may ask of its adapter.
#[derive(Clone, Copy)]
enum Feature {
    Tools,
    PermissionModes,
    AskingPeople,
    SystemPrompt,
    Sessions,
    TurnLimit,
    Sandbox,
    McpServers,
}

impl Feature {
    /// How messages name it: "the `x` adapter does not support {this}".
    fn describe(self) -> &'static str {
        match self {
            Self::Tools => "tools",
            Self::PermissionModes => "permission modes",
            Self::AskingPeople => "asking a person for permission (`permission=\"ask\"`)",
            Self::SystemPrompt => "a system prompt",
            Self::Sessions => "resumed sessions",
            Self::TurnLimit => "a turn limit",
            Self::Sandbox => "running in a `sandbox`",
            Self::McpServers => "MCP servers",
        }
    }

    fn supported(self, info: &AdapterInfo) -> bool {
        match self {
            Self::Tools => info.tools,
            Self::PermissionModes => info.permission_modes,
            Self::AskingPeople => info.asks_people,
            Self::SystemPrompt => info.system_prompt,
            Self::Sessions => info.sessions,
            Self::TurnLimit => info.max_turns,
            Self::Sandbox => info.sandboxes,
            // A recording played back has its calls of them already.
            Self::McpServers => crate::ir::takes_mcp(info.name) || crate::ir::plays_back(info.name),
        }
    }
}

/// One thing an agent asks of its adapter, and the agent of its `use=` chain that wrote it.
struct Ask<'w> {
    span: Span,
    feature: Feature,
    holder: &'w Agent,
}

/// What `agent` asks of its adapter: its own settings, else the nearest agent's its `use=`
/// chain reaches (the runtime's order).
fn asks<'w>(workflow: &'w Workflow, agent: &'w Agent) -> Vec<Ask<'w>> {
    let chain = workflow.agent_chain(agent);
    let mut asks = Vec::new();
    let nearest = |get: &dyn Fn(&'w Agent) -> Option<Span>| {
        chain
            .iter()
            .find_map(|holder| get(holder).map(|span| (*holder, span)))
    };
    let mut ask = |found: Option<(&'w Agent, Span)>, feature: Feature| {
        if let Some((holder, span)) = found {
            asks.push(Ask {
                span,
                feature,
                holder,
            });
        }
    };
    ask(
        nearest(&|holder| {
            let (first, last) = (holder.tools.first()?, holder.tools.last()?);
            Some(first.span.to(last.span))
        }),
        Feature::Tools,
    );
    let permission = chain
        .iter()
        .find_map(|holder| holder.permission.as_ref().map(|p| (*holder, p)));
    if let Some((holder, permission)) = permission {
        ask(Some((holder, permission.span)), Feature::PermissionModes);
        if permission.value == crate::ir::PermissionMode::Ask {
            ask(Some((holder, permission.span)), Feature::AskingPeople);
        }
    }
    ask(
        nearest(&|holder| holder.system.as_ref().map(|system| system.span)),
        Feature::SystemPrompt,
    );
    // A discovered agent or skill reaches the model as system prompt.
    ask(
        nearest(&|holder| {
            holder
                .use_
                .as_ref()
                .filter(|used| used.value.starts_with("agent:") || used.value.starts_with("skill:"))
                .map(|used| used.span)
        }),
        Feature::SystemPrompt,
    );
    // `session=` is the agent's own: it is not inherited.
    ask(
        agent.session.as_ref().map(|session| (agent, session.span)),
        Feature::Sessions,
    );
    ask(
        nearest(&|holder| holder.max_turns.as_ref().map(|max| max.span)),
        Feature::TurnLimit,
    );
    // The chain's sandbox, or the workflow's the agent runs in.
    let sandbox = chain
        .iter()
        .find_map(|holder| holder.sandbox.as_ref().map(|sandbox| (*holder, sandbox)))
        .or(workflow.sandbox.as_ref().map(|sandbox| (agent, sandbox)))
        .filter(|(_, sandbox)| sandbox.confines());
    ask(
        sandbox.map(|(holder, sandbox)| (holder, sandbox.span)),
        Feature::Sandbox,
    );
    // The workflow's servers go to the agents whose adapter takes them; the chain's own
    // must be usable.
    for holder in &chain {
        for server in &holder.mcp {
            ask(Some((holder, server.span)), Feature::McpServers);
        }
    }
    asks
}

fn check_features(
    workflow: &Workflow,
    id: &Spanned<String>,
    agent: &Agent,
    provider: &ProviderDecl,
    out: &mut Vec<Diagnostic>,
) {
    let Some(info) = adapter_info(&provider.adapter.value) else {
        return;
    };
    for ask in asks(workflow, agent) {
        if ask.feature.supported(info) {
            continue;
        }
        // Asking a person is judged only where permission modes are: one report, not two.
        if matches!(ask.feature, Feature::AskingPeople) && !info.permission_modes {
            continue;
        }
        let inherited = !std::ptr::eq(ask.holder, agent);
        let holder_can = || {
            workflow
                .agent_provider(ask.holder)
                .and_then(|provider| adapter_info(&provider.adapter.value))
                .is_some_and(|holder_info| ask.feature.supported(holder_info))
        };
        if inherited && !holder_can() {
            // The agent it comes from cannot have it either, and is reported there.
            continue;
        }
        let feature = ask.feature.describe();
        let mut diagnostic = Diagnostic::new(
            Code::UnsupportedFeature,
            ask.span,
            format!("the `{}` adapter does not support {feature}", info.name),
        );
        let help = match (inherited, &agent.use_) {
            (true, Some(used)) => {
                diagnostic = diagnostic
                    .label(format!("`{}` inherits this through `use=`", id.value))
                    .with_label(used.span, format!("`{}` inherits from here", id.value));
                format!(
                    "give `{}` its own setting, or a provider whose adapter supports {feature}, or stop inheriting it",
                    id.value
                )
            }
            _ => {
                diagnostic = diagnostic.label(format!("needs {feature}"));
                format!("remove it, or use a provider whose adapter supports {feature}")
            }
        };
        out.push(
            diagnostic
                .with_label(
                    provider.adapter.span,
                    format!("provider `{}` uses `{}`", provider.name.value, info.name),
                )
                .help(help),
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
