//! Talking to runs on Temporal from the CLI: start one, follow it (the `progress` query),
//! answer its wait (the `answer` update), cancel it, list runs and read one's result.

use std::str::FromStr;

use futures_util::StreamExt;
use temporalio_client::{
    Client, ClientOptions, Connection, ConnectionOptions, Url, WorkflowCancelOptions,
    WorkflowDescribeOptions, WorkflowExecuteUpdateOptions, WorkflowExecutionStatus,
    WorkflowGetResultOptions, WorkflowListOptions, WorkflowQueryOptions, WorkflowStartOptions,
};

use super::wire::{Answer, Detail, Progress, RunStart};
use super::workflow::AtomicRun;
use crate::runtime::RunOutcome;

/// The workflow type atomic's runs have on Temporal.
pub const WORKFLOW_TYPE: &str = "atomic-run";

/// Connects to the server at `address` (`HOST:PORT`, or a URL).
///
/// # Errors
/// A message naming the address when it cannot be reached.
pub(super) async fn connect(address: &str, namespace: &str) -> Result<Client, String> {
    let url = if address.contains("://") {
        address.to_owned()
    } else {
        format!("http://{address}")
    };
    let url = Url::from_str(&url)
        .map_err(|error| format!("`{address}` is not a Temporal address (HOST:PORT): {error}"))?;
    let connection = Connection::connect(ConnectionOptions::new(url).build())
        .await
        .map_err(|error| {
            format!(
                "cannot reach the Temporal server at `{address}`: {error}\nstart one (`temporal server start-dev`) or pass its address with `--temporal HOST:PORT`"
            )
        })?;
    Client::new(connection, ClientOptions::new(namespace.to_owned()).build())
        .map_err(|error| format!("cannot use namespace `{namespace}`: {error}"))
}

/// How a run's workflow stands on the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Standing {
    /// Still running (or paused at a wait).
    Running,
    /// Ended with a result.
    Closed,
    /// Ended without one (terminated, timed out, failed as a workflow).
    Broken,
}

/// A run as `atomic runs --temporal` lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Listed {
    /// The run id (the workflow id).
    pub run_id: String,
    /// Temporal's status of its workflow, lower-case (`running`, `completed`, …).
    pub status: String,
    /// When it started, in milliseconds since the epoch.
    pub started_ms: u64,
}

/// A connection to the runs of one namespace and task queue.
#[derive(Clone)]
pub struct Temporal {
    client: Client,
    task_queue: String,
}

impl std::fmt::Debug for Temporal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Temporal")
            .field("task_queue", &self.task_queue)
            .finish_non_exhaustive()
    }
}

impl Temporal {
    /// Connects to `address`, for runs in `namespace` on `task_queue`.
    ///
    /// # Errors
    /// When the server cannot be reached.
    pub async fn connect(address: &str, namespace: &str, task_queue: &str) -> Result<Self, String> {
        Ok(Self {
            client: connect(address, namespace).await?,
            task_queue: task_queue.to_owned(),
        })
    }

    /// Starts a run (its id is the workflow id).
    ///
    /// # Errors
    /// When the server refuses it (a run of that id exists).
    pub async fn start(&self, start: RunStart) -> Result<(), String> {
        let id = start.run_id.clone();
        self.client
            .start_workflow(
                AtomicRun::run,
                start,
                WorkflowStartOptions::new(self.task_queue.clone(), id.clone()).build(),
            )
            .await
            .map(|_| ())
            .map_err(|error| format!("cannot start run `{id}` on Temporal: {error}"))
    }

    /// The run as it stands, with its events from `since` on.
    ///
    /// # Errors
    /// When there is no such run, or no worker answers the query.
    pub async fn progress(&self, run_id: &str, since: u64) -> Result<Progress, String> {
        self.client
            .get_workflow_handle::<AtomicRun>(run_id)
            .query(AtomicRun::progress, since, WorkflowQueryOptions::default())
            .await
            .map_err(|error| format!("cannot read run `{run_id}` from Temporal: {error}"))
    }

