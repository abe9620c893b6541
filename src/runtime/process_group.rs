//! [`GroupKill`]: kills a child's whole process group when dropped, so a command's own
//! children (a `sh -c` pipeline, a test runner's workers) die with it on a timeout, a lost
//! race or a cancelled run. Tools and hooks both start their commands in a new group.

/// Kills a process group when dropped, unless disarmed once the child was reaped.
pub(crate) struct GroupKill {
    pgid: Option<u32>,
}

impl GroupKill {
    /// Guards the group led by the child with pid `pgid` (`None`: nothing to kill).
    pub(crate) fn new(pgid: Option<u32>) -> Self {
        Self { pgid }
    }

    /// The child was reaped; its group is left alone.
    pub(crate) fn disarm(&mut self) {
        self.pgid = None;
    }
}

impl Drop for GroupKill {
    fn drop(&mut self) {
        let Some(pgid) = self.pgid else { return };
        #[cfg(unix)]
        {
            use nix::sys::signal::{Signal, killpg};
            use nix::unistd::Pid;
            if let Ok(pgid) = i32::try_from(pgid) {
                // ESRCH (already gone) is fine: there is nothing left to kill.
                let _ = killpg(Pid::from_raw(pgid), Signal::SIGKILL);
            }
        }
        #[cfg(not(unix))]
        let _ = pgid;
    }
}
