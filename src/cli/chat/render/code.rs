//! A code block's lines: highlighted by its language, indented two columns, painted on
//! the code background to the width (where the theme has one). Lines are not re-wrapped
//! at spaces; one longer than the width is broken at the last column and goes on after a
//! dim `↪` in the indent, so nothing is lost.

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthChar;

use super::highlight::{self, State, Syntax};
use super::theme::Theme;
use super::wrap::{Styled, breaks, expand_tabs, spans_of, spans_width};

/// `text` (a code block's, its last newline ignored) as lines at most `width` columns
/// wide, behind `first` (its first line) or `rest` (the others).
pub(super) fn code_lines(
    text: &str,
    syntax: Option<&Syntax>,
    first: &[Span<'static>],
    rest: &[Span<'static>],
    width: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let text = text.strip_suffix('\n').unwrap_or(text);
    let bg = |style: Style| match theme.code_bg {
        Some(color) => style.bg(color),
        None => style,
    };
    let room = width.saturating_sub(spans_width(rest) + 2).max(1);
    let mut out = Vec::new();
    let mut state = State::Code;
    let mut cells = Styled::default();
    let mut expanded = String::new();
    for line in text.split('\n') {
        expand_tabs(line, &mut expanded);
        let (spans, next) = highlight::highlight_with(syntax, &expanded, state, theme);
        state = next;
        cells.clear();
        for span in &spans {
            cells.push(&span.content, bg(span.style));
        }
        for (n, range) in breaks(cells.cells(), room, room, false)
            .into_iter()
            .enumerate()
        {
            let (mut spans, indent) = if out.is_empty() {
                (first.to_vec(), Span::styled("  ", bg(theme.code)))
            } else if n == 0 {
                (rest.to_vec(), Span::styled("  ", bg(theme.code)))
            } else {
                (rest.to_vec(), Span::styled("↪ ", bg(theme.dim)))
            };
            spans.push(indent);
            let piece = &cells.cells()[range];
            spans.extend(spans_of(piece));
            if theme.code_bg.is_some() {
                let used: usize = piece.iter().map(|(ch, _)| ch.width().unwrap_or(0)).sum();
                let pad = room.saturating_sub(used);
                if pad > 0 {
                    spans.push(Span::styled(" ".repeat(pad), bg(theme.code)));
                }
            }
            out.push(Line::from(spans));
        }
    }
    out
}
