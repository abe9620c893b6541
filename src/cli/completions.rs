//! `atomic completions <shell>`: a completion script for bash, zsh, fish, PowerShell or
//! elvish, generated from the same clap definition the binary parses with. Where a command
//! takes a workflow (`run`, `check`, `graph`, `fmt`), the workflow names this project finds
//! (`atomic list`) are offered; a file path can still be typed.

use clap::CommandFactory;
use clap::builder::PossibleValuesParser;

use super::Exit;
use super::args::{Cli, CompletionsArgs};
use super::project::Project;

/// Runs `atomic completions`.
pub(super) fn run(args: &CompletionsArgs) -> Exit {
    let mut names: Vec<String> = Project::discover()
        .discovered()
        .into_iter()
        .map(|found| found.name)
        .collect();
    names.sort();
    names.dedup();
    let mut command = with_workflow_names(Cli::command(), &names);
    clap_complete::generate(args.shell, &mut command, "atomic", &mut std::io::stdout());
    // clap's fish script offers no values for positional arguments: add the names.
    if args.shell == clap_complete::Shell::Fish {
        print!("{}", fish_names(&names));
    }
    Exit::Ok
}

/// Fish completions of the workflow names for the commands that take a workflow.
fn fish_names(names: &[String]) -> String {
    if names.is_empty() {
        return String::new();
    }
    let words = names.join(" ");
    ["run", "check", "graph", "fmt"]
        .iter()
        .map(|command| {
            format!(
                "complete -c atomic -n \"__fish_atomic_using_subcommand {command}\" -a \"{words}\" -d 'workflow'\n"
            )
        })
        .collect()
}

/// `command` with `names` as the values its workflow arguments offer (for generating the
/// script only: this command never parses).
fn with_workflow_names(command: clap::Command, names: &[String]) -> clap::Command {
    if names.is_empty() {
        return command;
    }
    let offer = |arg: clap::Arg| arg.value_parser(PossibleValuesParser::new(names.to_vec()));
    command
        .mut_subcommand("run", |run| run.mut_arg("flow", offer))
        .mut_subcommand("check", |check| check.mut_arg("files", offer))
        .mut_subcommand("graph", |graph| graph.mut_arg("file", offer))
        .mut_subcommand("fmt", |fmt| fmt.mut_arg("files", offer))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workflow_names_reach_the_script() {
        let mut command = with_workflow_names(Cli::command(), &["ralph".into(), "review".into()]);
        let mut out = Vec::new();
        clap_complete::generate(clap_complete::Shell::Bash, &mut command, "atomic", &mut out);
        let script = String::from_utf8(out).unwrap();
        assert!(script.contains("ralph review"), "the names are offered");
        assert!(script.contains("resume"), "and the subcommands");
        let fish = fish_names(&["ralph".into(), "review".into()]);
        assert!(
            fish.contains("__fish_atomic_using_subcommand run\" -a \"ralph review\""),
            "{fish}"
        );
    }
}
