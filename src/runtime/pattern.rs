//! `output match="<regex>"`: picks part of a node's raw text before it is parsed. The first
//! capture group is kept, or the whole match when the pattern has no group; no match is a
//! `bad-output` error (so `retry "bad-output"` can ask again). Patterns are compiled once
//! per run; the checker has already validated their syntax.

use std::collections::HashMap;

use regex::Regex;

use crate::ir::{ErrorClass, OutputMap, Workflow};
use crate::runtime::NodeError;

/// Every `match=` pattern of a workflow, compiled.
#[derive(Debug, Default)]
pub(crate) struct Patterns {
    compiled: HashMap<String, Regex>,
}

impl Patterns {
    /// Compiles the patterns of every output in `workflow`.
    pub(crate) fn compile(workflow: &Workflow) -> Result<Self, String> {
        let mut compiled = HashMap::new();
        let patterns = workflow
            .nodes
            .iter()
            .flat_map(|node| node.kind.outputs())
            .filter_map(|output| output.pattern.as_ref());
        for pattern in patterns {
            if compiled.contains_key(&pattern.value) {
                continue;
            }
            let regex = Regex::new(&pattern.value).map_err(|error| {
                format!(
                    "output pattern `{}` does not compile: {error}",
                    pattern.value
                )
            })?;
            compiled.insert(pattern.value.clone(), regex);
        }
        Ok(Self { compiled })
    }

    /// The part of `text` the output's pattern selects, or all of it without a pattern.
    pub(crate) fn extract<'t>(
        &self,
        output: &OutputMap,
        text: &'t str,
    ) -> Result<&'t str, NodeError> {
        let Some(pattern) = &output.pattern else {
            return Ok(text);
        };
        let regex = self.compiled.get(&pattern.value).ok_or_else(|| {
            NodeError::fatal(format!(
                "output pattern `{}` was not compiled for this run",
                pattern.value
            ))
        })?;
        let captures = regex.captures(text).ok_or_else(|| {
            NodeError::new(
                ErrorClass::BadOutput,
                format!(
                    "the output for `{}` does not match `{}`",
                    output.field.value, pattern.value
                ),
            )
        })?;
        let selected = captures
            .get(1)
            .or_else(|| captures.get(0))
            .expect("a match has group 0");
        Ok(selected.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{OutputSource, ParseMode};
    use crate::source::{Span, Spanned};

    fn output(pattern: &str) -> OutputMap {
        OutputMap {
            field: Spanned::new("x".to_owned(), Span::default()),
            parse: ParseMode::Text,
            schema: None,
            from: OutputSource::Result,
            pattern: Some(Spanned::new(pattern.to_owned(), Span::default())),
            span: Span::default(),
        }
    }

    fn patterns(list: &[&str]) -> Patterns {
        Patterns {
            compiled: list
                .iter()
                .map(|p| ((*p).to_owned(), Regex::new(p).unwrap()))
                .collect(),
        }
    }

    #[test]
    fn keeps_the_first_group_or_the_whole_match() {
        let all = patterns(&[r"VERDICT: (\w+)", r"\d+"]);
        assert_eq!(
            all.extract(&output(r"VERDICT: (\w+)"), "blah\nVERDICT: ship\n")
                .unwrap(),
            "ship"
        );
        assert_eq!(all.extract(&output(r"\d+"), "took 42 ms").unwrap(), "42");
    }

    #[test]
    fn no_match_is_bad_output() {
        let all = patterns(&[r"VERDICT: (\w+)"]);
        let error = all
            .extract(&output(r"VERDICT: (\w+)"), "no verdict")
            .unwrap_err();
        assert_eq!(error.class, Some(ErrorClass::BadOutput));
    }
}
