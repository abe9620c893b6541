//! Requests through the protocol: hover, definition, references, completion, document
//! symbols, rename and code actions, each drawn under the source.

use std::fmt::Write as _;
use std::path::Path;

use serde_json::{Value, json};

use super::client::{Client, bytes, carets, uri};

const FLOW: &str = r#"workflow "review" {
    input "target" type="string" description="Path to review"
    state {
        field "findings" type="array" default="[]" reduce="append"
        field "summary" type="string"
    }
    provider "claude" adapter="anthropic" model="claude-sonnet-4-5"
    agent "review" provider="claude" {
        prompt "Review {{ input.target }} and list findings"
        output "findings" parse="json" schema="schemas/findings.json"
    }
    loop "fix" until="state.findings | length == 0" max=3 {
        agent "fixer" provider="claude" { prompt "Fix {{ state.findings }} from {{ outputs.review }}"; }
        set "findings" "[]"
    }
    subgraph "checks" workflow="./checks.kdl" {
        input "target" "{{ input.target }}"
        output "summary" from="report"
    }
    decision "gate" {
        when "state.findings | length > 0" goto="review" max=2
    }
}
"#;

const CHECKS: &str = "workflow \"checks\" {\n    input \"target\" type=\"string\"\n    state { field \"report\" type=\"string\" default=\"\"; }\n    set \"report\" \"{{ input.target }}\"\n}\n";

/// The `(line, character)` of `delta` bytes after `marker` (ASCII text only).
fn at(marker: &str, delta: usize) -> Value {
    let offset = FLOW.find(marker).expect("marker") + delta;
    let line = FLOW[..offset].matches('\n').count();
    let column = offset - FLOW[..offset].rfind('\n').map_or(0, |at| at + 1);
    json!({ "line": line, "character": column })
}

struct Fixture {
    dir: tempfile::TempDir,
    client: Client,
    uri: tower_lsp_server::ls_types::Uri,
}

impl Fixture {
    async fn open() -> Self {
        let dir = tempfile::tempdir().expect("a temp dir");
        std::fs::create_dir_all(dir.path().join("schemas")).expect("mkdir");
        std::fs::write(
            dir.path().join("schemas/findings.json"),
            "{ \"type\": \"array\" }\n",
        )
        .expect("write");
        std::fs::write(dir.path().join("checks.kdl"), CHECKS).expect("write");
        let path = dir.path().join("review.kdl");
        std::fs::write(&path, FLOW).expect("write");
        let uri = uri(&path);
        let mut client = Client::start().await;
        client.open(&uri, FLOW, 1).await;
        client.diagnostics(&uri, Some(1)).await;
        Self { dir, client, uri }
    }

    fn document(&self, position: &Value) -> Value {
        json!({ "textDocument": { "uri": self.uri.as_str() }, "position": position })
    }

    /// A location as `<file>` + the source under its range.
    fn location(&self, location: &Value) -> String {
        let uri: tower_lsp_server::ls_types::Uri = location["uri"]
            .as_str()
            .expect("a uri")
            .parse()
            .expect("valid");
        let path = uri.to_file_path().expect("a file").into_owned();
        let name = path
            .strip_prefix(self.dir.path())
            .unwrap_or(Path::new("?"))
            .display()
            .to_string();
        let text = std::fs::read_to_string(&path).expect("the target exists");
        format!(
            "→ {name}\n{}",
            carets(&text, &[(&location["range"], String::new())])
        )
    }
}

#[tokio::test]
async fn hover_definition_and_references() {
    let mut fixture = Fixture::open().await;
    let mut out = String::new();
    for (marker, delta) in [
        ("agent \"review\"", 2),
        ("reduce=", 2),
        ("state.findings }}", 7),
        ("outputs.review", 9),
        ("input.target }} and", 7),
    ] {
        let position = at(marker, delta);
        let hover = fixture
            .client
            .request("textDocument/hover", fixture.document(&position))
            .await;
        let result = &hover["result"];
        let _ = writeln!(out, "## hover at `{marker}`+{delta}");
        out.push_str(&carets(FLOW, &[(&result["range"], String::new())]));
        let _ = writeln!(
            out,
            "{}\n",
            result["contents"]["value"].as_str().unwrap_or("(none)")
        );
    }
    for (marker, delta) in [
        ("goto=\"review\"", 7),
        ("state.findings }}", 7),
        ("schemas/findings", 2),
        ("./checks.kdl", 3),
        ("from=\"report\"", 7),
    ] {
        let position = at(marker, delta);
        let found = fixture
            .client
            .request("textDocument/definition", fixture.document(&position))
            .await;
        let _ = writeln!(out, "## definition at `{marker}`+{delta}");
        out.push_str(&fixture.location(&found["result"]));
        out.push('\n');
    }
    let mut params = fixture.document(&at("\"review\" provider", 2));
    params["context"] = json!({ "includeDeclaration": true });
    let found = fixture
        .client
        .request("textDocument/references", params)
        .await;
    let _ = writeln!(out, "## references of `review`");
    let ranges: Vec<(&Value, String)> = found["result"]
        .as_array()
        .expect("a list")
        .iter()
        .map(|location| (&location["range"], String::new()))
        .collect();
    out.push_str(&carets(FLOW, &ranges));
    insta::assert_snapshot!(out);
    fixture.client.shutdown().await;
}

