//! Parallel strategies, retries, on-error, limits, wait/resume, cancellation, events.

use std::sync::{Arc, Mutex};
use std::time::Duration as StdDuration;

use atomic::ir::*;
use atomic::providers::ProviderError;
use atomic::runtime::{
    Providers, ResumeError, RunContext, RunEnd, RunError, RunEvent, StreamModes, resume, run,
};
use serde_json::{Map, Value, json};

use super::build::*;
use super::nodes::go;
use super::provider::TestProvider;

fn collecting(ctx: &mut RunContext) -> Arc<Mutex<Vec<Value>>> {
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = events.clone();
    ctx.stream = StreamModes::ALL;
    ctx.sink = Some(Arc::new(move |event: &RunEvent| {
        sink.lock()
            .unwrap()
            .push(serde_json::to_value(event).unwrap());
    }));
    events
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn for_each_merges_in_branch_order_not_completion_order() {
    let mut wf = Wf::new("fan")
        .provider("fake")
        .field(
            "items",
            ValueType::Array,
            Some(json!((0..40).collect::<Vec<_>>())),
            Reducer::Replace,
        )
        .field("out", ValueType::Array, Some(json!([])), Reducer::Append);
    let fan = wf.add(
        None,
        node(
            "fan",
            parallel(Strategy::All, Some(8), Some(("state.items", "it"))),
        ),
    );
    let mut a = agent("{{ it }}");
    a.outputs = vec![output("out", ParseMode::Number)];
    wf.child(fan, 0, node("work", NodeKind::Agent(Box::new(a))));
    // Later items finish first: completion order is the reverse of branch order.
    let provider = TestProvider::new(|request, _| Ok(request.prompt.text.clone()));
    let slow = Arc::new(SlowFirst(provider));
    let mut ctx = RunContext::in_memory();
    ctx.providers = Providers::new().with("fake", slow);
    let outcome = go(wf, ctx).await;
    assert_eq!(outcome.end, RunEnd::Completed, "{:?}", outcome.end);
    assert_eq!(outcome.state["out"], json!((0..40).collect::<Vec<_>>()));
    assert_eq!(
        outcome.steps, 41,
        "each branch's agent step is committed as it completes, then the parallel"
    );
}

/// A parallel of plain `set`s runs its branches in turn on the run's task; the result is
/// what the concurrent path gives: writes in branch order, one committed step.
#[tokio::test]
async fn a_for_each_of_plain_sets_merges_in_branch_order() {
    let mut wf = Wf::new("sets")
        .field(
            "items",
            ValueType::Array,
            Some(json!((0..40).collect::<Vec<_>>())),
            Reducer::Replace,
        )
        .field("out", ValueType::Array, Some(json!([])), Reducer::Append);
    let fan = wf.add(
        None,
        node(
            "fan",
            parallel(Strategy::All, None, Some(("state.items", "it"))),
        ),
    );
    wf.child(fan, 0, node("double", set("out", "{{ it * 2 + index }}")));
    let outcome = go(wf, RunContext::in_memory()).await;
    assert_eq!(outcome.end, RunEnd::Completed, "{:?}", outcome.end);
    assert_eq!(
        outcome.state["out"],
        json!((0..40).map(|i| i * 3).collect::<Vec<_>>())
    );
    assert_eq!(outcome.steps, 1, "a parallel is one committed step");
}

/// Delays each call by (40 - item) ms.
#[derive(Debug)]
struct SlowFirst(Arc<TestProvider>);

impl atomic::providers::Provider for SlowFirst {
    fn adapter(&self) -> &'static str {
        "in-process"
    }
    fn run<'a>(
        &'a self,
        request: &'a atomic::providers::AgentRequest,
        events: &'a dyn atomic::providers::EventSink,
    ) -> atomic::providers::ProviderFuture<'a> {
        Box::pin(async move {
            let item: u64 = request.prompt.text.parse().unwrap_or(0);
            tokio::time::sleep(StdDuration::from_millis(40 - item)).await;
            self.0.run(request, events).await
        })
    }
}

