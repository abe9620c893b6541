//! Budgets stop spending while a call runs, through `atomic run` against the fake Messages
//! API on 127.0.0.1: a streamed reply whose usage passes the node's `budget-usd` midway is
//! cut (the server sees the client close the stream) and the step fails with the `budget`
//! class; a project's price for the model changes the outcome; the run-wide
//! `limits max-budget-usd` stops a call in flight the same way; an `openai` turn whose
//! usage passes the budget runs none of the tools it asked for.
//!
//! Prices (shipped table, USD per million tokens): `claude-sonnet-4-5` 3 in / 15 out,
//! `claude-haiku-4-5` 1 in / 5 out.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::cli_project::{CliProject, stderr};
use crate::support::fake_anthropic::{FakeAnthropic, Turn};
use crate::support::fake_openai::{FakeOpenAi, Turn as OpenAiTurn, Usage as OpenAiUsage};
use crate::support::within;

/// 1,000 input tokens, then output growing to 10,000 and 20,000 tokens, and silence: the
/// reply never ends, so only a cut can finish the call before its timeout.
fn endless_reply() -> Turn {
    Turn::Metered {
        input: 1_000,
        steps: vec![
            ("The first part. ".to_owned(), 10_000),
            ("The second part. ".to_owned(), 20_000),
        ],
        finish: false,
    }
}

/// 1,000 input tokens and 20,000 output tokens, complete.
fn medium_reply() -> Turn {
    Turn::Metered {
        input: 1_000,
        steps: vec![("One. ".to_owned(), 10_000), ("Two.".to_owned(), 20_000)],
        finish: true,
    }
}

fn metered_fake() -> FakeAnthropic {
    let fake = FakeAnthropic::start();
    // One write per event and a pause between events: the usage arrives as it would.
    fake.set_split(1, Duration::from_millis(150));
    fake
}

fn project(flow: &str, config: Option<&str>) -> CliProject {
    let project = CliProject::new();
    project.write("flow.kdl", flow);
    if let Some(config) = config {
        project.write(".atomic/config.kdl", config);
    }
    project
}

async fn run(project: &CliProject) -> (std::process::Output, Duration) {
    let mut command = project.atomic();
    command
        .args(["run", "flow.kdl"])
        .env("TEST_ANTHROPIC_KEY", "test-key");
    let started = Instant::now();
    let output = within(
        Duration::from_secs(90),
        tokio::task::spawn_blocking(move || command.output().expect("atomic run")),
    )
    .await
    .expect("the run finished");
    (output, started.elapsed())
}

/// The events of `atomic runs show --json` of this type.
fn events<'a>(shown: &'a Value, kind: &'a str) -> impl Iterator<Item = &'a Value> + 'a {
    shown["events"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|entry| &entry["event"])
        .filter(move |event| event["type"] == kind)
}

/// How `node` failed (its `node-failed` event).
fn failure<'a>(shown: &'a Value, node: &str) -> &'a Value {
    events(shown, "node-failed")
        .find(|event| event["node"] == node)
        .unwrap_or_else(|| panic!("`{node}` did not fail: {shown:#}"))
}

fn completed(shown: &Value, node: &str) -> bool {
    events(shown, "step-finished").any(|event| event["node"] == node)
}

fn flow(base_url: &str, model: &str, body: &str) -> String {
    format!(
        r#"workflow "spend" {{
    provider "claude" adapter="anthropic" model="{model}" api-key-env="TEST_ANTHROPIC_KEY" base-url="{base_url}"
{body}
}}
"#
    )
}

