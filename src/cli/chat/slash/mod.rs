//! Slash commands: a line typed in the chat turned into what the chat does.
//!
//! A line not starting with `/` is a prompt as typed; `//…` is a prompt starting with a
//! literal `/` (the first `/` is dropped), and so is a line whose first word is a path
//! (`/usr/lib/x is missing`). Otherwise `/name arguments`:
//!
//! - a built-in (`/model [MODEL]`, `/provider [ADAPTER]`, `/clear`, `/compact`,
//!   `/resume [SESSION]`, `/reload`, `/help`, `/quit`) is that action;
//! - a workflow runs with its inputs filled from the words, split as a shell splits them:
//!   `name=value` fills an input by name, and the other words fill the inputs not named,
//!   in declared order (`/sequential "build the parser"`, `/task-loop "fix it" 3`,
//!   `/task-loop max=3 "fix it"`). More words than inputs is an error that says to quote
//!   text with spaces; so is a word that does not fit its input's type;
//! - a command or skill is its text with the arguments put in ([`expand`]), sent to the
//!   agent. A text that reads no arguments gets them after it, as `ARGUMENTS: …`.
//!
//! [`catalogue`] finds the names, [`complete`] offers them as they are typed.

pub(crate) mod catalogue;
pub(crate) mod complete;
pub(crate) mod expand;
pub(crate) mod words;

use std::path::PathBuf;

// The chat's view and conversation use these; until they are wired in, some are unused.
#[allow(unused_imports)]
pub(crate) use catalogue::{Builtin, Catalogue, Choice, Entry, Kind, Target, WorkflowInput};
#[allow(unused_imports)]
pub(crate) use complete::{Candidate, Completions, complete};
#[allow(unused_imports)]
pub(crate) use expand::{ExpandError, Shell};

use crate::diagnostic::{did_you_mean, expected_one_of};
use crate::ir::{ADAPTERS, ValueType};
use words::Word;

/// What a typed line makes the chat do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Action {
    /// Send this to the agent (a line as typed, or a command's text expanded).
    Prompt(String),
    /// `/model [MODEL]`: switch to the model, or (none) show the one in use.
    Model(Option<String>),
    /// `/provider [ADAPTER]`: switch to the adapter, or (none) show the one in use.
    Provider(Option<String>),
    /// `/clear`: a new conversation.
    Clear,
    /// `/compact`: summarise the conversation to free context.
    Compact,
    /// `/resume [SESSION]`: go on with a saved session, or (none) list them.
    Resume(Option<String>),
    /// `/reload`: discover the workflows, commands and skills again
    /// ([`Catalogue::discover`]).
    Reload,
    /// `/help`: show [`Catalogue::help`].
    Help,
    /// `/quit` or `/exit`.
    Quit,
    /// Run a workflow with these inputs (`name`, the value as typed; `--input name=value`
    /// converts them to the input's type).
    Workflow {
        /// Its name (the file name, also when typed by an alias).
        name: String,
        /// Its file (a `<built-in>/` path for a built-in workflow).
        path: PathBuf,
        /// The inputs given, in declared order.
        inputs: Vec<(String, String)>,
    },
}

/// Why a line cannot be done, for people who have never read the docs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SlashError {
    /// What is wrong.
    pub(crate) message: String,
    /// What to do about it.
    pub(crate) help: Option<String>,
}

impl SlashError {
    pub(crate) fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            help: None,
        }
    }

    fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }
}

impl std::fmt::Display for SlashError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)?;
        if let Some(help) = &self.help {
            write!(f, "\n{help}")?;
        }
        Ok(())
    }
}

impl std::error::Error for SlashError {}