fn strategy_flow(strategy: Strategy, fail_fast_branch: bool) -> Wf {
    let mut wf =
        Wf::new("strategies").field("log", ValueType::Array, Some(json!([])), Reducer::Append);
    let par = wf.add(None, node("par", parallel(strategy, None, None)));
    let fast = if fail_fast_branch {
        tool(&["sh", "-c", "sleep 0.05; exit 1"])
    } else {
        tool(&["sh", "-c", "sleep 0.05"])
    };
    wf.child(par, 0, node("fast", NodeKind::Tool(Box::new(fast))));
    wf.child(par, 0, node("fast-set", set("log", "fast")));
    wf.child(
        par,
        1,
        node("slow", NodeKind::Tool(Box::new(tool(&["sleep", "20"])))),
    );
    wf.child(par, 1, node("slow-set", set("log", "slow")));
    wf
}

#[tokio::test]
async fn race_takes_the_first_finisher_and_cancels_the_rest() {
    let started = std::time::Instant::now();
    let outcome = go(
        strategy_flow(Strategy::Race, false),
        RunContext::in_memory(),
    )
    .await;
    assert_eq!(outcome.end, RunEnd::Completed);
    assert_eq!(outcome.state["log"], json!(["fast"]));
    assert!(
        started.elapsed() < StdDuration::from_secs(5),
        "the loser was not cancelled"
    );
    let failed = go(strategy_flow(Strategy::Race, true), RunContext::in_memory()).await;
    assert!(
        matches!(failed.end, RunEnd::Failed { .. }),
        "a failing winner fails a race"
    );
}

#[tokio::test]
async fn any_ignores_failures_until_one_succeeds_and_all_fails_on_any_failure() {
    let mut wf = Wf::new("any").field("log", ValueType::Array, Some(json!([])), Reducer::Append);
    let par = wf.add(None, node("par", parallel(Strategy::Any, None, None)));
    wf.child(
        par,
        0,
        node("bad", NodeKind::Tool(Box::new(tool(&["false"])))),
    );
    wf.child(
        par,
        1,
        node(
            "good",
            NodeKind::Tool(Box::new(tool(&["sh", "-c", "sleep 0.05"]))),
        ),
    );
    wf.child(par, 1, node("good-set", set("log", "good")));
    let outcome = go(wf, RunContext::in_memory()).await;
    assert_eq!(outcome.end, RunEnd::Completed);
    assert_eq!(outcome.state["log"], json!(["good"]));

    let started = std::time::Instant::now();
    let all = go(strategy_flow(Strategy::All, true), RunContext::in_memory()).await;
    let RunEnd::Failed {
        node,
        class,
        message,
    } = all.end
    else {
        panic!("{:?}", all.end)
    };
    assert_eq!((node.as_str(), class), ("par", Some(ErrorClass::ToolExit)));
    assert!(message.contains("`fast`"), "{message}");
    assert!(
        started.elapsed() < StdDuration::from_secs(5),
        "the other branch was not cancelled"
    );
}

#[tokio::test]
async fn all_merges_static_branches_in_branch_order() {
    let mut wf = Wf::new("all")
        .field("log", ValueType::Array, Some(json!([])), Reducer::Append)
        .field("n", ValueType::Integer, Some(json!(0)), Reducer::Sum);
    let par = wf.add(None, node("par", parallel(Strategy::All, None, None)));
    wf.child(
        par,
        0,
        node("slow", NodeKind::Tool(Box::new(tool(&["sleep", "0.1"])))),
    );
    wf.child(par, 0, node("a", set("log", "first")));
    wf.child(par, 0, node("a2", set("n", "{{ 1 }}")));
    wf.child(par, 1, node("b", set("log", "second")));
    wf.child(par, 1, node("b2", set("n", "{{ 2 }}")));
    let outcome = go(wf, RunContext::in_memory()).await;
    assert_eq!(outcome.state, json!({"log": ["first", "second"], "n": 3}));
}

