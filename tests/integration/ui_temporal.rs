//! `atomic ui --temporal`: runs on a real Temporal dev server (the harness of
//! `temporal/mod.rs`, skipped with one line when the `temporal` CLI is missing) seen
//! through both faces — the web page's JSON over plain HTTP, a wait answered and a run
//! cancelled from it, on Temporal; the text print of `atomic ui RUN` — and a server or a
//! worker that is not there said as such, with what to do.

use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::cli_project::{CliProject, stderr, stdout};
use crate::support::web_view::{WebView, http};
use crate::temporal::{Cluster, run_id};

/// The task queue the tests' workers poll.
const QUEUE: &str = "ui";

/// A run that writes `n` (1), pauses at `approve` (yes/no), then writes `n` again (2).
const GATE: &str = r#"workflow "gate" {
    state {
        field "n" type="integer" default=0
        field "approved" type="boolean" default=#false
    }
    tool "before" idempotent=#true {
        run "sh" "-c" "echo 1"
        output "n" parse="json"
    }
    wait "approve" prompt="Ship?" answer="yes-no" {
        output "approved"
    }
    tool "after" idempotent=#true {
        run "sh" "-c" "echo 2"
        output "n" parse="json"
    }
}
"#;

/// `atomic ui --web` on the cluster's runs.
fn web_view(project: &CliProject, cluster: &Cluster) -> WebView {
    WebView::start(
        project,
        &["--temporal", &cluster.address, "--task-queue", QUEUE],
    )
}

/// The state of step `key` in a run's JSON.
fn step_state<'a>(run: &'a Value, key: &str) -> &'a str {
    run["nodes"]
        .as_array()
        .and_then(|nodes| nodes.iter().find(|node| node["key"] == key))
        .and_then(|node| node["state"].as_str())
        .unwrap_or_else(|| panic!("no step `{key}` in {run}"))
}

/// Starts a worker and a run of [`GATE`], which pauses at its wait; the run id.
fn paused_run(cluster: &mut Cluster, project: &CliProject) -> String {
    project.write("gate.kdl", GATE);
    cluster.worker(project, QUEUE, "one");
    let output = cluster.atomic(project, QUEUE, &["run", "gate.kdl", "--quiet"]);
    assert_eq!(output.status.code(), Some(4), "{}", stderr(&output));
    run_id(&output)
}

