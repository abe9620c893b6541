//! Small text helpers for progress output: durations, folding streamed text to one line,
//! and colour that is off unless stderr is a terminal without `NO_COLOR`.

use std::time::Duration;

use anstyle::{AnsiColor, Style};

use crate::runtime::{HookEvent, RunEvent, SessionAction};

/// `850µs`, `12ms`, `1.4s`, `2m05s`, `1h02m`.
pub(crate) fn duration(elapsed: Duration) -> String {
    let micros = elapsed.as_micros();
    let secs = elapsed.as_secs();
    if micros < 1_000 {
        format!("{micros}µs")
    } else if micros < 1_000_000 {
        format!("{}ms", micros / 1_000)
    } else if secs < 60 {
        format!("{:.1}s", elapsed.as_secs_f64())
    } else if secs < 3_600 {
        format!("{}m{:02}s", secs / 60, secs % 60)
    } else {
        format!("{}h{:02}m", secs / 3_600, (secs % 3_600) / 60)
    }
}

/// The last `width` characters of `text` on one line: whitespace runs become one space.
pub(crate) fn fold(text: &str, width: usize) -> String {
    let mut line = String::with_capacity(text.len().min(width.saturating_mul(4)));
    let mut space = false;
    for ch in text.chars() {
        if ch.is_whitespace() {
            space = !line.is_empty();
        } else {
            if space {
                line.push(' ');
                space = false;
            }
            line.push(ch);
        }
    }
    let count = line.chars().count();
    if count <= width {
        line
    } else {
        let skip = count - width + 1;
        format!("…{}", line.chars().skip(skip).collect::<String>())
    }
}

/// The first `width` characters of `text` on one line.
pub(crate) fn clip(text: &str, width: usize) -> String {
    let line = fold(text, usize::MAX);
    if line.chars().count() <= width {
        line
    } else {
        let mut clipped: String = line.chars().take(width.saturating_sub(1)).collect();
        clipped.push('…');
        clipped
    }
}

/// A route's target as people write it: the workflow's end is `end` (its step key is
/// `#end`); other targets are node ids.
pub(crate) fn target(key: &str) -> &str {
    if key == "#end" { "end" } else { key }
}

/// The events both progress views print alike, as side notes of a node: its context
/// window filling up, a session compacted or replaced, a failed hook. The node (for the
/// indentation; none for a run-level hook) and the marked line.
pub(crate) fn side_note(event: &RunEvent, paint: Paint) -> Option<(Option<&str>, String)> {
    let (node, mark, text) = match event {
        RunEvent::ContextWarning {
            node,
            fraction,
            warn,
        } => (
            Some(&**node),
            paint.warn("!"),
            context_warning(node, *fraction, *warn),
        ),
        RunEvent::ContextAction {
            node,
            session_of,
            action,
            fraction,
        } => (
            Some(&**node),
            paint.dim("↺"),
            context_action(node, session_of, *action, *fraction),
        ),
        RunEvent::HookFailed {
            event,
            node,
            command,
            message,
            blocked,
        } => (
            node.as_deref(),
            paint.warn("!"),
            hook_failure(*event, node.as_deref(), command, message, *blocked),
        ),
        RunEvent::FilesPutBack { node, paths, kept } => (
            None,
            paint.warn("↺"),
            format!(
                "put back {} the interrupted step{} had changed (what it left is kept as {})",
                files_changed(paths.len()),
                node.as_ref()
                    .map(|node| format!(" `{node}`"))
                    .unwrap_or_default(),
                &kept[..kept.len().min(12)]
            ),
        ),
        RunEvent::FilesKept { paths, .. } => (
            None,
            paint.warn("!"),
            format!(
                "going on with {} changed while the run was stopped (--keep-changes)",
                files_changed(paths.len())
            ),
        ),
        RunEvent::SandboxDenied {
            node,
            target,
            reason,
        } => (
            None,
            paint.warn("⊘"),
            format!("`{node}`: the sandbox refused {target}: {reason}"),
        ),
        RunEvent::ToolBlocked {
            node, tool, reason, ..
        } => (
            None,
            paint.warn("⊘"),
            format!("`{node}`: a hook blocked its `{tool}` call: {reason}"),
        ),
        _ => return None,
    };
    Some((node, format!("{mark} {text}")))
}

