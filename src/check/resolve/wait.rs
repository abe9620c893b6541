//! `wait "<id>" header=… prompt=… answer=… schema=… { choice …; output …; auto-approve … }`.

use super::agent::{prompt, wrote_prompt};
use super::output::resolve_outputs;
use super::resolver::Resolver;
use super::set::empty;
use crate::check::structure::Checked;
use crate::diagnostic::{Code, Diagnostic};
use crate::ir::{AnswerType, AutoApprove, Wait, WaitChoice};
use crate::source::Spanned;

/// The longest `header=` drawn on one line beside the prompt without being cut (Claude
/// Code's own question chips take 12; atomic's views have room for a few words more).
const MAX_HEADER_CHARS: usize = 30;

/// The question, its header, answer type and choices.
pub(super) fn resolve_wait(r: &mut Resolver<'_>, checked: &Checked<'_>) -> Wait {
    let header = r.string(checked.prop("header")).map(|header| {
        check_header(r, &header);
        header.value
    });
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
        header,
        prompt,
        answer,
        choices,
        outputs: resolve_outputs(r, checked, "wait/output"),
        auto_approve,
    }
}

/// A header is a title on one line: a second line or a long one breaks the layout of
/// every view that draws it, so it is worth a warning (the run itself is unaffected).
fn check_header(r: &mut Resolver<'_>, header: &Spanned<String>) {
    let chars = header.value.chars().count();
    let (message, label) = if header.value.contains('\n') {
        (
            "the `wait`'s header spans more than one line".to_owned(),
            "a header is one line",
        )
    } else if chars > MAX_HEADER_CHARS {
        (
            format!(
                "the `wait`'s header is {chars} characters long; at most {MAX_HEADER_CHARS} fit on its line"
            ),
            "too long for a title",
        )
    } else {
        return;
    };
    r.report(
        Diagnostic::new(Code::LongWaitHeader, header.span, message)
            .label(label)
            .help("keep the header to a few words, like `header=\"Database\"`, and move the rest into `prompt=`"),
    );
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
            description: r
                .string(choice.prop("description"))
                .map(|description| description.value),
        });
    }
    choices
}

#[cfg(test)]
mod tests {
    use crate::check::testing::{codes, only, resolve_text};
    use crate::diagnostic::{Code, Severity};
    use crate::ir::{AnswerType, NodeKind, Wait};

    fn wait(text: &str) -> Wait {
        let (outcome, _) = resolve_text(text);
        assert_eq!(outcome.diagnostics, []);
        let workflow = outcome.value.unwrap();
        let NodeKind::Wait(wait) = &workflow.nodes[0].kind else {
            panic!("a wait")
        };
        (**wait).clone()
    }

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
    fn the_header_and_the_choices_descriptions_reach_the_ir() {
        let wait = wait(
            r#"workflow "w" {
    wait "pick" header="Database" prompt="Which database should the service use?" {
        choice "pg" label="PostgreSQL" description="Relational, the team knows it"
        choice "sqlite" label="SQLite"
    }
}"#,
        );
        assert_eq!(wait.header.as_deref(), Some("Database"));
        let described: Vec<(&str, Option<&str>, Option<&str>)> = wait
            .choices
            .iter()
            .map(|choice| {
                (
                    choice.value.value.as_str(),
                    choice.label.as_deref(),
                    choice.description.as_deref(),
                )
            })
            .collect();
        assert_eq!(
            described,
            [
                (
                    "pg",
                    Some("PostgreSQL"),
                    Some("Relational, the team knows it")
                ),
                ("sqlite", Some("SQLite"), None),
            ]
        );
        let plain = self::wait(r#"workflow "w" { wait "q" prompt="?"; }"#);
        assert_eq!(plain.header, None);
    }

    #[test]
    fn a_header_of_several_lines_or_many_words_is_a_warning() {
        let (long, at) = only(
            r#"workflow "w" { wait "q" header="Which database the new service should use" prompt="?"; }"#,
            Code::LongWaitHeader,
        );
        assert_eq!(at, r#""Which database the new service should use""#);
        assert_eq!(long.severity, Severity::Warning);
        assert!(
            long.message.contains("is 41 characters long"),
            "{}",
            long.message
        );
        assert!(long.help.is_some());
        let (lines, _) = only(
            r#"workflow "w" { wait "q" header="Database\nchoice" prompt="?"; }"#,
            Code::LongWaitHeader,
        );
        assert!(
            lines.message.contains("more than one line"),
            "{}",
            lines.message
        );
        // Thirty characters fit.
        let fits = format!(
            r#"workflow "w" {{ wait "q" header="{}" prompt="?"; }}"#,
            "x".repeat(super::MAX_HEADER_CHARS)
        );
        assert_eq!(codes(&fits), []);
        assert_eq!(
            codes(r#"workflow "w" { wait "q" header=5 prompt="?"; }"#),
            [Code::WrongType]
        );
    }

    #[test]
    fn auto_approve_needs_both_settings() {
        let text = "workflow \"w\" { wait \"q\" prompt=\"?\" { auto-approve after=\"1h\"; } }";
        assert_eq!(codes(text), [Code::MissingProperty]);
    }
}
