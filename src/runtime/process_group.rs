//! [`GroupKill`]: ends a child's whole process group when dropped (SIGTERM, then SIGKILL
//! after a grace period: [`live_groups`]), so a command's own children (a `sh -c` pipeline,
//! a test runner's workers) end with it on a timeout, a lost race or a cancelled run. Tools
//! and hooks both start their commands in a new group.

use crate::providers::live_groups;

/// Kills a process group when dropped, unless disarmed once the child was reaped.
pub(crate) struct GroupKill {
    pgid: Option<u32>,
}

impl GroupKill {
    /// Guards the group led by the child with pid `pgid` (`None`: nothing to kill).
    pub(crate) fn new(pgid: Option<u32>) -> Self {
        if let Some(pgid) = pgid.and_then(|pgid| i32::try_from(pgid).ok()) {
            live_groups::register(pgid);
        }
        Self { pgid }
    }

    /// The child was reaped; its group is left alone.
    pub(crate) fn disarm(&mut self) {
        if let Some(pgid) = self.pgid.take().and_then(|pgid| i32::try_from(pgid).ok()) {
            live_groups::unregister(pgid);
        }
    }
}

impl Drop for GroupKill {
    fn drop(&mut self) {
        let Some(pgid) = self.pgid.and_then(|pgid| i32::try_from(pgid).ok()) else {
            return;
        };
        live_groups::end(pgid);
    }
}
