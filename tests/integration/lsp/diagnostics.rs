//! Diagnostics through the protocol: published on open and after incremental edits, the
//! same as `atomic check` reports, debounced with stale versions dropped, in UTF-16 ranges
//! (multi-byte text, CRLF), and re-published for callers when a called workflow changes.

use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use super::client::{Client, bytes, carets, uri};

/// The diagnostics of one `publishDiagnostics`, drawn under `text`.
fn render(text: &str, params: &Value) -> String {
    let mut out = String::new();
    for diagnostic in params["diagnostics"].as_array().expect("a list") {
        let severity = match diagnostic["severity"].as_u64() {
            Some(1) => "error",
            Some(2) => "warning",
            Some(3) => "information",
            _ => "?",
        };
        let note = format!("{severity} {}", diagnostic["code"].as_str().unwrap_or("?"));
        out.push_str(&carets(text, &[(&diagnostic["range"], note)]));
        for line in diagnostic["message"].as_str().unwrap_or("").lines() {
            let _ = writeln!(out, "    = {line}");
        }
        for related in diagnostic["relatedInformation"]
            .as_array()
            .into_iter()
            .flatten()
        {
            let (start, end) = bytes(text, &related["location"]["range"]);
            let _ = writeln!(
                out,
                "    - `{}`: {}",
                &text[start..end],
                related["message"].as_str().unwrap_or("")
            );
        }
    }
    if out.is_empty() {
        out.push_str("(no diagnostics)\n");
    }
    out
}

const BROKEN: &str = r#"workflow "release" {
    provider "fake" adapter="replay"
    agent "review" provider="fake" modle="m" { prompt "Review the diff"; }
    decision "gate" {
        when "true" goto="shiip"
        otherwise goto="end"
    }
    tool "ship" { run "make" "release"; }
}
"#;

#[tokio::test]
async fn published_on_open_and_after_incremental_edits() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let path = dir.path().join("release.kdl");
    let uri = uri(&path);
    let mut client = Client::start().await;
    client.open(&uri, BROKEN, 1).await;
    let opened = client.diagnostics(&uri, Some(1)).await;
    // `modle` → `model` (line 3, UTF-16 columns 35..40).
    client.edit(&uri, 2, (2, 35), (2, 40), "model").await;
    let edited = client.diagnostics(&uri, Some(2)).await;
    let fixed = BROKEN.replace("modle", "model");
    insta::assert_snapshot!(format!(
        "----- opened\n{}----- after fixing `modle`\n{}",
        render(BROKEN, &opened),
        render(&fixed, &edited)
    ));
    client.shutdown().await;
}

#[tokio::test]
async fn the_same_diagnostics_as_atomic_check() {
    let dir = tempfile::tempdir().expect("a temp dir");
    for fixture in [
        "undefined-node",
        "missing-otherwise",
        "unknown-child",
        "wrong-type",
    ] {
        let source = crate::support::root().join(format!("tests/fixtures/check/err/{fixture}.kdl"));
        let text = std::fs::read_to_string(&source).expect("fixture");
        let path = dir.path().join(format!("{fixture}.kdl"));
        std::fs::write(&path, &text).expect("write");
        let mut sources = atomic::source::Sources::new();
        let compiled = atomic::compile::compile_path(
            &mut sources,
            &path,
            &atomic::cli::disk::Disk,
            &atomic::compile::Config::new(),
        )
        .expect("readable");
        let expected: Vec<(String, String, u64)> = compiled
            .diagnostics
            .iter()
            .map(|d| {
                let mut message = d.message.clone();
                if let Some(help) = &d.help {
                    message.push_str(&format!("\nhelp: {help}"));
                }
                let line = sources.get(d.span.source).lines.line(d.span.start as usize);
                (d.code.to_string(), message, u64::from(line))
            })
            .collect();
        assert!(!expected.is_empty(), "{fixture} reports something");
        let mut client = Client::start().await;
        let uri = uri(&path);
        client.open(&uri, &text, 1).await;
        let published = client.diagnostics(&uri, Some(1)).await;
        let got: Vec<(String, String, u64)> = published["diagnostics"]
            .as_array()
            .expect("a list")
            .iter()
            .map(|d| {
                (
                    d["code"].as_str().expect("a code").to_owned(),
                    d["message"].as_str().expect("a message").to_owned(),
                    d["range"]["start"]["line"].as_u64().expect("a line"),
                )
            })
            .collect();
        assert_eq!(got, expected, "{fixture}");
    }
}

#[tokio::test]
async fn typing_fast_publishes_only_the_last_version() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let uri = uri(&dir.path().join("typing.kdl"));
    // A long pause, so the test's "typing" is never slower than it, however loaded the
    // machine is.
    let mut client = Client::start_with(Duration::from_millis(400), serde_json::json!({})).await;
    client.open(&uri, BROKEN, 1).await;
    client.diagnostics(&uri, Some(1)).await;
    for (version, column) in (2..=6).zip(35u32..) {
        // Types `x` after `modle`, one character per change.
        client
            .edit(&uri, version, (2, column + 5), (2, column + 5), "x")
            .await;
    }
    let mut versions = Vec::new();
    loop {
        let published = client.diagnostics(&uri, None).await;
        let version = published["version"].as_i64().expect("versioned");
        versions.push(version);
        if version == 6 {
            let message = published["diagnostics"][0]["message"]
                .as_str()
                .unwrap_or("");
            assert!(message.contains("`modlexxxxx`"), "{message}");
            break;
        }
    }
    assert_eq!(versions, [6], "stale versions were published");
    let late = client.drain(Duration::from_millis(600)).await;
    assert!(
        late.is_empty(),
        "published after the last version: {late:?}"
    );
}

