//! Every process group atomic started and has not yet seen end (whatever started it: a
//! tool, a hook, an agent CLI, an MCP server). A group is ended gracefully: SIGTERM at
//! once, so its programs can clean up (remove a lock file, flush a log), and SIGKILL after
//! [`GRACE`] if anything of it is still there. A reaper thread sends the late SIGKILLs
//! while atomic runs; [`settle`] waits for them before atomic exits, and a forced quit
//! ([`kill_all`]) sends SIGKILL to everything at once.
//!
//! "Anything of it" includes its strays: descendants that left the group for one of their
//! own (a CLI that starts its shell commands with `setsid`, a sandbox helper). They are
//! found by walking `/proc` from the group's members when it is ended, and signalled with
//! it; a stray is known by its pid and start time, so a pid reused meanwhile is never hit.
//! A stray whose ancestors all exited before the group was ended (a daemon's double fork, a
//! sandbox helper that detaches) has been adopted by init; it is found by its mark instead:
//! every launch carries a variable of its own ([`MARK_VARIABLE`]) that its descendants
//! inherit, so a process started since the launch whose environment holds that mark is the
//! launch's, wherever it went. A program that clears its children's environment *and*
//! detaches them is out of reach (a cgroup would reach it; atomic does not create one).
//!
//! A group may leave files behind: atomic's own scratch files that a program writes (a
//! usage report it writes as it exits, SIGTERM included). They are the group's until it is
//! gone, so they are removed with it ([`remove_when_gone`]): at once when the group is
//! ended with nobody left in it, else by the reaper once nothing of it is left or it was
//! sent SIGKILL, and by [`settle`] and [`kill_all`] at atomic's exit. Removed any sooner,
//! by the code that made the file, a program still ending would write it again.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// How long a group has between SIGTERM and SIGKILL.
pub const GRACE: Duration = Duration::from_secs(2);

/// The variable every launch carries, with a value unique to the launch, so what it starts
/// can be found after it left the group.
pub const MARK_VARIABLE: &str = "ATOMIC_LAUNCH";

/// How a launch's processes are recognised outside its group.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Mark {
    /// `MARK_VARIABLE=<value>`, as it appears in `/proc/<pid>/environ`.
    entry: Vec<u8>,
    /// The leader's start time: nothing older can be the launch's.
    since: u64,
}

impl Mark {
    /// A mark for a launch whose variable has `value`, its leader being `pid`.
    pub(crate) fn new(value: &str, pid: i32) -> Self {
        Self {
            entry: format!("{MARK_VARIABLE}={value}").into_bytes(),
            since: read_stat(pid).map_or(0, |process| process.started),
        }
    }

    /// Whether process `process` carries this mark.
    fn carried_by(&self, process: &Process) -> bool {
        if process.started < self.since || process.state == 'Z' {
            return false;
        }
        let Ok(environ) = std::fs::read(format!("/proc/{}/environ", process.pid)) else {
            return false;
        };
        environ
            .split(|&byte| byte == 0)
            .any(|entry| entry == self.entry.as_slice())
    }
}

#[derive(Default)]
struct Groups {
    /// Running, not asked to end.
    live: HashMap<i32, Live>,
    /// Sent SIGTERM; SIGKILL at the deadline if still there.
    ending: HashMap<i32, Ending>,
    /// Ended with nobody left in the group: their marked processes are still to be
    /// looked for.
    sweeps: Vec<(i32, Mark)>,
}

/// A group running, not asked to end.
#[derive(Default)]
struct Live {
    /// Its processes' mark, when they carry one.
    mark: Option<Mark>,
    /// What to remove once it is gone ([`remove_when_gone`]).
    leftovers: Vec<PathBuf>,
}

/// A group asked to end.
struct Ending {
    /// When SIGKILL follows.
    deadline: Instant,
    /// Its descendants in groups of their own.
    strays: Vec<Stray>,
    /// The launch's mark: what the group starts while it ends (a helper it spawns on
    /// SIGTERM, detached) is looked for by it once the group is gone or killed.
    mark: Option<Mark>,
    /// What to remove once it is gone or killed ([`remove_when_gone`]).
    leftovers: Vec<PathBuf>,
}

/// A process outside the group that descends from it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Stray {
    pid: i32,
    /// Its start time (in clock ticks after boot, `/proc/<pid>/stat` field 22).
    started: u64,
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

/// Records a group led by `pgid`, its processes marked with `mark` (when they are).
pub(crate) fn register(pgid: i32, mark: Option<Mark>) {
    lock().live.insert(
        pgid,
        Live {
            mark,
            ..Live::default()
        },
    );
}

