//! One workflow, any backend, through the binary: `--provider ADAPTER` (or `adapter` in
//! `.atomic/config.kdl`) runs every agent provider on another adapter, checked as if the
//! workflow had been written so, and a run started on swapped adapters resumes only on them.

use crate::support::cli_project::{CliProject, stderr};

const FLOW: &str = r#"workflow "w" {
    provider "agent" adapter="claude-code"
    state { field "ok" type="boolean" default=#false; }
    wait "go" prompt="Go?" answer="yes-no" { output "ok"; }
    decision "gate" {
        when "not state.ok" goto="end"
        otherwise
    }
    agent "fix" provider="agent" permission="accept-edits" {
        prompt "Fix it"
        tools "Read" "Edit"
    }
}
"#;

fn run(project: &CliProject, args: &[&str]) -> std::process::Output {
    project.atomic().args(args).output().expect("atomic")
}

#[test]
fn a_swap_is_checked_as_if_written() {
    let project = CliProject::new();
    project.write("f.kdl", FLOW);
    // The model API has no tools of its own: `Read` and `Edit` are not custom tools.
    let refused = run(
        &project,
        &["run", "f.kdl", "--provider", "anthropic", "--dry-run"],
    );
    let err = stderr(&refused);
    assert_eq!(refused.status.code(), Some(1), "{err}");
    assert!(err.contains("`anthropic` has no built-in tools"), "{err}");
    assert!(err.contains("checked on `anthropic`"), "{err}");
    let fine = run(
        &project,
        &["run", "f.kdl", "--provider", "opencode", "--dry-run"],
    );
    assert_eq!(fine.status.code(), Some(0), "{}", stderr(&fine));
    let unknown = run(&project, &["run", "f.kdl", "--provider", "nope"]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(
        stderr(&unknown).contains("expected one of"),
        "{}",
        stderr(&unknown)
    );

    // The project's default, which `--provider` overrides.
    project.write(".atomic/config.kdl", "adapter \"anthropic\"\n");
    let configured = run(&project, &["run", "f.kdl", "--dry-run"]);
    assert_eq!(configured.status.code(), Some(1), "{}", stderr(&configured));
    let overridden = run(
        &project,
        &["run", "f.kdl", "--provider", "copilot", "--dry-run"],
    );
    assert_eq!(overridden.status.code(), Some(0), "{}", stderr(&overridden));
}

#[test]
fn a_run_on_swapped_adapters_resumes_only_on_them() {
    // The swapped provider is built for the run, so its CLI must be found (it is not called).
    let Some(opencode) = crate::support::tools::agent_cli("opencode", "opencode-ai") else {
        return;
    };
    let dir = opencode
        .parent()
        .expect("a directory")
        .display()
        .to_string();
    let path = format!("{dir}:{}", std::env::var("PATH").unwrap_or_default());
    let run = |project: &CliProject, args: &[&str]| {
        project
            .atomic()
            .env("PATH", &path)
            .args(args)
            .output()
            .expect("atomic")
    };
    let project = CliProject::new();
    project.write("f.kdl", FLOW);
    let paused = run(
        &project,
        &["run", "f.kdl", "--provider", "opencode", "--quiet"],
    );
    assert_eq!(paused.status.code(), Some(4), "{}", stderr(&paused));
    let id = project.last_run();
    let refused = run(&project, &["resume", &id, "--answer", "no"]);
    assert_eq!(refused.status.code(), Some(1), "{}", stderr(&refused));
    assert!(
        stderr(&refused).contains("changed since run"),
        "{}",
        stderr(&refused)
    );
    // Answered `no`, the run ends without reaching the agent's CLI.
    let done = run(
        &project,
        &[
            "resume",
            &id,
            "--answer",
            "no",
            "--provider",
            "opencode",
            "--quiet",
        ],
    );
    assert_eq!(done.status.code(), Some(0), "{}", stderr(&done));
    assert_eq!(project.show(&id)["run"]["status"], "completed");
}

/// A swap is judged on what the agents ask of the adapter swapped to, whatever swapped
/// it: `permission="ask"` is fine on Claude Code, not on Codex (which cannot ask).
#[test]
fn a_swap_to_an_adapter_that_cannot_ask_is_refused_by_check_and_run() {
    const ASKS: &str = r#"workflow "w" {
    provider "agent" adapter="claude-code"
    agent "fix" provider="agent" permission="ask" {
        prompt "Fix it"
    }
}
"#;
    let project = CliProject::new();
    project.write("f.kdl", ASKS);
    let written = run(&project, &["check", "f.kdl"]);
    assert_eq!(written.status.code(), Some(0), "{}", stderr(&written));
    project.write(".atomic/config.kdl", "adapter \"codex\"\n");
    for args in [&["check", "f.kdl"][..], &["run", "f.kdl", "--dry-run"][..]] {
        let refused = run(&project, args);
        let err = format!(
            "{}{}",
            String::from_utf8_lossy(&refused.stdout),
            stderr(&refused)
        );
        assert_eq!(refused.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains("unsupported-feature"), "{args:?}: {err}");
        assert!(err.contains("runs on `codex`"), "{args:?}: {err}");
    }
    let flag = run(
        &project,
        &["run", "f.kdl", "--provider", "codex", "--dry-run"],
    );
    assert_eq!(flag.status.code(), Some(1), "{}", stderr(&flag));
}

/// A swap carries a known model over in the form the new backend needs (`sonnet` is
/// `anthropic/claude-sonnet-4-5` on OpenCode, as the real example shows), refuses one the
/// new backend cannot run saying how to pass another (`--model`), and `--model` fixes it.
#[test]
fn a_swap_maps_the_model_or_refuses_it_with_the_fix() {
    let project = CliProject::new();
    let example =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/review-and-fix.kdl");
    let example = example.display().to_string();
    let mapped = run(
        &project,
        &["run", &example, "--provider", "opencode", "--dry-run"],
    );
    assert_eq!(mapped.status.code(), Some(0), "{}", stderr(&mapped));

    let refused = run(
        &project,
        &["run", &example, "--provider", "codex", "--dry-run"],
    );
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&refused.stdout),
        stderr(&refused)
    );
    assert_eq!(refused.status.code(), Some(1), "{said}");
    assert!(said.contains("wrong-model"), "{said}");
    assert!(
        said.contains("cannot run `sonnet`, a model of Anthropic"),
        "{said}"
    );
    assert!(said.contains("runs on `codex`"), "{said}");
    assert!(said.contains("--model"), "{said}");

    let chosen = run(
        &project,
        &[
            "run",
            &example,
            "--provider",
            "codex",
            "--model",
            "gpt-5.1-codex",
            "--dry-run",
        ],
    );
    assert_eq!(chosen.status.code(), Some(0), "{}", stderr(&chosen));
}

/// OpenCode needs `provider/model`: a known model written bare is an error whose fix is
/// the model so written.
#[test]
fn an_opencode_model_written_bare_is_refused_with_its_full_name() {
    let project = CliProject::new();
    project.write(
        "f.kdl",
        r#"workflow "w" {
    provider "oc" adapter="opencode" model="sonnet"
    agent "a" provider="oc" { prompt "Go"; }
}
"#,
    );
    let checked = run(&project, &["check", "f.kdl"]);
    let said = String::from_utf8_lossy(&checked.stdout).into_owned();
    assert_eq!(checked.status.code(), Some(1), "{said}");
    assert!(said.contains("wrong-model"), "{said}");
    assert!(
        said.contains("write `anthropic/claude-sonnet-4-5`"),
        "{said}"
    );
}
