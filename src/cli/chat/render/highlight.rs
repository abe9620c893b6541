//! A small hand-written highlighter for code blocks (no syntect: its build time and size
//! are not worth it, issue 28). Each language is a table ([`Syntax`]): keywords, primitive
//! types, comment and string delimiters. A line is cut into keywords, strings (with
//! escapes), comments, numbers, types (capitalised identifiers) and punctuation; a block
//! comment or a multi-line string goes on to the next line through the [`State`] returned.
//! An unknown language is shown plain.

use ratatui::style::Style;
use ratatui::text::Span;

use super::langs;
use super::theme::Theme;

/// Where a line ended: in code, or inside a construct that goes on to the next line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum State {
    /// Plain code.
    #[default]
    Code,
    /// Inside a block comment.
    Comment,
    /// Inside a string opened by `quote` (three of them when `triple`).
    Str {
        /// The quote character.
        quote: char,
        /// Whether it was opened (and is closed) by three.
        triple: bool,
    },
}

/// A language's lexical rules.
#[derive(Debug)]
pub(crate) struct Syntax {
    /// Keywords (and literals like `true`).
    pub(crate) keywords: &'static [&'static str],
    /// Built-in type names that are not capitalised (`i32`, `int`).
    pub(crate) types: &'static [&'static str],
    /// What starts a comment to the end of the line.
    pub(crate) line_comments: &'static [&'static str],
    /// A block comment's start and end.
    pub(crate) block_comment: Option<(&'static str, &'static str)>,
    /// Characters that open a string.
    pub(crate) quotes: &'static [char],
    /// Quotes whose strings may go on past the end of a line (JavaScript's `` ` ``).
    pub(crate) multiline: &'static [char],
    /// Whether three quotes open a string that may span lines (Python's `"""`).
    pub(crate) triple: bool,
    /// Whether identifiers may hold `-` (KDL node names).
    pub(crate) dashes: bool,
    /// Whether `#word` is a keyword (KDL's `#true`, C's `#include`).
    pub(crate) hash_words: bool,
    /// Whether `'a` is a lifetime rather than a string (Rust).
    pub(crate) lifetimes: bool,
}

/// The rules for a code fence's language (its first word: `rust`, `rs`, `ts`, `bash`…);
/// `None` for a language not known here.
pub(crate) fn syntax(lang: &str) -> Option<&'static Syntax> {
    let word = lang
        .split(|c: char| c.is_whitespace() || c == ',')
        .find(|word| !word.is_empty())?;
    let word = word.trim_matches(|c| c == '{' || c == '}' || c == '.');
    langs::lookup(&word.to_ascii_lowercase())
}

/// `line` of code in `lang` as styled spans, starting in `state`; returns the spans and
/// the state the next line starts in.
#[cfg(test)]
pub(crate) fn highlight(
    lang: &str,
    line: &str,
    state: State,
    theme: &Theme,
) -> (Vec<Span<'static>>, State) {
    highlight_with(syntax(lang), line, state, theme)
}

/// [`highlight`] with the language's rules looked up already (once per code block).
pub(crate) fn highlight_with(
    syntax: Option<&Syntax>,
    line: &str,
    state: State,
    theme: &Theme,
) -> (Vec<Span<'static>>, State) {
    let mut out = Out {
        spans: Vec::new(),
        theme,
    };
    let Some(syntax) = syntax else {
        out.push(line, theme.code);
        return (out.spans, State::Code);
    };
    let state = Lexer {
        syntax,
        line,
        out: &mut out,
    }
    .run(state);
    (out.spans, state)
}

struct Out<'t> {
    spans: Vec<Span<'static>>,
    theme: &'t Theme,
}

impl Out<'_> {
    fn push(&mut self, text: &str, style: Style) {
        if text.is_empty() {
            return;
        }
        let style = self.theme.code.patch(style);
        match self.spans.last_mut() {
            Some(last) if last.style == style => last.content.to_mut().push_str(text),
            _ => self.spans.push(Span::styled(text.to_owned(), style)),
        }
    }
}

struct Lexer<'a, 'o, 't> {
    syntax: &'a Syntax,
    line: &'a str,
    out: &'o mut Out<'t>,
}

