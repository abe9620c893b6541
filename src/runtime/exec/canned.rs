//! Canned results for a dry run (`RunContext::dry_run`, `atomic run --dry-run`): what an
//! agent replies, what a tool prints and what a wait is answered, chosen from the declared
//! types so the run can walk on. Nothing is called and no process starts.

use crate::ir::{AnswerType, OutputMap, OutputSource, ParseMode, ValueType, Wait, Workflow};

/// The text an agent or tool "produces" in a dry run: the empty value of the type its
/// first result output wants (`[]` for an array, `0` for a number, `yes` for yes-no…).
pub(crate) fn text(workflow: &Workflow, outputs: &[OutputMap]) -> String {
    let Some(output) = outputs
        .iter()
        .find(|output| output.from == OutputSource::Result)
    else {
        return "(dry run)".to_owned();
    };
    let ty = workflow
        .field(&output.field.value)
        .map_or(&ValueType::Any, |field| &field.ty);
    match output.parse {
        ParseMode::YesNo => "yes".to_owned(),
        ParseMode::Number => "0".to_owned(),
        ParseMode::Lines => String::new(),
        ParseMode::Json => match ty {
            ValueType::String => "\"\"".to_owned(),
            other => empty(other, "null").to_owned(),
        },
        ParseMode::Text => match ty {
            ValueType::String | ValueType::Any => "(dry run)".to_owned(),
            other => empty(other, "").to_owned(),
        },
    }
}

fn empty(ty: &ValueType, any: &'static str) -> &'static str {
    match ty {
        ValueType::Integer | ValueType::Number => "0",
        ValueType::Boolean => "false",
        ValueType::Array => "[]",
        ValueType::Object | ValueType::Schema(_) => "{}",
        ValueType::String | ValueType::Any => any,
    }
}

/// The answer a wait gets in a dry run: its `auto-approve` answer, else the first choice,
/// `yes`, or the empty value of its type.
pub(crate) fn answer(wait: &Wait) -> String {
    if let Some(auto) = &wait.auto_approve {
        return auto.answer.value.clone();
    }
    match &wait.answer {
        AnswerType::Choice => wait
            .choices
            .first()
            .map_or_else(String::new, |choice| choice.value.value.clone()),
        AnswerType::YesNo => "yes".to_owned(),
        AnswerType::Boolean => "true".to_owned(),
        AnswerType::Integer | AnswerType::Number => "0".to_owned(),
        AnswerType::Json(_) => "{}".to_owned(),
        AnswerType::String => "(dry run)".to_owned(),
    }
}