#[tokio::test(start_paused = true)]
async fn retries_back_off_honour_retry_after_and_then_succeed() {
    let mut wf =
        Wf::new("retry")
            .provider("fake")
            .field("out", ValueType::String, None, Reducer::Replace);
    let mut a = agent("hi");
    a.outputs = vec![output("out", ParseMode::Text)];
    let id = wf.add(None, node("flaky", NodeKind::Agent(Box::new(a))));
    wf.node_mut(id).retry = Some(Box::new(Retry {
        attempts: 3,
        backoff: Duration(1000),
        factor: 2.0,
        max_backoff: None,
        jitter: false,
        on: vec![],
        span: span(),
    }));
    let provider = TestProvider::new(|_, call| match call {
        0 => Err(ProviderError::RateLimited {
            adapter: "in-process",
            retry_after: Some(StdDuration::from_secs(30)),
        }),
        1 => Err(ProviderError::Server {
            adapter: "in-process",
            status: 500,
            message: "oops".to_owned(),
        }),
        _ => Ok("finally".to_owned()),
    });
    let mut ctx = RunContext::in_memory();
    ctx.providers = Providers::new().with("fake", provider.clone());
    let events = collecting(&mut ctx);
    let started = tokio::time::Instant::now();
    let outcome = go(wf, ctx).await;
    assert_eq!(outcome.end, RunEnd::Completed);
    assert_eq!(outcome.state["out"], json!("finally"));
    let delays: Vec<Value> = events
        .lock()
        .unwrap()
        .iter()
        .filter(|e| e["type"] == "retrying")
        .map(|e| e["delay_ms"].clone())
        .collect();
    assert_eq!(delays, [json!(30000), json!(2000)]);
    assert!(started.elapsed() >= StdDuration::from_secs(32));
}

#[tokio::test]
async fn retry_on_limits_classes_and_gives_up_after_attempts() {
    let mut wf =
        Wf::new("giveup")
            .provider("fake")
            .field("out", ValueType::Any, None, Reducer::Replace);
    let mut a = agent("hi");
    a.outputs = vec![output("out", ParseMode::Json)];
    let id = wf.add(None, node("bad", NodeKind::Agent(Box::new(a))));
    wf.node_mut(id).retry = Some(Box::new(Retry {
        attempts: 3,
        backoff: Duration(1),
        factor: 1.0,
        max_backoff: None,
        jitter: true,
        on: vec![ErrorClass::BadOutput],
        span: span(),
    }));
    let provider = TestProvider::new(|_, _| Ok("no json here".to_owned()));
    let mut ctx = RunContext::in_memory();
    ctx.providers = Providers::new().with("fake", provider.clone());
    let outcome = go(wf, ctx).await;
    assert!(matches!(
        outcome.end,
        RunEnd::Failed {
            class: Some(ErrorClass::BadOutput),
            ..
        }
    ));
    assert_eq!(provider.calls.load(std::sync::atomic::Ordering::SeqCst), 3);
}

#[tokio::test]
async fn on_error_goto_binds_error_at_the_recovery_node() {
    let mut wf = Wf::new("recover").field("why", ValueType::String, None, Reducer::Replace);
    let fails = wf.add(
        None,
        node("fails", NodeKind::Tool(Box::new(tool(&["false"])))),
    );
    wf.add(None, node("skipped", set("why", "not reached")));
    let rescue = wf.add(
        None,
        node("rescue", set("why", "{{ error.node }}: {{ error.class }}")),
    );
    wf.node_mut(rescue).recovery = true;
    wf.node_mut(fails).on_error = Some(Box::new(OnError::Goto {
        target: sp("rescue".to_owned()),
        jump: Jump::Node(rescue),
        span: span(),
    }));
    wf.node_mut(fails).goto = None;
    let outcome = go(wf, RunContext::in_memory()).await;
    assert_eq!(outcome.end, RunEnd::Completed, "{:?}", outcome.end);
    assert_eq!(outcome.state["why"], json!("fails: tool-exit"));
}

