//! Output mapping: turning a node's raw result (an agent's text, a tool's stdout, a wait's
//! answer) into a typed value with `parse=`, and checking it against `schema=`.
//!
//! JSON Schema validators are compiled once per run ([`Schemas::load`], when the run
//! starts); a failure is a typed [`NodeError`] (`bad-output` or `schema`) that `retry-on`
//! and `on-error` can route.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use serde_json::Value;

use super::NodeError;
use crate::ir::{ErrorClass, ParseMode};
use crate::source::Files;

/// Parses `text` by `mode`.
///
/// # Errors
/// `bad-output` when the text does not hold what `mode` asks for.
pub fn parse_output(mode: ParseMode, text: &str) -> Result<Value, NodeError> {
    match mode {
        ParseMode::Text => Ok(Value::String(text.to_owned())),
        ParseMode::Json => parse_json(text),
        ParseMode::YesNo => parse_yes_no(text),
        ParseMode::Number => crate::runtime::state::coerce(
            &crate::ir::ValueType::Number,
            Value::String(text.to_owned()),
        )
        .map_err(|_| bad(format!("expected a number, found {}", excerpt(text)))),
        ParseMode::Lines => Ok(Value::Array(
            text.lines()
                .map(|line| line.trim_end_matches('\r'))
                .filter(|line| !line.trim().is_empty())
                .map(|line| Value::String(line.to_owned()))
                .collect(),
        )),
    }
}

fn bad(message: String) -> NodeError {
    NodeError::new(ErrorClass::BadOutput, message)
}

fn excerpt(text: &str) -> String {
    const MAX: usize = 60;
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return "nothing".to_owned();
    }
    let head: String = trimmed.chars().take(MAX).collect();
    if head.len() < trimmed.len() {
        format!("`{head}…`")
    } else {
        format!("`{head}`")
    }
}

/// JSON: the whole text, else the first fenced code block that parses, else the first
/// JSON object or array in the text.
fn parse_json(text: &str) -> Result<Value, NodeError> {
    let trimmed = text.trim();
    if let Ok(value) = serde_json::from_str(trimmed) {
        return Ok(value);
    }
    for block in fenced_blocks(text) {
        if let Ok(value) = serde_json::from_str(block.trim()) {
            return Ok(value);
        }
    }
    for (start, _) in text.match_indices(['{', '[']) {
        let mut values = serde_json::Deserializer::from_str(&text[start..]).into_iter::<Value>();
        if let Some(Ok(value)) = values.next() {
            return Ok(value);
        }
    }
    Err(bad(format!("expected JSON, found {}", excerpt(text))))
}

/// The contents of ``` fenced blocks, `json`-tagged ones first.
fn fenced_blocks(text: &str) -> Vec<&str> {
    let mut tagged = Vec::new();
    let mut other = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find("```") {
        let after = &rest[open + 3..];
        let Some(line_end) = after.find('\n') else {
            break;
        };
        let tag = after[..line_end].trim();
        let body = &after[line_end + 1..];
        let Some(close) = body.find("```") else { break };
        if tag.eq_ignore_ascii_case("json") {
            tagged.push(&body[..close]);
        } else {
            other.push(&body[..close]);
        }
        rest = &body[close + 3..];
    }
    tagged.extend(other);
    tagged
}

fn parse_yes_no(text: &str) -> Result<Value, NodeError> {
    crate::ir::value::parse_yes_no(text)
        .map(Value::Bool)
        .ok_or_else(|| bad(format!("expected yes or no, found {}", excerpt(text))))
}

/// The JSON Schemas of a run, compiled once, by the path written in the workflow.
#[derive(Clone, Default)]
pub struct Schemas {
    validators: HashMap<String, Arc<jsonschema::Validator>>,
}

