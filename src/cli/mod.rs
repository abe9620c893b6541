//! The command line: argument parsing, one file per subcommand, renderers, exit codes.
//! The only module that prints or reads the process environment.

// The command line is the one module that talks to the terminal.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod args;
pub mod builtin;
mod cancel;
mod chat;
mod check;
mod completions;
pub mod disk;
mod execute;
mod exit;
mod explain;
mod fmt;
mod graph;
mod history;
mod list;
mod lsp;
mod mcp;
mod output;
mod progress;
pub mod project;
pub mod render;
mod resume;
mod run;
mod runs;
mod schema;
mod temporal;
mod tty;
pub mod ui;

pub use args::{Cli, Command};
pub use exit::Exit;

use std::ffi::OsString;
use std::process::ExitCode;

use clap::Parser;

/// Runs the `atomic` command line and returns the process exit code.
pub fn main(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(error) => {
            // clap prints help/version to stdout and usage errors to stderr itself.
            let _ = error.print();
            return if error.use_stderr() {
                Exit::Usage.into()
            } else {
                Exit::Ok.into()
            };
        }
    };
    init_tracing(cli.verbose);
    let exit = match cli.command {
        Command::Check(args) => check::run(&args),
        Command::Graph(args) => graph::run(&args),
        Command::Lsp => lsp::run(),
        Command::Mcp(args) => mcp::run(&args),
        Command::Run(args) => run::run(&args),
        Command::Resume(args) => resume::run(&args),
        Command::Runs(args) => runs::run(&args),
        Command::Schema(args) => schema::run(&args),
        Command::Explain(args) => explain::run(&args),
        Command::Cancel(args) => cancel::run(&args),
        Command::Rewind(args) => history::rewind(&args),
        Command::Fork(args) => history::fork(&args),
        Command::Ui(args) => ui::run(&args),
        Command::Chat(args) => chat::run(&args),
        Command::List(args) => list::run(&args),
        Command::Fmt(args) => fmt::run(&args),
        Command::Completions(args) => completions::run(&args),
        Command::Worker(args) => temporal::worker(&args),
    };
    exit.into()
}

fn init_tracing(verbose: u8) {
    let default = match verbose {
        0 => "warn",
        1 => "info",
        2 => "debug",
        _ => "trace",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    // Logs go to stderr: stdout carries reports, JSON streams and the LSP protocol.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}
