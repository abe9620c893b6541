//! Everything `/` can name in the chat, discovered once when the chat starts (and again on
//! `/reload`): the built-in commands, every workflow `atomic run NAME` finds (the project's
//! over the user's over the built-ins), and every command and skill written for atomic or
//! another tool (`.claude/commands/*.md`, `.atomic/skills/<name>/SKILL.md`, …).
//!
//! **One name, one meaning.** When two things share a name, the first of these wins and
//! the others cannot be typed (they are listed by [`Catalogue::hidden`]): the built-ins,
//! then workflows (file names, then declared names and aliases), then commands, then
//! skills (each by its name, then its aliases).

use std::path::PathBuf;

use crate::cli::project::{Discovered, Project};
use crate::ir::models::MODELS;
use crate::ir::{ADAPTERS, DefinitionKind, ValueType, Workflow};
use crate::registry::agents::{Catalog, Roots};

/// What a name is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Kind {
    /// A command of the chat itself (`/model`, `/quit`…).
    Builtin,
    /// A workflow, run with the words as its inputs.
    Workflow,
    /// A command file: its text, the arguments put in, is sent to the agent.
    Command,
    /// A skill: its instructions, the arguments put in, are sent to the agent.
    Skill,
}

impl Kind {
    /// How the chat names the kind.
    #[must_use]
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Builtin => "built-in",
            Self::Workflow => "workflow",
            Self::Command => "command",
            Self::Skill => "skill",
        }
    }
}

/// A command of the chat itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Builtin {
    /// `/model [MODEL]`.
    Model,
    /// `/provider [ADAPTER]`.
    Provider,
    /// `/clear`.
    Clear,
    /// `/compact`.
    Compact,
    /// `/resume [SESSION]`.
    Resume,
    /// `/reload`.
    Reload,
    /// `/help`.
    Help,
    /// `/quit` (and `/exit`).
    Quit,
}

/// The built-ins: name, what it is, description and argument hint.
const BUILTINS: &[(&str, Builtin, &str, Option<&str>)] = &[
    (
        "model",
        Builtin::Model,
        "Switch the model (none: show the one in use)",
        Some("[MODEL]"),
    ),
    (
        "provider",
        Builtin::Provider,
        "Switch the agent adapter (none: show the one in use)",
        Some("[ADAPTER]"),
    ),
    ("clear", Builtin::Clear, "Start a new conversation", None),
    (
        "compact",
        Builtin::Compact,
        "Summarise the conversation so far to free context",
        None,
    ),
    (
        "resume",
        Builtin::Resume,
        "Go on with a saved session (none: list them)",
        Some("[SESSION]"),
    ),
    (
        "reload",
        Builtin::Reload,
        "Find workflows, commands and skills again",
        None,
    ),
    ("help", Builtin::Help, "List the slash commands", None),
    ("quit", Builtin::Quit, "Leave the chat", None),
    ("exit", Builtin::Quit, "Leave the chat", None),
];

/// One input of a workflow, as slash commands fill it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct WorkflowInput {
    /// Its name.
    pub(crate) name: String,
    /// Its declared type.
    pub(crate) ty: ValueType,
    /// Whether it must be given (it has no default).
    pub(crate) required: bool,
    /// Its `description=`.
    pub(crate) description: Option<String>,
}

/// What a name runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Target {
    /// A command of the chat.
    Builtin(Builtin),
    /// A workflow file (a `<built-in>/` path for the built-ins) and its inputs in declared
    /// order, or why it cannot be read.
    Workflow {
        /// The file.
        path: PathBuf,
        /// Its inputs, or why its declarations cannot be read.
        inputs: Result<Vec<WorkflowInput>, String>,
    },
    /// A command or skill: its body (the Markdown after the front matter), or why it
    /// cannot be used.
    Text {
        /// The file it was read from.
        path: PathBuf,
        /// Its body, or why it cannot be used.
        body: Result<String, String>,
    },
}

/// One name `/` can take.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    /// The name, without the `/`.
    pub(crate) name: String,
    /// What it is.
    pub(crate) kind: Kind,
    /// One line on what it does.
    pub(crate) description: Option<String>,
    /// What it takes, for people: `[MODEL]`, `<goal> [max]`, a command's `argument-hint`.
    pub(crate) hint: Option<String>,
    /// The name this one is an alias of (a workflow's declared name or `alias`, a
    /// definition's `aliases`).
    pub(crate) alias_of: Option<String>,
    /// What it runs.
    pub(crate) target: Target,
}

impl Entry {
    /// Whether it takes arguments.
    #[must_use]
    pub(crate) fn takes_arguments(&self) -> bool {
        match &self.target {
            Target::Builtin(builtin) => matches!(
                builtin,
                Builtin::Model | Builtin::Provider | Builtin::Resume
            ),
            Target::Workflow { inputs, .. } => inputs.as_ref().map_or(true, |i| !i.is_empty()),
            Target::Text { .. } => true,
        }
    }
}

/// A value an argument can take (a model, an adapter, a saved session).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Choice {
    /// The value as typed.
    pub(crate) value: String,
    /// One line about it.
    pub(crate) description: Option<String>,
}

