//! [`Child`]: a started program and its process group, ended by the module's one rule when
//! the handle is dropped.

use std::path::PathBuf;
use std::process::ExitStatus;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::AsyncReadExt;
use tokio::process::{ChildStderr, ChildStdin, ChildStdout};
use tokio::task::JoinHandle;

use super::groups::{self, GRACE};

/// How much of stderr a [`Stdio::Tail`](super::Stdio::Tail) keeps.
const TAIL_BYTES: usize = 8 * 1024;

/// How long stderr may go on after the program exited before its tail is read: a
/// grandchild may hold the pipe open.
const TAIL_DRAIN: Duration = Duration::from_millis(500);

/// A running (or finished, not yet dropped) child in a process group of its own.
///
/// Dropping it ends whatever is left of the group (SIGTERM, then SIGKILL after
/// [`GRACE`]): a program that exited normally leaves nothing, and a cancelled call, a
/// timeout or a lost race leaves nothing running either.
#[derive(Debug)]
pub struct Child {
    inner: tokio::process::Child,
    /// The group, while it is this handle's to end.
    pgid: Option<i32>,
    /// The group's id, kept after the handle ended it: for leftovers named late.
    group: Option<i32>,
    tail: Option<Tail>,
}

/// stderr read into a bounded tail by a task of its own.
#[derive(Debug)]
struct Tail {
    bytes: Arc<Mutex<Vec<u8>>>,
    task: JoinHandle<()>,
}

/// Why waiting for a child failed.
#[derive(Debug, thiserror::Error)]
pub enum WaitError {
    /// It did not exit in time; its group is being ended.
    #[error("did not exit within {0:?}")]
    TimedOut(Duration),
    /// The system could not wait for it.
    #[error("could not wait for the process: {0}")]
    Io(#[from] std::io::Error),
}

impl Child {
    /// Takes over a child just started in a group of its own (the spawner's job).
    /// `mark` is the value of its [`MARK_VARIABLE`](groups::MARK_VARIABLE), when set.
    pub(super) fn started(
        mut inner: tokio::process::Child,
        keep_tail: bool,
        mark: Option<&str>,
    ) -> Self {
        let pgid = inner.id().and_then(|id| i32::try_from(id).ok());
        if let Some(pgid) = pgid {
            groups::register(pgid, mark.map(|value| groups::Mark::new(value, pgid)));
        }
        let tail = if keep_tail {
            inner.stderr.take().map(Tail::read)
        } else {
            None
        };
        Self {
            inner,
            pgid,
            group: pgid,
            tail,
        }
    }

    /// The leader's process id (also the group's id), while it runs.
    #[must_use]
    pub fn id(&self) -> Option<u32> {
        self.inner.id()
    }

    /// Takes the child's stdin (when it was piped).
    pub fn take_stdin(&mut self) -> Option<ChildStdin> {
        self.inner.stdin.take()
    }

    /// Takes the child's stdout (when it was piped).
    pub fn take_stdout(&mut self) -> Option<ChildStdout> {
        self.inner.stdout.take()
    }

    /// Takes the child's stderr (when it was piped, not kept as a tail).
    pub fn take_stderr(&mut self) -> Option<ChildStderr> {
        self.inner.stderr.take()
    }

    /// Waits for the program to exit (what it started may go on until the handle is
    /// dropped), then gives stderr a moment to drain into its tail.
    ///
    /// # Errors
    /// The system could not wait for it.
    pub async fn wait(&mut self) -> std::io::Result<ExitStatus> {
        let status = self.inner.wait().await?;
        if let Some(tail) = self.tail.as_mut() {
            let _ = tokio::time::timeout(TAIL_DRAIN, &mut tail.task).await;
        }
        Ok(status)
    }

    /// [`Child::wait`], at most `limit`; past it the group is ended.
    ///
    /// # Errors
    /// [`WaitError::TimedOut`] when it did not exit in time, [`WaitError::Io`] when it
    /// could not be waited for.
    pub async fn wait_for(&mut self, limit: Duration) -> Result<ExitStatus, WaitError> {
        match tokio::time::timeout(limit, self.wait()).await {
            Ok(status) => Ok(status?),
            Err(_) => {
                self.end();
                Err(WaitError::TimedOut(limit))
            }
        }
    }

