//! Text for the terminal view's panes, independent of how it is drawn: a step's output as
//! wrapped lines (only as many as the pane shows, taken from the end), one line per event,
//! and the small numbers (tokens, cost, durations) every pane prints the same way.

use serde_json::Value;
use unicode_width::UnicodeWidthChar;

use crate::providers::{AgentEvent, Usage};
use crate::runtime::RunEvent;
use crate::runtime::executor::OutputStream;
use crate::view::{NodeState, OutputItem};

/// What a line of output is, for its style.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Tone {
    /// Reply text, stdout.
    Plain,
    /// Visible thinking.
    Thinking,
    /// A tool call.
    Call,
    /// A tool's result.
    Result,
    /// A failed tool, stderr.
    Error,
}

/// One screen line of a step's output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct OutputLine {
    /// The text, at most the pane's width wide.
    pub(super) text: String,
    /// What it shows.
    pub(super) tone: Tone,
}

/// The lines of `output` wrapped to `width`, the last `rows` of them after skipping `skip`
/// lines from the end (scrolled back). Only the items that reach the window are wrapped, so
/// the cost follows the pane's size, not the output's. Returns the lines and whether the
/// output goes on above them.
pub(super) fn output_tail(
    output: &[OutputItem],
    width: usize,
    rows: usize,
    skip: usize,
) -> (Vec<OutputLine>, bool) {
    let want = rows.saturating_add(skip);
    // Collected backwards: the last line first.
    let mut lines: Vec<OutputLine> = Vec::new();
    let mut unread = output.len();
    let mut wrapped = Vec::new();
    while lines.len() < want && unread > 0 {
        unread -= 1;
        let (tone, text) = item_text(&output[unread]);
        wrapped.clear();
        for line in text.lines() {
            wrap(line, width, &mut wrapped);
        }
        if wrapped.is_empty() {
            wrapped.push(String::new());
        }
        lines.extend(
            wrapped
                .drain(..)
                .rev()
                .map(|text| OutputLine { text, tone }),
        );
    }
    // Scrolled back past the top: the first lines.
    let skip = skip.min(lines.len().saturating_sub(rows));
    let above = unread > 0 || lines.len() > skip + rows;
    let mut shown: Vec<OutputLine> = lines.into_iter().skip(skip).take(rows).collect();
    shown.reverse();
    (shown, above)
}

/// An output item as text with its tone.
fn item_text(item: &OutputItem) -> (Tone, String) {
    match item {
        OutputItem::Text { text } => (Tone::Plain, text.clone()),
        OutputItem::Thinking { text } => (Tone::Thinking, format!("(thinking) {text}")),
        OutputItem::ToolCall { name, input } => (Tone::Call, format!("→ {name} {}", brief(input))),
        OutputItem::ToolResult {
            name,
            summary,
            is_error,
        } => {
            if *is_error {
                (Tone::Error, format!("✗ {name}: {summary}"))
            } else {
                (Tone::Result, format!("← {name}: {summary}"))
            }
        }
        OutputItem::Line { stream, line } => match stream {
            OutputStream::Stderr => (Tone::Error, line.clone()),
            OutputStream::Stdout => (Tone::Plain, line.clone()),
        },
    }
}

/// A tool's input on one line, at most 300 characters.
fn brief(input: &Value) -> String {
    let text = match input {
        Value::Object(map) if map.is_empty() => String::new(),
        Value::Null => String::new(),
        other => other.to_string(),
    };
    clip(&text, 300)
}

/// Breaks `line` into pieces at most `width` columns wide (tabs as one space), at spaces
/// where it can.
pub(super) fn wrap(line: &str, width: usize, out: &mut Vec<String>) {
    let width = width.max(1);
    let mut current = String::new();
    let mut used = 0;
    // Where the last space in `current` is (byte, columns after it).
    let mut space: Option<usize> = None;
    for ch in line.chars() {
        let ch = if ch == '\t' || ch.is_control() {
            ' '
        } else {
            ch
        };
        let w = ch.width().unwrap_or(0);
        if used + w > width && !current.is_empty() {
            match space {
                Some(at) if at > 0 => {
                    let rest = current.split_off(at + 1);
                    current.truncate(at);
                    out.push(std::mem::replace(&mut current, rest));
                    used = columns(&current);
                }
                _ => {
                    out.push(std::mem::take(&mut current));
                    used = 0;
                }
            }
            space = None;
        }
        if ch == ' ' {
            space = Some(current.len());
        }
        current.push(ch);
        used += w;
    }
    out.push(current);
}

/// Display columns of `text`.
pub(super) fn columns(text: &str) -> usize {
    text.chars().map(|ch| ch.width().unwrap_or(0)).sum()
}

/// `text` on one line (whitespace runs folded), cut to `max` columns with `…`.
pub(super) fn clip(text: &str, max: usize) -> String {
    let folded = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if columns(&folded) <= max {
        return folded;
    }
    let mut out = String::new();
    let mut used = 0;
    for ch in folded.chars() {
        let w = ch.width().unwrap_or(0);
        if used + w + 1 > max {
            break;
        }
        out.push(ch);
        used += w;
    }
    if max > 0 {
        out.push('…');
    }
    out
}

