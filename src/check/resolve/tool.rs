//! `tool "<id>" shell=… use=… { run …; cwd …; env …; stdin …; arg …; ok-codes …; output … }`.

use super::output::resolve_outputs;
use super::resolver::{Resolver, exact};
use crate::check::structure::Checked;
use crate::diagnostic::{Code, Diagnostic};
use crate::ir::{Template, Tool};
use crate::source::Spanned;

/// The tool's command and mappings.
pub(super) fn resolve_tool(r: &mut Resolver<'_>, checked: &Checked<'_>) -> Tool {
    let shell = r.boolean(checked.prop("shell")).unwrap_or(false);
    let use_ = r.string(checked.prop("use"));
    let run_node = checked.child("run");
    let run: Vec<Template> = run_node
        .map(|run| exact(run.args_from(0).filter_map(|arg| r.template(Some(arg)))))
        .unwrap_or_default();
    let wrote_run = checked
        .node
        .children
        .as_ref()
        .is_some_and(|block| block.nodes.iter().any(|node| node.name.value == "run"));
    // `run="…"` written as a property is already reported (`unknown-property`, with the
    // fix); saying the command is missing too would only repeat it.
    let run_as_property = checked
        .node
        .entries
        .iter()
        .any(|entry| entry.key.as_ref().is_some_and(|key| key.value == "run"));
    match (&use_, wrote_run || run_as_property) {
        (None, false) => r.report(
            Diagnostic::new(
                Code::MissingProperty,
                checked.name_span(),
                "`tool` needs a command",
            )
            .label("tool without `run`")
            .help("add `run \"program\" \"arg\"…` inside its block, or `use=\"<custom tool>\"`"),
        ),
        (Some(use_), true) => r.report(
            Diagnostic::new(
                Code::InvalidValue,
                use_.span,
                "`tool` has both `use` and `run`",
            )
            .label("custom tool")
            .with_label(
                run_node.map_or(checked.name_span(), Checked::name_span),
                "and a command",
            )
            .help("keep one: a custom tool (`use=`) or a command (`run`)"),
        ),
        _ => {}
    }
    if shell && run.len() > 1 {
        r.report(
            Diagnostic::new(Code::UnexpectedArgument, run[1].span, "with `shell=#true`, `run` takes one command line")
                .label("extra argument")
                .help("join the command into one string, or drop `shell=#true` to pass arguments separately"),
        );
    }
    Tool {
        run,
        shell,
        use_,
        args: pairs(r, checked, "arg", "argument"),
        cwd: checked.child("cwd").and_then(|cwd| r.template(cwd.arg(0))),
        env: pairs(r, checked, "tool/env", "environment variable"),
        stdin: checked
            .child("stdin")
            .and_then(|stdin| r.template(stdin.arg(0))),
        ok_codes: ok_codes(r, checked),
        outputs: resolve_outputs(r, checked, "tool/output"),
        sandbox: super::sandbox::resolve_sandbox(r, checked),
    }
}

/// `name "template"` children (`arg`, `env`), each name once.
fn pairs(
    r: &mut Resolver<'_>,
    checked: &Checked<'_>,
    id: &str,
    what: &str,
) -> Vec<(Spanned<String>, Template)> {
    let mut pairs: Vec<(Spanned<String>, Template)> = Vec::new();
    for child in checked.children_of(id) {
        let (Some(name), Some(value)) = (r.string(child.arg(0)), r.template(child.arg(1))) else {
            continue;
        };
        if let Some((first, _)) = pairs.iter().find(|(first, _)| first.value == name.value) {
            r.report(
                Diagnostic::new(
                    Code::DuplicateProperty,
                    name.span,
                    format!("{what} `{}` is set twice", name.value),
                )
                .label("set again here")
                .with_label(first.span, "first set here")
                .help("remove one of them"),
            );
            continue;
        }
        pairs.push((name, value));
    }
    pairs
}

fn ok_codes(r: &mut Resolver<'_>, checked: &Checked<'_>) -> Vec<i32> {
    let Some(codes) = checked.child("ok-codes") else {
        return vec![0];
    };
    codes
        .args_from(0)
        .filter_map(|arg| r.integer::<i32>(Some(arg)).map(|code| code.value))
        .collect()
}

#[cfg(test)]
mod tests {
    use crate::check::testing::{codes, resolve_text};
    use crate::diagnostic::Code;
    use crate::ir::{NodeKind, OutputSource};

    fn flow(tool: &str) -> String {
        format!("workflow \"w\" {{\nstate {{ field \"x\"; }}\n{tool}\n}}")
    }

    #[test]
    fn commands() {
        assert_eq!(codes(&flow("tool \"t\"")), [Code::MissingProperty]);
        assert_eq!(codes(&flow("tool \"t\" use=\"fmt\"")), []);
        // A command written as a property is one mistake, reported once.
        assert_eq!(
            codes(&flow("tool \"t\" run=\"cargo test\"")),
            [Code::UnknownProperty]
        );
        assert_eq!(
            codes(&flow("tool \"t\" use=\"fmt\" { run \"x\"; }")),
            [Code::InvalidValue]
        );
        assert_eq!(
            codes(&flow("tool \"t\" shell=#true { run \"ls\" \"-l\"; }")),
            [Code::UnexpectedArgument]
        );
        assert_eq!(
            codes(&flow(
                "tool \"t\" { run \"x\"; env \"A\" \"1\"; env \"A\" \"2\"; }"
            )),
            [Code::DuplicateProperty]
        );
    }

    #[test]
    fn outputs_and_codes() {
        let (outcome, _) = resolve_text(&flow(
            "tool \"t\" { run \"x\"; ok-codes 0 2; output \"x\" from=\"exit-code\"; }",
        ));
        assert_eq!(outcome.diagnostics, vec![]);
        let workflow = outcome.value.unwrap();
        let NodeKind::Tool(tool) = &workflow.nodes[0].kind else {
            panic!()
        };
        assert_eq!(tool.ok_codes, [0, 2]);
        assert_eq!(tool.outputs[0].from, OutputSource::ExitCode);
        assert_eq!(
            codes(&flow(
                "tool \"t\" { run \"x\"; output \"x\" from=\"text\"; }"
            )),
            [Code::InvalidValue]
        );
    }
}
