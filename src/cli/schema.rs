//! `atomic schema [NAME]`: the JSON Schemas atomic publishes, built into the binary.

use super::Exit;
use super::args::SchemaArgs;

/// Every schema: name, what it describes, its text.
const SCHEMAS: &[(&str, &str, &str)] = &[
    (
        "events",
        "one line of `atomic run --stream …` and one entry of a run's event log",
        include_str!("../../schemas/events.schema.json"),
    ),
    (
        "cassette",
        "a recorded transcript the `replay` adapter plays (`atomic run --record`)",
        include_str!("../../schemas/cassette.schema.json"),
    ),
];

/// Runs `atomic schema`.
pub(super) fn run(args: &SchemaArgs) -> Exit {
    let Some(name) = &args.name else {
        let width = SCHEMAS
            .iter()
            .map(|(name, ..)| name.len())
            .max()
            .unwrap_or(0);
        for (name, about, _) in SCHEMAS {
            println!("{name:<width$}  {about}");
        }
        println!("\nprint one with `atomic schema NAME`");
        return Exit::Ok;
    };
    let wanted = name.trim_end_matches(".json").trim_end_matches(".schema");
    match SCHEMAS.iter().find(|(name, ..)| *name == wanted) {
        Some((_, _, text)) => {
            print!("{text}");
            if !text.ends_with('\n') {
                println!();
            }
            Exit::Ok
        }
        None => {
            let names: Vec<&str> = SCHEMAS.iter().map(|(name, ..)| *name).collect();
            eprintln!(
                "error: no schema `{name}`: expected {}",
                crate::diagnostic::expected_one_of(&names)
            );
            Exit::Usage
        }
    }
}
