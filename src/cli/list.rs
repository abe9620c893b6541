//! `atomic list`: the workflows `atomic run NAME` can find, with what they do and what
//! they take.

use serde_json::{Value, json};

use super::Exit;
use super::args::ListArgs;
use super::project::{Discovered, Project};
use crate::ir::{Input, Workflow};

/// Runs `atomic list`.
pub(super) fn run(args: &ListArgs) -> Exit {
    let project = Project::discover();
    let found: Vec<(Discovered, Option<Workflow>)> = project
        .discovered()
        .into_iter()
        .map(|found| {
            let header = found.header();
            (found, header)
        })
        .collect();
    if args.json {
        let list: Vec<Value> = found
            .iter()
            .map(|(found, header)| as_json(found, header.as_ref()))
            .collect();
        println!("{}", Value::Array(list));
    } else {
        print!("{}", table(&found));
    }
    Exit::Ok
}

fn table(found: &[(Discovered, Option<Workflow>)]) -> String {
    let width = found
        .iter()
        .map(|(found, _)| found.name.len())
        .max()
        .unwrap_or(0);
    let mut out = String::new();
    for (found, header) in found {
        let origin = found.origin.name();
        let Some(header) = header else {
            out.push_str(&format!(
                "{:<width$}  {origin:<8}  (unreadable: `atomic check {}` says why)\n",
                found.name,
                found.path.display()
            ));
            continue;
        };
        let description = header.description.as_deref().unwrap_or("");
        out.push_str(&format!(
            "{:<width$}  {origin:<8}  {description}\n",
            found.name
        ));
        let mut details = Vec::new();
        if !header.aliases.is_empty() {
            let aliases: Vec<&str> = header.aliases.iter().map(|a| a.value.as_str()).collect();
            details.push(format!("aliases: {}", aliases.join(", ")));
        }
        if !header.inputs.is_empty() {
            let inputs: Vec<String> = header.inputs.iter().map(input_summary).collect();
            details.push(format!("inputs: {}", inputs.join(", ")));
        }
        if !details.is_empty() {
            out.push_str(&format!(
                "{:width$}  {}\n",
                "",
                details.join(" · "),
                width = width + 10
            ));
        }
    }
    out
}

/// `name: type` for a required input, `name: type = default` otherwise.
fn input_summary(input: &Input) -> String {
    match &input.default {
        Some(default) => format!("{}: {} = {default}", input.name.value, input.ty.name()),
        None => format!("{}: {}", input.name.value, input.ty.name()),
    }
}

fn as_json(found: &Discovered, header: Option<&Workflow>) -> Value {
    let mut entry = json!({
        "name": found.name,
        "origin": found.origin.name(),
        "path": found.path.display().to_string(),
    });
    if let Some(header) = header {
        entry["workflow"] = json!(header.name.value);
        entry["version"] = json!(header.version.as_ref().map(|v| &v.value));
        entry["description"] = json!(header.description);
        entry["aliases"] = json!(header.aliases.iter().map(|a| &a.value).collect::<Vec<_>>());
        entry["inputs"] = header
            .inputs
            .iter()
            .map(|input| {
                json!({
                    "name": input.name.value,
                    "type": input.ty.name(),
                    "required": input.default.is_none(),
                    "default": input.default,
                    "description": input.description,
                })
            })
            .collect();
    }
    entry
}
