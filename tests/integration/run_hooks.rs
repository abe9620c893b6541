//! `on "<event>" { run … }` hooks through `atomic run`: every event fires in order with
//! its payload, a failing `tool.before` blocks the tool (and `on-error` still applies),
//! and a failing notification hook is reported without changing the run.

use serde_json::Value;

use crate::support::cli_project::{CliProject, stderr, stdout};

/// A hook script that appends `<event> <node> <ok>` to `hooks.log` (`-` for what the
/// event does not carry), reading `ok` from the JSON payload on stdin.
const LOG_SCRIPT: &str = r#"payload=$(cat); ok=$(printf %s "$payload" | sed -n 's/.*"ok":\([a-z]*\).*/\1/p'); echo "$ATOMIC_HOOK_EVENT ${ATOMIC_NODE:--} ${ok:--}" >> hooks.log"#;

fn hooked_workflow(guard: &str) -> String {
    let events = [
        "run.start",
        "run.end",
        "node.start",
        "node.end",
        "tool.before",
        "tool.after",
        "session.start",
        "session.end",
    ];
    let mut hooks = String::new();
    for event in events {
        hooks.push_str(&format!(
            "    on \"{event}\" {{ run \"sh\" \"-c\" {} }}\n",
            kdl_string(LOG_SCRIPT)
        ));
    }
    format!(
        r#"workflow "hooked" {{
{hooks}    on "tool.before" {{ run "sh" "-c" {guard} }}
    provider "local" adapter="command" {{
        command "sh" "-c" "cat > /dev/null; echo ready"
    }}
    state {{
        field "n" type="integer" default=0
        field "out" type="string" default=""
        field "reply" type="string" default=""
    }}
    set "n" expr="state.n + 1"
    agent "ask" provider="local" {{
        prompt "Ready?"
        output "reply"
    }}
    tool "deploy" {{
        run "sh" "-c" "echo deployed >> side.txt; echo done"
        output "out"
        on-error "skip"
    }}
}}
"#,
        guard = kdl_string(guard),
    )
}

/// A KDL string literal of `text`.
fn kdl_string(text: &str) -> String {
    format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
}

#[test]
fn hooks_fire_in_order_with_the_event_node_and_outcome() {
    let project = CliProject::new();
    let flow = project.write("flow.kdl", &hooked_workflow("exit 0"));
    let output = project
        .atomic()
        .arg("run")
        .arg(&flow)
        .output()
        .expect("atomic run");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(project.read("side.txt"), "deployed\n");
    assert_eq!(
        project.read("hooks.log"),
        "run.start - -\n\
         node.start set-n -\n\
         node.end set-n true\n\
         node.start ask -\n\
         session.start ask -\n\
         session.end ask true\n\
         node.end ask true\n\
         node.start deploy -\n\
         tool.before deploy -\n\
         tool.after deploy true\n\
         node.end deploy true\n\
         run.end - -\n"
    );
}

#[test]
fn a_failing_tool_before_hook_blocks_the_tool() {
    let project = CliProject::new();
    let flow = project.write(
        "flow.kdl",
        &hooked_workflow("echo 'deploys are frozen' >&2; exit 1"),
    );
    let output = project
        .atomic()
        .arg("run")
        .arg(&flow)
        .args(["--stream", "events"])
        .output()
        .expect("atomic run");
    let err = stderr(&output);
    // `on-error "skip"` applies to a blocked tool as to any failure: the run completes.
    assert_eq!(output.status.code(), Some(0), "{err}");
    assert_eq!(project.read("side.txt"), "", "the blocked tool never ran");
    assert!(
        err.contains("`tool.before` hook `sh -c echo 'deploys are frozen' >&2; exit 1` for `deploy` exited with code 1: deploys are frozen; the action was blocked"),
        "{err}"
    );
    let log = project.read("hooks.log");
    assert!(log.contains("tool.before deploy -\n"), "{log}");
    assert!(
        !log.contains("tool.after"),
        "a blocked tool has no after: {log}"
    );
    assert!(log.contains("node.end deploy false\n"), "{log}");

    let events: Vec<Value> = stdout(&output)
        .lines()
        .map(|line| serde_json::from_str(line).expect("JSONL"))
        .collect();
    let failed: Vec<&Value> = events
        .iter()
        .filter(|event| event["type"] == "hook-failed")
        .collect();
    assert_eq!(failed.len(), 1, "{events:?}");
    assert_eq!(failed[0]["event"], "tool.before");
    assert_eq!(failed[0]["node"], "deploy");
    assert_eq!(failed[0]["blocked"], true);
    let node_failed = events
        .iter()
        .find(|event| event["type"] == "node-failed")
        .expect("the tool failed");
    assert!(
        node_failed["message"]
            .as_str()
            .is_some_and(|message| message.ends_with("so `deploy` did not run")),
        "{node_failed}"
    );
}

#[test]
fn a_failing_notification_hook_is_reported_and_changes_nothing() {
    let project = CliProject::new();
    let flow = project.write(
        "flow.kdl",
        r#"workflow "noisy" {
    on "node.end" { run "./missing-hook.sh" }
    state { field "n" type="integer" default=0 }
    set "n" expr="state.n + 1"
}
"#,
    );
    let output = project
        .atomic()
        .arg("run")
        .arg(&flow)
        .output()
        .expect("atomic run");
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(0), "{err}");
    assert!(
        err.contains("`node.end` hook `./missing-hook.sh` for `set-n` could not start"),
        "{err}"
    );
    assert!(!err.contains("blocked"), "{err}");
    let run = project.show(&project.last_run());
    assert_eq!(run["state"]["n"], 1, "{run}");
}
