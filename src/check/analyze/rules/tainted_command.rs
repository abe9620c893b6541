//! `tainted-command`: untrusted text is interpolated into a `tool` command line.
//!
//! ## What it does
//! Untrusted text is an agent's reply (`outputs.<agent>`), a person's `wait` answer
//! (`outputs.<wait>`), a workflow input (`input.*`), or anything derived from them: a
//! state field an agent or wait writes, a `set` that copies tainted data, a subgraph
//! output copied from such a field, a `for-each` item over a tainted list (see `taint`).
//! For each `tool`:
//!
//! - `shell=#true`: any untrusted interpolation in the `run` script is an error: the shell
//!   parses the value, so `; rm -rf ~` in a reply runs.
//! - Without a shell, the program (`run`'s first argument) must not interpolate untrusted
//!   text: the value picks what runs.
//! - A later argument may hold untrusted text when it is the whole argument
//!   (`"{{ outputs.title }}"` alone): it reaches the program as exactly one argument.
//!   Interpolated into an argument that starts with `-` (`"--message={{ x }}"`, `"-{{ x }}"`),
//!   it is reported as option injection: the value shapes which option the program sees.
//!   Other partial interpolations (`"src/{{ input.name }}.rs"`) are accepted.
//! - `cwd`: an agent reply or answer may not pick the working directory (a build in a
//!   directory the model chose runs that directory's build scripts). Inputs may: choosing
//!   where to run is what a workflow input is for.
//! - Code run by an interpreter is a script like a shell's: the argument after `bash -c`,
//!   `sh -c`, `python3 -c`, `node -e`, `perl -e`, `ruby -e`, and `stdin` when the
//!   interpreter reads its program there (`sh -s`, `python3 -`, or no program given); see
//!   `interpreter`.
//!
//! `env` values, `stdin` (of a program that reads data there) and custom-tool `arg`s are the
//! safe channels and are not checked. A value that can only be a number, a boolean or one of
//! the workflow's own choices (a typed field or input, a typed `wait` answer) carries no
//! text to inject, and is not untrusted (see `taint`).
//! A whole-argument value can still start with `-`; put `--` before it when the program
//! supports that.
//!
//! ## Why is this bad?
//! A model's reply is attacker-controlled as soon as the model reads untrusted content
//! (an issue, a web page, a file): command injection.
//!
//! ## Example
//! ```kdl
//! tool "commit" shell=#true { run "git commit -m '{{ outputs.summary }}'"; }
//! ```
//!
//! ## Use instead
//! ```kdl
//! tool "commit" { run "git" "commit" "-F" "-"; stdin "{{ outputs.summary }}"; }
//! ```

use std::collections::HashSet;

use crate::diagnostic::{Code, Diagnostic};
use crate::ir::{NodeKind, Template};

use super::super::driver::Facts;
use super::super::interpreter::code_places;
use super::super::model::Role;
use super::super::reads::Read;
use super::super::taint::{Kind, Taints};

