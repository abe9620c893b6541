//! Every process group atomic started and has not yet seen end: tools, hooks, agent CLIs.
//! Each owner kills its own group when dropped; this list is for the one exit that drops
//! nothing, a forced quit (a second Ctrl-C), so no child outlives atomic even then.

use std::collections::HashSet;
use std::sync::{Mutex, OnceLock};

fn live() -> &'static Mutex<HashSet<i32>> {
    static LIVE: OnceLock<Mutex<HashSet<i32>>> = OnceLock::new();
    LIVE.get_or_init(Mutex::default)
}

/// Records a group led by `pgid`.
pub(crate) fn register(pgid: i32) {
    live()
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .insert(pgid);
}

/// Forgets a group (killed, or its leader reaped).
pub(crate) fn unregister(pgid: i32) {
    live()
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .remove(&pgid);
}

/// Kills a group now (ESRCH, already gone, is fine).
pub(crate) fn kill(pgid: i32) {
    #[cfg(unix)]
    {
        use nix::sys::signal::{Signal, killpg};
        use nix::unistd::Pid;
        let _ = killpg(Pid::from_raw(pgid), Signal::SIGKILL);
    }
    #[cfg(not(unix))]
    let _ = pgid;
}

/// Kills every live group: for a forced quit, just before the process exits.
pub fn kill_all() {
    let groups: Vec<i32> = live()
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .drain()
        .collect();
    for pgid in groups {
        kill(pgid);
    }
}