/// Every name `/` can take, and the values `/model`, `/provider` and `/resume` offer.
#[derive(Clone, Debug, Default)]
pub(crate) struct Catalogue {
    entries: Vec<Entry>,
    hidden: Vec<Entry>,
    models: Vec<Choice>,
    adapters: Vec<Choice>,
    sessions: Vec<Choice>,
}

impl Catalogue {
    /// Discovers everything for `project`: its workflows (the project's over the user's
    /// over the built-ins) and the commands and skills under its root and the home.
    #[must_use]
    pub(crate) fn discover(project: &Project) -> Self {
        let workflows = project
            .discovered()
            .into_iter()
            .map(|found| {
                let header = found.header();
                (found, header)
            })
            .collect::<Vec<_>>();
        let roots = Roots {
            project: Some(project.root.clone()),
            home: project.home.clone(),
        };
        let definitions = Catalog::discover(&crate::disk::Disk, &roots);
        Self::from_parts(&workflows, &definitions)
    }

    /// The catalogue of `workflows` (each with its declarations, `None` when unreadable)
    /// and the commands and skills of `definitions`.
    #[must_use]
    pub(crate) fn from_parts(
        workflows: &[(Discovered, Option<Workflow>)],
        definitions: &Catalog,
    ) -> Self {
        let mut catalogue = Self {
            models: models(),
            adapters: ADAPTERS
                .iter()
                .map(|info| Choice {
                    value: info.name.to_owned(),
                    description: Some(info.description.to_owned()),
                })
                .collect(),
            ..Self::default()
        };
        for &(name, builtin, description, hint) in BUILTINS {
            catalogue.add(Entry {
                name: name.to_owned(),
                kind: Kind::Builtin,
                description: Some(description.to_owned()),
                hint: hint.map(str::to_owned),
                alias_of: (name == "exit").then(|| "quit".to_owned()),
                target: Target::Builtin(builtin),
            });
        }
        // Names before aliases, so an alias never hides another workflow's name.
        let workflows: Vec<(Entry, Vec<String>)> = workflows
            .iter()
            .map(|(found, header)| workflow_entry(found, header.as_ref()))
            .collect();
        catalogue.add_all(&workflows);
        for kind in [DefinitionKind::Command, DefinitionKind::Skill] {
            let definitions: Vec<(Entry, Vec<String>)> = definitions
                .entries()
                .filter(|found| found.kind == kind)
                .map(definition_entry)
                .collect();
            catalogue.add_all(&definitions);
        }
        catalogue
    }

    /// The same, with `sessions` offered to `/resume` (the newest first).
    #[must_use]
    pub(crate) fn with_sessions(mut self, sessions: Vec<Choice>) -> Self {
        self.sessions = sessions;
        self
    }

    /// Every name, built-ins first, then workflows, commands and skills (each in
    /// discovery order, aliases after names).
    pub(crate) fn entries(&self) -> impl Iterator<Item = &Entry> {
        self.entries.iter()
    }

    /// The entry called `name` (without the `/`).
    #[must_use]
    pub(crate) fn find(&self, name: &str) -> Option<&Entry> {
        self.entries.iter().find(|entry| entry.name == name)
    }

    /// What a name that was taken already hides (see the module).
    #[cfg(test)]
    pub(crate) fn hidden(&self) -> impl Iterator<Item = &Entry> {
        self.hidden.iter()
    }

    /// The values `/model`, `/provider` or `/resume` offer; empty for other built-ins.
    #[must_use]
    pub(crate) fn choices(&self, builtin: Builtin) -> &[Choice] {
        match builtin {
            Builtin::Model => &self.models,
            Builtin::Provider => &self.adapters,
            Builtin::Resume => &self.sessions,
            _ => &[],
        }
    }

    /// `/help`: every name with what it takes and does, by kind.
    #[must_use]
    pub(crate) fn help(&self) -> String {
        let shown = |entry: &Entry| match &entry.hint {
            Some(hint) => format!("/{} {hint}", entry.name),
            None => format!("/{}", entry.name),
        };
        let width = self
            .entries
            .iter()
            .map(|entry| shown(entry).chars().count())
            .max()
            .unwrap_or(0);
        let mut out = String::new();
        for kind in [Kind::Builtin, Kind::Workflow, Kind::Command, Kind::Skill] {
            let of_kind: Vec<&Entry> = self
                .entries
                .iter()
                .filter(|entry| entry.kind == kind && entry.alias_of.is_none())
                .collect();
            if of_kind.is_empty() {
                continue;
            }
            out.push_str(match kind {
                Kind::Builtin => "Chat commands\n",
                Kind::Workflow => {
                    "\nWorkflows (words fill the inputs in order; `name=value` fills one by name)\n"
                }
                Kind::Command => "\nCommands (sent to the agent with the arguments put in)\n",
                Kind::Skill => "\nSkills (sent to the agent with the arguments put in)\n",
            });
            for entry in of_kind {
                let mut line = format!("  {:<width$}  ", shown(entry));
                line.push_str(
                    entry
                        .description
                        .as_deref()
                        .and_then(|text| text.lines().next())
                        .unwrap_or(""),
                );
                let aliases: Vec<String> = self
                    .entries
                    .iter()
                    .filter(|other| other.alias_of.as_deref() == Some(&entry.name))
                    .filter(|other| other.kind == entry.kind)
                    .map(|other| format!("/{}", other.name))
                    .collect();
                if !aliases.is_empty() {
                    line.push_str(&format!(" (also {})", aliases.join(", ")));
                }
                out.push_str(line.trim_end());
                out.push('\n');
            }
        }
        out.push_str("\nStart a line with `//` to send a literal `/`.\n");
        out
    }