/// What `line` makes the chat do; `` !`cmd` `` in a command's text runs in `shell`.
///
/// # Errors
/// [`SlashError`] for an unknown name (with the nearest one), arguments that do not fit
/// (with what it takes), an unclosed quote (with its column), or a `` !`cmd` `` that
/// failed (with its stderr).
pub(crate) async fn parse(
    line: &str,
    catalogue: &Catalogue,
    shell: &Shell,
) -> Result<Action, SlashError> {
    let Some(rest) = line.strip_prefix('/') else {
        return Ok(Action::Prompt(line.to_owned()));
    };
    if rest.starts_with('/') {
        return Ok(Action::Prompt(rest.to_owned()));
    }
    let name_end = line[1..]
        .find(char::is_whitespace)
        .map_or(line.len(), |at| at + 1);
    let name = &line[1..name_end];
    if name.contains('/') {
        return Ok(Action::Prompt(line.to_owned()));
    }
    if name.is_empty() {
        return Err(SlashError::new("a `/` alone names no command")
            .help("type a name after it (`/help` lists them), or start with `//` to send a `/`"));
    }
    let Some(entry) = catalogue.find(name) else {
        return Err(unknown(name, catalogue));
    };
    let arguments = line[name_end..].trim();
    match &entry.target {
        Target::Builtin(builtin) => {
            let words = split(line, name_end, entry)?;
            builtin_action(*builtin, entry, words)
        }
        Target::Workflow { path, inputs } => {
            let inputs = inputs.as_ref().map_err(|why| {
                SlashError::new(format!("the workflow `/{name}` cannot be run")).help(why.clone())
            })?;
            let words = split(line, name_end, entry)?;
            Ok(Action::Workflow {
                name: entry.alias_of.clone().unwrap_or_else(|| entry.name.clone()),
                path: path.clone(),
                inputs: bind(entry, inputs, words)?,
            })
        }
        Target::Text { body, .. } => {
            let body = body.as_ref().map_err(|why| {
                SlashError::new(format!(
                    "the {} `/{name}` cannot be used",
                    entry.kind.name()
                ))
                .help(why.clone())
            })?;
            let words: Vec<String> = if expand::reads_words(body) {
                split(line, name_end, entry)?
                    .into_iter()
                    .map(|word| word.text)
                    .collect()
            } else {
                Vec::new()
            };
            let mut text = expand::expand(body, arguments, &words, shell)
                .await
                .map_err(|error| {
                    SlashError::new(format!("`/{name}` could not be expanded: {error}")).help(
                        "fix the command in the file, or run it in a shell to see what it needs",
                    )
                })?;
            if !arguments.is_empty() && !expand::reads_arguments(body) {
                text = format!("{}\n\nARGUMENTS: {arguments}", text.trim_end());
            }
            Ok(Action::Prompt(text))
        }
    }
}

/// The words after the name, or an error about the quote left open.
fn split(line: &str, from: usize, entry: &Entry) -> Result<Vec<Word>, SlashError> {
    words::split(line, from).map_err(|unclosed| {
        let example = if unclosed.quote == '\'' {
            " (an apostrophe inside text needs the text in double quotes: \"don't stop\")"
        } else {
            ""
        };
        SlashError::new(format!("{unclosed} in `/{}`", entry.name)).help(format!(
            "close it with another `{}`, or put a `\\` before it to type it as it is{example}",
            unclosed.quote
        ))
    })
}

fn builtin_action(builtin: Builtin, entry: &Entry, words: Vec<Word>) -> Result<Action, SlashError> {
    let name = &entry.name;
    let mut words = words.into_iter().map(|word| word.text);
    let one = words.next();
    if let Some(extra) = words.next() {
        let takes = match &entry.hint {
            Some(hint) => format!("`/{name}` takes one value, {hint}"),
            None => format!("`/{name}` takes nothing"),
        };
        return Err(
            SlashError::new(format!("{takes}, but `{extra}` came after it"))
                .help("quote a value with spaces in it"),
        );
    }
    let takes_value = matches!(
        builtin,
        Builtin::Model | Builtin::Provider | Builtin::Resume
    );
    if let (Some(value), false) = (&one, takes_value) {
        return Err(
            SlashError::new(format!("`/{name}` takes nothing, but `{value}` was given"))
                .help(format!("type `/{name}` alone")),
        );
    }
    Ok(match builtin {
        Builtin::Model => Action::Model(one),
        Builtin::Provider => {
            if let Some(adapter) = &one
                && !ADAPTERS.iter().any(|info| info.name == adapter)
            {
                let names: Vec<&str> = ADAPTERS.iter().map(|info| info.name).collect();
                let near = did_you_mean(adapter, names.iter().copied())
                    .map(|near| format!("did you mean `{near}`? "))
                    .unwrap_or_default();
                return Err(
                    SlashError::new(format!("there is no adapter `{adapter}`")).help(format!(
                        "{near}the adapters are {}",
                        expected_one_of(&names)
                    )),
                );
            }
            Action::Provider(one)
        }
        Builtin::Resume => Action::Resume(one),
        Builtin::Clear => Action::Clear,
        Builtin::Compact => Action::Compact,
        Builtin::Reload => Action::Reload,
        Builtin::Help => Action::Help,
        Builtin::Quit => Action::Quit,
    })
}

