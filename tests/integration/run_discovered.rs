//! `atomic run` with agents, skills and commands discovered in a temporary project and a
//! temporary home. The `claude-code` adapter drives a fake `claude` (a shell script) that
//! records the arguments and stdin of each call, so the test sees exactly what each agent
//! was given: system prompt, model, tools and prompt. No network.

use std::path::Path;

use crate::support::cli_project::{CliProject, stderr};

/// Records each call as `calls/<n>.args` (one argument per record, `\0`-separated) and
/// `calls/<n>.stdin`, then answers like `claude -p --output-format stream-json`.
const FAKE_CLAUDE: &str = r#"#!/bin/sh
dir="$(dirname "$0")/calls"
mkdir -p "$dir"
n=$(ls "$dir" | grep -c args)
for arg in "$@"; do printf '%s\0' "$arg"; done > "$dir/$n.args"
head -n 1 > "$dir/$n.stdin"
echo '{"type":"system","subtype":"init","session_id":"s-1","tools":[],"model":"m"}'
echo '{"type":"result","subtype":"success","is_error":false,"num_turns":1,"result":"done","session_id":"s-1"}'
"#;

const WORKFLOW: &str = r#"workflow "discovered" provider="claude" {
    input "target" type="string" default="src/lib.rs"
    provider "claude" adapter="claude-code" {
        option "bin" "./fake-claude"
    }
    agent "review" use="agent:reviewer" {
        system "Be brief."
        prompt "Review {{ input.target }}"
    }
    agent "fix" use="command:fix-issue" prompt="42 parser and more"
    agent "notes" use="skill:tone" prompt="Write the notes"
}
"#;

const REVIEWER: &str =
    "---\nname: reviewer\nmodel: sonnet\ntools: Read, Grep\n---\nYou are the project's reviewer.\n";

/// What the fake `claude` was given on call `n`: its arguments and its stdin.
struct Call {
    args: Vec<String>,
    stdin: String,
}

impl Call {
    fn read(project: &Path, n: usize) -> Self {
        let args = std::fs::read_to_string(project.join(format!("calls/{n}.args")))
            .unwrap_or_else(|error| panic!("call {n} was not made: {error}"));
        let stdin = std::fs::read_to_string(project.join(format!("calls/{n}.stdin")))
            .expect("stdin recorded");
        Self {
            args: args
                .split('\0')
                .filter(|arg| !arg.is_empty())
                .map(str::to_owned)
                .collect(),
            stdin,
        }
    }

    /// The value after `flag`, if it was given.
    fn flag(&self, flag: &str) -> Option<&str> {
        let at = self.args.iter().position(|arg| arg == flag)?;
        self.args.get(at + 1).map(String::as_str)
    }
}

fn project_with_definitions(home: &Path) -> CliProject {
    let project = CliProject::new();
    let fake = project.write("fake-claude", FAKE_CLAUDE);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755))
            .expect("make the fake executable");
    }
    project.write(".claude/agents/reviewer.md", REVIEWER);
    project.write(
        ".claude/commands/fix-issue.md",
        "---\nargument-hint: <issue> <area>\n---\nFix issue $1 in $2. Request: $ARGUMENTS\n",
    );
    // The user's reviewer loses to the project's; the user's skill is found.
    let user = |rel: &str, text: &str| {
        let path = home.join(rel);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("create dir");
        std::fs::write(path, text).expect("write");
    };
    user(
        ".claude/agents/reviewer.md",
        "---\nmodel: opus\n---\nYou are the user's reviewer.\n",
    );
    user(
        ".claude/skills/tone/SKILL.md",
        "---\ndescription: Tone\n---\nUse plain words.\n",
    );
    project
}

#[test]
fn discovered_definitions_reach_the_agents() {
    let home = tempfile::tempdir().expect("a temporary home");
    let project = project_with_definitions(home.path());
    project.write("flow.kdl", WORKFLOW);
    let output = project
        .atomic()
        .env("HOME", home.path())
        .args(["run", "flow.kdl", "--quiet"])
        .output()
        .expect("atomic run");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));

    let review = Call::read(project.path(), 0);
    assert_eq!(
        review.flag("--append-system-prompt"),
        Some("Be brief.\n\nYou are the project's reviewer.")
    );
    assert_eq!(review.flag("--model"), Some("sonnet"));
    assert_eq!(review.flag("--allowedTools"), Some("Read,Grep"));
    assert!(
        review.stdin.contains("Review src/lib.rs"),
        "{}",
        review.stdin
    );

    let fix = Call::read(project.path(), 1);
    assert_eq!(fix.flag("--append-system-prompt"), None);
    assert!(
        fix.stdin
            .contains("Fix issue 42 in parser. Request: 42 parser and more"),
        "{}",
        fix.stdin
    );

    let notes = Call::read(project.path(), 2);
    assert_eq!(
        notes.flag("--append-system-prompt"),
        Some("Follow the instructions of the `tone` skill:\n\nUse plain words.")
    );
    assert!(notes.stdin.contains("Write the notes"), "{}", notes.stdin);
}

#[test]
fn an_unknown_definition_stops_the_run_before_it_starts() {
    let home = tempfile::tempdir().expect("a temporary home");
    let project = project_with_definitions(home.path());
    project.write(
        "flow.kdl",
        &WORKFLOW.replace("agent:reviewer", "agent:reviewr"),
    );
    let output = project
        .atomic()
        .env("HOME", home.path())
        .args(["run", "flow.kdl", "--quiet"])
        .output()
        .expect("atomic run");
    assert_ne!(output.status.code(), Some(0));
    let stderr = stderr(&output);
    assert!(stderr.contains("atomic::unknown-definition"), "{stderr}");
    assert!(
        stderr.contains("did you mean `agent:reviewer`?"),
        "{stderr}"
    );
    assert!(!project.path().join("calls").exists(), "nothing ran");
}

/// A definition is part of what a run ran: editing it between `run` and `resume` is
/// refused like an edit of the workflow, unless `--force`, and the resumed agent then gets
/// the new text (discovery happens at each compile).
#[test]
fn resume_notices_an_edited_definition() {
    let home = tempfile::tempdir().expect("a temporary home");
    let project = project_with_definitions(home.path());
    project.write(
        "gated.kdl",
        r#"workflow "gated" provider="claude" {
    provider "claude" adapter="claude-code" {
        option "bin" "./fake-claude"
    }
    wait "go" prompt="Go?" answer="yes-no"
    agent "review" use="agent:reviewer" prompt="Review it"
}
"#,
    );
    let run = |args: &[&str]| {
        project
            .atomic()
            .env("HOME", home.path())
            .args(args)
            .output()
            .expect("atomic")
    };
    let output = run(&["run", "gated.kdl"]);
    assert_eq!(output.status.code(), Some(4), "{}", stderr(&output));
    let id = project.last_run();

    project.write(
        ".claude/agents/reviewer.md",
        &REVIEWER.replace("project's reviewer", "strict reviewer"),
    );
    let output = run(&["resume", &id, "--answer", "yes"]);
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{err}");
    assert!(err.contains("changed since run"), "{err}");
    assert!(!project.path().join("calls").exists(), "nothing ran");

    let output = run(&["resume", &id, "--answer", "yes", "--force"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let review = Call::read(project.path(), 0);
    assert_eq!(
        review.flag("--append-system-prompt"),
        Some("You are the strict reviewer.")
    );
}
