//! Drawing the terminal view: [`draw`] paints an [`App`] into one ratatui frame. It reads
//! the app and never changes it, does no IO, and only ever looks at what fits: the steps
//! around the selection, the end of the selected step's output, the last events. Below
//! [`COMPACT_WIDTH`]×[`COMPACT_HEIGHT`] cells only a compact step list is drawn; every size
//! down to nothing is drawn without panicking (all arithmetic on cells saturates).

mod compact;
mod overlay;
mod plan;
mod run;
mod runs;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::app::{App, Screen};
use super::files::DiffTone;
use super::text::{Tone, clip};
use crate::view::{NodeState, RunPhase};
use crate::workspace::snapshot::ChangeStatus;

/// Narrower than this, the compact step list is drawn instead of the panes.
pub(super) const COMPACT_WIDTH: u16 = 60;
/// Lower than this, the compact step list is drawn instead of the panes.
pub(super) const COMPACT_HEIGHT: u16 = 15;

/// Paints `app` into `frame`.
pub(super) fn draw(frame: &mut Frame<'_>, app: &App) {
    draw_in(frame, app, frame.area());
}

/// Paints `app` into `area` of `frame` (`atomic chat` shows a run in part of its screen).
pub(super) fn draw_in(frame: &mut Frame<'_>, app: &App, area: Rect) {
    if area.width == 0 || area.height == 0 {
        return;
    }
    let theme = Theme { color: app.color };
    if area.width < COMPACT_WIDTH || area.height < COMPACT_HEIGHT {
        compact::draw(frame, app, theme, area);
    } else {
        match app.screen {
            Screen::Run => run::draw(frame, app, theme, area),
            Screen::Runs => runs::draw(frame, app, theme, area),
        }
    }
    overlay::draw(frame, app, theme, area);
}

/// Styles, all plain when colours are off (`NO_COLOR`): then only bold and reverse video
/// mark things, which are not colours.
#[derive(Clone, Copy, Debug)]
pub(super) struct Theme {
    color: bool,
}

impl Theme {
    fn fg(self, color: Color) -> Style {
        if self.color {
            Style::new().fg(color)
        } else {
            Style::new()
        }
    }

    /// A step's state.
    pub(super) fn state(self, state: NodeState) -> Style {
        match state {
            NodeState::Pending => self.fg(Color::DarkGray),
            NodeState::Running => self.fg(Color::Yellow).add_modifier(Modifier::BOLD),
            NodeState::Done => self.fg(Color::Green),
            NodeState::Failed => self.fg(Color::Red).add_modifier(Modifier::BOLD),
            NodeState::Skipped => self.fg(Color::DarkGray),
            NodeState::Waiting => self.fg(Color::Magenta).add_modifier(Modifier::BOLD),
        }
    }

    /// A run's phase.
    pub(super) fn phase(self, phase: RunPhase) -> Style {
        let style = match phase {
            RunPhase::Running => self.fg(Color::Yellow),
            RunPhase::Paused => self.fg(Color::Magenta),
            RunPhase::Completed => self.fg(Color::Green),
            RunPhase::Failed => self.fg(Color::Red),
            RunPhase::Cancelled => self.fg(Color::DarkGray),
        };
        style.add_modifier(Modifier::BOLD)
    }

    /// A line of output.
    pub(super) fn tone(self, tone: Tone) -> Style {
        match tone {
            Tone::Plain => Style::new(),
            Tone::Thinking => self.fg(Color::DarkGray).add_modifier(Modifier::ITALIC),
            Tone::Call => self.fg(Color::Cyan),
            Tone::Result => self.fg(Color::Blue),
            Tone::Error => self.fg(Color::Red),
        }
    }

    /// A changed file's mark.
    pub(super) fn change(self, status: ChangeStatus) -> Style {
        let style = match status {
            ChangeStatus::Added => self.fg(Color::Green),
            ChangeStatus::Modified => self.fg(Color::Yellow),
            ChangeStatus::Deleted => self.fg(Color::Red),
            ChangeStatus::TypeChanged => self.fg(Color::Blue),
        };
        style.add_modifier(Modifier::BOLD)
    }

