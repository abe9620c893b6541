//! The context-window policy (`context warn=… act=… action=…`): warnings while a call runs,
//! and the compaction or fresh session applied when a full session is next continued.

use std::sync::{Arc, Mutex};

use atomic::ir::*;
use atomic::runtime::{Providers, RunContext, RunEnd, RunEvent, StreamModes, resume, run};
use serde_json::{Map, Value, json};

use super::build::*;
use super::nodes::go;
use super::provider::TestProvider;
use crate::support;

fn policy(warn: f64, act: f64, action: ContextAction) -> ContextPolicy {
    ContextPolicy {
        warn,
        act,
        action,
        span: span(),
    }
}

/// An agent named `id` that continues the session of `session` (if any) under `context`.
fn agent_node(id: &str, session: Option<&str>, context: Option<ContextPolicy>) -> Node {
    let mut agent = agent(&format!("{id} says hi"));
    agent.session = session.map(|from| sp(from.to_owned()));
    agent.context = context;
    node(id, NodeKind::Agent(Box::new(agent)))
}

fn context(provider: Arc<TestProvider>) -> RunContext {
    let mut ctx = RunContext::in_memory();
    ctx.providers = Providers::new().with("fake", provider);
    ctx
}

/// Collects every event, each checked against `schemas/events.schema.json`.
fn collecting(ctx: &mut RunContext) -> Arc<Mutex<Vec<Value>>> {
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(support::root().join("schemas/events.schema.json"))
            .expect("the events schema"),
    )
    .expect("the schema is JSON");
    let validator = jsonschema::validator_for(&schema).expect("a valid schema");
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = events.clone();
    ctx.stream = StreamModes::ALL;
    ctx.sink = Some(Arc::new(move |event: &RunEvent| {
        let value = serde_json::to_value(event).unwrap();
        let errors: Vec<String> = validator
            .iter_errors(&value)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{value}: {errors:?}");
        sink.lock().unwrap().push(value);
    }));
    events
}

fn of_type(events: &Mutex<Vec<Value>>, kind: &str) -> Vec<Value> {
    events
        .lock()
        .unwrap()
        .iter()
        .filter(|event| event["type"] == kind)
        .cloned()
        .collect()
}

#[tokio::test]
async fn context_warning_is_emitted_once_per_call_at_the_default_threshold() {
    let mut wf = Wf::new("warn").provider("fake");
    wf.add(None, agent_node("full", None, None));
    wf.add(None, agent_node("roomy", Some("full"), None));
    // The first call crosses 0.45 and keeps reporting; the second stays below it.
    let provider = TestProvider::windowed(&[&[0.3, 0.5, 0.6], &[0.2, 0.44]], false);
    let mut ctx = context(provider.clone());
    let events = collecting(&mut ctx);
    let outcome = go(wf, ctx).await;
    assert_eq!(outcome.end, RunEnd::Completed, "{:?}", outcome.end);
    assert_eq!(
        of_type(&events, "context-warning"),
        [json!({"type": "context-warning", "node": "full", "fraction": 0.5, "warn": 0.45})]
    );
    // No `context` child: warn only, the session is resumed as written.
    assert!(of_type(&events, "context-action").is_empty());
    assert_eq!(provider.requests()[1].session.resume.as_deref(), Some("s0"));
}

#[tokio::test]
async fn context_below_the_threshold_is_silent() {
    let mut wf = Wf::new("quiet").provider("fake");
    let strict = policy(0.8, 0.9, ContextAction::Fresh);
    wf.add(None, agent_node("a", None, Some(strict)));
    wf.add(None, agent_node("b", Some("a"), None));
    let provider = TestProvider::windowed(&[&[0.79], &[0.1]], false);
    let mut ctx = context(provider.clone());
    let events = collecting(&mut ctx);
    let outcome = go(wf, ctx).await;
    assert_eq!(outcome.end, RunEnd::Completed, "{:?}", outcome.end);
    assert!(of_type(&events, "context-warning").is_empty());
    assert!(of_type(&events, "context-action").is_empty());
    assert_eq!(provider.requests()[1].session.resume.as_deref(), Some("s0"));
}

#[tokio::test]
async fn context_fresh_drops_the_session_on_the_next_continuation() {
    let mut wf = Wf::new("fresh").provider("fake");
    let fresh = policy(0.45, 0.6, ContextAction::Fresh);
    wf.add(None, agent_node("a", None, Some(fresh)));
    wf.add(None, agent_node("b", Some("a"), None));
    wf.add(None, agent_node("c", Some("a"), None));
    let provider = TestProvider::windowed(&[&[0.7], &[0.1]], true);
    let mut ctx = context(provider.clone());
    let events = collecting(&mut ctx);
    let outcome = go(wf, ctx).await;
    assert_eq!(outcome.end, RunEnd::Completed, "{:?}", outcome.end);
    let requests = provider.requests();
    assert_eq!(
        (
            requests[1].session.resume.as_deref(),
            requests[1].session.compact
        ),
        (None, false),
        "`fresh` starts a new session even for a provider that could compact"
    );
    assert_eq!(
        requests[2].session.resume.as_deref(),
        Some("s1"),
        "`a`'s session now names the fresh one, and the action was taken once"
    );
    assert_eq!(
        of_type(&events, "context-action"),
        [
            json!({"type": "context-action", "node": "b", "session_of": "a", "action": "fresh", "fraction": 0.7})
        ]
    );
}

