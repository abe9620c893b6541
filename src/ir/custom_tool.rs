//! A custom tool declared in a `.atomic/tools/*.kdl` file (see `grammar/README.md`,
//! "Custom tool files"): a command that gets its arguments as one JSON object on stdin and
//! answers on stdout. `registry` discovers and resolves these files; `check` checks the
//! workflow's uses against them; `runtime` runs them as `tool use=` nodes and grants them
//! to agents on the HTTP model adapters.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::Duration;
use crate::source::{Span, Spanned};

/// A resolved custom tool.
///
/// ```kdl
/// tool "run-tests" description="Runs the test suite" {
///     argument "filter" type="string" description="Only tests whose name contains this"
///     command "./scripts/run-tests.sh"
///     timeout "10m"
/// }
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CustomTool {
    /// `tool "<name>"`: the name workflows use (`use=`, `tools`) and the model sees.
    pub name: Spanned<String>,
    /// `description=`: what the model is told the tool does.
    pub description: Option<String>,
    /// The arguments: `argument` children, or the properties of the `schema=` file.
    pub arguments: Vec<ToolArgument>,
    /// The JSON Schema of the arguments object: built from `argument` children, or the
    /// `schema=` file as written.
    pub schema: Value,
    /// `command`: the program and its arguments (never a shell unless the command is one).
    pub command: Vec<String>,
    /// `timeout`: the longest one call may take.
    pub timeout: Option<Spanned<Duration>>,
    /// The whole `tool` node, in its own file.
    pub span: Span,
}

/// One argument of a custom tool.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolArgument {
    /// Its name: the key in the JSON object on stdin, and `arg "<name>"` in a `tool` node.
    pub name: Spanned<String>,
    /// Whether a `tool use=` node must give it (`required=`, default `#true`).
    pub required: bool,
}

impl CustomTool {
    /// The argument called `name`.
    #[must_use]
    pub fn argument(&self, name: &str) -> Option<&ToolArgument> {
        self.arguments.iter().find(|arg| arg.name.value == name)
    }
}
