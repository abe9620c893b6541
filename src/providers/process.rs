//! Agent CLI child processes: spawned in their own process group with `kill_on_drop`; the
//! whole group is killed when the [`ProcessGroup`] is dropped (a cancelled call, a provider
//! shut down), so grandchildren (shells, servers, tool runs) die too. stderr is drained
//! concurrently into a bounded tail for error messages.

use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::task::JoinHandle;

use super::ProviderError;

/// How much of stderr is kept.
const TAIL_BYTES: usize = 8 * 1024;

/// A running child in its own process group.
#[derive(Debug)]
pub(crate) struct ProcessGroup {
    adapter: &'static str,
    child: Child,
    pgid: Option<i32>,
    tail: Arc<Mutex<Vec<u8>>>,
    stderr_task: Option<JoinHandle<()>>,
}

impl ProcessGroup {
    /// Spawns `command` with piped stdio in a new process group.
    ///
    /// # Errors
    /// [`ProviderError::Config`] when the program cannot be started.
    pub(crate) fn spawn(
        adapter: &'static str,
        mut command: Command,
    ) -> Result<Self, ProviderError> {
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        #[cfg(unix)]
        command.process_group(0);
        let program = command
            .as_std()
            .get_program()
            .to_string_lossy()
            .into_owned();
        let mut child = command.spawn().map_err(|error| {
            ProviderError::config(adapter, format!("could not start `{program}`: {error}"))
        })?;
        let pgid = child.id().and_then(|id| i32::try_from(id).ok());
        if let Some(pgid) = pgid {
            super::live_groups::register(pgid);
        }
        let tail = Arc::new(Mutex::new(Vec::new()));
        let stderr_task = child.stderr.take().map(|mut stderr| {
            let tail = Arc::clone(&tail);
            tokio::spawn(async move {
                let mut chunk = [0_u8; 4096];
                while let Ok(read) = stderr.read(&mut chunk).await {
                    if read == 0 {
                        break;
                    }
                    let mut tail = tail.lock().expect("stderr tail lock is never poisoned");
                    tail.extend_from_slice(chunk.get(..read).unwrap_or_default());
                    if tail.len() > TAIL_BYTES {
                        let excess = tail.len() - TAIL_BYTES;
                        tail.drain(..excess);
                    }
                }
            })
        });
        Ok(Self {
            adapter,
            child,
            pgid,
            tail,
            stderr_task,
        })
    }

    /// Takes the child's stdin.
    pub(crate) fn take_stdin(&mut self) -> Option<ChildStdin> {
        self.child.stdin.take()
    }

    /// Takes the child's stdout.
    pub(crate) fn take_stdout(&mut self) -> Option<ChildStdout> {
        self.child.stdout.take()
    }

    /// Waits for the child to exit, at most `limit`, then lets stderr drain briefly.
    ///
    /// # Errors
    /// [`ProviderError::Timeout`] when it does not exit in time (it is then killed).
    pub(crate) async fn wait(&mut self, limit: Duration) -> Result<ExitStatus, ProviderError> {
        let status = match tokio::time::timeout(limit, self.child.wait()).await {
            Ok(Ok(status)) => status,
            Ok(Err(error)) => {
                return Err(ProviderError::process_exit(
                    self.adapter,
                    None,
                    format!("could not wait for the process: {error}"),
                ));
            }
            Err(_) => {
                self.kill();
                return Err(ProviderError::timeout(self.adapter, limit));
            }
        };
        if let Some(task) = self.stderr_task.as_mut() {
            // Grandchildren may hold stderr open; don't wait for them.
            let _ = tokio::time::timeout(Duration::from_millis(500), task).await;
        }
        Ok(status)
    }

    /// The last few KiB of stderr, trimmed.
    #[must_use]
    pub(crate) fn stderr_tail(&self) -> String {
        let tail = self
            .tail
            .lock()
            .expect("stderr tail lock is never poisoned");
        String::from_utf8_lossy(&tail).trim().to_owned()
    }

    /// Kills the whole process group now.
    pub(crate) fn kill(&mut self) {
        if let Some(pgid) = self.pgid.take() {
            super::live_groups::end(pgid);
        }
        let _ = self.child.start_kill();
    }
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        self.kill();
        if let Some(task) = self.stderr_task.take() {
            task.abort();
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[tokio::test]
    async fn dropping_kills_the_whole_group() {
        let dir = tempfile::tempdir().expect("temp dir");
        let marker = dir.path().join("grandchild.pid");
        let mut command = Command::new("sh");
        command.arg("-c").arg(format!(
            "sleep 30 & echo $! > {}; echo started >&2; wait",
            marker.display()
        ));
        let group = ProcessGroup::spawn("test", command).expect("sh starts");
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while !marker.exists()
            || std::fs::read_to_string(&marker)
                .unwrap_or_default()
                .is_empty()
        {
            assert!(
                std::time::Instant::now() < deadline,
                "grandchild never started"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let pid: i32 = std::fs::read_to_string(&marker)
            .expect("marker")
            .trim()
            .parse()
            .expect("a pid");
        drop(group);
        let gone = |pid: i32| {
            // A zombie (reaped by init later) counts as gone.
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .map_or(true, |stat| stat.contains(") Z "))
        };
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while !gone(pid) {
            assert!(
                std::time::Instant::now() < deadline,
                "grandchild {pid} survived"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    #[tokio::test]
    async fn keeps_the_stderr_tail() {
        let mut command = Command::new("sh");
        command.arg("-c").arg("echo boom >&2; exit 3");
        let mut group = ProcessGroup::spawn("test", command).expect("sh starts");
        let status = group.wait(Duration::from_secs(10)).await.expect("exits");
        assert_eq!(status.code(), Some(3));
        assert_eq!(group.stderr_tail(), "boom");
    }
}
