//! The live view on a terminal (indicatif): one spinner per running node, indented by
//! its depth in the workflow's blocks, showing its attempt and, for an agent, its streamed
//! text folded to one line (a tool: its last output line). A finished node becomes a
//! permanent line above the spinners with its duration, so a long run scrolls like a log
//! while what is running stays at the bottom.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::reporter::{Depths, View};
use super::text::{self, Paint};
use crate::ir::NodeKeyword;
use crate::providers::AgentEvent;
use crate::providers::Redactor;
use crate::runtime::RunEvent;

/// How much streamed text a spinner keeps (it shows the end of it).
const KEEP: usize = 400;

struct Running {
    bar: ProgressBar,
    kind: NodeKeyword,
    label: String,
    since: Instant,
    text: String,
}

/// The spinner of the one running node with this id (branches aside: the latest).
fn find<'m>(
    running: &'m mut HashMap<(String, Option<u32>), Running>,
    node: &str,
) -> Option<&'m mut Running> {
    running
        .iter_mut()
        .filter(|((id, _), _)| id == node)
        .map(|(_, running)| running)
        .max_by_key(|running| running.since)
}

/// The live tree.
pub(super) struct Tree {
    multi: MultiProgress,
    style: ProgressStyle,
    depths: Depths,
    paint: Paint,
    redactor: Redactor,
    running: HashMap<(String, Option<u32>), Running>,
}

impl Tree {
    pub(super) fn new(depths: Depths, paint: Paint, redactor: Redactor) -> Self {
        let style = ProgressStyle::with_template("{prefix}{spinner:.cyan} {wide_msg}")
            .expect("the spinner template is valid")
            .tick_strings(&["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏", "·"]);
        Self {
            multi: MultiProgress::with_draw_target(ProgressDrawTarget::stderr()),
            style,
            depths,
            paint,
            redactor,
            running: HashMap::new(),
        }
    }

    fn indent(&self, node: &str) -> String {
        "  ".repeat(self.depths.get(node).copied().unwrap_or(0))
    }

    fn println(&self, line: &str) {
        let _ = self.multi.println(self.redactor.redact(line));
    }

    fn stream(&mut self, node: &str, chunk: &str, replace: bool) {
        if let Some(running) = find(&mut self.running, node) {
            if replace {
                running.text.clear();
            }
            running.text.push_str(chunk);
            if running.text.len() > KEEP * 2 {
                let cut = running.text.len() - KEEP;
                let cut = (cut..running.text.len())
                    .find(|at| running.text.is_char_boundary(*at))
                    .unwrap_or(running.text.len());
                running.text.drain(..cut);
            }
            let line = format!("{} {}", running.label, text::fold(&running.text, 120));
            running
                .bar
                .set_message(self.redactor.redact(&line).into_owned());
        }
    }
}

impl View for Tree {
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
                self.println(&paint.dim(&format!("run {run_id} of `{workflow}` {how}")));
            }
            RunEvent::StepStarted {
                node,
                kind,
                attempt,
                branch,
                ..
            } => {
                let key = (node.to_string(), *branch);
                let again = if *attempt > 1 {
                    format!(" (attempt {attempt})")
                } else {
                    String::new()
                };
                let label = format!("{kind} {}{again}", paint.bold(node));
                if let Some(running) = self.running.get_mut(&key) {
                    running.label.clone_from(&label);
                    running.text.clear();
                    running.bar.set_message(label);
                    return;
                }
                let bar = self.multi.add(ProgressBar::new_spinner());
                bar.set_style(self.style.clone());
                bar.set_prefix(self.indent(node));
                bar.set_message(label.clone());
                bar.enable_steady_tick(Duration::from_millis(100));
                self.running.insert(
                    key,
                    Running {
                        bar,
                        kind: *kind,
                        label,
                        since: Instant::now(),
                        text: String::new(),
                    },
                );
            }
            RunEvent::Agent { node, event } => match event {
                AgentEvent::TextDelta { text } => self.stream(node, text, false),
                AgentEvent::ToolStart { name, .. } => {
                    self.stream(node, &format!(" [{name}…] "), false);
                }
                _ => {}
            },
            RunEvent::ToolOutput { node, line, .. } => self.stream(node, line, true),
            RunEvent::StepFinished {
                node,
                status,
                branch,
                ..
            } => {
                // A wait's answer is a step that never started: it has no spinner.
                let (kind, since) = match self.running.remove(&(node.to_string(), *branch)) {
                    Some(running) => {
                        running.bar.finish_and_clear();
                        self.multi.remove(&running.bar);
                        (running.kind, running.since)
                    }
                    None => (NodeKeyword::Wait, Instant::now()),
                };
                let mark = if *status == crate::runtime::StepOutcome::Completed {
                    paint.ok("✓")
                } else {
                    paint.warn("↷")
                };
                let how = if *status == crate::runtime::StepOutcome::Completed {
                    String::new()
                } else {
                    format!(" {status}")
                };
                self.println(&format!(
                    "{}{mark} {} {node}{how} {}",
                    self.indent(node),
                    kind,
                    paint.dim(&text::duration(since.elapsed()))
                ));
            }
            RunEvent::Route { node, to } => {
                self.println(&format!(
                    "{}{} {node} → {}",
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
                let line = format!(
                    "{}{} {node} failed ({class}: {}); attempt {attempt} in {}",
                    self.indent(node),
                    paint.warn("↻"),
                    text::clip(message, 100),
                    text::duration(Duration::from_millis(*delay_ms))
                );
                self.println(&line);
            }
            RunEvent::NodeFailed {
                node,
                class,
                message,
                action,
            } => {
                self.running.retain(|(id, _), running| {
                    let keep = id.as_str() != &**node;
                    if !keep {
                        running.bar.finish_and_clear();
                    }
                    keep
                });
                let line = format!(
                    "{}{} {node} failed ({class}): {}; {action}",
                    self.indent(node),
                    paint.bad("✗"),
                    text::clip(message, 200)
                );
                self.println(&line);
            }
            RunEvent::WaitAutoApprove {
                node,
                after_ms,
                answer,
            } => {
                let line = format!(
                    "{}{} {node} answers `{answer}` by itself in {}",
                    self.indent(node),
                    paint.dim("⏸"),
                    text::duration(Duration::from_millis(*after_ms))
                );
                self.println(&line);
            }
            other => {
                if let Some((node, note)) = text::side_note(other, paint) {
                    let indent = node.map_or(String::new(), |node| self.indent(node));
                    self.println(&format!("{indent}{note}"));
                }
            }
        }
    }

    fn note(&mut self, text: &str) {
        self.println(text);
    }

    fn close(&mut self) {
        for (_, running) in self.running.drain() {
            running.bar.finish_and_clear();
        }
        let _ = self.multi.clear();
    }
}
