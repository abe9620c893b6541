//! `atomic run`, `resume`, `runs` and `schema` end to end through the binary: the README's
//! example, exit codes, waits and answers, run listings, event streams against their
//! schema, dry runs.

use serde_json::Value;

use crate::support::cli_project::{CliProject, stderr, stdout};
use crate::support::root;

/// A wait between a side effect and a decision: `draft` appends to `side.txt` (so a
/// re-run would show), `approve` takes a yes/no answer, `ship` runs only on yes.
const GATE: &str = r#"workflow "gate" {
    state {
        field "notes" type="string" default=""
        field "ok" type="boolean" default=#false
        field "shipped" type="array" reduce="append" default="[]"
    }
    tool "draft" {
        run "sh" "-c" "echo draft >> side.txt; echo notes-v1"
        output "notes"
    }
    wait "approve" prompt="Ship {{ state.notes | trim }}?" answer="yes-no" {
        output "ok"
    }
    decision "route" {
        when "state.ok" goto="ship"
        otherwise goto="end"
    }
    tool "ship" {
        run "sh" "-c" "echo ship >> side.txt; echo shipped"
        output "shipped" parse="lines"
    }
}
"#;

#[test]
fn the_readme_example_runs_end_to_end_with_no_key() {
    let project = CliProject::new();
    let hello = root().join("examples/hello.kdl");
    let output = project
        .atomic()
        .arg("run")
        .arg(&hello)
        .env_remove("ANTHROPIC_API_KEY")
        .output()
        .expect("atomic run");
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(0), "{err}");
    assert!(err.contains("`hello` completed · 3 steps"), "{err}");
    assert!(err.contains("30 tokens"), "{err}");
    assert!(err.contains("greeting   \"Hello, world!"), "{err}");
    // Not a terminal: plain lines, one per step.
    assert!(err.contains("✓ [1] agent `greet`"), "{err}");
    assert!(err.contains("✓ [2] tool `echo`"), "{err}");

    let runs = project.runs();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0]["status"], "completed");
    assert_eq!(runs[0]["steps"], 3);
    let shown = project.show(runs[0]["id"].as_str().expect("an id"));
    assert_eq!(shown["state"]["greetings"], 1);
    assert_eq!(
        shown["state"]["echoed"],
        "Hello, world! Glad you're here — let's build something.\n"
    );
}

#[test]
fn quiet_prints_only_the_summary() {
    let project = CliProject::new();
    let output = project
        .atomic()
        .args(["run", "--quiet", "--store", "memory"])
        .arg(root().join("examples/hello.kdl"))
        .output()
        .expect("atomic run");
    assert_eq!(output.status.code(), Some(0));
    let err = stderr(&output);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("✓ `hello` completed"), "{err}");
    assert!(stdout(&output).is_empty());
    // Memory store: nothing persisted.
    assert!(!project.path().join(".atomic/atomic.db").exists());
}

#[test]
fn a_failing_node_exits_one_naming_the_node_its_place_and_the_cause() {
    let project = CliProject::new();
    project.write(
        "boom.kdl",
        r#"workflow "boom" {
    state { field "x" type="integer" default=0 }
    set "x" expr="1"
    tool "explode" { run "sh" "-c" "echo kaboom >&2; exit 7"; }
}
"#,
    );
    let output = project
        .atomic()
        .args(["run", "boom.kdl"])
        .output()
        .expect("atomic run");
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{err}");
    assert!(
        err.contains("`boom` failed at `explode` (boom.kdl:4:10)"),
        "{err}"
    );
    assert!(err.contains("exited with code 7: kaboom"), "{err}");
    assert!(err.contains("tool-exit"), "{err}");
    let runs = project.runs();
    assert_eq!(runs[0]["status"], "failed");
}

#[test]
fn compile_errors_exit_one_and_run_nothing() {
    let project = CliProject::new();
    project.write(
        "bad.kdl",
        r#"workflow "bad" {
    tool "side" { run "touch" "ran.txt"; }
    decision "d" {
        when "true" goto="nowhere"
        otherwise goto="end"
    }
}
"#,
    );
    let output = project
        .atomic()
        .args(["run", "bad.kdl"])
        .output()
        .expect("atomic run");
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{err}");
    assert!(err.contains("atomic::undefined-node"), "{err}");
    assert!(err.contains("nothing was run"), "{err}");
    assert!(!project.path().join("ran.txt").exists());
}

