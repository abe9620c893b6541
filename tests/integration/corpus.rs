//! The checker's corpus: workflows broken the way a demanding user breaks them, one mistake
//! (or one family of mistakes) per file in `tests/fixtures/check/corpus/`. Each case lists
//! every diagnostic it must produce, exactly, with its place, in lines at its end:
//!
//! ```text
//! // expect: <code> <line>:<column>
//! // expect: <code> <file name>:<line>:<column>    (a diagnostic in another file)
//! ```
//!
//! Lines and columns are one-based and count characters, as `--format json` does. Nothing
//! else may be reported, so a missed mistake, a diagnostic at the wrong place and an echo of
//! another error all fail. Every case has a fixed variant `<case>.ok.kdl` that must check
//! clean, so the rule that catches the mistake does not fire on the right way to write it.
//! Huge and deeply nested inputs are generated here rather than stored.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use atomic::cli::render::locate;
use atomic::diagnostic::Code;

use crate::support;

/// One expected or reported diagnostic: code, file name (`None`: the case itself), line,
/// column.
type Found = (String, Option<String>, u32, u32);

fn corpus() -> (Vec<PathBuf>, Vec<PathBuf>) {
    support::kdl_files(&support::fixture("check/corpus"))
        .into_iter()
        .partition(|path| !path.to_string_lossy().ends_with(".ok.kdl"))
}

fn expectations(path: &Path) -> Vec<Found> {
    let bytes = std::fs::read(path).expect("read the case");
    let text = String::from_utf8_lossy(&bytes);
    let mut expected: Vec<Found> = text
        .lines()
        .filter_map(|line| line.trim().strip_prefix("// expect:"))
        .map(|spec| {
            let (code, place) = spec
                .trim()
                .split_once(' ')
                .unwrap_or_else(|| panic!("{}: bad expectation `{spec}`", path.display()));
            let parts: Vec<&str> = place.trim().rsplitn(3, ':').collect();
            let number = |text: &str| -> u32 {
                text.parse()
                    .unwrap_or_else(|_| panic!("{}: bad place `{place}`", path.display()))
            };
            assert!(
                Code::from_name(code).is_some(),
                "{}: `{code}` is not a rule code",
                path.display()
            );
            match parts.as_slice() {
                [column, line] => (code.to_owned(), None, number(line), number(column)),
                [column, line, file] => (
                    code.to_owned(),
                    Some((*file).to_owned()),
                    number(line),
                    number(column),
                ),
                _ => panic!("{}: bad place `{place}`", path.display()),
            }
        })
        .collect();
    expected.sort();
    expected
}

#[test]
fn every_case_reports_exactly_its_expected_diagnostics_at_their_places() {
    let (cases, _) = corpus();
    assert!(
        cases.len() >= 40,
        "the corpus has {} cases; it must keep at least 40",
        cases.len()
    );
    let mut failures = String::new();
    for path in &cases {
        let expected = expectations(path);
        assert!(
            !expected.is_empty(),
            "{} has no `// expect:` lines",
            path.display()
        );
        let (sources, compiled) = support::compile_file(path);
        let mut reported: Vec<Found> = compiled
            .diagnostics
            .iter()
            .map(|diagnostic| {
                let at = locate(&sources, diagnostic.span);
                let file = (diagnostic.span.source != compiled.file).then(|| {
                    Path::new(&at.file)
                        .file_name()
                        .map_or(at.file.clone(), |name| name.to_string_lossy().into_owned())
                });
                (diagnostic.code.name().to_owned(), file, at.line, at.column)
            })
            .collect();
        reported.sort();
        if reported != expected {
            let _ = writeln!(
                failures,
                "{}:\n  expected {expected:?}\n  reported {reported:?}\n{}",
                path.display(),
                support::render(&sources, &compiled)
            );
        }
    }
    assert!(failures.is_empty(), "{failures}");
}

#[test]
fn every_case_has_a_fixed_variant_that_checks_clean() {
    let (cases, fixed) = corpus();
    for case in &cases {
        let variant = case.with_extension("ok.kdl");
        assert!(
            fixed.contains(&variant),
            "{} has no fixed variant {}",
            case.display(),
            variant.display()
        );
    }
    let mut failures = String::new();
    for path in &fixed {
        let (sources, compiled) = support::compile_file(path);
        if !compiled.diagnostics.is_empty() {
            let _ = writeln!(
                failures,
                "{} should check clean, got:\n{}",
                path.display(),
                support::render(&sources, &compiled)
            );
        }
    }
    assert!(failures.is_empty(), "{failures}");
}

