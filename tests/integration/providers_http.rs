//! The `anthropic` and `openai` adapters against the fake servers in `support`: streaming,
//! the tool-use loop, usage and cost, every failure class, cancellation and secret
//! redaction. Loopback only; every await is bounded.

use std::future::Future;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use atomic::ir::{ErrorClass, ProviderDecl};
use atomic::providers::anthropic::AnthropicProvider;
use atomic::providers::openai::OpenAiProvider;
use atomic::providers::{
    AgentEvent, AgentReply, AgentRequest, Provider, ProviderError, ProviderFuture, ToolGrant, Usage,
};
use atomic::source::{SourceId, Span, Spanned};
use serde_json::{Value, json};

use crate::support::fake_anthropic::{self, FakeAnthropic};
use crate::support::fake_openai::{self, FakeOpenAi};
use crate::support::within;
use atomic::providers::{CallId, Prompt};

pub(crate) const KEY: &str = "sk-test-S3CRET-key-7f3a";
const LIMIT: Duration = Duration::from_secs(20);

fn spanned(text: &str) -> Spanned<String> {
    Spanned::new(text.to_owned(), Span::new(SourceId(0), 0, 0))
}

fn decl(adapter: &str, base_url: &str, key_env: Option<&str>, options: Value) -> ProviderDecl {
    ProviderDecl {
        name: spanned("model"),
        adapter: spanned(adapter),
        model: Some(spanned("fake-model")),
        base_url: Some(spanned(base_url)),
        api_key_env: key_env.map(spanned),
        cassette: None,
        command: Vec::new(),
        options: options.as_object().cloned().unwrap_or_default(),
        span: Span::new(SourceId(0), 0, 0),
    }
}

fn env(name: &str) -> Option<String> {
    (name == "TEST_API_KEY").then(|| KEY.to_owned())
}

pub(crate) fn anthropic(fake: &FakeAnthropic, options: Value) -> AnthropicProvider {
    AnthropicProvider::from_decl(
        &decl("anthropic", &fake.url(), Some("TEST_API_KEY"), options),
        &env,
    )
    .expect("a valid anthropic provider")
}

pub(crate) fn openai(fake: &FakeOpenAi, options: Value) -> OpenAiProvider {
    let base = format!("{}/v1", fake.url());
    OpenAiProvider::from_decl(&decl("openai", &base, Some("TEST_API_KEY"), options), &env)
        .expect("a valid openai provider")
}

pub(crate) fn request(prompt: &str, dir: &Path) -> AgentRequest {
    AgentRequest {
        call: CallId {
            node_id: "agent".to_owned(),
            ..CallId::default()
        },
        prompt: Prompt {
            text: prompt.to_owned(),
            ..Prompt::default()
        },
        workspace: atomic::workspace::Workspace::new(dir.to_path_buf()),
        ..AgentRequest::default()
    }
}

/// A tool that writes its JSON input to `notes.txt` in the working directory.
fn write_notes_tool() -> ToolGrant {
    ToolGrant {
        timeout: None,
        name: "write_notes".to_owned(),
        description: Some("Replaces notes.txt with the input".to_owned()),
        input_schema: Some(json!({"type": "object", "properties": {"text": {"type": "string"}}})),
        command: vec![
            "sh".to_owned(),
            "-c".to_owned(),
            "cat > notes.txt && echo wrote notes.txt".to_owned(),
        ],
    }
}

/// Records every event.
#[derive(Clone, Default)]
pub(crate) struct Recorder(Arc<Mutex<Vec<AgentEvent>>>);

impl Recorder {
    fn events(&self) -> Vec<AgentEvent> {
        self.0.lock().expect("events lock").clone()
    }

