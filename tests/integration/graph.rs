//! `atomic graph`: the lowered graph of every `tests/fixtures/graph/*.kdl` is snapshot as DOT,
//! Mermaid and its worst-case budget; every fixture and example renders with the real
//! Graphviz (`dot -Tsvg`) and passes the Mermaid structural validator.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use atomic::lower::{self, Plan};

use crate::mermaid_syntax;
use crate::support;

/// Compiles a file that must check without errors and returns its plan.
fn plan(path: &Path) -> Plan {
    let (sources, compiled) = support::compile_file(path);
    let rendered = support::render(&sources, &compiled);
    compiled.plan.unwrap_or_else(|| {
        panic!(
            "{} should lower to a plan, got:\n{rendered}",
            path.display()
        )
    })
}

/// The plans of every graph fixture (which must check clean), then of every example,
/// built-in workflow and `check/ok` fixture that lowers (those with errors are the diagnostics tests' concern).
fn every_plan() -> Vec<(PathBuf, Plan)> {
    let mut plans: Vec<(PathBuf, Plan)> = support::kdl_files(&support::fixture("graph"))
        .into_iter()
        .map(|path| {
            let plan = plan(&path);
            (path, plan)
        })
        .collect();
    let mut others = support::kdl_files(&support::fixture("check/ok"));
    others.extend(support::kdl_files(&support::root().join("examples")));
    others.extend(support::kdl_files(
        &support::root().join("examples/subgraphs"),
    ));
    // The built-in workflows shipped in the binary.
    others.extend(support::kdl_files(&support::root().join("workflows")));
    for path in others {
        if let Some(plan) = support::compile_file(&path).1.plan {
            plans.push((path, plan));
        }
    }
    assert!(
        plans.len() >= 12,
        "too few workflows lower to a plan: {}",
        plans.len()
    );
    plans
}

#[test]
fn graph_fixtures_snapshot_as_dot_mermaid_and_budget() {
    let files = support::kdl_files(&support::fixture("graph"));
    assert!(files.len() >= 6, "graph fixtures are missing");
    for path in files {
        let source = std::fs::read_to_string(&path).expect("fixture is readable");
        assert!(
            source.starts_with("//"),
            "{} must start with a comment saying what it shows",
            path.display()
        );
        let plan = plan(&path);
        let stem = path
            .file_stem()
            .and_then(|s| s.to_str())
            .expect("utf-8 name")
            .to_owned();
        insta::with_settings!({ snapshot_suffix => stem, prepend_module_to_snapshot => false }, {
            insta::assert_snapshot!("graph_dot", lower::dot(&plan));
            insta::assert_snapshot!("graph_mermaid", lower::mermaid(&plan));
            insta::assert_snapshot!("graph_budget", lower::budget(&plan).to_string());
        });
    }
}

#[test]
fn rendering_is_deterministic() {
    for (path, first) in every_plan() {
        let second = support::compile_file(&path).1.plan.expect("lowered before");
        assert_eq!(
            lower::dot(&first),
            lower::dot(&second),
            "{}",
            path.display()
        );
        assert_eq!(
            lower::mermaid(&first),
            lower::mermaid(&second),
            "{}",
            path.display()
        );
    }
}

#[test]
fn every_workflow_renders_with_graphviz() {
    let Some(graphviz) = graphviz() else {
        return;
    };
    for (path, plan) in every_plan() {
        let dot = lower::dot(&plan);
        let svg = graphviz_svg(&graphviz, &dot).unwrap_or_else(|error| {
            panic!(
                "graphviz rejected the graph of {}: {error}\n{dot}",
                path.display()
            )
        });
        assert!(svg.contains("<svg"), "{} gave no SVG", path.display());
    }
}

#[test]
fn graphviz_check_can_fail() {
    let Some(graphviz) = graphviz() else {
        return;
    };
    let error = graphviz_svg(&graphviz, "digraph { a -> }").expect_err("a syntax error");
    assert!(error.contains("syntax error"), "{error}");
}

#[test]
fn every_workflow_emits_valid_mermaid() {
    for (path, plan) in every_plan() {
        let mermaid = lower::mermaid(&plan);
        let problems = mermaid_syntax::problems(&mermaid);
        assert!(
            problems.is_empty(),
            "invalid Mermaid for {}:\n{}\n{mermaid}",
            path.display(),
            problems.join("\n")
        );
    }
}

/// Graphviz's `dot`, or a loud skip.
fn graphviz() -> Option<std::path::PathBuf> {
    support::tools::required_tool("dot", "apt-get install graphviz")
}

/// Runs `dot -Tsvg` on `dot`, bounded to 30 seconds.
fn graphviz_svg(graphviz: &std::path::Path, dot: &str) -> Result<String, String> {
    let mut child = Command::new(graphviz)
        .arg("-Tsvg")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|error| format!("cannot run `dot` (install graphviz): {error}"))?;
    child
        .stdin
        .take()
        .expect("stdin is piped")
        .write_all(dot.as_bytes())
        .map_err(|error| error.to_string())?;
    let deadline = Instant::now() + Duration::from_secs(30);
    while child.try_wait().map_err(|e| e.to_string())?.is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            return Err("`dot` took longer than 30s".into());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let output = child
        .wait_with_output()
        .map_err(|error| error.to_string())?;
    if !output.status.success() || !output.stderr.is_empty() {
        return Err(String::from_utf8_lossy(&output.stderr).into_owned());
    }
    String::from_utf8(output.stdout).map_err(|error| error.to_string())
}
