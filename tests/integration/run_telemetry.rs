//! OpenTelemetry export through `atomic run` and `atomic resume`, received by an OTLP/HTTP
//! receiver on 127.0.0.1 built on the official protobuf definitions
//! (`support::otlp_receiver`): the span tree of a real run (run → step → attempt → agent
//! call → tool call) with the GenAI attributes, a failing node's error spans, content only
//! with `capture-content` and secrets never, a collector that is down, `DO_NOT_TRACK`, a
//! resumed run in the same trace, and a bad `telemetry` block.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::cli_project::{CliProject, stderr};
use crate::support::fake_anthropic::{FakeAnthropic, Turn, Usage};
use crate::support::otlp_receiver::{OtlpReceiver, Span};

/// The API key: registered with the redactor (`api-key-env=`), so it must never be exported.
const KEY: &str = "test-key-5e1f9c2a7d";
/// In the prompt: exported only with `capture-content`.
const PROMPT_MARK: &str = "PROMPT-MARK-41d7";
/// In the reply: exported only with `capture-content`.
const REPLY_MARK: &str = "REPLY-MARK-93b0";

const BUMP_TOOL: &str = r#"tool "bump" description="Records that it ran" {
    argument "why" description="Why it runs"
    command "sh" "-c" "echo ran >> runs.log; echo bumped"
}"#;

fn flow(base_url: &str) -> String {
    format!(
        r#"workflow "traced" {{
    state {{ field "summary" type="string" default=""; }}
    provider "claude" adapter="anthropic" model="claude-sonnet-4-5" api-key-env="TEST_ANTHROPIC_KEY" base-url="{base_url}"
    agent "writer" provider="claude" {{
        prompt "Bump once. {PROMPT_MARK}"
        tools "bump"
        output "summary"
    }}
    tool "flaky" {{
        run "sh" "-c" "echo broken >&2; exit 3"
        retry attempts=2 backoff="10ms"
        on-error "skip"
    }}
}}
"#
    )
}

/// A model that calls `bump` once, then answers with the reply mark and the key (which the
/// redactor must catch).
fn scripted_model() -> FakeAnthropic {
    let fake = FakeAnthropic::start();
    fake.push(
        Turn::tool_use("bump", json!({"why": "asked"})).with_usage(Usage {
            input: 100,
            output: 20,
            ..Usage::default()
        }),
    );
    fake.push(
        Turn::text(&format!("Done {REPLY_MARK}, key {KEY}")).with_usage(Usage {
            input: 150,
            output: 30,
            ..Usage::default()
        }),
    );
    fake
}

/// `atomic run flow.kdl` in `project` with the key set and `vars`.
fn run(project: &CliProject, vars: &[(&str, &str)]) -> (std::process::Output, Duration) {
    let mut command = project.atomic();
    command
        .args(["run", "flow.kdl", "--quiet"])
        .env("TEST_ANTHROPIC_KEY", KEY)
        .env_remove("DO_NOT_TRACK")
        .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
        .env_remove("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
        .env_remove("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT")
        .env_remove("OTEL_SDK_DISABLED");
    for (name, value) in vars {
        command.env(name, value);
    }
    let started = Instant::now();
    let output = command.output().expect("atomic run");
    (output, started.elapsed())
}

fn one<'a>(spans: &'a [Span], name: &str) -> &'a Span {
    let found: Vec<&Span> = spans.iter().filter(|span| span.name == name).collect();
    assert_eq!(found.len(), 1, "one `{name}` span in {:#?}", names(spans));
    found[0]
}

fn names(spans: &[Span]) -> Vec<String> {
    spans.iter().map(|span| span.name.clone()).collect()
}

fn children<'a>(spans: &'a [Span], parent: &Span) -> Vec<&'a Span> {
    spans
        .iter()
        .filter(|span| span.parent == parent.span_id)
        .collect()
}

