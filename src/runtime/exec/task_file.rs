//! A task-loop's tasks file: read, checked, ranked, and its statuses written back.
//!
//! The file is `{"tasks": [...]}` (other top-level keys are kept) or a bare list. A task is
//! an object with an `id` (or, as the seed writes it, a `name`), a `status` (`pending` when
//! absent), the ids it depends on in `depends_on` (or `dependencies`), and a `priority`
//! (lower first). Everything else in it is kept and shown to the body. A write replaces
//! the file in one rename, so a crash never leaves half a file; the keys of every object
//! keep their order.

use std::path::Path;

use serde_json::{Map, Value};

use crate::runtime::NodeError;

/// Statuses that satisfy a dependency.
const DONE: [&str; 2] = ["passing", "skipped"];

/// One task as the loop sees it.
#[derive(Debug)]
pub(super) struct Task {
    pub(super) id: String,
    pub(super) status: String,
    depends_on: Vec<String>,
    priority: Option<f64>,
    /// What the body reads: the task's fields, with `id`, `title`, `status` and
    /// `depends_on` always set.
    pub(super) view: Value,
}

/// A tasks file as read.
#[derive(Debug)]
pub(super) struct TaskFile {
    root: Ordered,
    pub(super) tasks: Vec<Task>,
}

impl TaskFile {
    /// Checks the text read from `path` (or says why it could not be read).
    pub(super) fn read(path: &Path, text: Result<String, String>) -> Result<Self, NodeError> {
        let text = text.map_err(|error| {
            NodeError::fatal(format!(
                "cannot read the tasks file `{}`: {error}; create it (`{{\"tasks\": []}}`) or point `file=` at it",
                path.display()
            ))
        })?;
        Self::parse(&text).map_err(|message| {
            NodeError::fatal(format!("the tasks file `{}`: {message}", path.display()))
        })
    }

    /// Parses and checks a tasks file's text.
    pub(super) fn parse(text: &str) -> Result<Self, String> {
        let root: Ordered = serde_json::from_str(text).map_err(|error| {
            format!(
                "is not JSON (line {}, column {}): {error}",
                error.line(),
                error.column()
            )
        })?;
        let list = match &root {
            Ordered::Array(list) => list,
            Ordered::Object(entries) => match entries.iter().find(|(key, _)| key == "tasks") {
                Some((_, Ordered::Array(list))) => list,
                Some(_) => return Err("`tasks` is not a list: write `\"tasks\": [...]`".to_owned()),
                None => {
                    return Err(
                        "has no `tasks` list: write `{\"tasks\": [...]}` or a bare list of tasks"
                            .to_owned(),
                    );
                }
            },
            _ => {
                return Err("is neither `{\"tasks\": [...]}` nor a list of tasks".to_owned());
            }
        };
        let mut tasks: Vec<Task> = Vec::with_capacity(list.len());
        for (position, task) in list.iter().enumerate() {
            let task = parse_task(position, &task.to_value())?;
            if let Some(first) = tasks.iter().position(|other| other.id == task.id) {
                return Err(format!(
                    "tasks {} and {} both have the id `{}`: give each task its own id",
                    first + 1,
                    position + 1,
                    task.id
                ));
            }
            tasks.push(task);
        }
        Ok(Self { root, tasks })
    }

    /// The tasks ready to start, best first: pending (or left in progress by a run that
    /// died), every dependency passing or skipped, and not excluded by `skip` (running,
    /// or already ended in this run of the loop). Lowest priority first (none last), then
    /// file order.
    pub(super) fn ready(&self, skip: impl Fn(&str) -> bool) -> Vec<&Task> {
        let status = |id: &str| {
            self.tasks
                .iter()
                .find(|task| task.id == id)
                .map(|task| task.status.as_str())
        };
        let mut ready: Vec<&Task> = self
            .tasks
            .iter()
            .filter(|task| matches!(task.status.as_str(), "pending" | "in_progress"))
            .filter(|task| !skip(&task.id))
            .filter(|task| {
                task.depends_on
                    .iter()
                    .all(|dep| status(dep).is_some_and(|status| DONE.contains(&status)))
            })
            .collect();
        // Stable: equal priorities keep file order.
        ready.sort_by(|a, b| {
            let key = |task: &Task| task.priority.unwrap_or(f64::INFINITY);
            key(a).total_cmp(&key(b))
        });
        ready
    }

    /// The tasks left pending that can never start: a dependency failed, or names no task.
    pub(super) fn blocked(&self, skip: impl Fn(&str) -> bool) -> Vec<String> {
        let ready: Vec<&str> = self
            .ready(&skip)
            .iter()
            .map(|task| task.id.as_str())
            .collect();
        self.tasks
            .iter()
            .filter(|task| task.status == "pending" && !skip(&task.id))
            .filter(|task| !ready.contains(&task.id.as_str()))
            .map(|task| task.id.clone())
            .collect()
    }

