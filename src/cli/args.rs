//! The command-line grammar (clap derive).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// A declarative workflow compiler and interpreter for AI coding-agent workflows.
#[derive(Debug, Parser)]
#[command(name = "atomic", version, about, propagate_version = true)]
pub struct Cli {
    /// More log output on stderr (-v info, -vv debug, -vvv trace); RUST_LOG overrides.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
    /// The subcommand.
    #[command(subcommand)]
    pub command: Command,
}

/// Every subcommand.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Parse and check workflows; report every problem.
    Check(CheckArgs),
    /// Print the lowered graph that will execute, as Graphviz DOT or Mermaid.
    Graph(GraphArgs),
    /// Run the language server on stdin/stdout (for editors); logs go to stderr.
    Lsp,
}

/// `atomic check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Workflow files (or discovered workflow names); none: every workflow in the project.
    pub files: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Pretty)]
    pub format: Format,
    /// Also print the worst-case budget: agent calls, tool runs, wall time, cost.
    #[arg(long)]
    pub budget: bool,
    /// Wrap pretty output at this width (default: the terminal's, or 100).
    #[arg(long)]
    pub width: Option<usize>,
}

/// Diagnostic output formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Human-readable reports with source excerpts.
    Pretty,
    /// A JSON array, one object per diagnostic.
    Json,
    /// SARIF 2.1.0, for code-scanning UIs.
    Sarif,
}

/// `atomic graph`.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("format").args(["dot", "mermaid"])))]
pub struct GraphArgs {
    /// The workflow file (or a discovered workflow name).
    pub file: PathBuf,
    /// Graphviz DOT (the default).
    #[arg(long)]
    pub dot: bool,
    /// Mermaid flowchart.
    #[arg(long)]
    pub mermaid: bool,
}
