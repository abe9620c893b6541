//! The workflow and its declarations: inputs, state, providers, limits, hooks.

use serde::{Deserialize, Deserializer, Serialize};

use super::{
    Agent, Block, CustomTool, Duration, Expr, KeyHolder, KnownWire, McpServer, Node, NodeIdx,
    NodeKind, Reducer, ValueType, adapter_info, opencode_model_endpoint,
};
use crate::source::{Span, Spanned};

/// A resolved workflow.
///
/// ```kdl
/// workflow "review-and-fix" version="1.0.0" min-atomic-version="0.1.0" provider="claude" model="…" {
///     description "…"
///     alias "rf"                       // more names for discovery
///     input "target" type="string" description="…" default="src/"   // required unless default
///     env "GITHUB_TOKEN"               // environment variables templates may read as env.NAME
///     state { field "…" … }
///     provider "claude" adapter="anthropic" model="…"
///     limits max-steps=200 timeout="2h" max-budget-usd=5.0
///     on "tool.before" { run "./hooks/check.sh" }
///     mcp "files" { command "npx" "-y" "@modelcontextprotocol/server-filesystem" "." }
///     …statements…
/// }
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Workflow {
    /// `workflow "<name>"`.
    pub name: Spanned<String>,
    /// `version="1.2.3"` (semver).
    pub version: Option<Spanned<String>>,
    /// `min-atomic-version="0.1.0"`.
    pub min_atomic_version: Option<Spanned<String>>,
    /// `description "…"`.
    pub description: Option<String>,
    /// `alias "…"` children.
    pub aliases: Vec<Spanned<String>>,
    /// `input` children.
    pub inputs: Vec<Input>,
    /// `env "NAME"` children: the only environment variables templates may read.
    pub env: Vec<Spanned<String>>,
    /// `state { field … }`.
    pub state: Vec<StateField>,
    /// `state version=N`: the state's version (1 when not given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state_version: Option<Spanned<u32>>,
    /// `provider` children.
    pub providers: Vec<ProviderDecl>,
    /// `provider="…"` on the workflow: the default for agents that name none.
    pub default_provider: Option<Spanned<String>>,
    /// `model="…"` on the workflow: the default between node and provider.
    pub default_model: Option<Spanned<String>>,
    /// `limits …`.
    pub limits: Limits,
    /// `workspace "snapshot"|"off"`: whether the run records its files around each step
    /// (the project's `.atomic/config.kdl` says when the workflow does not).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<Spanned<WorkspaceMode>>,
    /// `sandbox`: every step's, unless the step has its own (the project's
    /// `.atomic/config.kdl` may give one when the workflow does not).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<super::Sandbox>,
    /// `on "<event>" { run … }` hooks.
    pub hooks: Vec<Hook>,
    /// `mcp` servers every agent may use.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mcp: Vec<McpServer>,
    /// The custom tools (`.atomic/tools/*.kdl`) the workflow uses, by name: filled in by
    /// `compile` after discovery, so a plan carries what its `tool use=` nodes and agents run.
    #[serde(default)]
    pub custom_tools: Vec<CustomTool>,
    /// Every node, statement or nested, in source order. [`NodeIdx`] indexes this.
    pub nodes: Vec<Node>,
    /// The top-level statements.
    pub body: Block,
    /// The whole `workflow` node.
    pub span: Span,
}

impl Workflow {
    /// The node at `idx`.
    ///
    /// # Panics
    /// If `idx` did not come from this workflow (an internal bug).
    #[must_use]
    pub fn node(&self, idx: NodeIdx) -> &Node {
        self.nodes
            .get(idx.index())
            .expect("node indices come from this workflow")
    }

    /// The node with this id.
    #[must_use]
    pub fn find_node(&self, id: &str) -> Option<NodeIdx> {
        self.nodes
            .iter()
            .position(|node| node.id.value == id)
            .map(|index| NodeIdx(index as u32))
    }

    /// The state field with this name.
    #[must_use]
    pub fn field(&self, name: &str) -> Option<&StateField> {
        self.state.iter().find(|field| field.name.value == name)
    }

    /// The input with this name.
    #[must_use]
    pub fn input(&self, name: &str) -> Option<&Input> {
        self.inputs.iter().find(|input| input.name.value == name)
    }

    /// The provider with this name.
    #[must_use]
    pub fn provider(&self, name: &str) -> Option<&ProviderDecl> {
        self.providers
            .iter()
            .find(|provider| provider.name.value == name)
    }

    /// The provider an agent runs on: its own `provider=`, else that of the agent nodes it
    /// `use`s (nearest first), else the workflow default. `None` when none is named or the
    /// name is not declared.
    #[must_use]
    pub fn agent_provider(&self, agent: &Agent) -> Option<&ProviderDecl> {
        self.provider(&self.agent_provider_name(agent)?.value)
    }