/// A workflow's inputs from `words`: `name=value` by name, the others in declared order.
fn bind(
    entry: &Entry,
    inputs: &[WorkflowInput],
    words: Vec<Word>,
) -> Result<Vec<(String, String)>, SlashError> {
    let name = &entry.name;
    let usage = match &entry.hint {
        Some(hint) => format!("/{name} {hint}"),
        None => format!("/{name}"),
    };
    let mut given: Vec<Option<String>> = vec![None; inputs.len()];
    let mut positional = Vec::new();
    for word in words {
        let Some((key, value)) = word.as_assignment().filter(|(key, _)| is_input_name(key)) else {
            positional.push(word.text);
            continue;
        };
        let Some(at) = inputs.iter().position(|input| input.name == key) else {
            let names: Vec<&str> = inputs.iter().map(|input| input.name.as_str()).collect();
            let near = did_you_mean(key, names.iter().copied())
                .map(|near| format!("did you mean `{near}=…`? "))
                .unwrap_or_default();
            let inputs = if names.is_empty() {
                "it takes none".to_owned()
            } else {
                format!("its inputs are {}", expected_one_of(&names))
            };
            return Err(
                SlashError::new(format!("the workflow `/{name}` has no input `{key}`")).help(
                    format!(
                        "{near}{inputs}; to pass `{}` as text, quote it: \"{}\"",
                        word.text,
                        escape(&word.text)
                    ),
                ),
            );
        };
        if given[at].is_some() {
            return Err(
                SlashError::new(format!("input `{key}` of `/{name}` is given twice"))
                    .help("give it once"),
            );
        }
        given[at] = Some(value.to_owned());
    }
    let free: Vec<usize> = (0..inputs.len())
        .filter(|&at| given[at].is_none())
        .collect();
    if positional.len() > free.len() {
        let takes = match free.len() {
            0 if inputs.is_empty() => "takes no inputs".to_owned(),
            0 => "has every input given by name already".to_owned(),
            1 => format!("takes one more input, `{}`", inputs[free[0]].name),
            n => format!(
                "takes {n} more inputs, {}",
                free.iter()
                    .map(|&at| format!("`{}`", inputs[at].name))
                    .collect::<Vec<_>>()
                    .join(" then ")
            ),
        };
        let listed: Vec<String> = positional.iter().map(|word| format!("`{word}`")).collect();
        let mut error = SlashError::new(format!(
            "`/{name}` {takes}, but {} words were given: {}",
            positional.len(),
            listed.join(", ")
        ));
        error = error.help(match free.first() {
            Some(&first) if takes_text(&inputs[first].ty) => format!(
                "put text with spaces in quotes: /{name} \"{}\"  (it takes: {usage})",
                escape(&positional.join(" "))
            ),
            _ => format!("it takes: {usage}"),
        });
        return Err(error);
    }
    let several = positional.len() > 1;
    for (&at, value) in free.iter().zip(&positional) {
        given[at] = Some(value.clone());
    }
    for (input, value) in inputs.iter().zip(&given) {
        let Some(value) = value else { continue };
        if let Err(problem) =
            crate::ir::value::coerce(&input.ty, serde_json::Value::String(value.clone()))
        {
            let mut error = SlashError::new(format!(
                "input `{}` of `/{name}` is {}: {problem}",
                input.name,
                input.ty.article()
            ));
            error = match free.first() {
                Some(&first) if several && takes_text(&inputs[first].ty) => error.help(format!(
                    "if the words are one text, quote them: /{name} \"{}\"  (it takes: {usage})",
                    escape(&positional.join(" "))
                )),
                _ => error.help(format!("it takes: {usage}")),
            };
            return Err(error);
        }
    }
    let missing: Vec<&WorkflowInput> = inputs
        .iter()
        .zip(&given)
        .filter(|(input, value)| input.required && value.is_none())
        .map(|(input, _)| input)
        .collect();
    if !missing.is_empty() {
        let listed: Vec<String> = missing
            .iter()
            .map(|input| match &input.description {
                Some(text) => format!("`{}` ({text})", input.name),
                None => format!("`{}`", input.name),
            })
            .collect();
        let (noun, list) = match listed.as_slice() {
            [one] => ("input", one.clone()),
            _ => ("inputs", listed.join(", ")),
        };
        return Err(
            SlashError::new(format!("`/{name}` needs the {noun} {list}")).help(format!(
                "type it as: {usage}  (or by name: {}=…)",
                missing[0].name
            )),
        );
    }
    Ok(inputs
        .iter()
        .zip(given)
        .filter_map(|(input, value)| Some((input.name.clone(), value?)))
        .collect())
}

/// Whether `key` of `key=value` can be an input's name (so `a+b=c` stays a plain word).
fn is_input_name(key: &str) -> bool {
    let mut chars = key.chars();
    chars
        .next()
        .is_some_and(|first| first.is_alphabetic() || first == '_')
        && chars.all(|c| c.is_alphanumeric() || c == '_' || c == '-')
}

/// Whether text of several words can be a value of `ty`.
fn takes_text(ty: &ValueType) -> bool {
    matches!(ty, ValueType::String | ValueType::Any)
}

/// `text` for between double quotes.
fn escape(text: &str) -> String {
    text.replace('\\', "\\\\").replace('"', "\\\"")
}

/// An unknown `/name`, with the nearest one.
fn unknown(name: &str, catalogue: &Catalogue) -> SlashError {
    let names: Vec<&str> = catalogue
        .entries()
        .map(|entry| entry.name.as_str())
        .collect();
    let near = did_you_mean(name, names.iter().copied()).or_else(|| {
        let lower = name.to_lowercase();
        names
            .iter()
            .copied()
            .find(|candidate| candidate.to_lowercase().starts_with(&lower))
    });
    let error = SlashError::new(format!("there is no command `/{name}`"));
    match near {
        Some(near) => error.help(format!(
            "did you mean `/{near}`? (`/help` lists every command; `//` at the start sends a `/`)"
        )),
        None => error.help(
            "`/help` lists every command; to send a line starting with `/`, start it with `//`",
        ),
    }
}

#[cfg(test)]
mod tests;