#[test]
fn a_run_exports_its_span_tree_with_genai_attributes() {
    let receiver = OtlpReceiver::start();
    let fake = scripted_model();
    let project = CliProject::new();
    project.write(".atomic/tools/bump.kdl", BUMP_TOOL);
    project.write("flow.kdl", &flow(&fake.url()));

    let (output, _) = run(
        &project,
        &[("OTEL_EXPORTER_OTLP_ENDPOINT", &receiver.endpoint())],
    );
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(0), "{err}");
    assert!(!err.contains("warning"), "{err}");
    assert_eq!(project.read("runs.log"), "ran\n");

    let spans = receiver.spans();
    let run_id = project.last_run();
    // One trace, one root: the run.
    let run = one(&spans, "run traced");
    assert_eq!(run.parent, "");
    assert!(
        spans.iter().all(|span| span.trace_id == run.trace_id),
        "{spans:#?}"
    );
    assert_eq!(run.attr("atomic.run.id"), Value::from(run_id.as_str()));
    assert_eq!(run.attr("atomic.run.status"), "completed");
    assert_eq!(run.attr("atomic.run.resumed"), false);
    assert_eq!(run.attr("gen_ai.usage.input_tokens"), 250);
    assert_eq!(run.attr("gen_ai.usage.output_tokens"), 50);
    assert_eq!(run.resource["service.name"], "atomic");
    assert_eq!(run.status.0, 1, "ok");

    // run → step → attempt → agent call → tool call.
    let step = one(&spans, "step writer");
    assert_eq!(step.parent, run.span_id);
    assert_eq!(step.attr("atomic.node.kind"), "agent");
    assert_eq!(step.attr("atomic.step.status"), "completed");
    let attempts = children(&spans, step);
    assert_eq!(
        names(&attempts.iter().copied().cloned().collect::<Vec<_>>()),
        ["attempt writer"]
    );
    let attempt = attempts[0];
    assert_eq!(attempt.attr("atomic.attempt"), 1);
    let call = one(&spans, "invoke_agent writer");
    assert_eq!(call.parent, attempt.span_id);
    assert_eq!(call.kind, 3, "client");
    assert_eq!(call.attr("gen_ai.operation.name"), "invoke_agent");
    assert_eq!(call.attr("gen_ai.agent.name"), "writer");
    assert_eq!(call.attr("gen_ai.provider.name"), "anthropic");
    assert_eq!(call.attr("gen_ai.system"), "anthropic");
    assert_eq!(call.attr("gen_ai.request.model"), "claude-sonnet-4-5");
    assert_eq!(call.attr("gen_ai.response.model"), "claude-sonnet-4-5");
    assert_eq!(call.attr("gen_ai.usage.input_tokens"), 250);
    assert_eq!(call.attr("gen_ai.usage.output_tokens"), 50);
    assert_eq!(call.attr("atomic.adapter"), "anthropic");
    let cost = call
        .attr("atomic.cost_usd")
        .as_f64()
        .expect("a priced model has a cost");
    assert!(cost > 0.0, "{cost}");
    let tool = one(&spans, "execute_tool bump");
    assert_eq!(tool.parent, call.span_id);
    assert_eq!(tool.attr("gen_ai.operation.name"), "execute_tool");
    assert_eq!(tool.attr("gen_ai.tool.name"), "bump");
    assert!(
        tool.attr("gen_ai.tool.call.id")
            .as_str()
            .is_some_and(|id| !id.is_empty())
    );
    assert_eq!(tool.status.0, 1, "ok");

    // The failing node: each attempt an error with an exception event, the step skipped.
    let flaky = one(&spans, "step flaky");
    assert_eq!(flaky.parent, run.span_id);
    assert_eq!(flaky.attr("atomic.fail.action"), "skip");
    assert_eq!(flaky.attr("atomic.step.status"), "skipped");
    let failed = children(&spans, flaky);
    assert!(!failed.is_empty());
    for attempt in &failed {
        assert!(attempt.is_error(), "{attempt:#?}");
        assert!(attempt.attr("error.type").is_string(), "{attempt:#?}");
        let (name, exception) = &attempt.events[0];
        assert_eq!(name, "exception");
        assert!(
            exception["exception.message"]
                .as_str()
                .is_some_and(|message| message.contains("broken") || message.contains('3')),
            "{exception:?}"
        );
    }

    // No content, no secret.
    let raw = receiver.raw_text();
    for absent in [
        PROMPT_MARK,
        REPLY_MARK,
        KEY,
        "gen_ai.input.messages",
        "gen_ai.tool.call.arguments",
    ] {
        assert!(!raw.contains(absent), "`{absent}` was exported");
    }
}

