//! The engine's promises on Temporal: work shared by workers, each step once; a dead
//! worker's run moving to another; a wait answered through `resume` (a bad answer
//! refused, the run still paused); cancel; `on-error`; a restarted worker; a run long
//! enough to continue as new.

use std::collections::BTreeMap;
use std::time::Duration;

use super::{Cluster, await_lines, lines};
use crate::support::cli_project::{CliProject, stderr};

/// A tool step appending `line` (and the worker's name) to `out.txt` after `pause`
/// seconds, printing `value` as its output.
fn step(id: &str, line: &str, pause: &str, value: &str, output: &str) -> String {
    format!(
        r#"tool "{id}" idempotent=#true {{
            run "sh" "-c" "sleep {pause}; echo {line} $WORKER_NAME >> out.txt; echo {value}"
            output "{output}" parse="json"
        }}"#
    )
}

/// How often each line (without the worker's name) was written.
fn tally(written: &[String]) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for line in written {
        let step = line
            .split_whitespace()
            .next()
            .unwrap_or_default()
            .to_owned();
        *counts.entry(step).or_insert(0) += 1;
    }
    counts
}

/// The run id `atomic run --detach` printed.
fn detached(output: &std::process::Output) -> String {
    assert_eq!(output.status.code(), Some(0), "{}", stderr(output));
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
}

#[test]
fn two_workers_share_a_for_each_and_run_each_item_once() {
    let Some(mut cluster) = Cluster::start() else {
        return;
    };
    let project = CliProject::new();
    let items: Vec<String> = (0..12).map(|i| i.to_string()).collect();
    project.write(
        "fan.kdl",
        &format!(
            r#"workflow "fan" {{
    state {{
        field "items" type="array" default="[{items}]"
        field "out" type="array" reduce="append" default="[]"
    }}
    parallel "fan" for-each="state.items" as="it" max-concurrency=12 {{
        {work}
    }}
}}
"#,
            items = items.join(", "),
            work = step("work", "item-{{ it }}", "0.4", "{{ it * 2 }}", "out"),
        ),
    );
    // All twelve at once: the worker completing a workflow task takes up to three of the
    // activities it schedules eagerly, and with six at a time each later item (one per
    // completion) went to that worker too, so another saw work only by the luck of the
    // first matches (a full suite once left worker two idle). Nine matched at once reach both.
    cluster.worker(&project, "fan", "one");
    cluster.worker(&project, "fan", "two");
    cluster.await_pollers("fan", 2);
    let output = cluster.atomic(&project, "fan", &["run", "fan.kdl"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("`fan` completed"),
        "{}",
        stderr(&output)
    );

    let written = lines(&project, "out.txt");
    let counts = tally(&written);
    assert_eq!(counts.len(), 12, "every item ran: {written:?}");
    assert!(
        counts.values().all(|&n| n == 1),
        "each item ran once: {written:?}"
    );
    for worker in ["one", "two"] {
        assert!(
            written.iter().any(|line| line.ends_with(worker)),
            "worker `{worker}` did some of the work: {written:?}"
        );
    }
    let id = super::run_id(&output);
    let shown = cluster.show(&project, "fan", &id);
    let doubled: Vec<serde_json::Value> = (0..12).map(|i| (i * 2).into()).collect();
    assert_eq!(shown["state"]["out"], serde_json::Value::Array(doubled));
    assert_eq!(shown["run"]["status"], "completed");
}

/// A chain of `n` steps of `pause` seconds each, counting `state.n` up.
fn chain(n: usize, pause: &str) -> String {
    let steps: Vec<String> = (1..=n)
        .map(|i| {
            step(
                &format!("s{i}"),
                &format!("step-{i}"),
                pause,
                &i.to_string(),
                "n",
            )
        })
        .collect();
    format!(
        r#"workflow "chain" {{
    state {{
        field "n" type="integer" default=0
    }}
    {}
}}
"#,
        steps.join("\n    ")
    )
}

