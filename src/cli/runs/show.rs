//! `atomic runs show RUN`: a run's record, its steps with what each changed, its event
//! log, its errors and its final state.

use std::fmt::Write;

use serde_json::{Value, json};

use crate::cli::Exit;
use crate::cli::progress::duration_ms;
use crate::store::utc;
use crate::store::{Change, RunDetail, StepRecord, Store};

/// Prefix of the pseudo fields in which the runtime keeps node outputs.
const OUTPUT_PREFIX: &str = "#output:";

/// How `atomic runs show` prints a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::cli) enum Format {
    /// For people.
    Text,
    /// The record, steps, events and state as one JSON document.
    Json,
    /// The event log alone, one JSON object per line.
    Events,
}

impl Format {
    /// The format `--json` and `--events` ask for.
    pub(in crate::cli) fn of(json: bool, events: bool) -> Self {
        if events {
            Self::Events
        } else if json {
            Self::Json
        } else {
            Self::Text
        }
    }
}

/// Prints one run.
pub(super) fn run(
    runtime: &tokio::runtime::Runtime,
    project: &crate::cli::project::Project,
    store: &dyn Store,
    prefix: &str,
    format: Format,
) -> Exit {
    let found = runtime.block_on(async {
        let id = store.resolve(prefix).await?;
        let detail = store.run_detail(&id).await?;
        let state = store.load_state(&id, u64::MAX).await?;
        Ok::<_, crate::store::StoreError>((detail, state))
    });
    let (detail, state) = match found {
        Ok(found) => found,
        Err(error) => return crate::cli::execute::store::report(project, error),
    };
    print(&detail, state, format);
    Exit::Ok
}

/// Prints a run, its steps and events, and its state as `format` says.
pub(in crate::cli) fn print(
    detail: &RunDetail,
    mut state: serde_json::Map<String, Value>,
    format: Format,
) {
    state.retain(|name, _| !name.starts_with(OUTPUT_PREFIX));
    if format == Format::Events {
        for record in &detail.events {
            println!("{}", record.event);
        }
    } else if format == Format::Json {
        let files: Vec<Value> = super::files::of_run(detail)
            .into_iter()
            .map(|found| json!({"step": found.seq, "node": found.node, "files": found.files}))
            .collect();
        let value = json!({
            "run": detail.run,
            "steps": detail.steps,
            "files": files,
            "events": detail.events,
            "state": state,
        });
        println!(
            "{}",
            serde_json::to_string_pretty(&value).expect("a run's detail serialises")
        );
    } else {
        print!("{}", text(detail, &Value::Object(state)));
    }
}

fn text(detail: &RunDetail, state: &Value) -> String {
    let run = &detail.run;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "run {}  `{}`  {}",
        run.id,
        run.workflow,
        run.status.as_str()
    );
    let _ = writeln!(out, "  file      {}", run.path);
    let _ = writeln!(out, "  inputs    {}", run.inputs);
    let _ = writeln!(
        out,
        "  started   {} UTC · {} · {} step{}",
        utc(run.created_at),
        duration_ms(run.duration_millis()),
        run.steps,
        if run.steps == 1 { "" } else { "s" }
    );
    if let Some(error) = &run.error {
        let _ = writeln!(out, "  error     {error}");
    }
    let several = run.waits.len() > 1;
    for wait in &run.waits {
        let _ = writeln!(
            out,
            "  waiting   at `{}` for a {} answer: {}",
            wait.key(),
            wait.answer,
            clip(
                &crate::view::headed(wait.header.as_deref(), &wait.prompt),
                80
            )
        );
        let which = if several {
            format!(" --wait {}", wait.key())
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "            atomic resume {}{which} --answer …",
            run.id
        );
    }

    let _ = writeln!(out, "\nsteps");
    if detail.steps.is_empty() {
        let _ = writeln!(out, "  (none committed)");
    }
    let width = detail
        .steps
        .iter()
        .map(|step| step_name(step).chars().count())
        .max()
        .unwrap_or(0);
    let files = super::files::of_run(detail);
    for step in &detail.steps {
        out.push_str(&step_line(step, width));
        if let Some(found) = files.iter().find(|found| found.seq == step.seq) {
            out.push_str(&files_line(&found.files));
        }
    }

    let _ = writeln!(out, "\nevents ({})", detail.events.len());
    for record in &detail.events {
        let _ = writeln!(
            out,
            "  {:>4}  step {:<4} {}",
            record.seq,
            record.step,
            event_line(&record.event)
        );
    }

    let _ = writeln!(out, "\nstate");
    match state {
        Value::Object(fields) if !fields.is_empty() => {
            let width = fields.keys().map(|k| k.chars().count()).max().unwrap_or(0);
            for (name, value) in fields {
                let _ = writeln!(out, "  {name:<width$}  {}", clip(&value.to_string(), 100));
            }
        }
        _ => {
            let _ = writeln!(out, "  (empty)");
        }
    }
    out
}

