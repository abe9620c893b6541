//! `atomic resume RUN [--answer …]`: continue a paused run (with an answer, checked
//! against the wait's type; asked for interactively on a terminal) or a crashed or
//! cancelled one from its last committed step. The workflow is recompiled from the path
//! recorded in the run, and refused if its content changed, unless `--force`.

use std::io::{BufRead, Write};
use std::path::Path;
use std::sync::Arc;

use super::Exit;
use super::args::ResumeArgs;
use super::execute::{self, Ended, Launch, Start, store, workflow};
use super::output::Output;
use super::progress::{Paint, pause_help};
use super::project::Project;
use crate::runtime::Choice;
use crate::store::{PendingWait, RunId, RunStatus};

/// Runs `atomic resume`.
pub(super) fn run(args: &ResumeArgs) -> Exit {
    let output = match Output::from_args(&args.output) {
        Ok(output) => output,
        Err(message) => {
            eprintln!("error: {message}");
            return Exit::Usage;
        }
    };
    let project = Project::discover();
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
    if let Some(wait) = &record.wait {
        // An `auto-approve` wait needs no answer: resuming waits out its deadline.
        if answer.is_none() && wait.auto_answer_at.is_none() {
            if !interactive_answer {
                eprintln!(
                    "error: run `{id}` is paused at `{}` and needs an answer",
                    wait.node_id
                );
                eprint!("{}", help(&id, wait, output.paint));
                return Exit::Paused;
            }
            match ask(wait, output.paint) {
                Some(given) => answer = Some(given),
                None => return Exit::Paused,
            }
        }
    } else if answer.is_some() {
        eprintln!(
            "error: run `{id}` is not paused at a wait ({}); it takes no `--answer`",
            record.status.as_str()
        );
        return Exit::Usage;
    }

    let setup = match execute::setup(&project, &loaded, true, None) {
        Ok(setup) => setup,
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
        working_dir: project.root.clone(),
        display: output.display,
        stream: output.stream,
        dry_run: false,
        quiet: output.quiet,
        paint: output.paint,
    };
    loop {
        match execute::drive(&runtime, &launch, Start::Resume(id.clone(), answer.clone())) {
            Ended::Exit(exit) => return exit,
            Ended::BadAnswer(message) => {
                eprintln!("error: {message}");
                let wait = record
                    .wait
                    .as_ref()
                    .expect("only a paused run takes an answer");
                if !interactive_answer {
                    eprint!("{}", help(&id, wait, output.paint));
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

fn choices(wait: &PendingWait) -> Vec<Choice> {
    wait.choices
        .iter()
        .map(|choice| Choice {
            value: choice.value.clone(),
            label: choice.label.clone(),
        })
        .collect()
}

fn help(id: &RunId, wait: &PendingWait, paint: Paint) -> String {
    pause_help(
        id.as_str(),
        &wait.prompt,
        &wait.answer,
        &choices(wait),
        paint,
    )
}

/// Asks the person at the terminal; `None` at end of input. A choice may be given by
/// its number.
fn ask(wait: &PendingWait, paint: Paint) -> Option<String> {
    let mut err = std::io::stderr().lock();
    for line in wait.prompt.lines() {
        let _ = writeln!(err, "{}", paint.bold(line));
    }
    for (index, choice) in wait.choices.iter().enumerate() {
        let _ = writeln!(
            err,
            "  {}. {}{}",
            index + 1,
            choice.value,
            choice
                .label
                .as_ref()
                .map(|label| format!(" — {label}"))
                .unwrap_or_default()
        );
    }
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