/// The mark a step's state is shown with.
pub(super) fn glyph(state: NodeState) -> &'static str {
    match state {
        NodeState::Pending => "·",
        NodeState::Running => "▶",
        NodeState::Done => "✓",
        NodeState::Failed => "✗",
        NodeState::Skipped => "↷",
        NodeState::Waiting => "?",
    }
}

/// `1.2k in · 340 out`, or nothing when no tokens were used.
pub(super) fn tokens(usage: &Usage) -> Option<String> {
    let input = usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens;
    (input + usage.output_tokens > 0)
        .then(|| format!("{} in · {} out", count(input), count(usage.output_tokens)))
}

/// `950`, `12.3k`, `4.1M`.
pub(super) fn count(n: u64) -> String {
    #[allow(clippy::cast_precision_loss, reason = "one decimal is shown")]
    let x = n as f64;
    if n < 1_000 {
        n.to_string()
    } else if n < 1_000_000 {
        format!("{:.1}k", x / 1e3)
    } else {
        format!("{:.1}M", x / 1e6)
    }
}

/// `$0.0123`, `$1.25`.
pub(super) fn cost(usd: f64) -> String {
    if usd < 0.1 {
        format!("${usd:.4}")
    } else {
        format!("${usd:.2}")
    }
}

/// One event as one line for the events pane (agent text folded, long values cut).
pub(super) fn event_line(event: &RunEvent) -> String {
    match event {
        RunEvent::RunStarted {
            resumed, from_step, ..
        } => {
            if *resumed {
                format!("run resumed after step {from_step}")
            } else {
                "run started".to_owned()
            }
        }
        RunEvent::StepStarted {
            step,
            node,
            kind,
            attempt,
            ..
        } => {
            if *attempt > 1 {
                format!("[{step}] ▶ {node} ({kind}) attempt {attempt}")
            } else {
                format!("[{step}] ▶ {node} ({kind})")
            }
        }
        RunEvent::StepFinished {
            step,
            node,
            status,
            delta,
            ..
        } => {
            let fields: Vec<&str> = delta.fields.iter().map(|f| &*f.field).collect();
            if fields.is_empty() {
                format!("[{step}] ✓ {node} {}", status.as_str())
            } else {
                format!(
                    "[{step}] ✓ {node} {} → {}",
                    status.as_str(),
                    fields.join(", ")
                )
            }
        }
        RunEvent::Values { step, .. } => format!("[{step}] values"),
        RunEvent::Route { node, to } => format!("{node} routes to {to}"),
        RunEvent::Retrying {
            node,
            attempt,
            delay_ms,
            message,
            ..
        } => format!(
            "{node} retries (attempt {attempt}) in {}: {message}",
            crate::cli::progress::duration_ms(*delay_ms)
        ),
        RunEvent::NodeFailed {
            node,
            class,
            message,
            ..
        } => format!("✗ {node} failed ({class}): {message}"),
        RunEvent::Agent { node, event } => format!("{node} · {}", agent_line(event)),
        RunEvent::ContextWarning { node, fraction, .. } => {
            format!("{node} · context {:.0}% full", fraction * 100.0)
        }
        RunEvent::ContextAction { node, action, .. } => format!("{node} · context {action}"),
        RunEvent::ToolOutput { node, stream, line } => format!("{node} {stream}: {line}"),
        RunEvent::WaitAutoApprove {
            node,
            after_ms,
            answer,
        } => format!(
            "{node} answers `{answer}` itself in {}",
            crate::cli::progress::duration_ms(*after_ms)
        ),
        RunEvent::PermissionAnswered {
            node, tool, answer, ..
        } => format!("{node} · {tool}: {answer}"),
        RunEvent::HookFailed { event, message, .. } => format!("hook {event} failed: {message}"),
        RunEvent::Custom { node, name, .. } => format!("{node} · {name}"),
        RunEvent::Debug {
            node, elapsed_us, ..
        } => format!(
            "{node} took {}",
            crate::cli::progress::duration_ms(elapsed_us / 1_000)
        ),
        RunEvent::RunPaused {
            node,
            header,
            prompt,
            ..
        } => format!(
            "paused at {node}: {}",
            crate::view::headed(header.as_deref(), prompt)
        ),
        RunEvent::RunFinished { steps, .. } => format!("run completed · {steps} steps"),
        RunEvent::RunFailed { message, .. } => format!("run failed: {message}"),
        RunEvent::RunCancelled { step, .. } => format!("run cancelled after step {step}"),
        RunEvent::FilesPutBack { node, paths, .. } => format!(
            "put back {} file(s) the interrupted step{} had changed",
            paths.len(),
            node.as_ref()
                .map(|node| format!(" {node}"))
                .unwrap_or_default()
        ),
        RunEvent::FilesKept { paths, .. } => {
            format!(
                "kept {} file(s) changed while the run was stopped",
                paths.len()
            )
        }
        RunEvent::SandboxDenied { node, target, .. } => {
            format!("sandbox refused {target} to {node}")
        }
        RunEvent::ToolBlocked { node, tool, .. } => {
            format!("hook blocked {node}'s {tool}")
        }
    }
}

