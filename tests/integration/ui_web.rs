//! `atomic ui --web` in a real headless Chromium: a live run's steps change state on the
//! page, a wait is answered from the page and the run goes on; and the server's guards
//! (its own host names, its token for actions) over plain HTTP.

use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::cli_project::CliProject;
use crate::support::web_view::{WebView, http};
use crate::support::webdriver::Browser;

/// Each step of the live workflow's agents takes this long, so the page can see it run.
const STEP_LATENCY: &str = "1500ms";

fn live_flow() -> String {
    format!(
        r#"workflow "live" {{
    state {{
        field "plan" type="string" default=""
        field "build" type="string" default=""
        field "decision" type="string" default=""
        field "shipped" type="string" default=""
    }}
    provider "model" adapter="in-process" latency="{STEP_LATENCY}"
    agent "plan" provider="model" {{
        prompt "Plan the release."
        output "plan"
    }}
    agent "build" provider="model" {{
        prompt "Build it."
        output "build"
    }}
    wait "approve" prompt="Ship the release?" answer="choice" {{
        choice "ship" label="Ship it"
        choice "hold" label="Hold"
        output "decision"
    }}
    agent "ship" provider="model" {{
        prompt "Ship it."
        output "shipped"
    }}
}}
"#
    )
}

/// Starts `atomic run live.kdl` in the background and waits for its run to be stored.
fn start_live_run(project: &CliProject) -> Child {
    project.write("live.kdl", &live_flow());
    start_run(project, "live.kdl", &[])
}

/// Starts `atomic run FILE --quiet` (with `env`) in the background and waits (bounded)
/// until the project has a store.
fn start_run(project: &CliProject, file: &str, env: &[(&str, &str)]) -> Child {
    let child = project
        .spawn_command()
        .args(["run", file, "--quiet"])
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("atomic run starts");
    let deadline = Instant::now() + Duration::from_secs(30);
    while !project.path().join(".atomic/atomic.db").exists() {
        assert!(Instant::now() < deadline, "the run created no store");
        std::thread::sleep(Duration::from_millis(20));
    }
    child
}

/// Whether the page's states (from [`STATES`]) have `pair` (`key=state`).
fn shows(states: &Value, pair: &str) -> bool {
    states
        .as_array()
        .expect("states")
        .iter()
        .any(|seen| seen == pair)
}

/// The graph's step states on the page, as `key=state` pairs.
const STATES: &str = "return [...document.querySelectorAll('#graph .step')]
    .map(step => step.dataset.key + '=' + (step.dataset.state || 'pending'));";

#[test]
fn the_web_page_follows_a_live_run_and_answers_its_wait() {
    let Some(browser) = Browser::start() else {
        return;
    };
    let project = CliProject::new();
    let mut run = start_live_run(&project);
    let server = WebView::start(&project, &[]);
    let client = http();
    let deadline = Instant::now() + Duration::from_secs(30);
    let id = loop {
        let runs: Value = client
            .get(format!("{}api/runs", server.url))
            .send()
            .and_then(reqwest::blocking::Response::json)
            .expect("the runs list");
        if let Some(id) = runs[0]["id"].as_str() {
            break id.to_owned();
        }
        assert!(Instant::now() < deadline, "no run listed");
        std::thread::sleep(Duration::from_millis(50));
    };
    browser.open(&format!("{}runs/{id}", server.url));
    browser.wait_for(
        "the graph",
        Duration::from_secs(20),
        "return document.querySelectorAll('#graph .step').length >= 4;",
    );
    // Watch the steps change state while the run goes on, until it pauses at the wait.
    let mut seen: Vec<String> = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        for pair in browser.script(STATES, &[]).as_array().expect("states") {
            let pair = pair.as_str().expect("a pair").to_owned();
            if !seen.contains(&pair) {
                seen.push(pair);
            }
        }
        if browser.script("return document.body.dataset.phase;", &[]) == "paused" {
            break;
        }
        assert!(Instant::now() < deadline, "the run never paused: {seen:?}");
        std::thread::sleep(Duration::from_millis(40));
    }
    for expected in ["plan=running", "plan=done", "build=running"] {
        assert!(
            seen.iter().any(|pair| pair == expected),
            "the page never showed {expected}: {seen:?}"
        );
    }
    let states = browser.script(STATES, &[]);
    assert!(shows(&states, "approve=waiting"), "{states}");
    assert!(shows(&states, "build=done"), "{states}");
    assert_eq!(run.wait().expect("the run process").code(), Some(4));
    // The selected (waiting) step's neighbour output is on the page: open `plan`.
    browser.click("#graph .step[data-key='plan']");
    browser.wait_for(
        "plan's output",
        Duration::from_secs(10),
        "return document.querySelector('#output').textContent.length > 0;",
    );
    // Answer the wait from the page; the run goes on to its end.
    browser.wait_for(
        "the answer form",
        Duration::from_secs(10),
        "return !document.querySelector('#waits').hidden
            && !document.querySelector('#answer-choice').hidden;",
    );
    let prompt = browser.script(
        "return document.querySelector('#wait-prompt').textContent;",
        &[],
    );
    assert_eq!(prompt, "Ship the release?");
    browser.script(
        "document.querySelector('#answer-choice').value = 'ship'; return true;",
        &[],
    );
    browser.click("#answer button[type=submit]");
    browser.wait_for(
        "the run to complete",
        Duration::from_secs(60),
        "return document.body.dataset.phase === 'completed';",
    );
    let states = browser.script(STATES, &[]);
    assert!(shows(&states, "ship=done"), "{states}");
    // The store agrees with the page.
    let shown = project
        .atomic()
        .args(["runs", "show", &id, "--json"])
        .output()
        .expect("runs show");
    let shown: Value = serde_json::from_slice(&shown.stdout).expect("json");
    assert_eq!(shown["run"]["status"], "completed", "{shown}");
    assert_eq!(shown["state"]["decision"], "ship", "{shown}");
    // The README's screenshot comes from here.
    let png = browser.screenshot();
    assert!(png.starts_with(b"\x89PNG"), "a PNG");
    if std::env::var_os("ATOMIC_UPDATE_SCREENSHOTS").is_some() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/ui-web.png");
        std::fs::write(path, &png).expect("screenshot written");
    }
}