const ONE_AGENT: &str = r#"    agent "write" provider="claude" budget-usd=0.25 timeout="60s" {
        prompt "Write at length."
    }"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streamed_reply_passing_the_budget_is_cut_midway() {
    let fake = metered_fake();
    fake.push(endless_reply());
    let project = project(&flow(&fake.url(), "claude-sonnet-4-5", ONE_AGENT), None);
    let (output, took) = run(&project).await;
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{err}");
    assert!(
        took < Duration::from_secs(30),
        "cut promptly, took {took:?}"
    );

    let shown = project.show(&project.last_run());
    let error = failure(&shown, "write");
    assert_eq!(error["class"], "budget", "{shown:#}");
    let message = error["message"].as_str().unwrap_or_default();
    // $0.003 of input and 20,000 output tokens ($0.30): over at the second report.
    assert!(message.contains("spent $0.3030"), "{message}");
    assert!(
        message.contains("over its `budget-usd` of $0.2500"),
        "{message}"
    );
    assert!(
        message.contains("shipped price of `claude-sonnet-4-5`"),
        "{message}"
    );
    // The client closed the stream the server was still holding open.
    fake.server()
        .wait_for_hang_ups(1, Duration::from_secs(10))
        .await;
    assert_eq!(
        fake.message_bodies().len(),
        1,
        "a budget failure is not retried"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_price_set_in_the_project_config_changes_the_outcome() {
    // At the shipped price of claude-haiku-4-5 the reply costs $0.101: within budget.
    let fake = metered_fake();
    fake.push(medium_reply());
    let cheap = project(&flow(&fake.url(), "claude-haiku-4-5", ONE_AGENT), None);
    let (output, _) = run(&cheap).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let shown = cheap.show(&cheap.last_run());
    let cost = events(&shown, "run-finished")
        .next()
        .and_then(|event| event["cost_usd"].as_f64());
    assert!(
        cost.is_some_and(|cost| (cost - 0.101).abs() < 1e-9),
        "priced from the shipped table: {shown:#}"
    );

    // The project prices it like claude-sonnet-4-5: the same reply now costs $0.303.
    let fake = metered_fake();
    fake.push(medium_reply());
    let dear = project(
        &flow(&fake.url(), "claude-haiku-4-5", ONE_AGENT),
        Some("prices {\n    model \"claude-haiku-4-5\" input=3 output=15.0\n}\n"),
    );
    let (output, _) = run(&dear).await;
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let shown = dear.show(&dear.last_run());
    let error = failure(&shown, "write");
    assert_eq!(error["class"], "budget", "{shown:#}");
    let message = error["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("configured price of `claude-haiku-4-5`"),
        "{message}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_run_budget_stops_a_call_in_flight() {
    let fake = metered_fake();
    // $0.303 for the first call, within the run's $0.50; the second would bring the run
    // to $0.606 at its second report.
    fake.push(medium_reply());
    fake.push(endless_reply());
    let body = r#"    limits max-budget-usd=0.5
    agent "first" provider="claude" timeout="60s" { prompt "Begin."; }
    agent "second" provider="claude" timeout="60s" { prompt "Go on, at length."; }"#;
    let project = project(&flow(&fake.url(), "claude-sonnet-4-5", body), None);
    let (output, took) = run(&project).await;
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{err}");
    assert!(
        took < Duration::from_secs(30),
        "cut promptly, took {took:?}"
    );

    let shown = project.show(&project.last_run());
    assert!(completed(&shown, "first"), "{shown:#}");
    let error = failure(&shown, "second");
    assert_eq!(error["class"], "budget", "{shown:#}");
    let message = error["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("over the $0.1970 left of the run's `limits max-budget-usd`"),
        "{message}"
    );
    fake.server()
        .wait_for_hang_ups(1, Duration::from_secs(10))
        .await;
}

#[test]
fn a_bad_price_in_the_config_is_reported_with_its_place() {
    let project = project(
        "workflow \"w\" {\n    provider \"p\" adapter=\"in-process\"\n    agent \"a\" provider=\"p\" { prompt \"hi\"; }\n}\n",
        Some(
            "prices {\n    model \"gpt-4o\" input=\"cheap\" output=10\n    model output=1\n    modle \"x\"\n}\n",
        ),
    );
    let output = project
        .atomic()
        .args(["check", "flow.kdl"])
        .output()
        .expect("check");
    let shown = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        stderr(&output)
    );
    assert_eq!(output.status.code(), Some(1), "{shown}");
    assert!(
        shown.contains("`input` must be a price in USD per million tokens"),
        "{shown}"
    );
    assert!(shown.contains("config.kdl:2:26"), "{shown}");
    // A bad value is not reported again as missing.
    assert!(!shown.contains("this price lacks `input=`"), "{shown}");
    assert!(
        shown.contains("this price lacks a model name and `input=`"),
        "{shown}"
    );
    assert!(shown.contains("config.kdl:3:5"), "{shown}");
    assert!(
        shown.contains("unknown entry `modle` in `prices`"),
        "{shown}"
    );
    assert!(shown.contains("3 errors"), "{shown}");
}

/// An `openai` tool loop: the first turn asks for a tool, and its usage chunk (at
/// `gpt-4o` prices: 50,000 prompt tokens, $0.125) already passes the budget, so the tool
/// never runs and no second request is sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_openai_turn_over_budget_runs_no_tool_and_sends_no_more() {
    let fake = FakeOpenAi::start();
    fake.push(
        OpenAiTurn::tool_call("edit", json!({"text": "spent"})).with_usage(OpenAiUsage {
            prompt: 50_000,
            completion: 1_000,
            cached: 0,
        }),
    )
    .push(OpenAiTurn::text("Done."));
    let project = project(
        &format!(
            r#"workflow "spend" {{
    provider "gpt" adapter="openai" model="gpt-4o-2024-08-06" api-key-env="TEST_OPENAI_KEY" base-url="{}"
    agent "edit" provider="gpt" budget-usd=0.1 {{
        prompt "Rewrite notes.txt."
        tools "edit"
    }}
}}
"#,
            fake.url()
        ),
        None,
    );
    project.write(
        ".atomic/tools/edit.kdl",
        "tool \"edit\" description=\"Replaces notes.txt\" {\n    argument \"text\"\n    command \"sh\" \"-c\" \"echo edited > notes.txt\"\n}\n",
    );
    let mut command = project.atomic();
    command
        .args(["run", "flow.kdl"])
        .env("TEST_OPENAI_KEY", "test-key");
    let output = within(
        Duration::from_secs(90),
        tokio::task::spawn_blocking(move || command.output().expect("atomic run")),
    )
    .await
    .expect("the run finished");
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let shown = project.show(&project.last_run());
    let error = failure(&shown, "edit");
    assert_eq!(error["class"], "budget", "{shown:#}");
    let message = error["message"].as_str().unwrap_or_default();
    assert!(message.contains("shipped price of `gpt-4o`"), "{message}");
    assert!(
        message.contains("over its `budget-usd` of $0.1000"),
        "{message}"
    );
    assert_eq!(project.read("notes.txt"), "", "the tool never ran");
    assert_eq!(
        fake.completion_bodies().len(),
        1,
        "no turn after the budget passed"
    );
}
