//! The run screen: a header with the run's totals, the step list with live states, the
//! selected step's output, its agent's plan and the files it changed, the state and the
//! last events, a line for a pending wait, and the footer. An opened step (Enter) gives its
//! details, files, plan and output the whole body.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph};

use super::{Theme, fit, footer, offset, plan, take_bottom, take_top};
use crate::cli::ui::terminal::app::App;
use crate::cli::ui::terminal::files;
use crate::cli::ui::terminal::text::{self, clip, glyph};
use crate::view::{NodeState, NodeView, RunView};

const KEYS: &str = "↑↓ move · ⏎ open · f follow · PgUp/PgDn scroll · a answer · c cancel · r runs · ? help · q quit";

pub(super) fn draw(frame: &mut Frame<'_>, app: &App, theme: Theme, area: Rect) {
    let (header_area, rest) = take_top(area, 1);
    let (rest, footer_area) = take_bottom(rest, 1);
    footer(frame, app, theme, footer_area, KEYS);
    let Some(view) = &app.view else {
        header(frame, app, None, theme, header_area);
        let text = match (&app.load_error, &app.run) {
            (Some(error), _) => Span::styled(error.clone(), theme.error()),
            (None, Some(run)) => Span::styled(format!("reading run {run}…"), theme.dim()),
            (None, None) => Span::styled("no run to show", theme.dim()),
        };
        frame.render_widget(Paragraph::new(Line::from(text)), rest);
        return;
    };
    header(frame, app, Some(view), theme, header_area);
    let (body, wait_area) = if view.waits.is_empty() {
        (rest, Rect::default())
    } else {
        take_bottom(rest, 1)
    };
    if let Some(wait) = view.waits.first() {
        let more = if view.waits.len() > 1 {
            format!(" (+{} more)", view.waits.len() - 1)
        } else {
            String::new()
        };
        let line = Line::from(vec![
            Span::styled(
                format!(
                    "{} waiting at `{}`{more}: ",
                    glyph(NodeState::Waiting),
                    wait.node
                ),
                theme.state(NodeState::Waiting),
            ),
            Span::raw(clip(&wait.headed_prompt(), usize::from(wait_area.width))),
            Span::styled("  (a: answer)", theme.dim()),
        ]);
        frame.render_widget(Paragraph::new(line), wait_area);
    }
    if app.open {
        opened(frame, app, view, theme, body);
        return;
    }
    let steps_width = (body.width * 3 / 10).clamp(24, 40);
    let [left, right] =
        Layout::horizontal([Constraint::Length(steps_width), Constraint::Min(0)]).areas(body);
    steps(frame, app, view, theme, left);
    let lower = (right.height * 2 / 5).max(5);
    let [output_area, bottom] =
        Layout::vertical([Constraint::Min(3), Constraint::Length(lower)]).areas(right);
    output(frame, app, theme, output_area);
    let [state_area, events_area] =
        Layout::horizontal([Constraint::Percentage(40), Constraint::Percentage(60)]).areas(bottom);
    state(frame, view, theme, state_area);
    events(frame, view, theme, events_area);
}

