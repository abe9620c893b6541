//! `atomic ui --temporal`: runs on a Temporal server as a [`RunSource`], read through the
//! client `atomic runs --temporal` uses. The list is the server's (its visibility store);
//! a run's record, events and state come from its workflow's queries (`progress` for the
//! record and the events after a position, `detail` for the exact state and cursor), which
//! a worker answers — for a finished run by replaying its history — so a run can be read
//! only while an `atomic worker` serves its task queue.
//!
//! What is not there: the live feed of a step's agent text before the step commits (a
//! worker streams it into its activity, not to the server); a step's events arrive when
//! its activity returns. Runs show from their first execution's start even after they
//! continued as new, but events of earlier executions are not carried, only counted.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use futures_util::future::join_all;
use serde_json::{Map, Value};

use crate::store::{
    EventRecord, LogPosition, LogTail, RunId, RunRecord, RunStatus, StoreError, StoreFuture,
    Timestamp,
};
use crate::temporal::Temporal;
use crate::temporal::client::Listed;
use crate::temporal::wire::Progress;
use crate::view::{RunCheckpoint, RunSource};

/// How long a query may wait for a worker to answer it: a run is read only through a
/// worker, and a view must not hang when none is running.
const QUERY_WAIT: Duration = Duration::from_secs(5);

/// How long a running run's record read for the runs list is shown before it is read
/// again (the list is polled several times a second).
const RECORD_FRESH: Duration = Duration::from_secs(1);

/// How many of the newest runs a prefix is looked for among.
const PREFIX_SEARCH: usize = 1_000;

/// Where the runs are: resolved as every `--temporal` command resolves it.
pub(in crate::cli) use crate::cli::temporal::Target as Place;

/// A run's record read for the runs list, and when.
#[derive(Debug)]
struct Cached {
    record: RunRecord,
    read_at: Instant,
    /// Its workflow has closed: the record never changes again.
    closed: bool,
}

/// The runs on one Temporal namespace and task queue.
#[derive(Debug)]
pub(crate) struct TemporalSource {
    temporal: Temporal,
    place: Place,
    records: Mutex<HashMap<String, Cached>>,
}

impl TemporalSource {
    /// Connects to the server `place` names.
    ///
    /// # Errors
    /// The server cannot be reached: what failed and what to do.
    pub(crate) async fn connect(place: Place) -> Result<Self, String> {
        let temporal = Temporal::connect(&place.address, &place.namespace, &place.task_queue)
            .await
            .map_err(|message| {
                format!("{message}\n(`atomic ui --temporal` reads runs from that server)")
            })?;
        Ok(Self {
            temporal,
            place,
            records: Mutex::default(),
        })
    }

    /// A failure to read from the server, said with where and what to do.
    fn unreadable(&self, message: String) -> StoreError {
        StoreError::Remote {
            place: self.place.describe(),
            message,
        }
    }

    /// No run `run` (or none yet) on this server.
    fn missing(&self, run: &str, why: &str) -> StoreError {
        // `NotFound` prints "no run `…`": the text goes inside its quotes.
        StoreError::NotFound(format!(
            "{run}` on Temporal at `{}{why}",
            self.place.address
        ))
    }

    /// A query through a worker, given [`QUERY_WAIT`] to answer.
    async fn ask<T>(
        &self,
        run: &str,
        query: impl Future<Output = Result<T, String>>,
    ) -> Result<T, StoreError> {
        match tokio::time::timeout(QUERY_WAIT, query).await {
            Ok(Ok(answer)) => Ok(answer),
            Ok(Err(message)) => Err(self.unreadable(format!(
                "{message}\nhelp: a run is read through a worker; is one running? `{}`",
                self.place.worker_command()
            ))),
            Err(_) => Err(self.unreadable(format!(
                "no worker answered for run `{run}` within {} s; start one: `{}`",
                QUERY_WAIT.as_secs(),
                self.place.worker_command()
            ))),
        }
    }

    /// The run's progress from event `since` on (at most one page of events).
    async fn progress(&self, run: &str, since: u64) -> Result<Progress, StoreError> {
        self.ask(run, self.temporal.progress(run, since)).await
    }

    /// atomic's runs on the server, newest first, each once (a run continued as new is
    /// listed once per execution; the newest comes first).
    async fn listed(&self, limit: usize) -> Result<Vec<Listed>, StoreError> {
        let listed = self.temporal.list(Some(limit)).await.map_err(|message| {
            self.unreadable(format!(
                "{message}\nhelp: is the Temporal server at {} running?",
                self.place.address
            ))
        })?;
        let mut seen = std::collections::HashSet::new();
        Ok(listed
            .into_iter()
            .filter(|run| seen.insert(run.run_id.clone()))
            .collect())
    }

    /// The record of a listed run: kept while fresh (for ever once its workflow closed),
    /// else read; when no worker answers, what the server's list says, with why there is
    /// no more.
    async fn listed_record(&self, listed: &Listed) -> RunRecord {
        let closed = listed.status != "running";
        if let Some(cached) = self.cached(&listed.run_id, closed) {
            return cached;
        }
        let record = match self.progress(&listed.run_id, u64::MAX).await {
            Ok(Progress { run: Some(run), .. }) => run,
            Ok(Progress { run: None, .. }) => {
                return unread_record(listed, "no worker has started it yet".to_owned());
            }
            Err(error) => return unread_record(listed, error.to_string()),
        };
        self.records
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(
                listed.run_id.clone(),
                Cached {
                    record: record.clone(),
                    read_at: Instant::now(),
                    closed,
                },
            );
        record
    }

