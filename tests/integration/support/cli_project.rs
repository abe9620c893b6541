//! A temporary project for command-line tests: a directory with `.atomic/` (so the
//! store lands inside it), files written into it, and the `atomic` binary run there with
//! a bounded timeout.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

/// How long one `atomic` command may take in a test.
pub const COMMAND_TIMEOUT: Duration = Duration::from_secs(60);

/// The `atomic` binary under test.
pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_atomic"))
}

/// A project in a temporary directory.
pub struct CliProject {
    dir: tempfile::TempDir,
    /// A home for agent CLIs run in the project, outside it: what a CLI keeps in its home
    /// (npm caches, session files) is not the project's files, which runs record.
    home: tempfile::TempDir,
}

impl CliProject {
    /// An empty project (`.atomic/` created, so it is the project root).
    pub fn new() -> Self {
        let dir = tempfile::tempdir().expect("a temporary directory");
        std::fs::create_dir_all(dir.path().join(".atomic")).expect("create .atomic");
        let home = tempfile::tempdir().expect("a temporary home");
        Self { dir, home }
    }

    /// A home directory for the CLIs a test runs, outside the project.
    pub fn home(&self) -> &Path {
        self.home.path()
    }

    /// The project directory.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Writes `text` to `name` inside the project.
    pub fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.dir.path().join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("create parent directory");
        }
        std::fs::write(&path, text).expect("write file");
        path
    }

    /// Reads `name` inside the project ("" when it does not exist).
    pub fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.dir.path().join(name)).unwrap_or_default()
    }

    /// `atomic` run in the project, colourless, no `RUST_LOG`, bounded in time.
    pub fn atomic(&self) -> assert_cmd::Command {
        let mut command = assert_cmd::Command::new(bin());
        command
            .current_dir(self.dir.path())
            .env("NO_COLOR", "1")
            .env_remove("RUST_LOG")
            .timeout(COMMAND_TIMEOUT);
        command
    }

    /// `atomic ARGS` with `env` added, off the async runtime, killed after `limit`: for
    /// async tests of commands that drive agent CLIs.
    pub async fn atomic_async<K, V>(
        &self,
        args: &[&str],
        env: &[(K, V)],
        limit: Duration,
    ) -> std::process::Output
    where
        K: AsRef<std::ffi::OsStr>,
        V: AsRef<std::ffi::OsStr>,
    {
        let mut command = self.atomic();
        command.args(args).timeout(limit);
        for (name, value) in env {
            command.env(name, value);
        }
        super::within(
            limit + Duration::from_secs(10),
            tokio::task::spawn_blocking(move || command.output().expect("atomic")),
        )
        .await
        .expect("atomic ran")
    }

    /// `atomic` as a plain child process (for signals).
    pub fn spawn_command(&self) -> std::process::Command {
        let mut command = std::process::Command::new(bin());
        command
            .current_dir(self.dir.path())
            .env("NO_COLOR", "1")
            .env_remove("RUST_LOG");
        command
    }

    /// Runs `atomic run FILE --quiet`, SIGKILLs it once the file `out` has `lines` lines
    /// (polling), and resumes it to its end. Returns whether the kill interrupted the run
    /// (it may have finished first).
    pub fn kill_at_lines_and_resume(&self, file: &str, out: &str, lines: usize) -> bool {
        let count = || self.read(out).lines().count();
        let mut child = self
            .spawn_command()
            .args(["run", file, "--quiet"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("spawn atomic run");
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        let mut finished = false;
        while count() < lines {
            if child.try_wait().expect("poll the child").is_some() {
                finished = true;
                break;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "the run never reached {lines} lines"
            );
            std::thread::sleep(Duration::from_micros(500));
        }
        // SIGKILL: no chance to clean up or checkpoint.
        let _ = child.kill();
        let status = child.wait().expect("reap the child");
        assert!(
            !finished || status.success(),
            "the run failed before the kill at {lines} lines"
        );
        // A tool started just before the kill may still be writing its line.
        std::thread::sleep(Duration::from_millis(30));

        let run = &self.runs()[0];
        let interrupted = run["status"] != "completed";
        if interrupted {
            assert_eq!(
                run["status"], "running",
                "a killed run is left running: {run}"
            );
            let output = self
                .atomic()
                .args(["resume", run["id"].as_str().expect("an id"), "--quiet"])
                .output()
                .expect("atomic resume");
            assert_eq!(
                output.status.code(),
                Some(0),
                "resume after a kill at {lines} lines: {}",
                stderr(&output)
            );
        }
        interrupted
    }

    /// `atomic runs --json`.
    pub fn runs(&self) -> Vec<Value> {
        let output = self
            .atomic()
            .args(["runs", "--json"])
            .output()
            .expect("atomic runs");
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        serde_json::from_slice(&output.stdout).expect("runs --json prints JSON")
    }

    /// The id of the only (or newest) run.
    pub fn last_run(&self) -> String {
        self.runs()
            .first()
            .and_then(|run| run["id"].as_str())
            .expect("a run was stored")
            .to_owned()
    }

    /// `atomic runs show RUN --json`.
    pub fn show(&self, run: &str) -> Value {
        let output = self
            .atomic()
            .args(["runs", "show", run, "--json"])
            .output()
            .expect("atomic runs show");
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        serde_json::from_slice(&output.stdout).expect("runs show --json prints JSON")
    }
}

/// A command's stdout as text.
pub fn stdout(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// A command's stderr as text.
pub fn stderr(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}