#[test]
fn bad_inputs_exit_two_naming_the_input() {
    let project = CliProject::new();
    project.write(
        "typed.kdl",
        r#"workflow "typed" {
    input "count" type="integer"
    state { field "n" type="integer" default=0 }
    set "n" expr="input.count * 2"
}
"#,
    );
    let output = project
        .atomic()
        .args(["run", "typed.kdl", "--input", "count=many"])
        .output()
        .expect("atomic run");
    assert_eq!(output.status.code(), Some(2));
    let err = stderr(&output);
    assert!(
        err.contains("input `count` is declared `integer`: expected an integer, found `many`"),
        "{err}"
    );
    let output = project
        .atomic()
        .args(["run", "typed.kdl"])
        .output()
        .expect("atomic run");
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("input `count` is required: pass `--input count=…`"));
    let output = project
        .atomic()
        .args(["run", "typed.kdl", "--input", "count=21", "--quiet"])
        .output()
        .expect("atomic run");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    project.write("inputs.json", r#"{"count": 5}"#);
    let output = project
        .atomic()
        .args(["run", "typed.kdl", "--input-file", "inputs.json", "--quiet"])
        .output()
        .expect("atomic run");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let shown = project.show(&project.last_run());
    assert_eq!(shown["state"]["n"], 10);
}

/// Run to the wait (exit 4, the question and the exact resume command printed), a bad
/// answer (rejected, still paused, nothing re-run), then a good one: the run completes
/// and nothing before the wait ran twice.
#[test]
fn a_wait_pauses_and_resumes_with_a_checked_answer() {
    let project = CliProject::new();
    project.write("gate.kdl", GATE);
    let output = project
        .atomic()
        .args(["run", "gate.kdl"])
        .output()
        .expect("atomic run");
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(4), "{err}");
    let id = project.last_run();
    assert!(err.contains("`gate` paused at `approve`"), "{err}");
    assert!(err.contains("Ship notes-v1?"), "{err}");
    assert!(
        err.contains(&format!("atomic resume {id} --answer yes")),
        "{err}"
    );
    assert_eq!(project.runs()[0]["status"], "paused");

    // No answer, not a terminal: exit 4 with the question again.
    let output = project
        .atomic()
        .args(["resume", &id])
        .output()
        .expect("atomic resume");
    assert_eq!(output.status.code(), Some(4));
    assert!(stderr(&output).contains("needs an answer"));

    // A bad answer: rejected, still paused.
    let output = project
        .atomic()
        .args(["resume", &id, "--answer", "maybe"])
        .output()
        .expect("atomic resume");
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(4), "{err}");
    assert!(
        err.contains("the answer to `approve` is not valid: expected yes or no, found `maybe`"),
        "{err}"
    );
    assert_eq!(project.runs()[0]["status"], "paused");
    assert_eq!(project.runs()[0]["steps"], 2);

    // A prefix of the id is enough.
    let output = project
        .atomic()
        .args(["resume", &id[..10], "--answer", "yes"])
        .output()
        .expect("atomic resume");
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(0), "{err}");
    assert!(err.contains("resumed after step 2"), "{err}");
    assert_eq!(project.read("side.txt"), "draft\nship\n");
    let shown = project.show(&id);
    assert_eq!(shown["run"]["status"], "completed");
    assert_eq!(shown["state"]["ok"], true);
    assert_eq!(shown["state"]["shipped"], serde_json::json!(["shipped"]));

    // Finished runs are not resumed.
    let output = project
        .atomic()
        .args(["resume", &id])
        .output()
        .expect("atomic resume");
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr(&output).contains("has completed and cannot be resumed"));
}

