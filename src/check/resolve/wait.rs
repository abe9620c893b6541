//! `wait "<id>" prompt=… answer=… schema=… { choice …; output …; auto-approve … }`.

use super::agent::{prompt, wrote_prompt};
use super::output::resolve_outputs;
use super::resolver::Resolver;
use super::set::empty;
use crate::check::structure::Checked;
use crate::diagnostic::{Code, Diagnostic};
use crate::ir::{AnswerType, AutoApprove, Wait, WaitChoice};

/// The question, its answer type and choices.
pub(super) fn resolve_wait(r: &mut Resolver<'_>, checked: &Checked<'_>) -> Wait {
    let prompt = prompt(r, checked).unwrap_or_else(|| {
        if !wrote_prompt(checked) {
            r.report(
                Diagnostic::new(
                    Code::MissingProperty,
                    checked.name_span(),
                    "`wait` needs a prompt",
                )
                .label("wait without a question")
                .help("add `prompt=\"…\"`: the question shown to the person"),
            );
        }
        empty(checked)
    });
    let choices = choices(r, checked);
    let schema = r.string(checked.prop("schema"));
    let answer = match r.string(checked.prop("answer")) {
        Some(answer) => {
            if let (Some(schema), false) = (&schema, answer.value == "json") {
                r.report(
                    Diagnostic::new(
                        Code::InvalidValue,
                        schema.span,
                        format!("`schema` does not apply to a `{}` answer", answer.value),
                    )
                    .label("schema for a non-JSON answer")
                    .with_label(answer.span, "answer type")
                    .help("use `answer=\"json\"` with a schema, or remove `schema`"),
                );
            }
            match answer.value.as_str() {
                "json" => AnswerType::Json(schema),
                "yes-no" => AnswerType::YesNo,
                "integer" => AnswerType::Integer,
                "number" => AnswerType::Number,
                "boolean" => AnswerType::Boolean,
                "choice" => AnswerType::Choice,
                _ => AnswerType::String,
            }
        }
        None if schema.is_some() => AnswerType::Json(schema),
        None if !choices.is_empty() => AnswerType::Choice,
        None => AnswerType::String,
    };
    let auto_approve = checked.child("auto-approve").and_then(|auto| {
        Some(AutoApprove {
            after: r.duration(auto.prop("after"))?,
            answer: r.string(auto.prop("answer"))?,
        })
    });
    Wait {
        prompt,
        answer,
        choices,
        outputs: resolve_outputs(r, checked, "wait/output"),
        auto_approve,
    }
}

fn choices(r: &mut Resolver<'_>, checked: &Checked<'_>) -> Vec<WaitChoice> {
    let mut choices: Vec<WaitChoice> = Vec::new();
    for choice in checked.children_of("choice") {
        let Some(value) = r.string(choice.arg(0)) else {
            continue;
        };
        if let Some(first) = choices
            .iter()
            .find(|first| first.value.value == value.value)
        {
            r.report(
                Diagnostic::new(
                    Code::DuplicateId,
                    value.span,
                    format!("choice `{}` is given twice", value.value),
                )
                .label("given again here")
                .with_label(first.value.span, "first given here")
                .help("each choice needs its own value"),
            );
            continue;
        }
        choices.push(WaitChoice {
            value,
            label: r.string(choice.prop("label")).map(|label| label.value),
        });
    }
    choices
}

#[cfg(test)]
mod tests {
    use crate::check::testing::{codes, resolve_text};
    use crate::diagnostic::Code;
    use crate::ir::{AnswerType, NodeKind};

    fn answer(head: &str, body: &str) -> (AnswerType, Vec<Code>) {
        let text = format!("workflow \"w\" {{ wait \"q\" {head} {{ {body} }} }}");
        let (outcome, _) = resolve_text(&text);
        let codes = outcome.diagnostics.iter().map(|d| d.code).collect();
        let workflow = outcome.value.unwrap();
        let NodeKind::Wait(wait) = &workflow.nodes[0].kind else {
            panic!()
        };
        (wait.answer.clone(), codes)
    }

    #[test]
    fn answer_types() {
        assert_eq!(answer("prompt=\"?\"", ""), (AnswerType::String, vec![]));
        assert_eq!(
            answer("prompt=\"?\"", "choice \"a\"; choice \"b\";").0,
            AnswerType::Choice
        );
        assert_eq!(
            answer("prompt=\"?\" answer=\"yes-no\"", "").0,
            AnswerType::YesNo
        );
        assert!(matches!(
            answer("prompt=\"?\" schema=\"s.json\"", "").0,
            AnswerType::Json(Some(_))
        ));
        assert_eq!(
            answer("prompt=\"?\" answer=\"integer\" schema=\"s.json\"", "").1,
            [Code::InvalidValue]
        );
        assert_eq!(answer("", "prompt \"?\"").1, []);
        assert_eq!(answer("", "").1, [Code::MissingProperty]);
        assert_eq!(
            answer("prompt=\"?\"", "prompt \"?\"").1,
            [Code::DuplicateProperty]
        );
        assert_eq!(
            answer("prompt=\"?\"", "choice \"a\"; choice \"a\";").1,
            [Code::DuplicateId]
        );
    }

    #[test]
    fn auto_approve_needs_both_settings() {
        let text = "workflow \"w\" { wait \"q\" prompt=\"?\" { auto-approve after=\"1h\"; } }";
        assert_eq!(codes(text), [Code::MissingProperty]);
    }
}