impl std::fmt::Debug for Schemas {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Schemas")
            .field("paths", &self.validators.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl Schemas {
    /// Reads and compiles each schema file (paths relative to `base`).
    ///
    /// # Errors
    /// A message naming the file when it is missing, not JSON, or not a valid schema.
    pub fn load<'a>(
        paths: impl IntoIterator<Item = &'a str>,
        base: &Path,
        files: &dyn Files,
    ) -> Result<Self, String> {
        let mut schemas = Self::default();
        for path in paths {
            if schemas.validators.contains_key(path) {
                continue;
            }
            let resolved = base.join(path);
            let text = files.read(&resolved).map_err(|error| {
                format!(
                    "schema file `{}` cannot be read: {error}",
                    resolved.display()
                )
            })?;
            let schema: Value = serde_json::from_str(&text).map_err(|error| {
                format!("schema file `{}` is not JSON: {error}", resolved.display())
            })?;
            let validator = jsonschema::validator_for(&schema).map_err(|error| {
                format!(
                    "schema file `{}` is not a valid JSON Schema: {error}",
                    resolved.display()
                )
            })?;
            schemas
                .validators
                .insert(path.to_owned(), Arc::new(validator));
        }
        Ok(schemas)
    }

    /// Checks `value` against the schema loaded from `path`.
    ///
    /// # Errors
    /// `schema` listing the first few violations, or when `path` was not loaded.
    pub fn validate(&self, path: &str, value: &Value) -> Result<(), NodeError> {
        self.validate_as("the output", path, value)
    }

    /// [`Self::validate`], the error naming `what` was checked (`` field `cfg` ``).
    ///
    /// # Errors
    /// As [`Self::validate`].
    pub fn validate_as(&self, what: &str, path: &str, value: &Value) -> Result<(), NodeError> {
        let problems = self.problems(path, value)?;
        if problems.is_empty() {
            return Ok(());
        }
        Err(NodeError::new(
            ErrorClass::Schema,
            format!("{what} does not match `{path}`: {}", problems.join("; ")),
        ))
    }

    /// The first few ways `value` breaks the schema loaded from `path`, each with the JSON
    /// pointer of the offending part and the rule it breaks (none: it matches).
    ///
    /// # Errors
    /// When `path` was not loaded.
    pub fn problems(&self, path: &str, value: &Value) -> Result<Vec<String>, NodeError> {
        let validator = self.validators.get(path).ok_or_else(|| {
            NodeError::fatal(format!("schema `{path}` was not loaded for this run"))
        })?;
        Ok(validator
            .iter_errors(value)
            .take(3)
            .map(|error| {
                let at = error.instance_path().to_string();
                if at.is_empty() {
                    error.to_string()
                } else {
                    format!("at `{at}`: {error}")
                }
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::source::MemoryFiles;

    #[test]
    fn json_is_found_whole_fenced_or_embedded() {
        assert_eq!(
            parse_output(ParseMode::Json, " [1, 2] ").unwrap(),
            json!([1, 2])
        );
        let fenced = "Here you go:\n```json\n{\"a\": 1}\n```\nthanks";
        assert_eq!(
            parse_output(ParseMode::Json, fenced).unwrap(),
            json!({"a": 1})
        );
        let untagged = "```\n[true]\n```";
        assert_eq!(
            parse_output(ParseMode::Json, untagged).unwrap(),
            json!([true])
        );
        let embedded = "The findings are {\"n\": 2, \"x\": [1]} and more {\"other\": 1}";
        assert_eq!(
            parse_output(ParseMode::Json, embedded).unwrap(),
            json!({"n": 2, "x": [1]})
        );
        let broken = "not {json here";
        let error = parse_output(ParseMode::Json, broken).unwrap_err();
        assert_eq!(error.class, Some(ErrorClass::BadOutput));
        assert!(error.message.contains("expected JSON"), "{}", error.message);
    }

    #[test]
    fn yes_no_number_lines_text() {
        assert_eq!(parse_output(ParseMode::YesNo, "Yes.").unwrap(), json!(true));
        assert_eq!(
            parse_output(ParseMode::YesNo, " n\n").unwrap(),
            json!(false)
        );
        assert_eq!(
            parse_output(ParseMode::YesNo, "**FALSE**").unwrap(),
            json!(false)
        );
        assert!(parse_output(ParseMode::YesNo, "maybe").is_err());
        assert_eq!(parse_output(ParseMode::Number, " 42\n").unwrap(), json!(42));
        assert_eq!(
            parse_output(ParseMode::Number, "-1.5").unwrap(),
            json!(-1.5)
        );
        assert_eq!(
            parse_output(ParseMode::Number, "four").unwrap_err().class,
            Some(ErrorClass::BadOutput)
        );
        assert_eq!(
            parse_output(ParseMode::Lines, "a\r\n\n  \nb\n").unwrap(),
            json!(["a", "b"])
        );
        assert_eq!(
            parse_output(ParseMode::Text, "as is\n").unwrap(),
            json!("as is\n")
        );
    }

    #[test]
    fn schemas_compile_once_and_validate() {
        let mut files = MemoryFiles::new();
        files.insert(
            "/flow/schemas/findings.json",
            r#"{"type": "array", "items": {"type": "object", "required": ["file"]}}"#,
        );
        files.insert("/flow/bad.json", "{nope");
        let schemas = Schemas::load(["schemas/findings.json"], Path::new("/flow"), &files).unwrap();
        schemas
            .validate("schemas/findings.json", &json!([{"file": "a.rs"}]))
            .unwrap();
        let error = schemas
            .validate("schemas/findings.json", &json!([{"line": 1}]))
            .unwrap_err();
        assert_eq!(error.class, Some(ErrorClass::Schema));
        assert!(error.message.contains("at `/0`"), "{}", error.message);
        assert!(
            Schemas::load(["missing.json"], Path::new("/flow"), &files)
                .unwrap_err()
                .contains("cannot be read")
        );
        assert!(
            Schemas::load(["bad.json"], Path::new("/flow"), &files)
                .unwrap_err()
                .contains("not JSON")
        );
        assert_eq!(
            schemas.validate("other.json", &json!(1)).unwrap_err().class,
            None
        );
    }
}
