//! Neovim as the client: headless `nvim` with `tests/fixtures/lsp/init.lua` starts the built
//! `atomic lsp`, opens a broken workflow, waits (at most 10 s) for diagnostics and writes
//! them to a file; the test checks their codes and lines.
//!
//! Needs `nvim` on the PATH (`./test` installs Debian's package when it may). Without it the
//! test skips loudly, and fails under `CI=true`.

use std::process::Command;
use std::time::{Duration, Instant};

use crate::support;

#[test]
fn neovim_shows_the_diagnostics() {
    let Some(nvim) = support::tools::required_tool("nvim", "apt-get install neovim") else {
        return;
    };
    let dir = tempfile::tempdir().expect("a temp dir");
    let flow = dir.path().join("broken.kdl");
    std::fs::copy(support::root().join("tests/fixtures/lsp/broken.kdl"), &flow).expect("copy");
    let out = dir.path().join("diagnostics.txt");
    let config = support::root().join("tests/fixtures/lsp/init.lua");
    let mut child = Command::new(nvim)
        .args(["--headless", "-n", "-i", "NONE", "--noplugin", "-u"])
        .arg(&config)
        .arg(&flow)
        .env("ATOMIC_BIN", env!("CARGO_BIN_EXE_atomic"))
        .env("ATOMIC_LSP_OUT", &out)
        .env("XDG_STATE_HOME", dir.path())
        .env("XDG_DATA_HOME", dir.path())
        .env("XDG_CONFIG_HOME", dir.path())
        .env("XDG_CACHE_HOME", dir.path())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("nvim starts");
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if started.elapsed() > Duration::from_secs(30) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("nvim did not exit within 30 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let stderr = child
        .wait_with_output()
        .map(|output| String::from_utf8_lossy(&output.stderr).into_owned())
        .unwrap_or_default();
    let written = std::fs::read_to_string(&out).unwrap_or_else(|_| {
        panic!("nvim wrote no diagnostics (status {status}); stderr: {stderr}")
    });
    assert!(
        status.success(),
        "nvim failed ({status}): {written}\n{stderr}"
    );
    // One line per diagnostic: `<line>:<col> <code> <severity> <message>` (1-based line).
    let mut found: Vec<(String, String)> = written
        .lines()
        .map(|line| {
            let mut parts = line.splitn(4, ' ');
            let position = parts.next().unwrap_or_default();
            let line_number = position.split(':').next().unwrap_or_default().to_owned();
            (line_number, parts.next().unwrap_or_default().to_owned())
        })
        .collect();
    found.sort();
    assert_eq!(
        found,
        [
            ("4".to_owned(), "atomic::unknown-property".to_owned()),
            ("6".to_owned(), "atomic::undefined-node".to_owned()),
        ],
        "{written}"
    );
}
