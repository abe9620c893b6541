//! Generates workflow-shaped KDL for benchmarks: a valid atomic workflow with agents
//! (multi-line and one-line prompts), tools with arguments, `set`s, loops, parallel blocks,
//! decisions and comments. Shared by the `parse` and `check` benches (`#[path]` include).

use std::fmt::Write as _;

/// Statements the header writes: `workflow`, `description`, `input`, `state`, three
/// `field`s and `provider`.
const HEADER_NODES: usize = 8;

/// A valid atomic workflow of exactly `nodes` statements (every KDL node counts, nested
/// ones included; at least the 8 of the header). Ids are unique.
#[must_use]
pub(crate) fn generate_workflow(nodes: usize) -> String {
    let mut out = String::with_capacity(nodes * 100);
    out.push_str(
        r#"workflow "bench" version="1.0.0" {
    description "generated"
    input "target" type="string"
    state {
        field "count" type="integer" default=0
        field "notes" type="array" reduce="append" default="[]"
        field "findings" type="array" default="[]"
    }
    provider "fake" adapter="replay"
"#,
    );
    let mut count = HEADER_NODES;
    let mut id = 0usize;
    while count < nodes {
        id += 1;
        let left = nodes - count;
        // Unit sizes: agent 3, tool 3, set 1, loop 2, parallel 7, decision 3.
        let kind = id % 6;
        let size = [3, 3, 1, 2, 7, 3][kind];
        if size > left {
            set(&mut out);
            count += 1;
            continue;
        }
        if id.is_multiple_of(10) {
            let _ = writeln!(out, "    // step {id}: the next statement is generated");
        }
        match kind {
            0 => agent(&mut out, id),
            1 => tool(&mut out, id),
            2 => set(&mut out),
            3 => looped(&mut out, id),
            4 => parallel(&mut out, id),
            _ => decision(&mut out, id),
        }
        count += size;
    }
    out.push_str("}\n");
    out
}

fn agent(out: &mut String, id: usize) {
    if id.is_multiple_of(2) {
        let _ = write!(
            out,
            r#"    agent "review-{id}" provider="fake" {{
        prompt """
            Review {{{{ input.target }}}} part {id}.
            Findings so far: {{{{ state.findings | length }}}}
            Focus on correctness, then on style; quote the lines you mean.
            """
        output "findings" parse="json"
    }}
"#
        );
    } else {
        let _ = write!(
            out,
            r#"    agent "review-{id}" provider="fake" {{
        prompt "Review {{{{ input.target }}}} part {id}. Findings so far: {{{{ state.findings | length }}}}"
        output "findings" parse="json"
    }}
"#
        );
    }
}

fn tool(out: &mut String, id: usize) {
    let _ = write!(
        out,
        r#"    tool "test-{id}" timeout="10m" {{
        run "cargo" "test" "--quiet"
        output "notes"
    }}
"#
    );
}

fn set(out: &mut String) {
    out.push_str("    set \"count\" \"{{ state.count + 1 }}\"\n");
}

fn looped(out: &mut String, id: usize) {
    let _ = write!(
        out,
        r#"    loop "fix-{id}" until="state.count > 3" max=5 {{
        set "count" "{{{{ state.count + 1 }}}}"
    }}
"#
    );
}

fn parallel(out: &mut String, id: usize) {
    let _ = write!(
        out,
        r#"    /* fan out */ parallel "reviews-{id}" strategy="all" max-concurrency=4 {{
        agent "a-{id}" provider="fake" {{ prompt "A {{{{ input.target }}}}"; output "notes"; }}
        agent "b-{id}" provider="fake" {{ prompt "B {{{{ input.target }}}}"; output "notes"; }}
    }}
"#
    );
}

fn decision(out: &mut String, id: usize) {
    let _ = write!(
        out,
        r#"    decision "gate-{id}" {{
        when "state.count > 10" goto="end"
        otherwise
    }}
"#
    );
}
