//! `atomic check`: compile workflows and report every problem.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use super::args::{CheckArgs, Format};
use super::render::{self, pretty::Style};
use super::{Exit, disk::Disk, project};
use crate::compile::{self, Compiled};
use crate::diagnostic::{Diagnostic, Severity};
use crate::lower;
use crate::source::Sources;

/// Runs `atomic check`.
pub(super) fn run(args: &CheckArgs) -> Exit {
    let project = project::Project::discover();
    let paths: Vec<PathBuf> = if args.files.is_empty() {
        project.workflow_files()
    } else {
        match args
            .files
            .iter()
            .map(|file| project.resolve_workflow(file))
            .collect::<Result<Vec<_>, _>>()
        {
            Ok(paths) => paths,
            Err(message) => {
                eprintln!("error: {message}");
                return Exit::Fatal;
            }
        }
    };
    if paths.is_empty() {
        eprintln!("error: no workflow files given and none found in `.atomic/workflows/`");
        eprintln!("help: run `atomic check path/to/flow.kdl`");
        return Exit::Usage;
    }

    let mut sources = Sources::new();
    let (config, mut diagnostics) = project.config(&mut sources);
    let mut compiled: Vec<Compiled> = Vec::new();
    // Files that could not be read at all: reported in every format, never passed over.
    let mut unreadable = 0;
    for path in &paths {
        match compile::compile_path(&mut sources, path, &Disk, &config) {
            Ok(result) => {
                diagnostics.extend(result.diagnostics.iter().cloned());
                compiled.push(result);
            }
            Err(error) => {
                diagnostics.push(compile::unreadable_input(&mut sources, path, &error));
                unreadable += 1;
            }
        }
    }

    // Problems of a file several workflows read (a custom tool's file, a called workflow)
    // are found once per workflow: report them once.
    let mut seen = std::collections::HashSet::new();
    diagnostics.retain(|d| seen.insert((d.span, d.code, d.message.clone())));

    let mut stdout = std::io::stdout().lock();
    let counts = Counts {
        checked: compiled.len(),
        unreadable,
    };
    let output = match args.format {
        _ if args.reach => reach_report(&sources, &compiled, args.format),
        Format::Pretty => pretty_report(&sources, &diagnostics, &compiled, args, counts),
        Format::Json => render::json::render(&sources, &diagnostics),
        Format::Sarif => render::sarif::render(&sources, &diagnostics),
    };
    let _ = stdout.write_all(output.as_bytes());

    if unreadable > 0 {
        Exit::Fatal
    } else if diagnostics.iter().any(|d| d.severity <= Severity::Warning) {
        // Errors and warnings are problems (as in actionlint); notes are not.
        Exit::Problems
    } else {
        Exit::Ok
    }
}

/// `--reach`: each workflow's agents and tools and what they may touch.
fn reach_report(sources: &Sources, compiled: &[Compiled], format: Format) -> String {
    let mut workflows = Vec::new();
    let mut text = String::new();
    for result in compiled {
        let Some(plan) = &result.plan else { continue };
        let path = sources.get(result.file).path.display().to_string();
        let steps = crate::check::reach::reach(plan.workflow());
        text.push_str(&format!(
            "reach of {path}:\n{}",
            crate::check::reach::text(&steps)
        ));
        workflows.push(serde_json::json!({"file": path, "steps": steps}));
    }
    match format {
        Format::Pretty => text,
        _ => format!("{}\n", serde_json::Value::Array(workflows)),
    }
}

/// How many workflow files were checked, and how many could not be read.
#[derive(Clone, Copy)]
struct Counts {
    checked: usize,
    unreadable: usize,
}

fn pretty_report(
    sources: &Sources,
    diagnostics: &[Diagnostic],
    compiled: &[Compiled],
    args: &CheckArgs,
    counts: Counts,
) -> String {
    let color = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    let width = args.width.unwrap_or(100);
    let mut out = render::pretty::render(sources, diagnostics, Style { color, width });
    if args.budget {
        for result in compiled {
            if let Some(plan) = &result.plan {
                let path = sources.get(result.file).path.display();
                out.push_str(&format!("budget of {path}:\n{}\n", lower::budget(plan)));
            }
        }
    }
    if diagnostics.is_empty() {
        out.push_str(&format!(
            "ok: {} checked, no problems\n",
            plural(counts.checked, "workflow")
        ));
    } else {
        out.push_str(&render::pretty::summary(diagnostics, counts.checked));
        if counts.unreadable > 0 {
            out.push_str(&format!(
                "; {} could not be read",
                plural(counts.unreadable, "file")
            ));
        }
        out.push('\n');
    }
    out
}

fn plural(n: usize, word: &str) -> String {
    format!("{n} {word}{}", if n == 1 { "" } else { "s" })
}
