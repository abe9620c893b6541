//! Painting the chat: the transcript (rendered entries, bottom-anchored, scrolled), the
//! workflow run started from the chat (drawn with `atomic ui`'s view), what is asked of
//! the person, slash-command completions, the message being typed, and the status line.
//! Reads the state and never changes it; every size down to nothing draws without
//! panicking (cell arithmetic saturates). Rendered entries are kept between frames:
//! a streamed reply re-renders only itself.

use std::cell::RefCell;

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};

use super::app::{App, Asked, PERMISSION_CHOICES};
use super::render::Theme;
use super::render::{call_summary, entry_lines};
use super::transcript::{Entry, Status, Transcript};
use crate::cli::ui::TerminalView;
use crate::view::RunView;

/// The most rows the message being typed takes.
const INPUT_ROWS: u16 = 8;
/// The most completion candidates shown.
const COMPLETIONS: usize = 8;

/// Everything one frame shows.
pub(crate) struct Screen<'a> {
    /// The screen state.
    pub(crate) app: &'a App,
    /// The conversation.
    pub(crate) transcript: &'a Transcript,
    /// What is asked of the person.
    pub(crate) asked: Option<&'a Asked>,
    /// The workflow run started from the chat, while it has not ended.
    pub(crate) run: Option<&'a RunView>,
    /// The colours.
    pub(crate) theme: &'a Theme,
    /// Whether colour is on (the run's view draws in its own).
    pub(crate) color: bool,
    /// A spinner's frame, while the agent works.
    pub(crate) tick: usize,
    /// The saved session's id (`atomic chat --resume ID`).
    pub(crate) session: &'a str,
}

/// Rendered entries, kept between frames.
#[derive(Default)]
pub(crate) struct Rendered {
    entries: RefCell<Vec<Option<Drawn>>>,
}

/// One entry as last drawn: the entry, the width and folding it was drawn at, its lines.
struct Drawn {
    entry: Entry,
    width: u16,
    expanded: bool,
    lines: Vec<Line<'static>>,
}

impl Rendered {
    /// The last lines of the transcript at `width` — whole entries, at least `wanted` lines
    /// when there are that many — re-rendering only what changed. Entries above them are
    /// neither compared nor copied: a long conversation costs a frame what the screen shows.
    fn lines(
        &self,
        entries: &[Entry],
        width: u16,
        expanded: bool,
        theme: &Theme,
        wanted: usize,
    ) -> Vec<Line<'static>> {
        let mut cache = self.entries.borrow_mut();
        cache.truncate(entries.len());
        cache.resize_with(entries.len(), || None);
        // From the end up: the first entry shown, its lines counted (a blank line after each).
        let mut first = entries.len();
        let mut count = 0;
        while first > 0 && count < wanted {
            first -= 1;
            let entry = &entries[first];
            let slot = &mut cache[first];
            let fresh = slot.as_ref().is_some_and(|drawn| {
                drawn.width == width && drawn.expanded == expanded && drawn.entry == *entry
            });
            if !fresh {
                *slot = Some(Drawn {
                    entry: entry.clone(),
                    width,
                    expanded,
                    lines: entry_lines(entry, expanded, width, theme),
                });
            }
            count += slot.as_ref().map_or(0, |drawn| drawn.lines.len()) + 1;
        }
        let mut lines = Vec::with_capacity(count);
        for (at, drawn) in cache.iter().enumerate().skip(first) {
            if at > first {
                lines.push(Line::default());
            }
            if let Some(drawn) = drawn {
                lines.extend(drawn.lines.iter().cloned());
            }
        }
        lines
    }
}

