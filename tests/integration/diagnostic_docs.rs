//! docs/diagnostics.md is generated from the rules (`atomic::diagnostic::reference`): the
//! file must equal the generated text (regenerate with `UPDATE_DIAGNOSTICS_DOCS=1 cargo
//! nextest run diagnostic_docs`).
//!
//! It documents every rule code with a section of a fixed shape, and its
//! examples are real: each section's **Bad** example reports the section's code and its
//! **Fixed** example checks clean. Examples are compiled as if they were the file
//! `tests/fixtures/check/err/<code>.kdl`, so relative paths in them (`../support/checks.kdl`)
//! resolve as they do for the fixtures.

use std::path::PathBuf;

use atomic::diagnostic::Code;

use crate::support;

/// One `## \`atomic::<code>\`` section.
struct Section {
    name: String,
    text: String,
    bad: Option<String>,
    fixed: Option<String>,
}

fn sections() -> Vec<Section> {
    let docs = std::fs::read_to_string(support::root().join("docs/diagnostics.md"))
        .expect("docs/diagnostics.md exists");
    let mut sections: Vec<Section> = Vec::new();
    let mut pending: Option<bool> = None; // Some(true): the next kdl block is the fixed one
    let mut block: Option<String> = None;
    for line in docs.lines() {
        if let Some(rest) = line.strip_prefix("## `atomic::") {
            let name = rest.trim_end_matches('`').to_owned();
            sections.push(Section {
                name,
                text: String::new(),
                bad: None,
                fixed: None,
            });
            continue;
        }
        let Some(section) = sections.last_mut() else {
            continue;
        };
        section.text.push_str(line);
        section.text.push('\n');
        if let Some(code) = block.as_mut() {
            if line == "```" {
                let code = block.take().expect("in a block");
                match pending.take() {
                    Some(true) if section.fixed.is_none() => section.fixed = Some(code),
                    Some(false) if section.bad.is_none() => section.bad = Some(code),
                    _ => {}
                }
            } else {
                code.push_str(line);
                code.push('\n');
            }
        } else if line.starts_with("**Bad") {
            pending = Some(false);
        } else if line.starts_with("**Fixed") {
            pending = Some(true);
        } else if line == "```kdl" {
            block = Some(String::new());
        }
    }
    sections
}

/// Where examples of `name` are compiled.
fn place(name: &str) -> PathBuf {
    PathBuf::from(format!("tests/fixtures/check/err/{name}.kdl"))
}

#[test]
fn every_code_has_one_complete_section() {
    let sections = sections();
    let mut problems = Vec::new();
    for section in &sections {
        if Code::from_name(&section.name).is_none() {
            problems.push(format!("`{}` is not a rule code", section.name));
        }
    }
    for code in Code::ALL {
        let found: Vec<&Section> = sections.iter().filter(|s| s.name == code.name()).collect();
        let [section] = found.as_slice() else {
            problems.push(format!("{code}: {} sections", found.len()));
            continue;
        };
        let severity = format!(
            "*{}* · {} — ",
            code.default_severity().as_str(),
            code.group()
        );
        if !section.text.trim_start().starts_with(&severity) {
            problems.push(format!("{code}: does not open with `{severity}…`"));
        }
        if !section.text.contains("**Why it matters:**") {
            problems.push(format!("{code}: no **Why it matters:**"));
        }
        if section.bad.is_none() {
            problems.push(format!("{code}: no **Bad** kdl example"));
        }
        if section.fixed.is_none() {
            problems.push(format!("{code}: no **Fixed** kdl example"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn bad_examples_report_their_code() {
    let mut checked = 0;
    let mut problems = Vec::new();
    for section in sections() {
        let (Some(code), Some(bad)) = (Code::from_name(&section.name), &section.bad) else {
            continue;
        };
        let (sources, compiled) = support::compile_text(&place(&section.name), bad);
        if !compiled.diagnostics.iter().any(|d| d.code == code) {
            problems.push(format!(
                "the bad example of {code} does not report it:\n{bad}\n{}",
                support::render(&sources, &compiled)
            ));
        }
        checked += 1;
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
    assert_eq!(checked, Code::ALL.len());
}

#[test]
fn fixed_examples_check_clean() {
    let mut checked = 0;
    let mut problems = Vec::new();
    for section in sections() {
        let (Some(code), Some(fixed)) = (Code::from_name(&section.name), &section.fixed) else {
            continue;
        };
        let (sources, compiled) = support::compile_text(&place(&section.name), fixed);
        if !compiled.diagnostics.is_empty() {
            problems.push(format!(
                "the fixed example of {code} does not check clean:\n{fixed}\n{}",
                support::render(&sources, &compiled)
            ));
        }
        checked += 1;
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
    assert_eq!(checked, Code::ALL.len());
}

#[test]
fn docs_are_generated_from_the_rules() {
    let path = support::root().join("docs/diagnostics.md");
    let docs = std::fs::read_to_string(&path).expect("docs/diagnostics.md exists");
    let dir = support::fixture("check/err");
    let generated = atomic::diagnostic::reference::markdown(&|name| {
        std::fs::read(dir.join(name))
            .ok()
            .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
    });
    if docs == generated {
        return;
    }
    if std::env::var_os("UPDATE_DIAGNOSTICS_DOCS").is_some() {
        std::fs::write(&path, generated).expect("docs/diagnostics.md is writable");
        return;
    }
    panic!(
        "docs/diagnostics.md is out of date: run `UPDATE_DIAGNOSTICS_DOCS=1 cargo nextest run diagnostic_docs`"
    );
}

/// Each adapter's page in docs/providers/ names every option the adapter reads (the table
/// `atomic check` and the adapters share), so the documentation cannot fall behind it.
#[test]
fn provider_docs_name_every_option() {
    let mut missing = Vec::new();
    for info in atomic::ir::ADAPTERS {
        let path = support::root().join(format!("docs/providers/{}.md", info.name));
        let Ok(page) = std::fs::read_to_string(&path) else {
            continue;
        };
        for option in info.options {
            let named = page.contains(&format!("`{}`", option.name))
                || page.contains(&format!("option \"{}\"", option.name));
            if !named {
                missing.push(format!("{}: `{}`", info.name, option.name));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "options not in docs/providers/: {missing:?}"
    );
}
