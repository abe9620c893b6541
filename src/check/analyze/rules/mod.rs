//! One file per rule, each documented as *What it does / Why is this bad? / Example / Use
//! instead*. `missing-subgraph` and `subgraph-recursion` live in `callees`, which loads the
//! called workflows.

pub(super) mod custom_tool_use;
pub(super) mod default_schema;
pub(super) mod hook_cannot_block;
pub(super) mod inline_secret;
pub(super) mod invalid_answer_type;
pub(super) mod isolation_needs_snapshots;
pub(super) mod parallel_shared_edits;
pub(super) mod parallel_write_conflict;
pub(super) mod possibly_unset;
pub(super) mod schema_file;
pub(super) mod shell_command;
pub(super) mod sibling_branch_read;
pub(super) mod subgraph_input_mismatch;
pub(super) mod subgraph_output_mismatch;
pub(super) mod tainted_command;
pub(super) mod template_syntax;
pub(super) mod type_mismatch;
pub(super) mod unbounded_append;
pub(super) mod undeclared_env;
pub(super) mod undeclared_variable;
pub(super) mod undefined_output;
pub(super) mod unguarded_side_effect;
pub(super) mod unknown_filter;
pub(super) mod unsandboxed_bypass;
pub(super) mod unused_input;
pub(super) mod unused_provider;
pub(super) mod unused_state_field;
