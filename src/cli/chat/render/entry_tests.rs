use serde_json::json;

use super::*;
use crate::cli::chat::render::testing::{assert_fits, strings};
use crate::cli::chat::transcript::{QuestionItem, QuestionOption};
use crate::providers::PermissionAsk;

fn shown(entry: &Entry, expanded: bool, width: u16) -> Vec<String> {
    strings(&entry_lines(entry, expanded, width, &Theme::plain()))
}

fn tool(name: &str, input: Value, result: Option<&str>, is_error: bool) -> Entry {
    Entry::Tool {
        id: "t1".into(),
        name: name.into(),
        input,
        result: result.map(str::to_owned),
        is_error,
    }
}

#[test]
fn the_persons_message_and_the_reply() {
    let user = Entry::User {
        text: "please fix the tests".into(),
        told: None,
    };
    assert_eq!(shown(&user, false, 12), ["› please fix", "  the tests"]);
    let reply = Entry::Assistant {
        text: "Done **now**.".into(),
        thinking: "first\nsecond\n".into(),
        done: true,
    };
    assert_eq!(
        shown(&reply, false, 40),
        ["▸ thinking (2 lines)", "Done now."]
    );
    assert_eq!(
        shown(&reply, true, 40),
        ["▾ thinking", "  first", "  second", "Done now."]
    );
}

#[test]
fn a_tool_call_is_one_line_until_expanded() {
    let running = tool("Bash", json!({"command": "cargo test"}), None, false);
    assert_eq!(shown(&running, false, 40), ["● Bash(cargo test)  ⠋"]);
    let lines = strings(&entry_lines_at(&running, false, 40, &Theme::plain(), 1));
    assert_eq!(lines, ["● Bash(cargo test)  ⠙"]);
    let done = tool(
        "Bash",
        json!({"command": "cargo test"}),
        Some("42 passed"),
        false,
    );
    assert_eq!(shown(&done, false, 40), ["● Bash(cargo test)  ✓ 42 passed"]);
    let failed = tool(
        "Read",
        json!({"file_path": "src/a.rs"}),
        Some("no such file"),
        true,
    );
    assert_eq!(
        shown(&failed, false, 40),
        ["● Read(src/a.rs)  ✗ no such file"]
    );
    // Narrow: cut to one line, both parts kept in part.
    let long = tool(
        "Bash",
        json!({"command": "cargo test --workspace --all-features -- --nocapture"}),
        Some("test result: ok. 1234 passed; 0 failed; 5 ignored"),
        false,
    );
    for width in [10_u16, 20, 30, 50] {
        let lines = entry_lines(&long, false, width, &Theme::plain());
        assert_eq!(lines.len(), 1);
        assert_fits(&lines, usize::from(width));
    }
    assert_eq!(
        shown(&long, false, 50),
        ["● Bash(cargo test --workspace…)  ✓ test result: o…"]
    );
    assert_eq!(
        shown(&done, true, 40),
        [
            "● Bash(cargo test)  ✓ 42 passed",
            "  $ cargo test",
            "  ⎿ 42 passed"
        ]
    );
}

#[test]
fn an_edit_shows_its_diff_even_collapsed() {
    let input = json!({"file_path": "a.rs", "old_string": "x\ny", "new_string": "x\nz"});
    let edit = tool("Edit", input, Some("ok"), false);
    assert_eq!(
        shown(&edit, false, 40),
        [
            "● Edit(a.rs)  ✓ ok",
            "  a.rs  +1 −1",
            "    x",
            "  - y",
            "  + z"
        ]
    );
    let content: String = (0..50).map(|n| format!("line {n}\n")).collect();
    let write = tool(
        "Write",
        json!({"file_path": "b", "content": content}),
        None,
        false,
    );
    let collapsed = shown(&write, false, 40);
    assert_eq!(collapsed.len(), 1 + COLLAPSED_DIFF_LINES + 1);
    assert_eq!(collapsed.last().unwrap(), "  … 31 more lines");
    assert_eq!(shown(&write, true, 40).len(), 1 + 1 + 50);
}