/// The files a step changed, under its line: up to ten, each with how it changed.
fn files_line(files: &crate::runtime::FilesChanged) -> String {
    const SHOWN: usize = 10;
    if files.changed.is_empty() {
        return "        files  (none changed)\n".to_owned();
    }
    let mut named: Vec<String> = files
        .changed
        .iter()
        .take(SHOWN)
        .map(|change| format!("{} {}", status_letter(change.status), change.path))
        .collect();
    if files.changed.len() > SHOWN {
        named.push(format!("… {} more", files.changed.len() - SHOWN));
    }
    format!("        files  {}\n", named.join(", "))
}

/// `git status --short`'s letter for how a file changed.
fn status_letter(status: crate::workspace::snapshot::ChangeStatus) -> char {
    use crate::workspace::snapshot::ChangeStatus;
    match status {
        ChangeStatus::Added => 'A',
        ChangeStatus::Modified => 'M',
        ChangeStatus::Deleted => 'D',
        ChangeStatus::TypeChanged => 'T',
    }
}

/// A step's node, with the block it ran in (`fan@3#1/review`).
fn step_name(step: &StepRecord) -> String {
    match &step.scope {
        Some(scope) => format!("{scope}/{}", step.node_id),
        None => step.node_id.clone(),
    }
}

fn step_line(step: &StepRecord, width: usize) -> String {
    let mut line = format!(
        "  {:>4}  {:<width$}  {:<9} {:>7}",
        step.seq,
        step_name(step),
        step.status.as_str(),
        duration_ms(step.finished_at.millis_since(step.started_at)),
    );
    if step.attempts > 1 {
        let _ = write!(line, "  {} attempts", step.attempts);
    }
    let changes: Vec<String> = step
        .delta
        .0
        .iter()
        .filter(|(field, _)| !field.starts_with(OUTPUT_PREFIX))
        .map(|(field, change)| match change {
            Change::Set(value) => format!("{field} = {}", clip(&value.to_string(), 60)),
            Change::Append { items, .. } => format!(
                "{field} += {} item{}",
                items.len(),
                if items.len() == 1 { "" } else { "s" }
            ),
            Change::Merge(keys) => format!(
                "{field} ∪= {{{}}}",
                keys.keys().cloned().collect::<Vec<_>>().join(", ")
            ),
            Change::Unset => format!("{field} unset"),
        })
        .collect();
    if !changes.is_empty() {
        let _ = write!(line, "  {}", changes.join("; "));
    }
    if let Some(error) = &step.error {
        let _ = write!(line, "  error: {}", clip(error, 120));
    }
    line.push('\n');
    line
}

/// An event as one short line: its type and the fields that say the most.
fn event_line(event: &Value) -> String {
    let kind = event.get("type").and_then(Value::as_str).unwrap_or("?");
    let field = |name: &str| event.get(name).and_then(Value::as_str).unwrap_or("");
    let detail = match kind {
        "step-started" => format!("{} `{}`", field("kind"), field("node")),
        "step-finished" => format!("`{}` {}", field("node"), field("status")),
        "route" => format!("`{}` → `{}`", field("node"), field("to")),
        "retrying" | "node-failed" => {
            format!(
                "`{}` {}: {}",
                field("node"),
                field("class"),
                clip(field("message"), 80)
            )
        }
        "agent" => {
            let inner = event
                .get("event")
                .and_then(|e| e.get("type"))
                .and_then(Value::as_str)
                .unwrap_or("?");
            format!("`{}` {inner}", field("node"))
        }
        "run-failed" => format!("{}: {}", field("class"), clip(field("message"), 80)),
        "run-paused" => format!("at `{}`", field("node")),
        _ => String::new(),
    };
    if detail.is_empty() {
        kind.to_owned()
    } else {
        format!("{kind} {detail}")
    }
}

fn clip(text: &str, width: usize) -> String {
    let line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() <= width {
        line
    } else {
        let mut clipped: String = line.chars().take(width - 1).collect();
        clipped.push('…');
        clipped
    }
}
