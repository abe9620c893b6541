//! `atomic ui` when stdout is not a terminal (a pipe, a file, CI): the run printed once as
//! plain text — its totals, each step with its state and attempts, what it waits for and
//! how to answer, why it failed — instead of a screen nobody can see.

use std::fmt::Write;

use super::app::App;
use super::text;
use crate::view::{NodeState, RunView};

/// The run as text, ending with a newline.
pub(super) fn render(view: &RunView, flags: &[String]) -> String {
    let mut out = String::new();
    let _ = write!(
        out,
        "{} {} ({}) · step {}",
        view.workflow,
        view.run_id,
        view.phase.name(),
        view.step
    );
    if let Some(tokens) = text::tokens(&view.usage) {
        let _ = write!(out, " · {tokens}");
    }
    if let Some(cost) = view.cost_usd {
        let _ = write!(out, " · {}", text::cost(cost));
    }
    out.push('\n');
    let visible: Vec<usize> = App::visible(view).collect();
    let width = visible
        .iter()
        .map(|&at| view.nodes[at].key.chars().count())
        .max()
        .unwrap_or(0);
    for &at in &visible {
        let node = &view.nodes[at];
        let _ = write!(
            out,
            "  {} {:<8} {:<width$}  {}",
            text::glyph(node.state),
            node.state.name(),
            node.key,
            node.kind
        );
        if node.attempts > 1 {
            let _ = write!(out, " · {} attempts", node.attempts);
        }
        if let Some(tokens) = text::tokens(&node.usage) {
            let _ = write!(out, " · {tokens}");
        }
        if let Some(cost) = node.cost_usd {
            let _ = write!(out, " · {}", text::cost(cost));
        }
        if node.state == NodeState::Failed
            && let Some(error) = &node.error
        {
            let _ = write!(out, " · {}", text::clip(error, 120));
        }
        out.push('\n');
    }
    for wait in &view.waits {
        let choices = if wait.choices.is_empty() {
            wait.answer.clone()
        } else {
            let values: Vec<&str> = wait.choices.iter().map(|c| c.value.as_str()).collect();
            values.join(", ")
        };
        let _ = writeln!(
            out,
            "waiting at `{}`: {} ({choices})\n  answer: atomic resume {}{}{} --answer <ANSWER>",
            wait.node,
            text::clip(&wait.headed_prompt(), 200),
            view.run_id,
            flags
                .iter()
                .map(|flag| format!(" {flag}"))
                .collect::<String>(),
            if view.waits.len() > 1 {
                format!(" --wait {}", wait.node)
            } else {
                String::new()
            },
        );
    }
    if let Some(error) = &view.error {
        let _ = writeln!(out, "error: {error}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::{Outline, OutlineStep};
    use crate::runtime::RunEvent;

    #[test]
    fn a_paused_run_reads_as_steps_and_how_to_answer() {
        let step = |key: &str, kind: &'static str| OutlineStep {
            key: key.to_owned(),
            node: (!key.starts_with('#')).then(|| key.to_owned()),
            kind,
            label: key.to_owned(),
        };
        let outline = Outline {
            steps: vec![
                step("#start", "start"),
                step("draft", "tool"),
                step("approve", "wait"),
            ],
            edges: Vec::new(),
        };
        let mut view = RunView::new("r1", &outline);
        view.workflow = "gate".to_owned();
        view.apply(&RunEvent::StepStarted {
            step: 1,
            node: "draft".into(),
            kind: crate::ir::NodeKeyword::Tool,
            attempt: 1,
            branch: None,
        });
        view.apply(&RunEvent::RunPaused {
            run_id: "r1".to_owned(),
            step: 2,
            node: "approve".into(),
            wait: None,
            header: None,
            prompt: "Ship it?".to_owned(),
            answer: "yes-no".to_owned(),
            choices: Vec::new(),
        });
        assert_eq!(
            render(&view, &[]),
            "gate r1 (paused) · step 1\n  \
             ▶ running  draft    tool\n  \
             ? waiting  approve  wait\n\
             waiting at `approve`: Ship it? (yes-no)\n  \
             answer: atomic resume r1 --answer <ANSWER>\n"
        );
        let elsewhere = ["--temporal".to_owned(), "10.0.0.5:7233".to_owned()];
        assert!(
            render(&view, &elsewhere)
                .contains("answer: atomic resume r1 --temporal 10.0.0.5:7233 --answer <ANSWER>\n"),
            "a run elsewhere is answered there"
        );
    }
}
