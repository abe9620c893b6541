//! `atomic runs diff RUN [STEP]`: what a run's steps did to the workspace's files — one
//! step's change, or the whole run's (from the files before its first step that recorded
//! them to the files after its last) — as a unified diff (coloured on a terminal), a
//! `--stat` summary, or `--json`.

use std::io::IsTerminal;

use serde_json::json;

use super::files::{self, StepFiles};
use crate::cli::Exit;
use crate::cli::project::Project;
use crate::store::Store;
use crate::workspace::snapshot::{Change, Snapshots};

/// How the diff is printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::cli) enum Format {
    /// A unified diff.
    Patch,
    /// One line per file with its added and removed lines.
    Stat,
    /// The files and the patch as JSON.
    Json,
}

/// Prints the diff of run `prefix` (one step of it with `step`).
pub(in crate::cli) fn run(
    runtime: &tokio::runtime::Runtime,
    project: &Project,
    store: &dyn Store,
    prefix: &str,
    step: Option<&str>,
    format: Format,
) -> Exit {
    let detail = match runtime.block_on(async {
        let id = store.resolve(prefix).await?;
        store.run_detail(&id).await
    }) {
        Ok(detail) => detail,
        Err(error) => return crate::cli::execute::store::report(project, error),
    };
    let run = detail.run.id.clone();
    let steps = files::of_run(&detail);
    let (label, before, after) = match step {
        Some(which) => match files::find(&steps, which) {
            Some(found) => (
                format!("step {} `{}`", found.seq, found.node),
                found.files.before.clone(),
                found.files.after.clone(),
            ),
            None => {
                eprintln!(
                    "error: run `{run}` has no step `{which}` that recorded files{}",
                    steps_hint(&steps)
                );
                return Exit::Problems;
            }
        },
        None => match (steps.first(), steps.last()) {
            (Some(first), Some(last)) => (
                "the whole run".to_owned(),
                first.files.before.clone(),
                last.files.after.clone(),
            ),
            _ => {
                eprintln!(
                    "error: run `{run}` recorded no files: it has no agent or tool step that finished with snapshots on (`workspace \"off\"`, a dry run, or a run kept in memory records none)"
                );
                return Exit::Problems;
            }
        },
    };
    let snapshots = match Snapshots::open(&project.root) {
        Ok(snapshots) => snapshots,
        Err(error) => {
            eprintln!(
                "error: cannot read the snapshots of {}: {error}",
                project.root.display()
            );
            return Exit::Fatal;
        }
    };
    let color = format == Format::Patch
        && std::io::stdout().is_terminal()
        && std::env::var_os("NO_COLOR").is_none();
    let shown = (|| {
        let changes = snapshots.changes(&before, &after)?;
        let patch = match format {
            Format::Stat => String::new(),
            _ => snapshots.patch(&before, &after, color)?,
        };
        Ok::<_, crate::workspace::snapshot::SnapshotError>((changes, patch))
    })();
    let (changes, patch) = match shown {
        Ok(shown) => shown,
        Err(error) => {
            eprintln!(
                "error: the snapshots of run `{run}` cannot be read ({error}); were they deleted (`atomic runs delete`, `git gc` after removing refs/atomic)?"
            );
            return Exit::Fatal;
        }
    };
    match format {
        Format::Json => {
            let value = json!({
                "run": run.as_str(),
                "step": step,
                "before": before,
                "after": after,
                "files": changes,
                "patch": patch,
            });
            println!(
                "{}",
                serde_json::to_string_pretty(&value).expect("a diff serialises")
            );
        }
        Format::Stat => print!("{}", stat(&label, &changes)),
        Format::Patch if changes.is_empty() => eprintln!("{label} changed no files"),
        Format::Patch => print!("{patch}"),
    }
    Exit::Ok
}

/// `--stat`: one line per file, then the totals.
fn stat(label: &str, changes: &[Change]) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    if changes.is_empty() {
        let _ = writeln!(out, "{label} changed no files");
        return out;
    }
    let width = changes
        .iter()
        .map(|change| change.path.chars().count())
        .max()
        .unwrap_or(0);
    let (mut added, mut removed) = (0, 0);
    for change in changes {
        let counts = match (change.added, change.removed) {
            (Some(plus), Some(minus)) => {
                added += plus;
                removed += minus;
                format!("+{plus} -{minus}")
            }
            _ => "binary".to_owned(),
        };
        let _ = writeln!(
            out,
            " {:<width$}  {:<8} {counts}",
            change.path,
            change.status.to_string()
        );
    }
    let _ = writeln!(
        out,
        " {} file{} changed, {added} insertion{}(+), {removed} deletion{}(-)",
        changes.len(),
        if changes.len() == 1 { "" } else { "s" },
        if added == 1 { "" } else { "s" },
        if removed == 1 { "" } else { "s" },
    );
    out
}

/// The steps there are to name, for an error.
fn steps_hint(steps: &[StepFiles]) -> String {
    if steps.is_empty() {
        return " (it recorded files for none)".to_owned();
    }
    let named: Vec<String> = steps
        .iter()
        .map(|step| format!("{} `{}`", step.seq, step.node))
        .collect();
    format!("; steps that did: {}", named.join(", "))
}