/// A count of files in words: `1 file`, `3 files`.
pub(crate) fn files_changed(count: usize) -> String {
    if count == 1 {
        "1 file".to_owned()
    } else {
        format!("{count} files")
    }
}

/// A failed hook, one line: what ran, on what, what happened, and whether it stopped
/// the action.
fn hook_failure(
    event: HookEvent,
    node: Option<&str>,
    command: &str,
    message: &str,
    blocked: bool,
) -> String {
    let on = node.map_or(String::new(), |node| format!(" for `{node}`"));
    let what = if blocked {
        "; the action was blocked"
    } else {
        ""
    };
    format!(
        "`{event}` hook `{}`{on} {}{what}",
        clip(command, 60),
        clip(message, 200)
    )
}

/// An agent's context window reached its warning threshold.
fn context_warning(node: &str, fraction: f64, warn: f64) -> String {
    format!(
        "`{node}` has used {} of its context window (warns at {})",
        percent(fraction),
        percent(warn)
    )
}

/// A full session was compacted or replaced before an agent continued it.
fn context_action(node: &str, session_of: &str, action: SessionAction, fraction: f64) -> String {
    let what = match action {
        SessionAction::Compact => "compacts",
        SessionAction::Fresh => "starts afresh instead of continuing",
    };
    format!(
        "`{node}` {what} the session of `{session_of}` ({} of its context window used)",
        percent(fraction)
    )
}

/// `0.456` → `46%`.
fn percent(fraction: f64) -> String {
    format!("{:.0}%", fraction * 100.0)
}

/// Colours, or none.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Paint {
    pub(crate) on: bool,
}

impl Paint {
    fn paint(self, style: Style, text: &str) -> String {
        if self.on {
            format!("{}{text}{}", style.render(), style.render_reset())
        } else {
            text.to_owned()
        }
    }

    pub(crate) fn ok(self, text: &str) -> String {
        self.paint(AnsiColor::Green.on_default(), text)
    }

    pub(crate) fn bad(self, text: &str) -> String {
        self.paint(AnsiColor::Red.on_default().bold(), text)
    }

    pub(crate) fn warn(self, text: &str) -> String {
        self.paint(AnsiColor::Yellow.on_default(), text)
    }

    pub(crate) fn dim(self, text: &str) -> String {
        self.paint(Style::new().dimmed(), text)
    }

    pub(crate) fn bold(self, text: &str) -> String {
        self.paint(Style::new().bold(), text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_naturally() {
        assert_eq!(duration(Duration::from_micros(850)), "850µs");
        assert_eq!(duration(Duration::from_millis(12)), "12ms");
        assert_eq!(duration(Duration::from_millis(1_400)), "1.4s");
        assert_eq!(duration(Duration::from_secs(125)), "2m05s");
        assert_eq!(duration(Duration::from_secs(3_720)), "1h02m");
    }

    #[test]
    fn folding_keeps_the_end_on_one_line() {
        assert_eq!(fold("  hello\n\n world  ", 20), "hello world");
        assert_eq!(fold("abcdefghij", 5), "…ghij");
        assert_eq!(clip("abcdefghij", 5), "abcd…");
        assert_eq!(clip("a\nb", 5), "a b");
    }

    #[test]
    fn context_lines_say_how_full_the_window_is() {
        assert_eq!(
            context_warning("review", 0.456, 0.45),
            "`review` has used 46% of its context window (warns at 45%)"
        );
        assert_eq!(
            context_action("fix", "review", SessionAction::Compact, 0.7),
            "`fix` compacts the session of `review` (70% of its context window used)"
        );
        assert_eq!(
            context_action("fix", "review", SessionAction::Fresh, 0.7),
            "`fix` starts afresh instead of continuing the session of `review` (70% of its context window used)"
        );
    }

    #[test]
    fn paint_is_plain_when_off() {
        let paint = Paint { on: false };
        assert_eq!(paint.ok("✓"), "✓");
        assert!(Paint { on: true }.bad("x").contains("\u{1b}["));
    }
}
