//! `wait`: what the run asks when it pauses, and checking the answer it gets on resume.

use serde_json::{Value, json};

use super::mapping::{Raw, map_outputs};
use crate::ir::{AnswerType, NodeIdx, NodeKind, OutputSource, Wait};
use crate::runtime::frame::{Frame, Write};
use crate::runtime::shared::Shared;
use crate::runtime::{Choice, NodeError};
use crate::store::Timestamp;

/// The question of a paused wait.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Question {
    pub(crate) header: Option<String>,
    pub(crate) prompt: String,
    pub(crate) answer: String,
    pub(crate) choices: Vec<Choice>,
    pub(crate) schema: Option<String>,
    /// An `auto-approve` wait's own answer and when it gives it, once that is scheduled.
    pub(crate) auto_answer: Option<(String, Timestamp)>,
}

fn wait_of(shared: &Shared, node: NodeIdx) -> Result<&Wait, NodeError> {
    match &shared.workflow().node(node).kind {
        NodeKind::Wait(wait) => Ok(wait),
        _ => Err(NodeError::fatal("not a wait node")),
    }
}

/// Renders the wait's question.
pub(crate) fn pending_wait(
    shared: &Shared,
    frame: &Frame,
    node: NodeIdx,
    seq: u64,
) -> Result<Question, NodeError> {
    let wait = wait_of(shared, node)?;
    let scope = shared.scope(frame, Some(node), seq);
    let prompt = shared.program.templates.render(&wait.prompt, &scope)?;
    Ok(Question {
        header: wait.header.clone(),
        prompt,
        answer: wait.answer.name().to_owned(),
        choices: wait
            .choices
            .iter()
            .map(|choice| Choice {
                value: choice.value.value.clone(),
                label: choice.label.clone(),
                description: choice.description.clone(),
            })
            .collect(),
        schema: match &wait.answer {
            AnswerType::Json(Some(schema)) => Some(schema.value.clone()),
            _ => None,
        },
        auto_answer: None,
    })
}

/// Checks `answer` against the wait's type and maps it into writes.
///
/// # Errors
/// A message saying what answer was expected (the run stays paused).
pub(crate) fn answer_writes(
    shared: &Shared,
    node: NodeIdx,
    answer: &str,
) -> Result<Vec<Write>, String> {
    let wait = wait_of(shared, node).map_err(|error| error.message)?;
    let typed = typed_answer(shared, wait, answer)?;
    let mut writes = map_outputs(shared, &wait.outputs, |from| match from {
        OutputSource::Result => Ok(Raw::Typed(typed.clone())),
        _ => Err(NodeError::fatal(
            "a wait's output has only its answer (`from=\"result\"`)",
        )),
    })
    .map_err(|error| error.message)?;
    writes.push(Write::Output(
        shared.id(node).clone(),
        json!({ "answer": typed }),
    ));
    Ok(writes)
}

/// Checks `answer` against `wait`'s type (its schema read from `base`), as
/// [`answer_writes`] will: for a wait in a block, checked before the run resumes.
///
/// # Errors
/// A message saying what answer was expected.
pub(crate) fn check_answer(
    wait: &Wait,
    base: &std::path::Path,
    files: &dyn crate::source::Files,
    answer: &str,
) -> Result<(), String> {
    let value = crate::ir::value::parse_answer(&wait.answer, &wait.choices, answer)?;
    if let AnswerType::Json(Some(schema)) = &wait.answer {
        crate::runtime::Schemas::load([schema.value.as_str()], base, files)?
            .validate(&schema.value, &value)
            .map_err(|error| error.message)?;
    }
    Ok(())
}

fn typed_answer(shared: &Shared, wait: &Wait, answer: &str) -> Result<Value, String> {
    // The same judgement `check` makes of choices and auto-approve answers.
    let value = crate::ir::value::parse_answer(&wait.answer, &wait.choices, answer)?;
    if let AnswerType::Json(Some(schema)) = &wait.answer {
        shared
            .program
            .schemas
            .validate(&schema.value, &value)
            .map_err(|error| error.message)?;
    }
    Ok(value)
}
