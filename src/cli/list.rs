//! `atomic list`: the workflows `atomic run NAME` can find, with what they do and what
//! they take; `atomic list agents|skills|commands|tools`: what workflows can use, where
//! each was found, with its description and argument hint; `atomic list adapters`: every
//! provider adapter, what it supports, the options it reads and its limits; `atomic list
//! models`: the model catalogue with prices and the form each adapter needs.

use serde_json::{Value, json};

use super::Exit;
use super::args::{ListArgs, ListKind};
use super::project::{Discovered, Project};
use crate::ir::models::{self, ModelInfo};
use crate::ir::{ADAPTERS, AdapterInfo, DefinitionKind, Input, Workflow, takes_mcp};
use crate::registry::agents::{Catalog, Roots};
use crate::registry::{discover_tools, tool_dirs};
use crate::source::Sources;

/// Runs `atomic list`.
pub(super) fn run(args: &ListArgs) -> Exit {
    let project = Project::discover();
    let rows = match args.what {
        ListKind::Workflows => return workflows(&project, args.json),
        ListKind::Agents => definitions(&project, DefinitionKind::Agent),
        ListKind::Skills => definitions(&project, DefinitionKind::Skill),
        ListKind::Commands => definitions(&project, DefinitionKind::Command),
        ListKind::Tools => tools(&project),
        ListKind::Adapters => return adapters(args.json),
        ListKind::Models => return models(args.adapter.as_deref(), args.json),
    };
    if args.json {
        let list: Vec<Value> = rows.iter().map(Row::to_json).collect();
        println!("{}", Value::Array(list));
    } else {
        print!("{}", rows_table(&rows));
    }
    Exit::Ok
}

/// Every adapter, from the one table `check` and the providers use.
fn adapters(json: bool) -> Exit {
    let features = |info: &AdapterInfo| -> Vec<&'static str> {
        [
            (info.tools, "tools"),
            (info.custom_tools, "custom-tools"),
            (info.permission_modes, "permission"),
            (info.asks_people, "permission=ask"),
            (takes_mcp(info.name), "mcp"),
            (info.system_prompt, "system"),
            (info.sessions, "sessions"),
            (info.max_turns, "max-turns"),
        ]
        .into_iter()
        .filter_map(|(supported, name)| supported.then_some(name))
        .collect()
    };
    if json {
        let list: Vec<Value> = ADAPTERS
            .iter()
            .map(|info| {
                let mut entry = serde_json::to_value(info).unwrap_or_default();
                entry["mcp"] = json!(takes_mcp(info.name));
                entry["options"] = json!(info.options.iter().map(|o| o.name).collect::<Vec<_>>());
                entry["limits"] = json!(info.limits());
                entry
            })
            .collect();
        println!("{}", Value::Array(list));
        return Exit::Ok;
    }
    let width = ADAPTERS
        .iter()
        .map(|info| info.name.len())
        .max()
        .unwrap_or(0);
    for info in ADAPTERS {
        println!("{:width$}  {}", info.name, info.description);
        println!("{:width$}  supports: {}", "", features(info).join(", "));
        if !info.options.is_empty() {
            let options: Vec<&str> = info.options.iter().map(|option| option.name).collect();
            println!("{:width$}  options: {}", "", options.join(", "));
        }
        for limit in info.limits() {
            println!("{:width$}  limit: {limit}", "");
        }
    }
    Exit::Ok
}

