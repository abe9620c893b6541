//! What the terminal view reads, in the background: every [`POLL`] (and at once when the
//! view asks for another run) the project's runs and the shown run's view, sent to the
//! drawing loop over a channel, so reading a large run never holds up a key. Runs' costs
//! for the runs list are read from their views, once per change of a run.

use std::sync::mpsc;
use std::time::Duration;

use super::app::RunRow;
use crate::cli::ui::Watch;
use crate::store::RunId;
use crate::view::RunView;

/// How often the store is read.
pub(super) const POLL: Duration = Duration::from_millis(250);

/// How many runs the runs list shows.
const RUNS_SHOWN: usize = 100;

/// What to read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Target {
    /// The run shown.
    pub(super) run: Option<RunId>,
    /// The runs list is up (its costs are read).
    pub(super) list: bool,
}

/// What was read.
#[derive(Debug)]
pub(super) enum Loaded {
    /// The runs, newest first.
    Runs(Vec<RunRow>),
    /// A run's view, or why it could not be read.
    View(RunId, Result<Box<RunView>, String>),
    /// The runs could not be read.
    Failed(String),
    /// The patch between two snapshots of a run's files (for the diff pane), or why it
    /// could not be read.
    Patch {
        /// The snapshot before.
        before: String,
        /// The snapshot after.
        after: String,
        /// Git's unified diff, without colours.
        patch: Result<String, String>,
    },
    /// A signal asks the view to close (SIGTERM, SIGHUP).
    Stop,
}

/// Reads until the view drops either end of its channels.
pub(super) async fn poll(
    watch: Watch,
    mut target: tokio::sync::watch::Receiver<Target>,
    loaded: mpsc::Sender<Loaded>,
) {
    let mut tick = tokio::time::interval(POLL);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut sent: Option<(RunId, u64)> = None;
    loop {
        tokio::select! {
            biased;
            changed = target.changed() => if changed.is_err() { return },
            _ = tick.tick() => {}
        }
        let Target { run, list } = target.borrow_and_update().clone();
        let message = match watch.runs(RUNS_SHOWN).await {
            Ok(records) => {
                let mut rows = Vec::with_capacity(records.len());
                for record in records {
                    let cost_usd = if list {
                        watch.cost(&record).await
                    } else {
                        watch.known_cost(&record.id)
                    };
                    rows.push(RunRow { record, cost_usd });
                }
                Loaded::Runs(rows)
            }
            Err(error) => Loaded::Failed(error.to_string()),
        };
        if loaded.send(message).is_err() {
            return;
        }
        if let Some(run) = run {
            // The view is sent again only when it changed (or another run is shown).
            let known = sent.as_ref().filter(|(id, _)| *id == run).map(|(_, v)| *v);
            let view = watch
                .read(&run, |view, version| {
                    (known != Some(version)).then(|| (Box::new(view.clone()), version))
                })
                .await;
            let view = match view {
                Ok(None) => continue,
                Ok(Some((view, version))) => {
                    sent = Some((run.clone(), version));
                    Ok(view)
                }
                Err(error) => {
                    sent = None;
                    Err(error.to_string())
                }
            };
            if loaded.send(Loaded::View(run, view)).is_err() {
                return;
            }
        }
    }
}
