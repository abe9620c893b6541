//! Helpers for the renderers' tests: lines as plain strings, and checks on them.

use ratatui::style::Style;
use ratatui::text::Line;

use super::wrap::columns;

/// Each line's text (its spans' contents joined).
pub(crate) fn strings(lines: &[Line<'_>]) -> Vec<String> {
    lines
        .iter()
        .map(|line| {
            line.spans
                .iter()
                .map(|span| span.content.as_ref())
                .collect()
        })
        .collect()
}

/// Panics unless every line is at most `width` columns wide.
pub(crate) fn assert_fits(lines: &[Line<'_>], width: usize) {
    for line in strings(lines) {
        assert!(columns(&line) <= width, "{line:?} is wider than {width}");
    }
}

/// The style of the first span whose text is `text` (trimmed), in any line.
pub(crate) fn style_of(lines: &[Line<'_>], text: &str) -> Style {
    lines
        .iter()
        .flat_map(|line| &line.spans)
        .find(|span| span.content.trim() == text)
        .map_or_else(
            || panic!("no span {text:?} in {lines:?}"),
            |span| span.style,
        )
}
