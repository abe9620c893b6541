//! The YAML front matter of a Markdown definition (Claude Code, OpenCode and Copilot agents,
//! skills and commands): the fields atomic uses, normalised, and the body after it. Each tool
//! writes them its own way, and every documented way is read:
//!
//! ```markdown
//! ---
//! name: reviewer
//! description: Reviews diffs
//! model: sonnet
//! tools: Read, Grep              # Claude Code; a YAML list (Copilot); or OpenCode's map:
//! # tools: {write: false, bash: true}
//! allowed-tools: Bash(git diff:*) # commands and skills (Claude Code): their tools
//! argument-hint: [pr-number] [priority]   # text, even where YAML would read a list
//! aliases: [rev, r]
//! ---
//! You are a careful reviewer.
//! ```
//!
//! A field of the wrong shape is an error naming the field and what it holds; fields atomic
//! does not use are ignored.

use serde_yaml::Value;

/// What a definition's front matter says, normalised, with the Markdown body after it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FrontMatter {
    /// `name`, when given (otherwise the file stem or skill directory names it).
    pub name: Option<String>,
    /// `description`.
    pub description: Option<String>,
    /// `model`; `inherit` (Claude Code's "use the caller's model") counts as none.
    pub model: Option<String>,
    /// The tools it grants: `tools` (a comma-separated string, a list, or a map of name to
    /// `true`/`false` whose `true` names count), else `allowed-tools`; empty when neither.
    pub tools: Vec<String>,
    /// `argument-hint`, as text (`[a] [b]`).
    pub argument_hint: Option<String>,
    /// `aliases`: other names it is found by.
    pub aliases: Vec<String>,
    /// The text after the front matter, trimmed.
    pub body: String,
}

/// Front matter that is not a YAML mapping, or a field of the wrong shape.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FrontMatterError {
    /// What is wrong: the YAML parser's words with its line and column within the front
    /// matter, or the field and what it holds.
    pub message: String,
}

/// Splits `text` into front matter and body and parses the front matter. A file without
/// front matter (no `---` first line, or no closing `---`) is all body.
///
/// # Errors
/// When the front matter is not YAML, not a mapping, or a field has the wrong shape.
pub fn parse_front_matter(text: &str) -> Result<FrontMatter, FrontMatterError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let Some((yaml, body)) = split(text) else {
        return Ok(FrontMatter {
            body: text.trim().to_owned(),
            ..FrontMatter::default()
        });
    };
    let fields = if yaml.trim().is_empty() {
        serde_yaml::Mapping::new()
    } else {
        match mapping(yaml) {
            Ok(fields) => fields,
            // Claude Code documents `argument-hint: [a] [b]`, which is not YAML: read the
            // hint as the text it is meant to be.
            Err(error) => mapping(&quote_argument_hint(yaml)).map_err(|_| error)?,
        }
    };
    let field = |name: &str| fields.get(name).filter(|value| !value.is_null());
    let text_of = |name: &str| -> Result<Option<String>, FrontMatterError> {
        field(name).map(|value| scalar(name, value)).transpose()
    };
    let tools = match field("tools") {
        Some(value) => names("tools", value, true)?,
        None => match field("allowed-tools") {
            Some(value) => names("allowed-tools", value, false)?,
            None => Vec::new(),
        },
    };
    Ok(FrontMatter {
        name: text_of("name")?.filter(|name| !name.trim().is_empty()),
        description: text_of("description")?,
        model: text_of("model")?.filter(|model| !model.trim().is_empty() && model != "inherit"),
        tools,
        argument_hint: field("argument-hint").map(hint).transpose()?,
        aliases: field("aliases")
            .map(|value| names("aliases", value, false))
            .transpose()?
            .unwrap_or_default(),
        body: body.trim().to_owned(),
    })
}

/// The front matter as a YAML mapping.
fn mapping(yaml: &str) -> Result<serde_yaml::Mapping, FrontMatterError> {
    match serde_yaml::from_str::<Value>(yaml) {
        Ok(Value::Mapping(fields)) => Ok(fields),
        Ok(other) => Err(FrontMatterError {
            message: format!(
                "the front matter is {}, not a mapping of fields such as `name: …`",
                shape(&other)
            ),
        }),
        Err(error) => Err(FrontMatterError {
            message: error.to_string(),
        }),
    }
}