#[test]
fn capture_content_exports_prompt_and_reply_with_secrets_redacted() {
    let receiver = OtlpReceiver::start();
    let fake = scripted_model();
    let project = CliProject::new();
    project.write(".atomic/tools/bump.kdl", BUMP_TOOL);
    project.write("flow.kdl", &flow(&fake.url()));
    project.write(
        ".atomic/config.kdl",
        &format!(
            "telemetry endpoint=\"{}\" capture-content=#true\n",
            receiver.endpoint()
        ),
    );

    let (output, _) = run(&project, &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let spans = receiver.spans();
    let call = one(&spans, "invoke_agent writer");
    let input: Value = serde_json::from_str(
        call.attr("gen_ai.input.messages")
            .as_str()
            .expect("input messages"),
    )
    .expect("JSON");
    assert_eq!(input[0]["role"], "user");
    assert!(
        input[0]["parts"][0]["content"]
            .as_str()
            .is_some_and(|text| text.contains(PROMPT_MARK)),
        "{input}"
    );
    let output_messages = call.attr("gen_ai.output.messages");
    let reply = output_messages.as_str().expect("output messages");
    assert!(reply.contains(REPLY_MARK), "{reply}");
    let tool = one(&spans, "execute_tool bump");
    assert!(
        tool.attr("gen_ai.tool.call.arguments")
            .as_str()
            .is_some_and(|a| a.contains("asked"))
    );
    assert!(
        tool.attr("gen_ai.tool.call.result")
            .as_str()
            .is_some_and(|r| r.contains("bumped"))
    );
    // The key the reply repeated is redacted, everywhere.
    assert!(!receiver.raw_text().contains(KEY), "the key was exported");
    assert!(reply.contains("[REDACTED]"), "{reply}");
}

#[test]
fn the_genai_capture_variable_turns_content_on() {
    let receiver = OtlpReceiver::start();
    let fake = scripted_model();
    let project = CliProject::new();
    project.write(".atomic/tools/bump.kdl", BUMP_TOOL);
    project.write("flow.kdl", &flow(&fake.url()));
    let (output, _) = run(
        &project,
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", &receiver.endpoint()),
            ("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true"),
        ],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let raw = receiver.raw_text();
    assert!(raw.contains(PROMPT_MARK) && raw.contains(REPLY_MARK));
    assert!(!raw.contains(KEY), "the key was exported");
}

/// A tool-only workflow (no model), for timing.
const TOOLS_ONLY: &str = r#"workflow "tools" {
    state { field "n" type="number" default=0; }
    set "n" expr="state.n + 1"
    tool "echo" { run "sh" "-c" "echo hi"; }
    tool "fails" { run "sh" "-c" "exit 5"; }
}
"#;

#[test]
fn a_down_collector_neither_fails_nor_slows_the_run() {
    let project = CliProject::new();
    project.write("flow.kdl", TOOLS_ONLY);
    // A port nothing listens on.
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.local_addr().expect("address").port()
    };
    let (untraced, plain) = run(&project, &[]);
    let (traced, elapsed) = run(
        &project,
        &[(
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            &format!("http://127.0.0.1:{closed}"),
        )],
    );
    // The run fails (`fails` exits 5) the same way, traced or not.
    assert_eq!(untraced.status.code(), Some(1), "{}", stderr(&untraced));
    assert_eq!(
        traced.status.code(),
        untraced.status.code(),
        "{}",
        stderr(&traced)
    );
    let err = stderr(&traced);
    let warnings: Vec<&str> = err.lines().filter(|line| line.contains("trace")).collect();
    assert_eq!(warnings.len(), 1, "{err}");
    assert!(
        warnings[0]
            .starts_with("warning: the run's trace was not fully exported to http://127.0.0.1:"),
        "{err}"
    );
    assert!(
        elapsed < plain + Duration::from_secs(2),
        "traced {elapsed:?} vs untraced {plain:?}"
    );
    assert_eq!(
        stderr(&untraced)
            .lines()
            .filter(|line| line.contains("trace"))
            .count(),
        0
    );
}