    fn cached(&self, run: &str, closed: bool) -> Option<RunRecord> {
        let records = self
            .records
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let cached = records.get(run)?;
        let fresh = (cached.closed && closed) || cached.read_at.elapsed() < RECORD_FRESH;
        fresh.then(|| cached.record.clone())
    }
}

/// A listed run whose workflow did not answer: its id, start and Temporal's status, and
/// why there is nothing more (shown as its error).
fn unread_record(listed: &Listed, why: String) -> RunRecord {
    let status = match listed.status.as_str() {
        "running" => RunStatus::Running,
        "completed" => RunStatus::Completed,
        "canceled" => RunStatus::Cancelled,
        _ => RunStatus::Failed,
    };
    let started = Timestamp(listed.started_ms);
    RunRecord {
        id: RunId::new(listed.run_id.clone()),
        workflow: String::new(),
        path: String::new(),
        hash: String::new(),
        inputs: Value::Object(Map::new()),
        status,
        created_at: started,
        updated_at: started,
        steps: 0,
        error: Some(format!(
            "its workflow is {} on Temporal; cannot read it: {why}",
            listed.status
        )),
        waits: Vec::new(),
        origin: None,
    }
}

impl RunSource for TemporalSource {
    fn runs(&self, limit: usize) -> StoreFuture<'_, Vec<RunRecord>> {
        Box::pin(async move {
            let listed = self.listed(limit).await?;
            // Asked together: each may wait for a worker.
            Ok(join_all(listed.iter().map(|run| self.listed_record(run))).await)
        })
    }

    fn resolve<'a>(&'a self, prefix: &'a str) -> StoreFuture<'a, RunId> {
        Box::pin(async move {
            // A whole id is found at once (the list lags behind a run just started).
            if self.temporal.standing(prefix).await.is_ok() {
                return Ok(RunId::new(prefix));
            }
            let matches: Vec<String> = self
                .listed(PREFIX_SEARCH)
                .await?
                .into_iter()
                .map(|run| run.run_id)
                .filter(|id| id.starts_with(prefix))
                .collect();
            match matches.as_slice() {
                [] => Err(self.missing(prefix, "")),
                [only] => Ok(RunId::new(only.clone())),
                _ => Err(StoreError::Ambiguous {
                    prefix: prefix.to_owned(),
                    matches: matches.into_iter().take(5).collect(),
                }),
            }
        })
    }

    fn record<'a>(&'a self, run: &'a RunId) -> StoreFuture<'a, RunRecord> {
        Box::pin(async move {
            self.progress(run.as_str(), u64::MAX)
                .await?
                .run
                .ok_or_else(|| self.not_started(run))
        })
    }

    fn log_after<'a>(&'a self, run: &'a RunId, after: LogPosition) -> StoreFuture<'a, LogTail> {
        Box::pin(async move {
            let mut events = Vec::new();
            let mut since = after.events;
            // The query returns at most 2,000 events: ask again until the last one.
            loop {
                let page = self.progress(run.as_str(), since).await?;
                let Some(record) = page.run else {
                    return Err(self.not_started(run));
                };
                // Numbered from 1 like a store's log; after a continue-as-new the first
                // events of this execution follow those counted before it.
                let first = page.next - page.events.len() as u64;
                events.extend(
                    page.events
                        .into_iter()
                        .zip(first + 1..)
                        .map(|(event, seq)| EventRecord {
                            seq,
                            step: 0,
                            event,
                        }),
                );
                let done = page.next >= page.total || page.next <= since;
                since = page.next;
                if done {
                    // The `progress` query carries no step times.
                    return Ok(LogTail {
                        run: record,
                        events,
                        steps: Vec::new(),
                        position: LogPosition {
                            events: since,
                            ..after
                        },
                    });
                }
            }
        })
    }

    fn checkpoint<'a>(&'a self, run: &'a RunId) -> StoreFuture<'a, RunCheckpoint> {
        Box::pin(async move {
            let found = self
                .ask(run.as_str(), self.temporal.detail(run.as_str()))
                .await?;
            let detail = found.detail.ok_or_else(|| self.not_started(run))?;
            // The cursor of the last step of the run itself (a block's steps have their own).
            let cursor = detail
                .steps
                .iter()
                .rev()
                .find(|step| step.scope.is_none())
                .map(|step| step.cursor.clone());
            Ok(RunCheckpoint {
                state: found.state,
                cursor,
            })
        })
    }

    fn live_feed(&self, _run: &RunId) -> Option<PathBuf> {
        // Workers do not send a step's agent text before its activity returns.
        None
    }
}

impl TemporalSource {
    fn not_started(&self, run: &RunId) -> StoreError {
        self.missing(
            run.as_str(),
            &format!(
                "` yet: no worker has started it; start one: `{}",
                self.place.worker_command()
            ),
        )
    }
}
