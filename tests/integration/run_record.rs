//! `atomic run --record FILE` and secrets: a recorded run replays (through the `replay`
//! adapter) to the same final state, and a key given in the environment never reaches the
//! store, the event log, the cassette, stdout or stderr (even at `-vvv`).

use crate::support::cli_project::{CliProject, stderr, stdout};
use crate::support::fake_openai::{FakeOpenAi, Turn};

/// Two agent calls to a "model" whose replies differ on every run (they carry the clock),
/// so only a faithful replay can give the same final state.
const LIVE: &str = r#"workflow "rr" {
    state {
        field "first" type="string" default=""
        field "second" type="string" default=""
    }
    provider "model" adapter="command" {
        command "sh" "-c" "p=$(cat); echo \"reply to [$p] at $(date +%s%N)\""
    }
    agent "one" provider="model" {
        prompt "first question"
        output "first"
    }
    agent "two" provider="model" {
        prompt "second question, after: {{ state.first }}"
        output "second"
    }
}
"#;

#[test]
fn a_recorded_run_replays_to_the_same_final_state() {
    let project = CliProject::new();
    project.write("live.kdl", LIVE);
    let output = project
        .atomic()
        .args(["run", "live.kdl", "--record", "rr.cassette", "--quiet"])
        .output()
        .expect("atomic run --record");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let live = project.show(&project.last_run())["state"].clone();
    assert!(
        live["first"]
            .as_str()
            .is_some_and(|text| text.starts_with("reply to [first question] at ")),
        "{live}"
    );

    // A second live run differs (the clock moved)…
    let output = project
        .atomic()
        .args(["run", "live.kdl", "--quiet"])
        .output()
        .expect("atomic run");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_ne!(project.show(&project.last_run())["state"], live);

    // …the replay of the recording does not.
    let cassette = project.read("rr.cassette");
    assert_eq!(
        cassette.lines().count(),
        3,
        "a header and two calls: {cassette}"
    );
    let replay = LIVE.replace(
        r#"adapter="command" {
        command "sh" "-c" "p=$(cat); echo \"reply to [$p] at $(date +%s%N)\""
    }"#,
        r#"adapter="replay" cassette="rr.cassette""#,
    );
    assert_ne!(replay, LIVE);
    project.write("replay.kdl", &replay);
    let output = project
        .atomic()
        .args(["run", "replay.kdl", "--quiet"])
        .output()
        .expect("atomic run (replay)");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(project.show(&project.last_run())["state"], live);
}

const KEY: &str = "sk-atomic-test-0123456789abcdefSECRET";
const KEY_ENV: &str = "ATOMIC_TEST_API_KEY";

/// Every artefact a run leaves: the store's files, the cassette, the event log (as
/// `runs show` prints it).
fn assert_nowhere(project: &CliProject, outputs: &[&std::process::Output]) {
    let mut files = vec![project.path().join("rec.cassette")];
    for entry in std::fs::read_dir(project.path().join(".atomic")).expect("list .atomic") {
        files.push(entry.expect("an entry").path());
    }
    let mut searched = 0;
    for file in files.iter().filter(|file| file.is_file()) {
        let bytes = std::fs::read(file).expect("read artefact");
        searched += 1;
        assert!(
            !bytes
                .windows(KEY.len())
                .any(|window| window == KEY.as_bytes()),
            "the key is in {}",
            file.display()
        );
    }
    assert!(
        searched >= 2,
        "the store and the cassette were searched: {files:?}"
    );
    for output in outputs {
        assert!(!stdout(output).contains(KEY), "the key is on stdout");
        assert!(!stderr(output).contains(KEY), "the key is on stderr");
    }
    let id = project.last_run();
    let shown = serde_json::to_string(&project.show(&id)).expect("JSON");
    assert!(!shown.contains(KEY), "the key is in the run's history");
}

/// The key is used (the fake server refuses requests without it) and appears nowhere.
#[test]
fn an_api_key_never_reaches_the_store_the_log_the_cassette_or_the_terminal() {
    let fake = FakeOpenAi::start();
    fake.require_key(KEY);
    fake.push(Turn::text("The answer is 42."));
    let project = CliProject::new();
    project.write(
        "secret.kdl",
        &format!(
            r#"workflow "secret" {{
    state {{ field "answer" type="string" default="" }}
    provider "model" adapter="openai" base-url="{}/v1" api-key-env="{KEY_ENV}" model="fake-model"
    agent "ask" provider="model" {{
        prompt "What is the answer?"
        output "answer"
    }}
}}
"#,
            fake.url()
        ),
    );
    let output = project
        .atomic()
        .args([
            "-vvv",
            "run",
            "secret.kdl",
            "--record",
            "rec.cassette",
            "--stream",
            "debug",
        ])
        .env(KEY_ENV, KEY)
        .output()
        .expect("atomic run");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let id = project.last_run();
    assert_eq!(project.show(&id)["state"]["answer"], "The answer is 42.");
    assert_eq!(fake.remaining(), 0, "the model was called with the key");
    assert_nowhere(&project, &[&output]);
}

/// A provider that echoes its key on stderr and fails: the error the run reports, stores
/// and prints has it redacted.
#[test]
fn a_key_echoed_by_a_failing_provider_is_redacted() {
    let project = CliProject::new();
    project.write(
        "leaky.kdl",
        &format!(
            r#"workflow "leaky" {{
    state {{ field "answer" type="string" default="" }}
    provider "model" adapter="command" api-key-env="{KEY_ENV}" {{
        command "sh" "-c" "cat > /dev/null; echo \"rejected key ${KEY_ENV}\" >&2; exit 3"
    }}
    agent "ask" provider="model" {{
        prompt "hello"
        output "answer"
    }}
}}
"#
        ),
    );
    let output = project
        .atomic()
        .args([
            "run",
            "leaky.kdl",
            "--record",
            "rec.cassette",
            "--stream",
            "events",
        ])
        .env(KEY_ENV, KEY)
        .output()
        .expect("atomic run");
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{err}");
    assert!(err.contains("failed at `ask`"), "{err}");
    assert!(err.contains("rejected key"), "{err}");
    assert_nowhere(&project, &[&output]);
}

/// A model that echoes its key in its reply: the run goes on, but the checkpoint, the
/// event stream and the summary hold `[REDACTED]`, never the key.
#[test]
fn a_key_echoed_in_a_reply_is_redacted_everywhere_it_is_written() {
    let project = CliProject::new();
    project.write(
        "echo.kdl",
        &format!(
            r#"workflow "echo" {{
    state {{ field "answer" type="string" default="" }}
    provider "model" adapter="command" api-key-env="{KEY_ENV}" {{
        command "sh" "-c" "cat > /dev/null; echo \"my key is ${KEY_ENV}\""
    }}
    agent "ask" provider="model" {{
        prompt "hello"
        output "answer"
    }}
}}
"#
        ),
    );
    let output = project
        .atomic()
        .args([
            "run",
            "echo.kdl",
            "--record",
            "rec.cassette",
            "--stream",
            "values,events",
        ])
        .env(KEY_ENV, KEY)
        .output()
        .expect("atomic run");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(
        project.show(&project.last_run())["state"]["answer"],
        "my key is [REDACTED]"
    );
    assert!(stdout(&output).contains("my key is [REDACTED]"));
    assert_nowhere(&project, &[&output]);
}
