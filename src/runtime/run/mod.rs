//! A run's entry points: [`run`] starts one, [`resume`](resume()) continues one from its last
//! committed step (answering the wait it is paused at, if any), and both drive the walk to
//! an end, a pause or a stop, returning a [`RunOutcome`]. Whatever stops a run from going
//! on before any step runs is a [`ResumeError`].
//!
//! By concern: `start` (a new run), `resume` (loading a checkpoint and refusing what cannot
//! go on), `migrate` (fitting a stored state to the workflow: legacy output fields, `state
//! version` migrations, `--reset`), `edited` (what changed, for a refused resume point),
//! `answer` (where a resumed run starts with the answer it brings, and the check that
//! answer gets), `wait_choice` (the one rule for which pending wait an answer is for),
//! `drive` (walking and recording how the walk ended), `outcome` (what the caller gets).

mod answer;
mod drive;
mod edited;
mod files;
mod history;
mod migrate;
mod outcome;
mod resume;
mod resume_error;
mod start;
mod wait_choice;

pub use answer::check_pending_answer;
pub use history::{
    ForkPlace, HistoryError, Moved, default_worktree, fork, is_undo_copy, rewind, undo_id,
    undo_rewind,
};
pub use outcome::{RunEnd, RunOutcome};
pub use resume::{ResumeOptions, check_fits, resume, resume_with};
pub use resume_error::ResumeError;
pub use start::{run, run_with_id};
