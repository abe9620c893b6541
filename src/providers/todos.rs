//! The agent's plan: one todo model for what each backend calls its todo list, plan or
//! tasks — Claude Code's `TodoWrite` and task tools, Codex's `update_plan` (a `todo_list`
//! item), ACP plan updates, OpenCode's todos, Gemini's `write_todos` — and one normaliser
//! per wire shape, so every adapter reads a shape the same way. An adapter reports the
//! agent's whole current list as [`AgentEvent::Plan`] each time it changes ([`PlanReport`]).
//!
//! What the normalisers do with odd items: an item without text (or not an object) is
//! skipped, since there is nothing to show; an item whose status is missing or unknown is
//! kept as `pending`, since it is still on the agent's list.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{AgentEvent, EventSink};

/// One item of the agent's plan.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Todo {
    /// What is to be done (imperative: "Run the tests").
    pub content: String,
    /// Where it stands.
    pub status: TodoStatus,
    /// The item as work under way ("Running the tests"), where the backend gives one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_form: Option<String>,
}

/// Where a [`Todo`] stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TodoStatus {
    /// Not started (or waiting on something).
    Pending,
    /// Being worked on.
    InProgress,
    /// Done.
    Completed,
    /// Dropped (OpenCode and Gemini have it).
    Cancelled,
}

impl TodoStatus {
    /// A backend's word for a status, whatever its case and separators (`in_progress`,
    /// `in-progress`, `InProgress`); `None` for a word no backend uses. Gemini's `blocked`
    /// is `pending`: not started, waiting on something.
    #[must_use]
    pub fn from_wire(word: &str) -> Option<Self> {
        let word: String = word
            .chars()
            .filter(|c| c.is_ascii_alphanumeric())
            .map(|c| c.to_ascii_lowercase())
            .collect();
        match word.as_str() {
            "pending" | "todo" | "notstarted" | "blocked" => Some(Self::Pending),
            "inprogress" | "active" | "running" => Some(Self::InProgress),
            "completed" | "complete" | "done" => Some(Self::Completed),
            "cancelled" | "canceled" => Some(Self::Cancelled),
            _ => None,
        }
    }

    /// Its name, as events write it.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::InProgress => "in-progress",
            Self::Completed => "completed",
            Self::Cancelled => "cancelled",
        }
    }
}

/// `[{content, status, activeForm?}]`: Claude Code's `TodoWrite` input `todos`, OpenCode's
/// `todowrite` input and `todo.updated` event (whose items also carry `priority`, unused).
/// `None` when `todos` is not a list.
#[must_use]
pub(crate) fn from_todo_list(todos: &Value) -> Option<Vec<Todo>> {
    items(todos, |item| {
        Some(todo(
            text(item, "content")?,
            item.get("status").and_then(Value::as_str),
            text(item, "activeForm"),
        ))
    })
}

/// `[{description, status}]`: Gemini's `write_todos` input `todos`.
#[must_use]
pub(crate) fn from_described_list(todos: &Value) -> Option<Vec<Todo>> {
    items(todos, |item| {
        Some(todo(
            text(item, "description")?,
            item.get("status").and_then(Value::as_str),
            None,
        ))
    })
}

/// `[{text, completed}]`: Codex's `todo_list` item `items` (its plan tool's statuses
/// reduced to done or not: an item not completed is `pending`).
#[must_use]
pub(crate) fn from_checklist(list: &Value) -> Option<Vec<Todo>> {
    items(list, |item| {
        let done = item.get("completed").and_then(Value::as_bool) == Some(true);
        Some(Todo {
            content: text(item, "text")?,
            status: if done {
                TodoStatus::Completed
            } else {
                TodoStatus::Pending
            },
            active_form: None,
        })
    })
}

/// An ACP `plan` update's entries (`{content, priority, status}`; priority unused).
#[must_use]
pub(crate) fn from_acp_plan(entries: &[agent_client_protocol::v1::schema::PlanEntry]) -> Vec<Todo> {
    use agent_client_protocol::v1::schema::PlanEntryStatus;
    entries
        .iter()
        .filter(|entry| !entry.content.trim().is_empty())
        .map(|entry| Todo {
            content: entry.content.trim().to_owned(),
            status: match entry.status {
                PlanEntryStatus::InProgress => TodoStatus::InProgress,
                PlanEntryStatus::Completed => TodoStatus::Completed,
                // `Pending`, and any status a later protocol adds.
                _ => TodoStatus::Pending,
            },
            active_form: None,
        })
        .collect()
}

/// The plans of one call on their way out: a list is reported when it differs from the
/// last one reported, so a backend repeating its list (Codex's `item.updated` and
/// `item.completed`) reports it once.
#[derive(Debug, Default)]
pub(crate) struct PlanReport {
    last: Option<Vec<Todo>>,
}

