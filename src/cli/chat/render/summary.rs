//! A tool call on one line, as the transcript's collapsed tool entries and the status line
//! show it: `Bash(cargo test)`, `Edit(src/a.rs)`, `Read(src/a.rs)`, else the input's first
//! string field.

use serde_json::Value;

use super::diff::edit_diffs;
use super::wrap::clip;

/// The longest summary, in columns.
const MAX: usize = 200;

/// `Name(what it works on)`, or the name alone when the input says nothing short.
pub(crate) fn call_summary(name: &str, input: &Value) -> String {
    let what = input_summary(name, input);
    if what.is_empty() {
        name.to_owned()
    } else {
        format!("{name}({what})")
    }
}

/// What a call works on, on one line (at most 200 columns): its command, its file (every
/// file of a patch), its search pattern, address or query, else its first string field;
/// empty when there is none.
pub(crate) fn input_summary(name: &str, input: &Value) -> String {
    // A call recorded as `{"tool": …, "arguments": {…}}` (a refused call).
    if let (Some(Value::String(tool)), Some(arguments)) =
        (input.get("tool"), input.get("arguments"))
    {
        return input_summary(tool, arguments);
    }
    let edits = edit_diffs(name, input);
    if !edits.is_empty() {
        let paths: Vec<&str> = edits.iter().map(|edit| edit.path.as_str()).collect();
        return clip(&paths.join(", "), MAX);
    }
    let Value::Object(map) = input else {
        return match input {
            Value::String(text) => clip(text, MAX),
            _ => String::new(),
        };
    };
    for key in ["command", "cmd"] {
        match map.get(key) {
            Some(Value::String(command)) => return clip(command, MAX),
            Some(Value::Array(words)) => {
                let words: Vec<&str> = words.iter().filter_map(Value::as_str).collect();
                // `["bash", "-lc", "ls"]`: the script is what was run.
                let words = match words.as_slice() {
                    [shell, flag, script]
                        if flag.starts_with('-')
                            && flag.ends_with('c')
                            && shell.ends_with("sh") =>
                    {
                        vec![*script]
                    }
                    _ => words,
                };
                return clip(&words.join(" "), MAX);
            }
            _ => {}
        }
    }
    let keys = [
        "file_path",
        "filePath",
        "notebook_path",
        "pattern",
        "path",
        "url",
        "query",
        "prompt",
        "description",
    ];
    if let Some(text) = keys.iter().find_map(|key| map.get(*key)?.as_str()) {
        return clip(text, MAX);
    }
    // Codex's `file_change`: `{"changes": [{"path": …, "kind": …}]}`.
    if let Some(changes) = map.get("changes").and_then(Value::as_array) {
        let paths: Vec<&str> = changes
            .iter()
            .filter_map(|change| change.get("path")?.as_str())
            .collect();
        if !paths.is_empty() {
            return clip(&paths.join(", "), MAX);
        }
    }
    map.values()
        .find_map(Value::as_str)
        .map(|text| clip(text, MAX))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn calls_read_as_name_and_what() {
        assert_eq!(
            call_summary(
                "Bash",
                &json!({"command": "cargo test", "description": "runs"})
            ),
            "Bash(cargo test)"
        );
        assert_eq!(
            call_summary(
                "Edit",
                &json!({"file_path": "src/a.rs", "old_string": "a", "new_string": "b"})
            ),
            "Edit(src/a.rs)"
        );
        assert_eq!(
            call_summary("Read", &json!({"file_path": "src/a.rs"})),
            "Read(src/a.rs)"
        );
        assert_eq!(
            call_summary("read", &json!({"filePath": "src/b.rs"})),
            "read(src/b.rs)"
        );
        assert_eq!(
            call_summary("Grep", &json!({"pattern": "fn main", "path": "src"})),
            "Grep(fn main)"
        );
        assert_eq!(
            call_summary("exec", &json!({"cmd": ["bash", "-lc", "ls -la"]})),
            "exec(ls -la)"
        );
        assert_eq!(
            call_summary("mcp.x", &json!({"n": 1, "name": "two\nlines"})),
            "mcp.x(two lines)"
        );
        assert_eq!(
            call_summary("TodoWrite", &json!({"todos": []})),
            "TodoWrite"
        );
        assert_eq!(call_summary("Nothing", &Value::Null), "Nothing");
        assert_eq!(
            call_summary(
                "file_change",
                &json!({"changes": [{"path": "/w/a", "kind": "update"}, {"path": "/w/b", "kind": "add"}]})
            ),
            "file_change(/w/a, /w/b)"
        );
        let patch = "*** Begin Patch\n*** Update File: a.rs\n@@\n-x\n+y\n*** Add File: b.rs\n+z\n*** End Patch";
        assert_eq!(
            call_summary("apply_patch", &json!({"input": patch})),
            "apply_patch(a.rs, b.rs)"
        );
        assert_eq!(
            call_summary(
                "file_change",
                &json!({"tool": "exec_command", "arguments": {"cmd": "ls"}})
            ),
            "file_change(ls)"
        );
        let long = "x".repeat(500);
        assert_eq!(
            input_summary("Bash", &json!({"command": long}))
                .chars()
                .count(),
            MAX
        );
    }
}