#[test]
fn ui_temporal_web_shows_a_paused_run_and_its_answer_completes_it_on_temporal() {
    let Some(mut cluster) = Cluster::start() else {
        return;
    };
    let project = CliProject::new();
    let run = paused_run(&mut cluster, &project);
    let web = web_view(&project, &cluster);
    let client = http();

    // The list is the server's, which lags a moment behind a run's start.
    let deadline = Instant::now() + Duration::from_secs(30);
    let listed = loop {
        let runs = web.json(&client, "api/runs");
        if let Some(row) = runs
            .as_array()
            .and_then(|rows| rows.iter().find(|row| row["id"] == run.as_str()))
        {
            break row.clone();
        }
        assert!(
            Instant::now() < deadline,
            "run `{run}` is not listed: {runs}"
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    assert_eq!(listed["status"], "paused", "{listed}");
    assert_eq!(listed["workflow"], "gate", "{listed}");

    // The run page: its steps' states and the wait, read through the worker.
    let shown = web.json(&client, &format!("api/runs/{run}"));
    assert_eq!(shown["phase"], "paused", "{shown}");
    assert_eq!(step_state(&shown, "before"), "done", "{shown}");
    assert_eq!(step_state(&shown, "approve"), "waiting", "{shown}");
    assert_eq!(step_state(&shown, "after"), "pending", "{shown}");
    assert_eq!(shown["waits"][0]["node"], "approve", "{shown}");
    assert_eq!(shown["waits"][0]["prompt"], "Ship?", "{shown}");
    assert_eq!(shown["state"]["n"], 1, "{shown}");
    // A prefix of the id names the run too.
    let by_prefix = web.json(&client, &format!("api/runs/{}", &run[..run.len() - 4]));
    assert_eq!(by_prefix["run_id"], run.as_str(), "{by_prefix}");

    // Answers go to Temporal through `atomic resume --temporal …`, with the page's token.
    let page = web.get(&client, "").text().expect("the runs page");
    let token = page
        .split("name=\"atomic-token\" content=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("the page carries the token")
        .to_owned();
    let answer = format!("{}api/runs/{run}/answer", web.url);
    let refused = client
        .post(&answer)
        .header("x-atomic-token", &token)
        .json(&serde_json::json!({"answer": "perhaps"}))
        .send()
        .expect("answered");
    assert_eq!(
        refused.status(),
        422,
        "the wait's own check refuses it: {:?}",
        refused.text()
    );
    let accepted = client
        .post(&answer)
        .header("x-atomic-token", &token)
        .json(&serde_json::json!({"answer": "yes"}))
        .send()
        .expect("answered");
    assert_eq!(accepted.status(), 202, "{:?}", accepted.text());

    let deadline = Instant::now() + Duration::from_secs(60);
    let done = loop {
        let shown = web.json(&client, &format!("api/runs/{run}"));
        if shown["phase"] == "completed" {
            break shown;
        }
        assert!(Instant::now() < deadline, "not completed: {shown}");
        std::thread::sleep(Duration::from_millis(200));
    };
    assert_eq!(step_state(&done, "after"), "done", "{done}");
    assert_eq!(done["state"]["approved"], true, "{done}");
    assert_eq!(done["state"]["n"], 2, "{done}");
    assert!(
        done["waits"].as_array().is_some_and(Vec::is_empty),
        "{done}"
    );
    // And so it is on Temporal itself.
    let on_temporal = cluster.show(&project, QUEUE, &run);
    assert_eq!(on_temporal["run"]["status"], "completed", "{on_temporal}");
    assert_eq!(on_temporal["state"]["approved"], true, "{on_temporal}");
}

#[test]
fn ui_temporal_prints_a_run_once_and_says_when_no_worker_can_read_it() {
    let Some(mut cluster) = Cluster::start() else {
        return;
    };
    let project = CliProject::new();
    let run = paused_run(&mut cluster, &project);

    // Not a terminal: the run printed once, by a prefix of its id.
    let printed = cluster.atomic(&project, QUEUE, &["ui", &run[..run.len() - 4]]);
    assert_eq!(printed.status.code(), Some(0), "{}", stderr(&printed));
    let text = stdout(&printed);
    assert!(text.starts_with(&format!("gate {run} (paused)")), "{text}");
    let row = |key: &str| {
        text.lines()
            .find(|line| line.split_whitespace().nth(2) == Some(key))
            .unwrap_or_else(|| panic!("no row for `{key}`:\n{text}"))
            .to_owned()
    };
    assert!(row("before").contains("done"), "{text}");
    assert!(row("approve").contains("waiting"), "{text}");
    assert!(text.contains("Ship?"), "the wait's question: {text}");
    assert!(
        text.contains(&format!(
            "atomic resume {run} --temporal {} --namespace default --task-queue {QUEUE} --answer <ANSWER>",
            cluster.address
        )),
        "the answer hint reaches Temporal: {text}"
    );

    // A run is read through a worker: without one the view says so, and how to start one.
    cluster.stop_worker("one");
    let unread = cluster.atomic(&project, QUEUE, &["ui", &run]);
    assert_ne!(unread.status.code(), Some(0), "{}", stdout(&unread));
    let said = stderr(&unread);
    assert!(
        said.contains(&format!(
            "atomic worker --temporal {} --namespace default --task-queue {QUEUE}",
            cluster.address
        )),
        "{said}"
    );
    assert!(!said.contains("panicked"), "{said}");

    // No run of that id: a plain "no run", naming the server.
    let missing = cluster.atomic(&project, QUEUE, &["ui", "no-such-run"]);
    assert_eq!(missing.status.code(), Some(1), "{}", stderr(&missing));
    assert!(
        stderr(&missing).contains(&format!(
            "no run `no-such-run` on Temporal at `{}`",
            cluster.address
        )),
        "{}",
        stderr(&missing)
    );
}

/// No server at the address: said at once, with the address and how to start one; no
/// dev server needed.
#[test]
fn ui_temporal_without_a_server_says_where_it_looked() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|address| address.port())
        .expect("a free port");
    let address = format!("127.0.0.1:{port}");
    let project = CliProject::new();
    for face in [&["ui"][..], &["ui", "--web", "--port", "0"][..]] {
        let output = project
            .atomic()
            .args(face)
            .args(["--temporal", &address])
            .timeout(Duration::from_secs(60))
            .output()
            .expect("atomic ui");
        assert_ne!(output.status.code(), Some(0), "{face:?}");
        let said = stderr(&output);
        assert!(
            said.contains(&format!("cannot reach the Temporal server at `{address}`")),
            "{face:?}: {said}"
        );
        assert!(
            said.contains("temporal server start-dev"),
            "{face:?}: {said}"
        );
    }
}

#[test]
fn ui_temporal_web_cancels_a_paused_run_on_temporal() {
    let Some(mut cluster) = Cluster::start() else {
        return;
    };
    let project = CliProject::new();
    let run = paused_run(&mut cluster, &project);
    let web = web_view(&project, &cluster);
    let client = http();
    let page = web.get(&client, "").text().expect("the runs page");
    let token = page
        .split("name=\"atomic-token\" content=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("the page carries the token")
        .to_owned();
    // Through `atomic cancel RUN --temporal …`.
    let cancelled = client
        .post(format!("{}api/runs/{run}/cancel", web.url))
        .header("x-atomic-token", &token)
        .send()
        .expect("answered");
    assert_eq!(cancelled.status(), 202, "{:?}", cancelled.text());
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let shown = web.json(&client, &format!("api/runs/{run}"));
        if shown["phase"] == "cancelled" {
            assert_eq!(
                shown["state"]["n"], 1,
                "the committed step is kept: {shown}"
            );
            break;
        }
        assert!(Instant::now() < deadline, "not cancelled: {shown}");
        std::thread::sleep(Duration::from_millis(200));
    }
    let on_temporal = cluster.show(&project, QUEUE, &run);
    assert_eq!(on_temporal["run"]["status"], "cancelled", "{on_temporal}");
}
