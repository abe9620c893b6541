//! The lines a run ends with: how it ended, steps, time, tokens, cost and run id; for a
//! pause, the question and the exact `atomic resume` command; for a failure, the node, its
//! place in the file and the cause.

use std::fmt::Write;
use std::time::Duration;

use serde_json::Value;

use super::text::{self, Paint};
use crate::runtime::{RunEnd, RunOutcome};
use crate::store::PendingWait;

/// Everything the final lines say.
#[derive(Debug)]
pub(crate) struct Summary<'a> {
    /// `workflow "<name>"`.
    pub(crate) workflow: &'a str,
    /// How the run (or this stretch of it) ended.
    pub(crate) outcome: &'a RunOutcome,
    /// Wall time of this process's part of the run.
    pub(crate) elapsed: Duration,
    /// Whether the run was stored durably (so `atomic resume` can continue it).
    pub(crate) resumable: bool,
    /// `file:line:col` of the node that failed.
    pub(crate) failed_at: Option<String>,
    /// Whether to list the final state's fields.
    pub(crate) show_state: bool,
    /// Colours.
    pub(crate) paint: Paint,
    /// What `atomic resume` and `atomic runs show` need after the run id to reach the run
    /// (` --temporal HOST:PORT` for a run on Temporal; empty for a local one).
    pub(crate) via: &'a str,
}

impl Summary<'_> {
    /// The final lines, each ending in a newline.
    pub(crate) fn render(&self) -> String {
        let outcome = self.outcome;
        let paint = self.paint;
        let run = format!("{}{}", outcome.run_id, self.via);
        let mut out = String::new();
        let figures = self.figures();
        match &outcome.end {
            RunEnd::Completed => {
                let _ = writeln!(
                    out,
                    "{} `{}` completed · {figures}",
                    paint.ok("✓"),
                    self.workflow
                );
                if self.show_state {
                    out.push_str(&state_lines(&outcome.state));
                }
            }
            RunEnd::Paused { waits } => {
                let at = PendingWait::list(waits);
                let _ = writeln!(
                    out,
                    "{} `{}` paused at {at} · {figures}",
                    paint.warn("⏸"),
                    self.workflow
                );
                let several = waits.len() > 1;
                for wait in waits {
                    if !self.resumable {
                        out.push_str(&question_lines(wait, paint));
                        continue;
                    }
                    let key = wait.key();
                    out.push_str(&pause_help(
                        &run,
                        wait,
                        several.then_some(key.as_str()),
                        paint,
                    ));
                    if let (Some(auto), Some(at)) = (&wait.auto_answer, wait.auto_answer_at) {
                        let _ = writeln!(
                            out,
                            "  or let it answer `{auto}` by itself at {} UTC: atomic resume {run}",
                            crate::store::utc(at)
                        );
                    }
                }
                if !self.resumable {
                    let _ = writeln!(
                        out,
                        "  this run was kept in memory and cannot be resumed; run it with the default store (`--store sqlite`) to answer"
                    );
                }
            }
            RunEnd::Failed {
                node,
                class,
                message,
            } => {
                let at = self
                    .failed_at
                    .as_ref()
                    .map(|at| format!(" ({at})"))
                    .unwrap_or_default();
                let class = class.map_or("error", crate::ir::ErrorClass::name);
                let _ = writeln!(
                    out,
                    "{} `{}` failed at `{node}`{at} · {figures}",
                    paint.bad("✗"),
                    self.workflow
                );
                let _ = writeln!(out, "  {class}: {message}");
                let _ = writeln!(out, "  details: atomic runs show {run}");
            }
            RunEnd::LimitReached { message } => {
                let _ = writeln!(
                    out,
                    "{} `{}` stopped: {message} · {figures}",
                    paint.bad("✗"),
                    self.workflow
                );
                if self.resumable {
                    let _ = writeln!(out, "  continue it with: atomic resume {run}");
                }
            }
            RunEnd::Cancelled => {
                let _ = writeln!(
                    out,
                    "{} `{}` cancelled · {figures}",
                    paint.warn("■"),
                    self.workflow
                );
                if self.resumable {
                    let _ = writeln!(out, "  continue it with: atomic resume {run}");
                }
            }
        }
        out
    }

    /// `3 steps · 1.2s · 30 tokens · $0.0003 · run 01…`.
    fn figures(&self) -> String {
        let outcome = self.outcome;
        let mut parts = vec![
            format!(
                "{} step{}",
                outcome.steps,
                if outcome.steps == 1 { "" } else { "s" }
            ),
            text::duration(self.elapsed),
        ];
        let usage = outcome.usage;
        let tokens = usage.input_tokens
            + usage.output_tokens
            + usage.cache_read_tokens
            + usage.cache_write_tokens;
        if tokens > 0 {
            parts.push(format!(
                "{tokens} tokens ({} in, {} out)",
                usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens,
                usage.output_tokens
            ));
        }
        if outcome.cost_usd > 0.0 {
            parts.push(format!("${:.4}", outcome.cost_usd));
        }
        parts.push(format!("run {}", outcome.run_id));
        parts.join(" · ")
    }
}