/// The model catalogue (`ir::models`), joined with the shipped price table: every model,
/// or those `adapter` runs, written as it needs them.
fn models(adapter: Option<&str>, json: bool) -> Exit {
    let prices = crate::providers::PriceTable::with_overrides(Vec::new());
    let runs_on = |model: &ModelInfo| -> Vec<(&'static str, String)> {
        ADAPTERS
            .iter()
            .filter(|info| !matches!(models::naming(info.name), models::Naming::Free))
            .filter_map(|info| {
                let form = models::written_for(info.name, model.id)
                    .or_else(|problem| match problem {
                        models::ModelProblem::NeedsPrefix { fix: Some(fix) } => Ok(fix),
                        other => Err(other),
                    })
                    .ok()?;
                Some((info.name, form))
            })
            .collect()
    };
    let rows: Vec<(&ModelInfo, Vec<(&'static str, String)>)> = models::MODELS
        .iter()
        .map(|model| (model, runs_on(model)))
        .filter(|(_, adapters)| adapter.is_none_or(|a| adapters.iter().any(|(name, _)| *name == a)))
        .collect();
    if let Some(adapter) = adapter
        && matches!(models::naming(adapter), models::Naming::Free)
    {
        eprintln!(
            "`{adapter}` takes any model its backend knows (it is passed as written); the catalogue's models follow for reference"
        );
    }
    if json {
        let list: Vec<Value> = rows
            .iter()
            .map(|(model, adapters)| {
                let price = prices.lookup(model.id).map(|found| found.price);
                json!({
                    "id": model.id,
                    "vendor": model.vendor,
                    "aliases": model.aliases,
                    "context_window": model.context_window,
                    "price_per_million": price,
                    "written": adapters.iter().map(|(name, form)| (name.to_string(), json!(form))).collect::<serde_json::Map<_, _>>(),
                })
            })
            .collect();
        println!("{}", Value::Array(list));
        return Exit::Ok;
    }
    let width = models::MODELS.iter().map(|m| m.id.len()).max().unwrap_or(0);
    println!(
        "{:width$}  {:9}  {:>9}  {:>15}  aliases and adapters",
        "model", "vendor", "context", "$/M in / out"
    );
    for (model, adapters) in rows {
        let price = prices.lookup(model.id).map_or_else(
            || "-".to_owned(),
            |found| format!("{} / {}", found.price.input, found.price.output),
        );
        let mut notes: Vec<String> = model
            .aliases
            .iter()
            .map(|alias| format!("`{alias}`"))
            .collect();
        let shown: Vec<String> = adapters
            .iter()
            .filter(|(name, _)| adapter.is_none_or(|a| a == *name))
            .map(|(name, form)| {
                if form == model.id {
                    (*name).to_owned()
                } else {
                    format!("{name} `{form}`")
                }
            })
            .collect();
        notes.push(shown.join(", "));
        println!(
            "{:width$}  {:9}  {:>9}  {:>15}  {}",
            model.id,
            model.vendor.display(),
            model.context_window,
            price,
            notes.join("; ")
        );
    }
    Exit::Ok
}

/// One agent, skill, command or tool.
struct Row {
    name: String,
    /// Where it was found, relative to the project or `~`.
    from: String,
    description: Option<String>,
    /// Its argument hint, or a tool's arguments.
    arguments: Option<String>,
    aliases: Vec<String>,
    /// Why it cannot be used.
    problem: Option<String>,
}

impl Row {
    fn to_json(&self) -> Value {
        json!({
            "name": self.name,
            "from": self.from,
            "description": self.description,
            "arguments": self.arguments,
            "aliases": self.aliases,
            "problem": self.problem,
        })
    }
}

/// `path` as people read it: relative to the project, or to `~`.
fn shown(project: &Project, path: &std::path::Path) -> String {
    if let Ok(inside) = path.strip_prefix(&project.root) {
        return inside.display().to_string();
    }
    if let Some(home) = &project.home
        && let Ok(inside) = path.strip_prefix(home)
    {
        return format!("~/{}", inside.display());
    }
    path.display().to_string()
}

fn definitions(project: &Project, kind: DefinitionKind) -> Vec<Row> {
    let roots = Roots {
        project: Some(project.root.clone()),
        home: project.home.clone(),
    };
    Catalog::discover(&crate::disk::Disk, &roots)
        .entries()
        .filter(|entry| entry.kind == kind)
        .map(|entry| {
            let (description, arguments, aliases, problem) = match &entry.parsed {
                Ok(front) => (
                    front.description.clone(),
                    front.argument_hint.clone(),
                    front.aliases.clone(),
                    None,
                ),
                Err(error) => (None, None, Vec::new(), Some(error.message.clone())),
            };
            Row {
                name: entry.name.clone(),
                from: shown(project, &entry.path),
                description,
                arguments,
                aliases,
                problem,
            }
        })
        .collect()
}

fn tools(project: &Project) -> Vec<Row> {
    let files = crate::disk::Disk;
    let user_dir = project.home.as_ref().map(|home| home.join(".atomic"));
    // The directories a workflow at the project's root would see.
    let dirs = tool_dirs(&files, &project.root.join("list.kdl"), user_dir.as_deref());
    let mut sources = Sources::new();
    let found = discover_tools(&mut sources, &files, &dirs);
    let mut rows: Vec<Row> = found
        .value
        .unwrap_or_default()
        .into_iter()
        .map(|tool| {
            let arguments: Vec<String> = tool
                .arguments
                .iter()
                .map(|argument| {
                    if argument.required {
                        argument.name.value.clone()
                    } else {
                        format!("[{}]", argument.name.value)
                    }
                })
                .collect();
            Row {
                from: shown(project, &sources.get(tool.span.source).path),
                name: tool.name.value,
                description: tool.description,
                arguments: (!arguments.is_empty()).then(|| arguments.join(" ")),
                aliases: Vec::new(),
                problem: None,
            }
        })
        .collect();
    // Files that do not resolve are listed with why (`atomic check` shows the detail).
    for problem in found.diagnostics {
        rows.push(Row {
            name: String::new(),
            from: shown(project, &sources.get(problem.span.source).path),
            description: None,
            arguments: None,
            aliases: Vec::new(),
            problem: Some(problem.message),
        });
    }
    rows
}

fn rows_table(rows: &[Row]) -> String {
    if rows.is_empty() {
        return "(none found)\n".to_owned();
    }
    let width = rows.iter().map(|row| row.name.len()).max().unwrap_or(0);
    let mut out = String::new();
    for row in rows {
        let what = match (&row.problem, &row.description) {
            (Some(problem), _) => format!("(cannot be used: {problem})"),
            (None, Some(description)) => description.lines().next().unwrap_or("").to_owned(),
            (None, None) => String::new(),
        };
        out.push_str(&format!("{:<width$}  {}  {what}\n", row.name, row.from));
        let mut details = Vec::new();
        if let Some(arguments) = &row.arguments {
            details.push(format!("arguments: {arguments}"));
        }
        if !row.aliases.is_empty() {
            details.push(format!("aliases: {}", row.aliases.join(", ")));
        }
        if !details.is_empty() {
            out.push_str(&format!("{:width$}  {}\n", "", details.join(" · ")));
        }
    }
    out
}

/// The workflows, as a table or JSON.
fn workflows(project: &Project, json: bool) -> Exit {
    let found: Vec<(Discovered, Option<Workflow>)> = project
        .discovered()
        .into_iter()
        .map(|found| {
            let header = found.header();
            (found, header)
        })
        .collect();
    if json {
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
