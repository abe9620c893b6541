//! Driving one run (or one resumed stretch of it) to where it stops: a tokio runtime, the
//! reporter on its own thread, Ctrl-C handling, then the summary and the exit code.
//!
//! Ctrl-C, SIGTERM and SIGHUP alike: the first cancels the run cleanly (the step in flight is
//! dropped, which kills its process group; the cancellation is committed; exit 130,
//! resumable); a second one exits at once, killing every process group still running.
//!
//! One run, one driver: the run's lease is taken in the store before anything runs (a run
//! held by a live process is refused, a dead holder's is taken over) and renewed by a
//! heartbeat, which also delivers `atomic cancel` from another terminal as a Ctrl-C.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use serde_json::{Map, Value};

use super::live::LiveFeed;
use super::subgraphs::DiskLoader;
use super::workflow::Loaded;
use crate::cli::Exit;
use crate::cli::progress::{Display, Paint, Reporter, Summary};
use crate::providers::Redactor;
use crate::runtime::{
    self, Providers, RedactingStore, RunContext, RunEnd, RunError, RunEvent, RunOutcome, RunSink,
    StreamModes,
};
use crate::store::{Acquired, HEARTBEAT_EVERY, Owner, RunId, Store, StoreError};
use crate::workspace::Workspace;

/// Everything a run needs from the command line.
pub(crate) struct Launch<'a> {
    /// The compiled workflow.
    pub(crate) loaded: &'a Loaded,
    /// Where steps are committed.
    pub(crate) store: Arc<dyn Store>,
    /// Whether the store outlives the process (resume hints make sense).
    pub(crate) durable: bool,
    /// The providers, by declaration name.
    pub(crate) providers: Providers,
    /// Subgraph plans.
    pub(crate) loader: Arc<DiskLoader>,
    /// Variables templates may read.
    pub(crate) env: HashMap<String, String>,
    /// Where tools and agents work.
    pub(crate) workspace: Workspace,
    /// Progress on stderr.
    pub(crate) display: Display,
    /// JSONL on stdout.
    pub(crate) stream: Option<StreamModes>,
    /// Canned results, nothing executed.
    pub(crate) dry_run: bool,
    /// Only the summary.
    pub(crate) quiet: bool,
    /// Colours on stderr.
    pub(crate) paint: Paint,
    /// Secrets to keep out of the store and the terminal.
    pub(crate) redactor: Redactor,
    /// The environment of tool nodes and hooks.
    pub(crate) tool_env: crate::providers::Environment,
    /// The project's sandbox, for workflows that declare none.
    pub(crate) sandbox: Option<Arc<crate::ir::Sandbox>>,
    /// Where the run's trace goes, if anywhere (not for a dry run).
    pub(crate) telemetry: Option<crate::telemetry::Settings>,
}

/// What to drive.
pub(crate) enum Start {
    /// A new run with these inputs.
    New(RunId, Map<String, Value>),
    /// Continue a run, answering its wait if it is paused at one (the wait named, when
    /// several are pending).
    Resume {
        id: RunId,
        options: runtime::ResumeOptions,
    },
}

/// How driving ended.
#[derive(Debug)]
pub(crate) enum Ended {
    /// The run stopped; exit with this.
    Exit(Exit),
    /// The answer did not fit the wait (the run is still paused); ask again or exit 4.
    BadAnswer(String),
}

/// The async runtime a command drives runs (and store queries) on.
///
/// # Errors
/// The runtime cannot be created (no threads left).
pub(crate) fn runtime() -> Result<tokio::runtime::Runtime, Exit> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|error| {
            eprintln!("error: cannot start the async runtime: {error}");
            Exit::Fatal
        })
}

