//! What is drawn over a screen: the keys (`?`), the answer prompt (`a`) and the cancel
//! question (`c`), each in a box centred on the screen, the whole screen when it is small;
//! and a step's diff (`D`), which takes the whole screen.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph};

use super::Theme;
use crate::cli::ui::terminal::app::{Answering, App, DiffPane, Overlay};
use crate::cli::ui::terminal::files::screen_line;
use crate::cli::ui::terminal::text::{clip, wrap};

/// The keys, as `?` lists them.
const HELP: &[(&str, &str)] = &[
    ("↑ ↓  k j", "select a step (a run in the runs list)"),
    ("g G  Home End", "first, last"),
    ("⏎", "open the step (details, whole output); again: back"),
    ("PgUp PgDn  u d", "scroll the output back, forward"),
    ("f", "follow: keep the running step selected"),
    ("D", "the diff of the files the step changed"),
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
        Overlay::Diff(pane) => diff(frame, pane, app.diff_rows(), theme, area),
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
    if let Some(header) = &answering.wait.header {
        lines.push(Line::from(Span::styled(
            clip(header, width),
            theme.accent(),
        )));
    }
    let mut prompt = Vec::new();
    for line in answering.wait.prompt.lines() {
        wrap(line, width, &mut prompt);
    }
    lines.extend(prompt.into_iter().map(Line::from));
    let described = answering
        .wait
        .choices
        .iter()
        .any(|choice| choice.label.is_some() || choice.description.is_some());
    if described {
        choice_list(answering, width, theme, &mut lines);
    } else if !answering.choices.is_empty() {
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

/// The choices one per line, the one typed so far highlighted, each label beside its value
/// and its description dimmed under the label.
fn choice_list(answering: &Answering, width: usize, theme: Theme, lines: &mut Vec<Line<'_>>) {
    let choices = &answering.wait.choices;
    let column = choices
        .iter()
        .map(|choice| choice.value.chars().count())
        .max()
        .unwrap_or(0);
    // Descriptions start under the labels: two spaces, the value column, two spaces.
    let indent = column + 4;
    let room = width.saturating_sub(indent).max(1);
    for choice in choices {
        let style = if choice.value == answering.input {
            theme.selected()
        } else {
            theme.accent()
        };
        let mut spans = vec![
            Span::raw("  "),
            Span::styled(format!("{:<column$}", choice.value), style),
        ];
        if let Some(label) = &choice.label {
            spans.push(Span::raw(format!("  {}", clip(label, room))));
        }
        lines.push(Line::from(spans));
        let mut described = Vec::new();
        for line in choice.description.iter().flat_map(|text| text.lines()) {
            wrap(line, room, &mut described);
        }
        lines.extend(described.into_iter().map(|piece| {
            Line::from(vec![
                Span::raw(" ".repeat(indent)),
                Span::styled(piece, theme.dim()),
            ])
        }));
    }
    lines.push(Line::from(Span::styled("Tab: next choice", theme.dim())));
}

/// The diff pane: the patch from its scrolled-to line, coloured line by line, over the
/// whole screen; `rows` is how many lines it shows (what the keys scroll by).
fn diff(frame: &mut Frame<'_>, pane: &DiffPane, rows: usize, theme: Theme, area: Rect) {
    frame.render_widget(Clear, area);
    let (first, len) = match &pane.patch {
        Some(Ok(patch)) => (
            pane.scroll.min(patch.len().saturating_sub(rows)),
            patch.len(),
        ),
        _ => (0, 0),
    };
    let files = if pane.files == 1 { "file" } else { "files" };
    let mut title = format!("{} · {} {files} changed", pane.step, pane.files);
    if len > rows {
        title.push_str(&format!(
            " · lines {}–{} of {len}",
            first + 1,
            (first + rows).min(len)
        ));
    }
    title.push_str(" · ↑↓ PgUp/PgDn scroll · Esc/q close");
    let block = Block::bordered().title(Span::styled(
        format!(
            " {} ",
            clip(&title, usize::from(area.width.saturating_sub(4)))
        ),
        theme.accent(),
    ));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let width = usize::from(inner.width);
    let lines: Vec<Line<'_>> = match &pane.patch {
        None => vec![Line::from(Span::styled("reading the diff…", theme.dim()))],
        Some(Err(error)) => wrap_error(error, width, theme),
        Some(Ok(patch)) if patch.is_empty() => {
            vec![Line::from(Span::styled("no differences", theme.dim()))]
        }
        Some(Ok(patch)) => patch
            .iter()
            .skip(first)
            .take(usize::from(inner.height))
            .map(|line| {
                Line::from(Span::styled(
                    screen_line(&line.text, width),
                    theme.diff(line.tone),
                ))
            })
            .collect(),
    };
    frame.render_widget(Paragraph::new(lines), inner);
}

/// Why a diff could not be read, wrapped to `width`.
fn wrap_error(error: &str, width: usize, theme: Theme) -> Vec<Line<'static>> {
    let mut pieces = Vec::new();
    for line in format!("cannot read the diff: {error}").lines() {
        wrap(line, width, &mut pieces);
    }
    pieces
        .into_iter()
        .map(|piece| Line::from(Span::styled(piece, theme.error())))
        .collect()
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

#[cfg(test)]
mod tests {
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;
    use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

    use crate::cli::ui::terminal::app::App;
    use crate::lower::{Outline, OutlineStep};
    use crate::runtime::{Choice, FilesChanged, RunEvent, StepOutcome};
    use crate::view::RunView;
    use crate::workspace::snapshot::{Change, ChangeStatus};

    fn screen(app: &App, width: u16, height: u16) -> String {
        let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("a terminal");
        terminal
            .draw(|frame| super::super::draw(frame, app))
            .expect("drawn");
        let buffer = terminal.backend().buffer();
        buffer
            .content()
            .chunks(usize::from(width.max(1)))
            .map(|row| row.iter().map(|cell| cell.symbol()).collect::<String>() + "\n")
            .collect()
    }

    #[test]
    fn a_question_shows_its_header_and_each_choices_label_and_description() {
        let outline = Outline {
            steps: vec![OutlineStep {
                key: "pick".to_owned(),
                node: Some("pick".to_owned()),
                kind: "wait",
                label: "pick".to_owned(),
            }],
            edges: Vec::new(),
        };
        let mut view = RunView::new("r1", &outline);
        let choice = |value: &str, label: &str, description: &str| Choice {
            value: value.to_owned(),
            label: Some(label.to_owned()),
            description: Some(description.to_owned()),
        };
        view.apply(&RunEvent::RunPaused {
            run_id: "r1".to_owned(),
            step: 1,
            node: "pick".into(),
            wait: None,
            header: Some("Database".to_owned()),
            prompt: "Which database should the service use?".to_owned(),
            answer: "choice".to_owned(),
            choices: vec![
                choice("pg", "PostgreSQL", "Relational, the team knows it"),
                choice("sqlite", "SQLite", "One file, no server"),
            ],
        });
        let mut app = App::showing(view, true);
        app.key(KeyEvent::new(KeyCode::Char('a'), KeyModifiers::NONE));
        app.key(KeyEvent::new(KeyCode::Tab, KeyModifiers::NONE));
        let shown = screen(&app, 100, 30);
        let rows: Vec<&str> = shown.lines().collect();
        let row = |text: &str| {
            rows.iter()
                .position(|row| row.contains(text))
                .unwrap_or_else(|| panic!("no `{text}` on the screen:\n{shown}"))
        };
        // The header is the title line above the prompt; each description sits under its
        // label, in the label's column.
        assert_eq!(
            row("Database") + 1,
            row("Which database should the service use?")
        );
        assert!(row("Which database") < row("pg      PostgreSQL"), "{shown}");
        assert_eq!(
            row("pg      PostgreSQL") + 1,
            row("Relational, the team knows it")
        );
        assert_eq!(row("sqlite  SQLite") + 1, row("One file, no server"));
        let column = |text: &str| rows[row(text)].find(text).unwrap();
        assert_eq!(
            column("PostgreSQL"),
            column("Relational, the team knows it")
        );
        assert!(
            shown.contains("> pg_"),
            "Tab picked the first choice:\n{shown}"
        );
        // Small screens cut the box but draw it.
        for (width, height) in [(40, 12), (20, 6), (1, 1), (0, 0)] {
            app.height = height;
            screen(&app, width, height);
        }
    }

    #[test]
    fn the_files_and_the_diff_are_drawn_at_every_size() {
        let outline = Outline {
            steps: vec![OutlineStep {
                key: "w".to_owned(),
                node: Some("w".to_owned()),
                kind: "tool",
                label: "w".to_owned(),
            }],
            edges: Vec::new(),
        };
        let mut view = RunView::new("r1", &outline);
        view.apply(&RunEvent::StepFinished {
            step: 1,
            node: "w".into(),
            status: StepOutcome::Completed,
            delta: crate::runtime::state::Delta::default(),
            files: Some(FilesChanged {
                before: "b".to_owned(),
                after: "a".to_owned(),
                changed: vec![Change {
                    path: "out.txt".to_owned(),
                    status: ChangeStatus::Added,
                    added: Some(1),
                    removed: Some(0),
                }],
            }),
            branch: None,
        });
        let mut app = App::showing(view, true);
        let shown = screen(&app, 100, 30);
        assert!(shown.contains("A out.txt +1 −0"), "{shown}");
        app.key(KeyEvent::new(KeyCode::Char('D'), KeyModifiers::SHIFT));
        assert!(screen(&app, 100, 30).contains("reading the diff…"));
        app.take_patch(
            "b",
            "a",
            Ok("diff --git a/out.txt b/out.txt\n--- /dev/null\n+++ b/out.txt\n@@ -0,0 +1 @@\n+hello\n".to_owned()),
        );
        for (width, height) in [(100, 30), (40, 12), (20, 6), (10, 3), (1, 1), (0, 0)] {
            app.height = height;
            let shown = screen(&app, width, height);
            if width >= 40 {
                assert!(shown.contains("+hello"), "{width}×{height}:\n{shown}");
            }
        }
        app.take_patch("b", "a", Err("git failed".to_owned()));
        app.height = 30;
        assert!(screen(&app, 100, 30).contains("cannot read the diff: git failed"));
    }
}
