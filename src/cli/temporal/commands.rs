//! The commands with `--temporal`: `run` (start and follow), `resume` (answer a wait and
//! follow), `cancel`, `runs` / `runs show`, and `atomic worker`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::Target;
use super::follow::{exit_of, follow};
use super::prepare::FromProject;
use crate::cli::Exit;
use crate::cli::args::{
    CancelArgs, ResumeArgs, RunArgs, RunsAction, RunsArgs, TemporalArgs, WorkerArgs,
};
use crate::cli::execute::{self, workflow};
use crate::cli::output::Output;
use crate::cli::project::Project;
use crate::cli::runs::show;
use crate::runtime::RunEnd;
use crate::store::{PendingWait, RunId, RunStatus, utc};
use crate::temporal::client::Standing;
use crate::temporal::wire::{Answer, RunStart, WorkflowRef};
use crate::temporal::{Engine, Temporal, WorkerSettings};

/// How long `atomic cancel --temporal` waits for the run to stop.
const WAIT_FOR_CANCEL: Duration = Duration::from_secs(30);

/// What every command about runs on Temporal starts from: where they are, an async
/// runtime, and a connection.
struct Session {
    target: Target,
    runtime: tokio::runtime::Runtime,
    temporal: Temporal,
}

impl Session {
    /// Connects to the server `args` (or the project, or the environment) name.
    fn open(project: &Project, args: &TemporalArgs) -> Result<Self, Exit> {
        let target = Target::resolve(project, args);
        let runtime = execute::runtime()?;
        let temporal = runtime
            .block_on(Temporal::connect(
                &target.address,
                &target.namespace,
                &target.task_queue,
            ))
            .map_err(|message| {
                eprintln!("error: {message}");
                Exit::Fatal
            })?;
        Ok(Self {
            target,
            runtime,
            temporal,
        })
    }
}

fn usage(message: &str) -> Exit {
    eprintln!("error: {message}");
    Exit::Usage
}

/// `atomic run FLOW --temporal`, once the workflow compiled and its inputs were read.
pub(in crate::cli) fn start(
    args: &RunArgs,
    project: &Project,
    output: &Output,
    loaded: &workflow::Loaded,
    given: serde_json::Map<String, serde_json::Value>,
) -> Exit {
    if args.dry_run {
        return usage("`--dry-run` walks the workflow here; drop `--temporal`");
    }
    if args.record.is_some() {
        return usage("`--record` records the calls of a local run; drop `--temporal`");
    }
    let session = match Session::open(project, &args.temporal) {
        Ok(session) => session,
        Err(exit) => return exit,
    };
    let id = RunId::generate();
    let start = RunStart {
        run_id: id.to_string(),
        workflow: WorkflowRef {
            path: loaded.path.display().to_string(),
            hash: loaded.hash.clone(),
            adapter: project.adapter.clone(),
        },
        inputs: given,
        working_dir: project.root.display().to_string(),
        carried: None,
        events_before: 0,
    };
    if let Err(message) = session.runtime.block_on(session.temporal.start(start)) {
        eprintln!("error: {message}");
        return Exit::Fatal;
    }
    if args.detach {
        println!("{id}");
        eprintln!(
            "started run `{id}` on Temporal (task queue `{}`); follow it with: atomic resume {id}{}",
            session.target.task_queue,
            session.target.via()
        );
        return Exit::Ok;
    }
    follow_answering(&session, loaded, output, id.as_str())
}

/// Follows a run; on a terminal, a wait it reaches is answered right here (as locally).
fn follow_answering(
    session: &Session,
    loaded: &workflow::Loaded,
    output: &Output,
    id: &str,
) -> Exit {
    let Session {
        target,
        runtime,
        temporal,
    } = session;
    loop {
        let outcome = match follow(runtime, temporal, target, loaded, output, id) {
            Ok(outcome) => outcome,
            Err(exit) => return exit,
        };
        let RunEnd::Paused { waits } = &outcome.end else {
            return exit_of(&outcome);
        };
        if !output.interactive {
            return Exit::Paused;
        }
        let Some(wait) = waits.iter().find(|wait| wait.auto_answer_at.is_none()) else {
            return Exit::Paused;
        };
        if !ask_until_taken(runtime, temporal, id, wait, waits.len() > 1, output) {
            return Exit::Paused;
        }
    }
}