/// A string of several megabytes (a pasted log in a prompt) checks clean, and one with a
/// mistake after it is reported on the right line.
#[test]
fn huge_strings_are_checked_whole() {
    let log = "error: something failed at src/lib.rs:42 ☃\\n".repeat(150_000);
    assert!(log.len() > 6_000_000);
    let text = format!(
        "workflow \"w\" {{\n    provider \"p\" adapter=\"in-process\"\n    agent \"a\" prompt=\"Explain: {log}\"\n    agent \"b\" prompt=\"{{{{ state.nope }}}}\"\n}}\n"
    );
    let (sources, compiled) =
        support::compile_text(Path::new("tests/fixtures/check/corpus/huge.kdl"), &text);
    let found: Vec<(Code, u32, u32)> = compiled
        .diagnostics
        .iter()
        .map(|d| {
            let at = locate(&sources, d.span);
            (d.code, at.line, at.column)
        })
        .collect();
    assert_eq!(found, [(Code::UndeclaredVariable, 4, 26)]);
}

/// Blocks nested 1,000 deep are cut off with a diagnostic, never a stack overflow, on the
/// test harness's small thread stack as in the CLI.
#[test]
fn thousand_deep_nesting_is_reported_not_a_crash() {
    let depth = 1_000;
    let mut text = String::from("workflow \"w\" {\n");
    for level in 0..depth {
        let _ = writeln!(text, "loop \"l{level}\" max=2 {{");
    }
    text.push_str("set \"x\" \"1\"\n");
    for _ in 0..depth {
        text.push_str("}\n");
    }
    text.push_str("}\n");
    let path = Path::new("tests/fixtures/check/corpus/deep.kdl");
    let (sources, compiled) = support::compile_text(path, &text);
    assert!(
        compiled.has_errors(),
        "{}",
        support::render(&sources, &compiled)
    );
    let deep = compiled
        .diagnostics
        .iter()
        .find(|d| d.code == Code::NestingTooDeep)
        .unwrap_or_else(|| panic!("{}", support::render(&sources, &compiled)));
    assert!(
        deep.message.contains("nested more than"),
        "{}",
        deep.message
    );
    assert_eq!(
        compiled
            .diagnostics
            .iter()
            .filter(|d| d.code == Code::NestingTooDeep)
            .count(),
        1,
        "one report, not the checker's and the parser's"
    );
    // The terminal shows where, not a thousand lines of echoed source.
    let rendered = support::render(&sources, &compiled);
    assert!(
        rendered.lines().count() < 60,
        "{} lines:\n{rendered}",
        rendered.lines().count()
    );

    // The same through the binary, whose main thread is the CLI's.
    let project = support::cli_project::CliProject::new();
    project.write("deep.kdl", &text);
    let output = project
        .atomic()
        .args(["check", "deep.kdl", "--format", "json"])
        .output()
        .expect("atomic check");
    assert_eq!(output.status.code(), Some(1), "{output:?}");
}

/// Every repair a diagnostic carries does what it says: applied to the text, it removes
/// that diagnostic and breaks nothing else (no new syntax error). Over the corpus and every
/// error fixture, so each rule that proposes a fix is exercised.
#[test]
fn every_fix_repairs_its_diagnostic() {
    let (mut files, _) = corpus();
    files.extend(support::kdl_files(&support::fixture("check/err")));
    let mut applied = 0;
    let mut failures = String::new();
    for path in &files {
        let (sources, compiled) = support::compile_file(path);
        let text = &sources.get(compiled.file).text;
        for diagnostic in &compiled.diagnostics {
            let Some(fix) = &diagnostic.fix else {
                continue;
            };
            if fix
                .edits
                .iter()
                .any(|edit| edit.span.source != compiled.file)
            {
                continue;
            }
            let mut edits: Vec<_> = fix.edits.iter().collect();
            edits.sort_by_key(|edit| std::cmp::Reverse(edit.span.start));
            let mut fixed = text.clone();
            for edit in edits {
                fixed.replace_range(edit.span.range(), &edit.replacement);
            }
            let relative = path.strip_prefix(support::root()).unwrap_or(path);
            let (after_sources, after) = support::compile_text(relative, &fixed);
            let still = after
                .diagnostics
                .iter()
                .any(|d| d.code == diagnostic.code && d.message == diagnostic.message);
            let broke = after
                .diagnostics
                .iter()
                .any(|d| d.code.group() == "syntax" && d.is_error())
                && !compiled
                    .diagnostics
                    .iter()
                    .any(|d| d.code.group() == "syntax" && d.is_error());
            if still || broke {
                let _ = writeln!(
                    failures,
                    "{}: `{}` ({}) did not repair `{}`:\n{fixed}\n{}",
                    path.display(),
                    fix.title,
                    diagnostic.code,
                    diagnostic.message,
                    support::render(&after_sources, &after)
                );
            }
            applied += 1;
        }
    }
    assert!(failures.is_empty(), "{failures}");
    assert!(applied >= 15, "only {applied} fixes were tried");
}