/// Removes `path` (a file or a directory) once group `pgid` and everything it started are
/// gone: a file its programs may write until they exit. A group not known here is already
/// gone: the path is removed now.
pub(crate) fn remove_when_gone(pgid: i32, path: PathBuf) {
    let mut groups = lock();
    if let Some(live) = groups.live.get_mut(&pgid) {
        live.leftovers.push(path);
    } else if let Some(ending) = groups.ending.get_mut(&pgid) {
        ending.leftovers.push(path);
    } else {
        drop(groups);
        remove(&[path]);
    }
}

/// Ends a group: SIGTERM now to it and its strays, SIGKILL after [`GRACE`] to whatever of
/// them is left. A group with nobody left in it (its leader reaped, nothing it started
/// still running, in it or marked) is only forgotten, its leftovers removed now.
pub(crate) fn end(pgid: i32) {
    let Live { mark, leftovers } = lock().live.remove(&pgid).unwrap_or_default();
    if !has_members(pgid) {
        remove(&leftovers);
        // Only a daemon that detached could be left: it is looked for off this thread,
        // so ending a finished child stays one system call here.
        if let Some(mark) = mark {
            lock().sweeps.push((pgid, mark));
            start_reaper();
        }
        return;
    }
    let strays = strays_of(pgid, mark.as_ref());
    signal_group(pgid, Signal::Term);
    for stray in &strays {
        signal_stray(*stray, Signal::Term);
    }
    lock().ending.insert(
        pgid,
        Ending {
            deadline: Instant::now() + GRACE,
            strays,
            mark,
            leftovers,
        },
    );
    start_reaper();
}

/// Looks for the marked processes of groups that ended empty now, on this thread: for a
/// caller about to wait until a group is gone.
pub(crate) fn sweep_now() {
    sweep(Signal::Term);
}

/// Looks for the marked processes of groups that ended empty, and ends those found
/// (`which` now; after SIGTERM, SIGKILL at the grace's end like any group).
fn sweep(which: Signal) {
    let sweeps = std::mem::take(&mut lock().sweeps);
    if sweeps.is_empty() {
        return;
    }
    let Some(processes) = processes() else {
        return;
    };
    let own = i32::try_from(std::process::id()).unwrap_or_default();
    for (pgid, mark) in sweeps {
        let strays: Vec<Stray> = processes
            .iter()
            .filter(|process| process.pid != own && mark.carried_by(process))
            .map(|process| Stray {
                pid: process.pid,
                started: process.started,
            })
            .collect();
        if strays.is_empty() {
            continue;
        }
        for stray in &strays {
            signal_stray(*stray, which);
        }
        if matches!(which, Signal::Term) {
            lock().ending.insert(
                pgid,
                Ending {
                    deadline: Instant::now() + GRACE,
                    strays,
                    mark: None,
                    leftovers: Vec::new(),
                },
            );
        }
    }
}