/// Paints one frame.
pub(crate) fn draw(frame: &mut Frame<'_>, screen: &Screen<'_>, rendered: &Rendered) {
    let area = frame.area();
    if area.width == 0 || area.height == 0 {
        return;
    }
    let width = area.width;
    let input_rows = u16::try_from(screen.app.input.lines(width, 2).len())
        .unwrap_or(INPUT_ROWS)
        .clamp(1, INPUT_ROWS);
    let asked_rows = screen
        .asked
        .map_or(0, |asked| asked_lines(screen, asked, width).len())
        .min(usize::from(area.height / 2));
    let run_rows = if screen.run.is_some() {
        (area.height * 2 / 5)
            .max(8)
            .min(area.height.saturating_sub(6))
    } else {
        0
    };
    let [transcript, run, asked, flash, rule, input, status] = Layout::vertical([
        Constraint::Min(1),
        Constraint::Length(run_rows),
        Constraint::Length(u16::try_from(asked_rows).unwrap_or(0)),
        Constraint::Length(u16::from(screen.app.flash.is_some())),
        Constraint::Length(1),
        Constraint::Length(input_rows),
        Constraint::Length(1),
    ])
    .areas(area);

    draw_transcript(frame, screen, rendered, transcript);
    if let Some(view) = screen.run {
        TerminalView::new(view.clone(), screen.color).draw_in(frame, run);
    }
    if let Some(asked_now) = screen.asked {
        let lines = asked_lines(screen, asked_now, width);
        frame.render_widget(Paragraph::new(lines), asked);
    }
    if let Some(text) = &screen.app.flash {
        frame.render_widget(
            Paragraph::new(Line::from(Span::styled(text.clone(), screen.theme.notice))),
            flash,
        );
    }
    frame.render_widget(
        Paragraph::new(Line::from(Span::styled(
            "─".repeat(usize::from(width)),
            screen.theme.dim,
        ))),
        rule,
    );
    draw_input(frame, screen, input);
    draw_status(frame, screen, status);
    draw_completions(frame, screen, input);
}

fn draw_transcript(frame: &mut Frame<'_>, screen: &Screen<'_>, rendered: &Rendered, area: Rect) {
    let mut lines = rendered.lines(
        &screen.transcript.entries,
        area.width,
        screen.app.expanded,
        screen.theme,
        usize::from(area.height) + usize::from(screen.app.scroll),
    );
    if lines.is_empty() {
        lines.push(Line::from(Span::styled(
            "Type a message, or / for workflows and commands (/help). Enter sends, Alt+Enter adds a line, Esc interrupts, Ctrl-C twice quits.",
            screen.theme.dim,
        )));
    }
    // Bottom-anchored: the end of the conversation sits just above the input.
    let height = usize::from(area.height);
    let scroll = usize::from(screen.app.scroll).min(lines.len().saturating_sub(height));
    let end = lines.len() - scroll;
    let start = end.saturating_sub(height);
    let shown: Vec<Line<'static>> = lines[start..end].to_vec();
    let top = height.saturating_sub(shown.len());
    let area = Rect {
        y: area.y + u16::try_from(top).unwrap_or(0),
        height: u16::try_from(shown.len()).unwrap_or(area.height),
        ..area
    };
    frame.render_widget(Paragraph::new(shown), area);
}