/// `atomic · workflow · run · phase · step N · tokens · cost · follow`.
fn header(frame: &mut Frame<'_>, app: &App, view: Option<&RunView>, theme: Theme, area: Rect) {
    let mut spans = vec![Span::styled(" atomic ui ", theme.accent())];
    if let Some(view) = view {
        spans.push(Span::raw(format!(
            "· {} · {} · ",
            view.workflow, view.run_id
        )));
        spans.push(Span::styled(view.phase.name(), theme.phase(view.phase)));
        spans.push(Span::raw(format!(" · step {}", view.step)));
        if let Some(tokens) = text::tokens(&view.usage) {
            spans.push(Span::raw(format!(" · {tokens}")));
        }
        if let Some(cost) = view.cost_usd {
            spans.push(Span::raw(format!(" · {}", text::cost(cost))));
        }
        spans.push(Span::raw(format!(" · {} events", view.event_count)));
    }
    spans.push(Span::styled(
        if app.follow { " · following" } else { "" },
        theme.dim(),
    ));
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

/// The step list: mark, name, state and attempts; the selection in reverse video.
fn steps(frame: &mut Frame<'_>, app: &App, view: &RunView, theme: Theme, area: Rect) {
    let visible: Vec<usize> = App::visible(view).collect();
    let done = visible
        .iter()
        .filter(|&&at| matches!(view.nodes[at].state, NodeState::Done | NodeState::Skipped))
        .count();
    let block = Block::bordered().title(format!(" Steps {done}/{} ", visible.len()));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let selected = app.selected_index();
    let rows = usize::from(inner.height);
    let at = selected
        .and_then(|s| visible.iter().position(|&v| v == s))
        .unwrap_or(0);
    let first = offset(at, rows, visible.len());
    let width = usize::from(inner.width);
    let lines: Vec<Line<'_>> = visible
        .iter()
        .skip(first)
        .take(rows)
        .map(|&index| step_line(&view.nodes[index], Some(index) == selected, width, theme))
        .collect();
    frame.render_widget(Paragraph::new(lines), inner);
}

/// One row of the step list, exactly `width` wide.
pub(super) fn step_line(
    node: &NodeView,
    selected: bool,
    width: usize,
    theme: Theme,
) -> Line<'static> {
    let mut state = node.state.name().to_owned();
    if node.attempts > 1 {
        state.push_str(&format!(" ×{}", node.attempts));
    }
    // The name comes first; the state (also told by the mark) takes what is left, and
    // is left out where fewer than four columns are.
    let room = width.saturating_sub(4);
    let name = text::columns(&node.key);
    let wanted = state.chars().count();
    let (name_width, state_width) = if name + wanted <= room || room >= wanted + 8 {
        (room - wanted, wanted)
    } else {
        let name_width = name.min(room);
        match room - name_width {
            rest if rest >= 4 => (name_width, rest),
            _ => (room, 0),
        }
    };
    let style = theme.state(node.state);
    let mut line = Line::from(vec![
        Span::raw(if selected { "›" } else { " " }),
        Span::styled(glyph(node.state), style),
        Span::raw(" "),
        Span::raw(fit(&node.key, name_width)),
        Span::raw(if state_width > 0 { " " } else { "" }),
        Span::styled(fit(&state, state_width), style),
    ]);
    if selected {
        line = line.patch_style(theme.selected());
    }
    line
}

/// The selected step's output, its end (or as far back as scrolled).
fn output(frame: &mut Frame<'_>, app: &App, theme: Theme, area: Rect) {
    let Some(node) = app.selected_node() else {
        let block = Block::bordered().title(" Output ");
        let inner = block.inner(area);
        frame.render_widget(block, area);
        frame.render_widget(
            Paragraph::new(Span::styled("no step selected", theme.dim())),
            inner,
        );
        return;
    };
    let title = format!(
        " {} · {} · {}{}{} ",
        node.key,
        node.kind,
        node.state.name(),
        if node.attempts > 1 {
            format!(" · attempt {}", node.attempts)
        } else {
            String::new()
        },
        elapsed(node),
    );
    let block = Block::bordered().title(Span::styled(title, theme.state(node.state)));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    // The files it changed below its output, a third of the pane at most.
    let changed = node.files.as_ref().map_or(0, |files| files.changed.len());
    let rows = if changed == 0 {
        0
    } else {
        (changed + 1).min(usize::from(inner.height / 3).max(2))
    };
    let (inner, files_area) = take_bottom(inner, u16::try_from(rows).unwrap_or(u16::MAX));
    let lines = files_lines(node, usize::from(files_area.width), rows, theme);
    frame.render_widget(Paragraph::new(lines), files_area);
    // Its agent's plan above them, a third of what is left at most.
    let rows = plan::rows(&node.plan, inner.height);
    let (inner, plan_area) = take_bottom(inner, u16::try_from(rows).unwrap_or(u16::MAX));
    let lines = plan::lines(&node.plan, usize::from(plan_area.width), rows, theme);
    frame.render_widget(Paragraph::new(lines), plan_area);
    output_lines(frame, app, node, theme, inner);
}