/// A question asked the way an agent asks one: the stored wait keeps its header and each
/// choice's description, the summary, `runs show` and the event log show them, and the
/// answer is still the choice's value.
#[test]
fn a_question_keeps_its_header_and_descriptions_from_the_pause_to_every_view() {
    let project = CliProject::new();
    project.write(
        "pick.kdl",
        r#"workflow "pick" {
    state { field "database" type="string" default=""; }
    wait "pick" header="Database" prompt="Which database should the service use?" {
        choice "pg" label="PostgreSQL" description="Relational, the team knows it"
        choice "sqlite" label="SQLite" description="One file, no server"
        output "database"
    }
}
"#,
    );
    let output = project
        .atomic()
        .args(["run", "pick.kdl"])
        .output()
        .expect("atomic run");
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(4), "{err}");
    let id = project.last_run();
    // The summary: the header above the prompt, each description under its label.
    assert!(
        err.contains("  Database\n  Which database should the service use?\n"),
        "{err}"
    );
    assert!(
        err.contains("    pg      PostgreSQL\n            Relational, the team knows it\n"),
        "{err}"
    );
    assert!(err.contains("One file, no server"), "{err}");

    let wait = &project.show(&id)["run"]["waits"][0];
    assert_eq!(wait["header"], "Database", "{wait}");
    assert_eq!(wait["prompt"], "Which database should the service use?");
    let described: Vec<(&str, &str)> = wait["choices"]
        .as_array()
        .expect("choices")
        .iter()
        .map(|choice| {
            (
                choice["value"].as_str().unwrap_or_default(),
                choice["description"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        described,
        [
            ("pg", "Relational, the team knows it"),
            ("sqlite", "One file, no server")
        ]
    );

    let shown = stdout(
        &project
            .atomic()
            .args(["runs", "show", &id])
            .output()
            .expect("runs show"),
    );
    assert!(
        shown.contains(
            "waiting   at `pick` for a choice answer: [Database] Which database should the service use?"
        ),
        "{shown}"
    );
    let log = project
        .atomic()
        .args(["runs", "show", &id, "--events"])
        .output()
        .expect("atomic runs show --events");
    let events = schema_valid_events(&stdout(&log));
    let paused = events
        .iter()
        .find(|event| event["type"] == "run-paused")
        .expect("a run-paused event");
    assert_eq!(paused["header"], "Database", "{paused}");
    assert_eq!(
        paused["choices"][1]["description"], "One file, no server",
        "{paused}"
    );

    let output = project
        .atomic()
        .args(["resume", &id, "--answer", "sqlite"])
        .output()
        .expect("atomic resume");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(project.show(&id)["state"]["database"], "sqlite");
}

#[test]
fn a_paused_run_in_memory_says_it_cannot_be_resumed() {
    let project = CliProject::new();
    project.write("gate.kdl", GATE);
    let output = project
        .atomic()
        .args(["run", "gate.kdl", "--store", "memory"])
        .output()
        .expect("atomic run");
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(4), "{err}");
    assert!(err.contains("cannot be resumed"), "{err}");
    assert!(!err.contains("atomic resume"), "{err}");
    // And the full durability level runs the same.
    let output = project
        .atomic()
        .args(["run", "gate.kdl", "--durability", "full", "--quiet"])
        .output()
        .expect("atomic run");
    assert_eq!(output.status.code(), Some(4), "{}", stderr(&output));
    assert!(stderr(&output).contains("atomic resume"));
}

#[test]
fn resume_refuses_an_edited_workflow_unless_forced() {
    let project = CliProject::new();
    project.write("gate.kdl", GATE);
    let output = project
        .atomic()
        .args(["run", "gate.kdl", "--quiet"])
        .output()
        .expect("atomic run");
    assert_eq!(output.status.code(), Some(4));
    let id = project.last_run();
    project.write("gate.kdl", &GATE.replace("Ship {{", "Really ship {{"));
    let output = project
        .atomic()
        .args(["resume", &id, "--answer", "no"])
        .output()
        .expect("atomic resume");
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{err}");
    assert!(err.contains("changed since run"), "{err}");
    assert!(err.contains("--force"), "{err}");
    let output = project
        .atomic()
        .args(["resume", &id, "--answer", "no", "--force"])
        .output()
        .expect("atomic resume");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(project.read("side.txt"), "draft\n");
}

#[test]
fn runs_lists_and_shows_runs() {
    let project = CliProject::new();
    let output = project.atomic().arg("runs").output().expect("atomic runs");
    assert_eq!(output.status.code(), Some(0));
    assert!(stdout(&output).contains("no runs yet"));

    project.write("gate.kdl", GATE);
    project
        .atomic()
        .args(["run", "gate.kdl", "--quiet"])
        .assert()
        .code(4);
    let id = project.last_run();
    project
        .atomic()
        .args(["resume", &id, "--answer", "yes", "--quiet"])
        .assert()
        .code(0);
    let output = project.atomic().arg("runs").output().expect("atomic runs");
    let table = stdout(&output);
    let mut lines = table.lines();
    let header = lines.next().expect("a header");
    assert!(
        header.starts_with("ID") && header.contains("WORKFLOW") && header.contains("DURATION"),
        "{table}"
    );
    let row = lines.next().expect("a row");
    assert!(row.starts_with(&id), "{table}");
    assert!(row.contains("gate") && row.contains("completed"), "{table}");

    let output = project
        .atomic()
        .args(["runs", "show", &id])
        .output()
        .expect("atomic runs show");
    let text = stdout(&output);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        text.starts_with(&format!("run {id}  `gate`  completed")),
        "{text}"
    );
    for expected in [
        "notes = \"notes-v1\\n\"",
        "approve  waiting",
        "ok = true",
        "shipped += 1 item",
        "run-paused at `approve`",
        "route `route` → `ship`",
        "run-finished",
    ] {
        assert!(text.contains(expected), "missing {expected:?} in:\n{text}");
    }
    let output = project
        .atomic()
        .args(["runs", "--status", "paused"])
        .output()
        .expect("atomic runs");
    assert_eq!(stdout(&output), "no runs\n");
    let output = project
        .atomic()
        .args(["runs", "show", "zzzz"])
        .output()
        .expect("atomic runs show");
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr(&output).contains("no run `zzzz`"));
}