    /// The run with its steps and events, and its state.
    ///
    /// # Errors
    /// When there is no such run, or no worker answers the query.
    pub async fn detail(&self, run_id: &str) -> Result<Detail, String> {
        self.client
            .get_workflow_handle::<AtomicRun>(run_id)
            .query(AtomicRun::detail, (), WorkflowQueryOptions::default())
            .await
            .map_err(|error| format!("cannot read run `{run_id}` from Temporal: {error}"))
    }

    /// How the run's workflow stands.
    ///
    /// # Errors
    /// When there is no such run.
    pub async fn standing(&self, run_id: &str) -> Result<Standing, String> {
        let described = self
            .client
            .get_workflow_handle::<AtomicRun>(run_id)
            .describe(WorkflowDescribeOptions::default())
            .await
            .map_err(|error| format!("there is no run `{run_id}` on Temporal: {error}"))?;
        Ok(match described.status() {
            WorkflowExecutionStatus::Running | WorkflowExecutionStatus::ContinuedAsNew => {
                Standing::Running
            }
            WorkflowExecutionStatus::Completed => Standing::Closed,
            _ => Standing::Broken,
        })
    }

    /// The run's result, once its workflow has ended.
    ///
    /// # Errors
    /// A message saying how the workflow ended when it has no result (it failed as a
    /// workflow, was terminated or timed out).
    pub async fn result(&self, run_id: &str) -> Result<RunOutcome, String> {
        self.client
            .get_workflow_handle::<AtomicRun>(run_id)
            .get_result(WorkflowGetResultOptions::default())
            .await
            .map_err(|error| format!("run `{run_id}` ended on Temporal without a result: {error}"))
    }

    /// Answers the run's pending wait. A refused answer leaves it paused.
    ///
    /// # Errors
    /// The refusal, as `atomic resume` words it.
    pub async fn answer(&self, run_id: &str, answer: Answer) -> Result<(), String> {
        self.client
            .get_workflow_handle::<AtomicRun>(run_id)
            .execute_update(
                AtomicRun::answer,
                answer,
                WorkflowExecuteUpdateOptions::default(),
            )
            .await
            .map_err(|error| refusal(&error.to_string()))
    }

    /// Asks the run to stop (its step in flight is cancelled; committed steps are kept).
    ///
    /// # Errors
    /// When there is no such running run.
    pub async fn cancel(&self, run_id: &str) -> Result<(), String> {
        self.client
            .get_workflow_handle::<AtomicRun>(run_id)
            .cancel(WorkflowCancelOptions::default())
            .await
            .map_err(|error| format!("cannot cancel run `{run_id}` on Temporal: {error}"))
    }

    /// atomic's runs in the namespace, newest first.
    ///
    /// # Errors
    /// When the server cannot list them.
    pub async fn list(&self, limit: Option<usize>) -> Result<Vec<Listed>, String> {
        let mut options = WorkflowListOptions::default();
        options.limit = limit;
        let mut stream = self
            .client
            .list_workflows(format!("WorkflowType = '{WORKFLOW_TYPE}'"), options);
        let mut listed = Vec::new();
        while let Some(next) = stream.next().await {
            let info = next.map_err(|error| format!("cannot list runs on Temporal: {error}"))?;
            listed.push(Listed {
                run_id: info.id().to_owned(),
                status: status_name(info.status()),
                started_ms: info
                    .start_time()
                    .and_then(|at| at.duration_since(std::time::UNIX_EPOCH).ok())
                    .map_or(0, |since| u64::try_from(since.as_millis()).unwrap_or(0)),
            });
        }
        Ok(listed)
    }
}

fn status_name(status: WorkflowExecutionStatus) -> String {
    match status {
        WorkflowExecutionStatus::Running => "running",
        WorkflowExecutionStatus::Completed => "completed",
        WorkflowExecutionStatus::Failed => "failed",
        WorkflowExecutionStatus::Canceled => "canceled",
        WorkflowExecutionStatus::Terminated => "terminated",
        WorkflowExecutionStatus::ContinuedAsNew => "continued-as-new",
        WorkflowExecutionStatus::TimedOut => "timed-out",
        WorkflowExecutionStatus::Paused => "paused",
        _ => "unknown",
    }
    .to_owned()
}

/// The validator's words out of the server's wrapping.
fn refusal(error: &str) -> String {
    // The server wraps the validator's message; what follows its last "message: " or the
    // whole text when the shape is unknown.
    error.to_owned()
}