/// The question of a paused wait and how to answer it; `name` is how `--wait` names it
/// when several waits are pending.
pub(crate) fn pause_help(
    run: &str,
    wait: &PendingWait,
    name: Option<&str>,
    paint: Paint,
) -> String {
    let mut out = question_lines(wait, paint);
    let width = wait
        .choices
        .iter()
        .map(|choice| choice.value.chars().count())
        .max()
        .unwrap_or(0);
    for choice in &wait.choices {
        let line = format!(
            "    {:<width$}  {}",
            choice.value,
            choice.label.as_deref().unwrap_or("")
        );
        let _ = writeln!(out, "{}", line.trim_end());
        // Under the label, in the label's column.
        for line in choice.description.iter().flat_map(|text| text.lines()) {
            let _ = writeln!(out, "    {:width$}  {}", "", paint.dim(line));
        }
    }
    let answer = wait.answer.as_str();
    let choices = &wait.choices;
    let example = match answer {
        "choice" => choices
            .first()
            .map_or_else(|| "<choice>".to_owned(), |choice| shell_word(&choice.value)),
        "yes-no" => "yes".to_owned(),
        "boolean" => "true".to_owned(),
        "integer" | "number" => "<number>".to_owned(),
        "json" => "'{…}'".to_owned(),
        _ => "'<your answer>'".to_owned(),
    };
    let which = name.map_or_else(String::new, |name| format!(" --wait {}", shell_word(name)));
    let _ = writeln!(
        out,
        "  answer ({answer}) with: atomic resume {run}{which} --answer {example}"
    );
    out
}

/// A wait's header as a title line (when it has one), then its prompt, indented.
pub(crate) fn question_lines(wait: &PendingWait, paint: Paint) -> String {
    let mut out = String::new();
    if let Some(header) = &wait.header {
        let _ = writeln!(out, "  {}", paint.warn(header));
    }
    for line in wait.prompt.lines() {
        let _ = writeln!(out, "  {}", paint.bold(line));
    }
    out
}

fn shell_word(text: &str) -> String {
    // `#` starts a comment only at the start of a word.
    if !text.is_empty()
        && !text.starts_with('#')
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:@#".contains(c))
    {
        text.to_owned()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

/// The final state, one field a line, long values clipped.
fn state_lines(state: &Value) -> String {
    let Value::Object(fields) = state else {
        return String::new();
    };
    if fields.is_empty() {
        return String::new();
    }
    let width = fields.keys().map(|k| k.chars().count()).max().unwrap_or(0);
    let mut out = String::from("  state:\n");
    for (name, value) in fields {
        let _ = writeln!(
            out,
            "    {name:<width$}  {}",
            text::clip(&value.to_string(), 100)
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::Usage;
    use crate::store::{RunId, Timestamp, WaitChoice};

    #[test]
    fn a_stopped_auto_approve_pause_repeats_its_deadline() {
        let outcome = RunOutcome {
            run_id: RunId::new("01abc"),
            end: RunEnd::Paused {
                waits: vec![PendingWait {
                    node_id: "approve".to_owned(),
                    header: None,
                    prompt: "Ship?".to_owned(),
                    answer: "yes-no".to_owned(),
                    choices: Vec::new(),
                    schema: None,
                    auto_answer: Some("yes".to_owned()),
                    auto_answer_at: Some(Timestamp(951_782_400_000)),
                    scope: None,
                    permission: None,
                }],
            },
            state: serde_json::Value::Null,
            steps: 2,
            usage: Usage::default(),
            cost_usd: 0.0,
        };
        let summary = Summary {
            workflow: "ship",
            outcome: &outcome,
            elapsed: Duration::from_millis(5),
            resumable: true,
            failed_at: None,
            show_state: false,
            paint: Paint { on: false },
            via: "",
        };
        let text = summary.render();
        assert!(
            text.ends_with(
                "  answer (yes-no) with: atomic resume 01abc --answer yes\n  or let it answer `yes` by itself at 2000-02-29 00:00:00 UTC: atomic resume 01abc\n"
            ),
            "{text}"
        );
    }

    fn choice(value: &str, label: Option<&str>, description: Option<&str>) -> WaitChoice {
        WaitChoice {
            value: value.to_owned(),
            label: label.map(str::to_owned),
            description: description.map(str::to_owned),
        }
    }

    fn question(header: Option<&str>, prompt: &str, choices: Vec<WaitChoice>) -> PendingWait {
        PendingWait {
            node_id: "pick".to_owned(),
            header: header.map(str::to_owned),
            prompt: prompt.to_owned(),
            answer: "choice".to_owned(),
            choices,
            schema: None,
            auto_answer: None,
            auto_answer_at: None,
            scope: None,
            permission: None,
        }
    }

    #[test]
    fn pause_help_gives_the_exact_command() {
        let wait = question(
            None,
            "Ship?",
            vec![
                choice("ship", Some("Ship it"), None),
                choice("hold off", None, None),
            ],
        );
        let text = pause_help("01abc", &wait, None, Paint { on: false });
        assert_eq!(
            text,
            "  Ship?\n    ship      Ship it\n    hold off\n  answer (choice) with: atomic resume 01abc --answer ship\n"
        );
        assert_eq!(shell_word("it's"), r"'it'\''s'");
        assert_eq!(shell_word("each@1#0/ok"), "each@1#0/ok");
        assert_eq!(shell_word("#x"), "'#x'");
    }

    #[test]
    fn pause_help_shows_the_header_above_the_prompt_and_descriptions_under_labels() {
        let wait = question(
            Some("Database"),
            "Which database should the service use?",
            vec![
                choice(
                    "pg",
                    Some("PostgreSQL"),
                    Some("Relational, the team knows it"),
                ),
                choice("sqlite", Some("SQLite"), Some("One file, no server")),
            ],
        );
        assert_eq!(
            pause_help("01abc", &wait, None, Paint { on: false }),
            "  Database\n  \
             Which database should the service use?\n    \
             pg      PostgreSQL\n            \
             Relational, the team knows it\n    \
             sqlite  SQLite\n            \
             One file, no server\n  \
             answer (choice) with: atomic resume 01abc --answer pg\n"
        );
        // With colours, the description is dimmed.
        let painted = pause_help("01abc", &wait, None, Paint { on: true });
        assert!(
            painted.contains(&Paint { on: true }.dim("One file, no server")),
            "{painted}"
        );
    }
}