/// The events of JSONL `text`, each asserted valid against `schemas/events.schema.json`.
fn schema_valid_events(text: &str) -> Vec<Value> {
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("schemas/events.schema.json")).expect("schema"),
    )
    .expect("schema is JSON");
    let validator = jsonschema::validator_for(&schema).expect("a valid schema");
    let events: Vec<Value> = text
        .lines()
        .map(|line| serde_json::from_str(line).expect("each line is one JSON object"))
        .collect();
    for event in &events {
        let errors: Vec<String> = validator
            .iter_errors(event)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{event}: {errors:?}");
    }
    events
}

/// Every line of `--stream events` (and of the other modes) is valid against
/// `schemas/events.schema.json`, and the stream is complete: start to finish.
#[test]
fn event_streams_match_the_published_schema() {
    let project = CliProject::new();
    for modes in ["events", "values,updates", "debug"] {
        let output = project
            .atomic()
            .args(["run", "--quiet", "--stream", modes])
            .arg(root().join("examples/hello.kdl"))
            .output()
            .expect("atomic run");
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        let events = schema_valid_events(&stdout(&output));
        let kinds: Vec<&str> = events.iter().filter_map(|e| e["type"].as_str()).collect();
        assert_eq!(kinds.first(), Some(&"run-started"), "{modes}: {kinds:?}");
        assert_eq!(kinds.last(), Some(&"run-finished"), "{modes}: {kinds:?}");
        match modes {
            "events" => {
                assert!(
                    kinds.contains(&"agent") && kinds.contains(&"tool-output"),
                    "{kinds:?}"
                );
                assert!(!kinds.contains(&"values"), "{kinds:?}");
            }
            "values,updates" => {
                assert_eq!(
                    kinds.iter().filter(|k| **k == "values").count(),
                    3,
                    "{kinds:?}"
                );
                assert!(!kinds.contains(&"agent"), "{kinds:?}");
            }
            _ => {
                assert!(kinds.contains(&"debug"), "{kinds:?}");
                // The agent's debug event says what it used, as docs/runtime.md promises.
                let greet = events
                    .iter()
                    .find(|e| e["type"] == "debug" && e["node"] == "greet")
                    .unwrap_or_else(|| panic!("{events:?}"));
                assert!(
                    greet["usage"]["input_tokens"]
                        .as_u64()
                        .is_some_and(|n| n > 0),
                    "{greet}"
                );
            }
        }
    }
    let output = project
        .atomic()
        .args(["run", "--stream", "everything"])
        .arg(root().join("examples/hello.kdl"))
        .output()
        .expect("atomic run");
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("unknown stream mode `everything`"));
}

