//! Request retries of the HTTP adapters against the fake servers: a failed model request
//! is sent again with the conversation so far, so tools that ran are not run again; the
//! defaults, caps and server hints of the official SDKs. Each test counts requests, tool
//! runs and elapsed time.

use std::path::Path;
use std::time::{Duration, Instant};

use atomic::ir::ErrorClass;
use atomic::providers::{AgentRequest, ProviderError, RetryPolicy, ToolGrant};
use serde_json::{Value, json};

use crate::providers_http::{Recorder, anthropic, openai, request, run, without_retries};
use crate::support::fake_anthropic::{self, FakeAnthropic};
use crate::support::fake_openai::{self, FakeOpenAi};

/// A tool that appends a line to `runs.log` each time it runs: its side effect, counted.
fn counting_tool() -> ToolGrant {
    ToolGrant {
        timeout: None,
        name: "bump".to_owned(),
        description: Some("Records that it ran".to_owned()),
        input_schema: Some(json!({"type": "object", "properties": {}})),
        command: vec![
            "sh".to_owned(),
            "-c".to_owned(),
            "echo ran >> runs.log && echo bumped".to_owned(),
        ],
    }
}

fn tool_runs(dir: &Path) -> usize {
    std::fs::read_to_string(dir.join("runs.log"))
        .map(|log| log.lines().count())
        .unwrap_or(0)
}

fn with_tool(prompt: &str, dir: &Path) -> AgentRequest {
    let mut request = request(prompt, dir);
    request.grants.tools = vec![counting_tool()];
    request
}

/// The tool results the last request sent back, by role and type.
fn last_has_tool_result(bodies: &[Value], needle: &str) -> bool {
    bodies
        .last()
        .is_some_and(|body| body["messages"].to_string().contains(needle))
}

#[tokio::test]
async fn anthropic_retries_the_failed_turn_not_the_tools() {
    let fake = FakeAnthropic::start();
    fake.push(fake_anthropic::Turn::tool_use("bump", json!({})));
    fake.push(fake_anthropic::Turn::server_error());
    fake.push(fake_anthropic::Turn::text("Done."));
    let provider = anthropic(&fake, json!({}));
    let dir = tempfile::tempdir().expect("tempdir");
    let reply = run(
        &provider,
        &with_tool("Bump it", dir.path()),
        &Recorder::default(),
    )
    .await
    .expect("the retry succeeds");
    assert_eq!(reply.text, "Done.");
    let bodies = fake.message_bodies();
    assert_eq!(
        bodies.len(),
        3,
        "tool call, 500, retried turn: three requests"
    );
    assert_eq!(tool_runs(dir.path()), 1, "the tool ran once");
    assert_eq!(
        bodies[1], bodies[2],
        "the retry re-sends the same conversation"
    );
    assert!(last_has_tool_result(&bodies, "tool_result"), "{bodies:#?}");
}

#[tokio::test]
async fn openai_retries_the_failed_turn_not_the_tools() {
    let fake = FakeOpenAi::start();
    fake.push(fake_openai::Turn::tool_call("bump", json!({})));
    fake.push(fake_openai::Turn::unavailable());
    fake.push(fake_openai::Turn::text("Done."));
    let provider = openai(&fake, json!({}));
    let dir = tempfile::tempdir().expect("tempdir");
    let reply = run(
        &provider,
        &with_tool("Bump it", dir.path()),
        &Recorder::default(),
    )
    .await
    .expect("the retry succeeds");
    assert_eq!(reply.text, "Done.");
    let requests = fake.requests();
    assert_eq!(
        requests.len(),
        3,
        "tool call, 503, retried turn: three requests"
    );
    assert_eq!(tool_runs(dir.path()), 1, "the tool ran once");
    assert_eq!(requests[1].body, requests[2].body);
    assert!(
        String::from_utf8_lossy(&requests[2].body).contains("\"role\":\"tool\""),
        "the retry carries the tool result"
    );
}

#[tokio::test]
async fn two_retries_by_default_with_backoff_then_the_error() {
    let fake = FakeAnthropic::start();
    for _ in 0..3 {
        fake.push(fake_anthropic::Turn::server_error());
    }
    let provider = anthropic(&fake, json!({}));
    let dir = tempfile::tempdir().expect("tempdir");
    let started = Instant::now();
    let error = run(&provider, &request("hi", dir.path()), &Recorder::default())
        .await
        .expect_err("gives up");
    let elapsed = started.elapsed();
    assert_eq!(fake.requests().len(), 3, "the first try and two retries");
    assert_eq!(error.class(), ErrorClass::ServerError);
    assert!(error.was_retried(), "the step must not retry it again");
    assert!(
        error.to_string().ends_with("(gave up after 3 attempts)"),
        "{error}"
    );
    // 0.5 s then 1 s, jittered by ±50%.
    assert!(
        elapsed >= Duration::from_millis(750) && elapsed < Duration::from_secs(5),
        "{elapsed:?}"
    );
}

#[tokio::test]
async fn max_retries_zero_turns_request_retries_off() {
    let fake = FakeAnthropic::start();
    fake.push(fake_anthropic::Turn::server_error());
    let provider = anthropic(&fake, without_retries(json!({})));
    let dir = tempfile::tempdir().expect("tempdir");
    let error = run(&provider, &request("hi", dir.path()), &Recorder::default())
        .await
        .expect_err("fails");
    assert_eq!(fake.requests().len(), 1);
    assert!(!error.was_retried());
}

