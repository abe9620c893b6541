//! Every process group atomic started and has not yet seen end (whatever started it: a
//! tool, a hook, an agent CLI, an MCP server). A group is ended gracefully: SIGTERM at once, so its programs can clean up (remove a
//! lock file, flush a log), and SIGKILL after [`GRACE`] if anything in it is still there.
//! A reaper thread sends the late SIGKILLs while atomic runs; [`settle`] waits for them
//! before atomic exits, and a forced quit ([`kill_all`]) sends SIGKILL to everything at once.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// How long a group has between SIGTERM and SIGKILL.
pub const GRACE: Duration = Duration::from_secs(2);

#[derive(Default)]
struct Groups {
    /// Running, not asked to end.
    live: HashSet<i32>,
    /// Sent SIGTERM; SIGKILL at the deadline if still there.
    ending: HashMap<i32, Instant>,
}

fn groups() -> &'static Mutex<Groups> {
    static GROUPS: OnceLock<Mutex<Groups>> = OnceLock::new();
    GROUPS.get_or_init(Mutex::default)
}

fn lock() -> std::sync::MutexGuard<'static, Groups> {
    groups()
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Records a group led by `pgid`.
pub(crate) fn register(pgid: i32) {
    lock().live.insert(pgid);
}

/// Ends a group: SIGTERM now, SIGKILL after [`GRACE`] if anything in it is left. A group
/// with nobody left in it (its leader reaped, nothing it started still running) is only
/// forgotten.
pub(crate) fn end(pgid: i32) {
    if !has_members(pgid) {
        lock().live.remove(&pgid);
        return;
    }
    {
        let mut groups = lock();
        groups.live.remove(&pgid);
        groups.ending.insert(pgid, Instant::now() + GRACE);
    }
    signal(pgid, Signal::Term);
    start_reaper();
}

