//! The agent's plan: where the backend has a plan the model sets with a tool (Claude
//! Code's task tools, OpenCode's `todowrite`, Gemini's `write_todos`, Codex's
//! `update_plan`), the model sets one by the subject's own tool name and the run's agent
//! events carry it as a `plan`, normalised; the tool call stays a tool call.

use serde_json::Value;

use super::Kit;
use super::model::{Move, script};
use super::subjects::{Subject, shown};

/// The agent's closing text.
const DONE: &str = "Planned: the kit's step is finished.";

pub(super) async fn the_agents_plan_reaches_the_run_events(subject: Subject) {
    let Some((calls, expected)) = subject.plan() else {
        return;
    };
    let mut moves = calls;
    moves.push(Move::Say(DONE.to_owned()));
    let Some(kit) = Kit::new(subject, script(moves)) else {
        return;
    };
    kit.flow(
        r#"    state { field "summary" type="string" default=""; }
    agent "act" provider="model" {
        prompt "Plan, then do what the kit asks."
        output "summary"
    }"#,
    );
    kit.run(&[], 0).await;
    let adapter = subject.adapter();
    assert_eq!(kit.state()["summary"], DONE, "`{adapter}`");
    let events = kit.agent_events(&kit.last_run());
    let plans: Vec<&Value> = events
        .iter()
        .filter(|event| event["type"] == "plan")
        .map(|event| &event["todos"])
        .collect();
    let offered: Vec<String> = kit
        .model
        .turns()
        .first()
        .and_then(|body| body["tools"].as_array().cloned())
        .unwrap_or_default()
        .iter()
        .filter_map(|tool| {
            tool["name"]
                .as_str()
                .or_else(|| tool["function"]["name"].as_str())
                .map(str::to_owned)
        })
        .collect();
    assert_eq!(
        plans.last().copied(),
        Some(&expected),
        "`{adapter}`: the last plan; every plan: {plans:#?}\nevents: {}\ntools offered: {offered:?}",
        shown(&Value::Array(events.clone()))
    );
    assert!(
        events.iter().any(|event| event["type"] == "tool-start") || subject == Subject::Codex,
        "`{adapter}`: the plan tool was not reported as a tool: {events:#?}"
    );
}
