//! Where a [`RunView`] comes from when the run is not this process's: a [`RunSource`] — the
//! project's store, or a Temporal server. The store's log has each step's events once the
//! step commits; its checkpoint has the exact state and, while the run goes on, the step
//! that comes next — shown running, since an agent call commits only when it ends. Reading
//! never blocks a running `atomic run` (SQLite in WAL mode).
//!
//! A [`Follow`] keeps its place in the log, so each refresh reads and folds only what was
//! logged since the last: following a 20,000-step run costs what is new, not the run. It
//! also reads the run's live feed when the source has one ([`crate::store::live`]), so a
//! step that has not committed shows what its agent is saying as it says it.

use serde::Deserialize;
use serde_json::Value;

use super::run::{NodeState, RunPhase, RunView};
use super::run_source::RunSource;
use crate::lower::Outline;
use crate::runtime::RunEvent;
use crate::store::live::LiveReader;
use crate::store::{LogPosition, RunId, RunStatus, StoreError, Timestamp};

/// A run's view kept current from where the run is kept.
#[derive(Debug)]
pub struct Follow {
    run: RunId,
    view: RunView,
    position: LogPosition,
    /// The record as last read (status, steps, last update): unchanged means nothing to do.
    seen: Option<(RunStatus, u64, Timestamp)>,
    /// The step shown running because the cursor is at it, and the state it had before.
    marked: Option<(usize, NodeState)>,
    /// Counts the refreshes that changed the view, so several readers of one follower can
    /// each tell whether anything is new to them.
    version: u64,
    /// The run's live feed, once the source said where it is.
    live: Option<LiveReader>,
    /// Live events of steps the log does not have yet, by step.
    pending: Vec<(u64, RunEvent)>,
}

impl Follow {
    /// A follower of `run`, of the workflow `outline` describes; nothing read yet.
    #[must_use]
    pub fn new(run: &RunId, outline: &Outline) -> Self {
        Self {
            run: run.clone(),
            view: RunView::new(run.as_str(), outline),
            position: LogPosition::default(),
            seen: None,
            marked: None,
            version: 0,
            live: None,
            pending: Vec::new(),
        }
    }

    /// The view as last read.
    #[must_use]
    pub fn view(&self) -> &RunView {
        &self.view
    }

    /// Goes up by one each time a refresh changed the view.
    #[must_use]
    pub fn version(&self) -> u64 {
        self.version
    }

    /// Reads what `source` has that this follower has not seen; whether the view changed.
    ///
    /// # Errors
    /// The source cannot be read, or has no such run.
    pub async fn refresh(&mut self, source: &dyn RunSource) -> Result<bool, StoreError> {
        // The feed first: a step the log (read after) has is then never shown live as well.
        let live = self.read_live(source);
        let tail = source.log_after(&self.run, self.position).await?;
        let seen = (tail.run.status, tail.run.steps, tail.run.updated_at);
        let logged = !tail.events.is_empty() || self.seen != Some(seen);
        if !logged && !live {
            return Ok(false);
        }
        self.view.clear_overlay();
        if logged {
            let steps_moved = self
                .seen
                .is_none_or(|(_, steps, _)| steps != tail.run.steps);
            self.unmark();
            if self.view.workflow.is_empty() {
                self.view.workflow.clone_from(&tail.run.workflow);
            }
            self.view.apply_records(&tail.events);
            self.view.apply_times(&tail.steps);
            self.view.settle(&tail.run);
            self.position = tail.position;
            self.seen = Some(seen);
            // The state the deltas build is close; the checkpoint's is exact (keyed
            // merges, the run's inputs), and it says where the run goes next.
            let next = if steps_moved || self.view.phase == RunPhase::Running {
                let checkpoint = source.checkpoint(&self.run).await?;
                self.view.state = checkpoint.state;
                next_step(checkpoint.cursor.as_ref(), &self.view)
            } else {
                None
            };
            if self.view.phase == RunPhase::Running {
                self.mark(next);
            }
        }
        let committed = tail.run.steps;
        self.pending.retain(|(step, _)| *step > committed);
        if self.view.phase != RunPhase::Running {
            self.pending.clear();
        }
        if self.view.phase == RunPhase::Running && !self.pending.is_empty() {
            self.view
                .overlay(self.pending.iter().map(|(_, event)| event));
        }
        self.version += 1;
        Ok(true)
    }

    /// Reads what the live feed has that is new; whether anything was.
    fn read_live(&mut self, source: &dyn RunSource) -> bool {
        if self.live.is_none() {
            self.live = source.live_feed(&self.run).map(LiveReader::new);
        }
        let Some(reader) = self.live.as_mut() else {
            return false;
        };
        let (lines, restarted) = reader.read();
        if restarted {
            self.pending.clear();
        }
        let fresh = !lines.is_empty();
        self.pending.extend(lines.into_iter().filter_map(|line| {
            RunEvent::deserialize(line.event)
                .ok()
                .map(|event| (line.step, event))
        }));
        fresh || restarted
    }

    /// Shows the step the run goes to next as running.
    fn mark(&mut self, next: Option<String>) {
        let Some(next) = next else { return };
        let Some(at) = self.view.nodes.iter().position(|node| node.key == next) else {
            return;
        };
        let node = &mut self.view.nodes[at];
        if matches!(node.state, NodeState::Failed | NodeState::Running) {
            return;
        }
        self.marked = Some((at, node.state));
        node.state = NodeState::Running;
    }

