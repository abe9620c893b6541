//! `atomic runs` (a table of runs, newest first) and `atomic runs show RUN` (a run's
//! steps with their state changes, its events, errors and final state), from the
//! project's store. `--json` prints the same data for machines.

mod diff;
mod files;
mod list;
mod retention;
pub(super) mod show;

pub(super) use list::run;
