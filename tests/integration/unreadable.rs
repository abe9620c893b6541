//! Every input is reported, never passed over: a workflow that is missing, a directory or
//! not readable is exit 3 with the reason in every output format; one that is not UTF-8 is
//! a problem in the file (exit 1) at its first bad byte; files a workflow pulls in (tool
//! files, discovered definitions) are reported at the reference with the reason. Never an
//! "ok" when anything was not checked.

use std::path::Path;

use serde_json::Value;

use crate::support::cli_project::{CliProject, stderr, stdout};

const CLEAN: &str = "workflow \"clean\" {\n    state { field \"x\" type=\"string\" default=\"\"; }\n    set \"x\" \"1\"\n}\n";

/// A workflow saved as Latin-1: the first bad byte (`é` as 0xE9) is on line 3, column 23
/// (counted in characters, as everywhere: the two-byte `ö` before it is one).
const LATIN1: &[u8] =
    b"// caf\xc3\xa9 au lait\nworkflow \"w\" {\n    description \"\xc3\xb6 caf\xe9\"\n}\n";

fn check(project: &CliProject, args: &[&str]) -> (Option<i32>, String) {
    let output = project
        .atomic()
        .arg("check")
        .args(args)
        .output()
        .expect("atomic check");
    (output.status.code(), stdout(&output))
}

fn json(text: &str) -> Vec<Value> {
    serde_json::from_str::<Value>(text)
        .expect("JSON")
        .as_array()
        .expect("an array")
        .clone()
}

#[test]
fn a_missing_workflow_is_exit_three_with_the_reason_in_every_format() {
    let project = CliProject::new();
    project.write("clean.kdl", CLEAN);
    std::fs::create_dir_all(project.path().join("some-dir.kdl")).expect("mkdir");
    for (file, reason) in [
        ("missing.kdl", "no such file"),
        ("some-dir.kdl", "it is a directory, not a file"),
    ] {
        let (code, out) = check(&project, &[file]);
        assert_eq!(code, Some(3), "{out}");
        assert!(
            out.contains(&format!("cannot read workflow `{file}`: {reason}")),
            "{out}"
        );
        assert!(!out.contains("ok:"), "{out}");
        assert!(out.contains("1 file could not be read"), "{out}");

        let (code, out) = check(&project, &[file, "--format", "json"]);
        assert_eq!(code, Some(3), "{out}");
        let items = json(&out);
        assert_eq!(items.len(), 1, "{out}");
        assert_eq!(items[0]["code"], "atomic::unreadable-file");
        assert_eq!(items[0]["severity"], "error");
        assert_eq!(items[0]["file"], file);
        assert!(
            items[0]["message"]
                .as_str()
                .unwrap_or_default()
                .contains(reason),
            "{out}"
        );

        let (code, out) = check(&project, &[file, "--format", "sarif"]);
        assert_eq!(code, Some(3), "{out}");
        let sarif: Value = serde_json::from_str(&out).expect("SARIF is JSON");
        let results = &sarif["runs"][0]["results"];
        assert_eq!(results.as_array().map(Vec::len), Some(1), "{out}");
        assert_eq!(results[0]["ruleId"], "atomic::unreadable-file");
        assert!(results[0]["message"]["text"].to_string().contains(reason));
    }
    // A readable file next to an unreadable one is still checked; the summary counts both.
    let (code, out) = check(&project, &["clean.kdl", "missing.kdl"]);
    assert_eq!(code, Some(3), "{out}");
    assert!(out.contains("in 1 file; 1 file could not be read"), "{out}");
}

#[test]
fn a_workflow_that_is_not_utf8_is_a_problem_at_its_first_bad_byte() {
    let project = CliProject::new();
    std::fs::write(project.path().join("latin1.kdl"), LATIN1).expect("write");
    let (code, out) = check(&project, &["latin1.kdl"]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("atomic::invalid-encoding"), "{out}");
    assert!(out.contains("latin1.kdl:3:23"), "{out}");
    assert!(out.contains("Latin-1"), "{out}");
    assert!(!out.contains("ok:"), "{out}");

    let (code, out) = check(&project, &["latin1.kdl", "--format", "json"]);
    assert_eq!(code, Some(1), "{out}");
    let items = json(&out);
    assert_eq!(items.len(), 1, "{out}");
    assert_eq!(items[0]["code"], "atomic::invalid-encoding");
    assert_eq!(
        (items[0]["line"].clone(), items[0]["column"].clone()),
        (3.into(), 23.into())
    );

    let (code, out) = check(&project, &["latin1.kdl", "--format", "sarif"]);
    assert_eq!(code, Some(1), "{out}");
    let sarif: Value = serde_json::from_str(&out).expect("SARIF is JSON");
    let region = &sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"];
    assert_eq!(region["startLine"], 3, "{out}");
}

