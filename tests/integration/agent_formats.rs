//! Agents, skills and commands as each tool writes them, through the binary: files in the
//! forms Claude Code, OpenCode and Copilot document are discovered where each tool keeps
//! them, normalised (OpenCode's `tools` map, `allowed-tools`, `aliases`, `argument-hint`
//! written `[a] [b]`), listed by `atomic list`, and used by a run; a wrong field is reported
//! by `check` naming the file and the field.

use serde_json::Value;

use crate::support::cli_project::{CliProject, stderr, stdout};

/// A project holding one definition of each form, and a home with none.
fn project() -> (CliProject, tempfile::TempDir) {
    let project = CliProject::new();
    // OpenCode: an agent whose tools are a map of names to true/false.
    project.write(
        ".opencode/agent/review.md",
        "---\ndescription: Reviews code for quality and best practices\nmode: subagent\nmodel: anthropic/claude-sonnet-4-20250514\ntemperature: 0.1\ntools:\n  write: false\n  edit: false\n  bash: false\n  read: true\n---\nYou are in code review mode. Focus on code quality.\n",
    );
    // OpenCode: a skill and a command in their own directories.
    project.write(
        ".opencode/skills/git-release/SKILL.md",
        "---\nname: git-release\ndescription: Create consistent releases and changelogs\nlicense: MIT\ncompatibility: opencode\n---\nDraft release notes from merged PRs.\n",
    );
    project.write(
        ".opencode/command/test.md",
        "---\ndescription: Run tests with coverage\nagent: build\n---\nRun the full test suite with coverage report and show any failures.\n",
    );
    // Claude Code: a command with `allowed-tools` and the documented `[a] [b]` hint.
    project.write(
        ".claude/commands/fix-issue.md",
        "---\nallowed-tools: Bash(git add:*), Bash(git status:*), Bash(git commit:*)\nargument-hint: [issue-number] [priority]\ndescription: Fix a GitHub issue\naliases: [fix]\n---\nFix issue #$1 with priority $2.\n",
    );
    // Copilot: an `.agent.md` with a list of tools.
    project.write(
        ".github/agents/planner.agent.md",
        "---\nname: planner\ndescription: Generates an implementation plan\ntools: ['search', 'fetch']\n---\nYou are in planning mode.\n",
    );
    (project, tempfile::tempdir().expect("a home"))
}

fn atomic(project: &CliProject, home: &tempfile::TempDir, args: &[&str]) -> std::process::Output {
    project
        .atomic()
        .env("HOME", home.path())
        .args(args)
        .output()
        .expect("atomic")
}

#[test]
fn every_documented_form_is_discovered_and_listed() {
    let (project, home) = project();
    let agents = stdout(&atomic(&project, &home, &["list", "agents"]));
    assert!(
        agents.contains("review   .opencode/agent/review.md  Reviews code for quality"),
        "{agents}"
    );
    assert!(
        agents.contains("planner  .github/agents/planner.agent.md"),
        "{agents}"
    );
    let skills = stdout(&atomic(&project, &home, &["list", "skills"]));
    assert!(
        skills.contains("git-release  .opencode/skills/git-release/SKILL.md  Create consistent"),
        "{skills}"
    );
    let commands: Value =
        serde_json::from_slice(&atomic(&project, &home, &["list", "commands", "--json"]).stdout)
            .expect("JSON");
    let fix = commands
        .as_array()
        .and_then(|all| all.iter().find(|c| c["name"] == "fix-issue"))
        .unwrap_or_else(|| panic!("{commands}"));
    assert_eq!(fix["arguments"], "[issue-number] [priority]");
    assert_eq!(fix["aliases"], serde_json::json!(["fix"]));
    assert_eq!(fix["from"], ".claude/commands/fix-issue.md");
    assert!(
        commands
            .as_array()
            .is_some_and(|all| all.iter().any(|c| c["name"] == "test")),
        "{commands}"
    );
}

#[test]
fn a_run_uses_them_normalised() {
    let (project, home) = project();
    project.write(
        "f.kdl",
        r#"workflow "w" {
    provider "m" adapter="in-process"
    state {
        field "fixed" type="string" default=""
        field "reviewed" type="string" default=""
    }
    agent "fix" use="command:fix" provider="m" prompt="42 high" {
        output "fixed"
    }
    agent "look" use="agent:review" provider="m" prompt="Look at src/" {
        output "reviewed"
    }
}
"#,
    );
    let check = atomic(&project, &home, &["check", "f.kdl"]);
    assert_eq!(check.status.code(), Some(0), "{}", stderr(&check));
    let run = atomic(&project, &home, &["run", "f.kdl", "--quiet"]);
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    let state = &project.show(&project.last_run())["state"];
    // The command found by its alias, its arguments put in place.
    assert_eq!(state["fixed"], "Fix issue #42 with priority high.");
    assert_eq!(state["reviewed"], "Look at src/");
}

#[test]
fn a_wrong_field_is_reported_with_its_file() {
    let (project, home) = project();
    project.write(
        ".claude/agents/odd.md",
        "---\ndescription: odd\nmodel: [sonnet, opus]\n---\nBody\n",
    );
    project.write(
        "f.kdl",
        r#"workflow "w" {
    provider "c" adapter="claude-code"
    agent "a" use="agent:odd" provider="c" prompt="Go"
}
"#,
    );
    let check = atomic(&project, &home, &["check", "f.kdl", "--format", "json"]);
    assert_eq!(check.status.code(), Some(1), "{}", stderr(&check));
    let report: Value = serde_json::from_slice(&check.stdout).expect("JSON");
    let message = report[0]["message"].as_str().unwrap_or_default();
    assert_eq!(report[0]["code"], "atomic::invalid-definition", "{report}");
    assert!(
        message.contains(".claude/agents/odd.md")
            && message.ends_with("`model` must be text, not a list"),
        "{message}"
    );
}