    fn text(&self) -> String {
        self.events()
            .iter()
            .filter_map(|e| match e {
                AgentEvent::TextDelta { text } => Some(text.as_str()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .concat()
    }

    fn kinds(&self) -> Vec<String> {
        self.events()
            .iter()
            .map(|e| {
                serde_json::to_value(e).expect("events serialise")["type"]
                    .as_str()
                    .expect("tagged")
                    .to_owned()
            })
            .collect()
    }
}

pub(crate) async fn run(
    provider: &dyn Provider,
    request: &AgentRequest,
    recorder: &Recorder,
) -> Result<AgentReply, ProviderError> {
    let sink = recorder.0.clone();
    let events = move |event: AgentEvent| sink.lock().expect("events lock").push(event);
    within(LIMIT, provider.run(request, &events)).await
}

/// `options` with request retries turned off.
pub(crate) fn without_retries(mut options: Value) -> Value {
    options["max-retries"] = json!(0);
    options
}

fn dedup_kinds(kinds: Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for kind in kinds {
        if out.last() != Some(&kind) {
            out.push(kind);
        }
    }
    out
}

// ---------------------------------------------------------------- anthropic

#[tokio::test]
async fn anthropic_streams_text_and_thinking() {
    let fake = FakeAnthropic::start();
    fake.require_key(KEY);
    let text = "Héllo, wörld — streamed in pieces ✓";
    fake.push(
        fake_anthropic::Turn::text(text)
            .with_thinking("Let me think…")
            .with_model("claude-fake-1"),
    );
    let provider = anthropic(&fake, json!({}));
    let dir = tempfile::tempdir().expect("tempdir");
    let mut req = request("Say hello", dir.path());
    req.prompt.system = Some("Be brief.".to_owned());
    let recorder = Recorder::default();
    let reply = run(&provider, &req, &recorder).await.expect("a reply");

    assert_eq!(reply.text, text);
    assert_eq!(reply.turns, 1);
    assert_eq!(recorder.text(), text);
    assert!(
        recorder.text().len() > 1
            && recorder
                .events()
                .iter()
                .filter(|e| matches!(e, AgentEvent::TextDelta { .. }))
                .count()
                > 1
    );
    // Usage as it streams: `message_start`'s, then the final `message_delta`'s (the
    // turn's own report repeats it, so it is not sent again).
    assert_eq!(
        dedup_kinds(recorder.kinds()),
        [
            "session-start",
            "usage",
            "thinking-delta",
            "text-delta",
            "usage",
            "message-complete",
            "session-end"
        ]
    );
    assert_eq!(
        recorder.events()[0],
        AgentEvent::SessionStart {
            session_id: None,
            model: Some("claude-fake-1".to_owned())
        }
    );

    let requests = fake.requests();
    assert_eq!(requests.len(), 1);
    let sent = &requests[0];
    assert_eq!(sent.path(), "/v1/messages");
    assert_eq!(sent.header("x-api-key"), Some(KEY));
    assert_eq!(sent.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(sent.header("content-type"), Some("application/json"));
    let body = sent.json();
    assert_eq!(body["model"], "fake-model");
    assert_eq!(body["stream"], true);
    assert_eq!(body["system"], "Be brief.");
    assert_eq!(
        body["messages"],
        json!([{"role": "user", "content": "Say hello"}])
    );
    assert!(body["max_tokens"].as_u64().is_some());
}

#[tokio::test]
async fn anthropic_tool_use_edits_a_file_then_answers() {
    let fake = FakeAnthropic::start();
    fake.push(fake_anthropic::Turn::text_then_tool(
        "Updating the notes.",
        "write_notes",
        json!({"text": "new notes"}),
    ));
    fake.push(fake_anthropic::Turn::text("The notes are updated."));
    let provider = anthropic(&fake, json!({}));
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("notes.txt"), "old notes").expect("write notes");
    let mut req = request("Update the notes", dir.path());
    req.grants.tools = vec![write_notes_tool()];
    let recorder = Recorder::default();
    let reply = run(&provider, &req, &recorder).await.expect("a reply");

    assert_eq!(reply.text, "The notes are updated.");
    assert_eq!(reply.turns, 2);
    let notes = std::fs::read_to_string(dir.path().join("notes.txt")).expect("notes");
    assert_eq!(
        serde_json::from_str::<Value>(&notes).expect("json notes"),
        json!({"text": "new notes"})
    );

    let tool_events: Vec<AgentEvent> = recorder
        .events()
        .into_iter()
        .filter(|e| {
            matches!(
                e,
                AgentEvent::ToolStart { .. } | AgentEvent::ToolComplete { .. }
            )
        })
        .collect();
    assert_eq!(
        tool_events,
        [
            AgentEvent::ToolStart {
                id: "toolu_fake_1_1".to_owned(),
                name: "write_notes".to_owned(),
                input: json!({"text": "new notes"})
            },
            AgentEvent::ToolComplete {
                id: "toolu_fake_1_1".to_owned(),
                name: "write_notes".to_owned(),
                summary: "wrote notes.txt".to_owned(),
                is_error: false
            },
        ]
    );

    let bodies = fake.message_bodies();
    assert_eq!(bodies.len(), 2);
    assert_eq!(bodies[0]["tools"][0]["name"], "write_notes");
    assert_eq!(
        bodies[0]["tools"][0]["input_schema"]["properties"]["text"]["type"],
        "string"
    );
    assert_eq!(
        bodies[1]["messages"],
        json!([
            {"role": "user", "content": "Update the notes"},
            {"role": "assistant", "content": [
                {"type": "text", "text": "Updating the notes."},
                {"type": "tool_use", "id": "toolu_fake_1_1", "name": "write_notes", "input": {"text": "new notes"}},
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_fake_1_1", "content": "wrote notes.txt\n"},
            ]},
        ])
    );
}

#[tokio::test]
async fn anthropic_failing_tool_is_reported_to_the_model() {
    let fake = FakeAnthropic::start();
    fake.push(fake_anthropic::Turn::tool_use("fail", json!({})));
    fake.push(fake_anthropic::Turn::text("The tool failed."));
    let provider = anthropic(&fake, json!({}));
    let dir = tempfile::tempdir().expect("tempdir");
    let mut req = request("Try it", dir.path());
    req.grants.tools = vec![ToolGrant {
        name: "fail".to_owned(),
        timeout: None,
        description: None,
        input_schema: None,
        command: vec![
            "sh".to_owned(),
            "-c".to_owned(),
            "echo broken >&2; exit 2".to_owned(),
        ],
    }];
    let recorder = Recorder::default();
    run(&provider, &req, &recorder).await.expect("a reply");
    let result = &fake.message_bodies()[1]["messages"][2]["content"][0];
    assert_eq!(result["is_error"], true);
    assert_eq!(
        result["content"],
        "`fail` exited with code 2\nstderr:\nbroken"
    );
    assert!(
        recorder
            .events()
            .iter()
            .any(|e| matches!(e, AgentEvent::ToolComplete { is_error: true, .. }))
    );
}

#[tokio::test]
async fn anthropic_max_turns_bounds_the_loop() {
    let fake = FakeAnthropic::start();
    for _ in 0..3 {
        fake.push(fake_anthropic::Turn::tool_use(
            "write_notes",
            json!({"text": "again"}),
        ));
    }
    let provider = anthropic(&fake, json!({}));
    let dir = tempfile::tempdir().expect("tempdir");
    let mut req = request("Loop", dir.path());
    req.grants.tools = vec![write_notes_tool()];
    req.limits.max_turns = Some(2);
    let error = run(&provider, &req, &Recorder::default())
        .await
        .expect_err("turn limit");
    assert!(
        matches!(
            error,
            ProviderError::MaxTurns {
                adapter: "anthropic",
                max_turns: 2
            }
        ),
        "{error:?}"
    );
    assert_eq!(error.class(), ErrorClass::Provider);
    assert_eq!(fake.message_bodies().len(), 2);
    assert_eq!(fake.remaining(), 1);
}

#[tokio::test]
async fn anthropic_pause_turn_continues_the_same_answer() {
    let fake = FakeAnthropic::start();
    fake.push(fake_anthropic::Turn::message(
        vec![fake_anthropic::Block::Text("Part one, ".to_owned())],
        "pause_turn",
    ));
    fake.push(fake_anthropic::Turn::text("part two."));
    let provider = anthropic(&fake, json!({}));
    let dir = tempfile::tempdir().expect("tempdir");
    let reply = run(
        &provider,
        &request("Long task", dir.path()),
        &Recorder::default(),
    )
    .await
    .expect("a reply");
    assert_eq!(reply.text, "Part one, part two.");
    assert_eq!(reply.turns, 2);
    let bodies = fake.message_bodies();
    assert_eq!(
        bodies[1]["messages"],
        json!([
            {"role": "user", "content": "Long task"},
            {"role": "assistant", "content": [{"type": "text", "text": "Part one, "}]},
        ])
    );
}

#[tokio::test]
async fn anthropic_refusal_is_a_provider_error() {
    let fake = FakeAnthropic::start();
    fake.push(fake_anthropic::Turn::message(
        vec![fake_anthropic::Block::Text(
            "I can't help with that.".to_owned(),
        )],
        "refusal",
    ));
    let provider = anthropic(&fake, json!({}));
    let dir = tempfile::tempdir().expect("tempdir");
    let error = run(
        &provider,
        &request("Bad idea", dir.path()),
        &Recorder::default(),
    )
    .await
    .expect_err("a refusal");
    assert_eq!(error.class(), ErrorClass::Provider);
    assert!(error.to_string().contains("refused"), "{error}");
}

#[tokio::test]
async fn anthropic_usage_with_cache_tokens_and_cost() {
    let fake = FakeAnthropic::start();
    fake.push(
        fake_anthropic::Turn::tool_use("write_notes", json!({"text": "x"})).with_usage(
            fake_anthropic::Usage {
                input: 1000,
                output: 100,
                cache_read: 5000,
                cache_write: 2000,
            },
        ),
    );
    fake.push(
        fake_anthropic::Turn::text("done").with_usage(fake_anthropic::Usage {
            input: 200,
            output: 50,
            cache_read: 7000,
            cache_write: 0,
        }),
    );
    let prices = json!({"price-input": 3.0, "price-output": 15.0, "price-cache-read": 0.3, "price-cache-write": 3.75});
    let provider = anthropic(&fake, prices);
    let dir = tempfile::tempdir().expect("tempdir");
    let mut req = request("Go", dir.path());
    req.grants.tools = vec![write_notes_tool()];
    let recorder = Recorder::default();
    let reply = run(&provider, &req, &recorder).await.expect("a reply");
    let expected = Usage {
        input_tokens: 1200,
        output_tokens: 150,
        cache_read_tokens: 12_000,
        cache_write_tokens: 2000,
    };
    assert_eq!(reply.usage, expected);
    let cost = (1200.0 * 3.0 + 150.0 * 15.0 + 12_000.0 * 0.3 + 2000.0 * 3.75) / 1_000_000.0;
    assert!(
        (reply.cost_usd.expect("priced") - cost).abs() < 1e-12,
        "{:?}",
        reply.cost_usd
    );
    let usages: Vec<Usage> = recorder
        .events()
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Usage { usage, .. } => Some(*usage),
            _ => None,
        })
        .collect();
    // Cumulative for the call, as each turn streams: its start, then its last count.
    assert_eq!(
        usages,
        [
            Usage {
                input_tokens: 1000,
                output_tokens: 1,
                cache_read_tokens: 5000,
                cache_write_tokens: 2000
            },
            Usage {
                input_tokens: 1000,
                output_tokens: 100,
                cache_read_tokens: 5000,
                cache_write_tokens: 2000
            },
            Usage {
                input_tokens: 1200,
                output_tokens: 101,
                cache_read_tokens: 12_000,
                cache_write_tokens: 2000
            },
            expected
        ]
    );
}

#[tokio::test]
async fn anthropic_unpriced_calls_have_no_cost() {
    let fake = FakeAnthropic::start();
    fake.push(fake_anthropic::Turn::text("hi"));
    let dir = tempfile::tempdir().expect("tempdir");
    let reply = run(
        &anthropic(&fake, json!({})),
        &request("hi", dir.path()),
        &Recorder::default(),
    )
    .await
    .expect("reply");
    assert_eq!(reply.cost_usd, None);
    assert_eq!(reply.usage.input_tokens, 10);
}

/// Runs one request against a fake scripted with `turn` and returns the error.
/// One failing request, classified: request retries are off (`max-retries` 0), so the
/// error is the server's first answer. Retries have their own tests below.
async fn anthropic_failure(
    turn: fake_anthropic::Turn,
    options: Value,
) -> (ProviderError, FakeAnthropic) {
    let fake = FakeAnthropic::start();
    fake.push(turn);
    let provider = anthropic(&fake, without_retries(options));
    let dir = tempfile::tempdir().expect("tempdir");
    let error = run(&provider, &request("hi", dir.path()), &Recorder::default())
        .await
        .expect_err("a failure");
    (error, fake)
}

#[tokio::test]
async fn anthropic_rate_limit_exposes_retry_after() {
    let (error, fake) = anthropic_failure(fake_anthropic::Turn::rate_limited("2"), json!({})).await;
    assert_eq!(error.class(), ErrorClass::RateLimit);
    assert_eq!(error.retry_after(), Some(Duration::from_secs(2)));
    assert!(
        error.to_string().contains("`anthropic` is rate limited"),
        "{error}"
    );
    assert_eq!(fake.requests().len(), 1, "retries are off here");

    let millis = fake_anthropic::Turn::rate_limited("2").with_header("retry-after-ms", "1500");
    let (error, _) = anthropic_failure(millis, json!({})).await;
    assert_eq!(error.retry_after(), Some(Duration::from_millis(1500)));

    let date = fake_anthropic::Turn::error(429, "rate_limit_error", "slow down")
        .with_header("retry-after", "Wed, 21 Oct 2099 07:28:00 GMT");
    let (error, _) = anthropic_failure(date, json!({})).await;
    assert!(
        error
            .retry_after()
            .is_some_and(|d| d > Duration::from_secs(3600)),
        "{error:?}"
    );
}

#[tokio::test]
async fn anthropic_overloaded_and_server_errors() {
    let (error, _) = anthropic_failure(fake_anthropic::Turn::overloaded(), json!({})).await;
    assert_eq!(error.class(), ErrorClass::Overloaded);

    let (error, _) = anthropic_failure(fake_anthropic::Turn::server_error(), json!({})).await;
    assert_eq!(error.class(), ErrorClass::ServerError);
    assert_eq!(
        error.to_string(),
        "`anthropic` returned server error 500: api_error: Internal server error (request req_fake)"
    );

    let midstream = fake_anthropic::Turn::ErrorEvent {
        text: "partial".to_owned(),
        error_type: "overloaded_error".to_owned(),
    };
    let (error, _) = anthropic_failure(midstream, json!({})).await;
    assert_eq!(error.class(), ErrorClass::Overloaded);
}

#[tokio::test]
async fn anthropic_rejections_carry_the_api_message() {
    let turn = fake_anthropic::Turn::error(
        400,
        "invalid_request_error",
        "max_tokens: must be at least 1",
    );
    let (error, _) = anthropic_failure(turn, json!({})).await;
    assert_eq!(error.class(), ErrorClass::Provider);
    assert_eq!(
        error.to_string(),
        "`anthropic` rejected the request with status 400: invalid_request_error: max_tokens: must be at least 1 (request req_fake)"
    );
}

#[tokio::test]
async fn anthropic_cut_stream_is_not_retried() {
    let (error, fake) = anthropic_failure(
        fake_anthropic::Turn::Cut {
            text: "partial".to_owned(),
        },
        json!({}),
    )
    .await;
    assert_eq!(error.class(), ErrorClass::StreamCut, "{error:?}");
    assert!(
        error
            .to_string()
            .starts_with("`anthropic` stream ended mid-reply"),
        "{error}"
    );
    // Give a (wrong) reconnect a moment to show up, then check none happened.
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(fake.requests().len(), 1);
    assert_eq!(fake.server().connections(), 1);
}

#[tokio::test]
async fn anthropic_hang_times_out() {
    let started = Instant::now();
    let (error, _) =
        anthropic_failure(fake_anthropic::Turn::Hang, json!({"idle-timeout": "300ms"})).await;
    assert!(
        matches!(error, ProviderError::Timeout { after, .. } if after == Duration::from_millis(300)),
        "{error:?}"
    );
    assert_eq!(error.class(), ErrorClass::Timeout);
    assert!(started.elapsed() < Duration::from_secs(5));

    let midstream = fake_anthropic::Turn::HangMidStream {
        text: "partial".to_owned(),
    };
    let (error, _) = anthropic_failure(midstream, json!({"idle-timeout": 300})).await;
    assert_eq!(error.class(), ErrorClass::Timeout, "{error:?}");
}

#[tokio::test]
async fn anthropic_refused_connection_is_a_network_error() {
    // Port 9 (discard): no test's server listens there (see `openai_failures_are_classified`).
    let decl = decl(
        "anthropic",
        "http://127.0.0.1:9",
        Some("TEST_API_KEY"),
        json!({}),
    );
    let provider = AnthropicProvider::from_decl(&decl, &env).expect("valid");
    let dir = tempfile::tempdir().expect("tempdir");
    let error = run(&provider, &request("hi", dir.path()), &Recorder::default())
        .await
        .expect_err("refused");
    assert_eq!(error.class(), ErrorClass::Network, "{error:?}");
    assert!(
        error
            .to_string()
            .starts_with("`anthropic` could not be reached"),
        "{error}"
    );
    assert!(
        error.to_string().to_lowercase().contains("refused"),
        "{error}"
    );
}

/// Polls `call` until `ready` completes, then drops it; the call must still be running.
async fn drop_when(call: ProviderFuture<'_>, ready: impl Future<Output = ()>) {
    tokio::select! {
        outcome = call => panic!("the call ended instead of hanging: {outcome:?}"),
        () = within(LIMIT, ready) => {}
    }
}

/// Waits until some reply text was streamed.
async fn first_text(recorder: &Recorder) {
    while recorder.text().is_empty() {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn anthropic_dropping_the_call_closes_the_connection() {
    // Before the response head, then in the middle of the stream.
    for mid_stream in [false, true] {
        let fake = FakeAnthropic::start();
        fake.push(if mid_stream {
            fake_anthropic::Turn::HangMidStream {
                text: "partial".to_owned(),
            }
        } else {
            fake_anthropic::Turn::Hang
        });
        let provider = anthropic(&fake, json!({}));
        let dir = tempfile::tempdir().expect("tempdir");
        let req = request("hi", dir.path());
        let recorder = Recorder::default();
        let sink = recorder.0.clone();
        let events = move |event: AgentEvent| sink.lock().expect("events lock").push(event);
        // The idle timeout is minutes: only the drop can end the call.
        let call = provider.run(&req, &events);
        if mid_stream {
            drop_when(call, first_text(&recorder)).await;
        } else {
            drop_when(call, async {
                fake.server().wait_for_requests(1, LIMIT).await;
            })
            .await;
        }
        fake.server()
            .wait_for_hang_ups(1, Duration::from_secs(5))
            .await;
        assert_eq!(fake.requests().len(), 1);
    }
}

#[tokio::test]
async fn anthropic_bearer_auth_and_beta_headers() {
    let fake = FakeAnthropic::start();
    fake.require_key(KEY);
    fake.push(fake_anthropic::Turn::text("ok"));
    let provider = anthropic(&fake, json!({"auth": "bearer", "beta": "a-2025,b-2026"}));
    let dir = tempfile::tempdir().expect("tempdir");
    run(&provider, &request("hi", dir.path()), &Recorder::default())
        .await
        .expect("reply");
    let sent = &fake.requests()[0];
    assert_eq!(
        sent.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert_eq!(sent.header("x-api-key"), None);
    assert_eq!(sent.header("anthropic-beta"), Some("a-2025,b-2026"));
}

#[tokio::test]
async fn anthropic_configuration_errors() {
    let missing = decl(
        "anthropic",
        "http://127.0.0.1:9",
        Some("UNSET_VAR"),
        json!({}),
    );
    let error = AnthropicProvider::from_decl(&missing, &env).expect_err("no key");
    assert_eq!(
        error.to_string(),
        "`anthropic` is misconfigured: environment variable `UNSET_VAR` is not set; put the API key there, or name another variable with `api-key-env`"
    );
    let typo = decl(
        "anthropic",
        "http://127.0.0.1:9",
        Some("TEST_API_KEY"),
        json!({"max-tokns": 5}),
    );
    let error = AnthropicProvider::from_decl(&typo, &env).expect_err("typo");
    assert!(
        error.to_string().contains("did you mean `max-tokens`?"),
        "{error}"
    );
    let fake = FakeAnthropic::start();
    let provider = anthropic(&fake, json!({}));
    let dir = tempfile::tempdir().expect("tempdir");
    let mut req = request("hi", dir.path());
    req.grants.tools = vec![ToolGrant {
        name: "Read".to_owned(),
        timeout: None,
        description: None,
        input_schema: None,
        command: Vec::new(),
    }];
    let error = run(&provider, &req, &Recorder::default())
        .await
        .expect_err("built-in tool");
    assert_eq!(error.class(), ErrorClass::Provider);
    assert!(fake.requests().is_empty());
}

#[tokio::test]
async fn the_key_never_appears_in_events_errors_or_debug_output() {
    let fake = FakeAnthropic::start();
    fake.push(fake_anthropic::Turn::text_then_tool(
        "Working.",
        "write_notes",
        json!({"text": "a"}),
    ));
    fake.push(fake_anthropic::Turn::text("Done."));
    // A gateway echoing the key it rejected.
    fake.push(fake_anthropic::Turn::error(
        401,
        "authentication_error",
        &format!("invalid x-api-key {KEY}"),
    ));
    fake.push(fake_anthropic::Turn::rate_limited("1"));
    fake.push(fake_anthropic::Turn::Cut {
        text: "partial".to_owned(),
    });
    let provider = anthropic(&fake, json!({}));
    let dir = tempfile::tempdir().expect("tempdir");
    let mut req = request("Go", dir.path());
    req.grants.tools = vec![write_notes_tool()];
    let recorder = Recorder::default();
    let mut texts = vec![format!("{provider:?}")];
    let reply = run(&provider, &req, &recorder).await.expect("a reply");
    texts.push(format!("{reply:?}"));
    for _ in 0..3 {
        let error = run(&provider, &request("again", dir.path()), &recorder)
            .await
            .expect_err("a failure");
        texts.push(error.to_string());
        texts.push(format!("{error:?}"));
    }
    for event in recorder.events() {
        texts.push(serde_json::to_string(&event).expect("serialise"));
        texts.push(format!("{event:?}"));
    }
    let openai_fake = FakeOpenAi::start();
    texts.push(format!("{:?}", openai(&openai_fake, json!({}))));

    assert!(
        texts
            .iter()
            .any(|t| t.contains("invalid x-api-key <redacted>")),
        "the echoed message is kept, redacted"
    );
    for text in &texts {
        assert!(!text.contains(KEY), "the key leaked into: {text}");
    }
    // The key did go where it belongs.
    assert!(
        fake.requests()
            .iter()
            .all(|r| r.header("x-api-key") == Some(KEY))
    );
}

// ---------------------------------------------------------------- openai

#[tokio::test]
async fn openai_streams_text_and_reasoning() {
    let fake = FakeOpenAi::start();
    fake.require_key(KEY);
    let text = "It is 18°C — cloudy ☁";
    fake.push(fake_openai::Turn::text(text).with_reasoning("Checking the weather."));
    let provider = openai(&fake, json!({"temperature": 0.2}));
    let dir = tempfile::tempdir().expect("tempdir");
    let mut req = request("Weather in Paris?", dir.path());
    req.prompt.system = Some("You are terse.".to_owned());
    let recorder = Recorder::default();
    let reply = run(&provider, &req, &recorder).await.expect("a reply");
    assert_eq!(reply.text, text);
    assert_eq!(recorder.text(), text);
    // The usage chunk comes before `[DONE]`, so before the message completes.
    assert_eq!(
        dedup_kinds(recorder.kinds()),
        [
            "session-start",
            "thinking-delta",
            "text-delta",
            "usage",
            "message-complete",
            "session-end"
        ]
    );
    let sent = &fake.requests()[0];
    assert_eq!(sent.path(), "/v1/chat/completions");
    assert_eq!(
        sent.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    let body = sent.json();
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"]["include_usage"], true);
    assert_eq!(body["temperature"], 0.2);
    assert_eq!(
        body["messages"],
        json!([{"role": "system", "content": "You are terse."}, {"role": "user", "content": "Weather in Paris?"}])
    );
}

#[tokio::test]
async fn openai_tool_calls_edit_a_file_then_answer() {
    let fake = FakeOpenAi::start();
    fake.push(fake_openai::Turn::tool_call(
        "write_notes",
        json!({"text": "from openai"}),
    ));
    fake.push(fake_openai::Turn::text("Notes written."));
    let provider = openai(&fake, json!({}));
    let dir = tempfile::tempdir().expect("tempdir");
    let mut req = request("Write notes", dir.path());
    req.grants.tools = vec![write_notes_tool()];
    let recorder = Recorder::default();
    let reply = run(&provider, &req, &recorder).await.expect("a reply");
    assert_eq!(reply.text, "Notes written.");
    assert_eq!(reply.turns, 2);
    let notes = std::fs::read_to_string(dir.path().join("notes.txt")).expect("notes");
    assert_eq!(
        serde_json::from_str::<Value>(&notes).expect("json"),
        json!({"text": "from openai"})
    );
    let bodies = fake.completion_bodies();
    assert_eq!(bodies[0]["tools"][0]["function"]["name"], "write_notes");
    let messages = &bodies[1]["messages"];
    assert_eq!(messages[1]["role"], "assistant");
    assert_eq!(messages[1]["tool_calls"][0]["id"], "call_fake_1_0");
    assert_eq!(
        messages[1]["tool_calls"][0]["function"]["name"],
        "write_notes"
    );
    let arguments: Value = serde_json::from_str(
        messages[1]["tool_calls"][0]["function"]["arguments"]
            .as_str()
            .expect("string"),
    )
    .expect("json");
    assert_eq!(arguments, json!({"text": "from openai"}));
    assert_eq!(
        messages[2],
        json!({"role": "tool", "tool_call_id": "call_fake_1_0", "content": "wrote notes.txt\n"})
    );
    assert!(recorder.events().contains(&AgentEvent::ToolComplete {
        id: "call_fake_1_0".to_owned(),
        name: "write_notes".to_owned(),
        summary: "wrote notes.txt".to_owned(),
        is_error: false,
    }));
}

#[tokio::test]
async fn openai_max_turns_bounds_the_loop() {
    let fake = FakeOpenAi::start();
    for _ in 0..2 {
        fake.push(fake_openai::Turn::tool_call(
            "write_notes",
            json!({"text": "again"}),
        ));
    }
    let provider = openai(&fake, json!({}));
    let dir = tempfile::tempdir().expect("tempdir");
    let mut req = request("Loop", dir.path());
    req.grants.tools = vec![write_notes_tool()];
    req.limits.max_turns = Some(1);
    let error = run(&provider, &req, &Recorder::default())
        .await
        .expect_err("turn limit");
    assert!(
        matches!(
            error,
            ProviderError::MaxTurns {
                adapter: "openai",
                max_turns: 1
            }
        ),
        "{error:?}"
    );
    assert_eq!(fake.completion_bodies().len(), 1);
    assert!(
        !dir.path().join("notes.txt").exists(),
        "no tool runs past the limit"
    );
}

#[tokio::test]
async fn openai_usage_from_the_final_chunk_with_cached_tokens() {
    let fake = FakeOpenAi::start();
    fake.push(
        fake_openai::Turn::text("hi").with_usage(fake_openai::Usage {
            prompt: 1000,
            completion: 40,
            cached: 600,
        }),
    );
    let provider = openai(
        &fake,
        json!({"price-input": 1.0, "price-output": 2.0, "price-cache-read": 0.5}),
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let reply = run(&provider, &request("hi", dir.path()), &Recorder::default())
        .await
        .expect("reply");
    assert_eq!(
        reply.usage,
        Usage {
            input_tokens: 400,
            output_tokens: 40,
            cache_read_tokens: 600,
            cache_write_tokens: 0
        }
    );
    let cost = (400.0 * 1.0 + 40.0 * 2.0 + 600.0 * 0.5) / 1_000_000.0;
    assert!((reply.cost_usd.expect("priced") - cost).abs() < 1e-12);
}

async fn openai_failure(turn: fake_openai::Turn, options: Value) -> (ProviderError, FakeOpenAi) {
    let fake = FakeOpenAi::start();
    fake.push(turn);
    let provider = openai(&fake, without_retries(options));
    let dir = tempfile::tempdir().expect("tempdir");
    let error = run(&provider, &request("hi", dir.path()), &Recorder::default())
        .await
        .expect_err("a failure");
    (error, fake)
}

#[tokio::test]
async fn openai_failures_are_classified() {
    let (error, fake) = openai_failure(fake_openai::Turn::rate_limited("3"), json!({})).await;
    assert_eq!(error.class(), ErrorClass::RateLimit);
    assert_eq!(error.retry_after(), Some(Duration::from_secs(3)));
    assert_eq!(fake.requests().len(), 1);

    let (error, _) = openai_failure(fake_openai::Turn::unavailable(), json!({})).await;
    assert_eq!(error.class(), ErrorClass::Overloaded);

    let (error, _) = openai_failure(fake_openai::Turn::server_error(), json!({})).await;
    assert_eq!(error.class(), ErrorClass::ServerError);

    let (error, _) = openai_failure(
        fake_openai::Turn::ErrorChunk {
            text: "partial".to_owned(),
            code: 500,
        },
        json!({}),
    )
    .await;
    assert_eq!(error.class(), ErrorClass::ServerError);
    assert!(error.to_string().contains("engine died"), "{error}");

    let (error, fake) = openai_failure(
        fake_openai::Turn::Cut {
            text: "partial".to_owned(),
        },
        json!({}),
    )
    .await;
    assert_eq!(error.class(), ErrorClass::StreamCut, "{error:?}");
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(fake.requests().len(), 1, "a cut stream is never re-sent");

    let (error, _) =
        openai_failure(fake_openai::Turn::Hang, json!({"idle-timeout": "250ms"})).await;
    assert_eq!(error.class(), ErrorClass::Timeout);
    let (error, _) = openai_failure(
        fake_openai::Turn::HangMidStream {
            text: "x".to_owned(),
        },
        json!({"idle-timeout": "250ms"}),
    )
    .await;
    assert_eq!(error.class(), ErrorClass::Timeout);

    let (error, _) = openai_failure(
        fake_openai::Turn::error(404, "NotFoundError", "model `nope` does not exist"),
        json!({}),
    )
    .await;
    assert_eq!(error.class(), ErrorClass::Provider);
    assert!(
        error.to_string().contains("model `nope` does not exist"),
        "{error}"
    );

    // Port 9 (discard): below the ephemeral range, so no test's server can be listening
    // there (a port freed by a listener could be taken by a concurrent test's server).
    let provider = OpenAiProvider::from_decl(
        &decl("openai", "http://127.0.0.1:9/v1", None, json!({})),
        &env,
    )
    .expect("valid");
    let dir = tempfile::tempdir().expect("tempdir");
    let error = run(&provider, &request("hi", dir.path()), &Recorder::default())
        .await
        .expect_err("refused");
    assert_eq!(error.class(), ErrorClass::Network);
}

#[tokio::test]
async fn openai_dropping_the_call_closes_the_connection() {
    let fake = FakeOpenAi::start();
    fake.push(fake_openai::Turn::HangMidStream {
        text: "partial".to_owned(),
    });
    let provider = openai(&fake, json!({}));
    let dir = tempfile::tempdir().expect("tempdir");
    let req = request("hi", dir.path());
    let recorder = Recorder::default();
    let sink = recorder.0.clone();
    let events = move |event: AgentEvent| sink.lock().expect("events lock").push(event);
    drop_when(provider.run(&req, &events), first_text(&recorder)).await;
    fake.server()
        .wait_for_hang_ups(1, Duration::from_secs(5))
        .await;
}

#[tokio::test]
async fn openai_without_a_key_sends_no_authorization_and_joins_base_urls() {
    for base in ["", "/v1", "/v1/"] {
        let fake = FakeOpenAi::start();
        fake.push(fake_openai::Turn::text("ok"));
        let decl = decl(
            "openai",
            &format!("{}{base}", fake.url()),
            None,
            json!({"stream-usage": false}),
        );
        let provider = OpenAiProvider::from_decl(&decl, &env).expect("valid");
        let dir = tempfile::tempdir().expect("tempdir");
        let reply = run(&provider, &request("hi", dir.path()), &Recorder::default())
            .await
            .expect("reply");
        assert_eq!(reply.text, "ok");
        assert_eq!(reply.usage, Usage::default(), "no usage was asked for");
        let sent = &fake.requests()[0];
        assert_eq!(sent.path(), "/v1/chat/completions", "base {base:?}");
        assert_eq!(sent.header("authorization"), None);
        assert!(sent.json().get("stream_options").is_none());
    }
}

// ---------------------------------------------------------------- the fakes themselves

#[tokio::test]
async fn fakes_answer_model_listings_and_non_streaming_requests() {
    let client = atomic::tls::client();
    let anthropic = FakeAnthropic::start();
    let models: Value = within(LIMIT, async {
        client
            .get(format!("{}/v1/models", anthropic.url()))
            .send()
            .await
            .expect("send")
            .json()
            .await
            .expect("json")
    })
    .await;
    assert_eq!(models["data"][0]["id"], "claude-sonnet-4-5");
    anthropic.push(fake_anthropic::Turn::tool_use("t", json!({"a": 1})));
    let message: Value = within(LIMIT, async {
        client
            .post(format!("{}/v1/messages?beta=true", anthropic.url()))
            .json(&json!({"model": "m", "max_tokens": 5, "messages": []}))
            .send()
            .await
            .expect("send")
            .json()
            .await
            .expect("json")
    })
    .await;
    assert_eq!(
        message["content"][0],
        json!({"type": "tool_use", "id": "toolu_fake_1_0", "name": "t", "input": {"a": 1}})
    );
    assert_eq!(message["stop_reason"], "tool_use");
    let empty = within(
        LIMIT,
        client
            .post(format!("{}/v1/messages", anthropic.url()))
            .json(&json!({}))
            .send(),
    )
    .await
    .expect("send");
    assert_eq!(
        empty.status(),
        400,
        "an exhausted script answers a loud 400"
    );

    let openai = FakeOpenAi::start();
    let models: Value = within(LIMIT, async {
        client
            .get(format!("{}/v1/models", openai.url()))
            .send()
            .await
            .expect("send")
            .json()
            .await
            .expect("json")
    })
    .await;
    assert_eq!(models["data"][0]["id"], "qwen3");
    openai.push(fake_openai::Turn::text("plain"));
    let completion: Value = within(LIMIT, async {
        client
            .post(format!("{}/v1/chat/completions", openai.url()))
            .json(&json!({"model": "m", "messages": []}))
            .send()
            .await
            .expect("send")
            .json()
            .await
            .expect("json")
    })
    .await;
    assert_eq!(completion["choices"][0]["message"]["content"], "plain");
}

#[tokio::test]
async fn fakes_split_each_event_across_writes() {
    use futures_util::StreamExt;
    let fake = FakeAnthropic::start();
    fake.push(fake_anthropic::Turn::text("ünïcödé text"));
    let response = within(
        LIMIT,
        atomic::tls::client()
            .post(format!("{}/v1/messages", fake.url()))
            .json(&json!({"model": "m", "max_tokens": 5, "stream": true, "messages": []}))
            .send(),
    )
    .await
    .expect("send");
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let frames: Vec<Vec<u8>> = within(LIMIT, response.bytes_stream().collect::<Vec<_>>())
        .await
        .into_iter()
        .map(|frame| frame.expect("a frame").to_vec())
        .collect();
    let body = String::from_utf8(frames.concat()).expect("utf-8 overall");
    let events = body.matches("\n\n").count();
    assert!(body.ends_with("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"));
    assert!(
        frames.len() >= 3 * events,
        "{} frames for {events} events",
        frames.len()
    );
    assert!(
        frames
            .iter()
            .any(|frame| std::str::from_utf8(frame).is_err()),
        "some write splits a UTF-8 sequence"
    );
}
