//! Discovery of declarations that live outside a workflow file: custom tools
//! (`.atomic/tools/*.kdl`). Pure like the static stages: files are listed and read through
//! [`Files`](crate::source::Files), problems come back as diagnostics against the
//! declaration files, and the resolved declarations are IR ([`CustomTool`](crate::ir::CustomTool)).
//!
//! Input: a workflow's path and the user's `~/.atomic`. Output: the tools it may use.
//! It does not check a workflow's uses of them (that is `check`'s) nor run them (`runtime`).

mod arguments;
mod discover;
mod entries;
mod tool_file;

pub use discover::{discover_tools, tool_dirs};
pub use tool_file::resolve_tool_file;
