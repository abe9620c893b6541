//! `atomic graph`: print the lowered graph — what will execute — as DOT or Mermaid.

use std::io::Write;

use super::args::GraphArgs;
use super::render::{self, pretty::Style};
use super::{Exit, disk::Disk, project::Project};
use crate::compile;
use crate::lower;
use crate::source::Sources;

/// Runs `atomic graph`.
pub(super) fn run(args: &GraphArgs) -> Exit {
    let project = Project::discover();
    let path = match project.resolve_workflow(&args.file) {
        Ok(path) => path,
        Err(message) => {
            eprintln!("error: {message}");
            return Exit::Fatal;
        }
    };
    let mut sources = Sources::new();
    let (config, _) = project.config(&mut sources);
    let compiled = match compile::compile_path(&mut sources, &path, &Disk, &config) {
        Ok(compiled) => compiled,
        Err(error) => {
            eprintln!("error: cannot read `{}`: {error}", path.display());
            return Exit::Fatal;
        }
    };
    let Some(plan) = &compiled.plan else {
        // No graph without a valid workflow: show why, as `check` would.
        eprint!(
            "{}",
            render::pretty::render(&sources, &compiled.diagnostics, Style::plain(100))
        );
        eprintln!(
            "error: `{}` has errors; fix them to see its graph",
            path.display()
        );
        return Exit::Problems;
    };
    let text = if args.mermaid {
        lower::mermaid(plan)
    } else {
        lower::dot(plan)
    };
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
    Exit::Ok
}