/// Runs the chain in the background, waits for `lines` lines, disturbs the workers with
/// `disturb`, follows the run to its end, and checks that every step ran, the completed ones
/// once.
fn disturbed_chain(disturb: impl FnOnce(&mut Cluster, &CliProject)) {
    let Some(mut cluster) = Cluster::start() else {
        return;
    };
    let project = CliProject::new();
    project.write("chain.kdl", &chain(6, "0.5"));
    cluster.worker(&project, "chain", "one");
    let run = detached(&cluster.atomic(&project, "chain", &["run", "chain.kdl", "--detach"]));
    await_lines(&project, "out.txt", 2, Duration::from_secs(60));
    disturb(&mut cluster, &project);
    let followed = cluster.atomic(&project, "chain", &["resume", &run]);
    assert_eq!(followed.status.code(), Some(0), "{}", stderr(&followed));

    let written = lines(&project, "out.txt");
    let counts = tally(&written);
    assert_eq!(counts.len(), 6, "every step ran: {written:?}");
    let repeats: usize = counts.values().map(|n| n - 1).sum();
    assert!(
        repeats <= 1,
        "only the step in flight may run again: {written:?}"
    );
    let shown = cluster.show(&project, "chain", &run);
    assert_eq!(shown["state"]["n"], 6);
    let order: Vec<&str> = shown["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .filter_map(|step| step["node_id"].as_str())
        .collect();
    assert_eq!(order, ["s1", "s2", "s3", "s4", "s5", "s6"]);
}

#[test]
fn a_worker_killed_mid_chain_hands_the_run_to_another() {
    disturbed_chain(|cluster, project| {
        cluster.worker(project, "chain", "two");
        cluster.kill_worker("one");
    });
}

#[test]
fn a_worker_restarted_mid_run_goes_on_with_it() {
    disturbed_chain(|cluster, project| {
        cluster.stop_worker("one");
        cluster.worker(project, "chain", "again");
    });
}

#[test]
fn a_wait_is_answered_through_resume_and_a_bad_answer_leaves_it_paused() {
    let Some(mut cluster) = Cluster::start() else {
        return;
    };
    let project = CliProject::new();
    project.write(
        "gate.kdl",
        &format!(
            r#"workflow "gate" {{
    state {{
        field "n" type="integer" default=0
        field "approved" type="boolean" default=#false
    }}
    {before}
    wait "approve" prompt="Ship?" answer="yes-no" {{
        output "approved"
    }}
    {after}
}}
"#,
            before = step("before", "before", "0", "1", "n"),
            after = step("after", "after", "0", "2", "n"),
        ),
    );
    cluster.worker(&project, "gate", "one");
    let output = cluster.atomic(&project, "gate", &["run", "gate.kdl"]);
    assert_eq!(output.status.code(), Some(4), "{}", stderr(&output));
    let text = stderr(&output);
    assert!(text.contains("paused at `approve`"), "{text}");
    let hint = format!("--temporal {}", cluster.address);
    assert!(
        text.contains(&hint),
        "the resume hint reaches Temporal: {text}"
    );
    let run = super::run_id(&output);

    let refused = cluster.atomic(&project, "gate", &["resume", &run, "--answer", "perhaps"]);
    assert_eq!(refused.status.code(), Some(4), "{}", stderr(&refused));
    assert!(
        stderr(&refused).contains("yes") && stderr(&refused).contains("approve"),
        "the refusal says what was expected: {}",
        stderr(&refused)
    );
    let shown = cluster.show(&project, "gate", &run);
    assert_eq!(shown["run"]["status"], "paused", "{shown}");
    assert_eq!(lines(&project, "out.txt").len(), 1);

    let answered = cluster.atomic(&project, "gate", &["resume", &run, "--answer", "yes"]);
    assert_eq!(answered.status.code(), Some(0), "{}", stderr(&answered));
    let shown = cluster.show(&project, "gate", &run);
    assert_eq!(shown["state"]["approved"], true);
    assert_eq!(shown["state"]["n"], 2);
    assert_eq!(shown["run"]["status"], "completed");
    assert_eq!(tally(&lines(&project, "out.txt")).len(), 2);
}

