//! Waits inside blocks, through the real binary: a `wait` in a parallel branch, in each
//! item of a for-each, or in a called subgraph pauses the run (exit 4) once the siblings
//! that do not wait have run to their end; `atomic runs show` lists every pending wait;
//! `atomic resume RUN --answer …` (with `--wait` naming one of several) continues exactly
//! there, a refused answer leaving the run paused, and no completed step runs again.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::support::cli_project::{CliProject, stderr, stdout};

/// A tool step appending `line` to `out.txt`.
fn mark(id: &str, line: &str) -> String {
    format!(r#"tool "{id}" idempotent=#true {{ run "sh" "-c" "echo {line} >> out.txt"; }}"#)
}

fn lines(project: &CliProject) -> Vec<String> {
    project.read("out.txt").lines().map(str::to_owned).collect()
}

fn counts(project: &CliProject) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for line in lines(project) {
        *counts.entry(line).or_insert(0) += 1;
    }
    counts
}

fn run(project: &CliProject, args: &[&str]) -> std::process::Output {
    project.atomic().args(args).output().expect("atomic runs")
}

fn waits(project: &CliProject, run: &str) -> Vec<String> {
    project.show(run)["run"]["waits"]
        .as_array()
        .map(|waits| {
            waits
                .iter()
                .map(|wait| {
                    let node = wait["node_id"].as_str().unwrap_or_default();
                    match wait["scope"].as_str() {
                        Some(scope) => format!("{scope}/{node}"),
                        None => node.to_owned(),
                    }
                })
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn a_wait_in_a_branch_pauses_after_its_siblings_and_resumes_there() {
    let project = CliProject::new();
    project.write(
        "main.kdl",
        &format!(
            r#"workflow "main" {{
    state {{
        field "approved" type="boolean" default=#false
    }}
    parallel "both" {{
        branch "asks" {{
            {a0}
            wait "approve" prompt="Ship it?" answer="yes-no" {{
                output "approved"
            }}
            {a1}
        }}
        branch "works" {{
            {b0}
            {b1}
        }}
    }}
    {after}
}}
"#,
            a0 = mark("a0", "a-0"),
            a1 = mark("a1", "a-1"),
            b0 = mark("b0", "b-0"),
            b1 = mark("b1", "b-1"),
            after = mark("after", "after"),
        ),
    );
    let first = run(&project, &["run", "main.kdl"]);
    assert_eq!(first.status.code(), Some(4), "{}", stderr(&first));
    let said = format!("{}{}", stdout(&first), stderr(&first));
    assert!(said.contains("paused at `both@1#0/approve`"), "{said}");
    assert!(said.contains("Ship it?"), "{said}");
    // The sibling that does not wait ran to its end; the waiting branch stopped at its wait.
    let mut before: Vec<String> = lines(&project);
    before.sort();
    assert_eq!(before, ["a-0", "b-0", "b-1"]);
    let id = project.last_run();
    assert_eq!(project.runs()[0]["status"], "paused");
    assert_eq!(waits(&project, &id), ["both@1#0/approve"]);
    let shown = stdout(&run(&project, &["runs", "show", &id]));
    assert!(
        shown.contains("waiting   at `both@1#0/approve` for a yes-no answer: Ship it?"),
        "{shown}"
    );

    let refused = run(&project, &["resume", &id, "--answer", "perhaps"]);
    assert_eq!(refused.status.code(), Some(4), "{}", stderr(&refused));
    assert!(stderr(&refused).contains("yes"), "{}", stderr(&refused));
    assert_eq!(
        project.runs()[0]["status"],
        "paused",
        "a refused answer changes nothing"
    );
    assert_eq!(lines(&project).len(), 3, "nothing ran on a refused answer");

    let done = run(&project, &["resume", &id, "--answer", "yes"]);
    assert_eq!(done.status.code(), Some(0), "{}", stderr(&done));
    let state = &project.show(&id)["state"];
    assert_eq!(state["approved"], json!(true));
    let expected: BTreeMap<String, usize> = ["a-0", "a-1", "after", "b-0", "b-1"]
        .into_iter()
        .map(|line| (line.to_owned(), 1))
        .collect();
    assert_eq!(counts(&project), expected, "no completed step ran twice");
}

#[test]
fn several_pending_waits_are_answered_one_by_one() {
    let project = CliProject::new();
    project.write(
        "main.kdl",
        &format!(
            r#"workflow "main" {{
    state {{
        field "items" type="array" default="[\"x\", \"y\"]"
        field "answers" type="array" reduce="append" default="[]"
    }}
    parallel "each" for-each="state.items" as="it" {{
        {work}
        wait "ok" prompt="Keep {{{{ it }}}}?" answer="string" {{
            output "answers"
        }}
    }}
}}
"#,
            work = mark("work", "work-{{ it }}"),
        ),
    );
    let first = run(&project, &["run", "main.kdl", "--quiet"]);
    assert_eq!(first.status.code(), Some(4), "{}", stderr(&first));
    let id = project.last_run();
    assert_eq!(waits(&project, &id), ["each@1#0/ok", "each@1#1/ok"]);

    // An answer without saying which wait it is for is refused, naming both.
    let unnamed = run(&project, &["resume", &id, "--answer", "keep"]);
    assert_eq!(unnamed.status.code(), Some(4), "{}", stderr(&unnamed));
    let said = stderr(&unnamed);
    assert!(said.contains("`each@1#0/ok`, `each@1#1/ok`"), "{said}");
    assert!(said.contains("--wait each@1#1/ok --answer"), "{said}");

    let second = run(
        &project,
        &["resume", &id, "--wait", "each@1#1/ok", "--answer", "keep y"],
    );
    assert_eq!(second.status.code(), Some(4), "{}", stderr(&second));
    assert_eq!(
        waits(&project, &id),
        ["each@1#0/ok"],
        "the other still waits"
    );

    let done = run(&project, &["resume", &id, "--answer", "keep x", "--quiet"]);
    assert_eq!(done.status.code(), Some(0), "{}", stderr(&done));
    assert_eq!(
        project.show(&id)["state"]["answers"],
        json!(["keep x", "keep y"]),
        "answers merge in item order, whatever order they came in"
    );
    let expected: BTreeMap<String, usize> = [("work-x".to_owned(), 1), ("work-y".to_owned(), 1)]
        .into_iter()
        .collect();
    assert_eq!(counts(&project), expected);
}