/// Runs `start` on `runtime` to where it stops and prints the summary.
pub(crate) fn drive(runtime: &tokio::runtime::Runtime, launch: &Launch<'_>, start: Start) -> Ended {
    let workflow = launch.loaded.workflow();
    let reporter = Reporter::start(
        launch.display,
        launch.stream,
        workflow,
        launch.dry_run,
        launch.paint,
        launch.redactor.clone(),
    );
    // The views need node events; JSONL prints only what `--stream` selected.
    let mut modes = launch.stream.unwrap_or_default();
    if launch.display != Display::Quiet || launch.dry_run {
        modes.events = true;
    }
    let run_id = match &start {
        Start::New(id, _) | Start::Resume { id, .. } => id.clone(),
    };
    let owner = Owner::this_process();
    match runtime.block_on(launch.store.acquire(&run_id, &owner)) {
        Ok(Acquired::Free) => {}
        Ok(Acquired::TakenOver(previous)) => {
            eprintln!(
                "note: run `{run_id}` was held by {}, which is no longer running; taking it over (only the step it was running may run again)",
                previous.describe()
            );
            end_orphans(&previous);
        }
        Err(error) => {
            eprintln!("error: {error}");
            return Ended::Exit(match error {
                StoreError::Owned { .. } => Exit::Problems,
                _ => Exit::Fatal,
            });
        }
    }
    let telemetry = trace(launch, &run_id);
    // Views in other processes (`atomic ui`) see steps before they commit through the
    // run's live feed; a run kept only in memory has no views.
    let live = (launch.durable && !launch.dry_run)
        .then(|| launch.store.live_feed(&run_id))
        .flatten()
        .and_then(|path| LiveFeed::start(path, launch.redactor.clone()));
    // The trace and the feed are built from node and agent events; the reporter still
    // gets only what it shows.
    let shown = modes;
    modes.events |= telemetry.is_some() || live.is_some();
    let store = RedactingStore::new(Arc::clone(&launch.store), launch.redactor.clone());
    let mut ctx = RunContext::new(Arc::new(store));
    ctx.providers = launch.providers.clone();
    ctx.sink = Some(if shown == modes {
        reporter.sink()
    } else {
        Arc::new(Selected {
            modes: shown,
            inner: reporter.sink(),
        })
    });
    if let Some(telemetry) = &telemetry {
        ctx.providers = telemetry.observe(ctx.providers);
        ctx.sink = ctx.sink.map(|sink| telemetry.sink(sink));
    }
    if let Some(live) = &live {
        ctx.sink = ctx.sink.map(|sink| live.sink(sink));
    }
    ctx.stream = modes;
    // A run kept only in memory cannot be inspected after the process ends: keep no log.
    ctx.log_events = launch.durable;
    ctx.env = launch.env.clone();
    ctx.tool_env = launch.tool_env.clone();
    ctx.sandbox = launch.sandbox.clone();
    ctx.files = Arc::new(crate::cli::disk::Disk);
    ctx.base_dir = launch.loaded.dir();
    ctx.workspace = launch.workspace.clone();
    ctx.workflow_path = launch.loaded.path.display().to_string();
    ctx.workflow_hash = launch.loaded.hash.clone();
    ctx.subgraphs = Some(launch.loader.clone());
    ctx.dry_run = launch.dry_run;
    let cancel = ctx.cancel.clone();
    let heartbeat = runtime.spawn(keep_lease(
        Arc::clone(&launch.store),
        run_id.clone(),
        owner.clone(),
        cancel.clone(),
        reporter.notes(),
    ));

    let note = reporter.notes();
    runtime.spawn(async move {
        let Some(mut stop) = StopSignals::new() else {
            return;
        };
        let first = stop.next().await;
        note(&format!(
            "cancelling ({first}): stopping the running step and saving the run (Ctrl-C again to quit now)"
        ));
        cancel.cancel();
        let second = stop.next().await;
        eprintln!("\nquit without waiting ({second}); the last committed step is kept");
        // The one forced exit: the person asked twice. Nothing is dropped on the way
        // out, so the children (tools, hooks, agent CLIs) are ended here.
        crate::process::kill_all();
        std::process::exit(130);
    });

    let started = Instant::now();
    let plan = Arc::clone(&launch.loaded.plan);
    let result = runtime.block_on(async move {
        match start {
            Start::New(id, inputs) => runtime::run_with_id(plan, id, inputs, ctx).await,
            Start::Resume { id, options } => runtime::resume_with(plan, &id, &options, ctx).await,
        }
    });
    let elapsed = started.elapsed();
    heartbeat.abort();
    if let Some(live) = live {
        live.finish();
    }
    // Children ended on the way (a cancelled step, a timeout) get their grace period to
    // exit, then SIGKILL: none outlives the run.
    crate::process::settle();
    // What the run's snapshots left as loose objects is packed once there are many; a
    // failure only leaves them loose.
    if let Some(snapshots) = launch.workspace.snapshots()
        && let Err(error) = snapshots.pack()
    {
        tracing::warn!("could not pack the workspace snapshots: {error}");
    }
    // A failed release leaves a lease whose holder is gone: the next taker takes it over.
    let _ = runtime.block_on(launch.store.release(&run_id, &owner));
    let seen = reporter.finish();
    if let Some(warning) = telemetry.and_then(crate::telemetry::Telemetry::finish) {
        eprintln!("{}", launch.redactor.redact(&warning));
    }

    let outcome = match result {
        Ok(outcome) => outcome,
        Err(RunError::Store(StoreError::Conflict { .. })) => {
            return moved_on_elsewhere(runtime, launch, &run_id);
        }
        Err(error) => return setup_failed(&error, &launch.redactor),
    };
    if launch.dry_run {
        print_route(launch.loaded, &seen.route, &outcome, &launch.redactor);
    }
    let failed_at = match &outcome.end {
        RunEnd::Failed { node, .. } => launch.loaded.locate_node(node),
        _ => None,
    };
    let summary = Summary {
        workflow: &workflow.name.value,
        outcome: &outcome,
        elapsed,
        resumable: launch.durable,
        failed_at,
        show_state: !launch.quiet,
        paint: launch.paint,
        via: "",
    };
    eprint!("{}", launch.redactor.redact(&summary.render()));
    Ended::Exit(exit_of(&outcome))
}