/// `permission="ask"` on Temporal: the agent's request pauses the run as a wait does (the
/// activity's pause reaches the workflow), a bad answer is refused by the update's
/// validator, and `allow-run` continues the agent and covers the next one.
#[test]
fn a_permission_request_pauses_the_run_and_is_answered_through_resume() {
    let Some(mut cluster) = Cluster::start() else {
        return;
    };
    let project = CliProject::new();
    project.write(
        "ask.kdl",
        r#"workflow "ask" {
    state {
        field "fixed" type="string" default=""
        field "checked" type="string" default=""
    }
    provider "bot" adapter="in-process" { option "asks" "Bash"; }
    agent "fix" provider="bot" permission="ask" {
        prompt "fix it"
        output "fixed"
    }
    agent "check" provider="bot" permission="ask" {
        prompt "check it"
        output "checked"
    }
}
"#,
    );
    cluster.worker(&project, "ask", "one");
    let output = cluster.atomic(&project, "ask", &["run", "ask.kdl"]);
    assert_eq!(output.status.code(), Some(4), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("`fix` asks to use `Bash`"),
        "{}",
        stderr(&output)
    );
    let run = super::run_id(&output);
    let shown = cluster.show(&project, "ask", &run);
    assert_eq!(
        shown["run"]["waits"][0]["permission"]["tool"], "Bash",
        "{shown}"
    );

    let refused = cluster.atomic(&project, "ask", &["resume", &run, "--answer", "perhaps"]);
    assert_eq!(refused.status.code(), Some(4), "{}", stderr(&refused));
    assert!(
        stderr(&refused).contains("allow-run"),
        "{}",
        stderr(&refused)
    );

    let answered = cluster.atomic(&project, "ask", &["resume", &run, "--answer", "allow-run"]);
    assert_eq!(answered.status.code(), Some(0), "{}", stderr(&answered));
    let shown = cluster.show(&project, "ask", &run);
    assert_eq!(shown["run"]["status"], "completed", "{shown}");
    assert_eq!(shown["state"]["fixed"], "Bash: allowed");
    assert_eq!(
        shown["state"]["checked"], "Bash: allowed",
        "not asked again"
    );
}

/// Calls to a provider that only computes inside atomic (here `in-process`) are local
/// activities, recorded as markers with the workflow task; a tool, which acts outside, is
/// still an activity any worker may take.
#[test]
fn instant_calls_are_local_activities_and_tools_are_activities() {
    let Some(mut cluster) = Cluster::start() else {
        return;
    };
    let project = CliProject::new();
    project.write(
        "mixed.kdl",
        &format!(
            r#"workflow "mixed" {{
    provider "echo" adapter="in-process" latency="20ms"
    state {{
        field "items" type="array" default="[1, 2, 3, 4, 5]"
        field "replies" type="array" reduce="append" default="[]"
        field "out" type="array" reduce="append" default="[]"
    }}
    parallel "fan" for-each="state.items" as="it" max-concurrency=2 {{
        agent "ask" provider="echo" prompt="item {{{{ it }}}}" {{
            output "replies"
        }}
    }}
    {tool}
}}
"#,
            tool = step("after", "after", "0", "7", "out"),
        ),
    );
    cluster.worker(&project, "mixed", "one");
    let output = cluster.atomic(&project, "mixed", &["run", "mixed.kdl"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let run = super::run_id(&output);
    let shown = cluster.show(&project, "mixed", &run);
    let mut replies: Vec<String> = shown["state"]["replies"]
        .as_array()
        .expect("the replies")
        .iter()
        .map(|reply| reply.as_str().unwrap_or_default().to_owned())
        .collect();
    replies.sort();
    assert_eq!(replies, ["item 1", "item 2", "item 3", "item 4", "item 5"]);
    assert_eq!(shown["state"]["out"], serde_json::json!([7]));

    let history = cluster.history(&run);
    let count = |kind: &str| history.iter().filter(|event| event.ends_with(kind)).count();
    assert_eq!(
        count("MARKER_RECORDED core_local_activity"),
        5,
        "one marker per call: {history:?}"
    );
    assert_eq!(
        count("MARKER_RECORDED core_patch"),
        1,
        "the run says it was made with local activities: {history:?}"
    );
    assert_eq!(
        count("ACTIVITY_TASK_SCHEDULED"),
        1,
        "the tool alone is an activity: {history:?}"
    );
    assert_eq!(lines(&project, "out.txt"), ["after one"]);
}

/// A local activity lives in its workflow task: when the worker running it dies, the task
/// goes to another worker, which runs the call again and goes on; the activity before it
/// (a tool, recorded in the history) does not run again.
#[test]
fn a_worker_killed_during_a_local_activity_hands_it_to_another() {
    let Some(mut cluster) = Cluster::start() else {
        return;
    };
    let project = CliProject::new();
    project.write(
        "slow.kdl",
        &format!(
            r#"workflow "slow" {{
    provider "slow" adapter="in-process" latency="3s"
    state {{
        field "n" type="integer" default=0
        field "reply" type="string" default=""
    }}
    {first}
    agent "think" provider="slow" prompt="thought through" {{
        output "reply"
    }}
    {last}
}}
"#,
            first = step("s1", "step-1", "0", "1", "n"),
            last = step("s2", "step-2", "0", "2", "n"),
        ),
    );
    cluster.worker(&project, "slow", "one");
    let run = detached(&cluster.atomic(&project, "slow", &["run", "slow.kdl", "--detach"]));
    await_lines(&project, "out.txt", 1, Duration::from_secs(60));
    // The call has started on worker one (it takes 3 s); worker one dies in it.
    std::thread::sleep(Duration::from_millis(800));
    cluster.worker(&project, "slow", "two");
    cluster.kill_worker("one");
    let followed = cluster.atomic(&project, "slow", &["resume", &run]);
    assert_eq!(followed.status.code(), Some(0), "{}", stderr(&followed));

    let shown = cluster.show(&project, "slow", &run);
    assert_eq!(shown["state"]["reply"], "thought through", "{shown}");
    assert_eq!(shown["state"]["n"], 2, "{shown}");
    let written = lines(&project, "out.txt");
    assert_eq!(
        tally(&written),
        BTreeMap::from([("step-1".to_owned(), 1), ("step-2".to_owned(), 1)]),
        "the tools ran once each: {written:?}"
    );
    assert!(
        written.iter().any(|line| line == "step-2 two"),
        "worker two finished the run: {written:?}"
    );
    let history = cluster.history(&run);
    assert!(
        history
            .iter()
            .any(|event| event.ends_with("WORKFLOW_TASK_TIMED_OUT")),
        "worker one's task, holding the call, was lost: {history:?}"
    );
    assert_eq!(
        history
            .iter()
            .filter(|event| event.ends_with("core_local_activity"))
            .count(),
        1,
        "the call is recorded once, by worker two: {history:?}"
    );
}

