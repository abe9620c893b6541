//! The command line: exit codes, output formats, discovery.

use assert_cmd::Command;

use crate::support;

fn atomic() -> Command {
    let mut command = Command::cargo_bin("atomic").expect("the atomic binary is built");
    command
        .current_dir(support::root())
        .env("NO_COLOR", "1")
        .env_remove("RUST_LOG");
    command
}

fn write(dir: &std::path::Path, name: &str, text: &str) -> std::path::PathBuf {
    let path = dir.join(name);
    std::fs::create_dir_all(path.parent().expect("has a parent")).expect("mkdir");
    std::fs::write(&path, text).expect("write");
    path
}

const BROKEN: &str = r#"// two problems
workflow "broken" {
    provider "p" adapter="replay" cassette="x.json"
    agent "a" provider="p" { prompt "hi" }
    decision "d" {
        when "true" goto="shiip"
    }
    tool "ship" { run "true" }
}
"#;

#[test]
fn clean_file_exits_zero() {
    let output = atomic()
        .args(["check", "examples/hello.kdl"])
        .output()
        .expect("runs");
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stdout)
    );
    assert!(String::from_utf8_lossy(&output.stdout).contains("no problems"));
}

#[test]
fn problems_exit_one_and_are_all_reported() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = write(dir.path(), "broken.kdl", BROKEN);
    let output = atomic().arg("check").arg(&path).output().expect("runs");
    assert_eq!(output.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("atomic::undefined-node"), "{stdout}");
    assert!(stdout.contains("did you mean `ship`?"), "{stdout}");
    assert!(stdout.contains("atomic::missing-otherwise"), "{stdout}");
}

#[test]
fn bad_command_line_exits_two() {
    let output = atomic()
        .args(["check", "--format", "xml", "examples/hello.kdl"])
        .output()
        .expect("runs");
    assert_eq!(output.status.code(), Some(2));
    let output = atomic().args(["frobnicate"]).output().expect("runs");
    assert_eq!(output.status.code(), Some(2));
}

#[test]
fn unreadable_file_exits_three() {
    let output = atomic()
        .args(["check", "does/not/exist.kdl"])
        .output()
        .expect("runs");
    assert_eq!(output.status.code(), Some(3));
    let out = String::from_utf8_lossy(&output.stdout);
    assert!(out.contains("does/not/exist.kdl"), "{out}");
    assert!(out.contains("no such file"), "{out}");
    assert!(!out.contains("ok:"), "{out}");
}

#[test]
fn json_has_one_object_per_diagnostic() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = write(dir.path(), "broken.kdl", BROKEN);
    let output = atomic()
        .arg("check")
        .arg(&path)
        .args(["--format", "json"])
        .output()
        .expect("runs");
    assert_eq!(output.status.code(), Some(1));
    let value: serde_json::Value = serde_json::from_slice(&output.stdout).expect("valid JSON");
    let items = value.as_array().expect("an array");
    assert!(items.len() >= 2);
    for item in items {
        for key in [
            "code", "severity", "message", "file", "start", "end", "line", "column", "labels",
            "help",
        ] {
            assert!(item.get(key).is_some(), "missing `{key}` in {item}");
        }
        assert!(
            item["code"]
                .as_str()
                .expect("string")
                .starts_with("atomic::")
        );
    }
    let undefined = items
        .iter()
        .find(|item| item["code"] == "atomic::undefined-node")
        .expect("reported");
    assert_eq!(undefined["line"], 6);
    assert_eq!(undefined["help"], "did you mean `ship`?");
}

#[test]
fn sarif_is_a_valid_log() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = write(dir.path(), "broken.kdl", BROKEN);
    let output = atomic()
        .arg("check")
        .arg(&path)
        .args(["--format", "sarif"])
        .output()
        .expect("runs");
    assert_eq!(output.status.code(), Some(1));
    let log: serde_json::Value = serde_json::from_slice(&output.stdout).expect("valid JSON");
    assert_eq!(log["version"], "2.1.0");
    let run = &log["runs"][0];
    let rules = run["tool"]["driver"]["rules"].as_array().expect("rules");
    assert!(rules.len() >= 40);
    let results = run["results"].as_array().expect("results");
    assert!(!results.is_empty());
    for result in results {
        let index = result["ruleIndex"].as_u64().expect("rule index") as usize;
        assert_eq!(rules[index]["id"], result["ruleId"]);
        let region = &result["locations"][0]["physicalLocation"]["region"];
        assert!(region["startLine"].as_u64().expect("line") >= 1);
        assert!(["error", "warning", "note"].contains(&result["level"].as_str().expect("level")));
    }
}

#[test]
fn several_files_at_once() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = write(dir.path(), "broken.kdl", BROKEN);
    let output = atomic()
        .args(["check", "examples/hello.kdl", "examples/approval-gate.kdl"])
        .arg(&path)
        .output()
        .expect("runs");
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stdout).contains("in 3 files"));
}