impl Lexer<'_, '_, '_> {
    fn run(self, state: State) -> State {
        let theme = *self.out.theme;
        let line = self.line;
        let mut i = match state {
            State::Code => 0,
            State::Comment => match self.block_end(0) {
                Some(end) => {
                    self.out.push(&line[..end], theme.comment);
                    end
                }
                None => {
                    self.out.push(line, theme.comment);
                    return State::Comment;
                }
            },
            State::Str { quote, triple } => match self.string_end(0, quote, triple) {
                Some(end) => {
                    self.out.push(&line[..end], theme.string);
                    end
                }
                None => {
                    self.out.push(line, theme.string);
                    return state;
                }
            },
        };
        while let Some(c) = line[i..].chars().next() {
            let rest = &line[i..];
            let after_space = line[..i]
                .chars()
                .next_back()
                .is_none_or(char::is_whitespace);
            if c.is_whitespace() {
                let end = i + rest
                    .find(|c: char| !c.is_whitespace())
                    .unwrap_or(rest.len());
                self.out.push(&line[i..end], Style::new());
                i = end;
            } else if self
                .syntax
                .line_comments
                .iter()
                .any(|start| rest.starts_with(start) && (!start.starts_with('#') || after_space))
            {
                self.out.push(rest, theme.comment);
                return State::Code;
            } else if let Some((open, _)) = self
                .syntax
                .block_comment
                .filter(|(open, _)| rest.starts_with(open))
            {
                match self.block_end(i + open.len()) {
                    Some(end) => {
                        self.out.push(&line[i..end], theme.comment);
                        i = end;
                    }
                    None => {
                        self.out.push(rest, theme.comment);
                        return State::Comment;
                    }
                }
            } else if self.syntax.quotes.contains(&c) {
                if self.syntax.lifetimes && c == '\'' && !is_char_literal(rest) {
                    let end = i + 1 + ident_len(&rest[1..], false);
                    self.out.push(&line[i..end], theme.type_);
                    i = end;
                    continue;
                }
                let triple = self.syntax.triple && rest.starts_with(&c.to_string().repeat(3));
                let open = if triple { 3 } else { 1 };
                match self.string_end(i + open, c, triple) {
                    Some(end) => {
                        self.out.push(&line[i..end], theme.string);
                        i = end;
                    }
                    None => {
                        self.out.push(rest, theme.string);
                        let goes_on = triple || self.syntax.multiline.contains(&c);
                        return if goes_on {
                            State::Str { quote: c, triple }
                        } else {
                            State::Code
                        };
                    }
                }
            } else if c.is_ascii_digit()
                || (c == '.' && rest[1..].starts_with(|c: char| c.is_ascii_digit()) && after_space)
            {
                let end = i + number_len(rest);
                self.out.push(&line[i..end], theme.number);
                i = end;
            } else if c.is_alphabetic() || c == '_' || (c == '#' && self.syntax.hash_words) {
                let hash = usize::from(c == '#');
                let len = hash + ident_len(&rest[hash..], self.syntax.dashes);
                let word = &line[i..i + len];
                let style = if self.syntax.keywords.contains(&word) {
                    theme.keyword
                } else if self.syntax.types.contains(&word) || c.is_uppercase() {
                    theme.type_
                } else if hash == 1 && len == 1 {
                    theme.punct
                } else {
                    Style::new()
                };
                self.out.push(word, style);
                i += len;
            } else {
                let end = i + c.len_utf8();
                let style = if c.is_ascii_punctuation() {
                    theme.punct
                } else {
                    Style::new()
                };
                self.out.push(&line[i..end], style);
                i = end;
            }
        }
        State::Code
    }

    /// Where the block comment open before `from` ends (after its closing mark).
    fn block_end(&self, from: usize) -> Option<usize> {
        let (_, close) = self.syntax.block_comment?;
        self.line[from..]
            .find(close)
            .map(|at| from + at + close.len())
    }

    /// Where a string of `quote` open before `from` ends (after its closing quote), with
    /// backslash escapes skipped.
    fn string_end(&self, from: usize, quote: char, triple: bool) -> Option<usize> {
        let bytes = self.line.as_bytes();
        let close = if triple { 3 } else { 1 };
        let mut i = from;
        while i < bytes.len() {
            match bytes[i] {
                b'\\' => i += 2,
                b if b == quote as u8 => {
                    if !triple || self.line[i..].starts_with(&quote.to_string().repeat(3)) {
                        return Some(i + close);
                    }
                    i += 1;
                }
                _ => i += 1,
            }
        }
        None
    }
}

/// Whether `rest` (at a `'`) is a character literal (`'a'`, `'\n'`) and not a lifetime.
fn is_char_literal(rest: &str) -> bool {
    let mut chars = rest.chars().skip(1);
    match chars.next() {
        Some('\\') => true,
        Some(_) => chars.next() == Some('\''),
        None => false,
    }
}

/// Bytes of the identifier at the start of `text`.
fn ident_len(text: &str, dashes: bool) -> usize {
    text.find(|c: char| !(c.is_alphanumeric() || c == '_' || (dashes && c == '-')))
        .unwrap_or(text.len())
}

/// Bytes of the number at the start of `text` (`0x1F`, `1_000`, `2.5e3`, `10u8`; not the
/// `..` of a range).
fn number_len(text: &str) -> usize {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let dot = b == b'.' && bytes.get(i + 1).is_some_and(u8::is_ascii_digit);
        if b.is_ascii_alphanumeric() || b == b'_' || dot {
            i += 1;
        } else {
            break;
        }
    }
    i.max(1)
}

#[cfg(test)]
#[path = "highlight_tests.rs"]
mod tests;
