//! `atomic mcp`: the project's custom tools served over MCP (stdio).