    /// The provider an agent names, as written: its own `provider=`, else its `use` source's
    /// (followed through other agent nodes), else the workflow's `provider=`, else the one
    /// provider the workflow declares. `None` when it is ambiguous or there is none. The
    /// checker and the runtime both ask this, so they never disagree.
    #[must_use]
    pub fn agent_provider_name<'a>(&'a self, agent: &'a Agent) -> Option<&'a Spanned<String>> {
        self.agent_chain(agent)
            .iter()
            .find_map(|agent| agent.provider.as_ref())
            .or(self.default_provider.as_ref())
            .or(match self.providers.as_slice() {
                [only] => Some(&only.name),
                _ => None,
            })
    }

    /// `agent`, then the agents its `use=` chain reaches, nearest first: the order it
    /// inherits settings in (the nearest that sets one wins). Bounded and cycle-safe.
    #[must_use]
    pub fn agent_chain<'a>(&'a self, agent: &'a Agent) -> Vec<&'a Agent> {
        let mut chain = vec![agent];
        let mut current = agent;
        while let Some(name) = &current.use_ {
            let Some(NodeKind::Agent(next)) =
                self.find_node(&name.value).map(|idx| &self.node(idx).kind)
            else {
                break;
            };
            if chain.len() > 16 || chain.iter().any(|seen| std::ptr::eq(*seen, &**next)) {
                break;
            }
            chain.push(next);
            current = next;
        }
        chain
    }

    /// The custom tool with this name, among those the workflow uses.
    #[must_use]
    pub fn custom_tool(&self, name: &str) -> Option<&CustomTool> {
        self.custom_tools
            .iter()
            .find(|tool| tool.name.value == name)
    }

    /// Every place the workflow names a custom tool, in node order: `tool use=` nodes and
    /// the `tools` of agents on adapters whose tools are custom tools (`anthropic`,
    /// `openai`). Other adapters' `tools` are their own built-in tool names.
    #[must_use]
    pub fn custom_tool_uses(&self) -> Vec<&Spanned<String>> {
        let mut uses = Vec::new();
        for node in &self.nodes {
            match &node.kind {
                NodeKind::Tool(tool) => uses.extend(&tool.use_),
                NodeKind::Agent(agent) if !agent.tools.is_empty() => {
                    let custom = self
                        .agent_provider(agent)
                        .and_then(|provider| adapter_info(&provider.adapter.value))
                        .is_some_and(|info| info.custom_tools);
                    if custom {
                        uses.extend(&agent.tools);
                    }
                }
                _ => {}
            }
        }
        uses
    }

    /// Whether an agent on a CLI adapter (one with tools of its own) is offered tools: a
    /// custom tool's name among them cannot reach the CLI, so the checker compares them.
    #[must_use]
    pub fn offers_cli_tools(&self) -> bool {
        self.nodes.iter().any(|node| match &node.kind {
            NodeKind::Agent(agent) if !agent.tools.is_empty() => self
                .agent_provider(agent)
                .and_then(|provider| adapter_info(&provider.adapter.value))
                .is_some_and(|info| info.tools && !info.custom_tools),
            _ => false,
        })
    }
}

/// `input "<name>" type="…" default=… description="…" required=#true`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Input {
    /// The name templates read as `input.<name>`.
    pub name: Spanned<String>,
    /// `type=` / `schema=`; `any` if absent.
    pub ty: ValueType,
    /// `default=`; an input without default is required. `Some(Null)` (optional, reads as
    /// none) is written as `null`, `None` by leaving the key out.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present"
    )]
    pub default: Option<serde_json::Value>,
    /// Where `default=` is written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_span: Option<Span>,
    /// `description=`.
    pub description: Option<String>,
    /// The whole `input` node.
    pub span: Span,
}

/// `field "<name>" type="…" default=… reduce="…" merge-by="…" max-items=N description="…"`.
///
/// `default` is a KDL value, or a string holding JSON for arrays and objects
/// (`default="[]"`, `default="{\"a\":1}"`) when `type` is `array` or `object`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StateField {
    /// The name templates read as `state.<name>`.
    pub name: Spanned<String>,
    /// The declared type.
    pub ty: ValueType,
    /// The initial value; `None` means unset until written (reads before are errors).
    /// `Some(Null)` is written as `null`, `None` by leaving the key out.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present"
    )]
    pub default: Option<serde_json::Value>,
    /// Where `default=` is written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_span: Option<Span>,
    /// How writes combine.
    pub reducer: Reducer,
    /// `max-items=N` for `append` fields: keep only the last N items.
    pub max_items: Option<u32>,
    /// `description=`.
    pub description: Option<String>,
    /// `migrate=`: the field's value when a run stored at an earlier state version resumes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub migrate: Option<Expr>,
    /// The whole `field` node.
    pub span: Span,
}

/// Reads a present value, `null` included, as `Some`: with `#[serde(default)]` an absent key
/// is `None`, so `Some(Null)` and `None` (different meanings for defaults) both round-trip.
fn present<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<serde_json::Value>, D::Error> {
    serde_json::Value::deserialize(deserializer).map(Some)
}