#[tokio::test]
async fn the_nodes_retry_policy_overrides_the_default() {
    let fake = FakeOpenAi::start();
    for _ in 0..4 {
        fake.push(fake_openai::Turn::server_error());
    }
    fake.push(fake_openai::Turn::text("finally"));
    let provider = openai(&fake, json!({}));
    let dir = tempfile::tempdir().expect("tempdir");
    let mut req = request("hi", dir.path());
    req.limits.retry = Some(RetryPolicy {
        attempts: 5,
        backoff: Duration::from_millis(10),
        factor: 1.0,
        max_backoff: None,
        jitter: false,
        on: Vec::new(),
    });
    let reply = run(&provider, &req, &Recorder::default())
        .await
        .expect("the fifth attempt answers");
    assert_eq!(reply.text, "finally");
    assert_eq!(fake.requests().len(), 5);
}

#[tokio::test]
async fn x_should_retry_is_obeyed_both_ways() {
    let fake = FakeAnthropic::start();
    fake.push(fake_anthropic::Turn::server_error().with_header("x-should-retry", "false"));
    let provider = anthropic(&fake, json!({}));
    let dir = tempfile::tempdir().expect("tempdir");
    let error = run(&provider, &request("hi", dir.path()), &Recorder::default())
        .await
        .expect_err("not retried");
    assert_eq!(fake.requests().len(), 1, "{error}");
    assert!(
        error.to_string().contains("x-should-retry: false"),
        "{error}"
    );

    let fake = FakeAnthropic::start();
    fake.push(
        fake_anthropic::Turn::error(400, "invalid_request_error", "try again")
            .with_header("x-should-retry", "true"),
    );
    fake.push(fake_anthropic::Turn::text("ok"));
    let provider = anthropic(&fake, json!({}));
    let reply = run(&provider, &request("hi", dir.path()), &Recorder::default())
        .await
        .expect("retried");
    assert_eq!(reply.text, "ok");
    assert_eq!(fake.requests().len(), 2);
}

#[tokio::test]
async fn retry_after_is_honoured_but_capped() {
    let fake = FakeAnthropic::start();
    fake.push(fake_anthropic::Turn::rate_limited("1"));
    fake.push(fake_anthropic::Turn::text("after the wait"));
    let provider = anthropic(&fake, json!({}));
    let dir = tempfile::tempdir().expect("tempdir");
    let started = Instant::now();
    let reply = run(&provider, &request("hi", dir.path()), &Recorder::default())
        .await
        .expect("retried after a second");
    assert_eq!(reply.text, "after the wait");
    assert!(started.elapsed() >= Duration::from_secs(1));

    let fake = FakeAnthropic::start();
    fake.push(fake_anthropic::Turn::rate_limited("120"));
    let provider = anthropic(&fake, json!({}));
    let started = Instant::now();
    let error = run(&provider, &request("hi", dir.path()), &Recorder::default())
        .await
        .expect_err("asks for too long");
    assert!(started.elapsed() < Duration::from_secs(2), "failed at once");
    assert_eq!(fake.requests().len(), 1);
    assert_eq!(error.class(), ErrorClass::RateLimit);
    assert!(
        matches!(error, ProviderError::WaitTooLong { .. }),
        "{error:?}"
    );
    assert_eq!(
        error.to_string(),
        "`anthropic` asked to wait 120 s before retrying (rate-limit), longer than the 60 s cap (provider option `max-retry-after`)"
    );

    // The cap is the provider's to set, and the node's timeout bounds it too.
    let fake = FakeOpenAi::start();
    fake.push(fake_openai::Turn::rate_limited("5"));
    let provider = openai(&fake, json!({"max-retry-after": "2s"}));
    let error = run(&provider, &request("hi", dir.path()), &Recorder::default())
        .await
        .expect_err("over the provider's cap");
    assert!(error.to_string().contains("the 2 s cap"), "{error}");
    let fake = FakeOpenAi::start();
    fake.push(fake_openai::Turn::rate_limited("5"));
    let provider = openai(&fake, json!({}));
    let mut req = request("hi", dir.path());
    req.limits.timeout = Some(Duration::from_secs(3));
    let error = run(&provider, &req, &Recorder::default())
        .await
        .expect_err("past the node's timeout");
    assert!(
        error.to_string().contains("left before the node's timeout"),
        "{error}"
    );
}

#[tokio::test]
async fn auth_failures_are_their_own_class_and_name_the_variable() {
    for status in [401, 403] {
        let fake = FakeAnthropic::start();
        fake.push(fake_anthropic::Turn::error(
            status,
            "authentication_error",
            "invalid x-api-key",
        ));
        let provider = anthropic(&fake, json!({}));
        let dir = tempfile::tempdir().expect("tempdir");
        let error = run(&provider, &request("hi", dir.path()), &Recorder::default())
            .await
            .expect_err("refused");
        assert_eq!(fake.requests().len(), 1, "never retried");
        assert_eq!(error.class(), ErrorClass::Auth);
        let text = error.to_string();
        assert!(text.contains("`TEST_API_KEY`"), "{text}");
        assert!(!text.contains(crate::providers_http::KEY), "{text}");
    }
    let fake = FakeOpenAi::start();
    fake.push(fake_openai::Turn::error(
        401,
        "invalid_api_key",
        "Incorrect API key",
    ));
    let provider = openai(&fake, json!({}));
    let dir = tempfile::tempdir().expect("tempdir");
    let error = run(&provider, &request("hi", dir.path()), &Recorder::default())
        .await
        .expect_err("refused");
    assert_eq!(error.class(), ErrorClass::Auth);
    assert!(error.to_string().contains("`TEST_API_KEY`"), "{error}");
}