    /// Removes `path` (a file or a directory) once the group and everything it started are
    /// gone, not when this handle goes: a program ended early may still write a file of
    /// atomic's as it exits (a report written on SIGTERM), and a file removed before would
    /// come back and stay.
    pub fn remove_when_gone(&self, path: impl Into<PathBuf>) {
        let path = path.into();
        match self.group {
            Some(pgid) => groups::remove_when_gone(pgid, path),
            // Never had a group to wait for: the program is gone already.
            None => groups::remove(&[path]),
        }
    }

    /// The last few KiB of stderr, trimmed (empty unless it was kept as a tail).
    #[must_use]
    pub fn stderr_tail(&self) -> String {
        let Some(tail) = &self.tail else {
            return String::new();
        };
        let bytes = tail
            .bytes
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        String::from_utf8_lossy(&bytes).trim().to_owned()
    }

    /// Starts ending the group now (SIGTERM, SIGKILL after [`GRACE`]) without waiting.
    pub fn end(&mut self) {
        if let Some(pgid) = self.pgid.take() {
            groups::end(pgid);
        }
    }

    /// Ends the group and waits until nothing of it is left: SIGTERM, up to [`GRACE`] for
    /// it to go, then SIGKILL; what it leaves ([`Child::remove_when_gone`]) is removed. For
    /// a caller that must not go on while any of it runs.
    pub async fn terminate(&mut self) {
        let Some(pgid) = self.pgid.take() else {
            let _ = self.inner.wait().await;
            return;
        };
        groups::end(pgid);
        groups::sweep_now();
        let deadline = Instant::now() + GRACE;
        let gone = async {
            // The leader is reaped here, so a zombie of it never looks like a member.
            let _ = self.inner.wait().await;
            while !groups::is_gone(pgid) {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        };
        if tokio::time::timeout_at(deadline.into(), gone)
            .await
            .is_err()
        {
            groups::kill_now(pgid);
            let killed = async {
                let _ = self.inner.wait().await;
                while !groups::is_gone(pgid) {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
            };
            // SIGKILL cannot be refused; the bound only guards against a process stuck in
            // the kernel (uninterruptible I/O), which nothing here can end sooner.
            let _ = tokio::time::timeout(Duration::from_secs(5), killed).await;
        }
        // Gone: what it leaves is removed before this returns.
        groups::forget(pgid);
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        self.end();
        if let Some(tail) = &self.tail {
            tail.task.abort();
        }
    }
}

impl Tail {
    fn read(mut stderr: ChildStderr) -> Self {
        let bytes = Arc::new(Mutex::new(Vec::new()));
        let kept = Arc::clone(&bytes);
        let task = tokio::spawn(async move {
            let mut chunk = [0_u8; 4096];
            while let Ok(read) = stderr.read(&mut chunk).await {
                if read == 0 {
                    break;
                }
                let mut tail = kept
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                tail.extend_from_slice(chunk.get(..read).unwrap_or_default());
                if tail.len() > TAIL_BYTES {
                    let excess = tail.len() - TAIL_BYTES;
                    tail.drain(..excess);
                }
            }
        });
        Self { bytes, task }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use crate::process::{Launch, Stdio, local};

    fn sh(script: &str) -> Launch {
        Launch::new("sh")
            .args(["-c", script])
            .envs([("PATH", "/usr/bin:/bin")])
    }

    /// Whether process `pid` is gone (a zombie, reaped by init later, counts as gone).
    fn gone(pid: i32) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map_or(true, |stat| stat.contains(") Z "))
    }

    async fn until(what: &str, limit: Duration, mut done: impl FnMut() -> bool) {
        let deadline = Instant::now() + limit;
        while !done() {
            assert!(Instant::now() < deadline, "{what}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Starts `script`, which must print a grandchild's pid on its first line of stdout.
    async fn grandchild(script: &str) -> (Child, i32) {
        let mut child = local().spawn(sh(script)).expect("sh starts");
        let mut stdout = child.take_stdout().expect("piped");
        let mut line = Vec::new();
        let mut byte = [0_u8; 1];
        while stdout.read(&mut byte).await.expect("readable") == 1 && byte[0] != b'\n' {
            line.push(byte[0]);
        }
        let pid = String::from_utf8(line).expect("utf-8").trim().parse();
        (child, pid.expect("a pid"))
    }

    #[tokio::test]
    async fn dropping_ends_the_whole_group() {
        let (child, pid) = grandchild("sleep 30 & echo $!; wait").await;
        drop(child);
        until("the grandchild survived", Duration::from_secs(10), || {
            gone(pid)
        })
        .await;
    }

    #[tokio::test]
    async fn a_descendant_in_a_session_of_its_own_ends_with_the_group() {
        // `setsid` makes `sleep` leave the group (as Gemini CLI and Codex's sandbox do).
        let (child, pid) = grandchild("setsid sleep 30 & echo $!; wait").await;
        until("sleep left the group", Duration::from_secs(10), || {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .is_ok_and(|stat| stat.contains("(sleep)"))
        })
        .await;
        drop(child);
        until("the stray survived", Duration::from_secs(10), || gone(pid)).await;
    }

    #[tokio::test]
    async fn a_daemon_that_detached_from_every_ancestor_ends_with_the_group() {
        // A double fork into a session of its own: `sleep`'s parent exits at once, so it
        // is adopted by init and no longer descends from the group. Its mark finds it.
        let (mut child, pid) =
            grandchild("setsid sh -c 'sleep 30 & echo $!' & wait; sleep 0.1").await;
        let status = child.wait().await.expect("exits");
        assert!(status.success());
        until("sleep was not adopted", Duration::from_secs(10), || {
            std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
                stat.contains("(sleep)")
                    && stat[stat.rfind(')').unwrap_or(0)..].split(' ').nth(2) == Some("1")
            }) || gone(pid)
        })
        .await;
        assert!(!gone(pid), "the daemon runs until the handle goes");
        drop(child);
        until("the daemon survived", Duration::from_secs(10), || gone(pid)).await;
    }

    #[tokio::test]
    async fn a_process_of_another_launch_is_left_alone() {
        let (other, pid) = grandchild("setsid sh -c 'sleep 30 & echo $!' & wait").await;
        let (mine, _) = grandchild("echo 0").await;
        drop(mine);
        tokio::time::sleep(GRACE / 4).await;
        assert!(!gone(pid), "a daemon of another launch was ended");
        drop(other);
        until("the other daemon survived", Duration::from_secs(10), || {
            gone(pid)
        })
        .await;
    }

    #[tokio::test]
    async fn what_an_exited_program_left_running_ends_with_its_handle() {
        let (mut child, pid) = grandchild("sleep 30 & echo $!").await;
        let status = child.wait().await.expect("exits");
        assert!(status.success());
        assert!(!gone(pid), "the grandchild runs until the handle goes");
        drop(child);
        until("the grandchild survived", Duration::from_secs(10), || {
            gone(pid)
        })
        .await;
    }

    #[tokio::test]
    async fn terminate_returns_once_a_group_that_ignores_sigterm_is_killed() {
        // An ignored signal stays ignored across exec: `sleep` ignores SIGTERM too.
        let (mut child, pid) = grandchild("trap '' TERM; sleep 30 & echo $!; wait").await;
        let started = Instant::now();
        child.terminate().await;
        let took = started.elapsed();
        assert!(gone(pid), "terminate returned with the grandchild alive");
        assert!(took >= GRACE - Duration::from_millis(100), "{took:?}");
        assert!(took < GRACE + Duration::from_secs(3), "{took:?}");
    }

    #[tokio::test]
    async fn terminate_returns_at_once_for_a_group_that_obeys() {
        let (mut child, pid) = grandchild("sleep 30 & echo $!; wait").await;
        let started = Instant::now();
        child.terminate().await;
        assert!(started.elapsed() < Duration::from_secs(1));
        assert!(gone(pid));
    }

    /// A script whose group writes `leftover`, then `marker` (not to be removed: proof the
    /// handler ran), 0.3 s after SIGTERM, as a CLI writes its usage report when stopped.
    fn writes_on_sigterm(leftover: &std::path::Path, marker: &std::path::Path) -> String {
        format!(
            "trap 'sleep 0.3; echo late > \"{}\"; echo done > \"{}\"; exit 0' TERM; \
             sleep 30 & echo $!; wait",
            leftover.display(),
            marker.display()
        )
    }

    #[tokio::test]
    async fn a_file_written_while_the_group_ends_is_removed_once_it_is_gone() {
        let dir = tempfile::tempdir().expect("temp dir");
        let leftover = dir.path().join("usage.json");
        let marker = dir.path().join("marker");
        let (child, _) = grandchild(&writes_on_sigterm(&leftover, &marker)).await;
        child.remove_when_gone(&leftover);
        drop(child);
        // Removed when the handle went, the file would be written again after and stay.
        until(
            "the group never wrote",
            GRACE + Duration::from_secs(1),
            || marker.exists(),
        )
        .await;
        until(
            "the leftover stayed",
            GRACE + Duration::from_secs(1),
            || !leftover.exists(),
        )
        .await;
        assert!(marker.exists(), "only what was named is removed");
    }

    #[tokio::test]
    async fn terminate_removes_the_leftovers_before_it_returns() {
        let dir = tempfile::tempdir().expect("temp dir");
        let leftover = dir.path().join("usage.json");
        let marker = dir.path().join("marker");
        let (mut child, _) = grandchild(&writes_on_sigterm(&leftover, &marker)).await;
        child.remove_when_gone(&leftover);
        child.terminate().await;
        assert!(marker.exists(), "the group never wrote");
        assert!(!leftover.exists(), "the leftover stayed");
        // Named after the group is gone: removed at once.
        std::fs::write(&leftover, "late").expect("written");
        child.remove_when_gone(&leftover);
        assert!(!leftover.exists(), "a late leftover stayed");
    }

    /// A group gone before `ended` first looks (here within the reaper's first 50 ms nap)
    /// is forgotten by it with its leftovers, not left to a reaper round a caller about to
    /// exit would never see.
    #[tokio::test]
    async fn ended_removes_the_leftovers_of_a_group_already_gone() {
        let dir = tempfile::tempdir().expect("temp dir");
        let leftover = dir.path().join("tmp");
        std::fs::create_dir(&leftover).expect("made");
        let mut child = local()
            .spawn(sh("sleep 30 & exit 0").stdin(Stdio::Null))
            .expect("sh starts");
        child.remove_when_gone(&leftover);
        child.wait().await.expect("the leader exits");
        let pgid = child.group.expect("a group");
        // The sleep is left in the group: ending it is SIGTERM, and it goes at once.
        child.end();
        let deadline = Instant::now() + Duration::from_secs(5);
        while !groups::is_gone(pgid) {
            assert!(Instant::now() < deadline, "the group never went");
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        crate::process::ended().await;
        assert!(!leftover.exists(), "the leftover stayed");
    }

    #[tokio::test]
    async fn keeps_the_stderr_tail_and_times_out() {
        let mut child = local()
            .spawn(sh("echo boom >&2; exit 3"))
            .expect("sh starts");
        let status = child.wait().await.expect("exits");
        assert_eq!(status.code(), Some(3));
        assert_eq!(child.stderr_tail(), "boom");

        let mut child = local()
            .spawn(sh("sleep 30").stdin(Stdio::Null))
            .expect("sh starts");
        let error = child
            .wait_for(Duration::from_millis(100))
            .await
            .expect_err("still running");
        assert!(matches!(error, WaitError::TimedOut(_)), "{error}");
    }

    #[tokio::test]
    async fn a_missing_program_is_a_spawn_error_naming_it() {
        let error = local()
            .spawn(Launch::new("/nonexistent/atomic-program"))
            .expect_err("no such program");
        assert!(
            error.to_string().contains("`/nonexistent/atomic-program`"),
            "{error}"
        );
    }
}