#[test]
fn the_web_server_answers_only_its_own_host_and_takes_actions_only_with_its_token() {
    let project = CliProject::new();
    project.write("live.kdl", &live_flow().replace(STEP_LATENCY, "1ms"));
    let ran = project
        .atomic()
        .args(["run", "live.kdl", "--quiet"])
        .write_stdin("")
        .output()
        .expect("atomic run");
    assert_eq!(ran.status.code(), Some(4), "the run pauses at its wait");
    let server = WebView::start(&project, &[]);
    let client = http();
    let page = client.get(&server.url).send().expect("the runs page");
    assert_eq!(page.status(), 200);
    let token = page
        .text()
        .expect("html")
        .split("name=\"atomic-token\" content=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("the page carries the token")
        .to_owned();
    let runs: Value = client
        .get(format!("{}api/runs", server.url))
        .send()
        .and_then(reqwest::blocking::Response::json)
        .expect("runs");
    let id = runs[0]["id"].as_str().expect("a run").to_owned();
    let shown: Value = client
        .get(format!("{}api/runs/{id}", server.url))
        .send()
        .and_then(reqwest::blocking::Response::json)
        .expect("the run");
    let done: Vec<&Value> = shown["nodes"]
        .as_array()
        .expect("nodes")
        .iter()
        .filter(|node| node["state"] == "done" && node["node"].is_string())
        .collect();
    assert!(!done.is_empty(), "{shown}");
    for node in done {
        assert!(
            node["elapsed_ms"].is_u64(),
            "a done step has its time: {node}"
        );
    }
    // A page of another site that rebinds its name to 127.0.0.1 is refused.
    let rebound = client
        .get(format!("{}api/runs", server.url))
        .header("host", "attacker.example")
        .send()
        .expect("answered");
    assert_eq!(rebound.status(), 421);
    // Actions need the token in their header.
    let cancel = format!("{}api/runs/{id}/cancel", server.url);
    assert_eq!(client.post(&cancel).send().expect("answered").status(), 403);
    assert_eq!(
        client
            .post(&cancel)
            .header("x-atomic-token", "wrong")
            .send()
            .expect("answered")
            .status(),
        403
    );
    // A wrong answer is refused with the command's own words, and the run stays paused.
    let refused = client
        .post(format!("{}api/runs/{id}/answer", server.url))
        .header("x-atomic-token", &token)
        .json(&serde_json::json!({"answer": "maybe"}))
        .send()
        .expect("answered");
    assert_eq!(refused.status(), 422);
    let said = refused.text().expect("text");
    assert!(said.contains("maybe"), "{said}");
    let cancelled = client
        .post(&cancel)
        .header("x-atomic-token", &token)
        .send()
        .expect("answered");
    assert_eq!(cancelled.status(), 202);
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let run: Value = client
            .get(format!("{}api/runs/{id}", server.url))
            .send()
            .and_then(reqwest::blocking::Response::json)
            .expect("the run");
        if run["phase"] == "cancelled" {
            break;
        }
        assert!(Instant::now() < deadline, "not cancelled: {run}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// What a model says while its step runs reaches the page before the step commits (the
/// run's live feed), and a key the model repeats — split across two streamed pieces — never
/// reaches the page or the feed on disk.
#[test]
fn a_running_agents_text_reaches_the_page_before_its_step_commits() {
    use crate::support::fake_anthropic::{FakeAnthropic, Turn};
    const KEY: &str = "sk-live-0123456789abcdef";
    const KEY_HEAD: &str = "sk-live-01234";
    let fake = FakeAnthropic::start();
    fake.set_split(1, Duration::from_millis(400));
    fake.push(Turn::Metered {
        input: 10,
        steps: vec![
            (format!("Reading the key {KEY_HEAD}"), 3),
            ("56789abcdef and going on. ".to_owned(), 6),
            ("Still working.".to_owned(), 8),
        ],
        finish: true,
    });
    let project = CliProject::new();
    project.write(
        "stream.kdl",
        &format!(
            r#"workflow "stream" {{
    state {{
        field "said" type="string" default=""
    }}
    provider "claude" adapter="anthropic" model="claude-sonnet-4-5" api-key-env="MY_ANTHROPIC" base-url="{}"
    agent "talk" provider="claude" {{
        prompt "Talk."
        output "said"
    }}
}}
"#,
            fake.url()
        ),
    );
    let mut run = start_run(&project, "stream.kdl", &[("MY_ANTHROPIC", KEY)]);
    let deadline = Instant::now() + Duration::from_secs(30);
    let server = WebView::start(&project, &[]);
    let client = http();
    let live_dir = project.path().join(".atomic/live");
    let mut seen_live = None;
    let mut feed_seen = false;
    loop {
        for entry in std::fs::read_dir(&live_dir).into_iter().flatten().flatten() {
            let feed = std::fs::read_to_string(entry.path()).unwrap_or_default();
            feed_seen |= feed.contains("Reading the key");
            assert!(
                !feed.contains(KEY_HEAD),
                "the key reached the feed:\n{feed}"
            );
        }
        let runs: Value = client
            .get(format!("{}api/runs", server.url))
            .send()
            .and_then(reqwest::blocking::Response::json)
            .expect("runs");
        if let Some(id) = runs[0]["id"].as_str() {
            let step = client
                .get(format!("{}api/runs/{id}/steps/talk", server.url))
                .send()
                .and_then(reqwest::blocking::Response::text)
                .expect("the step");
            assert!(!step.contains(KEY_HEAD), "the key reached the page: {step}");
            let step: Value = serde_json::from_str(&step).expect("json");
            let said = step["output"][0]["text"].as_str().unwrap_or_default();
            if step["state"] == "running" && said.contains("Reading the key") {
                seen_live.get_or_insert_with(|| said.to_owned());
            }
        }
        if run.try_wait().expect("wait").is_some() {
            break;
        }
        assert!(Instant::now() < deadline, "the run did not end");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(run.wait().expect("wait").code(), Some(0));
    let said = seen_live.expect("the page showed the agent's text while its step ran");
    assert!(said.starts_with("Reading the key "), "{said}");
    assert!(feed_seen, "the feed on disk had the text");
    assert!(
        std::fs::read_dir(&live_dir).map_or(true, |mut dir| dir.next().is_none()),
        "the feed is removed when the run ends"
    );
    let id = project.last_run();
    let shown = project.show(&id);
    assert_eq!(shown["run"]["status"], "completed", "{shown}");
    assert!(!shown.to_string().contains(KEY_HEAD), "{shown}");
}

/// A run whose tool step writes two files, one holding markup.
const WRITE: &str = r#"workflow "write" {
    tool "w" { run "sh" "-c" "echo hello > out.txt; echo '<script>alert(1)</script>' > page.html"; }
}
"#;

/// A project with a finished `write` run; its id.
fn project_with_written_files() -> (CliProject, String) {
    let project = CliProject::new();
    project.write("write.kdl", WRITE);
    let ran = project
        .atomic()
        .args(["run", "write.kdl", "--quiet"])
        .output()
        .expect("atomic run");
    assert_eq!(
        ran.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&ran.stderr)
    );
    let id = project.last_run();
    (project, id)
}