/// `yaml` with the value of a top-level `argument-hint:` line quoted as text.
fn quote_argument_hint(yaml: &str) -> String {
    yaml.lines()
        .map(|line| match line.strip_prefix("argument-hint:") {
            Some(value) if !value.trim().is_empty() => {
                format!("argument-hint: '{}'", value.trim().replace('\'', "''"))
            }
            _ => line.to_owned(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// A text field: a string, or a number or boolean written without quotes.
fn scalar(name: &str, value: &Value) -> Result<String, FrontMatterError> {
    match value {
        Value::String(text) => Ok(text.clone()),
        Value::Number(number) => Ok(number.to_string()),
        Value::Bool(flag) => Ok(flag.to_string()),
        other => Err(wrong(name, "text", other)),
    }
}

/// A list of names: `a, b`, a YAML list, or (where `map` allows it) a map of name to
/// `true`/`false`, whose `true` names are kept.
fn names(name: &str, value: &Value, map: bool) -> Result<Vec<String>, FrontMatterError> {
    let expected = if map {
        "a comma-separated list, a list of names, or a map of names to true or false"
    } else {
        "a comma-separated list or a list of names"
    };
    match value {
        Value::String(list) => Ok(list
            .split(',')
            .map(str::trim)
            .filter(|item| !item.is_empty())
            .map(str::to_owned)
            .collect()),
        Value::Sequence(items) => {
            let mut names = Vec::new();
            for item in items {
                let item = scalar(name, item).map_err(|_| wrong(name, expected, item))?;
                if !item.trim().is_empty() {
                    names.push(item.trim().to_owned());
                }
            }
            Ok(names)
        }
        Value::Mapping(entries) if map => {
            let mut enabled = Vec::new();
            for (key, on) in entries {
                let key = scalar(name, key).map_err(|_| wrong(name, expected, key))?;
                match on {
                    Value::Bool(true) if !key.trim().is_empty() => {
                        enabled.push(key.trim().to_owned());
                    }
                    Value::Bool(_) => {}
                    other => {
                        return Err(FrontMatterError {
                            message: format!(
                                "`{name}` maps each tool to true or false; `{key}` has {}",
                                shape(other)
                            ),
                        });
                    }
                }
            }
            Ok(enabled)
        }
        other => Err(wrong(name, expected, other)),
    }
}

/// `argument-hint` as text: a YAML list (what `[file]` reads as) is written back as
/// `[file]`, one bracketed item each.
fn hint(value: &Value) -> Result<String, FrontMatterError> {
    match value {
        Value::Sequence(items) => Ok(items
            .iter()
            .map(|item| scalar("argument-hint", item).map(|item| format!("[{item}]")))
            .collect::<Result<Vec<_>, _>>()?
            .join(" ")),
        other => scalar("argument-hint", other),
    }
}

fn wrong(name: &str, expected: &str, found: &Value) -> FrontMatterError {
    FrontMatterError {
        message: format!("`{name}` must be {expected}, not {}", shape(found)),
    }
}

/// What a YAML value is, for messages.
fn shape(value: &Value) -> String {
    match value {
        Value::Null => "empty".to_owned(),
        Value::Bool(flag) => format!("`{flag}`"),
        Value::Number(number) => format!("the number `{number}`"),
        Value::String(text) => format!("the text `{text}`"),
        Value::Sequence(_) => "a list".to_owned(),
        Value::Mapping(_) => "a mapping".to_owned(),
        Value::Tagged(_) => "a tagged value".to_owned(),
    }
}

/// `(front matter, body)` when `text` opens with a `---` line closed by another.
fn split(text: &str) -> Option<(&str, &str)> {
    let rest = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))?;
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim_end() == "---" {
            return Some((&rest[..offset], &rest[offset + line.len()..]));
        }
        offset += line.len();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comma_separated_tools_become_a_list() {
        let parsed =
            parse_front_matter("---\nname: r\ntools: Read, Grep ,Bash\n---\nBody\n").unwrap();
        assert_eq!(parsed.tools, ["Read", "Grep", "Bash"]);
        assert_eq!(parsed.name.as_deref(), Some("r"));
        assert_eq!(parsed.body, "Body");
    }

    #[test]
    fn listed_tools_are_kept_in_order() {
        let parsed = parse_front_matter(
            "---\ntools:\n  - Read\n  - Edit\nmodel: opus\nargument-hint: <file>\ndescription: d\n---\nBody",
        )
        .unwrap();
        assert_eq!(parsed.tools, ["Read", "Edit"]);
        assert_eq!(parsed.model.as_deref(), Some("opus"));
        assert_eq!(parsed.argument_hint.as_deref(), Some("<file>"));
        assert_eq!(parsed.description.as_deref(), Some("d"));
    }

    #[test]
    fn a_file_without_front_matter_is_all_body() {
        let parsed = parse_front_matter("Just do it.\n\n---\nnot front matter\n").unwrap();
        assert_eq!(parsed.body, "Just do it.\n\n---\nnot front matter");
        assert_eq!(parsed.name, None);
        assert!(parsed.tools.is_empty());
        // An opening `---` never closed is body too.
        let unclosed = parse_front_matter("---\nname: x\nbody").unwrap();
        assert_eq!(unclosed.name, None);
        assert_eq!(unclosed.body, "---\nname: x\nbody");
    }

    #[test]
    fn empty_front_matter_and_crlf_lines_parse() {
        let parsed = parse_front_matter("---\r\n---\r\nBody\r\n").unwrap();
        assert_eq!(parsed.body, "Body");
        let parsed = parse_front_matter("---\r\nname: x\r\n---\r\nBody").unwrap();
        assert_eq!(parsed.name.as_deref(), Some("x"));
    }

    #[test]
    fn inherit_means_no_model() {
        let parsed = parse_front_matter("---\nmodel: inherit\n---\nx").unwrap();
        assert_eq!(parsed.model, None);
    }

    #[test]
    fn bad_yaml_is_an_error_not_a_panic() {
        let error = parse_front_matter("---\nname: [unclosed\n---\nBody").unwrap_err();
        assert!(!error.message.is_empty());
        let error = parse_front_matter("---\ntools: {a: 1}\n---\nBody").unwrap_err();
        assert_eq!(
            error.message,
            "`tools` maps each tool to true or false; `a` has the number `1`"
        );
        let error = parse_front_matter("---\nmodel: [a]\n---\nBody").unwrap_err();
        assert_eq!(error.message, "`model` must be text, not a list");
        // A scalar instead of a mapping.
        assert!(parse_front_matter("---\njust text\n---\nBody").is_err());
    }

    #[test]
    fn opencode_tool_maps_grant_their_true_names() {
        let parsed =
            parse_front_matter("---\ntools:\n  write: true\n  bash: false\n  read: true\n---\nx")
                .unwrap();
        assert_eq!(parsed.tools, ["write", "read"]);
    }

    #[test]
    fn argument_hints_are_text_however_written() {
        let listed = parse_front_matter("---\nargument-hint: [x]\n---\nx").unwrap();
        assert_eq!(listed.argument_hint.as_deref(), Some("[x]"));
        let claude = parse_front_matter(
            "---\nargument-hint: [pr-number] [priority] [assignee]\ndescription: Review a PR\n---\nx",
        )
        .unwrap();
        assert_eq!(
            claude.argument_hint.as_deref(),
            Some("[pr-number] [priority] [assignee]")
        );
        assert_eq!(claude.description.as_deref(), Some("Review a PR"));
        let plain = parse_front_matter("---\nargument-hint: <file>\n---\nx").unwrap();
        assert_eq!(plain.argument_hint.as_deref(), Some("<file>"));
    }

    #[test]
    fn allowed_tools_and_aliases_are_read() {
        let parsed = parse_front_matter(
            "---\nallowed-tools: Bash(git add:*), Bash(git status:*)\naliases: [rev, r]\n---\nx",
        )
        .unwrap();
        assert_eq!(parsed.tools, ["Bash(git add:*)", "Bash(git status:*)"]);
        assert_eq!(parsed.aliases, ["rev", "r"]);
        // `tools` wins over `allowed-tools`.
        let both = parse_front_matter("---\ntools: Read\nallowed-tools: Bash\n---\nx").unwrap();
        assert_eq!(both.tools, ["Read"]);
    }
}
