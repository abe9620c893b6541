//! `atomic explain [CODE]`: what a rule is for, from the same words as
//! `docs/diagnostics.md` (`Code::explanation`); with no code, every code and its summary.

use super::Exit;
use super::args::ExplainArgs;
use crate::diagnostic::{Code, did_you_mean};

/// Runs `atomic explain`.
pub(super) fn run(args: &ExplainArgs) -> Exit {
    let Some(wanted) = &args.code else {
        let width = Code::ALL
            .iter()
            .map(|code| code.name().len())
            .max()
            .unwrap_or(0);
        for code in Code::ALL {
            println!(
                "{:<width$}  {:<7}  {:<9}  {}",
                code.name(),
                code.default_severity().as_str(),
                code.group(),
                code.summary().trim_end_matches('.')
            );
        }
        println!("\nexplain one with `atomic explain CODE`");
        return Exit::Ok;
    };
    let Some(code) = Code::from_name(wanted) else {
        let near = did_you_mean(
            wanted.trim_start_matches("atomic::"),
            Code::ALL.iter().map(|code| code.name()),
        )
        .map(|near| format!("; did you mean `{near}`?"))
        .unwrap_or_default();
        eprintln!("error: no rule has the code `{wanted}`{near} (`atomic explain` lists them all)");
        return Exit::Usage;
    };
    let explanation = code.explanation();
    println!(
        "{} · {} · {}\n\n{}\n\nWhy it matters: {}\n\n{}",
        code.qualified(),
        code.default_severity().as_str(),
        code.group(),
        explanation.fires,
        explanation.why,
        explanation.advice
    );
    if code.can_silence() {
        println!(
            "\nSilence it with `// atomic-ignore: {}` on the line above, or set its level in `.atomic/config.kdl`.",
            code.name()
        );
    } else {
        println!("\nIt cannot be silenced: the workflow cannot run with it.");
    }
    Exit::Ok
}
