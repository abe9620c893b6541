//! A discovered agent, skill or command that an `agent` node's `use=` names, copied into
//! the IR when the workflow is compiled so `run` and `resume` see the same text.

use serde::{Deserialize, Serialize};

/// What a `use="<prefix>:<name>"` names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DefinitionKind {
    /// `agent:<name>`: its body is system prompt; its model and tools are defaults.
    Agent,
    /// `skill:<name>`: its body is added to the system prompt as instructions.
    Skill,
    /// `command:<name>`: its body is the prompt, with `$ARGUMENTS` and `$1`…`$9` expanded.
    Command,
}

impl DefinitionKind {
    /// Every kind, in the order their prefixes are listed to users.
    pub const ALL: [Self; 3] = [Self::Agent, Self::Skill, Self::Command];

    /// The prefix written in `use=`.
    #[must_use]
    pub fn prefix(self) -> &'static str {
        match self {
            Self::Agent => "agent",
            Self::Skill => "skill",
            Self::Command => "command",
        }
    }

    /// The kind written as `prefix`.
    #[must_use]
    pub fn from_prefix(prefix: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|kind| kind.prefix() == prefix)
    }
}

/// A discovered definition as the runtime needs it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct UsedDefinition {
    /// Agent, skill or command.
    pub kind: DefinitionKind,
    /// The name it was found by.
    pub name: String,
    /// The file it was read from, for messages.
    pub path: String,
    /// The Markdown body after the front matter. Literal text, not a template.
    pub body: String,
    /// The front matter's `model`, used when the node and its `use` chain set none.
    pub model: Option<String>,
    /// The front matter's `tools`, used when the node and its `use` chain grant none.
    pub tools: Vec<String>,
}
