//! Each entry of the transcript as lines: the person's message after `›`, the agent's
//! reply as markdown (its thinking folded to one line), a tool call on one line with its
//! diff under it when it edits files, a permission, a question, the plan as a checklist, a
//! workflow run, a notice. `expanded` unfolds thinking, a tool's input and result, and the
//! whole of a diff.

use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use serde_json::Value;

use super::diff::{diff_lines, edit_diffs};
use super::markdown::markdown;
use super::summary::{call_summary, input_summary};
use super::theme::Theme;
use super::wrap::{Styled, clip, columns, prefixed};
use crate::cli::chat::transcript::{Entry, Question};
use crate::providers::{PermissionAnswer, Todo, TodoStatus};

/// The frames of a running tool's spinner, one per tick.
pub(crate) const SPINNER: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
/// Diff lines shown under a collapsed edit.
pub(crate) const COLLAPSED_DIFF_LINES: usize = 20;
/// Lines of a tool's input shown expanded.
const INPUT_LINES: usize = 30;

/// `entry` as lines at most `width` columns wide (a running tool's spinner at its first
/// frame).
pub(crate) fn entry_lines(
    entry: &Entry,
    expanded: bool,
    width: u16,
    theme: &Theme,
) -> Vec<Line<'static>> {
    entry_lines_at(entry, expanded, width, theme, 0)
}

/// [`entry_lines`] with a running tool's spinner at frame `tick`.
pub(crate) fn entry_lines_at(
    entry: &Entry,
    expanded: bool,
    width: u16,
    theme: &Theme,
    tick: usize,
) -> Vec<Line<'static>> {
    let w = usize::from(width).max(1);
    match entry {
        Entry::User { text, .. } => wrapped(text, theme.text, w, "› ", theme.user),
        Entry::Assistant { text, thinking, .. } => {
            let mut out = Vec::new();
            let thinking = thinking.trim();
            if !thinking.is_empty() {
                if expanded {
                    out.push(Line::from(Span::styled("▾ thinking", theme.dim)));
                    let style = theme.dim.add_modifier(Modifier::ITALIC);
                    out.extend(wrapped(thinking, style, w, "  ", theme.dim));
                } else {
                    let n = thinking.lines().count();
                    let label = format!("▸ thinking ({n} line{})", if n == 1 { "" } else { "s" });
                    out.push(Line::from(Span::styled(clip(&label, w), theme.dim)));
                }
            }
            out.extend(markdown(text, width, theme));
            out
        }
        Entry::Tool {
            name,
            input,
            result,
            is_error,
            ..
        } => tool(
            name,
            input,
            result.as_deref(),
            *is_error,
            expanded,
            w,
            theme,
            tick,
        ),
        Entry::Permission { ask, answer } => {
            let mut text = Styled::default();
            text.push("asked to use ", theme.text);
            text.push(&call_summary(&ask.tool, &ask.input), theme.strong);
            let (said, style) = match answer {
                None => ("waiting for an answer", theme.warning),
                Some(PermissionAnswer::Allow) => ("allowed once", theme.tool_ok),
                Some(PermissionAnswer::AllowRun) => ("allowed for the session", theme.tool_ok),
                Some(PermissionAnswer::Deny) => ("denied", theme.error),
            };
            text.push(" · ", theme.dim);
            text.push(said, style);
            text.lines(
                w,
                &[Span::styled("⚠ ", theme.warning)],
                &[Span::raw("  ")],
                true,
            )
        }
        Entry::Question { question, answers } => question_lines(question, answers, w, theme),
        Entry::Plan { todos } => plan(todos, w, theme),
        Entry::Run {
            run_id,
            workflow,
            status,
            outcome,
        } => {
            let (glyph, style) = match status.as_str() {
                "running" => ("▶", theme.tool_running),
                "waiting" | "paused" => ("?", theme.warning),
                "completed" => ("✓", theme.tool_ok),
                "failed" => ("✗", theme.error),
                _ => ("·", theme.dim),
            };
            let mut text = Styled::default();
            text.push("workflow ", theme.text);
            text.push(workflow, theme.strong);
            text.push("  ", theme.text);
            text.push(status, style);
            text.push(&format!("  {run_id}"), theme.dim);
            let first = [Span::styled(format!("{glyph} "), style)];
            let mut out = text.lines(w, &first, &[Span::raw("  ")], true);
            if let Some(outcome) = outcome {
                let style = if status == "failed" {
                    theme.error
                } else {
                    theme.text
                };
                out.extend(wrapped(outcome.trim_end(), style, w, "  ⎿ ", theme.dim));
            }
            out
        }
        Entry::Notice { text, error } => {
            if *error {
                wrapped(text, theme.error, w, "✗ ", theme.error)
            } else {
                wrapped(text, theme.notice, w, "", theme.notice)
            }
        }
    }
}

