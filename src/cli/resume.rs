//! `atomic resume RUN [--answer …]`: continue a paused run (with an answer, checked
//! against the wait's type; asked for interactively on a terminal) or a crashed or
//! cancelled one from its last committed step. The workflow is recompiled from the path
//! recorded in the run, and refused if its content changed, unless `--force`.

use std::fmt::Write as _;
use std::io::{BufRead, Write};
use std::path::Path;
use std::sync::Arc;

use super::Exit;
use super::args::ResumeArgs;
use super::execute::{self, Ended, Launch, Start, store, workflow};
use super::output::Output;
use super::progress::{Paint, pause_help};
use super::project::Project;
use crate::store::{PendingWait, RunId, RunStatus};

/// Runs `atomic resume`.
pub(super) fn run(args: &ResumeArgs) -> Exit {
    if crate::cli::temporal::wanted(&args.temporal) {
        return crate::cli::temporal::resume(args);
    }
    let output = match Output::from_args(&args.output) {
        Ok(output) => output,
        Err(message) => {
            eprintln!("error: {message}");
            return Exit::Usage;
        }
    };
    let project = Project::discover()
        .with_adapter(args.provider.clone())
        .with_model(args.model.clone());
    let store = match store::open_for_run(&project, args.durability) {
        Ok(store) => store,
        Err(exit) => return exit,
    };
    let runtime = match execute::runtime() {
        Ok(runtime) => runtime,
        Err(exit) => return exit,
    };
    let found = runtime.block_on(async {
        let id = store.resolve(&args.run).await?;
        store.run(&id).await
    });
    let record = match found {
        Ok(record) => record,
        Err(error) => return store::report(&project, error),
    };
    let id = record.id.clone();
    if !record.status.is_resumable() {
        eprintln!(
            "error: run `{id}` has {} and cannot be resumed{}",
            record.status.as_str(),
            match record.status {
                RunStatus::Failed => "; start a new run with `atomic run`",
                _ => "",
            }
        );
        return Exit::Problems;
    }

    let path = Path::new(&record.path).to_path_buf();
    let loaded = match workflow::load(&project, &path, false) {
        Ok(loaded) => loaded,
        Err(exit) => {
            eprintln!(
                "error: run `{id}` cannot be resumed until `{}` compiles",
                path.display()
            );
            return exit;
        }
    };
    if loaded.hash != record.hash && !args.force {
        eprintln!(
            "error: `{}` (or an agent, skill or command it uses) changed since run `{id}` started; resuming could continue at a place the workflow no longer has",
            path.display()
        );
        eprintln!(
            "help: undo the edit, or resume anyway with `atomic resume {id} --force` (committed steps are kept)"
        );
        return Exit::Problems;
    }

    let interactive_answer = args.answer.is_none() && output.interactive;
    let mut answer = args.answer.clone();
    let mut wait_key = args.wait.clone();
    // The wait an answer goes to: the one named, or the only one pending.
    let several = record.waits.len() > 1;
    let target = match &args.wait {
        Some(named) => match PendingWait::named(&record.waits, named).as_slice() {
            [one] => Some(*one),
            _ => None,
        },
        None => record
            .waits
            .first()
            .filter(|_| !several || interactive_answer),
    };
    if let Some(named) = &args.wait
        && target.is_none()
        && !record.waits.is_empty()
    {
        eprintln!(
            "error: run `{id}` has no pending wait `{named}`; it is paused at {}",
            PendingWait::list(&record.waits)
        );
        return Exit::Usage;
    }
    if let Some(wait) = target {
        if several && wait_key.is_none() {
            wait_key = Some(wait.key());
        }
        // An `auto-approve` wait needs no answer: resuming waits out its deadline.
        if answer.is_none() && wait.auto_answer_at.is_none() {
            if !interactive_answer {
                eprintln!(
                    "error: run `{id}` is paused at `{}` and needs an answer",
                    wait.key()
                );
                eprint!("{}", help(&id, wait, several, output.paint));
                return Exit::Paused;
            }
            match ask(wait, output.paint) {
                Some(given) => answer = Some(given),
                None => return Exit::Paused,
            }
        }
    } else if several {
        eprintln!(
            "error: run `{id}` is paused at {}; say which one `--answer` answers",
            PendingWait::list(&record.waits)
        );
        for wait in &record.waits {
            eprint!("{}", help(&id, wait, true, output.paint));
        }
        return Exit::Paused;
    }
    // With no wait on record, an answer may still be for a block that paused before the
    // run stopped (a crash, Ctrl-C): the runtime finds it in the block's steps, or says
    // the run takes no answer.

    let setup = match execute::setup(&project, &loaded, true, None) {
        Ok(setup) => setup,
        Err(message) => {
            eprintln!("error: {message}");
            return Exit::Problems;
        }
    };
    let workspace = match execute::workspace::open(&project, &loaded, setup.workspace, true) {
        Ok(workspace) => workspace,
        Err(message) => {
            eprintln!("error: {message}");
            return Exit::Problems;
        }
    };
    let launch = Launch {
        loaded: &loaded,
        store: Arc::clone(&store),
        durable: true,
        providers: setup.providers,
        loader: setup.loader,
        env: setup.env,
        redactor: setup.redactor,
        tool_env: setup.tool_env,
        sandbox: setup.sandbox,
        telemetry: setup.telemetry,
        workspace,
        display: output.display,
        stream: output.stream,
        dry_run: false,
        quiet: output.quiet,
        paint: output.paint,
    };
    loop {
        let start = Start::Resume {
            id: id.clone(),
            options: crate::runtime::ResumeOptions {
                answer: answer.clone(),
                wait: wait_key.clone(),
                reset: args.reset.clone(),
                keep_changes: args.keep_changes || args.force,
            },
        };
        match execute::drive(&runtime, &launch, start) {
            Ended::Exit(exit) => return exit,
            Ended::BadAnswer(message) => {
                eprintln!("error: {message}");
                let Some(wait) = target else {
                    return Exit::Paused;
                };
                if !interactive_answer {
                    eprint!("{}", help(&id, wait, several, output.paint));
                    return Exit::Paused;
                }
                match ask(wait, output.paint) {
                    Some(given) => answer = Some(given),
                    None => return Exit::Paused,
                }
            }
        }
    }
}