    /// The status of task `id` now.
    pub(super) fn status_of(&self, id: &str) -> Option<&str> {
        self.tasks
            .iter()
            .find(|task| task.id == id)
            .map(|task| task.status.as_str())
    }

    /// Sets the status of task `id` (a task no longer in the file is left alone).
    pub(super) fn set_status(&mut self, id: &str, status: &str) {
        let Some(position) = self.tasks.iter().position(|task| task.id == id) else {
            return;
        };
        self.tasks[position].status = status.to_owned();
        let list = match &mut self.root {
            Ordered::Array(list) => list,
            Ordered::Object(entries) => match entries.iter_mut().find(|(key, _)| key == "tasks") {
                Some((_, Ordered::Array(list))) => list,
                _ => return,
            },
            _ => return,
        };
        if let Some(Ordered::Object(fields)) = list.get_mut(position) {
            let value = Ordered::Scalar(Value::String(status.to_owned()));
            match fields.iter_mut().find(|(key, _)| key == "status") {
                Some((_, old)) => *old = value,
                None => fields.push(("status".to_owned(), value)),
            }
        }
    }

    /// The file's text, to write back.
    pub(super) fn text(&self) -> Result<String, NodeError> {
        let mut text = serde_json::to_string_pretty(&self.root)
            .map_err(|error| NodeError::fatal(format!("cannot encode the tasks file: {error}")))?;
        text.push('\n');
        Ok(text)
    }
}

/// Reads task `position` (0-based; messages count from 1).
fn parse_task(position: usize, value: &Value) -> Result<Task, String> {
    let at = position + 1;
    let Value::Object(fields) = value else {
        return Err(format!(
            "task {at} is not an object: write `{{\"id\": \"…\", \"title\": \"…\"}}`"
        ));
    };
    let text = |key: &str| -> Result<Option<String>, String> {
        match fields.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(text)) if text.trim().is_empty() => Ok(None),
            Some(Value::String(text)) => Ok(Some(text.clone())),
            Some(Value::Number(n)) if key == "id" => Ok(Some(n.to_string())),
            Some(other) => Err(format!(
                "task {at}: `{key}` is {}, not a string",
                kind(other)
            )),
        }
    };
    let name = text("name")?;
    let Some(id) = text("id")?.or_else(|| name.clone()) else {
        return Err(format!(
            "task {at} has no `id` or `name`: give it one, like `\"id\": \"t{at}\"`"
        ));
    };
    let status = text("status")?.unwrap_or_else(|| "pending".to_owned());
    let dependencies = match (fields.get("depends_on"), fields.get("dependencies")) {
        (Some(list), _) if !list.is_null() => ("depends_on", list),
        (_, Some(list)) => ("dependencies", list),
        _ => ("depends_on", &Value::Null),
    };
    let depends_on = match dependencies.1 {
        Value::Null => Vec::new(),
        Value::Array(items) => items
            .iter()
            .map(|item| match item {
                Value::String(id) => Ok(id.clone()),
                Value::Number(n) => Ok(n.to_string()),
                other => Err(format!(
                    "task `{id}`: `{}` holds {}, not a task id",
                    dependencies.0,
                    kind(other)
                )),
            })
            .collect::<Result<_, _>>()?,
        other => {
            return Err(format!(
                "task `{id}`: `{}` is {}, not a list of task ids",
                dependencies.0,
                kind(other)
            ));
        }
    };
    let priority = match fields.get("priority") {
        None | Some(Value::Null) => None,
        Some(Value::Number(n)) => n.as_f64(),
        Some(other) => {
            return Err(format!(
                "task `{id}`: `priority` is {}, not a number",
                kind(other)
            ));
        }
    };
    let mut view: Map<String, Value> = fields.clone();
    let title = text("title")?.or(name).unwrap_or_else(|| id.clone());
    view.insert("id".to_owned(), Value::String(id.clone()));
    view.insert("title".to_owned(), Value::String(title));
    view.insert("status".to_owned(), Value::String(status.clone()));
    view.insert(
        "depends_on".to_owned(),
        Value::Array(depends_on.iter().cloned().map(Value::String).collect()),
    );
    Ok(Task {
        id,
        status,
        depends_on,
        priority,
        view: Value::Object(view),
    })
}

/// "a number", "a list", … for messages.
fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// JSON that keeps the order of each object's keys, so a file written back differs from
/// the one read only where a status changed.
#[derive(Debug)]
enum Ordered {
    Scalar(Value),
    Array(Vec<Ordered>),
    Object(Vec<(String, Ordered)>),
}

impl Ordered {
    fn to_value(&self) -> Value {
        match self {
            Self::Scalar(value) => value.clone(),
            Self::Array(items) => Value::Array(items.iter().map(Self::to_value).collect()),
            Self::Object(entries) => Value::Object(
                entries
                    .iter()
                    .map(|(key, value)| (key.clone(), value.to_value()))
                    .collect(),
            ),
        }
    }
}