/// `provider "<name>" adapter="…" model="…" base-url="…" api-key-env="…" { option "k" v … }`.
///
/// Adapter-specific settings: `command` (argv for the `command` adapter, as arguments of a
/// `command` child), `cassette="path"` for `replay`, `latency="50ms"` for `in-process`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProviderDecl {
    /// The name nodes refer to with `provider="…"`.
    pub name: Spanned<String>,
    /// `adapter=`: one of [`ADAPTERS`](super::ADAPTERS).
    pub adapter: Spanned<String>,
    /// `model=`: the provider's default model.
    pub model: Option<Spanned<String>>,
    /// `base-url=`.
    pub base_url: Option<Spanned<String>>,
    /// `api-key-env=`: the environment variable holding the key (never the key itself).
    pub api_key_env: Option<Spanned<String>>,
    /// `cassette=` (replay), path relative to the workflow file.
    pub cassette: Option<Spanned<String>>,
    /// `command "prog" "arg"…` child (command adapter).
    pub command: Vec<Spanned<String>>,
    /// Other settings: `option "name" value` children and unrecognised-but-allowed
    /// adapter properties, as JSON.
    pub options: serde_json::Map<String, serde_json::Value>,
    /// The whole `provider` node.
    pub span: Span,
}

impl ProviderDecl {
    /// `provider "<name>" adapter="<adapter>"` and nothing else: the adapter's defaults
    /// (what `atomic chat` talks to; what tests build).
    #[must_use]
    pub fn bare(name: &str, adapter: &str) -> Self {
        Self {
            name: Spanned::new(name.to_owned(), Span::default()),
            adapter: Spanned::new(adapter.to_owned(), Span::default()),
            model: None,
            base_url: None,
            api_key_env: None,
            cassette: None,
            command: Vec::new(),
            options: serde_json::Map::new(),
            span: Span::default(),
        }
    }

    /// Whether atomic holds this provider's key (a model API's calls are atomic's own; an
    /// agent CLI behind atomic's model gateway gets a placeholder): the agent's processes
    /// never see it, and it needs no route to the model's host of its own.
    #[must_use]
    pub fn key_held(&self) -> bool {
        let Some(key) = &self.api_key_env else {
            return false;
        };
        let read_as = match self.options.get("api-key-var") {
            Some(serde_json::Value::String(var)) => var.as_str(),
            _ => key.value.as_str(),
        };
        let Some(info) = adapter_info(&self.adapter.value) else {
            return false;
        };
        match info.key_holder {
            KeyHolder::Atomic => true,
            KeyHolder::AtomicWithBaseUrl => self.base_url.is_some(),
            KeyHolder::AtomicOnKnownWire => KnownWire::of(read_as).is_some(),
            KeyHolder::AtomicOnKnownModel => {
                self.base_url.is_none()
                    && opencode_model_endpoint(
                        self.model.as_ref().map(|model| model.value.as_str()),
                        self.options.get("config"),
                    )
                    .is_some()
            }
            KeyHolder::Agent => false,
        }
    }
}

/// `limits max-steps=N timeout="…" max-budget-usd=F`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Limits {
    /// Most steps a run may take.
    pub max_steps: Option<Spanned<u64>>,
    /// Wall-clock limit for the run.
    pub timeout: Option<Spanned<Duration>>,
    /// Most the run may spend on priced providers.
    pub max_budget_usd: Option<Spanned<f64>>,
}

/// `on "<event>" { run "prog" "arg"… }`: a command run on a unified event
/// (`session.start`, `session.end`, `tool.before`, `tool.after`, `node.start`, `node.end`,
/// `run.start`, `run.end`). A non-zero exit of a `*.before` hook blocks the action.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Hook {
    /// The event name.
    pub event: Spanned<String>,
    /// The command argv.
    pub run: Vec<Spanned<String>>,
    /// The whole `on` node.
    pub span: Span,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::ValueType;

    fn input(default: Option<serde_json::Value>) -> Input {
        Input {
            name: Spanned::new("notes".into(), Span::default()),
            ty: ValueType::Any,
            default,
            default_span: None,
            description: None,
            span: Span::default(),
        }
    }

    #[test]
    fn a_null_default_and_no_default_round_trip_apart() {
        for default in [
            None,
            Some(serde_json::Value::Null),
            Some(serde_json::json!(1)),
        ] {
            let json = serde_json::to_value(input(default.clone())).expect("serialises");
            assert_eq!(json.get("default"), default.as_ref());
            let back: Input = serde_json::from_value(json).expect("deserialises");
            assert_eq!(back.default, default);
        }
    }
}

/// Whether a run records its workspace's files around the steps that can change them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WorkspaceMode {
    /// Snapshots before and after each agent and tool step: exact retries and resumes,
    /// per-step diffs, rewind and fork.
    #[default]
    Snapshot,
    /// No snapshots: the files are the steps' own business.
    Off,
}

impl WorkspaceMode {
    /// The mode a `workspace` argument names (`None`: not a mode).
    #[must_use]
    pub fn named(name: &str) -> Option<Self> {
        match name {
            "snapshot" => Some(Self::Snapshot),
            "off" => Some(Self::Off),
            _ => None,
        }
    }
}
