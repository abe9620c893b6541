//! `shell-command`: a `tool` runs its command line through a shell.
//!
//! ## What it does
//! Reports every `tool` with `shell=#true`.
//!
//! ## Why is this bad?
//! A shell parses the command line: quoting mistakes, globbing and word splitting change
//! what runs, and any interpolated value becomes code (`tainted-command` reports the
//! untrusted ones). An argv runs exactly the program and arguments written.
//!
//! ## Example
//! ```kdl
//! tool "test" shell=#true { run "cargo test 2>&1 | tail -n 50"; }
//! ```
//!
//! ## Use instead
//! ```kdl
//! tool "test" { run "cargo" "test"; output "log" from="stderr"; }
//! ```

use crate::diagnostic::{Code, Diagnostic};
use crate::ir::NodeKind;

use super::super::driver::Facts;

/// Reports tools run through a shell.
pub(crate) fn check(facts: &Facts<'_>, out: &mut Vec<Diagnostic>) {
    for node in &facts.workflow.nodes {
        let NodeKind::Tool(tool) = &node.kind else {
            continue;
        };
        if !tool.shell {
            continue;
        }
        let span = tool.run.first().map_or(node.id.span, |script| script.span);
        out.push(
            Diagnostic::new(
                Code::ShellCommand,
                span,
                format!("tool `{}` runs its command through a shell", node.id.value),
            )
            .label("parsed by `sh -c`")
            .help("write the command as separate arguments (`run \"prog\" \"arg\" …`) and drop `shell=#true`"),
        );
    }
}

#[cfg(test)]
mod tests {
    use crate::check::analyze::testing::{Builder, messages, run};
    use crate::diagnostic::Code;

    #[test]
    fn reports_shell_tools_only() {
        let mut b = Builder::new();
        let shell = b.tool("pipe", &["cargo test | tail"]);
        b.tool_mut(shell).shell = true;
        b.tool("plain", &["cargo", "test"]);
        assert_eq!(
            messages(&run(&b.finish()), Code::ShellCommand),
            ["tool `pipe` runs its command through a shell"]
        );
    }
}