/// Waits (at most [`GRACE`] and a little) until every ended group is gone, sending SIGKILL
/// to what is left at its deadline: for atomic's normal exit, so no child outlives it.
pub fn settle() {
    let until = Instant::now() + GRACE + Duration::from_millis(200);
    loop {
        reap(Instant::now());
        if lock().ending.is_empty() || Instant::now() >= until {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let left: Vec<i32> = lock().ending.drain().map(|(pgid, _)| pgid).collect();
    for pgid in left {
        signal(pgid, Signal::Kill);
    }
}

/// SIGKILL to every group, live or ending: for a forced quit, just before the process exits.
pub fn kill_all() {
    let all: Vec<i32> = {
        let mut groups = lock();
        let mut all: Vec<i32> = groups.live.drain().collect();
        all.extend(groups.ending.drain().map(|(pgid, _)| pgid));
        all
    };
    for pgid in all {
        signal(pgid, Signal::Kill);
    }
}

/// Forgets ended groups that are gone, and sends SIGKILL to those past their deadline.
fn reap(now: Instant) {
    let mut groups = lock();
    groups.ending.retain(|&pgid, deadline| {
        if !exists(pgid) {
            return false;
        }
        if now >= *deadline {
            signal(pgid, Signal::Kill);
            return false;
        }
        true
    });
}

/// Whether the reaper thread is running: it runs only while some group is ending.
static REAPING: AtomicBool = AtomicBool::new(false);

fn start_reaper() {
    if REAPING.swap(true, Ordering::AcqRel) {
        return;
    }
    let started = std::thread::Builder::new()
        .name("atomic-reaper".to_owned())
        .spawn(|| {
            loop {
                std::thread::sleep(Duration::from_millis(50));
                reap(Instant::now());
                // Stop when nothing is left, deciding under the lock `end` inserts under,
                // so a group ended meanwhile either is seen here or starts a new reaper.
                let groups = lock();
                if groups.ending.is_empty() {
                    REAPING.store(false, Ordering::Release);
                    return;
                }
            }
        });
    if started.is_err() {
        // No thread: `settle` still sends the late SIGKILLs before atomic exits.
        REAPING.store(false, Ordering::Release);
    }
}

#[derive(Clone, Copy)]
enum Signal {
    Term,
    Kill,
}

fn signal(pgid: i32, which: Signal) {
    #[cfg(unix)]
    {
        use nix::sys::signal::{Signal as Nix, killpg};
        use nix::unistd::Pid;
        let signal = match which {
            Signal::Term => Nix::SIGTERM,
            Signal::Kill => Nix::SIGKILL,
        };
        // ESRCH (the group is already gone) is the common, harmless case.
        let _ = killpg(Pid::from_raw(pgid), signal);
    }
    #[cfg(not(unix))]
    let _ = (pgid, which);
}

/// Whether anything at all (a zombie included) is left in the group: one system call, for
/// the common case of a group that ended by itself.
fn has_members(pgid: i32) -> bool {
    #[cfg(unix)]
    {
        use nix::sys::signal::killpg;
        use nix::unistd::Pid;
        killpg(Pid::from_raw(pgid), None).is_ok()
    }
    #[cfg(not(unix))]
    {
        let _ = pgid;
        false
    }
}

/// Whether the group is gone: nothing but zombies left in it.
pub(crate) fn is_gone(pgid: i32) -> bool {
    !exists(pgid)
}

/// Sends SIGKILL to the group now (its deadline passed, or its owner will not wait).
pub(crate) fn kill_now(pgid: i32) {
    lock().ending.remove(&pgid);
    signal(pgid, Signal::Kill);
}

/// Whether any live process of the group is left. A zombie does not count: the leader of
/// an ended tool stays one until its waiter reaps it, and waiting the whole grace for it
/// would delay every cancelled run.
fn exists(pgid: i32) -> bool {
    if let Some(alive) = live_member_in_proc(pgid) {
        return alive;
    }
    #[cfg(unix)]
    {
        use nix::sys::signal::killpg;
        use nix::unistd::Pid;
        killpg(Pid::from_raw(pgid), None).is_ok()
    }
    #[cfg(not(unix))]
    {
        let _ = pgid;
        false
    }
}

/// Whether `/proc` lists a process of group `pgid` that is not a zombie; `None` without
/// `/proc`.
fn live_member_in_proc(pgid: i32) -> Option<bool> {
    let entries = std::fs::read_dir("/proc").ok()?;
    for entry in entries.flatten() {
        let name = entry.file_name();
        if !name
            .to_string_lossy()
            .bytes()
            .all(|byte| byte.is_ascii_digit())
        {
            continue;
        }
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // After the command name (in parentheses, maybe with spaces): state, ppid, pgrp.
        let Some(rest) = stat.rfind(')').map(|at| &stat[at + 1..]) else {
            continue;
        };
        let mut fields = rest.split_whitespace();
        let state = fields.next();
        let group = fields.nth(1).and_then(|field| field.parse::<i32>().ok());
        if group == Some(pgid) && state != Some("Z") {
            return Some(true);
        }
    }
    Some(false)
}

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::process::CommandExt;

    use super::*;

    #[test]
    fn a_group_that_ignores_sigterm_is_killed_after_the_grace() {
        let mut child = std::process::Command::new("sh")
            .args(["-c", "trap '' TERM; sleep 30"])
            .process_group(0)
            .spawn()
            .expect("spawn");
        let pgid = i32::try_from(child.id()).expect("pid");
        register(pgid);
        std::thread::sleep(Duration::from_millis(100));
        let started = Instant::now();
        end(pgid);
        settle();
        let status = child.wait().expect("reaped");
        assert!(!status.success());
        let took = started.elapsed();
        assert!(took >= GRACE - Duration::from_millis(100), "{took:?}");
        assert!(took < GRACE + Duration::from_secs(2), "{took:?}");
    }

    #[test]
    fn a_group_that_obeys_sigterm_ends_at_once() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .process_group(0)
            .spawn()
            .expect("spawn");
        let pgid = i32::try_from(child.id()).expect("pid");
        register(pgid);
        let started = Instant::now();
        end(pgid);
        let status = child.wait().expect("reaped");
        assert!(!status.success());
        assert!(started.elapsed() < Duration::from_secs(1));
    }
}