#[tokio::test]
async fn max_steps_and_budget_stop_the_run() {
    let mut wf = Wf::new("steps").field("n", ValueType::Integer, Some(json!(0)), Reducer::Sum);
    let l = wf.add(None, node("l", looped(None, None, 100)));
    wf.child(l, 0, node("inc", set("n", "{{ 1 }}")));
    wf.wf.limits.max_steps = Some(sp(5));
    let outcome = go(wf, RunContext::in_memory()).await;
    assert!(
        matches!(outcome.end, RunEnd::LimitReached { ref message } if message.contains("max-steps"))
    );
    assert_eq!(outcome.state["n"], json!(5));

    let mut wf = Wf::new("budget").provider("fake").field(
        "n",
        ValueType::Integer,
        Some(json!(0)),
        Reducer::Sum,
    );
    let l = wf.add(None, node("l", looped(None, None, 100)));
    wf.child(l, 0, node("ask", NodeKind::Agent(Box::new(agent("x")))));
    wf.wf.limits.max_budget_usd = Some(sp(1.0));
    let mut ctx = RunContext::in_memory();
    let provider = TestProvider::with(StdDuration::ZERO, Some(0.3), |_, _| Ok("ok".to_owned()));
    ctx.providers = Providers::new().with("fake", provider.clone());
    let outcome = go(wf, ctx).await;
    assert!(
        matches!(outcome.end, RunEnd::LimitReached { ref message } if message.contains("max-budget-usd"))
    );
    assert_eq!(provider.calls.load(std::sync::atomic::Ordering::SeqCst), 4);
    assert!((outcome.cost_usd - 1.2).abs() < 1e-9);
}

#[tokio::test(start_paused = true)]
async fn the_run_timeout_stops_a_slow_step() {
    let mut wf = Wf::new("slow").provider("fake");
    wf.add(None, node("ask", NodeKind::Agent(Box::new(agent("x")))));
    wf.wf.limits.timeout = Some(sp(Duration(5_000)));
    let mut ctx = RunContext::in_memory();
    ctx.providers = Providers::new().with(
        "fake",
        TestProvider::with(StdDuration::from_secs(3600), None, |_, _| Ok(String::new())),
    );
    let outcome = go(wf, ctx).await;
    assert!(
        matches!(outcome.end, RunEnd::LimitReached { ref message } if message.contains("time limit")),
        "{:?}",
        outcome.end
    );
}

fn wait_flow() -> Wf {
    let mut wf = Wf::new("approve")
        .field("before", ValueType::Array, Some(json!([])), Reducer::Append)
        .field("approved", ValueType::Boolean, None, Reducer::Replace)
        .field("after", ValueType::String, None, Reducer::Replace);
    wf.add(None, node("prep", set("before", "ran")));
    let mut wait = Wait {
        header: None,
        prompt: t("Ship {{ state.before | length }}?"),
        answer: AnswerType::YesNo,
        choices: vec![],
        outputs: vec![output("approved", ParseMode::Text)],
        auto_approve: None,
    };
    wait.outputs[0].parse = ParseMode::Text;
    wf.add(None, node("approve", NodeKind::Wait(Box::new(wait))));
    wf.add(
        None,
        node(
            "done",
            set("after", "{{ 'shipped' if state.approved else 'held' }}"),
        ),
    );
    wf
}

