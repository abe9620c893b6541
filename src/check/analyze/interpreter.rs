//! Which parts of a `tool`'s argv are code: the script of `bash -c`, `python3 -c`,
//! `node -e`, `perl -e`, `ruby -e`, and the stdin of an interpreter that reads its program
//! there (`sh -s`, `python3 -`, or one given no program at all). Untrusted text in those
//! places is as dangerous as in a `shell=#true` script.
//!
//! Only the written program name is judged (its last path component, versions stripped:
//! `/usr/bin/python3.12` is `python`); a program that is a template, or wrapped in `env`,
//! `nice` and the like, is not followed.

use crate::ir::Tool;

/// An interpreter family, by how its command line says where the program comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Family {
    /// `sh`, `bash`, `zsh`, …: `-c SCRIPT` (in any short-option group: `-ec`), `-s` reads
    /// stdin.
    Shell,
    /// `python`: `-c CODE`, `-` reads stdin.
    Python,
    /// `node`: `-e`/`--eval`/`-p`/`--print CODE`, `-` reads stdin.
    Node,
    /// `perl`, `ruby`: `-e CODE` (in any short-option group: `-ne`, `-lne`), `-` reads stdin.
    Perl,
}

/// Where a tool's command line takes code from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct CodePlaces {
    /// The interpreter, as messages name it ("bash -c"), when it runs code from the argv or
    /// stdin.
    pub interpreter: Option<String>,
    /// The argument (index into `run`) holding the code.
    pub argument: Option<usize>,
    /// Whether stdin is the program.
    pub stdin: bool,
}

/// The code places of `tool` (none for a shell script, custom tool or unknown program).
pub(crate) fn code_places(tool: &Tool) -> CodePlaces {
    let Some(program) = tool.run.first().filter(|_| !tool.shell) else {
        return CodePlaces::default();
    };
    let Some((family, name)) = family(&program.source) else {
        return CodePlaces::default();
    };
    let args = &tool.run[1..];
    let mut places = CodePlaces::default();
    let mut has_program = false;
    let mut at = 0;
    while let Some(arg) = args.get(at).map(|arg| arg.source.as_str()) {
        // `-` is the shell's `--`; elsewhere it names stdin as the program.
        if arg == "--" || (arg == "-" && family == Family::Shell) {
            // What follows is a script file and its arguments (or the shell's `$0`…).
            has_program |= at + 1 < args.len();
            break;
        }
        if arg == "-" {
            places.stdin = true;
            places.interpreter = Some(stdin_name(family, name));
            return places;
        }
        let Some(flag) = arg.strip_prefix('-') else {
            // The first operand is the script file: the program is on disk, not in the
            // argv.
            has_program = true;
            break;
        };
        if takes_code(family, flag) {
            places.argument = Some(at + 2);
            places.interpreter = Some(code_name(family, name));
            return places;
        }
        if family == Family::Shell && !flag.starts_with('-') && flag.contains('s') {
            places.stdin = true;
            places.interpreter = Some(stdin_name(family, name));
            return places;
        }
        match option_kind(family, flag) {
            OptionKind::Flag => at += 1,
            // Its value is the next argument, not an operand.
            OptionKind::WithValue => at += 2,
            // `python -m module`: the program is a module on disk.
            OptionKind::Program => {
                has_program = true;
                break;
            }
        }
    }
    if !has_program {
        places.stdin = true;
        places.interpreter = Some(stdin_name(family, name));
    }
    places
}

/// What an option other than the code and stdin ones does to the command line.
enum OptionKind {
    Flag,
    WithValue,
    Program,
}

fn option_kind(family: Family, flag: &str) -> OptionKind {
    match (family, flag) {
        (Family::Shell, "o" | "O")
        | (Family::Python, "W" | "X")
        | (Family::Node, "r" | "-require" | "-import") => OptionKind::WithValue,
        (Family::Python, "m") => OptionKind::Program,
        _ => OptionKind::Flag,
    }
}