#[test]
fn a_steps_diff_is_served_as_plain_text_and_unknown_runs_and_steps_are_404() {
    let (project, id) = project_with_written_files();
    let server = WebView::start(&project, &[]);
    let client = http();
    // The step lists its files, the run's summary how many.
    let step = server.json(&client, &format!("api/runs/{id}/steps/w"));
    let changed = step["files"]["changed"].as_array().expect("files").clone();
    let paths: Vec<(&str, &str)> = changed
        .iter()
        .map(|change| {
            (
                change["path"].as_str().expect("a path"),
                change["status"].as_str().expect("a status"),
            )
        })
        .collect();
    assert_eq!(
        paths,
        [("out.txt", "added"), ("page.html", "added")],
        "{step}"
    );
    assert_eq!(changed[0]["added"], 1, "{step}");
    let run = server.json(&client, &format!("api/runs/{id}"));
    let w = run["nodes"]
        .as_array()
        .expect("nodes")
        .iter()
        .find(|node| node["key"] == "w")
        .expect("the step");
    assert_eq!(w["files_changed"], 2, "{w}");
    // The patch: plain text a browser never reads as a page.
    let response = server.get(&client, &format!("api/runs/{id}/files/w"));
    assert_eq!(response.status(), 200);
    let headers = response.headers().clone();
    assert_eq!(headers["content-type"], "text/plain; charset=utf-8");
    assert_eq!(headers["x-content-type-options"], "nosniff");
    let patch = response.text().expect("text");
    assert!(patch.contains("+++ b/out.txt\n"), "{patch}");
    assert!(patch.contains("\n+hello\n"), "{patch}");
    assert!(
        patch.contains("\n+<script>alert(1)</script>\n"),
        "the file's text as it is: {patch}"
    );
    // A run id prefix works as for the other routes.
    let prefix = &id[..id.len() - 2];
    assert_eq!(
        server
            .get(&client, &format!("api/runs/{prefix}/files/w"))
            .status(),
        200
    );
    // Unknown runs and steps.
    for path in [
        "api/runs/nope/files/w".to_owned(),
        format!("api/runs/{id}/files/nope"),
    ] {
        let response = server.get(&client, &path);
        assert_eq!(response.status(), 404, "{path}");
    }
    // Another site's name is refused here too.
    let rebound = client
        .get(format!("{}api/runs/{id}/files/w", server.url))
        .header("host", "attacker.example")
        .send()
        .expect("answered");
    assert_eq!(rebound.status(), 421);
}

