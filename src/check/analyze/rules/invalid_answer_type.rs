//! `invalid-answer-type`: a `wait`'s answer type, choices and auto-approve answer disagree.
//!
//! ## What it does
//! Reports a `yes-no` or `boolean` wait with `choice` children, a `choice` wait without
//! any, choices that are not valid values of an `integer`, `number` or `json` answer, and
//! an `auto-approve answer=` that is not one of the choices (`choice` answers) or not a
//! value of the type (the others; for them choices are offered, not enforced).
//!
//! ## Why is this bad?
//! The person is offered answers the run will reject, or an unattended run auto-approves
//! with an answer that fails validation and stops the run.
//!
//! ## Example
//! ```kdl
//! wait "approve" prompt="Ship it?" answer="yes-no" {
//!     choice "ship"; choice "hold"; choice "later"
//!     auto-approve after="1h" answer="maybe"
//! }
//! ```
//!
//! ## Use instead
//! ```kdl
//! wait "approve" prompt="Ship it?" { choice "ship"; choice "hold"; auto-approve after="1h" answer="hold"; }
//! ```

use crate::diagnostic::{Code, Diagnostic, did_you_mean, expected_one_of};
use crate::ir::{AnswerType, NodeKind, Wait};

use super::super::driver::Facts;

/// Reports inconsistent waits.
pub(crate) fn check(facts: &Facts<'_>, out: &mut Vec<Diagnostic>) {
    for node in &facts.workflow.nodes {
        let NodeKind::Wait(wait) = &node.kind else {
            continue;
        };
        let id = &node.id.value;
        let kind = answer_name(&wait.answer);
        match &wait.answer {
            AnswerType::YesNo | AnswerType::Boolean => {
                if let Some(first) = wait.choices.first() {
                    out.push(
                        Diagnostic::new(
                            Code::InvalidAnswerType,
                            first.value.span,
                            format!("wait `{id}` answers `{kind}` but lists choices"),
                        )
                        .label(format!("a `{kind}` answer takes no choices"))
                        .help("remove the choices, or drop `answer=` to let the person pick one of them"),
                    );
                }
            }
            AnswerType::Choice if wait.choices.is_empty() => out.push(
                Diagnostic::new(
                    Code::InvalidAnswerType,
                    node.id.span,
                    format!("wait `{id}` answers `choice` but lists no choices"),
                )
                .label("nothing to choose from")
                .help("add `choice \"<value>\" label=\"…\"` children"),
            ),
            _ => {
                for choice in &wait.choices {
                    if !valid_value(&wait.answer, &choice.value.value) {
                        out.push(
                            Diagnostic::new(
                                Code::InvalidAnswerType,
                                choice.value.span,
                                format!(
                                    "choice `{}` of wait `{id}` is not a valid `{kind}`",
                                    choice.value.value
                                ),
                            )
                            .label(format!("not a `{kind}`"))
                            .help(format!(
                                "give choices that are `{kind}` values, or change `answer=`"
                            )),
                        );
                    }
                }
            }
        }
        if let Some(auto) = &wait.auto_approve {
            check_auto_approve(wait, id, auto, out);
        }
    }
}

fn check_auto_approve(
    wait: &Wait,
    id: &str,
    auto: &crate::ir::AutoApprove,
    out: &mut Vec<Diagnostic>,
) {
    let answer = &auto.answer;
    let kind = answer_name(&wait.answer);
    if wait.answer == AnswerType::Choice && !wait.choices.is_empty() {
        if wait
            .choices
            .iter()
            .any(|choice| choice.value.value == answer.value)
        {
            return;
        }
        let values: Vec<&str> = wait
            .choices
            .iter()
            .map(|choice| choice.value.value.as_str())
            .collect();
        let help = match did_you_mean(&answer.value, values.iter().copied()) {
            Some(near) => format!("did you mean `{near}`?"),
            None => format!("answer with {}", expected_one_of(&values)),
        };
        out.push(
            Diagnostic::new(
                Code::InvalidAnswerType,
                answer.span,
                format!(
                    "auto-approve answer `{}` is not a choice of wait `{id}`",
                    answer.value
                ),
            )
            .label("not one of the choices")
            .help(help),
        );
    } else if !valid_value(&wait.answer, &answer.value) {
        out.push(
            Diagnostic::new(
                Code::InvalidAnswerType,
                answer.span,
                format!(
                    "auto-approve answer `{}` is not a valid `{kind}` for wait `{id}`",
                    answer.value
                ),
            )
            .label(format!("not a `{kind}`"))
            .help(match wait.answer {
                AnswerType::YesNo => "answer `yes` or `no`".to_owned(),
                AnswerType::Boolean => "answer `true` or `false`".to_owned(),
                _ => format!("give a `{kind}` value"),
            }),
        );
    }
}

