//! Who is running a run: a lease held in the store by one process at a time. Taking a run
//! (`atomic run`, `atomic resume`) takes its lease atomically; a second process is refused
//! while the holder is alive, and takes the run over once it is dead (its process gone on
//! this machine, or its heartbeat stale on another). The holder renews the lease with a
//! heartbeat, which also carries a cancellation request from `atomic cancel`.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// How often the holder renews its lease.
pub const HEARTBEAT_EVERY: Duration = Duration::from_secs(1);

/// A lease whose heartbeat is older than this, held on another machine, is abandoned.
pub const STALE_AFTER: Duration = Duration::from_secs(15);

/// A process that can hold runs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Owner {
    /// The machine's host name.
    pub host: String,
    /// The process id.
    pub pid: u32,
    /// When the process started, as the machine counts it (boot id and start time on
    /// Linux), so a recycled pid is not mistaken for the holder.
    pub started: String,
}

impl Owner {
    /// This process.
    #[must_use]
    pub fn this_process() -> Self {
        let pid = std::process::id();
        Self {
            host: host_name(),
            pid,
            started: crate::process::orphans::start_identity(pid).unwrap_or_default(),
        }
    }

    /// How messages name it: `pid 4242 on build-01`.
    #[must_use]
    pub fn describe(&self) -> String {
        format!("pid {} on {}", self.pid, self.host)
    }

    /// Whether the process is still running: asked of the operating system on this machine,
    /// judged by the heartbeat's age (`heartbeat_age`) elsewhere or where the system cannot
    /// say.
    #[must_use]
    pub fn is_alive(&self, heartbeat_age: Duration) -> bool {
        if self.host == host_name()
            && !self.started.is_empty()
            && let Some(alive) = same_machine_alive(self.pid, &self.started)
        {
            return alive;
        }
        heartbeat_age < STALE_AFTER
    }
}

/// A run's lease as the store holds it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lease {
    /// Who holds it.
    pub owner: Owner,
    /// When it was taken, in Unix milliseconds.
    pub since_ms: u64,
    /// The holder's last heartbeat, in Unix milliseconds.
    pub heartbeat_ms: u64,
    /// `atomic cancel` asked the holder to stop.
    pub cancel_requested: bool,
}

impl Lease {
    /// Whether its holder is still running (judged now: its process on this machine, its
    /// heartbeat's age elsewhere).
    #[must_use]
    pub fn is_held(&self) -> bool {
        let now = super::Timestamp::now();
        let age = now.millis_since(super::Timestamp(self.heartbeat_ms));
        self.owner.is_alive(Duration::from_millis(age))
    }
}

/// How taking a run went.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Acquired {
    /// Nobody held it (or this process already did).
    Free,
    /// Its holder had died; this process took it over.
    TakenOver(Owner),
}

/// What a heartbeat learned.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Beat {
    /// `atomic cancel` asked this holder to stop.
    pub cancel_requested: bool,
}

/// This machine's name: the kernel's, else `$HOSTNAME`, else `localhost`.
fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::fs::read_to_string("/etc/hostname"))
        .ok()
        .map(|name| name.trim().to_owned())
        .filter(|name| !name.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "localhost".to_owned())
}

/// Whether `pid` is the process that started at `started`, on this machine: `None` when the
/// system cannot say (no `/proc`).
fn same_machine_alive(pid: u32, started: &str) -> Option<bool> {
    if !std::path::Path::new("/proc/self/stat").exists() {
        return None;
    }
    Some(crate::process::orphans::start_identity(pid).is_some_and(|now| now == started))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_alive_and_a_finished_one_is_not() {
        let me = Owner::this_process();
        assert!(me.is_alive(Duration::from_secs(3600)), "{me:?}");
        let mut child = std::process::Command::new("true").spawn().expect("spawn");
        let pid = child.id();
        let started = crate::process::orphans::start_identity(pid);
        child.wait().expect("wait");
        let gone = Owner {
            pid,
            started: started.unwrap_or_else(|| "boot:1".to_owned()),
            ..me.clone()
        };
        assert!(!gone.is_alive(Duration::ZERO), "{gone:?}");
        let recycled = Owner {
            started: "another-boot:42".to_owned(),
            ..me
        };
        assert!(
            !recycled.is_alive(Duration::ZERO),
            "a recycled pid is not the holder"
        );
    }

    #[test]
    fn elsewhere_only_the_heartbeat_counts() {
        let remote = Owner {
            host: "another-machine-that-is-not-this-one".to_owned(),
            pid: 1,
            started: "x:1".to_owned(),
        };
        assert!(remote.is_alive(Duration::from_secs(2)));
        assert!(!remote.is_alive(STALE_AFTER + Duration::from_secs(1)));
    }
}