/// `atomic runs show RUN --events` prints the stored event log as JSONL, each line valid
/// against the published schema, from `run-started` to `run-finished`.
#[test]
fn the_stored_event_log_prints_as_jsonl() {
    let project = CliProject::new();
    let output = project
        .atomic()
        .args(["run", "--quiet"])
        .arg(root().join("examples/hello.kdl"))
        .output()
        .expect("atomic run");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let run = project.last_run();
    let output = project
        .atomic()
        .args(["runs", "show", &run, "--events"])
        .output()
        .expect("atomic runs show");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let events = schema_valid_events(&stdout(&output));
    let kinds: Vec<&str> = events.iter().filter_map(|e| e["type"].as_str()).collect();
    assert_eq!(kinds.first(), Some(&"run-started"), "{kinds:?}");
    assert_eq!(kinds.last(), Some(&"run-finished"), "{kinds:?}");

    let both = project
        .atomic()
        .args(["runs", "show", &run, "--events", "--json"])
        .output()
        .expect("atomic runs show");
    assert_eq!(both.status.code(), Some(2), "--events and --json conflict");
}

/// The stored log reads back as the run streamed it, byte for byte, though a plain step's
/// two events are stored as its kind alone and rebuilt from its row (steps with outputs,
/// routes or branches keep theirs whole).
#[test]
fn the_stored_log_is_the_streamed_log_though_plain_steps_store_only_their_kind() {
    let project = CliProject::new();
    let flow = project.write(
        "mixed.kdl",
        r#"workflow "mixed" {
    state {
        field "n" type="integer" default=0
        field "said" type="string" default=""
        field "log" type="array" reduce="append" default="[]"
    }
    loop "count" max=4 until="state.n >= 3" {
        set "n" expr="state.n + 1" id="inc"
        set "log" expr="state.n" id="note-n"
    }
    tool "say" {
        run "echo" "hello"
        output "said"
    }
    decision "route" {
        when "state.n >= 3" goto="end"
        otherwise goto="end"
    }
}
"#,
    );
    let streamed = project
        .atomic()
        .args(["run", "--stream", "events"])
        .arg(&flow)
        .output()
        .expect("atomic run");
    assert_eq!(streamed.status.code(), Some(0), "{}", stderr(&streamed));
    let run = project.last_run();
    let stored = project
        .atomic()
        .args(["runs", "show", &run, "--events"])
        .output()
        .expect("atomic runs show");
    assert_eq!(stored.status.code(), Some(0), "{}", stderr(&stored));
    // A tool's output lines are streamed live, not kept in the log.
    let kept: String = stdout(&streamed)
        .lines()
        .filter(|line| !line.starts_with(r#"{"type":"tool-output""#))
        .map(|line| format!("{line}\n"))
        .collect();
    assert_eq!(stdout(&stored), kept);

    let db = rusqlite::Connection::open(project.path().join(".atomic/atomic.db"))
        .expect("open the store");
    let columns: Vec<(String, String)> = db
        .prepare("SELECT node_id, events FROM steps ORDER BY seq")
        .and_then(|mut statement| {
            statement
                .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))?
                .collect()
        })
        .expect("read the steps");
    let implicit: Vec<&(String, String)> = columns
        .iter()
        .filter(|(_, events)| events.starts_with('"'))
        .collect();
    // The plain `inc` steps after the first (whose events begin with `run-started`); an
    // append's event writes its delta in another form than its row, so `note-n` keeps its
    // events whole, as do the tool (outputs, files) and the route.
    let expected = ("inc".to_owned(), "\"set\"".to_owned());
    assert_eq!(implicit, [&expected, &expected], "{columns:#?}");
}

