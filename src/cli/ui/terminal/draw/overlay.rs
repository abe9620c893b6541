//! What is drawn over a screen: the keys (`?`), the answer prompt (`a`) and the cancel
//! question (`c`), each in a box centred on the screen, the whole screen when it is small.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph};

use super::Theme;
use crate::cli::ui::terminal::app::{Answering, App, Overlay};
use crate::cli::ui::terminal::text::wrap;

/// The keys, as `?` lists them.
const HELP: &[(&str, &str)] = &[
    ("↑ ↓  k j", "select a step (a run in the runs list)"),
    ("g G  Home End", "first, last"),
    ("⏎", "open the step (details, whole output); again: back"),
    ("PgUp PgDn  u d", "scroll the output back, forward"),
    ("f", "follow: keep the running step selected"),
    ("a", "answer the wait the run is paused at"),
    ("c", "cancel the run (asks first)"),
    ("r", "the runs list, newest first"),
    ("?", "this help"),
    ("q  Esc  Ctrl-C", "quit (Esc: back first)"),
];

pub(super) fn draw(frame: &mut Frame<'_>, app: &App, theme: Theme, area: Rect) {
    match &app.overlay {
        Overlay::None => {}
        Overlay::Help => help(frame, theme, area),
        Overlay::Answer(answering) => answer(frame, answering, theme, area),
        Overlay::ConfirmCancel => {
            let run = app
                .run
                .as_ref()
                .map(ToString::to_string)
                .unwrap_or_default();
            let lines = vec![
                Line::from(format!("Cancel run {run}?")),
                Line::from(Span::styled(
                    "y: cancel it · any other key: keep it",
                    theme.dim(),
                )),
            ];
            boxed(frame, " Cancel ", lines, 50, theme, area);
        }
    }
}

fn help(frame: &mut Frame<'_>, theme: Theme, area: Rect) {
    let lines: Vec<Line<'_>> = HELP
        .iter()
        .map(|(keys, what)| {
            Line::from(vec![
                Span::styled(format!("{keys:<16}"), theme.accent()),
                Span::raw(*what),
            ])
        })
        .chain([Line::from(Span::styled("any key: close", theme.dim()))])
        .collect();
    boxed(frame, " Keys ", lines, 72, theme, area);
}

fn answer(frame: &mut Frame<'_>, answering: &Answering, theme: Theme, area: Rect) {
    let width = usize::from(area.width.min(70).saturating_sub(2)).max(1);
    let mut lines: Vec<Line<'_>> = Vec::new();
    let mut prompt = Vec::new();
    for line in answering.wait.prompt.lines() {
        wrap(line, width, &mut prompt);
    }
    lines.extend(prompt.into_iter().map(Line::from));
    if !answering.choices.is_empty() {
        let mut spans = vec![Span::styled("choices: ", theme.dim())];
        for (at, choice) in answering.choices.iter().enumerate() {
            if at > 0 {
                spans.push(Span::styled(" · ", theme.dim()));
            }
            let style = if *choice == answering.input {
                theme.selected()
            } else {
                theme.accent()
            };
            spans.push(Span::styled(choice.clone(), style));
        }
        spans.push(Span::styled("  (Tab)", theme.dim()));
        lines.push(Line::from(spans));
    } else {
        lines.push(Line::from(Span::styled(
            format!("answer: {}", answering.wait.answer),
            theme.dim(),
        )));
    }
    lines.push(Line::from(vec![
        Span::styled("> ", theme.accent()),
        Span::raw(answering.input.clone()),
        Span::styled("_", theme.selected()),
    ]));
    if let Some(refused) = &answering.refused {
        lines.push(Line::from(Span::styled(refused.clone(), theme.error())));
    }
    lines.push(Line::from(Span::styled("⏎ send · Esc back", theme.dim())));
    boxed(
        frame,
        &format!(" Answer `{}` ", answering.wait.node),
        lines,
        70,
        theme,
        area,
    );
}

/// `lines` in a titled box at most `width` wide, centred in `area` and cleared beneath.
fn boxed(
    frame: &mut Frame<'_>,
    title: &str,
    lines: Vec<Line<'_>>,
    width: u16,
    theme: Theme,
    area: Rect,
) {
    let height = u16::try_from(lines.len() + 2).unwrap_or(u16::MAX);
    let rect = centred(area, width, height);
    frame.render_widget(Clear, rect);
    let block = Block::bordered().title(Span::styled(title.to_owned(), theme.accent()));
    let inner = block.inner(rect);
    frame.render_widget(block, rect);
    frame.render_widget(Paragraph::new(lines), inner);
}

/// A `width`×`height` rectangle centred in `area`, no larger than it.
fn centred(area: Rect, width: u16, height: u16) -> Rect {
    let width = width.min(area.width);
    let height = height.min(area.height);
    Rect {
        x: area.x + (area.width - width) / 2,
        y: area.y + (area.height - height) / 2,
        width,
        height,
    }
}