impl PlanReport {
    /// Reports `todos` as the agent's plan, unless it is the plan already reported.
    pub(crate) fn report(&mut self, todos: Vec<Todo>, events: &dyn EventSink) {
        if self.last.as_ref() == Some(&todos) {
            return;
        }
        self.last = Some(todos.clone());
        events.emit(AgentEvent::Plan { todos });
    }
}

/// The todos of `list`'s items that `read` makes one of.
fn items(list: &Value, read: impl Fn(&Value) -> Option<Todo>) -> Option<Vec<Todo>> {
    Some(list.as_array()?.iter().filter_map(read).collect())
}

fn todo(content: String, status: Option<&str>, active_form: Option<String>) -> Todo {
    Todo {
        content,
        status: status
            .and_then(TodoStatus::from_wire)
            .unwrap_or(TodoStatus::Pending),
        active_form,
    }
}

/// A non-blank string field, trimmed.
fn text(item: &Value, field: &str) -> Option<String> {
    let text = item.get(field)?.as_str()?.trim();
    (!text.is_empty()).then(|| text.to_owned())
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use agent_client_protocol::v1::schema::{PlanEntry, PlanEntryPriority, PlanEntryStatus};
    use serde_json::json;

    use super::*;

    fn item(content: &str, status: TodoStatus, active_form: Option<&str>) -> Todo {
        Todo {
            content: content.to_owned(),
            status,
            active_form: active_form.map(str::to_owned),
        }
    }

    #[test]
    fn claude_codes_todo_write_keeps_the_active_form() {
        let input = json!({"todos": [
            {"content": "Read the parser", "status": "completed", "activeForm": "Reading the parser"},
            {"content": "Fix the off-by-one", "status": "in_progress", "activeForm": "Fixing the off-by-one"},
            {"content": "Run the tests", "status": "pending", "activeForm": "Running the tests"}
        ]});
        assert_eq!(
            from_todo_list(&input["todos"]),
            Some(vec![
                item(
                    "Read the parser",
                    TodoStatus::Completed,
                    Some("Reading the parser")
                ),
                item(
                    "Fix the off-by-one",
                    TodoStatus::InProgress,
                    Some("Fixing the off-by-one")
                ),
                item(
                    "Run the tests",
                    TodoStatus::Pending,
                    Some("Running the tests")
                ),
            ])
        );
    }

    #[test]
    fn opencodes_todos_have_priorities_and_cancellations() {
        let event = json!({"type": "todo.updated", "properties": {"sessionID": "ses_A", "todos": [
            {"content": "Sketch the API", "status": "completed", "priority": "high"},
            {"content": "Port the old tests", "status": "cancelled", "priority": "low"},
            {"content": "Write the docs", "status": "pending", "priority": "medium"}
        ]}});
        assert_eq!(
            from_todo_list(&event["properties"]["todos"]),
            Some(vec![
                item("Sketch the API", TodoStatus::Completed, None),
                item("Port the old tests", TodoStatus::Cancelled, None),
                item("Write the docs", TodoStatus::Pending, None),
            ])
        );
    }

    #[test]
    fn odd_items_are_skipped_or_kept_as_pending() {
        let todos = json!([
            {"content": "  Trim me  ", "status": "IN-PROGRESS", "activeForm": ""},
            {"content": "", "status": "pending"},
            {"status": "completed"},
            "not an object",
            {"content": "Unknown status", "status": "someday"},
            {"content": "No status"},
            {"content": 7, "status": "pending"}
        ]);
        assert_eq!(
            from_todo_list(&todos),
            Some(vec![
                item("Trim me", TodoStatus::InProgress, None),
                item("Unknown status", TodoStatus::Pending, None),
                item("No status", TodoStatus::Pending, None),
            ])
        );
        assert_eq!(from_todo_list(&json!({"todos": "none"})), None);
        assert_eq!(from_todo_list(&Value::Null), None);
        assert_eq!(from_todo_list(&json!([])), Some(Vec::new()));
    }

    #[test]
    fn geminis_write_todos_uses_descriptions_and_blocked_is_pending() {
        let input = json!({"todos": [
            {"description": "Find the config loader", "status": "completed"},
            {"description": "Wait for the schema", "status": "blocked"},
            {"description": "Drop the shim", "status": "cancelled"},
            {"description": "Patch the loader", "status": "in_progress"}
        ]});
        assert_eq!(
            from_described_list(&input["todos"]),
            Some(vec![
                item("Find the config loader", TodoStatus::Completed, None),
                item("Wait for the schema", TodoStatus::Pending, None),
                item("Drop the shim", TodoStatus::Cancelled, None),
                item("Patch the loader", TodoStatus::InProgress, None),
            ])
        );
        assert_eq!(
            from_described_list(&json!([{"content": "the wrong field"}])),
            Some(Vec::new())
        );
    }

    #[test]
    fn codexs_checklist_is_done_or_pending() {
        let todo_list = json!({"id": "item_4", "type": "todo_list", "items": [
            {"text": "Inspect the failing test", "completed": true},
            {"text": "Patch the parser", "completed": false},
            {"text": "Re-run the suite"},
            {"completed": true}
        ]});
        assert_eq!(
            from_checklist(&todo_list["items"]),
            Some(vec![
                item("Inspect the failing test", TodoStatus::Completed, None),
                item("Patch the parser", TodoStatus::Pending, None),
                item("Re-run the suite", TodoStatus::Pending, None),
            ])
        );
    }

    #[test]
    fn acp_plan_entries_map_their_statuses() {
        let entries = [
            PlanEntry::new(
                "Plan it",
                PlanEntryPriority::High,
                PlanEntryStatus::Completed,
            ),
            PlanEntry::new("", PlanEntryPriority::Low, PlanEntryStatus::Pending),
            PlanEntry::new(
                "Build it",
                PlanEntryPriority::Medium,
                PlanEntryStatus::InProgress,
            ),
            PlanEntry::new("Ship it", PlanEntryPriority::Low, PlanEntryStatus::Pending),
        ];
        assert_eq!(
            from_acp_plan(&entries),
            vec![
                item("Plan it", TodoStatus::Completed, None),
                item("Build it", TodoStatus::InProgress, None),
                item("Ship it", TodoStatus::Pending, None),
            ]
        );
    }

    #[test]
    fn statuses_are_read_in_any_spelling() {
        for (word, status) in [
            ("pending", Some(TodoStatus::Pending)),
            ("in_progress", Some(TodoStatus::InProgress)),
            ("in-progress", Some(TodoStatus::InProgress)),
            ("InProgress", Some(TodoStatus::InProgress)),
            ("completed", Some(TodoStatus::Completed)),
            ("canceled", Some(TodoStatus::Cancelled)),
            ("blocked", Some(TodoStatus::Pending)),
            ("deleted", None),
            ("", None),
        ] {
            assert_eq!(TodoStatus::from_wire(word), status, "{word}");
        }
    }

    #[test]
    fn a_plan_serialises_kebab_case_and_reads_back() {
        let event = AgentEvent::Plan {
            todos: vec![
                item(
                    "Run the tests",
                    TodoStatus::InProgress,
                    Some("Running the tests"),
                ),
                item("Ship", TodoStatus::Pending, None),
            ],
        };
        let value = serde_json::to_value(&event).unwrap();
        assert_eq!(
            value,
            json!({"type": "plan", "todos": [
                {"content": "Run the tests", "status": "in-progress", "active_form": "Running the tests"},
                {"content": "Ship", "status": "pending"}
            ]})
        );
        assert_eq!(serde_json::from_value::<AgentEvent>(value).unwrap(), event);
    }

    /// A plan fits the published schemas: as a run's agent event, and in a cassette.
    #[test]
    fn a_plan_fits_the_events_and_cassette_schemas() {
        let plan = AgentEvent::Plan {
            todos: vec![
                item(
                    "Run the tests",
                    TodoStatus::InProgress,
                    Some("Running the tests"),
                ),
                item("Drop the shim", TodoStatus::Cancelled, None),
            ],
        };
        let events: Value =
            serde_json::from_str(include_str!("../../schemas/events.schema.json")).unwrap();
        let run_event = crate::runtime::RunEvent::Agent {
            node: std::sync::Arc::from("fix"),
            event: plan.clone(),
        };
        let value = serde_json::to_value(&run_event).unwrap();
        assert!(
            jsonschema::validator_for(&events).unwrap().is_valid(&value),
            "{value}"
        );
        let cassette: Value =
            serde_json::from_str(include_str!("../../schemas/cassette.schema.json")).unwrap();
        let call = json!({"node": "fix", "call": 0, "events": [plan], "reply": {"text": "ok"}});
        let validator = jsonschema::validator_for(&cassette).unwrap();
        let errors: Vec<String> = validator
            .iter_errors(&call)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{errors:?}");
        let odd = json!({"node": "fix", "call": 0, "reply": {"text": "ok"},
            "events": [{"type": "plan", "todos": [{"content": "x", "status": "in_progress"}]}]});
        assert!(!validator.is_valid(&odd), "a status events never write");
    }

    #[test]
    fn an_unchanged_plan_is_reported_once() {
        let seen = Mutex::new(Vec::new());
        let sink = |event: AgentEvent| seen.lock().unwrap().push(event);
        let mut report = PlanReport::default();
        let first = vec![item("A", TodoStatus::Pending, None)];
        let second = vec![item("A", TodoStatus::Completed, None)];
        report.report(first.clone(), &sink);
        report.report(first.clone(), &sink);
        report.report(second.clone(), &sink);
        assert_eq!(
            seen.into_inner().unwrap(),
            [
                AgentEvent::Plan { todos: first },
                AgentEvent::Plan { todos: second }
            ]
        );
    }
}
