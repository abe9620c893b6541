//! The compact view for small terminals (below 60×15): one line for the run (or the runs
//! list), the steps with their states, and one line for a wait or the footer. Nothing here
//! assumes any room: each part is drawn only where a row is left for it.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::run::step_line;
use super::{Theme, footer, offset, take_bottom, take_top};
use crate::cli::ui::terminal::app::{App, Screen};
use crate::cli::ui::terminal::text::{clip, glyph};
use crate::view::NodeState;

pub(super) fn draw(frame: &mut Frame<'_>, app: &App, theme: Theme, area: Rect) {
    let width = usize::from(area.width);
    let (top, rest) = take_top(area, 1);
    let (body, bottom) = if rest.height >= 2 {
        take_bottom(rest, 1)
    } else {
        (rest, Rect::default())
    };
    if app.screen == Screen::Runs {
        frame.render_widget(
            Paragraph::new(Span::styled(clip("runs", width), theme.accent())),
            top,
        );
        let rows = usize::from(body.height);
        let first = offset(app.run_cursor, rows, app.runs.len());
        let lines: Vec<Line<'_>> = app
            .runs
            .iter()
            .enumerate()
            .skip(first)
            .take(rows)
            .map(|(at, run)| {
                let status = run.record.status;
                let text = clip(
                    &format!(
                        "{} {} {}",
                        status.as_str(),
                        run.record.workflow,
                        run.record.id
                    ),
                    width,
                );
                let line = Line::from(Span::styled(text, theme.phase(super::runs::phase(status))));
                if at == app.run_cursor {
                    line.patch_style(theme.selected())
                } else {
                    line
                }
            })
            .collect();
        frame.render_widget(Paragraph::new(lines), body);
        footer(frame, app, theme, bottom, "⏎ show · q quit");
        return;
    }
    let Some(view) = &app.view else {
        let text = app
            .load_error
            .clone()
            .unwrap_or_else(|| "reading…".to_owned());
        frame.render_widget(Paragraph::new(clip(&text, width)), top);
        return;
    };
    frame.render_widget(
        Paragraph::new(Line::from(vec![
            Span::raw(clip(&view.workflow, width.saturating_sub(10))),
            Span::raw(" "),
            Span::styled(view.phase.name(), theme.phase(view.phase)),
        ])),
        top,
    );
    let visible: Vec<usize> = App::visible(view).collect();
    let selected = app.selected_index();
    let rows = usize::from(body.height);
    let at = selected
        .and_then(|s| visible.iter().position(|&v| v == s))
        .unwrap_or(0);
    let first = offset(at, rows, visible.len());
    let lines: Vec<Line<'_>> = visible
        .iter()
        .skip(first)
        .take(rows)
        .map(|&index| step_line(&view.nodes[index], Some(index) == selected, width, theme))
        .collect();
    frame.render_widget(Paragraph::new(lines), body);
    match view.waits.first() {
        Some(wait) if app.notice.is_none() => frame.render_widget(
            Paragraph::new(Span::styled(
                clip(
                    &format!("{} a: answer {}", glyph(NodeState::Waiting), wait.node),
                    width,
                ),
                theme.state(NodeState::Waiting),
            )),
            bottom,
        ),
        _ => footer(frame, app, theme, bottom, "? help · q quit"),
    }
}
