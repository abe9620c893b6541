//! What Codex's JSON stream leaves out, read from the session's rollout file
//! (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-…-<thread>.jsonl`, one JSON record per line):
//! a patch its sandbox refuses reaches the model as a call's output (`patch rejected: …`)
//! but produces no item on stdout, so atomic reports it as a failed `file_change` tool.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

/// One patch the sandbox refused in the thread's latest turn.
#[derive(Debug, PartialEq)]
pub(super) struct RefusedPatch {
    /// The model's call id.
    pub call_id: String,
    /// The command or patch the model sent.
    pub input: Value,
    /// What Codex told the model.
    pub output: String,
}

/// The patches refused in the latest turn of `thread` whose rollout is under `home`.
pub(super) fn refused_patches(home: &Path, thread: &str) -> Vec<RefusedPatch> {
    let Some(file) = find(&home.join("sessions"), thread, 4) else {
        return Vec::new();
    };
    std::fs::read_to_string(file)
        .map(|text| parse(&text))
        .unwrap_or_default()
}

/// The rollout file of `thread` under `dir` (year/month/day directories).
fn find(dir: &Path, thread: &str, depth: u8) -> Option<PathBuf> {
    let suffix = format!("-{thread}.jsonl");
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let path = entry.path();
        if path.is_dir() && depth > 0 {
            if let Some(found) = find(&path, thread, depth - 1) {
                return Some(found);
            }
        } else if path
            .file_name()
            .and_then(|name| name.to_str())
            .is_some_and(|name| name.starts_with("rollout-") && name.ends_with(&suffix))
        {
            return Some(path);
        }
    }
    None
}

/// The refused patches of the latest turn in a rollout's text.
fn parse(text: &str) -> Vec<RefusedPatch> {
    let records: Vec<Value> = text
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect();
    // Only the turn this call ran: the records after the last `task_started`.
    let start = records
        .iter()
        .rposition(|record| {
            record["type"] == "event_msg" && record["payload"]["type"] == "task_started"
        })
        .unwrap_or(0);
    let turn = &records[start..];
    let calls: Vec<&Value> = turn
        .iter()
        .filter(|record| record["type"] == "response_item")
        .map(|record| &record["payload"])
        .collect();
    calls
        .iter()
        .filter(|item| {
            item["type"]
                .as_str()
                .is_some_and(|kind| kind.ends_with("call_output"))
        })
        .filter_map(|output| {
            let text = output_text(&output["output"]);
            if !text.starts_with("patch rejected") {
                return None;
            }
            let call_id = output["call_id"].as_str()?.to_owned();
            let call = calls.iter().find(|item| {
                item["call_id"] == call_id.as_str()
                    && item["type"]
                        .as_str()
                        .is_some_and(|kind| kind.ends_with("call") && !kind.ends_with("output"))
            })?;
            let arguments = call["arguments"]
                .as_str()
                .and_then(|text| serde_json::from_str::<Value>(text).ok())
                .or_else(|| call.get("input").cloned())
                .unwrap_or(Value::Null);
            Some(RefusedPatch {
                call_id,
                input: json!({"tool": call["name"], "arguments": arguments}),
                output: text,
            })
        })
        .collect()
}

/// A call output's text (a string, or content parts).
fn output_text(output: &Value) -> String {
    match output {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|part| part["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        other => other["content"].as_str().unwrap_or_default().to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROLLOUT: &str = r#"{"type":"event_msg","payload":{"type":"task_started"}}
{"type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"apply_patch old\"}","call_id":"call_0"}}
{"type":"response_item","payload":{"type":"function_call_output","call_id":"call_0","output":"patch rejected: an earlier turn"}}
{"type":"event_msg","payload":{"type":"task_started"}}
{"type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"ls\"}","call_id":"call_1"}}
{"type":"response_item","payload":{"type":"function_call_output","call_id":"call_1","output":"notes.txt"}}
{"type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"apply_patch <<'EOF'\"}","call_id":"call_2"}}
{"type":"response_item","payload":{"type":"function_call_output","call_id":"call_2","output":"patch rejected: writing is blocked by read-only sandbox"}}
"#;

    #[test]
    fn only_the_latest_turns_refused_patches_are_read() {
        assert_eq!(
            parse(ROLLOUT),
            [RefusedPatch {
                call_id: "call_2".to_owned(),
                input: json!({"tool": "exec_command", "arguments": {"cmd": "apply_patch <<'EOF'"}}),
                output: "patch rejected: writing is blocked by read-only sandbox".to_owned(),
            }]
        );
    }

    #[test]
    fn the_rollout_is_found_by_its_thread() {
        let home = tempfile::tempdir().unwrap();
        let day = home.path().join("sessions/2026/11/28");
        std::fs::create_dir_all(&day).unwrap();
        std::fs::write(day.join("rollout-2026-11-28T06-26-40-t-9.jsonl"), ROLLOUT).unwrap();
        assert_eq!(refused_patches(home.path(), "t-9").len(), 1);
        assert!(refused_patches(home.path(), "t-8").is_empty());
    }
}
