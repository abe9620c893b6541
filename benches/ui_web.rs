//! `atomic ui --web` against the bars (issue 16), through the binary and HTTP:
//!
//! - page load of a 1,000-step run (W1, 1,000 `set` nodes, so a 1,000-box graph): the run
//!   page, its stylesheet and script, its graph and the first server-sent view — everything
//!   the page shows. Target ≤ 200 ms.
//! - following a run that logs far more than 1,000 events/s (a 20,000-step loop): the page's
//!   stream must end with every event counted, shortly after the run ends. Target ≥ 1,000
//!   events/s without falling behind.
//!
//! `cargo bench --bench ui_web` (builds the binary in the bench profile). Prints medians.

#![allow(clippy::print_stdout, reason = "a benchmark reports its figures")]

#[path = "support/flows.rs"]
mod flows;
#[path = "support/process.rs"]
mod process;

use process::{atomic, median, ms};

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;

struct Server(Child, String);

impl Server {
    fn start(dir: &Path) -> Self {
        let mut child = atomic(dir)
            .args(["ui", "--web", "--port", "0"])
            .stdout(Stdio::piped())
            .spawn()
            .expect("atomic ui starts");
        let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
        let line = lines.next().expect("a line").expect("utf-8");
        let url = line
            .strip_prefix("atomic ui: ")
            .expect("the address")
            .to_owned();
        Self(child, url)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn client() -> reqwest::blocking::Client {
    atomic::tls::install();
    reqwest::blocking::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(120))
        .build()
        .expect("client")
}

/// The first `view` of a run's stream, as JSON.
fn first_view(client: &reqwest::blocking::Client, url: &str) -> Value {
    let response = client.get(url).send().expect("the stream");
    let mut event = String::new();
    for line in BufReader::new(response).lines() {
        let line = line.expect("a line");
        if let Some(data) = line.strip_prefix("data:") {
            event.push_str(data.trim_start());
        } else if line.is_empty() && !event.is_empty() {
            return serde_json::from_str(&event).expect("a view");
        }
    }
    panic!("the stream ended without a view");
}

fn page_load() {
    let dir = tempfile::tempdir().expect("dir");
    std::fs::create_dir_all(dir.path().join(".atomic")).expect(".atomic");
    std::fs::write(dir.path().join("w1.kdl"), flows::w1()).expect("w1");
    let status = atomic(dir.path())
        .args(["run", "w1.kdl", "--quiet"])
        .status()
        .expect("run");
    assert_eq!(status.code(), Some(0));
    let server = Server::start(dir.path());
    let client = client();
    let runs: Value = client
        .get(format!("{}api/runs", server.1))
        .send()
        .and_then(reqwest::blocking::Response::json)
        .expect("runs");
    let id = runs[0]["id"].as_str().expect("a run").to_owned();
    let load = || {
        let started = Instant::now();
        for path in [
            format!("runs/{id}"),
            "assets/app.css".to_owned(),
            "assets/run.js".to_owned(),
            format!("api/runs/{id}/graph.svg"),
        ] {
            let body = client
                .get(format!("{}{path}", server.1))
                .send()
                .and_then(reqwest::blocking::Response::bytes)
                .expect("a page part");
            assert!(!body.is_empty());
        }
        let view = first_view(&client, &format!("{}api/runs/{id}/stream", server.1));
        assert_eq!(view["step"], 1000);
        started.elapsed()
    };
    let cold = load();
    let warm: Vec<Duration> = (0..20).map(|_| load()).collect();
    println!(
        "page load, 1,000-step run: first {:.1} ms (compiles the graph), then median {:.1} ms over 20",
        ms(cold),
        ms(median(warm))
    );
}

fn follow() {
    let dir = tempfile::tempdir().expect("dir");
    std::fs::create_dir_all(dir.path().join(".atomic")).expect(".atomic");
    // A first run, so the store exists when the server opens it.
    std::fs::write(dir.path().join("w1.kdl"), flows::w1()).expect("w1");
    atomic(dir.path())
        .args(["run", "w1.kdl", "--quiet"])
        .status()
        .expect("run");
    std::fs::write(
        dir.path().join("long.kdl"),
        flows::loop_of("long", 20_000, ""),
    )
    .expect("long");
    let server = Server::start(dir.path());
    let client = client();
    let started = Instant::now();
    let mut run = atomic(dir.path())
        .args(["run", "long.kdl", "--quiet"])
        .spawn()
        .expect("the long run starts");
    // Its id, once it is stored.
    let id = loop {
        let runs: Value = client
            .get(format!("{}api/runs", server.1))
            .send()
            .and_then(reqwest::blocking::Response::json)
            .expect("runs");
        if let Some(run) = runs
            .as_array()
            .and_then(|runs| runs.iter().find(|r| r["workflow"] == "long"))
        {
            break run["id"].as_str().expect("id").to_owned();
        }
        assert!(started.elapsed() < Duration::from_secs(60), "no long run");
        std::thread::sleep(Duration::from_millis(5));
    };
    let (sender, views) = mpsc::channel();
    let url = format!("{}api/runs/{id}/stream", server.1);
    let reader = std::thread::spawn(move || {
        let response = client.get(url).send().expect("the stream");
        let mut event = String::new();
        for line in BufReader::new(response).lines().map_while(Result::ok) {
            if let Some(data) = line.strip_prefix("data:") {
                event.push_str(data.trim_start());
            } else if line.is_empty() && !event.is_empty() {
                let view: Value = serde_json::from_str(&event).expect("a view");
                let _ = sender.send((Instant::now(), view));
                event.clear();
            }
        }
    });
    let status = run.wait().expect("the long run");
    let ended = Instant::now();
    assert_eq!(status.code(), Some(0));
    let mut last = None;
    let mut updates = 0;
    while let Ok((at, view)) = views.recv_timeout(Duration::from_secs(60)) {
        updates += 1;
        let done = view["phase"] == "completed";
        last = Some((at, view));
        if done {
            break;
        }
    }
    let (at, view) = last.expect("views");
    let events = view["event_count"].as_u64().expect("count");
    let run_time = ended.duration_since(started);
    #[allow(clippy::cast_precision_loss)]
    let rate = events as f64 / run_time.as_secs_f64();
    println!(
        "follow: a run logging {events} events in {:.0} ms ({rate:.0} events/s); the page's \
         stream sent {updates} views and its last ({}) came {:.0} ms after the run ended",
        ms(run_time),
        view["phase"],
        ms(at.saturating_duration_since(ended)),
    );
    drop(server);
    let _ = reader.join();
}

fn main() {
    page_load();
    follow();
}
