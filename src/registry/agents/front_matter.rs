//! The YAML front matter of a Markdown definition (Claude Code, OpenCode and Copilot agents,
//! skills and commands): the fields atomic uses, normalised, and the body after it.
//!
//! ```markdown
//! ---
//! name: reviewer
//! description: Reviews diffs
//! model: sonnet
//! tools: Read, Grep        # or a YAML list
//! argument-hint: <file>
//! ---
//! You are a careful reviewer.
//! ```

use serde::Deserialize;

/// What a definition's front matter says, normalised, with the Markdown body after it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FrontMatter {
    /// `name`, when given (otherwise the file stem or skill directory names it).
    pub name: Option<String>,
    /// `description`.
    pub description: Option<String>,
    /// `model`; `inherit` (Claude Code's "use the caller's model") counts as none.
    pub model: Option<String>,
    /// `tools`, from a comma-separated string or a list; empty when not given.
    pub tools: Vec<String>,
    /// `argument-hint`.
    pub argument_hint: Option<String>,
    /// The text after the front matter, trimmed.
    pub body: String,
}

/// Front matter that is not a YAML mapping of the expected fields.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FrontMatterError {
    /// What the YAML parser said, with its line and column within the front matter.
    pub message: String,
}

/// The fields as written; anything else in the front matter is ignored.
#[derive(Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
struct Raw {
    name: Option<String>,
    description: Option<String>,
    model: Option<String>,
    tools: Option<Tools>,
    argument_hint: Option<String>,
}

/// Claude Code writes `tools: Read, Grep`; OpenCode and Copilot write lists.
#[derive(Deserialize)]
#[serde(untagged)]
enum Tools {
    Comma(String),
    List(Vec<String>),
}

/// Splits `text` into front matter and body and parses the front matter. A file without
/// front matter (no `---` first line, or no closing `---`) is all body.
///
/// # Errors
/// When the front matter is not YAML, or its fields have the wrong types.
pub fn parse_front_matter(text: &str) -> Result<FrontMatter, FrontMatterError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let Some((yaml, body)) = split(text) else {
        return Ok(FrontMatter {
            body: text.trim().to_owned(),
            ..FrontMatter::default()
        });
    };
    let raw: Raw = if yaml.trim().is_empty() {
        Raw::default()
    } else {
        serde_yaml::from_str(yaml).map_err(|error| FrontMatterError {
            message: error.to_string(),
        })?
    };
    let tools = match raw.tools {
        None => Vec::new(),
        Some(Tools::Comma(list)) => list
            .split(',')
            .map(str::trim)
            .filter(|tool| !tool.is_empty())
            .map(str::to_owned)
            .collect(),
        Some(Tools::List(list)) => list,
    };
    Ok(FrontMatter {
        name: raw.name.filter(|name| !name.trim().is_empty()),
        description: raw.description,
        model: raw
            .model
            .filter(|model| !model.trim().is_empty() && model != "inherit"),
        tools,
        argument_hint: raw.argument_hint,
        body: body.trim().to_owned(),
    })
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
        assert!(!error.message.is_empty());
        // A scalar instead of a mapping.
        assert!(parse_front_matter("---\njust text\n---\nBody").is_err());
    }
}
