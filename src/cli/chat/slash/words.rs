//! A slash command's arguments split into words as a shell splits them, so people can
//! write what they already know: `"build the parser"` and `'a b'` are one word each,
//! `\ ` and `\"` escape, and pieces next to each other join (`a"b c"` is `ab c`). Nothing
//! else of a shell happens: no variables, no globs, no `~`.
//!
//! Each word keeps where it was typed (for completion) and whether it reads as
//! `name=value` with the name written plainly, so `"x=1"` stays text.

use std::ops::Range;

/// One word of the arguments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Word {
    /// The word with its quotes and escapes taken away.
    pub(crate) text: String,
    /// Where it was typed: byte offsets into the line.
    pub(crate) span: Range<usize>,
    /// The byte offset in [`Word::text`] of the first `=`, when it and everything before it
    /// were typed plainly (unquoted, unescaped): `max=3` and `goal="a b"` have one,
    /// `"max=3"` and `max\=3` do not.
    pub(crate) assignment: Option<usize>,
}

impl Word {
    /// `(name, value)` when the word is `name=value` with a plain name.
    #[must_use]
    pub(crate) fn as_assignment(&self) -> Option<(&str, &str)> {
        let at = self.assignment?;
        Some((&self.text[..at], &self.text[at + 1..]))
    }
}

/// A quote that is never closed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Unclosed {
    /// The quote character, `"` or `'`.
    pub(crate) quote: char,
    /// Its byte offset in the line.
    pub(crate) offset: usize,
    /// Its column in the line, counting characters from 1.
    pub(crate) column: usize,
}

impl std::fmt::Display for Unclosed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the {} at column {} is never closed",
            match self.quote {
                '\'' => "quote `'`",
                _ => "quote `\"`",
            },
            self.column
        )
    }
}

/// The words of `line[from..]`, each with its span in `line`.
///
/// Outside quotes a backslash keeps the next character as it is (a backslash at the very
/// end stays a backslash); inside `"…"` it escapes only `"` and `\`; inside `'…'` nothing
/// is special.
///
/// # Errors
/// [`Unclosed`] naming the column of a quote that is never closed.
pub(crate) fn split(line: &str, from: usize) -> Result<Vec<Word>, Unclosed> {
    let mut words = Vec::new();
    let mut chars = line[from..]
        .char_indices()
        .map(|(at, c)| (at + from, c))
        .peekable();
    loop {
        // Between words.
        while chars.next_if(|(_, c)| c.is_whitespace()).is_some() {}
        let Some(&(start, _)) = chars.peek() else {
            return Ok(words);
        };
        let mut text = String::new();
        let mut plain = true;
        let mut assignment = None;
        let mut end = start;
        while let Some((at, c)) = chars.next() {
            end = at + c.len_utf8();
            match c {
                c if c.is_whitespace() => {
                    end = at;
                    break;
                }
                '\\' => {
                    plain = false;
                    match chars.next() {
                        Some((at, escaped)) => {
                            end = at + escaped.len_utf8();
                            text.push(escaped);
                        }
                        None => text.push('\\'),
                    }
                }
                '\'' | '"' => {
                    plain = false;
                    end = quoted(line, &mut chars, &mut text, c, at)?;
                }
                '=' if plain && assignment.is_none() => {
                    assignment = Some(text.len());
                    text.push('=');
                }
                c => text.push(c),
            }
        }
        words.push(Word {
            text,
            span: start..end,
            assignment,
        });
    }
}

/// Reads a quoted piece opened by `quote` at `open` into `text`; returns the byte offset
/// just after the closing quote.
fn quoted(
    line: &str,
    chars: &mut std::iter::Peekable<impl Iterator<Item = (usize, char)>>,
    text: &mut String,
    quote: char,
    open: usize,
) -> Result<usize, Unclosed> {
    while let Some((at, c)) = chars.next() {
        match c {
            c if c == quote => return Ok(at + c.len_utf8()),
            '\\' if quote == '"' => match chars.next_if(|(_, next)| matches!(next, '"' | '\\')) {
                Some((_, escaped)) => text.push(escaped),
                None => text.push('\\'),
            },
            c => text.push(c),
        }
    }
    Err(Unclosed {
        quote,
        offset: open,
        column: line[..open].chars().count() + 1,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(line: &str) -> Vec<String> {
        split(line, 0)
            .expect("splits")
            .into_iter()
            .map(|word| word.text)
            .collect()
    }

    #[test]
    fn quoted_words_are_kept_whole() {
        assert_eq!(
            texts(r#"  "build the parser" 'a b'  plain  "#),
            ["build the parser", "a b", "plain"]
        );
        assert_eq!(texts(r#"a"b c"d 'x'"y""#), ["ab cd", "xy"]);
        assert_eq!(texts(r#""" ''"#), ["", ""]);
        assert_eq!(texts(""), Vec::<String>::new());
    }

    #[test]
    fn backslashes_escape_as_in_a_shell() {
        assert_eq!(texts(r#"a\ b c\\d e\"f"#), ["a b", r"c\d", "e\"f"]);
        assert_eq!(texts(r#""say \"hi\" \n""#), [r#"say "hi" \n"#]);
        assert_eq!(texts(r"'it\'"), [r"it\"]);
        assert_eq!(texts(r"end\"), [r"end\"]);
    }

    #[test]
    fn spans_point_into_the_line() {
        let line = r#"/ralph "build it" max=3"#;
        let words = split(line, 6).unwrap();
        assert_eq!(&line[words[0].span.clone()], r#""build it""#);
        assert_eq!(&line[words[1].span.clone()], "max=3");
    }

    #[test]
    fn only_a_plain_equals_sign_makes_an_assignment() {
        let words = split(r#"max=3 goal="a b" "x=1" x\=1 a=b=c =v"#, 0).unwrap();
        let pairs: Vec<Option<(&str, &str)>> = words.iter().map(Word::as_assignment).collect();
        assert_eq!(
            pairs,
            [
                Some(("max", "3")),
                Some(("goal", "a b")),
                None,
                None,
                Some(("a", "b=c")),
                Some(("", "v")),
            ]
        );
    }

    #[test]
    fn an_unclosed_quote_names_its_column() {
        let error = split("/x ok é don't", 3).unwrap_err();
        assert_eq!((error.quote, error.offset, error.column), ('\'', 12, 12));
        assert_eq!(
            error.to_string(),
            "the quote `'` at column 12 is never closed"
        );
        let error = split(r#"/x "open"#, 3).unwrap_err();
        assert_eq!((error.quote, error.offset, error.column), ('"', 3, 4));
    }
}