#[tokio::test]
async fn wait_pauses_and_resume_validates_then_continues_after_it() {
    let ctx = RunContext::in_memory();
    let plan = wait_flow().plan();
    let outcome = run(plan.clone(), Map::new(), ctx.clone()).await.unwrap();
    let RunEnd::Paused { waits } = &outcome.end else {
        panic!("{:?}", outcome.end)
    };
    let [wait] = waits.as_slice() else {
        panic!("one wait: {waits:?}")
    };
    assert_eq!(
        (
            wait.node_id.as_str(),
            wait.prompt.as_str(),
            wait.answer.as_str()
        ),
        ("approve", "Ship 1?", "yes-no")
    );
    let checkpoint = ctx.store.checkpoint(&outcome.run_id).await.unwrap();
    assert_eq!(checkpoint.run.status, atomic::store::RunStatus::Paused);
    assert_eq!(checkpoint.run.waits[0].prompt, "Ship 1?");

    let bad = resume(plan.clone(), &outcome.run_id, Some("perhaps"), ctx.clone())
        .await
        .unwrap_err();
    assert!(
        matches!(bad, RunError::BadAnswer { ref node, .. } if node == "approve"),
        "{bad}"
    );
    let missing = resume(plan.clone(), &outcome.run_id, None, ctx.clone())
        .await
        .unwrap_err();
    assert!(missing.to_string().contains("pass an answer"), "{missing}");

    let done = resume(plan.clone(), &outcome.run_id, Some("yes"), ctx.clone())
        .await
        .unwrap();
    assert_eq!(done.end, RunEnd::Completed);
    assert_eq!(
        done.state["before"],
        json!(["ran"]),
        "nothing before the wait re-ran"
    );
    assert_eq!(done.state["after"], json!("shipped"));
    assert_eq!(done.steps, 4, "prep, the pause, the answer, done");
    let finished = resume(plan, &outcome.run_id, None, ctx).await.unwrap_err();
    assert!(
        matches!(
            finished,
            RunError::Resume(ResumeError::Finished {
                status: atomic::store::RunStatus::Completed,
                ..
            })
        ),
        "{finished}"
    );
}

#[tokio::test(start_paused = true)]
async fn auto_approve_answers_after_its_delay() {
    let mut wf = wait_flow();
    let idx = wf.wf.find_node("approve").unwrap();
    if let NodeKind::Wait(wait) = &mut wf.node_mut(idx).kind {
        wait.auto_approve = Some(AutoApprove {
            after: sp(Duration(60_000)),
            answer: sp("no".to_owned()),
        });
    }
    let outcome = go(wf, RunContext::in_memory()).await;
    assert_eq!(outcome.end, RunEnd::Completed);
    assert_eq!(outcome.state["after"], json!("held"));
}