#[test]
fn cancel_stops_a_run_and_its_step_in_flight() {
    let Some(mut cluster) = Cluster::start() else {
        return;
    };
    let project = CliProject::new();
    project.write(
        "slow.kdl",
        r#"workflow "slow" {
    state {
        field "n" type="integer" default=0
    }
    tool "slow" {
        run "sh" "-c" "echo started >> out.txt; sleep 30; echo finished >> out.txt"
    }
}
"#,
    );
    cluster.worker(&project, "slow", "one");
    let run = detached(&cluster.atomic(&project, "slow", &["run", "slow.kdl", "--detach"]));
    await_lines(&project, "out.txt", 1, Duration::from_secs(60));
    let cancelled = cluster.atomic(&project, "slow", &["cancel", &run]);
    assert_eq!(cancelled.status.code(), Some(0), "{}", stderr(&cancelled));
    assert!(
        stderr(&cancelled).contains("cancelled"),
        "{}",
        stderr(&cancelled)
    );
    let shown = cluster.show(&project, "slow", &run);
    assert_eq!(shown["run"]["status"], "cancelled", "{shown}");
    // The step's process was ended on its worker, not left to finish.
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(lines(&project, "out.txt"), ["started"]);
}

#[test]
fn a_failing_step_takes_its_on_error_path() {
    let Some(mut cluster) = Cluster::start() else {
        return;
    };
    let project = CliProject::new();
    project.write(
        "recover.kdl",
        r#"workflow "recover" {
    state {
        field "note" type="string" default=""
    }
    tool "flaky" {
        run "sh" "-c" "echo tried >> out.txt; exit 3"
        retry "tool-exit" attempts=2 backoff="100ms" jitter=#false
        on-error "goto" "mend"
    }
    set "note" "not reached" goto="end"
    set "note" "mended after: {{ error.message }}" id="mend" recovery=#true
}
"#,
    );
    cluster.worker(&project, "recover", "one");
    let output = cluster.atomic(&project, "recover", &["run", "recover.kdl", "--quiet"]);
    let text = stderr(&output);
    assert_eq!(output.status.code(), Some(0), "{text}");
    assert_eq!(
        lines(&project, "out.txt"),
        ["tried", "tried"],
        "retried once"
    );
    let id = super::run_id(&output);
    let shown = cluster.show(&project, "recover", &id);
    let note = shown["state"]["note"].as_str().unwrap_or_default();
    assert!(note.starts_with("mended after"), "{shown}");
    assert!(
        note.contains("exit"),
        "the recovery reads the failure: {note}"
    );
}