/// Asks for an answer to `wait` until the run takes one; `false` when the person gives up.
fn ask_until_taken(
    runtime: &tokio::runtime::Runtime,
    temporal: &Temporal,
    id: &str,
    wait: &PendingWait,
    several: bool,
    output: &Output,
) -> bool {
    loop {
        let Some(answer) = crate::cli::resume::ask(wait, output.paint) else {
            return false;
        };
        let answer = Answer {
            answer,
            wait: several.then(|| wait.key()),
        };
        match runtime.block_on(temporal.answer(id, answer)) {
            Ok(()) => return true,
            Err(message) => eprintln!("error: {message}"),
        }
    }
}

/// `atomic resume RUN --temporal`: answers the run's wait (or, with none pending, follows it).
pub(in crate::cli) fn resume(args: &ResumeArgs) -> Exit {
    let output = match Output::from_args(&args.output) {
        Ok(output) => output,
        Err(message) => return usage(&message),
    };
    if args.force || !args.reset.is_empty() {
        return usage(
            "a run on Temporal goes on with the workflow it started with; `--force` and `--reset` are for local runs",
        );
    }
    let project = Project::discover().with_adapter(args.provider.clone());
    let session = match Session::open(&project, &args.temporal) {
        Ok(session) => session,
        Err(exit) => return exit,
    };
    let (runtime, temporal) = (&session.runtime, &session.temporal);
    let id = args.run.as_str();
    let progress = match runtime.block_on(temporal.progress(id, u64::MAX)) {
        Ok(progress) => progress,
        Err(message) => {
            eprintln!("error: {message}");
            return Exit::Fatal;
        }
    };
    let Some(record) = &progress.run else {
        eprintln!("error: run `{id}` has not started on a worker yet");
        return Exit::Problems;
    };
    if !progress.paused
        && matches!(
            record.status,
            RunStatus::Completed | RunStatus::Failed | RunStatus::Cancelled
        )
    {
        eprintln!(
            "error: run `{id}` has {} and cannot be resumed",
            record.status.as_str()
        );
        return Exit::Problems;
    }
    let path = std::path::PathBuf::from(&record.path);
    let loaded = match workflow::load(&project, &path, false) {
        Ok(loaded) => loaded,
        Err(exit) => return exit,
    };
    if progress.paused {
        let waits = &record.waits;
        match &args.answer {
            Some(answer) => {
                let answer = Answer {
                    answer: answer.clone(),
                    wait: args.wait.clone(),
                };
                if let Err(message) = runtime.block_on(temporal.answer(id, answer)) {
                    eprintln!("error: {message}");
                    return Exit::Paused;
                }
            }
            None if output.interactive => {
                let wait = match &args.wait {
                    Some(named) => PendingWait::named(waits, named).first().copied(),
                    None => waits.first(),
                };
                let Some(wait) = wait else {
                    eprintln!(
                        "error: run `{id}` is paused at {}",
                        PendingWait::list(waits)
                    );
                    return Exit::Usage;
                };
                if !ask_until_taken(runtime, temporal, id, wait, waits.len() > 1, &output) {
                    return Exit::Paused;
                }
            }
            None => {
                eprintln!(
                    "error: run `{id}` is paused at {} and needs an answer (`--answer`)",
                    PendingWait::list(waits)
                );
                return Exit::Paused;
            }
        }
    }
    follow_answering(&session, &loaded, &output, id)
}