/// A sink given only the events `modes` select.
struct Selected {
    modes: StreamModes,
    inner: Arc<dyn RunSink>,
}

impl RunSink for Selected {
    fn emit(&self, event: &RunEvent) {
        if event.selected_by(self.modes) {
            self.inner.emit(event);
        }
    }
}

/// Starts exporting the run's trace when that is configured (never for a dry run). An
/// exporter that cannot be built is a warning: the run goes on untraced.
fn trace(launch: &Launch<'_>, run_id: &RunId) -> Option<crate::telemetry::Telemetry> {
    let settings = launch.telemetry.as_ref().filter(|_| !launch.dry_run)?;
    crate::telemetry::Telemetry::start(settings, run_id.as_str(), launch.redactor.clone())
        .map_err(|error| {
            eprintln!(
                "warning: the run's trace is not exported to {}: {error}",
                settings.traces_url
            );
        })
        .ok()
}

/// The signals that stop a run: Ctrl-C (SIGINT), and on Unix SIGTERM (container stops, CI
/// cancellations) and SIGHUP (a closed terminal), all treated alike.
struct StopSignals {
    #[cfg(unix)]
    term: tokio::signal::unix::Signal,
    #[cfg(unix)]
    hangup: tokio::signal::unix::Signal,
}

impl StopSignals {
    /// Listens for them; `None` when the process cannot (no signal handling).
    fn new() -> Option<Self> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            Some(Self {
                term: signal(SignalKind::terminate()).ok()?,
                hangup: signal(SignalKind::hangup()).ok()?,
            })
        }
        #[cfg(not(unix))]
        Some(Self {})
    }

    /// The next one to arrive, by name.
    async fn next(&mut self) -> &'static str {
        #[cfg(unix)]
        {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => "Ctrl-C",
                _ = self.term.recv() => "SIGTERM",
                _ = self.hangup.recv() => "SIGHUP",
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
            "Ctrl-C"
        }
    }
}

