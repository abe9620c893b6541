//! `atomic worker`: polls a task queue for atomic's workflow and activities until asked
//! to stop, then stops polling and finishes what it holds.

use std::sync::Arc;

use temporalio_sdk::runtime::PollerBehavior;
use temporalio_sdk::{Runtime, Worker, WorkerOptions};

use super::activities::Activities;
use super::client::connect;
use super::engine::Engine;
use super::workflow::AtomicRun;

/// Polls each worker keeps open for each kind of task.
const POLLERS: usize = 5;

/// Where a worker polls.
#[derive(Clone, Debug)]
pub struct WorkerSettings {
    /// The server, `HOST:PORT`.
    pub address: String,
    /// The namespace.
    pub namespace: String,
    /// The task queue.
    pub task_queue: String,
}

/// Runs a worker until `stop` resolves, then shuts it down cleanly: no new tasks are taken
/// and those in hand finish (or, past the grace period, go back to the server).
///
/// # Errors
/// The server cannot be reached, or the worker cannot start.
pub async fn serve(
    settings: &WorkerSettings,
    engine: Arc<Engine>,
    stop: impl Future<Output = ()> + Send + 'static,
) -> Result<(), String> {
    let runtime = Runtime::from_current_tokio(Default::default())
        .map_err(|error| format!("cannot start the Temporal runtime: {error}"))?;
    let client = connect(&settings.address, &settings.namespace).await?;
    let for_workflows = Arc::clone(&engine);
    let options = WorkerOptions::new(settings.task_queue.clone())
        .register_workflow_with_factory::<AtomicRun, _>(move || {
            AtomicRun::new(Arc::clone(&for_workflows))
        })
        .map_err(|error| format!("cannot register atomic's workflow: {error}"))?
        .register_activities(Activities::new(engine))
        // Fixed pollers: several waiting at all times, so a task the server creates meets a
        // waiting poll instead of the database (autoscaling starts from one).
        .workflow_task_poller_behavior(PollerBehavior::SimpleMaximum(POLLERS))
        .activity_task_poller_behavior(PollerBehavior::SimpleMaximum(POLLERS))
        .build();
    let mut worker = Worker::new(&runtime, client, options)
        .map_err(|error| format!("cannot start the worker: {error}"))?;
    let shutdown = worker.shutdown_handle();
    tokio::spawn(async move {
        stop.await;
        shutdown();
    });
    worker
        .run()
        .await
        .map_err(|error| format!("the worker stopped: {error}"))
}
