//! Suggestions as data: a [`Fix`] is the repair a diagnostic proposes, as edits of the
//! text (a span and what replaces it), so the language server's quick fixes, the JSON and
//! SARIF outputs and the terminal all read the same repair instead of parsing help text.

use serde::Serialize;

use crate::source::{Sources, Span};

/// A repair: every edit applied together fixes the diagnostic.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Fix {
    /// What it does, as an editor's menu shows it: "Replace with `ship`".
    pub title: String,
    /// The edits, in any order; spans do not overlap.
    pub edits: Vec<Edit>,
}

/// Replace the text at `span` with `replacement` (an empty span inserts).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Edit {
    /// What is replaced.
    pub span: Span,
    /// The new text.
    pub replacement: String,
    /// Whether `span` is a name as written, quotes and all, that [`Fix::settle`] narrows
    /// to the text inside the quotes (checkers know the name's span, not how it was
    /// quoted).
    #[serde(skip)]
    name: bool,
}

impl Fix {
    /// Replaces the name written at `span` (quoted or bare) with `name`.
    #[must_use]
    pub fn rename(span: Span, name: impl Into<String>) -> Self {
        let name = name.into();
        Self {
            title: format!("Replace with `{name}`"),
            edits: vec![Edit {
                span,
                replacement: name,
                name: true,
            }],
        }
    }

    /// Replaces the text at `at` with `text` (an empty `at` inserts).
    #[must_use]
    pub fn edit(title: impl Into<String>, at: Span, text: impl Into<String>) -> Self {
        Self {
            title: title.into(),
            edits: vec![Edit {
                span: at,
                replacement: text.into(),
                name: false,
            }],
        }
    }

    /// Makes name edits exact: inside the quotes of a plain quoted string, or the whole
    /// literal rewritten as a quoted string when it had escapes.
    pub fn settle(&mut self, sources: &Sources) {
        for edit in &mut self.edits {
            if !std::mem::take(&mut edit.name) {
                continue;
            }
            let text = sources.text(edit.span);
            let quoted = text.len() >= 2 && text.starts_with('"') && text.ends_with('"');
            if !quoted {
                continue;
            }
            if text[1..text.len() - 1].contains('\\') {
                edit.replacement = format!("\"{}\"", edit.replacement.replace('"', "\\\""));
            } else {
                edit.span = edit.span.slice(1..text.len() - 1);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_replaced_inside_their_quotes() {
        let mut sources = Sources::new();
        let file = sources.add("f.kdl", "goto=\"shp\" id=bar x=\"a\\tb\"");
        let mut quoted = Fix::rename(Span::new(file, 5, 10), "ship");
        quoted.settle(&sources);
        assert_eq!(quoted.edits[0].span.range(), 6..9);
        let mut bare = Fix::rename(Span::new(file, 14, 17), "baz");
        bare.settle(&sources);
        assert_eq!(bare.edits[0].span.range(), 14..17);
        let mut escaped = Fix::rename(Span::new(file, 20, 26), "ab");
        escaped.settle(&sources);
        assert_eq!(
            (
                escaped.edits[0].span.range(),
                escaped.edits[0].replacement.as_str()
            ),
            (20..26, "\"ab\"")
        );
    }
}
