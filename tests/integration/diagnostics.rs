//! Every rule code has a fixture `tests/fixtures/check/err/<code>.kdl` that reports it, with
//! the rendered diagnostics snapshot-tested; `check/ok` fixtures and the examples report
//! nothing; every code is documented in docs/diagnostics.md.

use atomic::diagnostic::Code;

use crate::support;

#[test]
fn every_error_fixture_reports_its_code() {
    let files = support::kdl_files(&support::fixture("check/err"));
    assert!(!files.is_empty());
    for path in files
        .into_iter()
        .filter(|path| !path.to_string_lossy().ends_with(".fixed.kdl"))
    {
        let (sources, compiled) = support::compile_file(&path);
        let stem = path
            .file_stem()
            .and_then(|s| s.to_str())
            .expect("utf-8 name");
        let code = Code::from_name(stem)
            .unwrap_or_else(|| panic!("{stem}.kdl is not named after a rule code"));
        assert!(
            compiled.diagnostics.iter().any(|d| d.code == code),
            "{} should report {code}, got:\n{}",
            path.display(),
            support::render(&sources, &compiled)
        );
        let source = &sources.get(compiled.file).text;
        let first = source.lines().next().unwrap_or_default();
        assert!(
            first.starts_with("//"),
            "{} must start with a comment saying what it proves",
            path.display()
        );
        insta::with_settings!({ snapshot_suffix => stem.to_owned(), prepend_module_to_snapshot => false }, {
            insta::assert_snapshot!(
                "diagnostic",
                format!("----- SOURCE\n{source}\n----- DIAGNOSTICS\n{}", support::render(&sources, &compiled))
            );
        });
    }
}

#[test]
fn every_code_has_a_fixture() {
    let missing: Vec<&str> = Code::ALL
        .iter()
        .map(|code| code.name())
        .filter(|name| {
            !support::fixture(&format!("check/err/{name}.kdl")).exists()
                || !support::fixture(&format!("check/err/{name}.fixed.kdl")).exists()
        })
        .collect();
    assert!(
        missing.is_empty(),
        "codes without a fixture and a fixed variant in tests/fixtures/check/err: {missing:?}"
    );
}

#[test]
fn every_code_is_documented() {
    let docs = std::fs::read_to_string(support::root().join("docs/diagnostics.md"))
        .expect("docs/diagnostics.md exists");
    let missing: Vec<String> = Code::ALL
        .iter()
        .map(|code| code.qualified())
        .filter(|name| !docs.contains(&format!("## `{name}`")))
        .collect();
    assert!(
        missing.is_empty(),
        "codes without a `## `atomic::<code>`` section in docs/diagnostics.md: {missing:?}"
    );
}

#[test]
fn ok_fixtures_and_examples_are_clean() {
    let mut files = support::kdl_files(&support::fixture("check/ok"));
    // Each rule's fixed example, beside its error fixture.
    files.extend(
        support::kdl_files(&support::fixture("check/err"))
            .into_iter()
            .filter(|path| path.to_string_lossy().ends_with(".fixed.kdl")),
    );
    files.extend(support::kdl_files(&support::root().join("examples")));
    files.extend(support::kdl_files(
        &support::root().join("examples/subgraphs"),
    ));
    assert!(files.len() >= 8);
    for path in files {
        let (sources, compiled) = support::compile_file(&path);
        assert!(
            compiled.diagnostics.is_empty(),
            "{} should check clean, got:\n{}",
            path.display(),
            support::render(&sources, &compiled)
        );
    }
}
