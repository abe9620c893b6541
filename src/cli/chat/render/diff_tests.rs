use serde_json::json;

use super::*;
use crate::cli::chat::render::testing::{assert_fits, strings, style_of};

fn shown(edit: &FileEdit, width: u16) -> Vec<String> {
    strings(&diff_lines(edit, width, &Theme::plain()))
}

#[test]
fn a_small_edit_shows_its_changed_lines_and_counts() {
    let input = json!({
        "file_path": "src/a.rs",
        "old_string": "fn a() {\n    one();\n    two();\n}",
        "new_string": "fn a() {\n    one();\n    three();\n    four();\n}",
    });
    let edit = edit_diff("Edit", &input).expect("an edit");
    assert_eq!(edit.path, "src/a.rs");
    assert_eq!(counts(&edit), (2, 1));
    assert_eq!(
        shown(&edit, 40),
        [
            "src/a.rs  +2 −1",
            "  fn a() {",
            "      one();",
            "-     two();",
            "+     three();",
            "+     four();",
            "  }",
        ]
    );
    let theme = Theme::dark();
    let lines = diff_lines(&edit, 40, &theme);
    assert_eq!(style_of(&lines, "+2").fg, theme.diff_added.fg);
    assert_eq!(style_of(&lines, "−1").fg, theme.diff_removed.fg);
    assert_eq!(lines[3].spans[0].style, theme.diff_removed);
    assert_eq!(lines[4].spans[0].style, theme.diff_added);
}

#[test]
fn each_agents_edit_tools_are_recognised() {
    let multi = json!({"file_path": "a.rs", "edits": [
        {"old_string": "a", "new_string": "b"},
        {"old_string": "c", "new_string": "d", "replace_all": true},
    ]});
    let edit = edit_diff("MultiEdit", &multi).expect("multi");
    assert_eq!(edit.hunks.len(), 2);
    assert_eq!(edit.hunks[1].label.as_deref(), Some("every occurrence"));
    assert_eq!(
        shown(&edit, 40),
        [
            "a.rs  +2 −2",
            "- a",
            "+ b",
            "@@ every occurrence",
            "- c",
            "+ d"
        ]
    );
    let write = edit_diff("Write", &json!({"file_path": "n.txt", "content": "x\ny\n"})).unwrap();
    assert_eq!((write.action, counts(&write)), (Action::Write, (2, 0)));
    let open = json!({"filePath": "/w/a", "oldString": "x", "newString": "y"});
    assert_eq!(edit_diff("edit", &open).unwrap().path, "/w/a");
    let open = json!({"filePath": "/w/b", "content": "z"});
    assert_eq!(edit_diff("write", &open).unwrap().action, Action::Write);
    let gemini = json!({"file_path": "g", "old_string": "draft", "new_string": "final"});
    assert_eq!(counts(&edit_diff("replace", &gemini).unwrap()), (1, 1));
    assert!(edit_diff("write_file", &json!({"file_path": "g", "content": "x"})).is_some());
    let copilot = json!({"path": "/w/a.txt", "old_str": "a", "new_str": "b"});
    assert!(edit_diff("edit", &copilot).is_some());
    assert!(edit_diff("create", &json!({"path": "c", "file_text": "t"})).is_some());
    // A refused call recorded with its tool and arguments.
    let refused = json!({"tool": "edit", "arguments": copilot});
    assert!(edit_diff("file_change", &refused).is_some());
    // Not edits.
    assert!(edit_diff("Read", &json!({"file_path": "a"})).is_none());
    assert!(edit_diff("search", &json!({"path": "a", "content": "x"})).is_none());
    assert!(edit_diff("Bash", &json!({"command": "ls"})).is_none());
}

#[test]
fn apply_patch_is_read_file_by_file() {
    let patch = "*** Begin Patch\n\
                 *** Update File: src/a.rs\n\
                 @@ fn main\n keep\n-old\n+new\n\
                 *** Add File: b.txt\n+hello\n+world\n\
                 *** Delete File: c.txt\n\
                 *** Update File: d.rs\n*** Move to: e.rs\n@@\n-x\n+y\n\
                 *** End Patch";
    let edits = edit_diffs("apply_patch", &json!({"input": patch}));
    let summary: Vec<(&str, Action, (usize, usize))> = edits
        .iter()
        .map(|edit| (edit.path.as_str(), edit.action, counts(edit)))
        .collect();
    assert_eq!(
        summary,
        [
            ("src/a.rs", Action::Edit, (1, 1)),
            ("b.txt", Action::Write, (2, 0)),
            ("c.txt", Action::Delete, (0, 0)),
            ("d.rs → e.rs", Action::Edit, (1, 1)),
        ]
    );
    assert_eq!(
        shown(&edits[0], 40),
        ["src/a.rs  +1 −1", "@@ fn main", "  keep", "- old", "+ new"]
    );
    // Codex's shell call with the patch in a heredoc, and a `patch` field.
    let heredoc = format!("apply_patch <<'EOF'\n{patch}\nEOF\n");
    assert_eq!(
        edit_diffs("exec_command", &json!({"cmd": heredoc})).len(),
        4
    );
    assert_eq!(edit_diffs("apply_patch", &json!({"patch": patch})).len(), 4);
    // A unified diff.
    let unified = "--- a/x.rs\n+++ b/x.rs\n@@ -1,2 +1,2 @@ fn f\n a\n-b\n+c\n";
    let edits = edit_diffs("patch", &json!({"patchText": unified}));
    assert_eq!(edits.len(), 1);
    assert_eq!(
        (edits[0].path.as_str(), counts(&edits[0])),
        ("x.rs", (1, 1))
    );
    assert_eq!(edits[0].hunks[0].label.as_deref(), Some("fn f"));
}

#[test]
fn long_lines_wrap_and_big_hunks_fall_back() {
    let edit = FileEdit {
        path: "p".into(),
        action: Action::Edit,
        hunks: vec![Hunk {
            label: None,
            old: String::new(),
            new: "abcdefghijklmnop\n日本語日本語日本語".into(),
        }],
    };
    let lines = diff_lines(&edit, 10, &Theme::plain());
    assert_fits(&lines, 10);
    assert_eq!(
        strings(&lines),
        [
            "p  +2 −0",
            "+ abcdefgh",
            "+↪ijklmnop",
            "+ 日本語日",
            "+↪本語日本",
            "+↪語"
        ]
    );
    // Past the cap: the old lines removed, the new ones added.
    let old: String = (0..600).map(|n| format!("a{n}\n")).collect();
    let new: String = (0..600).map(|n| format!("b{n}\n")).collect();
    let diff = line_diff(&old, &new);
    assert_eq!(diff.len(), 1_200);
    assert!(diff[..600].iter().all(|(sign, _)| *sign == Sign::Removed));
    // Common ends are set aside before the cap applies.
    let mut changed = old.clone();
    changed.push_str("tail\n");
    let diff = line_diff(&old, &changed);
    assert_eq!(
        diff.iter()
            .filter(|(sign, _)| *sign != Sign::Context)
            .count(),
        1
    );
}