/// Renews the run's lease every [`HEARTBEAT_EVERY`]; a cancellation requested by
/// `atomic cancel`, or the run taken over by another process, stops the run as Ctrl-C does.
async fn keep_lease(
    store: Arc<dyn Store>,
    run: RunId,
    owner: Owner,
    cancel: tokio_util::sync::CancellationToken,
    note: impl Fn(&str) + Send + 'static,
) {
    let mut every = tokio::time::interval(HEARTBEAT_EVERY);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        every.tick().await;
        match store.heartbeat(&run, &owner).await {
            Ok(beat) if beat.cancel_requested => {
                note("cancelling: `atomic cancel` asked this run to stop");
                cancel.cancel();
                return;
            }
            Ok(_) => {}
            Err(error @ StoreError::LeaseLost { .. }) => {
                note(&format!("stopping: {error}"));
                cancel.cancel();
                return;
            }
            // A busy or briefly failing store: the next beat tries again.
            Err(_) => {}
        }
    }
}

fn exit_of(outcome: &RunOutcome) -> Exit {
    match outcome.end {
        RunEnd::Completed => Exit::Ok,
        RunEnd::Paused { .. } => Exit::Paused,
        RunEnd::Failed { .. } | RunEnd::LimitReached { .. } => Exit::Problems,
        RunEnd::Cancelled => Exit::Cancelled,
    }
}

/// Another process committed steps of the run while this one drove it (two `atomic resume`
/// of one paused run, or a takeover): say who, where the run is now, and that this
/// process's step was not committed.
fn moved_on_elsewhere(
    runtime: &tokio::runtime::Runtime,
    launch: &Launch<'_>,
    run_id: &RunId,
) -> Ended {
    let holder = runtime
        .block_on(launch.store.lease(run_id))
        .ok()
        .flatten()
        .map_or_else(
            || "another process (since finished)".to_owned(),
            |lease| lease.owner.describe(),
        );
    let place = runtime
        .block_on(launch.store.checkpoint(run_id))
        .map_or_else(
            |_| String::new(),
            |checkpoint| {
                format!(
                    "; the run is now {} after step {}",
                    checkpoint.run.status.as_str(),
                    checkpoint.seq
                )
            },
        );
    eprintln!(
        "error: run `{run_id}` was moved on by {holder} while this process drove it{place}. \
         Nothing of this process's step was committed; see `atomic runs show {run_id}`"
    );
    Ended::Exit(Exit::Problems)
}

fn setup_failed(error: &RunError, redactor: &Redactor) -> Ended {
    let message = redactor.redact(&error.to_string()).into_owned();
    match error {
        RunError::BadAnswer { .. } => Ended::BadAnswer(message),
        RunError::Store(_) => {
            eprintln!("error: {message}");
            Ended::Exit(Exit::Fatal)
        }
        _ => {
            eprintln!("error: {message}");
            Ended::Exit(Exit::Problems)
        }
    }
}

fn print_route(loaded: &Loaded, route: &[String], outcome: &RunOutcome, redactor: &Redactor) {
    let mut out = format!(
        "dry run of `{}` (canned agent and tool results; nothing was called, started or stored):\n",
        loaded.workflow().name.value
    );
    for line in route {
        out.push_str(line);
        out.push('\n');
    }
    let end = match &outcome.end {
        RunEnd::Completed => "end".to_owned(),
        RunEnd::Paused { waits } => {
            format!("paused at {}", crate::store::PendingWait::list(waits))
        }
        RunEnd::Failed { node, message, .. } => format!("failed at `{node}`: {message}"),
        RunEnd::LimitReached { message } => format!("stopped: {message}"),
        RunEnd::Cancelled => "cancelled".to_owned(),
    };
    out.push_str(&format!("  → {end}\n"));
    print!("{}", redactor.redact(&out));
}

/// Ends what the run's dead owner had started and left running (a tool's shell goes on
/// after `kill -9` of its atomic), before the step runs again and any file is put back.
/// Only on the owner's machine: elsewhere its processes are out of reach.
fn end_orphans(previous: &Owner) {
    if previous.host != Owner::this_process().host || previous.started.is_empty() {
        return;
    }
    let ended = crate::process::orphans::end_orphans_of(previous.pid, &previous.started);
    if ended > 0 {
        eprintln!(
            "note: ended {ended} process(es) that {} had started and left running",
            previous.describe()
        );
    }
}
