//! Plain progress: one line per thing that happened, on stderr, for logs and CI. Streamed
//! agent text and tool output are left to `--stream events`.

use std::collections::HashMap;
use std::io::Write;
use std::time::Instant;

use super::reporter::{Depths, View};
use super::text::{self, Paint};
use crate::ir::NodeKeyword;
use crate::providers::Redactor;
use crate::runtime::RunEvent;

/// Writes progress lines.
pub(super) struct Plain {
    depths: Depths,
    paint: Paint,
    redactor: Redactor,
    /// Running steps by (node, branch): kind and start.
    running: HashMap<(String, Option<u32>), (NodeKeyword, Instant)>,
}

impl Plain {
    pub(super) fn new(depths: Depths, paint: Paint, redactor: Redactor) -> Self {
        Self {
            depths,
            paint,
            redactor,
            running: HashMap::new(),
        }
    }

    fn indent(&self, node: &str) -> String {
        "  ".repeat(self.depths.get(node).copied().unwrap_or(0))
    }

    fn line(&self, text: &str) {
        let mut err = std::io::stderr().lock();
        let _ = writeln!(err, "{}", self.redactor.redact(text));
    }
}

impl View for Plain {
    fn event(&mut self, event: &RunEvent) {
        let paint = self.paint;
        match event {
            RunEvent::RunStarted {
                run_id,
                workflow,
                resumed,
                from_step,
            } => {
                let how = if *resumed {
                    format!("resumed after step {from_step}")
                } else {
                    "started".to_owned()
                };
                self.line(&format!("run {run_id} of `{workflow}` {how}"));
            }
            RunEvent::StepStarted {
                step,
                node,
                kind,
                attempt,
                branch,
            } => {
                self.running
                    .insert((node.to_string(), *branch), (*kind, Instant::now()));
                if *kind != NodeKeyword::Set {
                    let again = if *attempt > 1 {
                        format!(" (attempt {attempt})")
                    } else {
                        String::new()
                    };
                    self.line(&format!(
                        "{}{} [{step}] {kind} `{node}`{again}",
                        self.indent(node),
                        paint.dim("▸")
                    ));
                }
            }
            RunEvent::StepFinished {
                step,
                node,
                status,
                branch,
                files,
                ..
            } => {
                let (kind, since) = self
                    .running
                    .remove(&(node.to_string(), *branch))
                    .unwrap_or((NodeKeyword::Wait, Instant::now()));
                let mark = match *status {
                    crate::runtime::StepOutcome::Completed => paint.ok("✓"),
                    _ => paint.warn("↷"),
                };
                let mut how = if *status == crate::runtime::StepOutcome::Completed {
                    String::new()
                } else {
                    format!(" {status}")
                };
                if let Some(files) = files.as_ref().filter(|files| !files.changed.is_empty()) {
                    how.push_str(&format!(
                        " · {} changed",
                        text::files_changed(files.changed.len())
                    ));
                }
                self.line(&format!(
                    "{}{mark} [{step}] {kind} `{node}`{how} {}",
                    self.indent(node),
                    paint.dim(&text::duration(since.elapsed()))
                ));
            }
            RunEvent::Route { node, to } => {
                self.line(&format!(
                    "{}{} `{node}` → `{}`",
                    self.indent(node),
                    paint.dim("◆"),
                    text::target(to)
                ));
            }
            RunEvent::Retrying {
                node,
                attempt,
                delay_ms,
                class,
                message,
            } => {
                self.line(&format!(
                    "{}{} `{node}` failed ({class}: {}); attempt {attempt} in {}",
                    self.indent(node),
                    paint.warn("↻"),
                    text::clip(message, 100),
                    text::duration(std::time::Duration::from_millis(*delay_ms))
                ));
            }
            RunEvent::NodeFailed {
                node,
                class,
                message,
                action,
            } => {
                self.line(&format!(
                    "{}{} `{node}` failed ({class}): {}; {action}",
                    self.indent(node),
                    paint.bad("✗"),
                    text::clip(message, 200)
                ));
            }
            RunEvent::WaitAutoApprove {
                node,
                after_ms,
                answer,
            } => {
                self.line(&format!(
                    "{}{} `{node}` answers `{answer}` by itself in {}",
                    self.indent(node),
                    paint.dim("⏸"),
                    text::duration(std::time::Duration::from_millis(*after_ms))
                ));
            }
            other => {
                if let Some((node, note)) = text::side_note(other, paint) {
                    let indent = node.map_or(String::new(), |node| self.indent(node));
                    self.line(&format!("{indent}{note}"));
                }
            }
        }
    }

    fn note(&mut self, text: &str) {
        self.line(text);
    }

    fn close(&mut self) {}
}