/// The files `node`'s last finished step changed, in at most `rows` lines: a heading, then
/// a line a file (its mark, path and line counts), `… N more` for those that do not fit.
fn files_lines(node: &NodeView, width: usize, rows: usize, theme: Theme) -> Vec<Line<'static>> {
    let Some(changed) = node.files.as_ref().map(|files| &files.changed) else {
        return Vec::new();
    };
    if rows == 0 {
        return Vec::new();
    }
    let heading = match changed.len() {
        0 => "files: none changed".to_owned(),
        1 => "files · 1 changed · D: diff".to_owned(),
        n => format!("files · {n} changed · D: diff"),
    };
    let mut lines = vec![Line::from(Span::styled(clip(&heading, width), theme.dim()))];
    let room = rows - 1;
    let shown = if changed.len() > room {
        room.saturating_sub(1)
    } else {
        changed.len()
    };
    for change in changed.iter().take(shown) {
        let counts = files::counts(change);
        let path_width = width.saturating_sub(3 + counts.chars().count());
        lines.push(Line::from(vec![
            Span::styled(files::mark(change.status), theme.change(change.status)),
            Span::raw(" "),
            Span::raw(files::screen_line(&change.path, path_width)),
            Span::raw(" "),
            Span::styled(counts, theme.dim()),
        ]));
    }
    if changed.len() > shown && lines.len() < rows {
        lines.push(Line::from(Span::styled(
            format!("… {} more (D: diff)", changed.len() - shown),
            theme.dim(),
        )));
    }
    lines
}

/// The lines of `node`'s output that fit `area`, its error on the last row.
fn output_lines(frame: &mut Frame<'_>, app: &App, node: &NodeView, theme: Theme, area: Rect) {
    let (area, error_area) = match &node.error {
        Some(_) => take_bottom(area, 1),
        None => (area, Rect::default()),
    };
    if let Some(error) = &node.error {
        frame.render_widget(
            Paragraph::new(Span::styled(
                clip(&format!("✗ {error}"), usize::from(error_area.width)),
                theme.error(),
            )),
            error_area,
        );
    }
    if node.output.is_empty() {
        let empty = match node.state {
            NodeState::Pending => "not reached yet",
            NodeState::Running => "running…",
            NodeState::Waiting => "waiting for an answer (a)",
            NodeState::Done | NodeState::Failed | NodeState::Skipped => "no output",
        };
        frame.render_widget(Paragraph::new(Span::styled(empty, theme.dim())), area);
        return;
    }
    let rows = usize::from(area.height);
    let (lines, above) = text::output_tail(
        &node.output,
        usize::from(area.width).max(1),
        rows,
        app.scroll,
    );
    let mut shown: Vec<Line<'_>> = lines
        .into_iter()
        .map(|line| Line::from(Span::styled(line.text, theme.tone(line.tone))))
        .collect();
    if above && app.scroll > 0 && !shown.is_empty() {
        shown[0] = Line::from(Span::styled(
            format!("↑ {} lines back (PgDn: forward)", app.scroll),
            theme.dim(),
        ));
    }
    frame.render_widget(Paragraph::new(shown), area);
}

