//! atomic: a declarative workflow compiler and interpreter for AI coding-agent workflows.
//!
//! The pipeline, one module per stage, each importing only the stages before it:
//! `syntax` (KDL text → syntax tree) → `check` (→ typed `ir`) → `lower` (→ executable
//! `Plan`) → `runtime` (runs a plan, with `providers` and `store`). `registry` discovers
//! declarations kept outside the workflow (custom tools) for `compile`. `compile` is the
//! one façade over the static stages; `cli` and `lsp` sit on top.

pub mod check;
pub mod cli;
pub mod compile;
pub mod diagnostic;
pub mod disk;
pub mod ir;
pub mod lower;
pub mod lsp;
pub mod mcp;
pub mod process;
pub mod providers;
pub mod registry;
pub mod runtime;
pub mod sandbox;
pub mod source;
pub mod store;
pub mod syntax;
pub mod telemetry;
#[cfg(feature = "temporal")]
pub mod temporal;
pub mod tls;
pub mod view;
pub mod workspace;
