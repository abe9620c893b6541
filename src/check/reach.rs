//! `atomic check --reach`: the reach of a workflow at a glance — per agent and tool, the
//! sandbox it runs in, where it may write, what it may not read, the hosts it may reach,
//! the secrets it is given, its tools and permission mode. The permissions manifest a
//! reviewer reads before approving a workflow.

use serde::Serialize;

use crate::ir::{Node, NodeKind, PermissionMode, Sandbox, Workflow};
use crate::sandbox::{CREDENTIAL_STORES, cli_endpoints, cli_home, configured_endpoints};

/// One step's reach.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct StepReach {
    /// The node's id.
    pub node: String,
    /// `agent` or `tool`.
    pub kind: &'static str,
    /// An agent's adapter.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub adapter: Option<String>,
    /// `step` (its own), `workflow`, or `none` (unconfined: declared, or nothing declared).
    pub sandbox: &'static str,
    /// Where it may write (unconfined: anywhere).
    pub writes: Vec<String>,
    /// What it may not read (unconfined: nothing hidden).
    pub hidden: Vec<String>,
    /// The hosts it may reach (unconfined: any).
    pub hosts: Vec<String>,
    /// The variables holding secrets it is given: an agent CLI's model key, a tool's own
    /// `env` names, MCP servers' variables.
    pub secrets: Vec<String>,
    /// An agent's granted tools.
    pub tools: Vec<String>,
    /// An agent's permission mode.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub permission: Option<String>,
}

/// The reach of every agent and tool of `workflow`, in file order.
#[must_use]
pub fn reach(workflow: &Workflow) -> Vec<StepReach> {
    workflow
        .nodes
        .iter()
        .filter_map(|node| step_reach(workflow, node))
        .collect()
}

fn step_reach(workflow: &Workflow, node: &Node) -> Option<StepReach> {
    let (kind, own, provider) = match &node.kind {
        NodeKind::Agent(agent) => {
            let provider = workflow
                .agent_provider_name(agent)
                .and_then(|name| workflow.provider(&name.value));
            ("agent", agent.sandbox.as_ref(), provider)
        }
        NodeKind::Tool(tool) => ("tool", tool.sandbox.as_ref(), None),
        _ => return None,
    };
    let adapter = provider.map(|provider| provider.adapter.value.clone());
    let (sandbox, declared): (&'static str, Option<&Sandbox>) = match (own, &workflow.sandbox) {
        (Some(own), _) if own.confines() => ("step", Some(own)),
        (Some(_), _) => ("none", None),
        (None, Some(all)) if all.confines() => ("workflow", Some(all)),
        _ => ("none", None),
    };
    let adapter_name = adapter.as_deref().unwrap_or_default();
    let (writes, hidden, hosts) = match declared {
        Some(sandbox) => {
            let mut writes = vec![
                "the workspace".to_owned(),
                "a private temp directory".to_owned(),
            ];
            writes.extend(sandbox.write.iter().map(|path| path.value.clone()));
            writes.extend(
                cli_home(adapter_name)
                    .iter()
                    .map(|path| format!("~/{path}")),
            );
            let mut hidden: Vec<String> = CREDENTIAL_STORES
                .iter()
                .filter(|store| !cli_home(adapter_name).contains(store))
                .map(|store| format!("~/{store}"))
                .collect();
            hidden.extend(sandbox.hide.iter().map(|path| path.value.clone()));
            let mut hosts: Vec<String> = sandbox
                .network
                .iter()
                .map(|host| host.value.clone())
                .collect();
            match provider {
                // Its model through atomic's gateway, a port of this machine.
                Some(provider) if provider.key_held() => {
                    hosts.push("127.0.0.1 (atomic's model gateway)".to_owned());
                }
                Some(provider) => {
                    match &provider.base_url {
                        Some(url) => hosts.push(url.value.clone()),
                        None => hosts.extend(
                            cli_endpoints(adapter_name)
                                .iter()
                                .map(|host| (*host).to_owned()),
                        ),
                    }
                    hosts.extend(configured_endpoints(provider));
                }
                None => {}
            }
            (writes, hidden, hosts)
        }
        None => (
            vec!["anywhere".to_owned()],
            Vec::new(),
            vec!["any".to_owned()],
        ),
    };
    let (secrets, tools, permission) = match &node.kind {
        NodeKind::Agent(agent) => {
            // A key atomic holds (a model API's, or one behind its model gateway) is not
            // given to the agent: it gets a placeholder.
            let mut secrets: Vec<String> = provider
                .filter(|provider| !provider.key_held())
                .and_then(|provider| provider.api_key_env.as_ref())
                .map(|key| vec![key.value.clone()])
                .unwrap_or_default();
            for server in workflow.mcp.iter().chain(&agent.mcp) {
                secrets.extend(server.env.iter().map(|env| env.name.value.clone()));
            }
            let permission = agent
                .permission
                .as_ref()
                .map(|mode| permission_name(mode.value).to_owned());
            (
                secrets,
                agent.tools.iter().map(|tool| tool.value.clone()).collect(),
                permission,
            )
        }
        NodeKind::Tool(tool) => (
            tool.env
                .iter()
                .map(|(name, _)| name.value.clone())
                .collect(),
            Vec::new(),
            None,
        ),
        _ => return None,
    };
    Some(StepReach {
        node: node.id.value.clone(),
        kind,
        adapter,
        sandbox,
        writes,
        hidden,
        hosts,
        secrets,
        tools,
        permission,
    })
}

fn permission_name(mode: PermissionMode) -> &'static str {
    match mode {
        PermissionMode::Default => "default",
        PermissionMode::AcceptEdits => "accept-edits",
        PermissionMode::Bypass => "bypass",
        PermissionMode::Plan => "plan",
        PermissionMode::Ask => "ask",
    }
}

/// The reach as text, one block per step.
#[must_use]
pub fn text(steps: &[StepReach]) -> String {
    let mut out = String::new();
    for step in steps {
        let what = match &step.adapter {
            Some(adapter) => format!("{} `{}` ({adapter})", step.kind, step.node),
            None => format!("{} `{}`", step.kind, step.node),
        };
        out.push_str(&format!("{what}: sandbox {}\n", step.sandbox));
        let list = |items: &[String]| {
            if items.is_empty() {
                "—".to_owned()
            } else {
                items.join(", ")
            }
        };
        out.push_str(&format!("  writes   {}\n", list(&step.writes)));
        if step.sandbox != "none" {
            let shown: Vec<String> = step.hidden.iter().take(4).cloned().collect();
            let more = step.hidden.len().saturating_sub(shown.len());
            let more = if more > 0 {
                format!(" and {more} more (`--format json` lists them)")
            } else {
                String::new()
            };
            out.push_str(&format!("  hidden   {}{more}\n", list(&shown)));
        }
        out.push_str(&format!("  hosts    {}\n", list(&step.hosts)));
        out.push_str(&format!("  secrets  {}\n", list(&step.secrets)));
        if step.kind == "agent" {
            out.push_str(&format!("  tools    {}\n", list(&step.tools)));
            out.push_str(&format!(
                "  mode     {}\n",
                step.permission
                    .as_deref()
                    .unwrap_or("the adapter's default")
            ));
        }
    }
    out
}