#[test]
fn a_dry_run_prints_the_route_and_executes_nothing() {
    let project = CliProject::new();
    project.write("gate.kdl", GATE);
    let output = project
        .atomic()
        .args(["run", "gate.kdl", "--dry-run"])
        .output()
        .expect("atomic run");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let route = stdout(&output);
    let expected = [
        "dry run of `gate` (canned agent and tool results; nothing was called, started or stored):",
        "    1  tool     draft",
        "    2  wait     approve (answered `yes`)",
        "       decision route → ship",
        "    3  tool     ship",
        "  → end",
    ];
    assert_eq!(route, format!("{}\n", expected.join("\n")));
    // No process ran, nothing was stored.
    assert!(!project.path().join("side.txt").exists());
    assert!(!project.path().join(".atomic/atomic.db").exists());
}

#[test]
fn schemas_are_built_in() {
    let project = CliProject::new();
    let output = project
        .atomic()
        .arg("schema")
        .output()
        .expect("atomic schema");
    assert_eq!(output.status.code(), Some(0));
    assert!(stdout(&output).contains("events") && stdout(&output).contains("cassette"));
    let output = project
        .atomic()
        .args(["schema", "events"])
        .output()
        .expect("atomic schema");
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(
        stdout(&output),
        std::fs::read_to_string(root().join("schemas/events.schema.json")).expect("schema")
    );
    let output = project
        .atomic()
        .args(["schema", "nope"])
        .output()
        .expect("atomic schema");
    assert_eq!(output.status.code(), Some(2));
}

/// `atomic resume --force` after an edit that changed a field's type refuses before any step
/// runs, naming each field that no longer fits (and one no longer declared); the run stays
/// resumable once the edit is undone.
#[test]
fn a_forced_resume_refuses_state_the_edited_workflow_cannot_take() {
    let project = CliProject::new();
    let original = "workflow \"w\" {\n    state {\n        field \"n\" type=\"integer\" default=0\n        field \"note\" type=\"string\" default=\"x\"\n    }\n    set \"n\" expr=\"state.n + 1\"\n    wait \"ok\" prompt=\"Go?\" answer=\"yes-no\"\n    set \"n\" expr=\"state.n + 1\"\n}\n";
    project.write("f.kdl", original);
    let output = project
        .atomic()
        .args(["run", "f.kdl"])
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(4), "{}", stderr(&output));
    let id = project.last_run();
    let edited = "workflow \"w\" {\n    state { field \"n\" type=\"array\" default=\"[]\"; }\n    set \"n\" expr=\"state.n\"\n    wait \"ok\" prompt=\"Go?\" answer=\"yes-no\"\n    set \"n\" expr=\"state.n\"\n}\n";
    project.write("f.kdl", edited);
    let output = project
        .atomic()
        .args(["resume", &id, "--answer", "yes", "--force"])
        .output()
        .expect("resume");
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{err}");
    assert!(
        err.contains("field `n` holds `1`") && err.contains("`array`"),
        "{err}"
    );
    assert!(err.contains("field `note` is no longer declared"), "{err}");
    assert_eq!(project.show(&id)["run"]["status"], "paused", "nothing ran");

    project.write("f.kdl", original);
    let output = project
        .atomic()
        .args(["resume", &id, "--answer", "yes"])
        .output()
        .expect("resume");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(project.show(&id)["state"]["n"], 2);
}