fn answer_name(answer: &AnswerType) -> &'static str {
    match answer {
        AnswerType::String => "string",
        AnswerType::Integer => "integer",
        AnswerType::Number => "number",
        AnswerType::Boolean => "boolean",
        AnswerType::YesNo => "yes-no",
        AnswerType::Choice => "choice",
        AnswerType::Json(_) => "json",
    }
}

/// Whether `text` is an acceptable answer of this type (as the runtime parses answers).
fn valid_value(answer: &AnswerType, text: &str) -> bool {
    let text = text.trim();
    match answer {
        AnswerType::String | AnswerType::Choice => true,
        AnswerType::Integer => text.parse::<i64>().is_ok(),
        AnswerType::Number => text.parse::<f64>().is_ok_and(f64::is_finite),
        AnswerType::Boolean => matches!(text.to_ascii_lowercase().as_str(), "true" | "false"),
        AnswerType::YesNo => matches!(
            text.to_ascii_lowercase().as_str(),
            "yes" | "no" | "y" | "n" | "true" | "false"
        ),
        AnswerType::Json(_) => serde_json::from_str::<serde_json::Value>(text).is_ok(),
    }
}

#[cfg(test)]
mod tests {
    use crate::check::analyze::testing::{Builder, messages, run};
    use crate::diagnostic::Code;
    use crate::ir::{AnswerType, AutoApprove, Duration, NodeKind, WaitChoice};
    use crate::source::Spanned;

    fn wait(b: &mut Builder, id: &str, answer: AnswerType, choices: &[&str], auto: Option<&str>) {
        let idx = b.wait(id, answer, None);
        let choices: Vec<WaitChoice> = choices
            .iter()
            .map(|value| WaitChoice {
                value: b.name(value),
                label: None,
            })
            .collect();
        let auto = auto.map(|answer| AutoApprove {
            after: Spanned::new(Duration(1000), b.span(2)),
            answer: b.name(answer),
        });
        if let NodeKind::Wait(wait) = &mut b.node_mut(idx).kind {
            wait.choices = choices;
            wait.auto_approve = auto;
        }
    }

    #[test]
    fn reports_each_inconsistency() {
        let mut b = Builder::new();
        wait(
            &mut b,
            "yn",
            AnswerType::YesNo,
            &["ship", "hold"],
            Some("maybe"),
        );
        wait(&mut b, "pick", AnswerType::Choice, &[], None);
        wait(
            &mut b,
            "count",
            AnswerType::Integer,
            &["1", "lots"],
            Some("2"),
        );
        wait(
            &mut b,
            "which",
            AnswerType::Choice,
            &["ship", "hold"],
            Some("shp"),
        );
        let found = run(&b.finish());
        assert_eq!(
            messages(&found, Code::InvalidAnswerType),
            [
                "wait `yn` answers `yes-no` but lists choices",
                "auto-approve answer `maybe` is not a valid `yes-no` for wait `yn`",
                "wait `pick` answers `choice` but lists no choices",
                "choice `lots` of wait `count` is not a valid `integer`",
                "auto-approve answer `shp` is not a choice of wait `which`",
            ]
        );
    }

    #[test]
    fn consistent_waits_pass() {
        let mut b = Builder::new();
        wait(&mut b, "yn", AnswerType::YesNo, &[], Some("yes"));
        wait(
            &mut b,
            "which",
            AnswerType::Choice,
            &["ship", "hold"],
            Some("hold"),
        );
        wait(&mut b, "text", AnswerType::String, &[], Some("anything"));
        assert!(messages(&run(&b.finish()), Code::InvalidAnswerType).is_empty());
    }
}
