//! Claude Code's task tools — `TaskCreate`, `TaskUpdate`, `TaskList` — which it offers in
//! place of `TodoWrite` when its tasks are on (the pinned CLI's default for the models it
//! knows). Each call changes one task and a task's id comes only in `TaskCreate`'s result,
//! so the whole list is kept here from the calls that succeeded, and a plan is made of it
//! at each result that changed it.

use std::collections::HashMap;

use serde_json::Value;

use super::stream::str_field;
use crate::providers::{Todo, TodoStatus};

/// The session's tasks as this call has seen them.
#[derive(Debug, Default)]
pub(super) struct TaskBoard {
    /// Tasks in the order they were created (or listed): (id, todo).
    tasks: Vec<(String, Todo)>,
    /// Task-tool calls waiting for their results: tool-use id → (tool, input).
    calls: HashMap<String, (String, Value)>,
}

impl TaskBoard {
    /// Notes a top-level tool call, if it is a task tool.
    pub(super) fn call(&mut self, id: &str, name: &str, input: &Value) {
        if matches!(name, "TaskCreate" | "TaskUpdate" | "TaskList") {
            self.calls
                .insert(id.to_owned(), (name.to_owned(), input.clone()));
        }
    }

    /// A tool's result: its text, the structured result the CLI adds beside it
    /// (`tool_use_result`, when the line holds this result alone), and whether it failed.
    /// Returns the whole list when the call changed it.
    pub(super) fn result(
        &mut self,
        id: &str,
        text: &str,
        structured: Option<&Value>,
        is_error: bool,
    ) -> Option<Vec<Todo>> {
        let (name, input) = self.calls.remove(id)?;
        if is_error {
            return None;
        }
        let changed = match name.as_str() {
            "TaskCreate" => self.created(&input, text, structured),
            "TaskUpdate" => self.updated(&input, text, structured),
            _ => self.listed(structured?),
        };
        changed.then(|| self.tasks.iter().map(|(_, todo)| todo.clone()).collect())
    }

    /// `TaskCreate {subject, description, activeForm?}`: its id from the result
    /// (`{task: {id}}`, or the text `Task #ID created successfully: …`).
    fn created(&mut self, input: &Value, text: &str, structured: Option<&Value>) -> bool {
        let task = structured.and_then(|result| result.get("task"));
        let id = task.and_then(|task| str_field(task, "id")).or_else(|| {
            let rest = text.trim_start().strip_prefix("Task #")?;
            let (id, after) = rest.split_once(' ')?;
            after.starts_with("created").then(|| id.to_owned())
        });
        let subject = task
            .and_then(|task| str_field(task, "subject"))
            .or_else(|| str_field(input, "subject"))
            .filter(|subject| !subject.trim().is_empty());
        let (Some(id), Some(subject)) = (id, subject) else {
            return false;
        };
        let todo = Todo {
            content: subject.trim().to_owned(),
            status: TodoStatus::Pending,
            active_form: active_form(input),
        };
        match self.tasks.iter_mut().find(|(known, _)| *known == id) {
            Some((_, known)) => *known = todo,
            None => self.tasks.push((id, todo)),
        }
        true
    }

    /// `TaskUpdate {taskId, subject?, activeForm?, status?}`; `status: "deleted"` removes
    /// the task. It succeeded when the result says so (`{success: true}`, or the text
    /// `Updated task #ID …`: a task not found is not an error result). A task created
    /// before this call (a resumed session's) joins the list by its subject, or as
    /// `task #ID` until a `TaskList` names it.
    fn updated(&mut self, input: &Value, text: &str, structured: Option<&Value>) -> bool {
        let succeeded = match structured.and_then(|result| result.get("success")) {
            Some(success) => success.as_bool() == Some(true),
            None => text.trim_start().starts_with("Updated task #"),
        };
        let Some(id) = str_field(input, "taskId").filter(|_| succeeded) else {
            return false;
        };
        let status = str_field(input, "status");
        if status.as_deref() == Some("deleted") {
            self.tasks.retain(|(known, _)| *known != id);
            return true;
        }
        let subject = str_field(input, "subject").filter(|subject| !subject.trim().is_empty());
        let at = match self.tasks.iter().position(|(known, _)| *known == id) {
            Some(at) => at,
            None => {
                let content = subject.clone().unwrap_or_else(|| format!("task #{id}"));
                self.tasks.push((
                    id,
                    Todo {
                        content,
                        status: TodoStatus::Pending,
                        active_form: None,
                    },
                ));
                self.tasks.len() - 1
            }
        };
        let todo = &mut self.tasks[at].1;
        if let Some(subject) = subject {
            subject.trim().clone_into(&mut todo.content);
        }
        if let Some(status) = status.as_deref().and_then(TodoStatus::from_wire) {
            todo.status = status;
        }
        if let Some(active) = active_form(input) {
            todo.active_form = Some(active);
        }
        true
    }

