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
use serde_json::Value;

use crate::ir::{AnswerType, NodeKind, ParseMode, ValueType, Wait, value};

use super::super::driver::Facts;

/// Reports inconsistent waits.
pub(crate) fn check(facts: &Facts<'_>, out: &mut Vec<Diagnostic>) {
    for node in &facts.workflow.nodes {
        let NodeKind::Wait(wait) = &node.kind else {
            continue;
        };
        let id = &node.id.value;
        let kind = wait.answer.name();
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
                    if !valid_value(wait, &choice.value.value) {
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
        check_output_types(facts, wait, id, out);
    }
}

fn check_auto_approve(
    wait: &Wait,
    id: &str,
    auto: &crate::ir::AutoApprove,
    out: &mut Vec<Diagnostic>,
) {
    let answer = &auto.answer;
    let kind = wait.answer.name();
    if wait.answer == AnswerType::Choice && !wait.choices.is_empty() {
        if valid_value(wait, &answer.value) {
            return;
        }
        let values: Vec<&str> = wait
            .choices
            .iter()
            .map(|choice| choice.value.value.as_str())
            .collect();
        let near = did_you_mean(&answer.value, values.iter().copied());
        let help = match near {
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
            .help(help)
            .maybe_replace_with(near.map(str::to_owned)),
        );
    } else if !valid_value(wait, &answer.value) {
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

/// Whether `text` is an answer the runtime accepts for `wait` (one judgement, in
/// [`crate::ir::value`]); choices are offered, not enforced, except for `choice` answers.
fn valid_value(wait: &Wait, text: &str) -> bool {
    value::parse_answer(&wait.answer, &wait.choices, text).is_ok()
}

/// Reports an output field that cannot hold the answers the wait accepts (choices into an
/// integer field, free text into a boolean).
fn check_output_types(facts: &Facts<'_>, wait: &Wait, id: &str, out: &mut Vec<Diagnostic>) {
    let kind = wait.answer.name();
    for output in &wait.outputs {
        // A collecting reducer (`append`, `merge`) takes an item, not a whole value of the
        // field's type: its own checks judge the write.
        let Some(field) = facts
            .workflow
            .state
            .iter()
            .find(|field| field.name.value == output.field.value)
            .filter(|field| crate::check::analyze::model::replaces(&field.reducer))
        else {
            continue;
        };
        let ty = &field.ty;
        let answers_text = matches!(wait.answer, AnswerType::String | AnswerType::Choice);
        // As the runtime maps it: a text answer goes through the output's `parse=` first.
        let parsed = |text: &str| -> Option<Value> {
            match output.parse {
                ParseMode::Text => Some(Value::String(text.to_owned())),
                ParseMode::YesNo => value::parse_yes_no(text).map(Value::Bool),
                ParseMode::Number => value::parse_number(text.trim()),
                ParseMode::Json => serde_json::from_str(text).ok(),
                ParseMode::Lines => Some(Value::Array(
                    text.lines()
                        .filter(|line| !line.trim().is_empty())
                        .map(|line| Value::String(line.to_owned()))
                        .collect(),
                )),
            }
        };
        let misfit = if wait.answer == AnswerType::Choice {
            wait.choices
                .iter()
                .find(|choice| {
                    parsed(&choice.value.value)
                        .is_none_or(|value| value::coerce(ty, value).is_err())
                })
                .map(|choice| format!("choice `{}` is not {}", choice.value.value, ty.article()))
        } else {
            let from = match output.parse {
                ParseMode::Text => value::answer_value_type(&wait.answer),
                _ if !answers_text => value::answer_value_type(&wait.answer),
                ParseMode::YesNo => Some(ValueType::Boolean),
                ParseMode::Number => Some(ValueType::Number),
                ParseMode::Json => None,
                ParseMode::Lines => Some(ValueType::Array),
            };
            from.filter(|from| !value::always_fits(from, ty))
                .map(|from| {
                    format!(
                        "a `{kind}` answer is {}, not always {}",
                        from.article(),
                        ty.article()
                    )
                })
        };
        if let Some(reason) = misfit {
            out.push(
                Diagnostic::new(
                    Code::InvalidAnswerType,
                    output.field.span,
                    format!(
                        "wait `{id}` writes its `{kind}` answer to `{}`, a field of type `{}`",
                        field.name.value,
                        ty.name()
                    ),
                )
                .label(reason)
                .with_label(field.name.span, format!("declared `{}` here", ty.name()))
                .help(format!(
                    "give the wait an answer type whose values are {} (`answer=\"{}\"`), or change the field's type",
                    ty.article(),
                    suggested_answer(ty)
                )),
            );
        }
    }
}

fn suggested_answer(ty: &ValueType) -> &'static str {
    match ty {
        ValueType::Integer => "integer",
        ValueType::Number => "number",
        ValueType::Boolean => "yes-no",
        ValueType::String => "string",
        ValueType::Array | ValueType::Object | ValueType::Any | ValueType::Schema(_) => "json",
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
                description: None,
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