    /// A line of a diff.
    pub(super) fn diff(self, tone: DiffTone) -> Style {
        match tone {
            DiffTone::File => Style::new().add_modifier(Modifier::BOLD),
            DiffTone::Hunk => self.fg(Color::Cyan),
            DiffTone::Added => self.fg(Color::Green),
            DiffTone::Removed => self.fg(Color::Red),
            DiffTone::Context => Style::new(),
        }
    }

    /// Secondary text.
    pub(super) fn dim(self) -> Style {
        self.fg(Color::DarkGray)
    }

    /// Titles and keys.
    pub(super) fn accent(self) -> Style {
        self.fg(Color::Cyan).add_modifier(Modifier::BOLD)
    }

    /// Failures.
    pub(super) fn error(self) -> Style {
        self.fg(Color::Red)
    }

    /// The selected row: reverse video, which shows with colours off too.
    pub(super) fn selected(self) -> Style {
        Style::new().add_modifier(Modifier::REVERSED)
    }
}

/// The footer: the app's notice, or the keys of the screen.
fn footer(frame: &mut Frame<'_>, app: &App, theme: Theme, area: Rect, keys: &str) {
    let line = match &app.notice {
        Some(notice) => Line::from(Span::styled(
            clip(&notice.text, usize::from(area.width)),
            if notice.error {
                theme.error()
            } else {
                theme.accent()
            },
        )),
        None => Line::from(Span::styled(keys.to_owned(), theme.dim())),
    };
    frame.render_widget(Paragraph::new(line), area);
}

/// Splits `area` into its first `rows` rows and the rest (as many as there are).
fn take_top(area: Rect, rows: u16) -> (Rect, Rect) {
    let rows = rows.min(area.height);
    (
        Rect {
            height: rows,
            ..area
        },
        Rect {
            y: area.y + rows,
            height: area.height - rows,
            ..area
        },
    )
}

/// Splits `area` into the rest and its last `rows` rows.
fn take_bottom(area: Rect, rows: u16) -> (Rect, Rect) {
    let rows = rows.min(area.height);
    (
        Rect {
            height: area.height - rows,
            ..area
        },
        Rect {
            y: area.y + area.height - rows,
            height: rows,
            ..area
        },
    )
}

/// The first row to show so that `selected` is on screen in a list of `rows` rows:
/// the list scrolls only as far as it must, keeping the selection off the last row.
fn offset(selected: usize, rows: usize, len: usize) -> usize {
    if rows == 0 || len <= rows {
        return 0;
    }
    // One row of room below the selection when the list has rows to spare.
    let margin = usize::from(rows > 2);
    let low = selected
        .saturating_add(1 + margin)
        .saturating_sub(rows)
        .min(selected);
    low.min(len - rows)
}

/// `text` padded or cut to exactly `width` columns.
fn fit(text: &str, width: usize) -> String {
    let clipped = clip(text, width);
    let used = super::text::columns(&clipped);
    let mut out = clipped;
    out.extend(std::iter::repeat_n(' ', width.saturating_sub(used)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_scrolls_only_as_far_as_it_must() {
        assert_eq!(offset(0, 5, 100), 0);
        assert_eq!(offset(3, 5, 100), 0);
        assert_eq!(offset(4, 5, 100), 1);
        assert_eq!(offset(99, 5, 100), 95);
        assert_eq!(offset(7, 0, 100), 0);
        assert_eq!(offset(3, 10, 4), 0);
        // One row, two rows: the selection itself.
        assert_eq!(offset(1, 1, 4), 1);
        assert_eq!(offset(3, 2, 4), 2);
        assert_eq!(offset(2, 2, 4), 1);
    }

    #[test]
    fn splits_never_exceed_the_area() {
        let area = Rect::new(0, 0, 10, 3);
        let (top, rest) = take_top(area, 5);
        assert_eq!((top.height, rest.height), (3, 0));
        let (rest, bottom) = take_bottom(area, 1);
        assert_eq!((rest.height, bottom.y, bottom.height), (2, 2, 1));
        assert_eq!(fit("abc", 5), "abc  ");
        assert_eq!(fit("abcdef", 4), "abc…");
    }
}