#[test]
fn a_run_of_5000_steps_continues_as_new_and_completes() {
    let Some(mut cluster) = Cluster::start() else {
        return;
    };
    let project = CliProject::new();
    project.write(
        "long.kdl",
        r#"workflow "long" {
    state {
        field "n" type="integer" default=0
    }
    limits max-steps=20000
    loop "count" max=5001 until="state.n >= 5000" {
        tool "tick" idempotent=#true {
            run "echo" "{{ state.n + 1 }}"
            output "n" parse="json"
        }
    }
}
"#,
    );
    cluster.worker(&project, "long", "one");
    let output = cluster.atomic_within(
        &project,
        "long",
        &["run", "long.kdl", "--quiet"],
        Duration::from_secs(600),
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let id = super::run_id(&output);
    let shown = cluster.show(&project, "long", &id);
    // The server lists each execution; the listing catches up with the run shortly.
    let continued = (0..50).any(|_| {
        let listed = cluster.atomic(&project, "long", &["runs", "--json", "--limit", "100"]);
        let listed: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap_or_default();
        let found = listed.as_array().into_iter().flatten().any(|run| {
            run["id"].as_str() == Some(id.as_str()) && run["status"] == "continued-as-new"
        });
        if !found {
            std::thread::sleep(Duration::from_millis(200));
        }
        found
    });
    assert!(continued, "the run continued as new");
    assert_eq!(shown["state"]["n"], 5000);
    assert_eq!(shown["run"]["status"], "completed");
}

#[test]
fn the_address_comes_from_the_environment_or_the_project_config() {
    let Some(mut cluster) = Cluster::start() else {
        return;
    };
    let project = CliProject::new();
    project.write("one.kdl", &chain(1, "0"));
    project.write(
        ".atomic/config.kdl",
        &format!(
            "temporal \"{}\" namespace=\"default\" task-queue=\"configured\"\n",
            cluster.address
        ),
    );
    cluster.worker(&project, "configured", "one");
    // `--temporal` with no value: the project's server and task queue.
    let output = project
        .atomic()
        .args(["run", "one.kdl", "--quiet", "--temporal"])
        .output()
        .expect("atomic run");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    // ATOMIC_TEMPORAL wins over the config; a server that is not there is named.
    let output = project
        .atomic()
        .env("ATOMIC_TEMPORAL", "127.0.0.1:9")
        .args(["run", "one.kdl", "--quiet", "--temporal"])
        .output()
        .expect("atomic run");
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("cannot reach the Temporal server at `127.0.0.1:9`"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn a_paused_run_can_be_cancelled() {
    let Some(mut cluster) = Cluster::start() else {
        return;
    };
    let project = CliProject::new();
    project.write(
        "gate.kdl",
        &format!(
            r#"workflow "gate" {{
    state {{
        field "n" type="integer" default=0
        field "approved" type="boolean" default=#false
    }}
    {before}
    wait "approve" prompt="Ship?" answer="yes-no" {{
        output "approved"
    }}
}}
"#,
            before = step("before", "before", "0", "1", "n"),
        ),
    );
    cluster.worker(&project, "paused", "one");
    let output = cluster.atomic(&project, "paused", &["run", "gate.kdl", "--quiet"]);
    assert_eq!(output.status.code(), Some(4), "{}", stderr(&output));
    let run = super::run_id(&output);
    let cancelled = cluster.atomic(&project, "paused", &["cancel", &run]);
    assert_eq!(cancelled.status.code(), Some(0), "{}", stderr(&cancelled));
    let shown = cluster.show(&project, "paused", &run);
    assert_eq!(shown["run"]["status"], "cancelled", "{shown}");
    assert_eq!(shown["state"]["n"], 1, "the committed step is kept");
    // An answer now is refused: the run is over.
    let late = cluster.atomic(&project, "paused", &["resume", &run, "--answer", "yes"]);
    assert_ne!(late.status.code(), Some(0), "{}", stderr(&late));
}
