//! `docs/diagnostics.md`, generated: the code table (name, severity, group, summary) from
//! [`Code`], each rule's words from [`Code::explanation`], and its examples from the
//! fixtures, so the reference cannot drift from what `check` does. A test compares the file
//! with this and rewrites it on request.

use std::fmt::Write as _;

use super::Code;

const INTRO: &str = "# Diagnostics

<!-- Generated from src/diagnostic/{code,explain}.rs and tests/fixtures/check/err/: do not
edit; regenerate with `UPDATE_DIAGNOSTICS_DOCS=1 cargo nextest run diagnostic_docs`. -->

Every rule atomic reports, by code: when it fires, why it matters, a bad example and a fixed
one. Each bad example is the rule's fixture `tests/fixtures/check/err/<code>.kdl` (its
rendered diagnostics are snapshot-tested) and each fixed one is `<code>.fixed.kdl` beside
it, which must check clean. `tests/integration/diagnostic_docs.rs` checks every example here
as if it were a file in `tests/fixtures/check/err/`, so relative paths in examples
(`../support/checks.kdl`) point into `tests/fixtures/check/`. `atomic explain <code>` prints
a rule's entry in the terminal.

Silence a rule on the next line with `// atomic-ignore: <code>`, in the whole file with
`// atomic-ignore-file: <code>`, or configure its severity in `.atomic/config.kdl`.
*Errors* keep a workflow from running (no plan is built); errors and *warnings* make
`atomic check` exit 1. Configuration can change a rule's severity, except that errors which
leave a workflow unable to run cannot be silenced or lowered (`unsilenceable-rule`).
Diagnostics with an obvious repair carry it as data (`fix` in `--format json`, `fixes` in
SARIF, a quick fix in the editor).
";

/// The heading of each group's part.
fn group_title(group: &str) -> &'static str {
    match group {
        "syntax" => "Syntax: the KDL text",
        "structure" => "Structure: the workflow language",
        "names" => "Names: references between declarations",
        "flow" => "Flow: the lowered graph",
        "data" => "Data: templates, state, schemas, subgraphs",
        "safety" => "Safety",
        _ => "Lint",
    }
}

/// The whole reference. `fixture` reads a file under `tests/fixtures/check/err/` by name
/// (`<code>.kdl`, `<code>.fixed.kdl`); a missing one shows as an empty example.
#[must_use]
pub fn markdown(fixture: &dyn Fn(&str) -> Option<String>) -> String {
    let mut out = String::from(INTRO);
    out.push_str("\n| code | severity | group | fires when |\n| --- | --- | --- | --- |\n");
    for code in Code::ALL {
        let name = code.name();
        let anchor = format!("atomic{name}");
        let _ = writeln!(
            out,
            "| [`{name}`](#{anchor}) | {} | {} | {} |",
            code.default_severity().as_str(),
            code.group(),
            code.summary().trim_end_matches('.')
        );
    }
    let mut group = "";
    for code in Code::ALL {
        if code.group() != group {
            group = code.group();
            let _ = write!(out, "\n<!-- {} -->\n", group_title(group));
        }
        let name = code.name();
        let explanation = code.explanation();
        let bad = fixture(&format!("{name}.kdl")).unwrap_or_default();
        let fixed = fixture(&format!("{name}.fixed.kdl")).unwrap_or_default();
        let _ = write!(
            out,
            "\n## `atomic::{name}`\n\n*{}* · {} — {}\n\n**Why it matters:** {}\n\n\
             **Bad** (`tests/fixtures/check/err/{name}.kdl`):\n\n```kdl\n{bad}```\n\n\
             **Fixed:**\n\n```kdl\n{fixed}```\n\n{}\n",
            code.default_severity().as_str(),
            code.group(),
            explanation.fires,
            explanation.why,
            explanation.advice
        );
    }
    out
}