/// The opened step: what it is and did, then its output.
fn opened(frame: &mut Frame<'_>, app: &App, view: &RunView, theme: Theme, area: Rect) {
    let Some(node) = app.selected_node() else {
        return;
    };
    let block = Block::bordered().title(Span::styled(
        format!(" {} ({}) · Esc/⏎ back ", node.key, node.kind),
        theme.state(node.state),
    ));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let mut facts = vec![Span::styled(node.state.name(), theme.state(node.state))];
    facts.push(Span::raw(format!(
        " · attempts {} · finished {}×{}",
        node.attempts,
        node.runs,
        elapsed(node)
    )));
    if let Some(tokens) = text::tokens(&node.usage) {
        facts.push(Span::raw(format!(" · {tokens}")));
    }
    if let Some(cost) = node.cost_usd {
        facts.push(Span::raw(format!(" · {}", text::cost(cost))));
    }
    let mut details = vec![Line::from(facts)];
    let label = node.label.lines().skip(1).collect::<Vec<_>>().join(" · ");
    if !label.is_empty() {
        details.push(Line::from(Span::styled(
            clip(&label, usize::from(inner.width)),
            theme.dim(),
        )));
    }
    if let Some(wait) = view
        .waits
        .iter()
        .find(|wait| Some(&wait.node) == node.node.as_ref())
    {
        details.push(Line::from(Span::styled(
            clip(
                &format!("asks: {} (a: answer)", wait.headed_prompt()),
                usize::from(inner.width),
            ),
            theme.state(NodeState::Waiting),
        )));
    }
    let room = usize::from(inner.height / 3).max(2);
    let changed = node.files.as_ref().map_or(0, |files| files.changed.len());
    details.extend(files_lines(
        node,
        usize::from(inner.width),
        (changed + 1).min(room),
        theme,
    ));
    let rows = plan::rows(&node.plan, inner.height);
    details.extend(plan::lines(
        &node.plan,
        usize::from(inner.width),
        rows,
        theme,
    ));
    let (top, rest) = take_top(inner, u16::try_from(details.len() + 1).unwrap_or(u16::MAX));
    frame.render_widget(Paragraph::new(details), top);
    output_lines(frame, app, node, theme, rest);
}

/// The state's fields, one a line, values as compact JSON.
fn state(frame: &mut Frame<'_>, view: &RunView, theme: Theme, area: Rect) {
    let block = Block::bordered().title(" State ");
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let rows = usize::from(inner.height);
    let width = usize::from(inner.width);
    let total = view.state.len();
    let room = if total > rows {
        rows.saturating_sub(1)
    } else {
        rows
    };
    let mut lines: Vec<Line<'_>> = view
        .state
        .iter()
        .take(room)
        .map(|(field, value)| {
            let value = value.to_string();
            Line::from(vec![
                Span::styled(format!("{field} "), theme.accent()),
                Span::raw(clip(
                    &value,
                    width.saturating_sub(field.chars().count() + 1),
                )),
            ])
        })
        .collect();
    if total > room && rows > 0 {
        lines.push(Line::from(Span::styled(
            format!("… {} more", total - room),
            theme.dim(),
        )));
    }
    if total == 0 {
        lines.push(Line::from(Span::styled("(empty)", theme.dim())));
    }
    frame.render_widget(Paragraph::new(lines), inner);
}

/// The last events, one a line, newest at the bottom.
fn events(frame: &mut Frame<'_>, view: &RunView, theme: Theme, area: Rect) {
    let block = Block::bordered().title(format!(" Events {} ", view.event_count));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let rows = usize::from(inner.height);
    let width = usize::from(inner.width);
    let skip = view.events.len().saturating_sub(rows);
    let lines: Vec<Line<'_>> = view
        .events
        .iter()
        .skip(skip)
        .map(|event| {
            let style = match event {
                crate::runtime::RunEvent::NodeFailed { .. }
                | crate::runtime::RunEvent::RunFailed { .. } => theme.error(),
                _ => ratatui::style::Style::new(),
            };
            Line::from(Span::styled(clip(&text::event_line(event), width), style))
        })
        .collect();
    frame.render_widget(Paragraph::new(lines), inner);
}

/// ` · 1.2s`: the time the step's committed runs took, where known.
fn elapsed(node: &NodeView) -> String {
    node.elapsed_ms.map_or_else(String::new, |ms| {
        format!(
            " · {}",
            crate::cli::progress::text::duration(std::time::Duration::from_millis(ms))
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_row_is_exactly_as_wide_as_asked() {
        let mut node = NodeView::default();
        node.key = "a-rather-long-step-name".to_owned();
        node.state = NodeState::Running;
        node.attempts = 2;
        let theme = Theme { color: false };
        for width in [0, 3, 10, 30] {
            let line = step_line(&node, true, width, theme);
            let text: String = line.spans.iter().map(|s| s.content.as_ref()).collect();
            assert!(text::columns(&text) <= width.max(4), "{width}: {text:?}");
        }
        let line = step_line(&node, false, 37, theme);
        let text: String = line.spans.iter().map(|s| s.content.as_ref()).collect();
        assert_eq!(text, " ▶ a-rather-long-step-name running ×2");
    }
}