/// Run without any event sink or log: the policy watches the fractions anyway.
async fn compact_then_continue(can_compact: bool) -> Vec<atomic::providers::AgentRequest> {
    let mut wf = Wf::new("compact").provider("fake");
    let compact = policy(0.45, 0.6, ContextAction::Compact);
    wf.add(None, agent_node("a", None, Some(compact)));
    wf.add(None, agent_node("b", Some("a"), None));
    let provider = TestProvider::windowed(&[&[0.65]], can_compact);
    let mut ctx = context(provider.clone());
    ctx.log_events = false;
    assert!(ctx.sink.is_none());
    let outcome = go(wf, ctx).await;
    assert_eq!(outcome.end, RunEnd::Completed, "{:?}", outcome.end);
    provider.requests()
}

#[tokio::test]
async fn context_compact_sets_the_flag_only_for_a_compacting_provider() {
    let requests = compact_then_continue(true).await;
    assert_eq!(
        (
            requests[0].session.compact,
            requests[1].session.resume.as_deref(),
            requests[1].session.compact
        ),
        (false, Some("s0"), true)
    );
    let requests = compact_then_continue(false).await;
    assert_eq!(
        (
            requests[1].session.resume.as_deref(),
            requests[1].session.compact
        ),
        (None, false),
        "a provider that cannot compact starts a fresh session instead"
    );
}

#[tokio::test]
async fn context_none_only_warns() {
    let mut wf = Wf::new("none").provider("fake");
    let none = policy(0.45, 0.6, ContextAction::None);
    wf.add(None, agent_node("a", None, Some(none)));
    wf.add(None, agent_node("b", Some("a"), None));
    let provider = TestProvider::windowed(&[&[0.95], &[0.1]], true);
    let mut ctx = context(provider.clone());
    let events = collecting(&mut ctx);
    let outcome = go(wf, ctx).await;
    assert_eq!(outcome.end, RunEnd::Completed, "{:?}", outcome.end);
    assert_eq!(of_type(&events, "context-warning").len(), 1);
    assert!(of_type(&events, "context-action").is_empty());
    let requests = provider.requests();
    assert_eq!(
        (
            requests[1].session.resume.as_deref(),
            requests[1].session.compact
        ),
        (Some("s0"), false)
    );
}

#[tokio::test]
async fn context_fresh_in_a_loop_keeps_continuing_the_new_session() {
    let mut wf = Wf::new("loop").provider("fake");
    wf.add(None, agent_node("plan", None, None));
    let turns = wf.add(None, node("turns", looped(Some("false"), None, 3)));
    let fresh = policy(0.45, 0.6, ContextAction::Fresh);
    wf.child(turns, 0, agent_node("work", Some("plan"), Some(fresh)));
    // plan, then work ×3: the first turn fills the window, the second starts afresh.
    let provider = TestProvider::windowed(&[&[0.1], &[0.7], &[0.2]], false);
    let outcome = go(wf, context(provider.clone())).await;
    assert_eq!(outcome.end, RunEnd::Completed, "{:?}", outcome.end);
    let resumed: Vec<Option<String>> = provider
        .requests()
        .into_iter()
        .map(|request| request.session.resume)
        .collect();
    assert_eq!(
        resumed,
        [None, Some("s0".to_owned()), None, Some("s2".to_owned())]
    );
}

#[tokio::test]
async fn context_action_pending_at_a_pause_survives_resume() {
    let mut wf = Wf::new("pause").provider("fake").field(
        "approved",
        ValueType::Boolean,
        None,
        Reducer::Replace,
    );
    let fresh = policy(0.45, 0.6, ContextAction::Fresh);
    wf.add(None, agent_node("a", None, Some(fresh)));
    let wait = Wait {
        header: None,
        prompt: t("Go on?"),
        answer: AnswerType::YesNo,
        choices: vec![],
        outputs: vec![output("approved", ParseMode::Text)],
        auto_approve: None,
    };
    wf.add(None, node("approve", NodeKind::Wait(Box::new(wait))));
    wf.add(None, agent_node("b", Some("a"), None));
    let provider = TestProvider::windowed(&[&[0.7], &[0.1]], false);
    let ctx = context(provider.clone());
    let plan = wf.plan();
    let paused = run(plan.clone(), Map::new(), ctx.clone()).await.unwrap();
    assert!(
        matches!(paused.end, RunEnd::Paused { .. }),
        "{:?}",
        paused.end
    );
    let cursor = ctx
        .store
        .checkpoint(&paused.run_id)
        .await
        .unwrap()
        .cursor
        .expect("a cursor");
    assert_eq!(
        cursor["context_actions"]["s0"],
        json!({"node": "a", "action": "fresh", "fraction": 0.7})
    );
    let done = resume(plan, &paused.run_id, Some("yes"), ctx)
        .await
        .unwrap();
    assert_eq!(done.end, RunEnd::Completed, "{:?}", done.end);
    assert_eq!(provider.requests()[1].session.resume, None);
}