/// The interpreter `program` names, and its name in messages.
fn family(program: &str) -> Option<(Family, &'static str)> {
    let base = program.rsplit('/').next().unwrap_or(program);
    // `python3.12`, `python3`, `perl5.36` → their family.
    let stem = base.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    Some(match stem {
        "sh" => (Family::Shell, "sh"),
        "bash" => (Family::Shell, "bash"),
        "zsh" => (Family::Shell, "zsh"),
        "dash" => (Family::Shell, "dash"),
        "ksh" | "mksh" => (Family::Shell, "ksh"),
        "ash" => (Family::Shell, "ash"),
        "fish" => (Family::Shell, "fish"),
        "python" => (Family::Python, "python"),
        "node" | "nodejs" => (Family::Node, "node"),
        "perl" => (Family::Perl, "perl"),
        "ruby" => (Family::Perl, "ruby"),
        _ => return None,
    })
}

/// Whether option `flag` (after its first `-`) makes the next argument code.
fn takes_code(family: Family, flag: &str) -> bool {
    match family {
        Family::Shell => !flag.starts_with('-') && flag.ends_with('c'),
        Family::Python => flag == "c",
        Family::Node => matches!(flag, "e" | "-eval" | "p" | "-print"),
        Family::Perl => !flag.starts_with('-') && (flag.ends_with('e') || flag.ends_with('E')),
    }
}

fn code_name(family: Family, name: &'static str) -> String {
    match family {
        Family::Shell | Family::Python => format!("{name} -c"),
        Family::Node | Family::Perl => format!("{name} -e"),
    }
}

fn stdin_name(family: Family, name: &'static str) -> String {
    match family {
        Family::Shell => format!("{name} reading its script from stdin"),
        _ => format!("{name} reading its program from stdin"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::analyze::testing::template;

    fn places(argv: &[&str]) -> (Option<usize>, bool) {
        let tool = Tool {
            run: argv.iter().map(|arg| template(arg)).collect(),
            ..Tool::default()
        };
        let places = code_places(&tool);
        (places.argument, places.stdin)
    }

    #[test]
    fn code_arguments_of_each_interpreter() {
        assert_eq!(places(&["bash", "-c", "echo hi"]), (Some(2), false));
        assert_eq!(places(&["sh", "-ec", "echo hi", "arg0"]), (Some(2), false));
        assert_eq!(places(&["/bin/bash", "-x", "-c", "x"]), (Some(3), false));
        assert_eq!(places(&["python3", "-c", "print(1)"]), (Some(2), false));
        assert_eq!(places(&["python3.12", "-u", "-c", "x"]), (Some(3), false));
        assert_eq!(places(&["node", "--eval", "x"]), (Some(2), false));
        assert_eq!(places(&["node", "-e", "x"]), (Some(2), false));
        assert_eq!(places(&["perl", "-ne", "print"]), (Some(2), false));
        assert_eq!(places(&["ruby", "-e", "puts 1"]), (Some(2), false));
    }

    #[test]
    fn stdin_as_the_program() {
        assert_eq!(places(&["sh", "-s"]), (None, true));
        assert_eq!(places(&["bash", "-s", "--", "arg"]), (None, true));
        assert_eq!(places(&["python3", "-"]), (None, true));
        assert_eq!(places(&["python3"]), (None, true));
        assert_eq!(places(&["node", "-"]), (None, true));
        assert_eq!(places(&["bash"]), (None, true));
        assert_eq!(places(&["bash", "-o", "pipefail", "-s"]), (None, true));
    }

    #[test]
    fn scripts_on_disk_and_other_programs_are_not_code() {
        assert_eq!(places(&["bash", "build.sh", "-c"]), (None, false));
        assert_eq!(places(&["python3", "tool.py", "-c", "x"]), (None, false));
        assert_eq!(places(&["python3", "-m", "pytest"]), (None, false));
        assert_eq!(places(&["git", "-c", "x=y", "commit"]), (None, false));
        assert_eq!(places(&["pythonic", "-c", "x"]), (None, false));
        assert_eq!(places(&["sh", "--", "build.sh"]), (None, false));
        assert_eq!(places(&["sh", "-", "build.sh"]), (None, false));
        assert_eq!(
            places(&["bash", "-o", "pipefail", "build.sh"]),
            (None, false)
        );
    }
}
