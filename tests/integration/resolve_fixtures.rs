//! Fixtures for `check::resolve` alone (no later stage): every `check/ok` file resolves
//! with no diagnostic, and every `check/err/<code>.kdl` of a code the resolver emits
//! reports `<code>` and nothing else. Diagnostics are snapshotted as plain text, one line
//! per field, so a change in span, label or help shows in review.

use std::path::Path;

use atomic::diagnostic::{Code, Diagnostic};
use atomic::source::{SourceId, Sources};

/// The codes `check::resolve` emits; each has a fixture and no other fixture exists.
const EMITTED: &[&str] = &[
    "missing-workflow",
    "unknown-node-kind",
    "unknown-property",
    "unknown-child",
    "missing-property",
    "unexpected-argument",
    "wrong-type",
    "invalid-value",
    "duplicate-property",
    "duplicate-child",
    "duplicate-id",
    "invalid-id",
    "invalid-duration",
    "invalid-version",
    "invalid-regex",
    "invalid-default",
    "incompatible-version",
    "undefined-node",
    "undefined-provider",
    "unknown-adapter",
    "undefined-state-field",
    "invalid-use",
    "not-a-recovery-node",
    "unsupported-feature",
    "reducer-type-mismatch",
    "missing-provider",
    "missing-otherwise",
    "missing-loop-max",
    "empty-block",
];

fn fixtures(kind: &str) -> Vec<std::path::PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/check")
        .join(kind);
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .expect("fixture directory exists")
        .map(|entry| entry.expect("readable directory").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "kdl"))
        .collect();
    paths.sort();
    paths
}

/// Resolves one file; returns the sources and the diagnostics.
fn resolve(path: &Path) -> (Sources, Vec<Diagnostic>, bool) {
    let text = std::fs::read_to_string(path).expect("fixtures are readable");
    assert!(
        text.starts_with("// "),
        "{} must start with a `//` comment saying what it proves",
        path.display()
    );
    let mut sources = Sources::new();
    let file = sources.add(path.file_name().expect("file name"), text.as_str());
    let parsed = atomic::syntax::kdl::parse(&text, file);
    assert_eq!(
        parsed.diagnostics,
        vec![],
        "{} is valid KDL",
        path.display()
    );
    let outcome = atomic::check::resolve(&sources, file, &parsed.document);
    (sources, outcome.diagnostics, outcome.value.is_some())
}

/// `severity[code] line:col: message`, then label, secondary labels and help, one a line.
fn render(sources: &Sources, diagnostics: &[Diagnostic]) -> String {
    let mut text = String::new();
    for diagnostic in diagnostics {
        let at = |span: atomic::source::Span| {
            let file = sources.get(span.source);
            let position = file.lines.position_chars(&file.text, span.start as usize);
            format!("{}:{}", position.line + 1, position.column + 1)
        };
        text.push_str(&format!(
            "{}[{}] {}: {}\n",
            diagnostic.severity.as_str(),
            diagnostic.code,
            at(diagnostic.span),
            diagnostic.message
        ));
        text.push_str(&format!("  at `{}`", sources.text(diagnostic.span)));
        if let Some(label) = &diagnostic.label {
            text.push_str(&format!(": {label}"));
        }
        text.push('\n');
        for label in &diagnostic.labels {
            text.push_str(&format!(
                "  {} `{}`: {}\n",
                at(label.span),
                sources.text(label.span),
                label.message
            ));
        }
        if let Some(help) = &diagnostic.help {
            text.push_str(&format!("  help: {help}\n"));
        }
    }
    text
}

#[test]
fn ok_fixtures_resolve_cleanly() {
    let paths = fixtures("ok");
    assert!(paths.len() >= 3);
    for path in paths {
        let (sources, diagnostics, has_value) = resolve(&path);
        assert!(has_value, "{}", path.display());
        assert!(
            diagnostics.is_empty(),
            "{}:\n{}",
            path.display(),
            render(&sources, &diagnostics)
        );
    }
}

#[test]
fn err_fixtures_report_their_code() {
    for path in fixtures("err") {
        let name = path
            .file_stem()
            .and_then(|stem| stem.to_str())
            .expect("utf-8 name");
        if !EMITTED.contains(&name) {
            continue; // another stage's code
        }
        let code = Code::from_name(name).unwrap_or_else(|| panic!("{name} is not a code"));
        let (sources, diagnostics, _) = resolve(&path);
        let rendered = render(&sources, &diagnostics);
        assert!(
            diagnostics.iter().any(|d| d.code == code),
            "{name} not reported:\n{rendered}"
        );
        assert!(
            diagnostics.iter().all(|d| d.code == code),
            "{name} reports other codes too:\n{rendered}"
        );
        let source = sources.get(SourceId(0)).text.clone();
        insta::assert_snapshot!(
            format!("resolve__{name}"),
            format!("----- SOURCE\n{source}----- DIAGNOSTICS\n{rendered}")
        );
    }
}

#[test]
fn every_emitted_code_has_exactly_one_fixture() {
    let names: Vec<String> = fixtures("err")
        .iter()
        .filter_map(|path| path.file_stem()?.to_str().map(str::to_owned))
        .filter(|name| EMITTED.contains(&name.as_str()))
        .collect();
    for code in EMITTED {
        assert!(Code::from_name(code).is_some(), "{code} is not a code");
        assert!(
            names.iter().any(|name| name == code),
            "no fixture for {code}"
        );
    }
}

/// Every prefix of every fixture and example (a file being typed) resolves without panicking,
/// and yields a workflow whenever the parser kept a `workflow` node.
#[test]
fn truncated_files_never_panic() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut paths = fixtures("ok");
    if let Ok(examples) = std::fs::read_dir(root.join("examples")) {
        paths.extend(
            examples
                .filter_map(Result::ok)
                .map(|entry| entry.path())
                .filter(|path| path.extension().is_some_and(|ext| ext == "kdl")),
        );
    }
    for path in paths {
        let text = std::fs::read_to_string(&path).expect("readable");
        let cuts = (0..text.len())
            .step_by(13)
            .filter(|&cut| text.is_char_boundary(cut));
        for cut in cuts {
            let prefix = &text[..cut];
            let mut sources = Sources::new();
            let file = sources.add("prefix.kdl", prefix);
            let parsed = atomic::syntax::kdl::parse(prefix, file);
            let outcome = atomic::check::resolve(&sources, file, &parsed.document);
            let has_workflow = parsed
                .document
                .nodes
                .iter()
                .any(|node| node.name.value == "workflow");
            assert_eq!(
                outcome.value.is_some(),
                has_workflow,
                "{} cut at {cut}",
                path.display()
            );
        }
    }
}
