//! A GFM table as lines: columns as wide as their content, shrunk to fit the width (the
//! widest give way first, cells wrapping inside their column), box-drawing borders, each
//! column aligned as its delimiter row says. Too narrow for borders, rows are lines of
//! cells separated by `│`.

use pulldown_cmark::Alignment;
use ratatui::text::{Line, Span};

use super::theme::Theme;
use super::wrap::{Styled, spans_width};

/// The table of `rows` (the first `head` of them the header) in at most `width` columns.
pub(super) fn table(
    rows: &[Vec<Styled>],
    head: usize,
    aligns: &[Alignment],
    width: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let columns = rows
        .iter()
        .map(Vec::len)
        .max()
        .unwrap_or(0)
        .max(aligns.len());
    if columns == 0 {
        return Vec::new();
    }
    // `│ a │ b │`: a border before each column and after the last, a space each side.
    let chrome = 3 * columns + 1;
    let Some(room) = width.checked_sub(chrome).filter(|room| *room >= columns) else {
        return narrow(rows, width, theme);
    };
    let mut natural = vec![1; columns];
    for row in rows {
        for (column, cell) in row.iter().enumerate() {
            natural[column] = natural[column].max(cell.width());
        }
    }
    let widths = fit(&natural, room);
    let border = |left: &str, mid: &str, right: &str| {
        let mut text = String::from(left);
        for (column, width) in widths.iter().enumerate() {
            if column > 0 {
                text.push_str(mid);
            }
            text.push_str(&"─".repeat(width + 2));
        }
        text.push_str(right);
        Line::from(Span::styled(text, theme.table_border))
    };
    let mut out = vec![border("┌", "┬", "┐")];
    for (n, row) in rows.iter().enumerate() {
        if n == head && n > 0 {
            out.push(border("├", "┼", "┤"));
        }
        let empty = Styled::default();
        let cells: Vec<Vec<Line<'static>>> = (0..columns)
            .map(|column| {
                row.get(column)
                    .unwrap_or(&empty)
                    .lines(widths[column], &[], &[], true)
            })
            .collect();
        let height = cells.iter().map(Vec::len).max().unwrap_or(1);
        for k in 0..height {
            let mut spans = vec![Span::styled("│ ", theme.table_border)];
            for (column, lines) in cells.iter().enumerate() {
                if column > 0 {
                    spans.push(Span::styled(" │ ", theme.table_border));
                }
                let cell = lines
                    .get(k)
                    .map(|line| line.spans.clone())
                    .unwrap_or_default();
                let align = aligns.get(column).copied().unwrap_or(Alignment::None);
                padded(&mut spans, cell, widths[column], align);
            }
            spans.push(Span::styled(" │", theme.table_border));
            out.push(Line::from(spans));
        }
    }
    out.push(border("└", "┴", "┘"));
    out
}

/// Column widths for `natural` widths in `room` columns: all of them when they fit, else
/// each narrow column keeps its width and the wide ones share what is left.
fn fit(natural: &[usize], room: usize) -> Vec<usize> {
    if natural.iter().sum::<usize>() <= room {
        return natural.to_vec();
    }
    let mut order: Vec<usize> = (0..natural.len()).collect();
    order.sort_by_key(|column| natural[*column]);
    let mut widths = vec![1; natural.len()];
    let mut left = room;
    for (done, column) in order.iter().enumerate() {
        let share = left / (natural.len() - done);
        widths[*column] = natural[*column].min(share).max(1);
        left = left.saturating_sub(widths[*column]);
    }
    widths
}

/// `cell` padded to `width` as `align` says, added to `spans`.
fn padded(
    spans: &mut Vec<Span<'static>>,
    cell: Vec<Span<'static>>,
    width: usize,
    align: Alignment,
) {
    let gap = width.saturating_sub(spans_width(&cell));
    let (before, after) = match align {
        Alignment::Right => (gap, 0),
        Alignment::Center => (gap / 2, gap - gap / 2),
        Alignment::Left | Alignment::None => (0, gap),
    };
    if before > 0 {
        spans.push(Span::raw(" ".repeat(before)));
    }
    spans.extend(cell);
    if after > 0 {
        spans.push(Span::raw(" ".repeat(after)));
    }
}

/// Each row as wrapped text, cells separated by `│`, for a width too small for borders.
fn narrow(rows: &[Vec<Styled>], width: usize, theme: &Theme) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    for row in rows {
        let mut text = Styled::default();
        for (column, cell) in row.iter().enumerate() {
            if column > 0 {
                text.push(" │ ", theme.table_border);
            }
            text.append(cell);
        }
        out.extend(text.lines(width, &[], &[], true));
    }
    out
}