#[test]
fn permissions_questions_plans_runs_and_notices() {
    let ask = PermissionAsk {
        tool: "Bash".into(),
        input: json!({"command": "rm -rf target"}),
    };
    let permission = Entry::Permission {
        ask: ask.clone(),
        answer: Some(PermissionAnswer::Deny),
    };
    assert_eq!(
        shown(&permission, false, 60),
        ["⚠ asked to use Bash(rm -rf target) · denied"]
    );
    let waiting = Entry::Permission { ask, answer: None };
    assert!(shown(&waiting, false, 80)[0].ends_with("waiting for an answer"));

    let question = Entry::Question {
        question: Question {
            items: vec![QuestionItem {
                header: Some("Scope".into()),
                text: "Which files?".into(),
                options: vec![
                    QuestionOption {
                        label: "All".into(),
                        description: Some("every file".into()),
                    },
                    QuestionOption {
                        label: "Some".into(),
                        description: None,
                    },
                ],
                multi: false,
            }],
        },
        answers: vec!["All".into()],
    };
    assert_eq!(
        shown(&question, false, 40),
        [
            "? Scope",
            "  Which files?",
            "  1. All — every file",
            "  2. Some",
            "  → All"
        ]
    );

    let todo = |content: &str, status, active: Option<&str>| Todo {
        content: content.into(),
        status,
        active_form: active.map(str::to_owned),
    };
    let plan = Entry::Plan {
        todos: vec![
            todo("Read the code", TodoStatus::Completed, None),
            todo(
                "Run the tests",
                TodoStatus::InProgress,
                Some("Running the tests"),
            ),
            todo("Ship", TodoStatus::Pending, None),
            todo("Gold-plate", TodoStatus::Cancelled, None),
        ],
    };
    assert_eq!(
        shown(&plan, false, 40),
        [
            "Plan  1/4 done",
            "☑ Read the code",
            "◐ Running the tests",
            "☐ Ship",
            "☒ Gold-plate"
        ]
    );
    let lines = entry_lines(&plan, false, 40, &Theme::plain());
    assert!(
        lines[4].spans[1]
            .style
            .add_modifier
            .contains(Modifier::CROSSED_OUT)
    );

    let run = Entry::Run {
        run_id: "r-1".into(),
        workflow: "review".into(),
        status: "failed".into(),
        outcome: Some("boom".into()),
    };
    assert_eq!(
        shown(&run, false, 40),
        ["✗ workflow review  failed  r-1", "  ⎿ boom"]
    );

    let notice = Entry::Notice {
        text: "model switched".into(),
        error: false,
    };
    assert_eq!(shown(&notice, false, 40), ["model switched"]);
    let error = Entry::Notice {
        text: "it broke".into(),
        error: true,
    };
    assert_eq!(shown(&error, false, 40), ["✗ it broke"]);
    let theme = Theme::dark();
    assert_eq!(
        entry_lines(&error, false, 40, &theme)[0].spans[1].style,
        theme.error
    );
}

#[test]
fn plain_draws_no_colour_anywhere() {
    let entries = [
        tool(
            "Edit",
            json!({"file_path": "a", "old_string": "x", "new_string": "y"}),
            None,
            false,
        ),
        Entry::Assistant {
            text: "# h\n\n```rust\nfn x() {}\n```\n\n| a |\n|---|\n| b |\n\n> [l](u)".into(),
            thinking: "t".into(),
            done: false,
        },
    ];
    for entry in &entries {
        for line in entry_lines(entry, true, 40, &Theme::plain()) {
            for span in &line.spans {
                assert_eq!((span.style.fg, span.style.bg), (None, None), "{span:?}");
            }
        }
    }
}
