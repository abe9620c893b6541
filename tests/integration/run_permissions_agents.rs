//! `permission="ask"` with the real OpenCode and Copilot CLIs against fake model servers.
