//! An agent's plan as text for the terminal view: each todo behind its mark (`☐` pending,
//! `◐` in progress, `☑` completed, `☒` cancelled), an item under way in its active form
//! ("Running the tests") where the agent gave one, and the plan in one line for the events
//! pane. The text is the model's, so control characters are blanked before it is drawn.

use crate::providers::{Todo, TodoStatus};

/// The mark of a todo's status.
pub(super) fn mark(status: TodoStatus) -> &'static str {
    match status {
        TodoStatus::Pending => "☐",
        TodoStatus::InProgress => "◐",
        TodoStatus::Completed => "☑",
        TodoStatus::Cancelled => "☒",
    }
}

/// A todo's line: its mark, then what it says (its active form while under way).
pub(super) fn line(todo: &Todo) -> String {
    let text = match (&todo.status, &todo.active_form) {
        (TodoStatus::InProgress, Some(active)) => active,
        _ => &todo.content,
    };
    format!("{} {}", mark(todo.status), safe(text))
}

/// `plan 1/3 done · Running the tests`: how far the plan is, and what is under way.
pub(super) fn summary(todos: &[Todo]) -> String {
    let done = todos
        .iter()
        .filter(|todo| todo.status == TodoStatus::Completed)
        .count();
    let mut text = format!("plan {done}/{} done", todos.len());
    if let Some(todo) = todos
        .iter()
        .find(|todo| todo.status == TodoStatus::InProgress)
    {
        let now = todo.active_form.as_ref().unwrap_or(&todo.content);
        text.push_str(" · ");
        text.push_str(&safe(now));
    }
    text
}

/// `text` on one line with its control characters (escape codes, newlines) blanked.
fn safe(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn todo(content: &str, status: TodoStatus, active_form: Option<&str>) -> Todo {
        Todo {
            content: content.to_owned(),
            status,
            active_form: active_form.map(str::to_owned),
        }
    }

    #[test]
    fn each_status_has_its_mark_and_work_under_way_its_active_form() {
        let plan = [
            todo("Read the parser", TodoStatus::Completed, Some("Reading")),
            todo(
                "Run the tests",
                TodoStatus::InProgress,
                Some("Running the tests"),
            ),
            todo("Fix the bug", TodoStatus::InProgress, None),
            todo("Write docs", TodoStatus::Pending, Some("Writing docs")),
            todo("Port the shim", TodoStatus::Cancelled, None),
        ];
        let lines: Vec<String> = plan.iter().map(line).collect();
        assert_eq!(
            lines,
            [
                "☑ Read the parser",
                "◐ Running the tests",
                "◐ Fix the bug",
                "☐ Write docs",
                "☒ Port the shim"
            ]
        );
        assert_eq!(summary(&plan), "plan 1/5 done · Running the tests");
        assert_eq!(summary(&plan[3..]), "plan 0/2 done");
    }

    #[test]
    fn the_models_text_cannot_reach_the_terminal_as_codes() {
        let evil = todo("a\x1b[2Jb\nc", TodoStatus::Pending, None);
        assert_eq!(line(&evil), "☐ a [2Jb c");
    }
}