#[test]
fn a_wait_in_a_subgraph_pauses_the_run_and_resumes_inside_it() {
    let project = CliProject::new();
    project.write(
        "sub.kdl",
        &format!(
            r#"workflow "sub" {{
    state {{
        field "choice" type="string" default=""
    }}
    {s0}
    wait "pick" prompt="Which one?" answer="choice" {{
        choice "left"
        choice "right"
        output "choice"
    }}
    {s1}
}}
"#,
            s0 = mark("s0", "s-0"),
            s1 = mark("s1", "s-1"),
        ),
    );
    project.write(
        "main.kdl",
        &format!(
            r#"workflow "main" {{
    state {{
        field "picked" type="string" default=""
    }}
    {before}
    subgraph "inner" workflow="sub.kdl" {{
        output "picked" from="choice"
    }}
    {after}
}}
"#,
            before = mark("before", "before"),
            after = mark("after", "after"),
        ),
    );
    let check = run(&project, &["check", "main.kdl"]);
    assert_eq!(check.status.code(), Some(0), "{}", stderr(&check));
    let first = run(&project, &["run", "main.kdl", "--quiet"]);
    assert_eq!(first.status.code(), Some(4), "{}", stderr(&first));
    let id = project.last_run();
    assert_eq!(waits(&project, &id), ["inner@2/pick"]);
    let wrong = run(&project, &["resume", &id, "--answer", "middle"]);
    assert_eq!(wrong.status.code(), Some(4), "{}", stderr(&wrong));
    let done = run(&project, &["resume", &id, "--answer", "right", "--quiet"]);
    assert_eq!(done.status.code(), Some(0), "{}", stderr(&done));
    assert_eq!(project.show(&id)["state"]["picked"], json!("right"));
    assert_eq!(lines(&project), ["before", "s-0", "s-1", "after"]);
    let steps: Vec<Value> = project.show(&id)["steps"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let scoped: Vec<&str> = steps
        .iter()
        .filter_map(|step| step["scope"].as_str())
        .collect();
    assert!(
        scoped.iter().all(|scope| *scope == "inner@2") && scoped.len() == 4,
        "the subgraph's steps are kept under its scope: {steps:?}"
    );
}

/// A run stopped after a branch paused at its wait but before the run paused (Ctrl-C while a
/// sibling still ran) has no pending wait on record: `resume --answer` finds the wait from
/// the branch's committed steps and answers it.
#[test]
fn an_answer_reaches_a_branch_wait_the_run_did_not_record() {
    use nix::sys::signal::{Signal, kill};
    use nix::unistd::Pid;

    let project = CliProject::new();
    project.write(
        "main.kdl",
        &format!(
            r#"workflow "main" {{
    state {{
        field "approved" type="boolean" default=#false
    }}
    parallel "both" {{
        wait "approve" prompt="Ship it?" answer="yes-no" {{
            output "approved"
        }}
        branch "slow" {{
            tool "nap" idempotent=#true {{ run "sleep" "1"; }}
            {done}
        }}
    }}
}}
"#,
            done = mark("done", "slow-done"),
        ),
    );
    let mut child = project
        .spawn_command()
        .args(["run", "main.kdl", "--quiet"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn atomic run");
    // Wait until the branch's pause is committed, then Ctrl-C while `nap` still runs.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let runs = project.runs();
        if let Some(id) = runs.first().and_then(|run| run["id"].as_str()) {
            let steps = project.show(id)["steps"].clone();
            let paused = steps
                .as_array()
                .is_some_and(|steps| steps.iter().any(|step| step["status"] == "waiting"));
            if paused {
                break;
            }
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the branch never paused"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let pid = Pid::from_raw(i32::try_from(child.id()).expect("a pid"));
    kill(pid, Signal::SIGINT).expect("send SIGINT");
    let status = child.wait().expect("reap");
    assert_eq!(status.code(), Some(130));
    let id = project.last_run();
    assert!(waits(&project, &id).is_empty(), "no wait on record");

    let done = run(&project, &["resume", &id, "--answer", "yes", "--quiet"]);
    assert_eq!(done.status.code(), Some(0), "{}", stderr(&done));
    assert_eq!(project.show(&id)["state"]["approved"], json!(true));
    assert_eq!(counts(&project).get("slow-done"), Some(&1));
}
