//! Discovery of declarations that live outside a workflow file, read through
//! [`Files`](crate::source::Files) and pure like the static stages: custom tools
//! (`.atomic/tools/*.kdl`, resolved into [`CustomTool`](crate::ir::CustomTool)), and the
//! agents, skills and commands other tools define (`.claude/agents/*.md`, …), found by name.
//! Problems come back as diagnostics against the declaration files. It does not check a
//! workflow's uses of them (that is `check`'s) nor run them (`runtime`).

pub mod agents;
mod arguments;
mod discover;
mod tool_file;

pub use discover::{discover_tools, tool_dirs};
pub use tool_file::resolve_tool_file;