/// Reports untrusted interpolation into command lines.
pub(crate) fn check(facts: &Facts<'_>, out: &mut Vec<Diagnostic>) {
    let workflow = facts.workflow;
    let has_tools = workflow
        .nodes
        .iter()
        .any(|node| matches!(node.kind, NodeKind::Tool(_)));
    if !has_tools {
        return;
    }
    let taints = Taints::compute(&facts.model, Some(&facts.callees));
    let mut seen = HashSet::new();
    for site in &facts.model.sites {
        let NodeKind::Tool(tool) = &workflow.node(site.node).kind else {
            continue;
        };
        let places = code_places(tool);
        let place = match site.role {
            Role::Run(_) if tool.shell => Place::Script,
            Role::Run(index) if places.argument == Some(index) => Place::Code,
            Role::Stdin if places.stdin => Place::Code,
            Role::Run(0) => Place::Program,
            Role::Run(_) if is_whole_argument(site.template) => continue,
            Role::Run(_) if site.template.source.trim_start().starts_with('-') => Place::Option,
            Role::Cwd => Place::Directory,
            _ => continue,
        };
        for read in site.reads() {
            let Some(source) = taints.read(&facts.model, site.node, read) else {
                continue;
            };
            if place == Place::Directory && source.kind == Kind::Input {
                continue;
            }
            if !seen.insert((site.node, site.role, read.path.as_str())) {
                continue;
            }
            out.push(diagnostic(
                facts,
                site.node,
                (
                    place,
                    places.interpreter.as_deref().unwrap_or("the interpreter"),
                ),
                read,
                &source.origin,
                site.template,
            ));
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Place {
    Script,
    /// The code an interpreter runs: `bash -c`'s script, `python3 -c`'s program, the
    /// program an interpreter reads from stdin.
    Code,
    Program,
    Option,
    Directory,
}

/// Whether the argument is exactly one `{{ … }}` and nothing else.
fn is_whole_argument(template: &Template) -> bool {
    let text = template.source.trim();
    text.starts_with("{{")
        && text.ends_with("}}")
        && text.matches("{{").count() == 1
        && !text.contains("{%")
}

fn diagnostic(
    facts: &Facts<'_>,
    node: crate::ir::NodeIdx,
    (place, interpreter): (Place, &str),
    read: &Read,
    origin: &str,
    template: &Template,
) -> Diagnostic {
    let id = &facts.workflow.node(node).id.value;
    let (message, label, help) = match place {
        Place::Script => (
            format!("`{}` is interpolated into the shell script of `{id}`", read.path),
            format!("the shell parses {origin}"),
            "pass it through `env` or `stdin` instead, and quote it in the script (`\"$NAME\"`)".to_owned(),
        ),
        Place::Code => (
            format!("`{}` is interpolated into the code `{id}` runs", read.path),
            format!("{interpreter} runs {origin} as code"),
            "keep the code fixed and hand it the value as data: through `env` (read as `$NAME`, `os.environ`, `process.env`), or as an argument after the code".to_owned(),
        ),
        Place::Program => (
            format!("`{}` picks the program `{id}` runs", read.path),
            format!("the program name comes from {origin}"),
            "run a fixed program; pass the value as an argument, through `env` or `stdin` instead".to_owned(),
        ),
        Place::Option => {
            let option: String = template.source.trim().chars().take_while(|c| *c != '{').collect();
            (
                format!("`{}` is interpolated into the option `{option}` of `{id}`", read.path),
                format!("option injection: {origin} shapes this option"),
                "pass it as a whole argument after the option (`\"--message\" \"{{ … }}\"`), or through `env` or `stdin` instead".to_owned(),
            )
        }
        Place::Directory => (
            format!("`{}` picks the working directory of `{id}`", read.path),
            format!("the directory comes from {origin}"),
            "use a fixed directory or a workflow input; pass the value through `env` or `stdin` instead".to_owned(),
        ),
    };
    Diagnostic::new(Code::TaintedCommand, read.span, message)
        .label(label)
        .help(help)
}

#[cfg(test)]
mod tests {
    use crate::check::analyze::testing::{Builder, messages, run};
    use crate::diagnostic::Code;
    use crate::ir::ValueType;

    #[test]
    fn shell_scripts_take_no_untrusted_text() {
        let mut b = Builder::new();
        b.field("summary", ValueType::String, None);
        b.agent_to("write", "x", "summary");
        let commit = b.tool(
            "commit",
            &["git commit -m '{{ state.summary }}' {{ run.id }}"],
        );
        b.tool_mut(commit).shell = true;
        let found = run(&b.finish());
        assert_eq!(
            messages(&found, Code::TaintedCommand),
            ["`state.summary` is interpolated into the shell script of `commit`"]
        );
    }

    #[test]
    fn argv_rules() {
        let mut b = Builder::new();
        b.input("target", ValueType::String, None);
        b.agent("pick", "x");
        b.tool("program", &["{{ outputs.pick }}", "--flag"]);
        b.tool(
            "args",
            &[
                "git",
                "commit",
                "-m",
                "{{ outputs.pick }}",
                "--message={{ outputs.pick }}",
                "src/{{ input.target }}.rs",
                "-{{ input.target }}",
            ],
        );
        let found = run(&b.finish());
        assert_eq!(
            messages(&found, Code::TaintedCommand),
            [
                "`outputs.pick` picks the program `program` runs",
                "`outputs.pick` is interpolated into the option `--message=` of `args`",
                "`input.target` is interpolated into the option `-` of `args`",
            ]
        );
    }

    #[test]
    fn cwd_rejects_agent_text_but_not_inputs() {
        let mut b = Builder::new();
        b.input("dir", ValueType::String, None);
        b.agent("pick", "x");
        let from_input = b.tool("a", &["cargo", "test"]);
        let cwd = b.tpl("{{ input.dir }}");
        b.tool_mut(from_input).cwd = Some(cwd);
        let from_agent = b.tool("b", &["cargo", "test"]);
        let cwd = b.tpl("{{ outputs.pick }}/sub");
        b.tool_mut(from_agent).cwd = Some(cwd);
        let env = (b.name("PICK"), b.tpl("{{ outputs.pick }}"));
        b.tool_mut(from_agent).env.push(env);
        let found = run(&b.finish());
        assert_eq!(
            messages(&found, Code::TaintedCommand),
            ["`outputs.pick` picks the working directory of `b`"]
        );
    }
}