/// `atomic cancel RUN --temporal`.
pub(in crate::cli) fn cancel(args: &CancelArgs) -> Exit {
    let session = match Session::open(&Project::discover(), &args.temporal) {
        Ok(session) => session,
        Err(exit) => return exit,
    };
    let (runtime, temporal) = (&session.runtime, &session.temporal);
    let id = args.run.as_str();
    let stopped = runtime.block_on(async {
        if temporal.standing(id).await? != Standing::Running {
            return Err(format!("run `{id}` has ended; there is nothing to cancel"));
        }
        temporal.cancel(id).await?;
        let asked = Instant::now();
        while asked.elapsed() < WAIT_FOR_CANCEL {
            if temporal.standing(id).await? != Standing::Running {
                return Ok(true);
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        Ok(false)
    });
    match stopped {
        Ok(true) => {
            eprintln!("run `{id}` cancelled (its committed steps are kept)");
            Exit::Ok
        }
        Ok(false) => {
            eprintln!(
                "run `{id}` was asked to stop; it stops when a worker next runs it (is an `atomic worker` running?)"
            );
            Exit::Ok
        }
        Err(message) => {
            eprintln!("error: {message}");
            Exit::Problems
        }
    }
}

/// `atomic runs --temporal` and `atomic runs show RUN --temporal`.
pub(in crate::cli) fn runs(args: &RunsArgs) -> Exit {
    let session = match Session::open(&Project::discover(), &args.temporal) {
        Ok(session) => session,
        Err(exit) => return exit,
    };
    let Session {
        target,
        runtime,
        temporal,
    } = &session;
    if let Some(RunsAction::Show { run, json, events }) = &args.action {
        let format = show::Format::of(*json, *events);
        return match runtime.block_on(temporal.detail(run)) {
            Ok(found) => match found.detail {
                Some(detail) => {
                    show::print(&detail, found.state, format);
                    Exit::Ok
                }
                None => {
                    eprintln!("error: run `{run}` has not started on a worker yet");
                    Exit::Problems
                }
            },
            Err(message) => {
                eprintln!("error: {message}");
                Exit::Problems
            }
        };
    }
    let listed = match runtime.block_on(temporal.list(Some(args.limit))) {
        Ok(listed) => listed,
        Err(message) => {
            eprintln!("error: {message}");
            return Exit::Fatal;
        }
    };
    if args.json {
        let rows: Vec<serde_json::Value> = listed
            .iter()
            .map(|run| {
                serde_json::json!({
                    "id": run.run_id,
                    "status": run.status,
                    "created_at": run.started_ms,
                })
            })
            .collect();
        println!(
            "{}",
            serde_json::to_string_pretty(&rows).expect("a list of runs serialises")
        );
        return Exit::Ok;
    }
    if listed.is_empty() {
        println!("no runs on Temporal (task queue `{}`)", target.task_queue);
        return Exit::Ok;
    }
    println!("{:<28}  {:<18}  started (UTC)", "run", "workflow status");
    for run in &listed {
        println!(
            "{:<28}  {:<18}  {}",
            run.run_id,
            run.status,
            utc(crate::store::Timestamp(run.started_ms))
        );
    }
    Exit::Ok
}

/// `atomic worker`.
pub(in crate::cli) fn worker(args: &WorkerArgs) -> Exit {
    let project = Project::discover();
    let target = Target::resolve(&project, &args.temporal);
    let runtime = match execute::runtime() {
        Ok(runtime) => runtime,
        Err(exit) => return exit,
    };
    let settings = WorkerSettings {
        address: target.address.clone(),
        namespace: target.namespace.clone(),
        task_queue: target.task_queue.clone(),
    };
    let engine = Arc::new(Engine::new(Box::new(FromProject)));
    eprintln!(
        "atomic worker: task queue `{}` on {} (namespace `{}`); Ctrl-C or SIGTERM stops it",
        settings.task_queue, settings.address, settings.namespace
    );
    let served = runtime.block_on(crate::temporal::serve(&settings, engine, stop_signal()));
    match served {
        Ok(()) => {
            eprintln!("atomic worker: stopped");
            Exit::Ok
        }
        Err(message) => {
            eprintln!("error: {message}");
            Exit::Fatal
        }
    }
}

/// Resolves at the first Ctrl-C, SIGTERM or SIGHUP.
async fn stop_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let (Ok(mut term), Ok(mut hangup)) = (
            signal(SignalKind::terminate()),
            signal(SignalKind::hangup()),
        ) else {
            let _ = tokio::signal::ctrl_c().await;
            return;
        };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
            _ = hangup.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