/// Real time: the deadline is wall-clock, kept in the store across processes.
#[tokio::test]
async fn an_auto_approve_wait_stopped_early_stays_paused_and_keeps_its_first_deadline() {
    let mut wf = wait_flow();
    let idx = wf.wf.find_node("approve").unwrap();
    if let NodeKind::Wait(wait) = &mut wf.node_mut(idx).kind {
        wait.auto_approve = Some(AutoApprove {
            after: sp(Duration(2_500)),
            answer: sp("no".to_owned()),
        });
    }
    let plan = wf.plan();
    let ctx = RunContext::in_memory();
    let token = ctx.cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(StdDuration::from_millis(200)).await;
        token.cancel();
    });
    let outcome = run(plan.clone(), Map::new(), ctx.clone()).await.unwrap();
    let RunEnd::Paused { waits } = &outcome.end else {
        panic!(
            "Ctrl-C on an auto-approve wait leaves the run paused: {:?}",
            outcome.end
        );
    };
    assert_eq!(waits[0].node_id, "approve");
    let auto_answer = waits[0].auto_answer.clone().zip(waits[0].auto_answer_at);
    let checkpoint = ctx.store.checkpoint(&outcome.run_id).await.unwrap();
    assert_eq!(checkpoint.run.status, atomic::store::RunStatus::Paused);
    let wait = checkpoint
        .run
        .waits
        .first()
        .cloned()
        .expect("the pause is recorded");
    assert_eq!(wait.auto_answer.as_deref(), Some("no"));
    let answer_at = wait.auto_answer_at.expect("with its deadline").0;
    // The outcome (and so the pause summary) carries the same answer and deadline.
    assert_eq!(
        auto_answer.as_ref(),
        Some(&("no".to_owned(), atomic::store::Timestamp(answer_at)))
    );
    assert_eq!(checkpoint.seq, 2, "prep, then the pause");

    // Resumed 1.5 s later, it waits only what is left of the first 2.5 s.
    tokio::time::sleep(StdDuration::from_millis(1_500)).await;
    let mut again = ctx.clone();
    again.cancel = tokio_util::sync::CancellationToken::new();
    let resumed_at = std::time::Instant::now();
    let done = tokio::time::timeout(
        StdDuration::from_secs(30),
        resume(plan, &outcome.run_id, None, again),
    )
    .await
    .expect("resume finishes")
    .unwrap();
    let waited = resumed_at.elapsed();
    assert_eq!(done.end, RunEnd::Completed);
    assert_eq!(
        done.state["after"],
        json!("held"),
        "the auto answer was `no`"
    );
    assert_eq!(
        done.steps, 4,
        "prep, the pause, the answer, done: nothing twice"
    );
    assert!(
        waited < StdDuration::from_millis(2_000),
        "waited {waited:?}: the delay started again instead of keeping {answer_at}"
    );
}

#[tokio::test]
async fn cancellation_kills_the_step_keeps_commits_and_resume_finishes() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log.txt");
    let mut wf = Wf::new("cancel");
    let line = |name: &str| {
        let mut t = tool(&[&format!("echo {name} >> {}", log.display())]);
        t.shell = true;
        NodeKind::Tool(Box::new(t))
    };
    wf.add(None, node("one", line("one")));
    let mut sleepy = tool(&["sh", "-c", "sleep 2"]);
    sleepy.shell = false;
    wf.add(None, node("sleepy", NodeKind::Tool(Box::new(sleepy))));
    wf.add(None, node("two", line("two")));
    let plan = wf.plan();
    let ctx = RunContext::in_memory();
    let token = ctx.cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(StdDuration::from_millis(300)).await;
        token.cancel();
    });
    let started = std::time::Instant::now();
    let outcome = run(plan.clone(), Map::new(), ctx.clone()).await.unwrap();
    assert_eq!(outcome.end, RunEnd::Cancelled);
    assert!(started.elapsed() < StdDuration::from_secs(10));
    assert_eq!(outcome.steps, 1);
    let checkpoint = ctx.store.checkpoint(&outcome.run_id).await.unwrap();
    assert_eq!(checkpoint.run.status, atomic::store::RunStatus::Cancelled);

    // Resume with a fresh token and a fast `sleepy` (same plan: swap nothing, just wait).
    let mut again = ctx.clone();
    again.cancel = tokio_util::sync::CancellationToken::new();
    let resumed = tokio::time::timeout(
        StdDuration::from_secs(60),
        resume(plan, &outcome.run_id, None, again),
    )
    .await;
    let resumed = resumed.expect("resume finishes").unwrap();
    assert_eq!(resumed.end, RunEnd::Completed);
    assert_eq!(
        std::fs::read_to_string(&log).unwrap(),
        "one\ntwo\n",
        "no completed step ran twice"
    );
}