#[cfg(unix)]
#[test]
fn a_workflow_without_read_permission_is_exit_three() {
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::CommandExt;
    let project = CliProject::new();
    let path = project.write("secret.kdl", CLEAN);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o000)).expect("chmod");
    let mut command = if std::fs::read(&path).is_ok() {
        // Root reads whatever a file's mode says (CI runs as root): run `atomic` as
        // `nobody` instead, from a copy it can reach in a directory it may enter.
        let open = std::fs::Permissions::from_mode(0o755);
        std::fs::set_permissions(project.path(), open.clone()).expect("chmod project");
        let copy = project.path().join("atomic-bin");
        std::fs::copy(crate::support::cli_project::bin(), &copy).expect("copy atomic");
        std::fs::set_permissions(&copy, open).expect("chmod atomic");
        let mut command = std::process::Command::new(copy);
        command.uid(NOBODY).gid(NOBODY);
        command
    } else {
        std::process::Command::new(crate::support::cli_project::bin())
    };
    let output = command
        .current_dir(project.path())
        .env("NO_COLOR", "1")
        .env_remove("RUST_LOG")
        .args(["check", "secret.kdl"])
        .output()
        .expect("atomic check");
    let out = stdout(&output);
    assert_eq!(output.status.code(), Some(3), "{out}{}", stderr(&output));
    assert!(out.contains("permission denied"), "{out}");
}

/// The conventional unprivileged user and group id.
#[cfg(unix)]
const NOBODY: u32 = 65534;

#[test]
fn files_a_workflow_pulls_in_are_reported_at_the_reference() {
    let project = CliProject::new();
    std::fs::create_dir_all(project.path().join(".atomic/tools")).expect("mkdir");
    std::fs::write(
        project.path().join(".atomic/tools/latin.kdl"),
        b"tool \"latin\" description=\"caf\xe9\" { command \"true\"; }\n",
    )
    .expect("write");
    std::fs::create_dir_all(project.path().join(".claude/agents/reviewer.md")).expect("mkdir");
    project.write(
        "flow.kdl",
        r#"workflow "uses" {
    provider "c" adapter="claude-code"
    tool "t" use="latin"
    agent "review" use="agent:reviewer" prompt="Review"
}
"#,
    );
    let (code, out) = check(&project, &["flow.kdl", "--format", "json"]);
    assert_eq!(code, Some(1), "{out}");
    let items = json(&out);
    let found = |code: &str, file: &str| {
        items
            .iter()
            .find(|d| d["code"] == code && d["file"].as_str().is_some_and(|f| f.ends_with(file)))
            .unwrap_or_else(|| panic!("no {code} in {file}: {out}"))
            .clone()
    };
    let tool = found("atomic::invalid-encoding", "latin.kdl");
    assert_eq!(
        (tool["line"].clone(), tool["column"].clone()),
        (1.into(), 30.into())
    );
    let agent = found("atomic::unreadable-file", "flow.kdl");
    assert_eq!(agent["line"], 4, "at the `use=` that names it: {out}");
    let message = agent["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("reviewer.md") && message.contains("it is a directory"),
        "{message}"
    );
    assert!(Path::new(&project.path().join(".claude/agents/reviewer.md")).is_dir());
}

/// The project's `.atomic/config.kdl` is read like every other input: when it cannot be
/// read, or is not UTF-8, that is reported, never passed over as "no configuration".
#[test]
fn a_configuration_that_cannot_be_read_is_reported() {
    let project = CliProject::new();
    project.write("flow.kdl", CLEAN);
    std::fs::create_dir_all(project.path().join(".atomic/config.kdl")).expect("mkdir");
    let (code, out) = check(&project, &["flow.kdl", "--format", "json"]);
    assert_eq!(code, Some(1), "{out}");
    let items = json(&out);
    assert_eq!(items[0]["code"], "atomic::unreadable-file", "{out}");
    assert!(
        items[0]["file"]
            .as_str()
            .is_some_and(|f| f.ends_with("config.kdl")),
        "{out}"
    );

    std::fs::remove_dir(project.path().join(".atomic/config.kdl")).expect("rmdir");
    std::fs::write(
        project.path().join(".atomic/config.kdl"),
        b"rules { rule \"shell-command\" level=\"caf\xe9\"; }\n",
    )
    .expect("write");
    let (code, out) = check(&project, &["flow.kdl", "--format", "json"]);
    assert_eq!(code, Some(1), "{out}");
    let items = json(&out);
    assert_eq!(items[0]["code"], "atomic::invalid-encoding", "{out}");
    assert_eq!(items[0]["column"], 40, "{out}");
}