/// Ends every group still live, then waits (at most [`GRACE`] and a little) until every
/// ended group is gone, sending SIGKILL to what is left at its deadline: for atomic's
/// normal exit, so no child outlives it.
pub fn settle() {
    // A group still live here belongs to an owner that never ended it (a server whose
    // provider was leaked): atomic is exiting, so it ends too.
    let live: Vec<i32> = lock().live.keys().copied().collect();
    for pgid in live {
        end(pgid);
    }
    sweep(Signal::Term);
    let until = Instant::now() + GRACE + Duration::from_millis(200);
    loop {
        reap(Instant::now());
        sweep(Signal::Term);
        let settled = {
            let groups = lock();
            groups.ending.is_empty() && groups.sweeps.is_empty()
        };
        if settled || Instant::now() >= until {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let left: Vec<(i32, Ending)> = lock().ending.drain().collect();
    for (pgid, ending) in left {
        kill(pgid, &ending.strays);
        remove(&ending.leftovers);
    }
    sweep(Signal::Kill);
}

/// Resolves once every group being ended now is gone (SIGKILL to what is left at its
/// deadline): for a caller that dropped children and must not go on beside them.
pub async fn ended() {
    sweep(Signal::Term);
    let pending: Vec<(i32, Vec<Stray>)> = lock()
        .ending
        .iter()
        .map(|(&pgid, ending)| (pgid, ending.strays.clone()))
        .collect();
    // SIGKILL cannot be refused; the bound only guards against a process stuck in the
    // kernel, which nothing here can end sooner.
    let until = Instant::now() + GRACE + Duration::from_secs(3);
    while pending.iter().any(|(pgid, strays)| alive(*pgid, strays)) && Instant::now() < until {
        reap(Instant::now());
        sweep(Signal::Term);
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // Gone, perhaps before the first look: forgotten now with their leftovers removed,
    // not on the reaper's next round, which a caller about to exit would not see.
    reap(Instant::now());
}

/// SIGKILL to every group (and its strays), live or ending: for a forced quit, just before
/// the process exits.
pub fn kill_all() {
    let (live, ending) = {
        let mut groups = lock();
        (
            std::mem::take(&mut groups.live),
            std::mem::take(&mut groups.ending),
        )
    };
    for (pgid, live) in live {
        let strays = strays_of(pgid, live.mark.as_ref());
        let ending = Ending {
            deadline: Instant::now(),
            strays,
            mark: None,
            leftovers: live.leftovers,
        };
        kill(pgid, &ending.strays);
        remove(&ending.leftovers);
    }
    for (pgid, ending) in ending {
        kill(pgid, &ending.strays);
        remove(&ending.leftovers);
    }
    sweep(Signal::Kill);
}

/// Whether the group and its strays are gone: nothing but zombies left.
pub(crate) fn is_gone(pgid: i32) -> bool {
    let strays = lock()
        .ending
        .get(&pgid)
        .map(|ending| ending.strays.clone())
        .unwrap_or_default();
    !alive(pgid, &strays)
}

/// Sends SIGKILL to the group and its strays now (its owner will not wait out the grace).
/// The group stays known until it is seen gone ([`forget`], or the reaper), for its
/// leftovers and its mark.
pub(crate) fn kill_now(pgid: i32) {
    // The strays are copied out: walking /proc happens with the registry unlocked, so
    // other launches and the reaper are not held up behind it.
    let strays = lock().ending.get(&pgid).map(|ending| ending.strays.clone());
    match strays {
        Some(strays) => kill(pgid, &strays),
        None => signal_group(pgid, Signal::Kill),
    }
}

/// Forgets an ended group its owner waited for until it was gone (or killed): its leftovers
/// are removed now, not on the reaper's next round, and its mark is looked for as the
/// reaper would.
pub(crate) fn forget(pgid: i32) {
    let Some(ending) = lock().ending.remove(&pgid) else {
        return;
    };
    remove(&ending.leftovers);
    if let Some(mark) = ending.mark {
        lock().sweeps.push((pgid, mark));
        start_reaper();
    }
}

fn kill(pgid: i32, strays: &[Stray]) {
    // Descendants that left the group during the grace are found now, before the group
    // (their ancestors) goes.
    let late = strays_of(pgid, None);
    signal_group(pgid, Signal::Kill);
    for stray in strays.iter().chain(&late) {
        signal_stray(*stray, Signal::Kill);
    }
}

/// Forgets ended groups that are gone, and sends SIGKILL to those past their deadline;
/// either way their leftovers are removed.
fn reap(now: Instant) {
    // Who is alive is asked with the registry unlocked (it walks /proc); a group that
    // began ending meanwhile is left for the next round.
    let watched: Vec<(i32, Vec<Stray>)> = lock()
        .ending
        .iter()
        .map(|(&pgid, ending)| (pgid, ending.strays.clone()))
        .collect();
    let living: Vec<i32> = watched
        .iter()
        .filter(|(pgid, strays)| alive(*pgid, strays))
        .map(|(pgid, _)| *pgid)
        .collect();
    let mut groups = lock();
    let mut done = Vec::new();
    let mut leftovers = Vec::new();
    let mut overdue = Vec::new();
    groups.ending.retain(|&pgid, ending| {
        if !watched.iter().any(|(watched, _)| *watched == pgid) {
            return true;
        }
        if living.contains(&pgid) {
            if now < ending.deadline {
                return true;
            }
            overdue.push((pgid, std::mem::take(&mut ending.strays)));
        }
        done.extend(ending.mark.take().map(|mark| (pgid, mark)));
        leftovers.append(&mut ending.leftovers);
        false
    });
    // What the group started while it ended, detached, is found by the mark.
    groups.sweeps.extend(done);
    drop(groups);
    // Killed with the registry unlocked: finding late strays walks /proc.
    for (pgid, strays) in &overdue {
        kill(*pgid, strays);
    }
    remove(&leftovers);
}

/// Removes leftovers: files, or directories with what is in them. One already gone is
/// fine.
pub(crate) fn remove(paths: &[PathBuf]) {
    for path in paths {
        let _ = match std::fs::symlink_metadata(path) {
            Ok(meta) if meta.is_dir() => std::fs::remove_dir_all(path),
            Ok(_) => std::fs::remove_file(path),
            Err(_) => Ok(()),
        };
    }
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
                sweep(Signal::Term);
                std::thread::sleep(Duration::from_millis(50));
                reap(Instant::now());
                // Stop when nothing is left, deciding under the lock `end` inserts under,
                // so a group ended meanwhile either is seen here or starts a new reaper.
                let groups = lock();
                if groups.ending.is_empty() && groups.sweeps.is_empty() {
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

#[cfg(unix)]
fn nix_signal(which: Signal) -> nix::sys::signal::Signal {
    match which {
        Signal::Term => nix::sys::signal::Signal::SIGTERM,
        Signal::Kill => nix::sys::signal::Signal::SIGKILL,
    }
}

fn signal_group(pgid: i32, which: Signal) {
    #[cfg(unix)]
    {
        // ESRCH (the group is already gone) is the common, harmless case.
        let _ = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pgid), nix_signal(which));
    }
    #[cfg(not(unix))]
    let _ = (pgid, which);
}

/// Signals a stray, if the process with its pid is still the one found.
fn signal_stray(stray: Stray, which: Signal) {
    let Some(now) = read_stat(stray.pid) else {
        return;
    };
    if now.started != stray.started {
        return;
    }
    #[cfg(unix)]
    {
        let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(stray.pid), nix_signal(which));
    }
    #[cfg(not(unix))]
    let _ = which;
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

/// Whether a live process of the group, or a live stray, is left. A zombie does not count:
/// the leader of an ended tool stays one until its waiter reaps it, and waiting the whole
/// grace for it would delay every cancelled run.
fn alive(pgid: i32, strays: &[Stray]) -> bool {
    let Some(processes) = processes() else {
        // No `/proc`: the group is all that can be asked about.
        return has_members(pgid);
    };
    processes.iter().any(|process| {
        process.state != 'Z'
            && (process.group == pgid
                || strays
                    .iter()
                    .any(|stray| stray.pid == process.pid && stray.started == process.started))
    })
}

/// The processes of group `pgid` outside it, found now: its members' descendants in groups
/// of their own, and processes elsewhere carrying its `mark`.
fn strays_of(pgid: i32, mark: Option<&Mark>) -> Vec<Stray> {
    let Some(processes) = processes() else {
        return Vec::new();
    };
    let mut children: HashMap<i32, Vec<&Process>> = HashMap::new();
    for process in &processes {
        children.entry(process.parent).or_default().push(process);
    }
    let mut pending: Vec<i32> = processes
        .iter()
        .filter(|process| process.group == pgid)
        .map(|process| process.pid)
        .collect();
    let mut seen: HashSet<i32> = pending.iter().copied().collect();
    let mut strays = Vec::new();
    while let Some(pid) = pending.pop() {
        for child in children.get(&pid).into_iter().flatten() {
            if !seen.insert(child.pid) {
                continue;
            }
            if child.group != pgid && child.state != 'Z' {
                strays.push(Stray {
                    pid: child.pid,
                    started: child.started,
                });
            }
            pending.push(child.pid);
        }
    }
    if let Some(mark) = mark {
        let own = i32::try_from(std::process::id()).unwrap_or_default();
        for process in &processes {
            if process.group != pgid
                && process.pid != own
                && !seen.contains(&process.pid)
                && mark.carried_by(process)
            {
                strays.push(Stray {
                    pid: process.pid,
                    started: process.started,
                });
            }
        }
    }
    strays
}

/// One line of `/proc/<pid>/stat`, the fields used here.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Process {
    pub(crate) pid: i32,
    pub(crate) state: char,
    parent: i32,
    group: i32,
    pub(crate) started: u64,
}

/// Every process `/proc` lists; `None` without `/proc`.
pub(crate) fn processes() -> Option<Vec<Process>> {
    let entries = std::fs::read_dir("/proc").ok()?;
    Some(
        entries
            .flatten()
            .filter_map(|entry| entry.file_name().to_str()?.parse::<i32>().ok())
            .filter_map(read_stat)
            .collect(),
    )
}

/// `/proc/<pid>/stat`, or `None` when the process is gone (or unreadable).
fn read_stat(pid: i32) -> Option<Process> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // After the command name (in parentheses, maybe with spaces): state, ppid, pgrp, …;
    // the start time is the 20th field after the name.
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let parent = fields.next()?.parse().ok()?;
    let group = fields.next()?.parse().ok()?;
    let started = fields.nth(16)?.parse().ok()?;
    Some(Process {
        pid,
        state,
        parent,
        group,
        started,
    })
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
        register(pgid, None);
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
    fn settle_ends_a_group_its_owner_never_ended() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .process_group(0)
            .spawn()
            .expect("spawn");
        let pgid = i32::try_from(child.id()).expect("pid");
        register(pgid, None);
        settle();
        assert!(lock().live.is_empty());
        let status = child.wait().expect("reaped");
        assert!(!status.success(), "the leaked group was ended: {status}");
    }

    #[test]
    fn a_group_that_obeys_sigterm_ends_at_once() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .process_group(0)
            .spawn()
            .expect("spawn");
        let pgid = i32::try_from(child.id()).expect("pid");
        register(pgid, None);
        let started = Instant::now();
        end(pgid);
        let status = child.wait().expect("reaped");
        assert!(!status.success());
        assert!(started.elapsed() < Duration::from_secs(1));
    }
}