    /// Adds `entry` unless its name is taken (then it is hidden).
    fn add(&mut self, entry: Entry) {
        if entry.name.is_empty() || entry.name.contains(char::is_whitespace) {
            return;
        }
        if self.find(&entry.name).is_some() {
            // An alias that names what it is an alias of hides nothing worth telling.
            if entry.alias_of.is_none() {
                self.hidden.push(entry);
            }
            return;
        }
        self.entries.push(entry);
    }

    /// Adds each entry by its name, then each by its aliases.
    fn add_all(&mut self, found: &[(Entry, Vec<String>)]) {
        for (entry, _) in found {
            self.add(entry.clone());
        }
        for (entry, aliases) in found {
            for alias in aliases {
                self.add(Entry {
                    name: alias.clone(),
                    alias_of: Some(entry.name.clone()),
                    ..entry.clone()
                });
            }
        }
    }
}

/// A discovered workflow, and its other names: its declared name when that is not its
/// file name, and its aliases.
fn workflow_entry(found: &Discovered, header: Option<&Workflow>) -> (Entry, Vec<String>) {
    let Some(header) = header else {
        let why = format!(
            "`{}` cannot be read as a workflow: `atomic check {}` says why",
            found.name,
            found.path.display()
        );
        let entry = Entry {
            name: found.name.clone(),
            kind: Kind::Workflow,
            description: Some(format!("(cannot be used: {why})")),
            hint: None,
            alias_of: None,
            target: Target::Workflow {
                path: found.path.clone(),
                inputs: Err(why),
            },
        };
        return (entry, Vec::new());
    };
    let inputs: Vec<WorkflowInput> = header
        .inputs
        .iter()
        .map(|input| WorkflowInput {
            name: input.name.value.clone(),
            ty: input.ty.clone(),
            required: input.default.is_none(),
            description: input.description.clone(),
        })
        .collect();
    let entry = Entry {
        name: found.name.clone(),
        kind: Kind::Workflow,
        description: header.description.clone(),
        hint: workflow_hint(&inputs),
        alias_of: None,
        target: Target::Workflow {
            path: found.path.clone(),
            inputs: Ok(inputs),
        },
    };
    let mut aliases = Vec::new();
    if header.name.value != found.name {
        aliases.push(header.name.value.clone());
    }
    aliases.extend(header.aliases.iter().map(|alias| alias.value.clone()));
    (entry, aliases)
}

/// A workflow's inputs for people, in declared order: `<goal> [max]` (the language has no
/// `argument-hint` of its own); `None` without inputs.
#[must_use]
pub(crate) fn workflow_hint(inputs: &[WorkflowInput]) -> Option<String> {
    let words: Vec<String> = inputs
        .iter()
        .map(|input| {
            if input.required {
                format!("<{}>", input.name)
            } else {
                format!("[{}]", input.name)
            }
        })
        .collect();
    (!words.is_empty()).then(|| words.join(" "))
}

/// A discovered command or skill, and its aliases.
fn definition_entry(found: &crate::registry::agents::Entry) -> (Entry, Vec<String>) {
    let kind = match found.kind {
        DefinitionKind::Skill => Kind::Skill,
        _ => Kind::Command,
    };
    let (description, hint, aliases, body) = match &found.parsed {
        Ok(front) => (
            front.description.clone(),
            front.argument_hint.clone(),
            front.aliases.clone(),
            Ok(front.body.clone()),
        ),
        Err(error) => {
            let why = format!(
                "the front matter of `{}` does not parse: {}",
                found.path.display(),
                error.message
            );
            (
                Some(format!("(cannot be used: {why})")),
                None,
                Vec::new(),
                Err(why),
            )
        }
    };
    let entry = Entry {
        name: found.name.clone(),
        kind,
        description,
        hint,
        alias_of: None,
        target: Target::Text {
            path: found.path.clone(),
            body,
        },
    };
    (entry, aliases)
}

/// Every model of the catalogue, then their short names.
fn models() -> Vec<Choice> {
    let mut choices: Vec<Choice> = MODELS
        .iter()
        .map(|model| Choice {
            value: model.id.to_owned(),
            description: Some(format!(
                "{}, {}k context",
                model.vendor.display(),
                model.context_window / 1000
            )),
        })
        .collect();
    for model in MODELS {
        for alias in model.aliases {
            choices.push(Choice {
                value: (*alias).to_owned(),
                description: Some(format!("= {}", model.id)),
            });
        }
    }
    choices
}
