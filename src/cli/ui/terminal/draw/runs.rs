//! The runs screen: the project's runs, newest first, with status, steps, start, duration
//! and cost; Enter shows the one under the cursor.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph};

use super::{Theme, fit, footer, offset, take_bottom, take_top};
use crate::cli::ui::terminal::app::{App, RunRow};
use crate::cli::ui::terminal::text;
use crate::store::RunStatus;
use crate::view::RunPhase;

const KEYS: &str = "↑↓ move · ⏎ show · Esc back · ? help · q quit";

pub(super) fn draw(frame: &mut Frame<'_>, app: &App, theme: Theme, area: Rect) {
    let (header_area, rest) = take_top(area, 1);
    let (body, footer_area) = take_bottom(rest, 1);
    frame.render_widget(
        Paragraph::new(Line::from(vec![
            Span::styled(" atomic ui ", theme.accent()),
            Span::raw(format!("· runs, newest first ({})", app.runs.len())),
        ])),
        header_area,
    );
    footer(frame, app, theme, footer_area, KEYS);
    let block = Block::bordered().title(" Runs ");
    let inner = block.inner(body);
    frame.render_widget(block, body);
    if app.runs.is_empty() {
        let text = if app.runs_loaded {
            "no runs yet: start one with `atomic run FILE` and it appears here"
        } else {
            "reading runs…"
        };
        frame.render_widget(Paragraph::new(Span::styled(text, theme.dim())), inner);
        return;
    }
    let (head, list) = take_top(inner, 1);
    let width = usize::from(inner.width);
    frame.render_widget(
        Paragraph::new(Span::styled(
            row_text(
                [
                    "ID",
                    "WORKFLOW",
                    "STATUS",
                    "STEPS",
                    "STARTED (UTC)",
                    "DURATION",
                    "COST",
                ],
                width,
            ),
            theme.dim(),
        )),
        head,
    );
    let rows = usize::from(list.height);
    let first = offset(app.run_cursor, rows, app.runs.len());
    let lines: Vec<Line<'_>> = app
        .runs
        .iter()
        .enumerate()
        .skip(first)
        .take(rows)
        .map(|(at, run)| run_line(run, at == app.run_cursor, width, theme))
        .collect();
    frame.render_widget(Paragraph::new(lines), list);
}

fn run_line(run: &RunRow, selected: bool, width: usize, theme: Theme) -> Line<'static> {
    let record = &run.record;
    let cells = [
        record.id.to_string(),
        record.workflow.clone(),
        record.status.as_str().to_owned(),
        record.steps.to_string(),
        crate::store::utc(record.created_at),
        crate::cli::progress::duration_ms(record.duration_millis()),
        run.cost_usd.map(text::cost).unwrap_or_default(),
    ];
    let line = Line::from(Span::styled(
        row_text(cells.each_ref().map(String::as_str), width),
        theme.phase(phase(record.status)),
    ));
    if selected {
        line.patch_style(theme.selected())
    } else {
        line
    }
}

/// The columns, each at its width, cut to `width`.
fn row_text(cells: [&str; 7], width: usize) -> String {
    const WIDTHS: [usize; 7] = [14, 18, 9, 5, 19, 8, 8];
    let mut text = String::new();
    for (cell, cell_width) in cells.iter().zip(WIDTHS) {
        text.push_str(&fit(cell, cell_width));
        text.push(' ');
    }
    fit(text.trim_end(), width)
}

/// The view's phase for a stored status.
pub(super) fn phase(status: RunStatus) -> RunPhase {
    match status {
        RunStatus::Running => RunPhase::Running,
        RunStatus::Paused => RunPhase::Paused,
        RunStatus::Completed => RunPhase::Completed,
        RunStatus::Failed => RunPhase::Failed,
        RunStatus::Cancelled => RunPhase::Cancelled,
    }
}