#[test]
fn discovers_project_workflows_and_names() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join(".git")).expect("mkdir");
    let hello = std::fs::read_to_string(support::root().join("examples/hello.kdl")).expect("read");
    write(
        dir.path(),
        ".atomic/workflows/hello.kdl",
        &hello.replace("hello.cassette.json", "x.json"),
    );
    let output = atomic()
        .current_dir(dir.path())
        .arg("check")
        .output()
        .expect("runs");
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stdout)
    );
    let output = atomic()
        .current_dir(dir.path())
        .args(["check", "hello"])
        .output()
        .expect("runs");
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

fn codes_of(output: &std::process::Output) -> Vec<String> {
    let items: serde_json::Value = serde_json::from_slice(&output.stdout).expect("json");
    items
        .as_array()
        .expect("array")
        .iter()
        .map(|i| i["code"].as_str().expect("code").to_owned())
        .collect()
}

/// Suppression comments and configured levels silence what may be silenced, and `check`
/// and `run` then agree: a silenced error really lets the workflow run. An error that
/// leaves it unable to run stays, and the attempt to silence it is reported.
#[test]
fn suppression_comments_and_config_silence_rules() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join(".git")).expect("mkdir");
    // `possibly-unset` is an error a person may overrule (here the field is read on a path
    // where it was not written); `tainted-command` a safety error.
    let flow = r#"// errors a person may overrule, silenced
workflow "quiet" {
    input "name" type="string" default="world"
    state {
        field "greeting" type="string"
        field "echoed" type="string" default=""
    }
    decision "d" {
        when "input.name == 'nobody'" goto="greet"
        otherwise goto="echo"
    }
    set "greeting" "hi" id="greet"
    // atomic-ignore: possibly-unset, tainted-command
    tool "echo" { run "echo" "{{ state.greeting }} {{ input.name }}"; output "echoed"; }
    // atomic-ignore: no-such-rule
    set "echoed" "done" id="done"
}
"#;
    let path = write(dir.path(), "quiet.kdl", flow);
    let check = |path: &std::path::Path| {
        atomic()
            .current_dir(dir.path())
            .arg("check")
            .arg(path)
            .args(["--format", "json"])
            .output()
            .expect("runs")
    };
    let output = check(&path);
    let codes = codes_of(&output);
    assert!(
        !codes.iter().any(|c| c == "atomic::possibly-unset"),
        "{codes:?}"
    );
    assert_eq!(
        codes,
        ["atomic::unknown-rule-code"],
        "only the typo is left"
    );
    assert_eq!(
        output.status.code(),
        Some(1),
        "a warning is a problem: {codes:?}"
    );
    let run = atomic()
        .current_dir(dir.path())
        .args(["run", "quiet.kdl", "--store", "memory", "--quiet"])
        .output()
        .expect("runs");
    // `check` says it can run, so `run` runs it; and the overruled risk is real: on this
    // path the field is unset when `echo` reads it.
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(!err.contains("nothing was run"), "{err}");
    assert!(err.contains("failed at `echo`"), "{err}");
    assert!(err.contains("`state.greeting` is undefined"), "{err}");

    write(
        dir.path(),
        ".atomic/config.kdl",
        "rules {\n    rule \"unknown-rule-code\" level=\"off\"\n    rule \"undefined-node\" level=\"warning\"\n}\n",
    );
    let codes = codes_of(&check(&path));
    assert!(
        !codes.iter().any(|c| c == "atomic::unknown-rule-code"),
        "{codes:?}"
    );
    assert!(
        codes.iter().any(|c| c == "atomic::unsilenceable-rule"),
        "{codes:?}"
    );

    // An unrunnable error stays an error, whatever the comment says, and `run` agrees.
    let hidden = write(
        dir.path(),
        "hidden.kdl",
        "workflow \"hidden\" {\n    // atomic-ignore: unknown-property\n    description \"x\" colour=\"red\"\n}\n",
    );
    let output = check(&hidden);
    let codes = codes_of(&output);
    assert!(
        codes.iter().any(|c| c == "atomic::unknown-property"),
        "{codes:?}"
    );
    assert!(
        codes.iter().any(|c| c == "atomic::unsilenceable-rule"),
        "{codes:?}"
    );
    assert_eq!(output.status.code(), Some(1));
    let run = atomic()
        .current_dir(dir.path())
        .args(["run", "hidden.kdl", "--store", "memory"])
        .output()
        .expect("runs");
    let err = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{err}");
    assert!(
        err.contains("unknown-property"),
        "the refusal shows why: {err}"
    );
}

