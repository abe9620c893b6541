//! `atomic run`: check a workflow, then run it (or, with `--dry-run`, walk it with canned
//! results and print the route).

use std::sync::Arc;

use super::Exit;
use super::args::{RunArgs, StoreKind};
use super::execute::{self, Launch, Start, env, inputs, providers, store, subgraphs, workflow};
use super::output::Output;
use super::project::Project;
use crate::providers::Environment;
use crate::runtime::Providers;
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
    let project = Project::discover();
    let path = match workflow::resolve(&project, &args.flow) {
        Ok(path) => path,
        Err(message) => {
            eprintln!("error: {message}");
            return Exit::Fatal;
        }
    };
    let loaded = match workflow::load(&project, &path) {
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

    let mut sources = crate::source::Sources::new();
    let (config, _) = project.config(&mut sources);
    let loader = Arc::new(subgraphs::DiskLoader::new(config));
    // The one read of the process environment; providers and templates get parts of it.
    let environment = Environment::from_process();
    let callees = loader.callees(&loaded.plan, &loaded.dir());
    let template_env = env::for_templates(
        &environment,
        std::iter::once(&*loaded.plan).chain(callees.iter().map(|(plan, _)| &**plan)),
    );
    let providers = if args.dry_run {
        Providers::new()
    } else {
        match providers::build(&loaded, &loader, &environment, args.record.as_deref()) {
            Ok(providers) => providers,
            Err(message) => {
                eprintln!("error: {message}");
                return Exit::Problems;
            }
        }
    };
    let kind = if args.dry_run {
        StoreKind::Memory
    } else {
        args.store
    };
    let store = match store::open(&project, kind, args.durability) {
        Ok(store) => store,
        Err(message) => {
            eprintln!("error: {message}");
            return Exit::Fatal;
        }
    };
    let launch = Launch {
        loaded: &loaded,
        store,
        durable: kind == StoreKind::Sqlite,
        providers,
        loader,
        env: template_env,
        working_dir: project.root.clone(),
        display: output.display,
        stream: output.stream,
        dry_run: args.dry_run,
        quiet: output.quiet,
        paint: output.paint,
    };
    let runtime = match execute::runtime() {
        Ok(runtime) => runtime,
        Err(exit) => return exit,
    };
    match execute::drive(&runtime, &launch, Start::New(RunId::generate(), given)) {
        execute::Ended::Exit(exit) => exit,
        execute::Ended::BadAnswer(message) => {
            eprintln!("error: {message}");
            Exit::Paused
        }
    }
}
