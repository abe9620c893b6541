//! `atomic runs`: the table.

use std::fmt::Write;

use super::{diff, retention, show};
use crate::cli::Exit;
use crate::cli::args::{DurabilityArg, RunsAction, RunsArgs};
use crate::cli::execute::{self, store};
use crate::cli::project::Project;
use crate::store::utc;
use crate::store::{RunFilter, RunRecord, RunStatus};

/// Runs `atomic runs` and `atomic runs show`.
pub(in crate::cli) fn run(args: &RunsArgs) -> Exit {
    if crate::cli::temporal::wanted(&args.temporal) {
        return crate::cli::temporal::runs(args);
    }
    let project = Project::discover();
    let store = match store::open_existing(&project, DurabilityArg::Normal) {
        Ok(Some(store)) => store,
        Ok(None) if args.action.is_none() => {
            if args.json {
                println!("[]");
            } else {
                println!("{}", store::no_runs_yet(&project));
            }
            return Exit::Ok;
        }
        Ok(None) => {
            eprintln!("error: {}", store::no_runs_yet(&project));
            return Exit::Problems;
        }
        Err(error) => return store::report(&project, error),
    };
    let runtime = match execute::runtime() {
        Ok(runtime) => runtime,
        Err(exit) => return exit,
    };
    match &args.action {
        Some(RunsAction::Show { run, json, events }) => {
            let format = show::Format::of(*json, *events);
            return show::run(&runtime, &project, store.as_ref(), run, format);
        }
        Some(RunsAction::Diff {
            run,
            step,
            stat,
            json,
        }) => {
            let format = match (stat, json) {
                (true, _) => diff::Format::Stat,
                (_, true) => diff::Format::Json,
                _ => diff::Format::Patch,
            };
            return diff::run(
                &runtime,
                &project,
                store.as_ref(),
                run,
                step.as_deref(),
                format,
            );
        }
        Some(RunsAction::Delete { runs }) => {
            return retention::delete(&runtime, &project, store.as_ref(), runs);
        }
        Some(RunsAction::Prune {
            older_than,
            keep,
            status,
            dry_run,
        }) => {
            let filters = retention::Prune {
                older_than: older_than.as_deref(),
                keep: *keep,
                status,
                dry_run: *dry_run,
            };
            return retention::prune(&runtime, &project, store.as_ref(), &filters);
        }
        None => {}
    }
    let status = match args
        .status
        .as_deref()
        .map(|text| (text, RunStatus::parse(text)))
    {
        None => None,
        Some((_, Some(status))) => Some(status),
        Some((text, None)) => {
            eprintln!(
                "error: unknown status `{text}`: expected one of `running`, `paused`, `completed`, `failed`, `cancelled`"
            );
            return Exit::Usage;
        }
    };
    let filter = RunFilter {
        workflow: args.workflow.clone(),
        status,
        limit: Some(args.limit),
    };
    let mut runs = match runtime.block_on(store.list_runs(&filter)) {
        Ok(runs) => runs,
        Err(error) => return store::report(&project, error),
    };
    runs.retain(|run| !crate::runtime::is_undo_copy(&run.id));
    // Who runs each running run: a live process, or one that died holding it (the next
    // `atomic resume` takes it over).
    let owners: Vec<Option<String>> = runs
        .iter()
        .map(|run| {
            if run.status != RunStatus::Running {
                return None;
            }
            let lease = runtime.block_on(store.lease(&run.id)).ok().flatten()?;
            Some(if lease.is_held() {
                lease.owner.describe()
            } else {
                format!("{} (gone)", lease.owner.describe())
            })
        })
        .collect();
    if args.json {
        let records: Vec<serde_json::Value> = runs
            .iter()
            .zip(&owners)
            .map(|(run, owner)| {
                let mut record = serde_json::to_value(run).expect("run records serialise");
                if let (Some(owner), Some(object)) = (owner, record.as_object_mut()) {
                    object.insert("owner".to_owned(), serde_json::Value::from(owner.clone()));
                }
                record
            })
            .collect();
        println!(
            "{}",
            serde_json::to_string_pretty(&records).expect("run records serialise")
        );
    } else {
        print!("{}", table(&runs, &owners));
        // Under a table, how much the whole store takes (every run, not only those listed).
        if !runs.is_empty() {
            let all = runtime
                .block_on(store.list_runs(&RunFilter::default()))
                .map_or(runs.len(), |all| {
                    all.iter()
                        .filter(|run| !crate::runtime::is_undo_copy(&run.id))
                        .count()
                });
            println!("{}", retention::size_line(&project, all));
        }
    }
    Exit::Ok
}

/// The runs as an aligned table.
fn table(runs: &[RunRecord], owners: &[Option<String>]) -> String {
    if runs.is_empty() {
        return "no runs\n".to_owned();
    }
    let rows: Vec<[String; 7]> = runs
        .iter()
        .zip(owners)
        .map(|(run, owner)| {
            [
                run.id.to_string(),
                run.workflow.clone(),
                run.status.as_str().to_owned(),
                run.steps.to_string(),
                utc(run.created_at),
                crate::cli::progress::duration_ms(run.duration_millis()),
                // Where a fork came from goes with who runs it.
                [
                    owner.clone(),
                    run.origin
                        .as_ref()
                        .map(|origin| format!("fork of {origin}")),
                ]
                .into_iter()
                .flatten()
                .collect::<Vec<_>>()
                .join(" · "),
            ]
        })
        .collect();
    let header = [
        "ID",
        "WORKFLOW",
        "STATUS",
        "STEPS",
        "STARTED (UTC)",
        "DURATION",
        "OWNER",
    ];
    let mut widths = header.map(str::len);
    for row in &rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let line = |out: &mut String, cells: [&str; 7]| {
        let mut text = String::new();
        for (index, (cell, width)) in cells.iter().zip(widths).enumerate() {
            if index == 3 {
                let _ = write!(text, "{cell:>width$}  ");
            } else {
                let _ = write!(text, "{cell:<width$}  ");
            }
        }
        out.push_str(text.trim_end());
        out.push('\n');
    };
    line(&mut out, header);
    for row in &rows {
        line(&mut out, row.each_ref().map(String::as_str));
    }
    out
}
