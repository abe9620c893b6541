//! `atomic ui --web` as a child process for tests: started on a free port in a project, its
//! printed address read, killed when dropped; and a plain HTTP client for it.

use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::Value;

use super::cli_project::CliProject;

/// `atomic ui --web --port 0 <extra…>` in a project.
pub struct WebView {
    child: Child,
    /// Its address, ending in `/`.
    pub url: String,
}

impl WebView {
    /// Starts it and waits (bounded) for the address it prints.
    pub fn start(project: &CliProject, extra: &[&str]) -> Self {
        let mut child = project
            .spawn_command()
            .args(["ui", "--web", "--port", "0"])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("atomic ui starts");
        let out = child.stdout.take().expect("stdout");
        let (sender, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                let _ = sender.send(line);
            }
        });
        let line = lines
            .recv_timeout(Duration::from_secs(30))
            .expect("atomic ui prints its address");
        let url = line
            .strip_prefix("atomic ui: ")
            .unwrap_or_else(|| panic!("unexpected first line: {line}"))
            .to_owned();
        Self { child, url }
    }

    /// `GET <path>` (relative to its address).
    pub fn get(
        &self,
        client: &reqwest::blocking::Client,
        path: &str,
    ) -> reqwest::blocking::Response {
        client
            .get(format!("{}{path}", self.url))
            .send()
            .unwrap_or_else(|error| panic!("GET {path}: {error}"))
    }

    /// `GET <path>`, which must answer 200 with JSON.
    pub fn json(&self, client: &reqwest::blocking::Client, path: &str) -> Value {
        let response = self.get(client, path);
        let status = response.status();
        let text = response.text().expect("a body");
        assert_eq!(status, 200, "GET {path}: {text}");
        serde_json::from_str(&text).unwrap_or_else(|_| panic!("GET {path} is JSON: {text}"))
    }
}

impl Drop for WebView {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A client for loopback servers: no proxy, bounded.
pub fn http() -> reqwest::blocking::Client {
    atomic::tls::install();
    reqwest::blocking::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(30))
        .build()
        .expect("client")
}