#[test]
fn do_not_track_sends_nothing_even_when_configured() {
    let receiver = OtlpReceiver::start();
    let project = CliProject::new();
    project.write("flow.kdl", TOOLS_ONLY);
    project.write(
        ".atomic/config.kdl",
        &format!("telemetry endpoint=\"{}\"\n", receiver.endpoint()),
    );
    let (output, _) = run(
        &project,
        &[
            ("DO_NOT_TRACK", "1"),
            ("OTEL_EXPORTER_OTLP_ENDPOINT", &receiver.endpoint()),
        ],
    );
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(receiver.requests().is_empty(), "{:?}", receiver.requests());
    // The same project without DO_NOT_TRACK does send (so the silence above is meaningful).
    let (output, _) = run(&project, &[]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let spans = receiver.spans();
    let run = one(&spans, "run tools");
    assert_eq!(run.attr("atomic.run.status"), "failed");
    assert!(run.is_error());
    assert_eq!(run.attr("atomic.run.failed_node"), "fails");
    let step = one(&spans, "step fails");
    assert!(step.is_error());
    assert_eq!(step.attr("atomic.fail.action"), "fail-run");
}

#[test]
fn a_resumed_run_continues_its_trace() {
    let receiver = OtlpReceiver::start();
    let project = CliProject::new();
    project.write(
        "flow.kdl",
        r#"workflow "paused" {
    state { field "ok" type="boolean" default=#false; }
    wait "go" prompt="Go?" answer="yes-no" { output "ok"; }
    tool "after" { run "sh" "-c" "echo after"; }
    parallel "both" {
        tool "left" { run "sh" "-c" "echo left"; }
        tool "right" { run "sh" "-c" "echo right"; }
    }
}
"#,
    );
    let endpoint = receiver.endpoint();
    let vars = [("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str())];
    let (paused, _) = run(&project, &vars);
    assert_eq!(paused.status.code(), Some(4), "{}", stderr(&paused));
    let run_id = project.last_run();
    let resumed = project
        .atomic()
        .args(["resume", &run_id, "--answer", "yes", "--quiet"])
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint)
        .env_remove("DO_NOT_TRACK")
        .output()
        .expect("atomic resume");
    assert_eq!(resumed.status.code(), Some(0), "{}", stderr(&resumed));

    let spans = receiver.spans();
    let runs: Vec<&Span> = spans
        .iter()
        .filter(|span| span.name == "run paused")
        .collect();
    assert_eq!(runs.len(), 2, "{:#?}", names(&spans));
    assert_eq!(
        runs[0].trace_id, runs[1].trace_id,
        "one trace for the whole run"
    );
    assert_eq!(runs[0].attr("atomic.run.status"), "paused");
    assert_eq!(runs[1].attr("atomic.run.status"), "completed");
    assert_eq!(runs[1].attr("atomic.run.resumed"), true);
    let after = one(&spans, "step after");
    assert_eq!(after.parent, runs[1].span_id);
    // A block's steps are children of its attempt.
    let both = one(&spans, "step both");
    assert_eq!(both.parent, runs[1].span_id);
    let block_attempt = one(&spans, "attempt both");
    assert_eq!(block_attempt.parent, both.span_id);
    for branch in ["step left", "step right"] {
        let step = one(&spans, branch);
        assert_eq!(step.parent, block_attempt.span_id, "{branch}");
        assert!(step.attr("atomic.branch").is_i64(), "{branch}");
    }
}

#[test]
fn a_bad_telemetry_block_is_reported_with_the_fix() {
    let project = CliProject::new();
    project.write("flow.kdl", TOOLS_ONLY);
    project.write(
        ".atomic/config.kdl",
        "telemetry endpoint=\"localhost:4318\" capture-content=\"yes\"\n",
    );
    let (output, _) = run(&project, &[]);
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{err}");
    assert!(err.contains("config.kdl:1:"), "{err}");
    assert!(
        err.contains("`endpoint` must be the collector's http:// or https:// URL"),
        "{err}"
    );
    assert!(err.contains(r#"endpoint="http://127.0.0.1:4318""#), "{err}");
    assert!(
        err.contains("`capture-content` is `#true` or `#false`"),
        "{err}"
    );
    assert!(err.contains("nothing was run"), "{err}");
}