    /// `TaskList`'s result `{tasks: [{id, subject, status}]}`: the session's whole list,
    /// keeping the active forms this call saw.
    fn listed(&mut self, structured: &Value) -> bool {
        let Some(listed) = structured.get("tasks").and_then(Value::as_array) else {
            return false;
        };
        let tasks = listed
            .iter()
            .filter_map(|task| {
                let id = str_field(task, "id")?;
                let subject = str_field(task, "subject")?;
                let active_form = self
                    .tasks
                    .iter()
                    .find(|(known, _)| *known == id)
                    .and_then(|(_, todo)| todo.active_form.clone());
                let status = str_field(task, "status")
                    .as_deref()
                    .and_then(TodoStatus::from_wire)
                    .unwrap_or(TodoStatus::Pending);
                Some((
                    id,
                    Todo {
                        content: subject.trim().to_owned(),
                        status,
                        active_form,
                    },
                ))
            })
            .collect();
        self.tasks = tasks;
        true
    }
}

fn active_form(input: &Value) -> Option<String> {
    str_field(input, "activeForm")
        .map(|active| active.trim().to_owned())
        .filter(|active| !active.is_empty())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn todo(content: &str, status: TodoStatus, active_form: Option<&str>) -> Todo {
        Todo {
            content: content.to_owned(),
            status,
            active_form: active_form.map(str::to_owned),
        }
    }

    #[test]
    fn tasks_created_and_updated_make_the_list() {
        let mut board = TaskBoard::default();
        board.call(
            "toolu_1",
            "TaskCreate",
            &json!({"subject": "Run the tests", "description": "all of them", "activeForm": "Running the tests"}),
        );
        // From the structured result.
        let after_create = board.result(
            "toolu_1",
            "Task #1 created successfully: Run the tests",
            Some(&json!({"task": {"id": "1", "subject": "Run the tests"}})),
            false,
        );
        assert_eq!(
            after_create,
            Some(vec![todo(
                "Run the tests",
                TodoStatus::Pending,
                Some("Running the tests")
            )])
        );
        // From the text alone.
        board.call(
            "toolu_2",
            "TaskCreate",
            &json!({"subject": "Fix the bug", "description": "the off-by-one"}),
        );
        let after_second = board.result(
            "toolu_2",
            "Task #2 created successfully: Fix the bug",
            None,
            false,
        );
        assert_eq!(after_second.map(|list| list.len()), Some(2));
        board.call(
            "toolu_3",
            "TaskUpdate",
            &json!({"taskId": "1", "status": "in_progress"}),
        );
        let after_update = board.result(
            "toolu_3",
            "Updated task #1 status",
            Some(&json!({"success": true, "taskId": "1", "updatedFields": ["status"]})),
            false,
        );
        assert_eq!(
            after_update,
            Some(vec![
                todo(
                    "Run the tests",
                    TodoStatus::InProgress,
                    Some("Running the tests")
                ),
                todo("Fix the bug", TodoStatus::Pending, None),
            ])
        );
        board.call(
            "toolu_4",
            "TaskUpdate",
            &json!({"taskId": "2", "status": "deleted"}),
        );
        let after_delete = board.result("toolu_4", "Updated task #2 deleted", None, false);
        assert_eq!(after_delete.map(|list| list.len()), Some(1));
    }

    #[test]
    fn failed_or_unknown_calls_change_nothing() {
        let mut board = TaskBoard::default();
        // Not a task tool.
        board.call("toolu_0", "Read", &json!({"file_path": "a"}));
        assert_eq!(board.result("toolu_0", "text", None, false), None);
        // An error result.
        board.call("toolu_1", "TaskCreate", &json!({"subject": "A"}));
        assert_eq!(
            board.result("toolu_1", "No such tool available: TaskCreate", None, true),
            None
        );
        // A task not found is reported as a plain result.
        board.call(
            "toolu_2",
            "TaskUpdate",
            &json!({"taskId": "9", "status": "completed"}),
        );
        assert_eq!(
            board.result(
                "toolu_2",
                "Task #9 not found",
                Some(&json!({"success": false, "taskId": "9", "error": "Task not found"})),
                false
            ),
            None
        );
        // A result nobody asked for.
        assert_eq!(
            board.result("toolu_x", "Task #3 created", None, false),
            None
        );
    }

    #[test]
    fn a_list_or_an_update_of_an_earlier_task_fills_the_board() {
        let mut board = TaskBoard::default();
        board.call(
            "toolu_1",
            "TaskUpdate",
            &json!({"taskId": "4", "status": "completed"}),
        );
        assert_eq!(
            board.result("toolu_1", "Updated task #4 status", None, false),
            Some(vec![todo("task #4", TodoStatus::Completed, None)])
        );
        board.call("toolu_2", "TaskList", &json!({}));
        let listed = json!({"tasks": [
            {"id": "3", "subject": "Write the parser", "status": "completed", "blockedBy": []},
            {"id": "4", "subject": "Test the parser", "status": "completed", "blockedBy": []},
            {"id": "5", "subject": "Ship it", "status": "pending", "blockedBy": ["4"]}
        ]});
        assert_eq!(
            board.result(
                "toolu_2",
                "#3 [completed] Write the parser",
                Some(&listed),
                false
            ),
            Some(vec![
                todo("Write the parser", TodoStatus::Completed, None),
                todo("Test the parser", TodoStatus::Completed, None),
                todo("Ship it", TodoStatus::Pending, None),
            ])
        );
    }
}
