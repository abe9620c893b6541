//! `atomic cancel RUN`: stops a run from any terminal. A running run's owner is asked
//! through the store (its heartbeat sees the request within a second) and stops as on
//! Ctrl-C, its children and hooks ended, the run saved as cancelled; a paused run, or one
//! whose owner died, is marked cancelled here. Either can be resumed later.

use std::time::{Duration, Instant};

use super::Exit;
use super::args::{CancelArgs, DurabilityArg};
use super::execute::{self, store};
use super::project::Project;
use crate::store::{Owner, RunStatus, STALE_AFTER, Store, StoreError};

/// How long `atomic cancel` waits for a running owner to stop before saying it was asked.
const WAIT_FOR_OWNER: Duration = Duration::from_secs(30);

/// Runs `atomic cancel`.
pub(super) fn run(args: &CancelArgs) -> Exit {
    if crate::cli::temporal::wanted(&args.temporal) {
        return crate::cli::temporal::cancel(args);
    }
    let project = Project::discover();
    let store = match store::open_for_run(&project, DurabilityArg::Normal) {
        Ok(store) => store,
        Err(exit) => return exit,
    };
    let runtime = match execute::runtime() {
        Ok(runtime) => runtime,
        Err(exit) => return exit,
    };
    match runtime.block_on(cancel(store.as_ref(), &args.run)) {
        Ok(message) => {
            eprintln!("{message}");
            Exit::Ok
        }
        Err(Refusal::Store(error)) => store::report(&project, error),
        Err(Refusal::Ended(message)) => {
            eprintln!("error: {message}");
            Exit::Problems
        }
    }
}

enum Refusal {
    Store(StoreError),
    Ended(String),
}

impl From<StoreError> for Refusal {
    fn from(error: StoreError) -> Self {
        Self::Store(error)
    }
}

async fn cancel(store: &dyn Store, prefix: &str) -> Result<String, Refusal> {
    let id = store.resolve(prefix).await?;
    let record = store.run(&id).await?;
    match record.status {
        RunStatus::Completed | RunStatus::Failed => {
            return Err(Refusal::Ended(format!(
                "run `{id}` has {} already; there is nothing to cancel",
                record.status.as_str()
            )));
        }
        RunStatus::Cancelled => return Ok(format!("run `{id}` is cancelled already")),
        RunStatus::Running | RunStatus::Paused => {}
    }
    if record.status == RunStatus::Running
        && let Some(lease) = store.lease(&id).await?
        && lease.is_held()
    {
        store.request_cancel(&id).await?;
        let deadline = Instant::now() + WAIT_FOR_OWNER.max(STALE_AFTER);
        while Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(100)).await;
            if store.run(&id).await?.status != RunStatus::Running {
                return Ok(format!(
                    "cancelled run `{id}` ({} stopped it); `atomic resume {id}` continues it",
                    lease.owner.describe()
                ));
            }
        }
        return Ok(format!(
            "asked {} to stop run `{id}`; it has not stopped yet (its step may be ending)",
            lease.owner.describe()
        ));
    }
    // Nobody is driving it (paused, or its owner died): take it, mark it, let go.
    let me = Owner::this_process();
    store.acquire(&id, &me).await?;
    let marked = store.set_status(&id, RunStatus::Cancelled, None).await;
    store.release(&id, &me).await?;
    marked?;
    Ok(format!(
        "cancelled run `{id}` (it was {}); `atomic resume {id}` continues it",
        record.status.as_str()
    ))
}
