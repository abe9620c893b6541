//! Process exit codes, the same for every subcommand.

use std::process::ExitCode;

/// Why the process ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// 0: clean check, completed run.
    Ok,
    /// 1: problems found, or the run failed.
    Problems,
    /// 2: bad command line.
    Usage,
    /// 3: fatal: a file could not be read, the store could not be opened.
    Fatal,
    /// 4: the run is paused at a `wait`.
    Paused,
    /// 130: cancelled with Ctrl-C.
    Cancelled,
}

impl From<Exit> for ExitCode {
    fn from(exit: Exit) -> Self {
        ExitCode::from(match exit {
            Exit::Ok => 0,
            Exit::Problems => 1,
            Exit::Usage => 2,
            Exit::Fatal => 3,
            Exit::Paused => 4,
            Exit::Cancelled => 130,
        })
    }
}
