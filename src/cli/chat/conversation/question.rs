//! An agent's question to the person (Claude Code's `AskUserQuestion`, which pauses the
//! call like a permission request): shown as a [`Question`], and the person's answers
//! carried back both ways the CLI can take them — in the tool's input, should the agent
//! ask the same again (the answered approval), and told plainly in the prompt that
//! continues the session, since a CLI restarted on its session does not ask again by
//! itself.

use crate::cli::chat::transcript::{Question, QuestionItem, QuestionOption};
use crate::providers::PermissionAsk;

/// The question `ask` puts to the person, when it is one.
pub(super) fn question_of(ask: &PermissionAsk) -> Option<Question> {
    let asked = ask.questions()?;
    Some(Question {
        items: asked
            .into_iter()
            .map(|asked| QuestionItem {
                header: asked.header,
                text: asked.question,
                options: asked
                    .options
                    .into_iter()
                    .map(|(label, description)| QuestionOption { label, description })
                    .collect(),
                multi: asked.multi,
            })
            .collect(),
    })
}

/// What the agent is told when its session continues with the person's `answers` (one per
/// item; a missing one reads as unanswered).
pub(super) fn answered_prompt(question: &Question, answers: &[String]) -> String {
    let lines: Vec<String> = question
        .items
        .iter()
        .enumerate()
        .map(|(index, item)| {
            let answer = answers
                .get(index)
                .map(|answer| answer.trim())
                .filter(|answer| !answer.is_empty())
                .unwrap_or("(no answer)");
            format!("- \"{}\": {answer}", item.text)
        })
        .collect();
    let (what, them) = if question.items.len() == 1 {
        ("question", "this answer")
    } else {
        ("questions", "these answers")
    };
    format!(
        "The person answered your {what}:\n{}\nCarry on with the task with {them}; do not ask again.",
        lines.join("\n")
    )
}

/// What the agent is told when the person dismissed its question.
pub(super) fn dismissed_prompt(question: &Question) -> String {
    let asked: Vec<String> = question
        .items
        .iter()
        .map(|item| format!("\"{}\"", item.text))
        .collect();
    format!(
        "The person chose not to answer your question {}. Do not ask it again; carry on with your best judgement.",
        asked.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn an_ask_user_question_reads_as_a_question_and_its_answers_as_a_prompt() {
        let ask = PermissionAsk {
            tool: "AskUserQuestion".to_owned(),
            input: json!({"questions": [{"question": "Which library?", "header": "Library",
                "multiSelect": false, "options": [{"label": "dayjs", "description": "Small"},
                {"label": "luxon", "description": "Zones"}]}]}),
        };
        let question = question_of(&ask).expect("a question");
        assert_eq!(question.items[0].header.as_deref(), Some("Library"));
        assert_eq!(question.items[0].options[1].label, "luxon");
        assert_eq!(
            question.items[0].options[0].description.as_deref(),
            Some("Small")
        );
        let prompt = answered_prompt(&question, &["dayjs".to_owned()]);
        assert!(prompt.contains("- \"Which library?\": dayjs"), "{prompt}");
        let bash = PermissionAsk {
            tool: "Bash".to_owned(),
            input: json!({"command": "ls"}),
        };
        assert!(question_of(&bash).is_none());
    }
}