impl serde::Serialize for Ordered {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{SerializeMap, SerializeSeq};
        match self {
            Self::Scalar(value) => value.serialize(serializer),
            Self::Array(items) => {
                let mut seq = serializer.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            Self::Object(entries) => {
                let mut map = serializer.serialize_map(Some(entries.len()))?;
                for (key, value) in entries {
                    map.serialize_entry(key, value)?;
                }
                map.end()
            }
        }
    }
}

impl<'de> serde::Deserialize<'de> for Ordered {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(OrderedVisitor)
    }
}

struct OrderedVisitor;

impl<'de> serde::de::Visitor<'de> for OrderedVisitor {
    type Value = Ordered;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, value: bool) -> Result<Ordered, E> {
        Ok(Ordered::Scalar(Value::Bool(value)))
    }

    fn visit_i64<E>(self, value: i64) -> Result<Ordered, E> {
        Ok(Ordered::Scalar(Value::from(value)))
    }

    fn visit_u64<E>(self, value: u64) -> Result<Ordered, E> {
        Ok(Ordered::Scalar(Value::from(value)))
    }

    fn visit_f64<E>(self, value: f64) -> Result<Ordered, E> {
        Ok(Ordered::Scalar(Value::from(value)))
    }

    fn visit_str<E>(self, value: &str) -> Result<Ordered, E> {
        Ok(Ordered::Scalar(Value::String(value.to_owned())))
    }

    fn visit_string<E>(self, value: String) -> Result<Ordered, E> {
        Ok(Ordered::Scalar(Value::String(value)))
    }

    fn visit_unit<E>(self) -> Result<Ordered, E> {
        Ok(Ordered::Scalar(Value::Null))
    }

    fn visit_none<E>(self) -> Result<Ordered, E> {
        Ok(Ordered::Scalar(Value::Null))
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Ordered, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Ordered::Array(items))
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Ordered, A::Error> {
        let mut entries: Vec<(String, Ordered)> = Vec::new();
        while let Some((key, value)) = map.next_entry::<String, Ordered>()? {
            // A repeated key: the last wins, as in serde_json's own map.
            entries.retain(|(old, _)| *old != key);
            entries.push((key, value));
        }
        Ok(Ordered::Object(entries))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(tasks: &[&Task]) -> Vec<String> {
        tasks.iter().map(|task| task.id.clone()).collect()
    }

    #[test]
    fn reads_both_spellings_and_ranks_by_dependency_then_priority() {
        let file = TaskFile::parse(
            r#"{"version": "1", "tasks": [
                {"id": "a", "name": "Alpha", "priority": 2, "dependencies": []},
                {"id": "b", "status": "pending", "depends_on": ["c"]},
                {"id": "c", "status": "failing"},
                {"name": "delta", "priority": 1},
                {"id": 7, "status": "in_progress"},
                {"id": "e", "dependencies": ["a"]}
            ]}"#,
        )
        .unwrap();
        assert_eq!(ids(&file.ready(|_| false)), ["delta", "a", "7"]);
        assert_eq!(ids(&file.ready(|id| id == "a")), ["delta", "7"]);
        assert_eq!(file.blocked(|_| false), ["b", "e"]);
        let delta = &file.tasks[3].view;
        assert_eq!(delta["id"], "delta");
        assert_eq!(delta["title"], "delta");
        assert_eq!(file.tasks[0].view["title"], "Alpha");
        assert_eq!(file.tasks[0].view["depends_on"], serde_json::json!([]));
    }

    #[test]
    fn writes_back_only_the_status_keeping_key_order() {
        let mut file =
            TaskFile::parse(r#"[{"title": "T", "id": "x", "zeta": {"b": 1, "a": 2}}]"#).unwrap();
        file.set_status("x", "in_progress");
        let text = serde_json::to_string(&file.root).unwrap();
        assert_eq!(
            text,
            r#"[{"title":"T","id":"x","zeta":{"b":1,"a":2},"status":"in_progress"}]"#
        );
        assert_eq!(file.status_of("x"), Some("in_progress"));
    }

    #[test]
    fn bad_files_say_which_task_and_how_to_fix_it() {
        let error = |text: &str| TaskFile::parse(text).unwrap_err();
        assert!(error("{").starts_with("is not JSON (line 1"));
        assert!(error(r#"{"items": []}"#).contains("has no `tasks` list"));
        assert_eq!(
            error(r#"[{"title": "x"}]"#),
            "task 1 has no `id` or `name`: give it one, like `\"id\": \"t1\"`"
        );
        assert_eq!(
            error(r#"[{"id": "a"}, {"id": "a"}]"#),
            "tasks 1 and 2 both have the id `a`: give each task its own id"
        );
        assert_eq!(
            error(r#"[{"id": "a", "dependencies": "b"}]"#),
            "task `a`: `dependencies` is a string, not a list of task ids"
        );
        assert_eq!(
            error(r#"[{"id": "a", "priority": "high"}]"#),
            "task `a`: `priority` is a string, not a number"
        );
    }
}
