//! Laying styled text out by display width: [`Styled`] collects characters with their
//! styles, [`Styled::lines`] wraps them (at spaces, long words broken; a wide character is
//! never split) behind a prefix for the first line and one for the rest, and [`clip`] cuts
//! one line with `…`. Tabs are spaces and control characters are dropped, so what is
//! measured is what the terminal shows.

use std::ops::Range;

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthChar;

/// Styled characters waiting to be laid out. A `'\n'` is a line break.
#[derive(Clone, Debug, Default)]
pub(crate) struct Styled {
    cells: Vec<(char, Style)>,
}

impl Styled {
    /// Adds `text` in `style` (tabs as one space, other control characters dropped).
    pub(crate) fn push(&mut self, text: &str, style: Style) {
        self.cells.reserve(text.len());
        for ch in text.chars() {
            match ch {
                '\n' => self.cells.push(('\n', style)),
                '\t' => self.cells.push((' ', style)),
                ch if ch.is_control() => {}
                ch => self.cells.push((ch, style)),
            }
        }
    }

    /// Adds what `other` holds.
    pub(crate) fn append(&mut self, other: &Styled) {
        self.cells.extend_from_slice(&other.cells);
    }

    /// The columns of its widest line.
    pub(crate) fn width(&self) -> usize {
        self.cells
            .split(|(ch, _)| *ch == '\n')
            .map(|line| line.iter().map(|(ch, _)| ch.width().unwrap_or(0)).sum())
            .max()
            .unwrap_or(0)
    }

    /// Whether nothing was added.
    pub(crate) fn is_empty(&self) -> bool {
        self.cells.is_empty()
    }

    /// Forgets what was added.
    pub(crate) fn clear(&mut self) {
        self.cells.clear();
    }

    /// The characters, for a caller that measures them itself.
    pub(crate) fn cells(&self) -> &[(char, Style)] {
        &self.cells
    }

