//! What an atomic that died (`kill -9`, a crash, the machine's OOM killer) had started and
//! left running. Its children are adopted by init and go on — a tool's `sh` appending to a
//! file while the resumed step writes the same file — so whoever takes the run over ends
//! them first, before any file is put back.
//!
//! They are found by their launch mark ([`super::MARK_VARIABLE`]): every mark of a process
//! starts with a prefix made of its pid and its start identity (boot and start time), which
//! the run's lease records as the holder's `started`. Descendants inherit the mark, so a
//! daemon that detached is found too; a process started by no atomic, or by another atomic
//! that reused the pid, has another prefix.

use std::time::{Duration, Instant};

/// How long ending the orphans may take: SIGKILL cannot be refused, so this only bounds a
/// process stuck in the kernel.
const LIMIT: Duration = Duration::from_secs(5);

/// Process `pid`'s start identity, `<boot id>:<start time>`: unique on the machine across
/// reboots, and what a run's lease records of its holder. `None` without `/proc`.
#[must_use]
pub fn start_identity(pid: u32) -> Option<String> {
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may hold spaces: count fields after
    // its closing parenthesis. The start time is field 22.
    let after_name = &stat[stat.rfind(')')? + 1..];
    let start = after_name.split_whitespace().nth(19)?;
    Some(format!("{}:{start}", boot.trim()))
}

/// The prefix of every launch mark of the atomic process `pid` that started at `started`.
#[must_use]
pub fn launch_prefix(pid: u32, started: &str) -> String {
    // FNV-1a: stable across builds and machines, unlike the standard library's hasher.
    let hash = started
        .bytes()
        .fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
            (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3)
        });
    format!("{pid}-{hash:016x}-")
}

/// Ends (SIGKILL) every process still running that the atomic process `pid`, started at
/// `started`, launched — directly or not — and waits until they are gone (bounded).
/// Returns how many there were. Nothing is done for this very process.
#[must_use]
pub fn end_orphans_of(pid: u32, started: &str) -> usize {
    if pid == std::process::id() {
        return 0;
    }
    let entry = format!("{}={}", super::MARK_VARIABLE, launch_prefix(pid, started)).into_bytes();
    let until = Instant::now() + LIMIT;
    let mut ended = std::collections::HashSet::new();
    // A shell loop may fork between a scan and the signal: scan again until none is left.
    loop {
        let found: Vec<(i32, u64)> = marked(&entry);
        if found.is_empty() || Instant::now() >= until {
            return ended.len();
        }
        for (process, started) in found {
            #[cfg(unix)]
            {
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(process),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
            ended.insert((process, started));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Live processes (not zombies) whose environment holds a mark starting with `entry`.
fn marked(entry: &[u8]) -> Vec<(i32, u64)> {
    let Some(processes) = super::groups::processes() else {
        return Vec::new();
    };
    processes
        .iter()
        .filter(|process| process.state != 'Z')
        .filter(|process| {
            std::fs::read(format!("/proc/{}/environ", process.pid)).is_ok_and(|environ| {
                environ
                    .split(|&byte| byte == 0)
                    .any(|variable| variable.starts_with(entry))
            })
        })
        .map(|process| (process.pid, process.started))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prefix_depends_on_the_pid_and_the_start() {
        let one = launch_prefix(42, "boot:100");
        assert_eq!(one, launch_prefix(42, "boot:100"));
        assert_ne!(one, launch_prefix(42, "boot:101"), "a reused pid differs");
        assert_ne!(one, launch_prefix(43, "boot:100"));
        assert!(one.starts_with("42-") && one.ends_with('-'));
    }

    #[test]
    fn the_orphans_of_a_dead_owner_are_ended_and_no_one_else() {
        #[allow(clippy::print_stderr, reason = "a skipped test says so")]
        if start_identity(std::process::id()).is_none() {
            eprintln!("SKIP: no /proc here, so orphans cannot be found by their mark");
            return;
        }
        // A made-up dead owner: its mark on a detached sleeper; another owner's beside it.
        let dead = launch_prefix(999_999, "boot:1");
        let other = launch_prefix(999_998, "boot:1");
        let spawn = |mark: &str| {
            std::process::Command::new("sleep")
                .arg("30")
                .env(super::super::MARK_VARIABLE, format!("{mark}7"))
                .spawn()
                .expect("spawn sleep")
        };
        let mut orphan = spawn(&dead);
        let mut bystander = spawn(&other);
        assert_eq!(end_orphans_of(999_999, "boot:1"), 1);
        let status = orphan.wait().expect("wait");
        assert!(!status.success(), "the orphan was killed");
        assert!(
            bystander.try_wait().expect("try_wait").is_none(),
            "the other owner's child runs on"
        );
        bystander.kill().expect("kill");
        let _ = bystander.wait();
    }
}