/// `text` in `style` wrapped behind `marker` (in `marker_style`), later lines indented as
/// wide as the marker.
fn wrapped(
    text: &str,
    style: Style,
    width: usize,
    marker: &str,
    marker_style: Style,
) -> Vec<Line<'static>> {
    let mut styled = Styled::default();
    styled.push(text, style);
    let first = [Span::styled(marker.to_owned(), marker_style)];
    let rest = [Span::raw(" ".repeat(columns(marker)))];
    styled.lines(width, &first, &rest, true)
}

#[allow(
    clippy::too_many_arguments,
    reason = "one entry's fields and how to draw them"
)]
fn tool(
    name: &str,
    input: &Value,
    result: Option<&str>,
    is_error: bool,
    expanded: bool,
    width: usize,
    theme: &Theme,
    tick: usize,
) -> Vec<Line<'static>> {
    let mut out = vec![tool_line(name, input, result, is_error, width, theme, tick)];
    let indent = [Span::raw("  ")];
    let inner = u16::try_from(width.saturating_sub(2).max(1)).unwrap_or(u16::MAX);
    let edits = edit_diffs(name, input);
    if !edits.is_empty() {
        let mut diff: Vec<Line<'static>> = edits
            .iter()
            .flat_map(|edit| diff_lines(edit, inner, theme))
            .collect();
        if !expanded && diff.len() > COLLAPSED_DIFF_LINES {
            let more = diff.len() - COLLAPSED_DIFF_LINES;
            diff.truncate(COLLAPSED_DIFF_LINES);
            diff.push(Line::from(Span::styled(
                clip(&format!("… {more} more lines"), usize::from(inner)),
                theme.dim,
            )));
        }
        out.extend(diff.into_iter().map(|line| prefixed(&indent, line)));
    } else if expanded {
        out.extend(input_lines(input, width, theme));
    }
    if expanded && let Some(result) = result.filter(|result| !result.trim().is_empty()) {
        let style = if is_error {
            theme.tool_error
        } else {
            theme.text
        };
        out.extend(wrapped(result.trim_end(), style, width, "  ⎿ ", theme.dim));
    }
    out
}

/// `● Name(what)  ✓ result`, cut to fit one line: the input and the result share the room
/// (three fifths to the input), each keeping what it needs of its share when the other
/// needs less.
fn tool_line(
    name: &str,
    input: &Value,
    result: Option<&str>,
    is_error: bool,
    width: usize,
    theme: &Theme,
    tick: usize,
) -> Line<'static> {
    let (style, mark) = match (result, is_error) {
        (None, _) => (theme.tool_running, SPINNER[tick % SPINNER.len()]),
        (Some(_), false) => (theme.tool_ok, "✓"),
        // Not a failure: the agent stopped to ask, and goes on once answered.
        (Some(said), true) if said == crate::providers::PAUSED_FOR_PERMISSION => {
            (theme.warning, "⏸")
        }
        (Some(_), true) => (theme.tool_error, "✗"),
    };
    let what = input_summary(name, input);
    let name = clip(name, (width / 2).max(1));
    let said = clip(result.unwrap_or_default(), usize::MAX);
    let fixed = 2 + columns(&name) + if what.is_empty() { 0 } else { 2 } + 3;
    let room = width.saturating_sub(fixed);
    let (what_w, said_w) = (
        columns(&what),
        columns(&said) + usize::from(!said.is_empty()),
    );
    let half = room * 3 / 5;
    let (what_room, said_room) = if what_w + said_w <= room {
        (what_w, said_w)
    } else if what_w <= half {
        (what_w, room - what_w)
    } else if said_w <= room - half {
        (room - said_w, said_w)
    } else {
        (half, room - half)
    };
    let mut spans = vec![
        Span::styled("● ", style),
        Span::styled(name, theme.tool_name),
    ];
    if !what.is_empty() {
        spans.push(Span::styled(
            format!("({})", clip(&what, what_room)),
            theme.text,
        ));
    }
    spans.push(Span::styled(format!("  {mark}"), style));
    if said_room > 1 {
        let said_style = if is_error {
            theme.tool_error
        } else {
            theme.dim
        };
        spans.push(Span::styled(
            format!(" {}", clip(&said, said_room - 1)),
            said_style,
        ));
    }
    fit(spans, width)
}

