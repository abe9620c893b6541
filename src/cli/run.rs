//! `atomic run`: check a workflow, then run it (or, with `--dry-run`, walk it with canned
//! results and print the route).

use super::Exit;
use super::args::{RunArgs, StoreKind};
use super::execute::{self, Ended, Launch, Start, inputs, store, workflow};
use super::output::Output;
use super::project::Project;
use crate::store::RunId;

/// Runs `atomic run`.
pub(super) fn run(args: &RunArgs) -> Exit {
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
    let path = match workflow::resolve(&project, &args.flow) {
        Ok(path) => path,
        Err(message) => {
            eprintln!("error: {message}");
            return Exit::Fatal;
        }
    };
    let loaded = match workflow::load(&project, &path, !args.output.quiet) {
        Ok(loaded) => loaded,
        Err(exit) => return exit,
    };
    let given = match inputs::gather(loaded.workflow(), &args.inputs, args.input_file.as_deref()) {
        Ok(given) => given,
        Err(message) => {
            eprintln!("error: {message}");
            return Exit::Usage;
        }
    };
    if crate::cli::temporal::wanted(&args.temporal) {
        return crate::cli::temporal::start(args, &project, &output, &loaded, given);
    }

    let setup = match execute::setup(&project, &loaded, !args.dry_run, args.record.as_deref()) {
        Ok(setup) => setup,
        Err(message) => {
            eprintln!("error: {message}");
            return Exit::Problems;
        }
    };
    let kind = if args.dry_run {
        StoreKind::Memory
    } else {
        args.store
    };
    let store = match store::open(&project, kind, args.durability) {
        Ok(store) => store,
        Err(error) => return store::report(&project, error),
    };
    let workspace = match execute::workspace::open(
        &project,
        &loaded,
        setup.workspace,
        kind == StoreKind::Sqlite && !args.dry_run,
    ) {
        Ok(workspace) => workspace,
        Err(message) => {
            eprintln!("error: {message}");
            return Exit::Problems;
        }
    };
    let launch = Launch {
        loaded: &loaded,
        store,
        durable: kind == StoreKind::Sqlite,
        providers: setup.providers,
        loader: setup.loader,
        env: setup.env,
        redactor: setup.redactor,
        tool_env: setup.tool_env,
        sandbox: setup.sandbox,
        telemetry: setup.telemetry,
        workspace,
        // A dry run's output is its route.
        display: if args.dry_run {
            super::progress::Display::Quiet
        } else {
            output.display
        },
        stream: output.stream,
        dry_run: args.dry_run,
        quiet: output.quiet,
        paint: output.paint,
    };
    let runtime = match execute::runtime() {
        Ok(runtime) => runtime,
        Err(exit) => return exit,
    };
    let id = RunId::generate();
    let mut ended = execute::drive(&runtime, &launch, Start::New(id.clone(), given));
    // On a terminal, a wait is answered right here, as `atomic resume` would ask it; the
    // run then goes on in this process. Anywhere else the run pauses (exit 4).
    let asks = output.interactive && launch.durable && !args.dry_run;
    loop {
        match ended {
            Ended::Exit(Exit::Paused) if asks => {}
            Ended::Exit(exit) => return exit,
            Ended::BadAnswer(message) => {
                eprintln!("error: {message}");
                if !asks {
                    return Exit::Paused;
                }
            }
        }
        let Ok(record) = runtime.block_on(launch.store.run(&id)) else {
            return Exit::Paused;
        };
        // A wait that answers itself (`auto-approve`) is left to `atomic resume`.
        let Some(wait) = record
            .waits
            .iter()
            .find(|wait| wait.auto_answer_at.is_none())
        else {
            return Exit::Paused;
        };
        let Some(answer) = super::resume::ask(wait, output.paint) else {
            return Exit::Paused;
        };
        let options = crate::runtime::ResumeOptions {
            answer: Some(answer),
            wait: (record.waits.len() > 1).then(|| wait.key()),
            reset: Vec::new(),
            keep_changes: false,
        };
        ended = execute::drive(
            &runtime,
            &launch,
            Start::Resume {
                id: id.clone(),
                options,
            },
        );
    }
}