#[test]
fn graph_prints_dot_and_mermaid() {
    let output = atomic()
        .args(["graph", "examples/review-and-fix.kdl", "--dot"])
        .output()
        .expect("runs");
    assert_eq!(output.status.code(), Some(0));
    let dot = String::from_utf8_lossy(&output.stdout);
    assert!(dot.starts_with("digraph \"review-and-fix\""), "{dot}");
    assert!(dot.contains("\"gate\" [shape=diamond"), "{dot}");
    let output = atomic()
        .args(["graph", "examples/review-and-fix.kdl", "--mermaid"])
        .output()
        .expect("runs");
    assert_eq!(output.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&output.stdout).starts_with("flowchart TD"));
    let output = atomic()
        .args(["graph", "examples/review-and-fix.kdl", "--dot", "--mermaid"])
        .output()
        .expect("runs");
    assert_eq!(
        output.status.code(),
        Some(2),
        "the formats exclude each other"
    );
}

#[test]
fn graph_of_a_broken_workflow_shows_why() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = write(dir.path(), "broken.kdl", BROKEN);
    let output = atomic().arg("graph").arg(&path).output().expect("runs");
    assert_eq!(output.status.code(), Some(1));
    assert!(output.stdout.is_empty());
    assert!(String::from_utf8_lossy(&output.stderr).contains("atomic::undefined-node"));
}

/// One column convention for people: the terminal's `file:line:col` and the JSON output
/// count characters, so they agree after `é`, `ö` and `☃` (the language server counts UTF-16
/// units, as LSP requires).
#[test]
fn terminal_and_json_columns_agree_after_multibyte_text() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = write(
        dir.path(),
        "wide.kdl",
        "workflow \"w\" {\n    decision \"d\" {\n        when \"'é ö ☃' == ''\" goto=\"nowhere\"\n        otherwise goto=\"end\"\n    }\n}\n",
    );
    let pretty = atomic().arg("check").arg(&path).output().expect("runs");
    let pretty = String::from_utf8_lossy(&pretty.stdout).into_owned();
    let json = atomic()
        .arg("check")
        .arg(&path)
        .args(["--format", "json"])
        .output()
        .expect("runs");
    let items: serde_json::Value = serde_json::from_slice(&json.stdout).expect("JSON");
    let undefined = items
        .as_array()
        .expect("an array")
        .iter()
        .find(|d| d["code"] == "atomic::undefined-node")
        .expect("the undefined goto is reported");
    assert_eq!(undefined["line"], 3);
    // `        when "'é ö ☃' == ''" goto=` is 34 characters (39 bytes): the value's
    // opening quote is column 35 (byte column 40).
    assert_eq!(undefined["column"], 35);
    assert!(pretty.contains("wide.kdl:3:35]"), "{pretty}");
}

/// A label in another file than its diagnostic's (the callee's declaration of a subgraph
/// input) is drawn with that file, not dropped.
#[test]
fn the_terminal_draws_labels_in_other_files() {
    let dir = tempfile::tempdir().expect("tempdir");
    write(
        dir.path(),
        "callee.kdl",
        "workflow \"callee\" {\n    input \"count\" type=\"integer\" default=1\n    state { field \"n\" type=\"integer\" default=0; }\n    set \"n\" expr=\"input.count\"\n}\n",
    );
    let path = write(
        dir.path(),
        "caller.kdl",
        "workflow \"caller\" {\n    subgraph \"call\" workflow=\"callee.kdl\" {\n        input \"count\" \"lots\"\n    }\n}\n",
    );
    let output = atomic().arg("check").arg(&path).output().expect("runs");
    let pretty = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(pretty.contains("caller.kdl:3:23]"), "{pretty}");
    assert!(pretty.contains("callee.kdl:2:11]"), "{pretty}");
    assert!(pretty.contains("declared `integer` here"), "{pretty}");
}

/// `atomic explain CODE` prints the rule's entry (the words of docs/diagnostics.md); a
/// misspelt code is a usage error with the closest code.
#[test]
fn explain_prints_a_rule_and_suggests_a_code() {
    let output = atomic()
        .args(["explain", "atomic::possibly-unset"])
        .output()
        .expect("runs");
    assert_eq!(output.status.code(), Some(0));
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        text.starts_with("atomic::possibly-unset · error · data"),
        "{text}"
    );
    assert!(text.contains("Why it matters:"), "{text}");
    assert!(text.contains("// atomic-ignore: possibly-unset"), "{text}");

    let output = atomic()
        .args(["explain", "posibly-unset"])
        .output()
        .expect("runs");
    assert_eq!(output.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("did you mean `possibly-unset`?"),
        "{output:?}"
    );
}

/// A reader that stops early (`atomic list adapters | head -1`) closes the pipe: atomic
/// ends quietly with 141 (as if by SIGPIPE), never with a panic message.
#[test]
fn a_closed_output_pipe_ends_atomic_quietly() {
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_atomic"))
        .args(["list", "adapters"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn atomic");
    drop(child.stdout.take());
    let output = child.wait_with_output().expect("atomic ends");
    assert_eq!(output.status.code(), Some(141));
    assert_eq!(String::from_utf8_lossy(&output.stderr), "");
}