/// `spans` cut to `width` columns, with `…` where cut.
fn fit(spans: Vec<Span<'static>>, width: usize) -> Line<'static> {
    let mut out = Vec::with_capacity(spans.len());
    let mut used = 0;
    for span in spans {
        let w = columns(&span.content);
        if used + w <= width {
            used += w;
            out.push(span);
            continue;
        }
        let cut = clip(&span.content, width - used);
        if !cut.is_empty() {
            out.push(Span::styled(cut, span.style));
        }
        break;
    }
    Line::from(out)
}

/// A tool's input, expanded: a command as `$ command`, else its JSON, at most
/// [`INPUT_LINES`] lines.
fn input_lines(input: &Value, width: usize, theme: &Theme) -> Vec<Line<'static>> {
    let text = match input {
        Value::Null => return Vec::new(),
        Value::Object(map) if map.is_empty() => return Vec::new(),
        _ => match input.get("command").and_then(Value::as_str) {
            Some(command) => format!("$ {command}"),
            None => serde_json::to_string_pretty(input).unwrap_or_default(),
        },
    };
    let mut styled = Styled::default();
    styled.push(&text, theme.dim);
    let indent = [Span::raw("  ")];
    let mut lines = styled.lines(width, &indent, &indent, false);
    if lines.len() > INPUT_LINES {
        let more = lines.len() - INPUT_LINES + 1;
        lines.truncate(INPUT_LINES - 1);
        let note = clip(&format!("… {more} more lines"), width.saturating_sub(2));
        lines.push(Line::from(vec![
            Span::raw("  "),
            Span::styled(note, theme.dim),
        ]));
    }
    lines
}

fn question_lines(
    question: &Question,
    answers: &[String],
    width: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    for (n, item) in question.items.iter().enumerate() {
        let mut text = Styled::default();
        if let Some(header) = &item.header {
            text.push(header, theme.strong);
            text.push("\n", theme.text);
        }
        text.push(&item.text, theme.text);
        if item.multi {
            text.push(" (any of them)", theme.dim);
        }
        let first = [Span::styled("? ", theme.warning)];
        out.extend(text.lines(width, &first, &[Span::raw("  ")], true));
        // Asked now: its options are offered once, where it is answered (under the
        // conversation); once answered, they stay here with the answer.
        if answers.is_empty() {
            out.extend(wrapped(
                "waiting for your answer",
                theme.dim,
                width,
                "  ",
                theme.dim,
            ));
            continue;
        }
        for (k, option) in item.options.iter().enumerate() {
            let marker = format!("  {}. ", k + 1);
            let mut text = Styled::default();
            text.push(&option.label, theme.strong);
            if let Some(description) = &option.description {
                text.push(" — ", theme.dim);
                text.push(description, theme.dim);
            }
            let rest = [Span::raw(" ".repeat(columns(&marker)))];
            out.extend(text.lines(width, &[Span::styled(marker, theme.bullet)], &rest, true));
        }
        if let Some(answer) = answers.get(n) {
            out.extend(wrapped(answer, theme.text, width, "  → ", theme.tool_ok));
        }
    }
    out
}

fn plan(todos: &[Todo], width: usize, theme: &Theme) -> Vec<Line<'static>> {
    let done = todos
        .iter()
        .filter(|todo| todo.status == TodoStatus::Completed)
        .count();
    let mut out = vec![fit(
        vec![
            Span::styled("Plan", theme.strong),
            Span::styled(format!("  {done}/{} done", todos.len()), theme.dim),
        ],
        width,
    )];
    for todo in todos {
        let (mark, style, text) = match todo.status {
            TodoStatus::Pending => ("☐ ", theme.todo_pending, &todo.content),
            TodoStatus::InProgress => (
                "◐ ",
                theme.todo_active,
                todo.active_form.as_ref().unwrap_or(&todo.content),
            ),
            TodoStatus::Completed => ("☑ ", theme.todo_done, &todo.content),
            TodoStatus::Cancelled => ("☒ ", theme.todo_cancelled, &todo.content),
        };
        out.extend(wrapped(text, style, width, mark, style));
    }
    out
}

#[cfg(test)]
#[path = "entry_tests.rs"]
mod tests;
