//! Following a run on Temporal from this terminal: its events (read through the `progress`
//! query) go to the same reporter a local run uses, so the output, `--stream` modes,
//! summary and exit codes are a local run's. Ctrl-C cancels the run, as locally.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::Target;
use crate::cli::Exit;
use crate::cli::execute::workflow::Loaded;
use crate::cli::output::Output;
use crate::cli::progress::{Reporter, Summary};
use crate::providers::Redactor;
use crate::runtime::{RunEnd, RunOutcome};
use crate::store::{RunId, RunStatus};
use crate::temporal::Temporal;
use crate::temporal::client::Standing;

/// How often the run is asked how it stands.
const POLL_EVERY: Duration = Duration::from_millis(200);
/// After this long without an answer to the query, say that a worker is awaited.
const NO_WORKER_NOTE_AFTER: Duration = Duration::from_secs(5);

/// Follows run `id` until it ends or pauses; prints the summary and returns the outcome.
pub(super) fn follow(
    runtime: &tokio::runtime::Runtime,
    temporal: &Temporal,
    target: &Target,
    loaded: &Loaded,
    output: &Output,
    id: &str,
) -> Result<RunOutcome, Exit> {
    let started = Instant::now();
    let reporter = Reporter::start(
        output.display,
        output.stream,
        loaded.workflow(),
        false,
        output.paint,
        Redactor::default(),
    );
    let sink = reporter.sink();
    let notes = reporter.notes();
    let interrupted = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&interrupted);
    let listener = runtime.spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            flag.store(true, Ordering::SeqCst);
        }
    });
    let mut next = 0;
    // The workflow's result, long-polled: it ends the wait between two queries as soon as
    // the run's workflow closes, so the end is seen at once rather than at the next poll.
    let mut closed: Option<Closing<'_>> = Some(Box::pin(temporal.result(id)));
    let mut cancelling = false;
    let mut noted = false;
    let result = runtime.block_on(async {
        loop {
            if interrupted.load(Ordering::SeqCst) && !cancelling {
                cancelling = true;
                notes("cancelling (Ctrl-C): the run's step in flight is stopped on its worker");
                temporal.cancel(id).await?;
            }
            let progress = match temporal.progress(id, next).await {
                Ok(progress) => progress,
                Err(message) => {
                    if temporal.standing(id).await? == Standing::Broken {
                        return Err(message);
                    }
                    if !noted && started.elapsed() > NO_WORKER_NOTE_AFTER {
                        noted = true;
                        notes(&format!(
                            "waiting for an `atomic worker` on task queue `{}` ({message})",
                            target.task_queue
                        ));
                    }
                    pause(&mut closed).await;
                    continue;
                }
            };
            for event in progress.run_events() {
                sink.emit(&event);
            }
            next = progress.next;
            if progress.next < progress.total {
                continue;
            }
            let Some(run) = progress.run else {
                pause(&mut closed).await;
                continue;
            };
            if progress.paused {
                return Ok(RunOutcome {
                    run_id: RunId::new(id),
                    end: RunEnd::Paused {
                        waits: run.waits.clone(),
                    },
                    state: Value::Object(progress.state),
                    steps: run.steps,
                    usage: crate::providers::Usage::default(),
                    cost_usd: 0.0,
                });
            }
            if matches!(
                run.status,
                RunStatus::Completed | RunStatus::Failed | RunStatus::Cancelled
            ) && temporal.standing(id).await? == Standing::Closed
            {
                return temporal.result(id).await;
            }
            pause(&mut closed).await;
        }
    });
    listener.abort();
    drop(sink);
    let _ = reporter.finish();
    let outcome = match result {
        Ok(outcome) => outcome,
        Err(message) => {
            eprintln!("error: {message}");
            return Err(Exit::Fatal);
        }
    };
    let failed_at = match &outcome.end {
        RunEnd::Failed { node, .. } => loaded.locate_node(node),
        _ => None,
    };
    let via = target.via();
    let summary = Summary {
        workflow: &loaded.workflow().name.value,
        outcome: &outcome,
        elapsed: started.elapsed(),
        resumable: true,
        failed_at,
        show_state: !output.quiet,
        paint: output.paint,
        via: &via,
    };
    eprint!("{}", summary.render());
    Ok(outcome)
}

/// The workflow's result, awaited.
type Closing<'a> = Pin<Box<dyn Future<Output = Result<RunOutcome, String>> + Send + 'a>>;

/// Waits [`POLL_EVERY`], or less when the workflow closes first (once; then `closed` is
/// spent and only the time counts).
async fn pause(closed: &mut Option<Closing<'_>>) {
    let Some(closing) = closed.as_mut() else {
        return tokio::time::sleep(POLL_EVERY).await;
    };
    tokio::select! {
        () = tokio::time::sleep(POLL_EVERY) => {}
        _ = closing => *closed = None,
    }
}

/// The exit code of an outcome, as a local run's.
pub(super) fn exit_of(outcome: &RunOutcome) -> Exit {
    match outcome.end {
        RunEnd::Completed => Exit::Ok,
        RunEnd::Paused { .. } => Exit::Paused,
        RunEnd::Failed { .. } | RunEnd::LimitReached { .. } => Exit::Problems,
        RunEnd::Cancelled => Exit::Cancelled,
    }
}
