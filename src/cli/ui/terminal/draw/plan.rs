//! A step's agent plan in a pane: a heading with how far it is, then a line a todo
//! (`☐` pending, `◐` in progress, `☑` completed, `☒` cancelled). A plan longer than its
//! rows starts at its first item not done, so the work under way stays in sight, and
//! counts what does not fit below.

use ratatui::style::Style;
use ratatui::text::{Line, Span};

use super::Theme;
use crate::cli::ui::terminal::plan;
use crate::cli::ui::terminal::text::clip;
use crate::providers::{Todo, TodoStatus};
use crate::view::NodeState;

/// The rows a plan takes in a pane `height` rows high: all of it, up to a third of the
/// pane (two rows at least); none without a plan.
pub(super) fn rows(todos: &[Todo], height: u16) -> usize {
    if todos.is_empty() {
        return 0;
    }
    (todos.len() + 1).min(usize::from(height / 3).max(2))
}

/// `todos` in at most `rows` lines of `width` columns.
pub(super) fn lines(todos: &[Todo], width: usize, rows: usize, theme: Theme) -> Vec<Line<'static>> {
    if todos.is_empty() || rows == 0 {
        return Vec::new();
    }
    let heading = plan::summary(todos);
    let mut lines = vec![Line::from(Span::styled(clip(&heading, width), theme.dim()))];
    // Items done before the first open one may be left out above (the heading counts
    // them); what does not fit below is counted on the last row.
    let room = rows - 1;
    let first_open = todos
        .iter()
        .position(|todo| todo.status != TodoStatus::Completed)
        .unwrap_or(0);
    let start = first_open.min(todos.len().saturating_sub(room));
    let rest = todos.len() - start;
    let shown = if rest > room {
        room.saturating_sub(1)
    } else {
        rest
    };
    for todo in todos.iter().skip(start).take(shown) {
        lines.push(Line::from(Span::styled(
            clip(&plan::line(todo), width),
            style(todo.status, theme),
        )));
    }
    if rest > shown && lines.len() < rows {
        lines.push(Line::from(Span::styled(
            format!("… {} more", rest - shown),
            theme.dim(),
        )));
    }
    lines
}

/// A todo's style: work under way as a running step, done as a done one, dropped dimmed.
fn style(status: TodoStatus, theme: Theme) -> Style {
    match status {
        TodoStatus::Pending => Style::new(),
        TodoStatus::InProgress => theme.state(NodeState::Running),
        TodoStatus::Completed => theme.state(NodeState::Done),
        TodoStatus::Cancelled => theme.dim(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn todo(content: &str, status: TodoStatus) -> Todo {
        Todo {
            content: content.to_owned(),
            status,
            active_form: None,
        }
    }

    fn text(lines: &[Line<'_>]) -> Vec<String> {
        lines
            .iter()
            .map(|line| line.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    #[test]
    fn a_long_plan_starts_at_the_work_not_done() {
        let theme = Theme { color: false };
        let plan = [
            todo("one", TodoStatus::Completed),
            todo("two", TodoStatus::Completed),
            todo("three", TodoStatus::InProgress),
            todo("four", TodoStatus::Pending),
            todo("five", TodoStatus::Pending),
        ];
        assert_eq!(
            text(&lines(&plan, 40, 4, theme)),
            ["plan 2/5 done · three", "◐ three", "☐ four", "☐ five"]
        );
        assert_eq!(
            text(&lines(&plan, 40, 5, theme)),
            [
                "plan 2/5 done · three",
                "☑ two",
                "◐ three",
                "☐ four",
                "☐ five"
            ]
        );
        assert_eq!(
            text(&lines(&plan, 40, 3, theme)),
            ["plan 2/5 done · three", "◐ three", "… 2 more"]
        );
        assert_eq!(text(&lines(&plan, 40, 6, theme)).len(), 6);
        assert_eq!(
            text(&lines(&plan[..2], 40, 6, theme)),
            ["plan 2/2 done", "☑ one", "☑ two"]
        );
        assert!(lines(&plan, 40, 0, theme).is_empty());
        assert_eq!(text(&lines(&plan, 40, 1, theme)), ["plan 2/5 done · three"]);
        assert_eq!(rows(&plan, 30), 6);
        assert_eq!(rows(&plan, 9), 3);
        assert_eq!(rows(&[], 30), 0);
    }
}