#[tokio::test]
async fn emitted_events_match_the_schema() {
    let schema: Value =
        serde_json::from_str(include_str!("../../../schemas/events.schema.json")).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let mut wf = Wf::new("events")
        .provider("fake")
        .field("log", ValueType::Array, Some(json!([])), Reducer::Append)
        .field("n", ValueType::Integer, Some(json!(0)), Reducer::Replace);
    let par = wf.add(
        None,
        node(
            "fan",
            parallel(Strategy::All, Some(2), Some(("[1, 2]", "item"))),
        ),
    );
    wf.child(
        par,
        0,
        node("ask", NodeKind::Agent(Box::new(agent("{{ item }}")))),
    );
    wf.add(
        None,
        node("echo", NodeKind::Tool(Box::new(tool(&["echo", "line"])))),
    );
    let flaky = wf.add(
        None,
        node("flaky", NodeKind::Tool(Box::new(tool(&["false"])))),
    );
    wf.node_mut(flaky).on_error = Some(Box::new(OnError::Skip {
        fallback: vec![],
        span: span(),
    }));
    let decide = wf.add(
        None,
        node(
            "gate",
            NodeKind::Decision(Box::new(Decision {
                routes: vec![],
                otherwise: Some(route(None, Jump::Next, None)),
            })),
        ),
    );
    let _ = decide;
    wf.add(None, node("s", set("n", "{{ 1 }}")));
    wf.add(
        None,
        node(
            "approve",
            NodeKind::Wait(Box::new(Wait {
                header: Some("Go on".to_owned()),
                prompt: t("ok?"),
                answer: AnswerType::Choice,
                choices: vec![WaitChoice {
                    value: sp("go".to_owned()),
                    label: Some("Go".to_owned()),
                    description: Some("Carry on to the end".to_owned()),
                }],
                outputs: vec![],
                auto_approve: None,
            })),
        ),
    );
    let mut ctx = RunContext::in_memory();
    ctx.providers = Providers::new().with("fake", TestProvider::echo());
    let events = collecting(&mut ctx);
    let plan = wf.plan();
    let outcome = run(plan.clone(), Map::new(), ctx.clone()).await.unwrap();
    assert!(matches!(outcome.end, RunEnd::Paused { .. }));
    resume(plan, &outcome.run_id, Some("Go"), ctx)
        .await
        .unwrap();
    let events = events.lock().unwrap();
    let mut kinds: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    kinds.sort_unstable();
    kinds.dedup();
    for expected in [
        "run-started",
        "step-started",
        "step-finished",
        "values",
        "agent",
        "tool-output",
        "node-failed",
        "route",
        "debug",
        "run-paused",
        "run-finished",
    ] {
        assert!(
            kinds.contains(&expected),
            "no `{expected}` event in {kinds:?}"
        );
    }
    for event in events.iter() {
        let errors: Vec<String> = validator
            .iter_errors(event)
            .map(|e| e.to_string())
            .collect();
        assert!(
            errors.is_empty(),
            "{event} does not match the schema: {errors:?}"
        );
    }
    // A schema that accepted anything would make this test meaningless.
    assert!(!validator.is_valid(&json!({"type": "step-finished", "step": "one"})));
    assert!(!validator.is_valid(&json!({"type": "no-such-event"})));
}

/// The run reads the time from its executor's clock: every step's start and end, and the
/// deadline of an `auto-approve` wait.
#[tokio::test]
async fn step_times_come_from_the_context_clock() {
    #[derive(Debug)]
    struct Fixed;
    impl atomic::runtime::Clock for Fixed {
        fn now(&self) -> atomic::store::Timestamp {
            atomic::store::Timestamp(951_782_400_000)
        }
    }
    let mut ctx = RunContext::in_memory();
    ctx.executor = Arc::new(atomic::runtime::LocalExecutor::with_clock(Arc::new(Fixed)));
    let plan = wait_flow().plan();
    let outcome = run(plan, Map::new(), ctx.clone()).await.unwrap();
    assert!(matches!(outcome.end, RunEnd::Paused { .. }));
    let detail = ctx.store.run_detail(&outcome.run_id).await.unwrap();
    assert_eq!(detail.steps.len(), 2);
    for step in &detail.steps {
        assert_eq!(
            (step.started_at.0, step.finished_at.0),
            (951_782_400_000, 951_782_400_000)
        );
    }
}
