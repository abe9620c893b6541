//! A real pseudo-terminal for the full-screen faces (`atomic ui`, `atomic chat`): util-linux
//! `script`, sized with `stty`; keys are typed at the real binary and its output is parsed
//! into a screen of cells by a terminal emulator (`vt100`). Every wait is bounded.

use std::io::{Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::cli_project::{CliProject, bin};

/// How long a screen may take to show what a test waits for.
pub const SCREEN_TIMEOUT: Duration = Duration::from_secs(30);

/// A full-screen face of `atomic` (or a shell line around it) on a pseudo-terminal of a
/// fixed size.
pub struct Tty {
    /// `script`, which runs the line.
    pub child: Child,
    keys: ChildStdin,
    output: Arc<Mutex<Vec<u8>>>,
    rows: u16,
    cols: u16,
}

impl Tty {
    /// `line` (a shell command line, `{atomic}` standing for the binary) in `project` on a
    /// `cols`×`rows` terminal; `None` when `script` is not installed (the test skips).
    pub fn start(
        project: &CliProject,
        line: &str,
        cols: u16,
        rows: u16,
        color: bool,
    ) -> Option<Self> {
        Self::start_with(project, line, cols, rows, color, &[])
    }

    /// [`Tty::start`] with `env` added to the line's environment.
    pub fn start_with(
        project: &CliProject,
        line: &str,
        cols: u16,
        rows: u16,
        color: bool,
        env: &[(String, String)],
    ) -> Option<Self> {
        if Command::new("script").arg("--version").output().is_err() {
            #[allow(clippy::print_stderr, reason = "a skipped test says so")]
            {
                eprintln!("SKIPPED: `script` (util-linux) is not installed");
            }
            return None;
        }
        let line = line.replace("{atomic}", &bin().display().to_string());
        let shell = format!("stty cols {cols} rows {rows}; {line}");
        let mut command = Command::new("script");
        command
            .args(["-qfec", &shell, "/dev/null"])
            .current_dir(project.path())
            .env("TERM", "xterm-256color")
            .env_remove("RUST_LOG")
            .env_remove("CI")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        command.envs(env.iter().map(|(name, value)| (name, value)));
        if color {
            command.env_remove("NO_COLOR");
        } else {
            command.env("NO_COLOR", "1");
        }
        let mut child = command.spawn().expect("spawn script");
        let keys = child.stdin.take().expect("stdin");
        let mut out = child.stdout.take().expect("stdout");
        let output = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&output);
        // Ends when script closes its stdout (the child is gone).
        std::thread::spawn(move || {
            let mut buffer = [0; 8192];
            while let Ok(n) = out.read(&mut buffer) {
                if n == 0 {
                    break;
                }
                sink.lock().unwrap().extend_from_slice(&buffer[..n]);
            }
        });
        Some(Self {
            child,
            keys,
            output,
            rows,
            cols,
        })
    }

    /// The screen as everything printed so far draws it.
    pub fn parser(&self) -> vt100::Parser {
        let mut parser = emulator(self.rows, self.cols);
        parser.process(&self.output.lock().unwrap());
        parser
    }

    /// The screen's text.
    pub fn text(&self) -> String {
        self.parser().screen().contents()
    }

    /// Waits until the screen's text passes `ready`; fails with the screen after
    /// [`SCREEN_TIMEOUT`].
    pub fn wait_for(&self, what: &str, ready: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + SCREEN_TIMEOUT;
        loop {
            let text = self.text();
            if ready(&text) {
                return text;
            }
            assert!(
                Instant::now() < deadline,
                "the screen never showed {what}:\n{text}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Types `keys`.
    pub fn type_keys(&mut self, keys: &str) {
        self.keys.write_all(keys.as_bytes()).expect("type");
        self.keys.flush().expect("flush keys");
        // Keys arrive one read at a time, as from a person.
        std::thread::sleep(Duration::from_millis(150));
    }

    /// Waits for the process to end (bounded), its exit code and everything it printed.
    pub fn finish(mut self) -> (Option<i32>, Vec<u8>) {
        let deadline = Instant::now() + SCREEN_TIMEOUT;
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("poll script") {
                break status;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!("`atomic` did not exit:\n{}", self.text());
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        // The reader has the last bytes once script's stdout closes.
        std::thread::sleep(Duration::from_millis(100));
        let output = self.output.lock().unwrap().clone();
        (status.code(), output)
    }
}

impl Drop for Tty {
    fn drop(&mut self) {
        // A failed test must not leave the view running.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A terminal emulator of `rows`×`cols` cells, no scrollback.
pub fn emulator(rows: u16, cols: u16) -> vt100::Parser {
    let size = |n: u16| std::num::NonZeroU16::new(n).expect("a terminal has cells");
    vt100::Parser::new(size(rows), size(cols), 0)
}

/// Writes `screen` into README.md between the `<!-- BEGIN {marker}: … -->` and
/// `<!-- END {marker} -->` lines, when `ATOMIC_UPDATE_SCREENSHOTS` is set (`writer` is the
/// test file named in the begin line).
pub fn save_capture(marker: &str, writer: &str, screen: &str) {
    if std::env::var_os("ATOMIC_UPDATE_SCREENSHOTS").is_none() {
        return;
    }
    let begin = format!("<!-- BEGIN {marker}: written by {writer} -->\n");
    let end = format!("<!-- END {marker} -->");
    let path = super::root().join("README.md");
    let readme = std::fs::read_to_string(&path).expect("read README.md");
    let start = readme
        .find(&begin)
        .unwrap_or_else(|| panic!("README has the {marker} markers"))
        + begin.len();
    let stop = readme
        .find(&end)
        .unwrap_or_else(|| panic!("README has the {marker} end marker"));
    let picture: String = screen
        .lines()
        .map(|line| format!("{}\n", line.trim_end()))
        .collect();
    let updated = format!(
        "{}```text\n{picture}```\n{}",
        &readme[..start],
        &readme[stop..]
    );
    if updated != readme {
        std::fs::write(&path, updated).expect("write README.md");
    }
}