#[tokio::test]
async fn completion_symbols_rename_and_code_actions() {
    let mut fixture = Fixture::open().await;
    let mut out = String::new();

    // Completion after typing `{{ state.` in the fixer's prompt.
    fixture
        .client
        .edit(&fixture.uri, 2, (12, 52), (12, 52), " {{ state. }}")
        .await;
    let found = fixture
        .client
        .request(
            "textDocument/completion",
            fixture.document(&json!({ "line": 12, "character": 62 })),
        )
        .await;
    let labels: Vec<&str> = found["result"]["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|item| item["label"].as_str().unwrap_or("?"))
        .collect();
    let _ = writeln!(out, "## completion after `{{{{ state.`\n{labels:?}\n");
    fixture
        .client
        .edit(&fixture.uri, 3, (12, 52), (12, 65), "")
        .await;

    let symbols = fixture
        .client
        .request(
            "textDocument/documentSymbol",
            json!({ "textDocument": { "uri": fixture.uri.as_str() } }),
        )
        .await;
    let _ = writeln!(out, "## symbols");
    outline(&symbols["result"], 0, &mut out);

    let prepare = fixture
        .client
        .request(
            "textDocument/prepareRename",
            fixture.document(&at("outputs.review", 9)),
        )
        .await;
    let _ = writeln!(out, "\n## prepare rename on `outputs.review`");
    out.push_str(&carets(
        FLOW,
        &[(&prepare["result"]["range"], String::new())],
    ));
    let mut params = fixture.document(&at("outputs.review", 9));
    params["newName"] = json!("first-review");
    let renamed = fixture.client.request("textDocument/rename", params).await;
    let _ = writeln!(out, "## rename `review` → `first-review`");
    out.push_str(&apply(
        FLOW,
        &renamed["result"]["changes"][fixture.uri.as_str()],
    ));
    let mut params = fixture.document(&at("\"summary\" type", 2));
    params["newName"] = json!("not valid");
    let refused = fixture.client.request("textDocument/rename", params).await;
    let _ = writeln!(
        out,
        "## rename to `not valid`\n{}\n",
        refused["error"]["message"]
    );

    let actions = fixture
        .client
        .request(
            "textDocument/codeAction",
            json!({
                "textDocument": { "uri": fixture.uri.as_str() },
                "range": { "start": at("decision", 0), "end": at("decision", 0) },
                "context": { "diagnostics": [] },
            }),
        )
        .await;
    for action in actions["result"].as_array().expect("actions") {
        let _ = writeln!(
            out,
            "## code action: {}",
            action["title"].as_str().unwrap_or("?")
        );
        out.push_str(&apply(
            FLOW,
            &action["edit"]["changes"][fixture.uri.as_str()],
        ));
    }
    insta::assert_snapshot!(out);
    fixture.client.shutdown().await;
}

fn outline(symbols: &Value, depth: usize, out: &mut String) {
    for symbol in symbols.as_array().into_iter().flatten() {
        let _ = writeln!(
            out,
            "{}{} {} (kind {})",
            "  ".repeat(depth),
            symbol["detail"].as_str().unwrap_or(""),
            symbol["name"].as_str().unwrap_or("?"),
            symbol["kind"]
        );
        outline(&symbol["children"], depth + 1, out);
    }
}

/// `text` with the edits applied.
fn apply(text: &str, edits: &Value) -> String {
    let mut edits: Vec<(usize, usize, &str)> = edits
        .as_array()
        .expect("edits")
        .iter()
        .map(|edit| {
            let (start, end) = bytes(text, &edit["range"]);
            (start, end, edit["newText"].as_str().expect("text"))
        })
        .collect();
    edits.sort_by_key(|edit| std::cmp::Reverse(edit.0));
    let mut out = text.to_owned();
    for (start, end, new) in edits {
        out.replace_range(start..end, new);
    }
    out
}

/// Completion through the protocol offers the project's custom tools for `tool use="…"`
/// and its discovered agents for `agent use="…"`, found on disk by the server.
#[tokio::test]
async fn use_completes_tools_and_agents_found_on_disk() {
    let dir = tempfile::tempdir().expect("a temp dir");
    std::fs::create_dir_all(dir.path().join(".atomic/tools")).expect("mkdir");
    std::fs::create_dir_all(dir.path().join(".claude/agents")).expect("mkdir");
    std::fs::write(
        dir.path().join(".atomic/tools/fmt.kdl"),
        "tool \"fmt\" description=\"Formats the code\" {\n    command \"true\"\n}\n",
    )
    .expect("write");
    std::fs::write(
        dir.path().join(".claude/agents/reviewer.md"),
        "---\ndescription: Reviews diffs\n---\nYou review.\n",
    )
    .expect("write");
    let text =
        "workflow \"w\" {\n    tool \"t\" use=\"\"\n    agent \"a\" use=\"\" prompt=\"x\"\n}\n";
    let path = dir.path().join("flow.kdl");
    std::fs::write(&path, text).expect("write");
    let uri = uri(&path);
    let mut client = Client::start().await;
    client.open(&uri, text, 1).await;
    client.diagnostics(&uri, Some(1)).await;
    let mut labels = Vec::new();
    for line in [1, 2] {
        let character = text
            .lines()
            .nth(line)
            .expect("line")
            .find("use=\"")
            .expect("use")
            + 5;
        let found = client
            .request(
                "textDocument/completion",
                json!({
                    "textDocument": { "uri": uri.as_str() },
                    "position": { "line": line, "character": character },
                }),
            )
            .await;
        let items: Vec<String> = found["result"]["items"]
            .as_array()
            .expect("items")
            .iter()
            .filter_map(|item| item["label"].as_str().map(str::to_owned))
            .collect();
        labels.push(items);
    }
    assert_eq!(labels[0], ["fmt"], "{labels:?}");
    assert!(
        labels[1].contains(&"agent:reviewer".to_owned()),
        "{labels:?}"
    );
    client.shutdown().await;
}