    /// The text wrapped to `width` columns, each line behind `first` (the first line) or
    /// `rest` (the others); `words`: break at spaces where it can (else at any character).
    pub(crate) fn lines(
        &self,
        width: usize,
        first: &[Span<'static>],
        rest: &[Span<'static>],
        words: bool,
    ) -> Vec<Line<'static>> {
        // Deep prefixes on a narrow line leave room for a wide character at least.
        let keep = width.saturating_sub(2);
        let (first, rest) = (shrunk(first, keep), shrunk(rest, keep));
        let first_width = width.saturating_sub(spans_width(&first));
        let rest_width = width.saturating_sub(spans_width(&rest));
        breaks(&self.cells, first_width, rest_width, words)
            .into_iter()
            .enumerate()
            .map(|(n, range)| {
                let mut spans = if n == 0 { first.clone() } else { rest.clone() };
                spans.extend(spans_of(&self.cells[range]));
                Line::from(spans)
            })
            .collect()
    }
}

/// `prefix` cut to at most `max` columns (from its end: the innermost part goes first).
fn shrunk(prefix: &[Span<'static>], max: usize) -> Vec<Span<'static>> {
    let mut out = prefix.to_vec();
    let mut over = spans_width(&out).saturating_sub(max);
    while over > 0 {
        let Some(last) = out.last_mut() else { break };
        let mut content = last.content.to_string();
        match content.pop() {
            Some(ch) => {
                over = over.saturating_sub(ch.width().unwrap_or(0));
                if content.is_empty() {
                    out.pop();
                } else {
                    last.content = content.into();
                }
            }
            None => {
                out.pop();
            }
        }
    }
    out
}

/// `line` cut to at most `width` columns.
pub(crate) fn truncated(line: Line<'static>, width: usize) -> Line<'static> {
    if line.width() <= width {
        return line;
    }
    let mut used = 0;
    let mut spans = Vec::with_capacity(line.spans.len());
    for span in line.spans {
        let mut content = String::new();
        for ch in span.content.chars() {
            let w = ch.width().unwrap_or(0);
            if used + w > width {
                break;
            }
            content.push(ch);
            used += w;
        }
        let full = content.len() == span.content.len();
        if !content.is_empty() {
            spans.push(Span::styled(content, span.style));
        }
        if !full {
            break;
        }
    }
    Line::from(spans).style(line.style)
}

/// Where `cells` break into lines of at most `first` columns (the first line) and `rest`
/// (the others). Wrapping at a space drops the spaces at the break. A character wider than
/// a whole line still gets a line of its own.
pub(crate) fn breaks(
    cells: &[(char, Style)],
    first: usize,
    rest: usize,
    words: bool,
) -> Vec<Range<usize>> {
    let mut out: Vec<Range<usize>> = Vec::new();
    let mut start = 0;
    let mut used = 0;
    // The last space of the line so far.
    let mut space: Option<usize> = None;
    let mut i = 0;
    while i < cells.len() {
        let ch = cells[i].0;
        if ch == '\n' {
            out.push(start..i);
            start = i + 1;
            i = start;
            used = 0;
            space = None;
            continue;
        }
        let w = ch.width().unwrap_or(0);
        let avail = if out.is_empty() { first } else { rest };
        if used + w > avail && i > start {
            if words && ch == ' ' {
                out.push(start..i);
                start = skip_spaces(cells, i);
                i = start;
                used = 0;
                space = None;
                continue;
            }
            if let Some(at) = space.filter(|at| words && *at > start) {
                out.push(start..at);
                start = skip_spaces(cells, at);
                used = cells[start..i]
                    .iter()
                    .map(|(ch, _)| ch.width().unwrap_or(0))
                    .sum();
                space = None;
                continue;
            }
            out.push(start..i);
            start = i;
            used = 0;
            space = None;
            continue;
        }
        if ch == ' ' {
            space = Some(i);
        }
        used += w;
        i += 1;
    }
    out.push(start..cells.len());
    out
}

fn skip_spaces(cells: &[(char, Style)], mut at: usize) -> usize {
    while cells.get(at).is_some_and(|(ch, _)| *ch == ' ') {
        at += 1;
    }
    at
}

/// `cells` as spans, one per run of one style.
pub(crate) fn spans_of(cells: &[(char, Style)]) -> Vec<Span<'static>> {
    let mut spans: Vec<Span<'static>> = Vec::new();
    let mut text = String::new();
    let mut style = None;
    for (ch, cell_style) in cells {
        if style != Some(*cell_style) {
            if let Some(style) = style.filter(|_| !text.is_empty()) {
                spans.push(Span::styled(std::mem::take(&mut text), style));
            }
            style = Some(*cell_style);
        }
        text.push(*ch);
    }
    if let Some(style) = style.filter(|_| !text.is_empty()) {
        spans.push(Span::styled(text, style));
    }
    spans
}

/// Display columns of `text`.
pub(crate) fn columns(text: &str) -> usize {
    text.chars().map(|ch| ch.width().unwrap_or(0)).sum()
}

/// Display columns of `spans`.
pub(crate) fn spans_width(spans: &[Span<'_>]) -> usize {
    spans.iter().map(|span| columns(&span.content)).sum()
}

/// `text` on one line (whitespace runs folded to one space), cut to `max` columns with `…`.
pub(crate) fn clip(text: &str, max: usize) -> String {
    let mut folded = String::with_capacity(text.len().min(max.saturating_mul(4).saturating_add(4)));
    let mut used = 0;
    let mut cut = false;
    for word in text.split_whitespace() {
        let sep = usize::from(!folded.is_empty());
        let word_width = columns(word);
        if used + sep + word_width <= max {
            if sep == 1 {
                folded.push(' ');
            }
            folded.push_str(word);
            used += sep + word_width;
            continue;
        }
        cut = true;
        if sep == 1 && used + 1 < max {
            folded.push(' ');
            used += 1;
        }
        for ch in word.chars() {
            let w = ch.width().unwrap_or(0);
            if used + w + 1 > max {
                break;
            }
            folded.push(ch);
            used += w;
        }
        break;
    }
    if cut && max > 0 {
        while folded.ends_with(' ') {
            folded.pop();
            used -= 1;
        }
        // The `…` takes the last column: drop a character if the line is full.
        while used + 1 > max {
            match folded.pop() {
                Some(ch) => used -= ch.width().unwrap_or(0),
                None => break,
            }
        }
        folded.push('…');
    }
    folded
}

/// `line` with its tabs as spaces to the next stop of 4, into `out`.
pub(crate) fn expand_tabs(line: &str, out: &mut String) {
    out.clear();
    let mut column = 0;
    for ch in line.chars() {
        if ch == '\t' {
            let stop = 4 - column % 4;
            out.extend(std::iter::repeat_n(' ', stop));
            column += stop;
        } else {
            out.push(ch);
            column += ch.width().unwrap_or(0);
        }
    }
}

/// `line` with `prefix` before it.
pub(crate) fn prefixed(prefix: &[Span<'static>], line: Line<'static>) -> Line<'static> {
    let mut spans = prefix.to_vec();
    spans.extend(line.spans);
    Line::from(spans)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wrapped(text: &str, width: usize, words: bool) -> Vec<String> {
        let mut styled = Styled::default();
        styled.push(text, Style::new());
        styled
            .lines(width, &[], &[], words)
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn words_wrap_at_spaces_and_long_words_break() {
        assert_eq!(
            wrapped("the quick brown fox", 10, true),
            ["the quick", "brown fox"]
        );
        assert_eq!(wrapped("abcdefghij", 4, true), ["abcd", "efgh", "ij"]);
        assert_eq!(
            wrapped("a verylongword", 6, true),
            ["a", "verylo", "ngword"]
        );
        assert_eq!(wrapped("", 4, true), [""]);
        assert_eq!(wrapped("one\ntwo", 10, true), ["one", "two"]);
        assert_eq!(wrapped("ab  cd", 2, true), ["ab", "cd"]);
        assert_eq!(
            wrapped("  indented code", 8, false),
            ["  indent", "ed code"]
        );
    }

    #[test]
    fn wide_characters_are_never_split() {
        assert_eq!(wrapped("日本語です", 4, true), ["日本", "語で", "す"]);
        assert_eq!(wrapped("a日本", 2, true), ["a", "日", "本"]);
        for line in wrapped("🎉🎉 party 🎉 time 日本語のテキスト", 5, true) {
            assert!(columns(&line) <= 5, "{line:?}");
        }
    }

    #[test]
    fn prefixes_take_their_columns() {
        let mut styled = Styled::default();
        styled.push("one two three four", Style::new());
        let lines: Vec<String> = styled
            .lines(9, &[Span::raw("- ")], &[Span::raw("  ")], true)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(lines, ["- one two", "  three", "  four"]);
    }

    #[test]
    fn clipping_folds_and_cuts() {
        assert_eq!(clip("a  b\nc", 10), "a b c");
        assert_eq!(clip("abcdef", 4), "abc…");
        assert_eq!(clip("abcd", 4), "abcd");
        assert_eq!(clip("ab cdef", 5), "ab c…");
        assert_eq!(clip("abc", 0), "");
        assert_eq!(clip("日本語", 4), "日…");
    }
}