/// What is asked, as lines: the question (with its header), then its options, the
/// selected one marked; a question of several items shows the item now asked.
fn asked_lines(screen: &Screen<'_>, asked: &Asked, width: u16) -> Vec<Line<'static>> {
    let theme = screen.theme;
    let app = screen.app;
    let mut lines = Vec::new();
    let option = |at: usize, label: String, description: Option<String>, ticked: Option<bool>| {
        let selected = at == app.choice;
        let marker = if selected { "❯ " } else { "  " };
        let tick = match ticked {
            Some(true) => "[x] ",
            Some(false) => "[ ] ",
            None => "",
        };
        let style = if selected {
            theme.selection
        } else {
            theme.text
        };
        let mut spans = vec![Span::styled(
            format!("{marker}{}. {tick}{label}", at + 1),
            style,
        )];
        if let Some(description) = description {
            spans.push(Span::styled(format!("  {description}"), theme.dim));
        }
        Line::from(spans)
    };
    match asked {
        Asked::Permission(ask) => {
            lines.push(Line::from(vec![
                Span::styled("⚠ Permission  ", theme.heading),
                Span::styled(
                    clip(&format!("The agent asks to use {}", ask.describe()), width),
                    theme.text,
                ),
            ]));
            for (at, (_, label)) in PERMISSION_CHOICES.iter().enumerate() {
                lines.push(option(at, (*label).to_owned(), None, None));
            }
            lines.push(Line::from(Span::styled(
                "↑↓ or 1-3 then Enter · Esc denies",
                theme.dim,
            )));
        }
        Asked::Question(question) | Asked::Wait(super::transcript::RunWait { question, .. }) => {
            let Some(item) = question.items.get(app.item) else {
                return lines;
            };
            let from = match asked {
                Asked::Wait(wait) => format!("workflow run {} asks", wait.run_id),
                _ => "The agent asks".to_owned(),
            };
            let mut head = vec![Span::styled("? ", theme.heading)];
            if let Some(header) = &item.header {
                head.push(Span::styled(format!("[{header}] "), theme.heading));
            }
            head.push(Span::styled(from, theme.dim));
            if question.items.len() > 1 {
                head.push(Span::styled(
                    format!("  ({} of {})", app.item + 1, question.items.len()),
                    theme.dim,
                ));
            }
            lines.push(Line::from(head));
            for text in item.text.lines() {
                lines.push(Line::from(Span::styled(clip(text, width), theme.text)));
            }
            for (at, choice) in item.options.iter().enumerate() {
                let ticked = item.multi.then(|| app.ticked.contains(&at));
                lines.push(option(
                    at,
                    choice.label.clone(),
                    choice.description.clone(),
                    ticked,
                ));
            }
            let help = match (item.options.is_empty(), item.multi) {
                (true, _) => "type the answer, then Enter",
                (false, true) => "↑↓ to move · Space ticks · Enter answers · or type an answer",
                (false, false) => "↑↓ or a number, then Enter · or type an answer",
            };
            lines.push(Line::from(Span::styled(help, theme.dim)));
        }
    }
    lines
}

fn draw_input(frame: &mut Frame<'_>, screen: &Screen<'_>, area: Rect) {
    let input = &screen.app.input;
    let rows = input.lines(area.width, 2);
    let (cursor_row, cursor_column) = input.cursor_position(area.width, 2);
    // The rows around the cursor, when the message is longer than the box.
    let first = usize::from(cursor_row).saturating_sub(usize::from(area.height).saturating_sub(1));
    let lines: Vec<Line<'static>> = rows
        .iter()
        .enumerate()
        .skip(first)
        .take(usize::from(area.height))
        .map(|(at, row)| {
            let prompt = if at == 0 { "› " } else { "  " };
            Line::from(vec![
                Span::styled(prompt, screen.theme.user),
                Span::styled(row.clone(), screen.theme.text),
            ])
        })
        .collect();
    frame.render_widget(Paragraph::new(lines), area);
    let row = cursor_row.saturating_sub(u16::try_from(first).unwrap_or(0));
    if row < area.height && cursor_column < area.width {
        frame.set_cursor_position((area.x + cursor_column, area.y + row));
    }
}

fn draw_completions(frame: &mut Frame<'_>, screen: &Screen<'_>, input: Rect) {
    let Some(completions) = &screen.app.completions else {
        return;
    };
    let theme = screen.theme;
    let mut lines: Vec<Line<'static>> = Vec::new();
    let selected = screen.app.completion;
    let first = selected.saturating_sub(COMPLETIONS - 1);
    for (at, candidate) in completions
        .candidates
        .iter()
        .enumerate()
        .skip(first)
        .take(COMPLETIONS)
    {
        let style = if at == selected {
            theme.selection
        } else {
            theme.text
        };
        let mut spans = vec![Span::styled(format!(" {} ", candidate.label), style)];
        if let Some(description) = &candidate.description {
            spans.push(Span::styled(format!(" {description}"), theme.dim));
        }
        lines.push(Line::from(spans));
    }
    if let Some(hint) = &completions.hint {
        lines.push(Line::from(Span::styled(format!(" {hint}"), theme.dim)));
    }
    if lines.is_empty() {
        return;
    }
    let height = u16::try_from(lines.len()).unwrap_or(0).min(input.y);
    let area = Rect {
        x: input.x,
        y: input.y.saturating_sub(height + 1),
        width: input.width,
        height,
    };
    frame.render_widget(Clear, area);
    frame.render_widget(Paragraph::new(lines).style(theme.status), area);
}

fn draw_status(frame: &mut Frame<'_>, screen: &Screen<'_>, area: Rect) {
    let theme = screen.theme;
    let transcript = screen.transcript;
    let mut spans = Vec::new();
    if transcript.busy {
        let spinner = super::render::entry::SPINNER;
        spans.push(Span::styled(
            format!(
                "{} working · Esc interrupts ",
                spinner[screen.tick % spinner.len()]
            ),
            theme.notice,
        ));
    }
    spans.push(Span::styled(status_text(&transcript.status), theme.status));
    spans.push(Span::styled(
        format!(" · session {}", screen.session),
        theme.dim,
    ));
    if let Some(tool) = transcript
        .entries
        .iter()
        .rev()
        .find_map(|entry| match entry {
            Entry::Tool {
                name,
                input,
                result: None,
                ..
            } if transcript.busy => Some(call_summary(name, input)),
            _ => None,
        })
    {
        spans.push(Span::styled(format!(" · {tool}"), theme.dim));
    }
    let line = Line::from(spans);
    frame.render_widget(
        Paragraph::new(line).style(theme.status.add_modifier(Modifier::empty())),
        area,
    );
}

/// `claude-code · sonnet · 12.3k in / 1.2k out · $0.0123 · context 45%`.
pub(crate) fn status_text(status: &Status) -> String {
    let mut parts = vec![status.adapter.clone()];
    if let Some(model) = &status.model {
        parts.push(model.clone());
    }
    let usage = status.usage;
    let input = usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens;
    if input + usage.output_tokens > 0 {
        parts.push(format!(
            "{} in / {} out",
            tokens(input),
            tokens(usage.output_tokens)
        ));
    }
    if let Some(cost) = status.cost_usd {
        parts.push(format!("${cost:.4}"));
    }
    if let Some(context) = status.context {
        parts.push(format!("context {:.0}%", context * 100.0));
    }
    parts.join(" · ")
}

fn tokens(count: u64) -> String {
    #[allow(clippy::cast_precision_loss)]
    match count {
        0..1_000 => count.to_string(),
        1_000..1_000_000 => format!("{:.1}k", count as f64 / 1_000.0),
        _ => format!("{:.1}M", count as f64 / 1_000_000.0),
    }
}

/// `text` cut to `width` display columns.
fn clip(text: &str, width: u16) -> String {
    let mut used = 0;
    text.chars()
        .take_while(|c| {
            used += unicode_width::UnicodeWidthChar::width(*c).unwrap_or(0);
            used <= usize::from(width)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;

    use super::*;
    use crate::cli::chat::transcript::{Question, QuestionItem, QuestionOption};

    fn transcript() -> Transcript {
        let mut transcript = Transcript::default();
        transcript.push(Entry::User {
            text: "Fix the greeting".into(),
            told: None,
        });
        transcript.push(Entry::Assistant {
            text: "## Plan\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```rust\nfn main() {}\n```".into(),
            thinking: "first\nsecond".into(),
            done: true,
        });
        transcript.push(Entry::Tool {
            id: "t".into(),
            name: "Edit".into(),
            input: serde_json::json!({"file_path": "a.txt", "old_string": "wrld", "new_string": "world"}),
            result: None,
            is_error: false,
        });
        transcript.busy = true;
        transcript
    }

    #[test]
    fn every_size_down_to_nothing_draws_without_panicking() {
        let transcript = transcript();
        let asked = Asked::Question(Question {
            items: vec![QuestionItem {
                header: Some("Tone".into()),
                text: "Which tone?".into(),
                options: vec![QuestionOption {
                    label: "Friendly".into(),
                    description: Some("Warm".into()),
                }],
                multi: false,
            }],
        });
        let mut app = App::default();
        app.input.insert("a message typed\nover two lines");
        app.flash = Some("Press Ctrl-C again to quit".into());
        for theme in [Theme::dark(), Theme::plain()] {
            for (width, height) in [
                (0, 0),
                (1, 1),
                (3, 2),
                (10, 4),
                (20, 6),
                (40, 12),
                (120, 40),
            ] {
                let screen = Screen {
                    app: &app,
                    transcript: &transcript,
                    asked: Some(&asked),
                    run: None,
                    theme: &theme,
                    color: true,
                    tick: 3,
                    session: "01abc",
                };
                let mut terminal =
                    Terminal::new(TestBackend::new(width, height)).expect("a test terminal");
                terminal
                    .draw(|frame| draw(frame, &screen, &Rendered::default()))
                    .expect("drawn");
            }
        }
    }

    #[test]
    fn only_the_entries_that_fill_the_screen_are_laid_out() {
        let entries: Vec<Entry> = (0..1_000)
            .map(|n| Entry::Notice {
                text: format!("notice {n}"),
                error: false,
            })
            .collect();
        let rendered = Rendered::default();
        let lines = rendered.lines(&entries, 40, false, &Theme::plain(), 6);
        let text: Vec<String> = lines.iter().map(ToString::to_string).collect();
        assert_eq!(
            text,
            ["notice 997", "", "notice 998", "", "notice 999"],
            "the last entries, whole, with a blank line between"
        );
        let drawn = rendered
            .entries
            .borrow()
            .iter()
            .filter(|d| d.is_some())
            .count();
        assert_eq!(drawn, 3, "entries above the screen are not rendered");
    }

    #[test]
    fn the_status_line_counts_tokens_and_cost() {
        let status = Status {
            adapter: "claude-code".into(),
            model: Some("sonnet".into()),
            usage: crate::providers::Usage {
                input_tokens: 12_000,
                output_tokens: 340,
                cache_read_tokens: 300,
                cache_write_tokens: 0,
            },
            cost_usd: Some(0.0123),
            context: Some(0.45),
        };
        assert_eq!(
            status_text(&status),
            "claude-code · sonnet · 12.3k in / 340 out · $0.0123 · context 45%"
        );
    }
}
