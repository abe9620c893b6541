//! Stage 2's output: the resolved, typed workflow. Data only — no IO, no logic beyond
//! lookups and the value semantics both the checker and the runtime use ([`value`]). Every element keeps its [`Span`](crate::source::Span) so later stages can point
//! at the source. Serialises with serde; `schemas/workflow.schema.json` describes that form.
//!
//! Nodes live in one arena ([`Workflow::nodes`]) addressed by [`NodeIdx`]; blocks list
//! indices in statement order. The KDL syntax of each item is shown in its doc comment and
//! fully in `grammar/README.md`.

mod adapter;
mod custom_tool;
mod definition;
mod mcp;
pub mod models;
mod node;
mod price;
mod sandbox;
mod types;
pub mod value;
mod workflow;

pub use adapter::{
    ADAPTERS, AdapterInfo, AdapterOption, KNOWN_WIRES, KeyHolder, KnownWire, MCP_ADAPTERS,
    OptionKind, OptionProblem, adapter_info, opencode_config, opencode_model_endpoint, plays_back,
    takes_mcp,
};
pub use custom_tool::{CustomTool, ToolArgument};
pub use definition::{DefinitionKind, UsedDefinition};
pub use mcp::{McpEnv, McpServer, McpTransport};
pub use node::{
    Agent, AnswerType, AutoApprove, Branch, ContextAction, ContextPolicy, Decision, Emit, ForEach,
    Isolation, Jump, Loop, Node, NodeKeyword, NodeKind, OnError, OutputMap, OutputSource, Parallel,
    ParseMode, PermissionMode, Retry, Route, Set, Strategy, Subgraph, TaskLoop, TaskStatus, Tool,
    Wait, WaitChoice,
};
pub use price::{ModelPrice, PriceOverride, model_matches};
pub use sandbox::Sandbox;
pub use types::{Block, Duration, ErrorClass, Expr, NodeIdx, Reducer, Template, ValueType};
pub use workflow::{Hook, Input, Limits, ProviderDecl, StateField, Workflow, WorkspaceMode};