#[test]
fn the_node_panel_lists_a_steps_files_and_shows_its_diff_escaped() {
    let Some(browser) = Browser::start() else {
        return;
    };
    let (project, id) = project_with_written_files();
    let server = WebView::start(&project, &[]);
    browser.open(&format!("{}runs/{id}", server.url));
    browser.wait_for(
        "the graph",
        Duration::from_secs(20),
        "return document.querySelector(\"#graph .step[data-key='w']\") !== null;",
    );
    browser.click("#graph .step[data-key='w']");
    browser.wait_for(
        "the diff",
        Duration::from_secs(20),
        "return [...document.querySelectorAll('#diff .add')].some(l => l.textContent === '+hello');",
    );
    let files = browser.script(
        "return [...document.querySelectorAll('#changed li')].map(li => li.textContent);",
        &[],
    );
    assert_eq!(
        files,
        serde_json::json!(["Aout.txt+1 −0", "Apage.html+1 −0"]),
        "{files}"
    );
    let mark = browser.script(
        "return document.querySelector('#changed .mark').className;",
        &[],
    );
    assert_eq!(mark, "mark added");
    // The file's markup is text on the page, not an element.
    let shown = browser.script(
        "return {
            scripts: document.querySelectorAll('#diff script, #changed script').length,
            added: [...document.querySelectorAll('#diff .add')].map(l => l.textContent),
            hunks: document.querySelectorAll('#diff .hunk').length,
            files: document.querySelectorAll('#diff .file').length,
        };",
        &[],
    );
    assert_eq!(shown["scripts"], 0, "{shown}");
    assert!(
        shown["added"]
            .as_array()
            .expect("lines")
            .iter()
            .any(|line| line == "+<script>alert(1)</script>"),
        "{shown}"
    );
    assert_eq!(shown["hunks"], 2, "{shown}");
    assert!(shown["files"].as_u64().expect("a count") >= 4, "{shown}");
}