/// `emit` raises a custom event with rendered data (a lone `{{ expr }}` keeps its type) into
/// the `events` stream and the stored log; its data templates are checked like any other.
#[test]
fn emit_raises_custom_events_in_the_stream_and_the_log() {
    let project = CliProject::new();
    project.write(
        "f.kdl",
        r#"workflow "w" {
    state { field "n" type="integer" default=0; }
    loop "count" max=3 until="state.n >= 2" {
        set "n" expr="state.n + 1"
        emit "progress" {
            data "done" "{{ state.n }}"
            data "note" "counted {{ state.n }}"
        }
    }
}
"#,
    );
    let output = project
        .atomic()
        .args(["run", "f.kdl", "--quiet", "--stream", "events"])
        .output()
        .expect("atomic run");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let events = schema_valid_events(&stdout(&output));
    let custom: Vec<&serde_json::Value> = events.iter().filter(|e| e["type"] == "custom").collect();
    assert_eq!(custom.len(), 2, "{events:?}");
    assert_eq!(custom[1]["name"], "progress");
    assert_eq!(custom[1]["node"], "emit-progress");
    assert_eq!(
        custom[1]["data"],
        serde_json::json!({"done": 2, "note": "counted 2"})
    );
    let logged = project
        .atomic()
        .args(["runs", "show", &project.last_run(), "--events"])
        .output()
        .expect("runs show");
    assert_eq!(
        stdout(&logged)
            .lines()
            .filter(|line| line.contains("\"custom\""))
            .count(),
        2
    );

    project.write(
        "bad.kdl",
        "workflow \"w\" {\n    emit \"x\" { data \"a\" \"{{ state.nope }}\"; }\n}\n",
    );
    let check = project
        .atomic()
        .args(["check", "bad.kdl"])
        .output()
        .expect("check");
    assert_eq!(check.status.code(), Some(1));
    assert!(stdout(&check).contains("nope") || stderr(&check).contains("nope"));
}

/// `atomic list adapters` shows every adapter from the one table, with what each supports;
/// the JSON form carries the same flags `check` judges by.
#[test]
fn list_adapters_shows_every_adapter_and_what_it_supports() {
    let project = CliProject::new();
    let output = project
        .atomic()
        .args(["list", "adapters", "--json"])
        .output()
        .expect("atomic list adapters");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let list: Vec<Value> = serde_json::from_slice(&output.stdout).expect("JSON");
    let names: Vec<&str> = list
        .iter()
        .map(|adapter| adapter["name"].as_str().unwrap_or("?"))
        .collect();
    for name in [
        "anthropic",
        "openai",
        "claude-code",
        "opencode",
        "copilot",
        "replay",
    ] {
        assert!(names.contains(&name), "{name}: {names:?}");
    }
    let claude = list
        .iter()
        .find(|adapter| adapter["name"] == "claude-code")
        .expect("claude-code");
    assert_eq!(claude["asks_people"], true);
    assert_eq!(claude["mcp"], true);
    assert!(
        claude["options"]
            .as_array()
            .is_some_and(|options| options.iter().any(|option| option == "mcp-config")),
        "{claude}"
    );
    let table = project
        .atomic()
        .args(["list", "adapters"])
        .output()
        .expect("atomic list adapters");
    let text = stdout(&table);
    assert!(
        text.contains("claude-code")
            && text.contains("supports: tools, permission, permission=ask, mcp"),
        "{text}"
    );
}

/// A tool that starts a server in the background (`server &`) ends when the tool itself
/// exits: the server holding the tool's output open is not waited for, what the tool wrote
/// is kept, and the server ends with the step.
#[test]
fn a_tool_leaving_a_process_that_holds_its_output_finishes_when_it_exits() {
    let project = CliProject::new();
    project.write(
        "bg.kdl",
        r#"workflow "bg" {
    state { field "out" type="string" default=""; }
    tool "serve" {
        run "sh" "-c" "sleep 300 & echo $! > server.pid; echo started"
        output "out"
    }
}
"#,
    );
    let output = project
        .atomic()
        .timeout(std::time::Duration::from_secs(60))
        .args(["run", "bg.kdl", "--quiet"])
        .output()
        .expect("atomic run");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let shown = project.show(&project.last_run());
    assert_eq!(shown["state"]["out"], "started\n", "{shown}");
    let pid = project.read("server.pid");
    let proc = format!("/proc/{}", pid.trim());
    let waited = std::time::Instant::now();
    while std::path::Path::new(&proc).exists() {
        assert!(
            waited.elapsed() < std::time::Duration::from_secs(15),
            "the background server outlived its step"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}