#[tokio::test]
async fn utf16_ranges_in_multibyte_crlf_text() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let uri = uri(&dir.path().join("émoji.kdl"));
    let text = "workflow \"é🎉\" {\r\n    state { field \"count\" type=\"integer\" default=0; }\r\n    set \"count\" \"🎉 é {{ state.cuont }}\"\r\n    set \"count\" \"{{ state.count + 1 }}\" goto=\"nowhere🎉\"\r\n}\r\n";
    let mut client = Client::start().await;
    client.open(&uri, text, 1).await;
    let published = client.diagnostics(&uri, Some(1)).await;
    let covered: Vec<&str> = published["diagnostics"]
        .as_array()
        .expect("a list")
        .iter()
        .map(|d| {
            let (start, end) = bytes(text, &d["range"]);
            &text[start..end]
        })
        .collect();
    assert!(covered.contains(&"state.cuont"), "{covered:?}");
    assert!(covered.contains(&"\"nowhere🎉\""), "{covered:?}");
    // `🎉 é ` before the read: 2 + 1 + 1 + 1 + 1 UTF-16 units after the quote.
    let read = published["diagnostics"]
        .as_array()
        .expect("a list")
        .iter()
        .find(|d| d["code"] == "atomic::undeclared-variable")
        .expect("the misspelled read");
    assert_eq!(
        read["range"]["start"],
        serde_json::json!({ "line": 2, "character": 25 })
    );
    insta::assert_snapshot!(render(text, &published));
}

const CALLER: &str = r#"workflow "caller" {
    input "target" type="string"
    subgraph "checks" workflow="./checks.kdl" { input "target" "{{ input.target }}"; }
}
"#;

const CHECKS: &str = r#"workflow "checks" {
    input "target" type="string"
    tool "lint" { run "echo" "{{ input.target }}"; }
}
"#;

fn codes(params: &Value) -> Vec<String> {
    params["diagnostics"]
        .as_array()
        .expect("a list")
        .iter()
        .map(|d| d["code"].as_str().unwrap_or("?").to_owned())
        .collect()
}

fn write(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write");
    path
}

#[tokio::test]
async fn editing_a_called_workflow_rechecks_its_callers() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let caller = uri(&write(dir.path(), "caller.kdl", CALLER));
    let checks = uri(&write(dir.path(), "checks.kdl", CHECKS));
    let mut client = Client::start().await;
    client.open(&caller, CALLER, 1).await;
    let clean = client.diagnostics(&caller, Some(1)).await;
    assert!(!codes(&clean).contains(&"atomic::subgraph-input-mismatch".to_owned()));

    // The callee, unsaved, renames its input: the caller's mapping no longer fits.
    let renamed = CHECKS
        .replace("\"target\"", "\"path\"")
        .replace("input.target", "input.path");
    client.open(&checks, &renamed, 1).await;
    let mismatch = client.diagnostics(&caller, Some(1)).await;
    assert!(
        codes(&mismatch).contains(&"atomic::subgraph-input-mismatch".to_owned()),
        "{mismatch}"
    );
    insta::assert_snapshot!(render(CALLER, &mismatch));

    // Closing the buffer: the file on disk counts again.
    client
        .notify(
            "textDocument/didClose",
            serde_json::json!({ "textDocument": { "uri": checks.as_str() } }),
        )
        .await;
    let back = client.diagnostics(&caller, Some(1)).await;
    assert!(
        !codes(&back).contains(&"atomic::subgraph-input-mismatch".to_owned()),
        "{back}"
    );
}

#[tokio::test]
async fn a_broken_called_workflow_shows_its_errors_in_its_own_file() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let caller = uri(&write(dir.path(), "caller.kdl", CALLER));
    let broken = CHECKS.replace("tool \"lint\"", "tol \"lint\"");
    let checks = uri(&write(dir.path(), "checks.kdl", &broken));
    let mut client = Client::start().await;
    client.open(&caller, CALLER, 1).await;
    let callee = client.diagnostics(&checks, None).await;
    assert_eq!(callee["version"], Value::Null, "the callee is not open");
    assert!(
        codes(&callee).contains(&"atomic::unknown-node-kind".to_owned()),
        "{callee}"
    );
    insta::assert_snapshot!(render(&broken, &callee));
}

#[tokio::test]
async fn a_called_workflow_changed_on_disk_rechecks_its_callers() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let caller = uri(&write(dir.path(), "caller.kdl", CALLER));
    let checks_path = write(dir.path(), "checks.kdl", CHECKS);
    let capabilities = serde_json::json!({
        "workspace": { "didChangeWatchedFiles": { "dynamicRegistration": true } }
    });
    let mut client = Client::start_with(atomic::lsp::DEBOUNCE, capabilities).await;
    let registration = client
        .answer("client/registerCapability", Value::Null)
        .await;
    assert_eq!(
        registration["registrations"][0]["method"], "workspace/didChangeWatchedFiles",
        "{registration}"
    );
    client.open(&caller, CALLER, 1).await;
    let clean = client.diagnostics(&caller, Some(1)).await;
    assert!(!codes(&clean).contains(&"atomic::subgraph-input-mismatch".to_owned()));
    let renamed = CHECKS
        .replace("\"target\"", "\"path\"")
        .replace("input.target", "input.path");
    std::fs::write(&checks_path, renamed).expect("write");
    client
        .notify(
            "workspace/didChangeWatchedFiles",
            serde_json::json!({ "changes": [{ "uri": uri(&checks_path).as_str(), "type": 2 }] }),
        )
        .await;
    let mismatch = client.diagnostics(&caller, Some(1)).await;
    assert!(
        codes(&mismatch).contains(&"atomic::subgraph-input-mismatch".to_owned()),
        "{mismatch}"
    );
}
