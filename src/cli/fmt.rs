//! `atomic fmt`: rewrite workflow files in canonical layout (`syntax::format`).

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use super::args::FmtArgs;
use super::render::{self, pretty::Style};
use super::{Exit, project};
use crate::diagnostic::Diagnostic;
use crate::source::{ReadError, Sources};
use crate::syntax::format::{self, FormatError};
use crate::syntax::kdl;

/// Runs `atomic fmt`.
pub(super) fn run(args: &FmtArgs) -> Exit {
    let paths: Vec<PathBuf> = if args.files.is_empty() {
        project::Project::discover().workflow_files()
    } else {
        // Paths only, not workflow names: a name may be a built-in, which is not ours to
        // rewrite.
        args.files.clone()
    };
    if paths.is_empty() {
        eprintln!("error: no workflow files given and none found in `.atomic/workflows/`");
        eprintln!("help: run `atomic fmt path/to/flow.kdl`");
        return Exit::Usage;
    }

    let mut exit = Exit::Ok;
    let mut stdout = std::io::stdout().lock();
    for path in &paths {
        let text = match crate::source::Files::read(&crate::disk::Disk, path) {
            Ok(text) => text,
            Err(ReadError::NotUtf8(bad)) => {
                // A problem in the file, shown where it is; never rewritten.
                let mut sources = Sources::new();
                let file = sources.add(path, bad.text.clone());
                let diagnostics = [Diagnostic::not_utf8(bad.first_bad(file), &bad)];
                report(&sources, &diagnostics);
                exit = worse(exit, Exit::Problems);
                continue;
            }
            Err(error) => {
                eprintln!("error: cannot read `{}`: {error}", path.display());
                exit = Exit::Fatal;
                continue;
            }
        };
        let formatted = match format::format(&text) {
            Ok(formatted) => formatted,
            Err(FormatError::Syntax) => {
                report_syntax_errors(path, &text);
                exit = worse(exit, Exit::Problems);
                continue;
            }
            Err(error @ FormatError::Changed) => {
                eprintln!("error: `{}`: {error}", path.display());
                exit = worse(exit, Exit::Problems);
                continue;
            }
        };
        if args.stdout {
            let _ = stdout.write_all(formatted.as_bytes());
        } else if formatted != text {
            if args.check {
                let _ = writeln!(stdout, "{}", path.display());
                exit = worse(exit, Exit::Problems);
            } else if let Err(error) = std::fs::write(path, &formatted) {
                eprintln!("error: cannot write `{}`: {error}", path.display());
                exit = Exit::Fatal;
            }
        }
    }
    exit
}

/// The parser's diagnostics, rendered as `atomic check` renders them (on stderr: stdout
/// may carry the formatted text).
fn report_syntax_errors(path: &std::path::Path, text: &str) {
    let mut sources = Sources::new();
    let file = sources.add(path, text);
    let diagnostics = kdl::parse(text, file).diagnostics;
    report(&sources, &diagnostics);
}

/// `diagnostics` rendered as `atomic check` renders them, on stderr.
fn report(sources: &Sources, diagnostics: &[Diagnostic]) {
    let color = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    let mut out = render::pretty::render(sources, diagnostics, Style { color, width: 100 });
    out.push_str(&render::pretty::summary(diagnostics, 1));
    out.push('\n');
    let _ = std::io::stderr().write_all(out.as_bytes());
}

/// Fatal outranks problems, which outrank success.
fn worse(current: Exit, new: Exit) -> Exit {
    if current == Exit::Fatal { current } else { new }
}
