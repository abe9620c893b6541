//! `mcp` declarations: the MCP servers agents may use.

use serde::{Deserialize, Serialize};

use crate::source::{Span, Spanned};

/// An MCP server. Declared in the workflow, every agent gets it; inside an agent, that
/// agent only (a same-named one there replaces the workflow's).
///
/// ```kdl
/// mcp "files" {
///     command "npx" "-y" "@modelcontextprotocol/server-filesystem" "."
///     env "GITHUB_TOKEN"            // passed through from atomic's environment
///     env "MODE" "read-only"        // or set to this value
/// }
/// mcp "docs" url="https://example.com/mcp" bearer-env="DOCS_TOKEN"
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct McpServer {
    /// `mcp "<name>"`.
    pub name: Spanned<String>,
    /// How it is reached.
    pub transport: McpTransport,
    /// `env` children: variables of a stdio server's process.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<McpEnv>,
    /// The whole `mcp` node.
    pub span: Span,
}

/// How an MCP server is reached.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum McpTransport {
    /// `command "program" "arg"…`: started over stdio.
    Stdio {
        /// The program, then its arguments.
        command: Vec<Spanned<String>>,
    },
    /// `url=`: streamable HTTP.
    Http {
        /// The endpoint.
        url: Spanned<String>,
        /// `bearer-env=`: the variable whose value is sent as `Authorization: Bearer …`.
        bearer_env: Option<Spanned<String>>,
    },
}

/// `env "NAME"` (passed through from atomic's environment) or `env "NAME" "value"`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct McpEnv {
    /// The variable.
    pub name: Spanned<String>,
    /// Its value, passed as written; `None`: atomic's own value of the variable.
    pub value: Option<Spanned<String>>,
}