    /// Undoes [`Follow::mark`] before the log says what really happened.
    fn unmark(&mut self) {
        if let Some((at, before)) = self.marked.take()
            && self.view.nodes[at].state == NodeState::Running
        {
            self.view.nodes[at].state = before;
        }
    }
}

/// The step after the last commit: the cursor's, or before the first commit the one after
/// the start.
fn next_step(cursor: Option<&Value>, view: &RunView) -> Option<String> {
    match cursor {
        Some(cursor) => cursor
            .get("next_key")
            .and_then(Value::as_str)
            .map(str::to_owned),
        None => {
            let start = view.nodes.iter().find(|node| node.kind == "start")?;
            view.edges
                .iter()
                .find(|edge| edge.from == start.key)
                .map(|edge| edge.to.clone())
        }
    }
}

/// The view of `run` as `source` has it now (read once).
///
/// # Errors
/// The source cannot be read, or has no such run.
pub async fn load(
    source: &dyn RunSource,
    run: &RunId,
    outline: &Outline,
) -> Result<RunView, StoreError> {
    let mut follow = Follow::new(run, outline);
    follow.refresh(source).await?;
    Ok(follow.view)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;

    use super::*;
    use crate::lower::{OutlineEdge, OutlineStep};
    use crate::runtime::{RunEvent, StepOutcome};
    use crate::store::{SqliteOptions, SqliteStore, StepCommit, Store, conformance};
    use crate::view::StoreSource;

    fn outline() -> Outline {
        let step = |key: &str, node: Option<&str>, kind: &'static str| OutlineStep {
            key: key.to_owned(),
            node: node.map(str::to_owned),
            kind,
            label: key.to_owned(),
        };
        let edge = |from: &str, to: &str| OutlineEdge {
            from: from.to_owned(),
            to: to.to_owned(),
            label: None,
            style: "plain",
            backward: false,
        };
        Outline {
            steps: vec![
                step("#start", None, "start"),
                step("plan", Some("plan"), "agent"),
                step("ship", Some("ship"), "tool"),
                step("#end", None, "end"),
            ],
            edges: vec![
                edge("#start", "plan"),
                edge("plan", "ship"),
                edge("ship", "#end"),
            ],
        }
    }

    /// Step `seq` ran `node` (and said `text`), the cursor going on to `next`.
    fn step(seq: u64, node: &str, text: &str, next: &str) -> StepCommit {
        let event = |event: RunEvent| serde_json::to_value(event).unwrap().into();
        let mut commit = conformance::step(seq);
        commit.node_id = node.to_owned();
        commit.cursor = json!({ "next_key": next }).into();
        commit.events = vec![
            event(RunEvent::StepStarted {
                step: seq,
                node: Arc::from(node),
                kind: crate::ir::NodeKeyword::Agent,
                attempt: 1,
                branch: None,
            }),
            event(RunEvent::Agent {
                node: Arc::from(node),
                event: crate::providers::AgentEvent::MessageComplete {
                    text: text.to_owned(),
                },
            }),
            event(RunEvent::StepFinished {
                step: seq,
                node: Arc::from(node),
                status: StepOutcome::Completed,
                delta: crate::runtime::state::Delta::default(),
                files: None,
                branch: None,
            }),
        ];
        commit
    }

    #[tokio::test]
    async fn a_follower_reads_only_what_is_new_and_shows_the_next_step_running() {
        let dir = tempfile::tempdir().unwrap();
        let store =
            Arc::new(SqliteStore::open_project(dir.path(), SqliteOptions::default()).unwrap());
        let source = StoreSource::new(store.clone());
        let run = RunId::new("01ffffffffffff");
        store
            .create_run(conformance::new_run(run.as_str(), "x"))
            .await
            .unwrap();
        let mut follow = Follow::new(&run, &outline());
        assert!(follow.refresh(&source).await.unwrap());
        let state = |follow: &Follow, key: &str| {
            let node = follow.view().nodes.iter().find(|node| node.key == key);
            node.unwrap().state
        };
        assert_eq!(
            state(&follow, "plan"),
            NodeState::Running,
            "before any commit"
        );
        assert!(!follow.refresh(&source).await.unwrap(), "nothing new");
        let version = follow.version();

        store
            .commit_step(&run, step(1, "plan", "A plan.", "ship"))
            .await
            .unwrap();
        assert!(follow.refresh(&source).await.unwrap());
        assert_eq!(follow.version(), version + 1);
        assert_eq!(state(&follow, "plan"), NodeState::Done);
        assert_eq!(
            state(&follow, "ship"),
            NodeState::Running,
            "the cursor's next"
        );
        assert_eq!(follow.view().event_count, 3);
        assert_eq!(follow.view().state, conformance::expected_state(1, "x"));

        store
            .commit_step(&run, step(2, "ship", "Shipped.", "#end"))
            .await
            .unwrap();
        assert!(follow.refresh(&source).await.unwrap());
        assert_eq!(state(&follow, "ship"), NodeState::Done, "the mark gave way");
        assert_eq!(follow.view().event_count, 6, "each event folded once");
        assert_eq!(follow.view().node("plan").unwrap().runs, 1);
        assert_eq!(
            follow.view().node("plan").unwrap().elapsed_ms,
            Some(1),
            "the step's time, from its commit"
        );
        let read_once = load(&source, &run, &outline()).await.unwrap();
        assert_eq!(
            &read_once,
            follow.view(),
            "following is reading it all at once"
        );
    }
}
