//! [`ResumeError`]: why a run cannot be continued, or an answer cannot be taken, before
//! anything runs. The run is left as it was. A bad answer to a wait is not one of these
//! (it is [`RunError::BadAnswer`](crate::runtime::RunError::BadAnswer), whose wording the
//! CLI asks again with).

use crate::runtime::state::StateError;
use crate::store::{RunId, RunStatus};

/// Why a run cannot be resumed, or an answer not given to it. Each message names the run
/// (or says "the run" where the caller has no id, as Temporal's answer validator) and says
/// what to do where there is something to do.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ResumeError {
    /// The run completed or failed: there is nothing to continue.
    #[error("run `{run}` has {} and cannot be resumed", status.as_str())]
    Finished {
        /// The run.
        run: RunId,
        /// How it ended.
        status: RunStatus,
    },

    /// Files of the workspace changed while the run was stopped, by none of its steps.
    #[error(
        "run `{run}`: these files changed since the run stopped, and none of its steps changed them:{}\nresume with `--keep-changes` to go on with the files as they are, or put them back first (`atomic runs diff {run}` shows what the run's steps did)",
        bullets("", paths)
    )]
    WorkspaceChanged {
        /// The run.
        run: RunId,
        /// The files, by path.
        paths: Vec<String>,
    },

    /// The workspace's files could not be read or put back.
    #[error("run `{run}`: the workspace's files: {message}")]
    Workspace {
        /// The run.
        run: RunId,
        /// What went wrong.
        message: String,
    },

    /// The run's own cursor is not one this version of atomic can read.
    #[error("run `{run}` has an unreadable cursor: {error}")]
    UnreadableCursor {
        /// The run.
        run: RunId,
        /// Why it cannot be read.
        error: serde_json::Error,
    },

    /// The cursor of a step inside a block (a parallel branch, a subgraph) is unreadable.
    #[error("run `{run}`: step {seq} has an unreadable cursor: {error}")]
    UnreadableBlockCursor {
        /// The run.
        run: RunId,
        /// The step.
        seq: u64,
        /// Why it cannot be read.
        error: serde_json::Error,
    },

    /// The workflow was edited so that the step the run continues at is gone or moved.
    #[error(
        "run `{run}` continues at `{step}`, which this version of the workflow does not have at that place{}\nundo the edit, or start a new run",
        bullets(":", changes)
    )]
    ResumePointGone {
        /// The run.
        run: RunId,
        /// The key of the step it continues at (`?` when the cursor has none).
        step: String,
        /// What changed in the workflow's steps, one line each (see `edited::changes`).
        changes: Vec<String>,
    },

    /// The stored state is at a `state version` above the workflow's: it was written by a
    /// later version of the workflow.
    #[error(
        "run `{run}` stored its state at `state version={stored}`, newer than this workflow's {workflow}: resume it with the workflow it ran with"
    )]
    NewerStateVersion {
        /// The run.
        run: RunId,
        /// The version the state was stored at.
        stored: u32,
        /// The workflow's version.
        workflow: u32,
    },

    /// A field's `migrate=` expression failed or gave a value its type refuses.
    #[error("run `{run}`: migrating `{field}` from state version {from} failed: {message}")]
    MigrationFailed {
        /// The run.
        run: RunId,
        /// The field.
        field: String,
        /// The version migrated from.
        from: u32,
        /// What went wrong.
        message: String,
    },

    /// `--reset` names a field the workflow does not declare and the state does not hold.
    #[error("the workflow has no state field `{field}` to reset")]
    NoFieldToReset {
        /// The field named.
        field: String,
    },

    /// After migrating and resetting, stored fields still do not fit their declarations.
    #[error(
        "run `{run}` cannot continue with this version of the workflow; its saved state no longer fits:{}\nundo the edit to those fields, reset them (`atomic resume {run} --force --reset FIELD`, losing what they hold), migrate them (`state version=N` and `migrate=` on each field), or start a new run",
        bullets("", misfits)
    )]
    StateMisfits {
        /// The run.
        run: RunId,
        /// What does not fit, one line per field.
        misfits: Vec<String>,
    },

    /// The stored state does not load under the workflow's declarations.
    #[error("run `{run}` does not fit this workflow: {error}")]
    StateDoesNotFit {
        /// The run.
        run: RunId,
        /// Why.
        error: StateError,
    },

    /// The state would change (a migration or reset) while blocks still hold steps written
    /// with the old state.
    #[error(
        "run `{run}` is inside a parallel or subgraph, whose steps hold state of the old version: resume it with the workflow it ran with until that block ends, then migrate or reset"
    )]
    MigrationInsideBlock {
        /// The run.
        run: RunId,
    },

    /// An answer was given, and nothing waits for one.
    #[error("{} is not paused at a wait; it takes no answer", subject(run.as_ref()))]
    NotPaused {
        /// The run (`None`: the caller has no id).
        run: Option<RunId>,
    },

    /// The run is paused at waits and was resumed without an answer.
    #[error(
        "run `{run}` is paused at {}: pass an answer (`atomic resume {run} --answer …`)",
        listed(waits)
    )]
    AnswerNeeded {
        /// The run.
        run: RunId,
        /// The keys of the waits pending.
        waits: Vec<String>,
    },

    /// `--wait` names no pending wait.
    #[error(
        "{} has no pending wait `{named}`; it is paused at {}",
        subject(run.as_ref()),
        listed(waits)
    )]
    NoSuchWait {
        /// The run (`None`: the caller has no id).
        run: Option<RunId>,
        /// What `--wait` said.
        named: String,
        /// The keys of the waits pending.
        waits: Vec<String>,
    },

    /// Several waits are pending (or `--wait` names a node id several share) and the
    /// answer does not say which it is for.
    #[error(
        "{} is paused at {}: name the one to answer with `--wait`",
        subject(run.as_ref()),
        listed(waits)
    )]
    SeveralWaits {
        /// The run (`None`: the caller has no id).
        run: Option<RunId>,
        /// The keys of the waits pending.
        waits: Vec<String>,
    },

    /// A pending wait's block path names a node that is not a subgraph of the workflow.
    #[error("the wait's block `{scope}` names `{node}`, which is not a subgraph of this workflow")]
    NotASubgraph {
        /// The block path.
        scope: String,
        /// The node it names.
        node: String,
    },

    /// A wait inside a subgraph is answered, and the run was given no way to load
    /// subgraphs' workflows.
    #[error("this run cannot load the workflows its subgraphs run")]
    NoSubgraphLoader,

    /// The workflow of a subgraph the wait is inside cannot be loaded.
    #[error("{message}")]
    SubgraphUnloadable {
        /// The loader's message, naming the file.
        message: String,
    },

    /// The workflow (or the subgraph the wait's block runs) has no wait of that id.
    #[error("the workflow has no wait `{node}` in `{scope}`")]
    NoSuchWaitNode {
        /// The wait's node id.
        node: String,
        /// Its block path.
        scope: String,
    },
}

/// "run `<id>`", or "the run" for a caller that has no id.
fn subject(run: Option<&RunId>) -> String {
    run.map_or_else(|| "the run".to_owned(), |run| format!("run `{run}`"))
}

/// Wait keys for messages: `` `a`, `fan@3#1/b` `` (as `PendingWait::list`).
fn listed(keys: &[String]) -> String {
    keys.iter()
        .map(|key| format!("`{key}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `lines` as an indented list after `lead`, one a line; nothing when there are none.
fn bullets(lead: &str, lines: &[String]) -> String {
    if lines.is_empty() {
        return String::new();
    }
    format!("{lead}\n  - {}", lines.join("\n  - "))
}