fn agent_line(event: &AgentEvent) -> String {
    match event {
        AgentEvent::SessionStart { model, .. } => match model {
            Some(model) => format!("session ({model})"),
            None => "session".to_owned(),
        },
        AgentEvent::TextDelta { text } | AgentEvent::MessageComplete { text } => text.clone(),
        AgentEvent::ThinkingDelta { text } => format!("(thinking) {text}"),
        AgentEvent::ToolStart { name, input, .. } => format!("→ {name} {}", brief(input)),
        AgentEvent::ToolComplete { name, summary, .. } => format!("← {name}: {summary}"),
        AgentEvent::PermissionRequest { tool, granted } => {
            format!(
                "asks for {tool}: {}",
                if *granted { "granted" } else { "refused" }
            )
        }
        AgentEvent::SubagentStart { name } => format!("sub-agent {name} starts"),
        AgentEvent::SubagentEnd { name } => format!("sub-agent {name} ends"),
        AgentEvent::Usage { usage, .. } => tokens(usage).unwrap_or_else(|| "usage".to_owned()),
        AgentEvent::ContextWindow { fraction } => format!("context {:.0}%", fraction * 100.0),
        AgentEvent::Plan { todos } => super::plan::summary(todos),
        AgentEvent::SessionEnd { .. } => "session ends".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_wrap_at_spaces_and_break_long_words() {
        let mut out = Vec::new();
        wrap("the quick brown fox", 10, &mut out);
        assert_eq!(out, ["the quick", "brown fox"]);
        out.clear();
        wrap("abcdefghij", 4, &mut out);
        assert_eq!(out, ["abcd", "efgh", "ij"]);
        out.clear();
        wrap("", 4, &mut out);
        assert_eq!(out, [""]);
        out.clear();
        // Wide characters count two columns.
        wrap("日本語です", 4, &mut out);
        assert_eq!(out, ["日本", "語で", "す"]);
    }

    #[test]
    fn the_tail_wraps_only_what_the_window_shows() {
        let output: Vec<OutputItem> = (0..1_000)
            .map(|n| OutputItem::Line {
                stream: OutputStream::Stdout,
                line: format!("line {n}"),
            })
            .collect();
        let (lines, more) = output_tail(&output, 40, 3, 0);
        let texts: Vec<&str> = lines.iter().map(|l| l.text.as_str()).collect();
        assert_eq!(texts, ["line 997", "line 998", "line 999"]);
        assert!(more);
        let (lines, _) = output_tail(&output, 40, 2, 10);
        let texts: Vec<&str> = lines.iter().map(|l| l.text.as_str()).collect();
        assert_eq!(texts, ["line 988", "line 989"]);
        // Scrolled past the top: the first lines, not nothing.
        let (lines, more) = output_tail(&output[..3], 40, 2, 50);
        let texts: Vec<&str> = lines.iter().map(|l| l.text.as_str()).collect();
        assert_eq!(texts, ["line 0", "line 1"]);
        assert!(!more);
        let (lines, more) = output_tail(&output[..2], 40, 5, 0);
        assert_eq!(lines.len(), 2);
        assert!(!more);
    }

    #[test]
    fn items_read_as_what_they_are() {
        let output = vec![
            OutputItem::ToolCall {
                name: "Read".to_owned(),
                input: serde_json::json!({"path": "a.rs"}),
            },
            OutputItem::ToolResult {
                name: "Read".to_owned(),
                summary: "12 lines".to_owned(),
                is_error: false,
            },
            OutputItem::Thinking {
                text: "hmm".to_owned(),
            },
            OutputItem::Text {
                text: "one\ntwo".to_owned(),
            },
        ];
        let (lines, _) = output_tail(&output, 80, 10, 0);
        let texts: Vec<(&str, Tone)> = lines.iter().map(|l| (l.text.as_str(), l.tone)).collect();
        assert_eq!(
            texts,
            [
                (r#"→ Read {"path":"a.rs"}"#, Tone::Call),
                ("← Read: 12 lines", Tone::Result),
                ("(thinking) hmm", Tone::Thinking),
                ("one", Tone::Plain),
                ("two", Tone::Plain),
            ]
        );
    }

    #[test]
    fn clipping_folds_and_cuts() {
        assert_eq!(clip("a  b\nc", 10), "a b c");
        assert_eq!(clip("abcdef", 4), "abc…");
        assert_eq!(clip("abcd", 4), "abcd");
        assert_eq!(clip("abc", 0), "");
        assert_eq!(count(950), "950");
        assert_eq!(count(12_345), "12.3k");
        assert_eq!(cost(0.01234), "$0.0123");
        assert_eq!(cost(1.25), "$1.25");
    }
}
