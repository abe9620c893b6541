//! Fixtures for `check::resolve`: every `check/ok` file resolves with no diagnostic, and
//! every `check/err/<code>.kdl` reports `<code>` (and nothing else). Diagnostics are
//! snapshotted as plain text.
//!
//! Files are parsed with the reference `kdl` crate converted into atomic's tree, until the
//! lead's `compile()` and atomic's own parser are on main.

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
    let document = kdl_tree::parse(&text, file);
    let outcome = atomic::check::resolve(&sources, file, &document);
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

/// The reference `kdl` crate's tree converted into atomic's.
mod kdl_tree {
    use atomic::source::{SourceId, Span};
    use atomic::syntax::kdl::{Document, Entry, Ident, Node, Value};

    pub(super) fn parse(text: &str, source: SourceId) -> Document {
        let document: kdl::KdlDocument = text.parse().expect("fixture is valid KDL");
        document_of(&document, source)
    }

    fn span(source: SourceId, span: miette::SourceSpan) -> Span {
        Span::new(source, span.offset(), span.offset() + span.len())
    }

    fn document_of(document: &kdl::KdlDocument, source: SourceId) -> Document {
        Document {
            nodes: document
                .nodes()
                .iter()
                .map(|node| node_of(node, source))
                .collect(),
            span: span(source, document.span()),
        }
    }

    fn ident(ident: &kdl::KdlIdentifier, source: SourceId) -> Ident {
        Ident {
            value: ident.value().to_owned(),
            span: span(source, ident.span()),
        }
    }

    fn node_of(node: &kdl::KdlNode, source: SourceId) -> Node {
        Node {
            ty: node.ty().map(|ty| ident(ty, source)),
            name: ident(node.name(), source),
            entries: node
                .entries()
                .iter()
                .map(|entry| entry_of(entry, source))
                .collect(),
            children: node
                .children()
                .map(|children| document_of(children, source)),
            span: span(source, node.span()),
        }
    }

    fn entry_of(entry: &kdl::KdlEntry, source: SourceId) -> Entry {
        let whole = span(source, entry.span());
        let repr = entry.format().map_or(0, |format| format.value_repr.len());
        let end = whole.end as usize;
        Entry {
            key: entry.name().map(|key| ident(key, source)),
            ty: entry.ty().map(|ty| ident(ty, source)),
            value: match entry.value() {
                kdl::KdlValue::String(text) => Value::String(text.clone()),
                kdl::KdlValue::Integer(n) => Value::Integer(*n),
                kdl::KdlValue::Float(x) => Value::Float(*x),
                kdl::KdlValue::Bool(b) => Value::Bool(*b),
                kdl::KdlValue::Null => Value::Null,
            },
            value_span: Span::new(source, end.saturating_sub(repr), end),
            span: whole,
        }
    }
}