fn help(id: &RunId, wait: &PendingWait, several: bool, paint: Paint) -> String {
    let key = wait.key();
    pause_help(id.as_str(), wait, several.then_some(key.as_str()), paint)
}

/// Asks the person at the terminal; `None` at end of input. A choice may be given by
/// its number.
pub(crate) fn ask(wait: &PendingWait, paint: Paint) -> Option<String> {
    let mut err = std::io::stderr().lock();
    let _ = write!(err, "{}", question(wait, paint));
    let stdin = std::io::stdin();
    loop {
        let _ = write!(
            err,
            "{} ",
            paint.bold(&format!("answer ({})>", wait.answer))
        );
        let _ = err.flush();
        let mut line = String::new();
        match stdin.lock().read_line(&mut line) {
            Ok(0) | Err(_) => {
                let _ = writeln!(err);
                return None;
            }
            Ok(_) => {}
        }
        let text = line.trim_end_matches(['\n', '\r']).to_owned();
        if text.trim().is_empty() {
            continue;
        }
        if let Ok(number) = text.trim().parse::<usize>()
            && wait.answer == "choice"
            && let Some(choice) = number.checked_sub(1).and_then(|i| wait.choices.get(i))
        {
            return Some(choice.value.clone());
        }
        return Some(text);
    }
}

/// What [`ask`] shows before its prompt: the header as a title line, the question, and
/// the choices numbered, each description dimmed under its label.
fn question(wait: &PendingWait, paint: Paint) -> String {
    let mut out = String::new();
    if let Some(header) = &wait.header {
        let _ = writeln!(out, "{}", paint.warn(header));
    }
    for line in wait.prompt.lines() {
        let _ = writeln!(out, "{}", paint.bold(line));
    }
    for (index, choice) in wait.choices.iter().enumerate() {
        let number = format!("{}. ", index + 1);
        let _ = writeln!(
            out,
            "  {number}{}{}",
            choice.value,
            choice
                .label
                .as_ref()
                .map(|label| format!(" — {label}"))
                .unwrap_or_default()
        );
        for line in choice.description.iter().flat_map(|text| text.lines()) {
            let _ = writeln!(
                out,
                "  {:width$}{}",
                "",
                paint.dim(line),
                width = number.len()
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::WaitChoice;

    #[test]
    fn the_question_asked_on_a_terminal_has_its_header_and_each_choices_description() {
        let choice = |value: &str, label: &str, description: Option<&str>| WaitChoice {
            value: value.to_owned(),
            label: Some(label.to_owned()),
            description: description.map(str::to_owned),
        };
        let wait = PendingWait {
            node_id: "pick".to_owned(),
            header: Some("Database".to_owned()),
            prompt: "Which database should the service use?".to_owned(),
            answer: "choice".to_owned(),
            choices: vec![
                choice("pg", "PostgreSQL", Some("Relational, the team knows it")),
                choice("sqlite", "SQLite", None),
            ],
            schema: None,
            auto_answer: None,
            auto_answer_at: None,
            scope: None,
            permission: None,
        };
        assert_eq!(
            question(&wait, Paint { on: false }),
            "Database\n\
             Which database should the service use?\n  \
             1. pg — PostgreSQL\n     \
             Relational, the team knows it\n  \
             2. sqlite — SQLite\n"
        );
        let painted = question(&wait, Paint { on: true });
        assert!(
            painted.contains(&Paint { on: true }.dim("Relational, the team knows it")),
            "{painted}"
        );
    }
}
