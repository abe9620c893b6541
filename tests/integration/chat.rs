//! `atomic chat` through a real pseudo-terminal ([`Tty`]): keys typed at the real binary,
//! its screen read by a terminal emulator. The agents are real — the anthropic adapter's
//! HTTP client, the pinned Claude Code and OpenCode CLIs — against fake model servers on
//! 127.0.0.1: a streamed markdown reply, a tool call shown with its diff, a permission
//! asked and answered in the chat, a question answered, the agent's plan, a workflow run by
//! a slash command with a positional argument and its wait answered in the chat, and a
//! session saved, listed and resumed after quitting. Every wait is bounded.

use std::time::Duration;

use serde_json::json;

use crate::support::cli_project::{CliProject, stdout};
use crate::support::fake_anthropic::{FakeAnthropic, Turn};
use crate::support::scripted_anthropic::{ScriptedAnthropic, Step};
use crate::support::tools::agent_cli;
use crate::support::tty::{Tty, save_capture};

/// The key the fakes require; it must never show on the screen or in the saved session.
const SECRET: &str = "sk-atomic-chat-test-5d2e7b";

/// A reply with the markdown a chat must render: a heading, a list, code, a table.
const MARKDOWN: &str = "## Plan\n\nHere is **what** I would do:\n\n- read `main.rs`\n- fix the greeting\n\n```rust\nfn main() {\n    println!(\"hi\");\n}\n```\n\n| step | cost |\n|------|-----:|\n| read | 1 |\n| fix | 2 |\n";

/// Ctrl-C.
const CTRL_C: &str = "\u{3}";

/// The environment of a chat on the anthropic adapter, talking to `fake`, its CLIs and
/// files kept inside `project`.
fn anthropic_env(project: &CliProject, fake_url: &str) -> Vec<(String, String)> {
    let mut env = isolated_env(project);
    env.push(("ANTHROPIC_API_KEY".to_owned(), SECRET.to_owned()));
    env.push(("ANTHROPIC_BASE_URL".to_owned(), fake_url.to_owned()));
    env
}

/// A home and XDG directories of the project's own, so no CLI reads the user's.
fn isolated_env(project: &CliProject) -> Vec<(String, String)> {
    let home = project.home().to_path_buf();
    std::fs::create_dir_all(&home).expect("home");
    let home = home.display().to_string();
    vec![
        ("XDG_CONFIG_HOME".to_owned(), format!("{home}/.config")),
        ("XDG_DATA_HOME".to_owned(), format!("{home}/.local/share")),
        ("XDG_STATE_HOME".to_owned(), format!("{home}/.local/state")),
        ("XDG_CACHE_HOME".to_owned(), format!("{home}/.cache")),
        ("HOME".to_owned(), home),
    ]
}

/// Types `line` and Enter.
fn say(tty: &mut Tty, line: &str) {
    tty.type_keys(line);
    tty.type_keys("\r");
}

/// Quits with Ctrl-C twice; the chat exits 0 and gives the terminal back.
fn quit(mut tty: Tty) -> String {
    tty.type_keys(CTRL_C);
    tty.wait_for("the quit hint", |screen| {
        screen.contains("Ctrl-C again to quit")
    });
    tty.type_keys(CTRL_C);
    let (code, output) = tty.finish();
    assert_eq!(code, Some(0), "the chat exits cleanly");
    String::from_utf8_lossy(&output).into_owned()
}

/// The session ids `atomic chat --resume` lists.
fn saved_sessions(project: &CliProject, env: &[(String, String)]) -> String {
    let mut command = project.atomic();
    command.args(["chat", "--resume"]);
    for (name, value) in env {
        command.env(name, value);
    }
    let output = command.output().expect("atomic chat --resume");
    assert!(output.status.success(), "{output:?}");
    stdout(&output)
}

#[test]
fn a_reply_streams_as_markdown_and_a_resumed_session_goes_on() {
    let fake = FakeAnthropic::start();
    fake.require_key(SECRET);
    fake.set_split(4, Duration::from_millis(5));
    fake.push(Turn::text(MARKDOWN));
    fake.push(Turn::text("Still here: we talked about the greeting."));
    let project = CliProject::new();
    let env = anthropic_env(&project, &fake.url());
    let Some(mut tty) = Tty::start_with(
        &project,
        "exec {atomic} chat --provider anthropic --model claude-sonnet-4-5",
        100,
        40,
        true,
        &env,
    ) else {
        return;
    };
    tty.wait_for("the empty chat", |screen| screen.contains("anthropic"));
    say(&mut tty, "How would you fix the greeting?");
    let screen = tty.wait_for("the rendered reply", |screen| screen.contains("│ fix"));
    // Rendered, not raw: no fences, no pipes of a raw table, no emphasis markers.
    assert!(screen.contains("Plan"), "{screen}");
    assert!(
        !screen.contains("```"),
        "code fences are rendered away:\n{screen}"
    );
    assert!(!screen.contains("**what**"), "{screen}");
    assert!(screen.contains("println!(\"hi\");"), "{screen}");
    assert!(!screen.contains("|------|"), "{screen}");
    assert!(
        screen.contains("in /"),
        "usage in the status line:\n{screen}"
    );
    assert!(!screen.contains(SECRET));
    let printed = quit(tty);
    assert!(!printed.contains(SECRET));

    let listed = saved_sessions(&project, &env);
    assert!(
        listed.contains("How would you fix the greeting?"),
        "{listed}"
    );
    let id = listed
        .split_whitespace()
        .next()
        .expect("a session id")
        .to_owned();
    let Some(mut tty) = Tty::start_with(
        &project,
        &format!("exec {{atomic}} chat --provider anthropic --resume {id}"),
        100,
        40,
        true,
        &env,
    ) else {
        return;
    };
    tty.wait_for("the earlier conversation", |screen| {
        screen.contains("How would you fix the greeting?") && screen.contains("│ fix")
    });
    say(&mut tty, "Are you still there?");
    tty.wait_for("the second reply", |screen| screen.contains("Still here"));
    quit(tty);
    let bodies = fake.message_bodies();
    let second = bodies.last().expect("a second request").to_string();
    assert!(
        second.contains("How would you fix the greeting?") && second.contains("fix the greeting"),
        "the resumed session sends the first turn along: {second}"
    );
    let store = std::fs::read(project.path().join(".atomic/atomic.db")).unwrap_or_default();
    assert!(
        !String::from_utf8_lossy(&store).contains(SECRET),
        "the key never reaches the store"
    );
}

/// A workflow that asks which database to use, its wait headed and its choices described.
const ASK: &str = r#"workflow "pick-db" {
    description "Asks which database a topic should use"
    input "topic" type="string"
    state {
        field "pick" type="string" default=""
    }
    wait "choose" header="Database" prompt="Which database for {{ input.topic }}?" answer="choice" {
        choice "postgres" description="The relational one"
        choice "sqlite" description="Embedded, one file"
        output "pick"
    }
}
"#;

#[test]
fn a_workflow_runs_from_a_slash_command_and_its_wait_is_answered_in_the_chat() {
    let fake = FakeAnthropic::start();
    fake.require_key(SECRET);
    fake.set_fallback(Turn::text("Noted."));
    let project = CliProject::new();
    project.write(".atomic/workflows/pick-db.kdl", ASK);
    let env = anthropic_env(&project, &fake.url());
    let Some(mut tty) = Tty::start_with(
        &project,
        "exec {atomic} chat --provider anthropic --model claude-sonnet-4-5",
        100,
        40,
        true,
        &env,
    ) else {
        return;
    };
    tty.wait_for("the empty chat", |screen| screen.contains("anthropic"));
    tty.type_keys("/pick");
    tty.wait_for("the completion", |screen| {
        screen.contains("pick-db") && screen.contains("Asks which database")
    });
    tty.type_keys("-db \"the chat log\"");
    let screen = tty.wait_for("the argument hint", |screen| screen.contains("topic"));
    assert!(screen.contains("/pick-db \"the chat log\""), "{screen}");
    tty.type_keys("\r");
    let screen = tty.wait_for("the wait asked in the chat", |screen| {
        screen.contains("Which database for the chat log?")
    });
    assert!(screen.contains("[Database]"), "{screen}");
    assert!(screen.contains("Embedded, one file"), "{screen}");
    tty.type_keys("2");
    let screen = tty.wait_for("the run's outcome", |screen| {
        screen.contains("pick: sqlite")
    });
    assert!(screen.contains("completed"), "{screen}");
    // The conversation goes on after the run.
    say(&mut tty, "thanks");
    tty.wait_for("the agent's reply", |screen| screen.contains("Noted."));
    quit(tty);
    let runs = project.runs();
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert_eq!(runs[0]["status"], "completed", "{runs:?}");
}

/// What Claude Code's agent is asked, and how the scripted model closes.
const CLOSING: &str = "The greeting is fixed, in the friendly tone.";

/// The real Claude Code: its plan shown as a checklist, an edit asked about and allowed for
/// the session in the chat, then shown as its diff, a question with a header and described
/// options answered with a key — each answer continuing the CLI's session — and the reply.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_plans_asks_before_an_edit_shows_its_diff_and_takes_an_answer() {
    let Some(claude) = agent_cli("claude", "@anthropic-ai/claude-code") else {
        return;
    };
    let project = CliProject::new();
    let greeting = project.write("greeting.txt", "Hello, wrld\n");
    let fake = ScriptedAnthropic::start(vec![
        // The pinned CLI keeps its plan with its task tools (TodoWrite is off by default).
        Step::Tool {
            name: "TaskCreate".to_owned(),
            input: json!({"subject": "Fix the greeting", "description": "the typo in greeting.txt", "activeForm": "Fixing the greeting"}),
        },
        Step::Tool {
            name: "TaskUpdate".to_owned(),
            input: json!({"taskId": "1", "status": "in_progress"}),
        },
        // Claude Code edits only a file it has read.
        Step::Tool {
            name: "Read".to_owned(),
            input: json!({"file_path": greeting.display().to_string()}),
        },
        Step::Tool {
            name: "Edit".to_owned(),
            input: json!({
                "file_path": greeting.display().to_string(),
                "old_string": "Hello, wrld",
                "new_string": "Hello, world",
            }),
        },
        Step::Tool {
            name: "AskUserQuestion".to_owned(),
            input: json!({"questions": [{
                "question": "Which tone should the greeting take?",
                "header": "Tone",
                "multiSelect": false,
                "options": [
                    {"label": "Friendly", "description": "Warm and casual"},
                    {"label": "Formal", "description": "For business letters"}
                ]
            }]}),
        },
        Step::Text(CLOSING.to_owned()),
    ])
    .await;
    let mut env = anthropic_env(&project, &fake.base_url());
    let path = std::env::var("PATH").unwrap_or_default();
    let bin_dir = claude
        .parent()
        .expect("the CLI's directory")
        .display()
        .to_string();
    env.push(("PATH".to_owned(), format!("{bin_dir}:{path}")));
    env.push((
        "CLAUDE_CONFIG_DIR".to_owned(),
        project.home().join("claude").display().to_string(),
    ));
    env.push((
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC".to_owned(),
        "1".to_owned(),
    ));
    let ran = tokio::task::spawn_blocking(move || {
        let tty = Tty::start_with(
            &project,
            "exec {atomic} chat --provider claude-code --model claude-sonnet-4-5",
            110,
            45,
            true,
            &env,
        );
        let mut tty = tty?;
        tty.wait_for("the empty chat", |screen| screen.contains("claude-code"));
        say(&mut tty, "Fix the typo in greeting.txt");
        let screen = tty.wait_for("the permission asked", |screen| {
            screen.contains("Allow for this session")
        });
        assert!(
            screen.contains("Fix the greeting"),
            "the plan is shown:\n{screen}"
        );
        assert!(screen.contains("Edit"), "{screen}");
        assert_eq!(
            std::fs::read_to_string(project.path().join("greeting.txt")).expect("greeting"),
            "Hello, wrld\n",
            "nothing is edited before the person answers"
        );
        tty.type_keys("2");
        let screen = tty.wait_for("the question", |screen| {
            screen.contains("Which tone should the greeting take?")
        });
        assert!(screen.contains("[Tone]"), "{screen}");
        assert!(screen.contains("Warm and casual"), "{screen}");
        assert!(
            screen.contains("Hello, world"),
            "the edit's diff:\n{screen}"
        );
        tty.type_keys("1");
        let screen = tty.wait_for("the closing reply, the turn over", |screen| {
            screen.contains(CLOSING) && !screen.contains("working")
        });
        assert!(!screen.contains(SECRET));
        assert_eq!(
            std::fs::read_to_string(project.path().join("greeting.txt")).expect("greeting"),
            "Hello, world\n"
        );
        let root = project.path().display().to_string();
        let mut picture = screen
            .replace(&root, "~/hello")
            .trim_start_matches('\n')
            .to_owned();
        // The session's id differs each run: the README keeps one.
        if let Some(at) = picture.find("session ") {
            let id_start = at + "session ".len();
            let id_end = picture[id_start..]
                .find(char::is_whitespace)
                .map_or(picture.len(), |end| id_start + end);
            picture.replace_range(id_start..id_end, "01m8k6exkvgk01");
        }
        save_capture("chat", "tests/integration/chat.rs", &picture);
        quit(tty);
        Some(())
    })
    .await
    .expect("the chat ran");
    if ran.is_none() {
        return;
    }
    let conversation = fake
        .requests()
        .into_iter()
        .rfind(|request| request.has_tools())
        .expect("model requests")
        .body["messages"]
        .to_string();
    assert!(
        conversation.contains("Friendly"),
        "the answer reached the model: {conversation}"
    );
}

/// The real OpenCode (a server atomic starts) with the scripted model as its Anthropic
/// provider: a file write asked about in the chat and allowed once, shown as the file's
/// lines, then a markdown reply.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn opencode_asks_before_writing_and_its_reply_renders() {
    let Some(opencode) = agent_cli("opencode", "opencode-ai") else {
        return;
    };
    let project = CliProject::new();
    let notes = project.path().join("notes.md");
    // Answered by what the conversation holds (OpenCode is stopped at the request and
    // its session continued): the write on a fresh conversation and once told it was
    // approved, the reply after the write's result.
    let fake = FakeAnthropic::start();
    fake.set_fallback(Turn::text("ok"));
    let write = json!({"filePath": notes.display().to_string(), "content": "# Notes\n\nship it\n"});
    fake.push_when(
        |request| main_turn(request).is_some_and(|text| !text.contains("tool_result")),
        Turn::tool_use("write", write.clone()),
    );
    fake.push_when(
        |request| main_turn(request).is_some_and(|text| last_says(&text, "approved your request")),
        Turn::tool_use("write", write),
    );
    fake.push_when(
        |request| {
            main_turn(request).is_some_and(|text| {
                text.contains("approved your request") && text.contains("tool_result")
            })
        },
        Turn::text("Wrote the notes:\n\n- a **heading**\n- one line"),
    );
    project.write(
        "opencode.json",
        &json!({
            "autoupdate": false,
            "share": "disabled",
            "provider": {"anthropic": {"options": {
                "baseURL": format!("{}/v1", fake.url()),
                "apiKey": SECRET,
            }}},
        })
        .to_string(),
    );
    let mut env = isolated_env(&project);
    let path = std::env::var("PATH").unwrap_or_default();
    let bin_dir = opencode
        .parent()
        .expect("the CLI's directory")
        .display()
        .to_string();
    env.push(("PATH".to_owned(), format!("{bin_dir}:{path}")));
    env.push(("OPENCODE_DISABLE_MODELS_FETCH".to_owned(), "1".to_owned()));
    env.push(("OPENCODE_DISABLE_LSP_DOWNLOAD".to_owned(), "1".to_owned()));
    tokio::task::spawn_blocking(move || {
        let tty = Tty::start_with(
            &project,
            "exec {atomic} chat --provider opencode --model anthropic/claude-sonnet-4-5",
            110,
            45,
            true,
            &env,
        );
        let Some(mut tty) = tty else { return };
        tty.wait_for("the empty chat", |screen| screen.contains("opencode"));
        say(&mut tty, "Write the release notes");
        let screen = tty.wait_for("the permission asked", |screen| {
            screen.contains("Allow once")
        });
        assert!(screen.contains("write"), "{screen}");
        assert!(
            !notes.exists(),
            "nothing is written before the person answers"
        );
        tty.type_keys("1");
        let screen = tty.wait_for("the reply, the turn over", |screen| {
            screen.contains("Wrote the notes") && !screen.contains("working")
        });
        assert!(
            screen.contains("+ ship it"),
            "the write shown as its lines:\n{screen}"
        );
        assert!(
            !screen.contains("**heading**"),
            "markdown rendered:\n{screen}"
        );
        assert_eq!(
            std::fs::read_to_string(&notes).expect("written"),
            "# Notes\n\nship it\n"
        );
        quit(tty);
    })
    .await
    .expect("the chat ran");
}

/// A main-turn request's conversation (the agent's, with tools), as text.
fn main_turn(request: &crate::support::http_server::Request) -> Option<String> {
    let body = request.json();
    body.get("tools")
        .and_then(serde_json::Value::as_array)
        .is_some_and(|tools| !tools.is_empty())
        .then(|| body["messages"].to_string())
}

/// Whether the last message of `conversation` (a JSON array as text) says `what`.
fn last_says(conversation: &str, what: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(conversation)
        .ok()
        .and_then(|messages| {
            messages
                .as_array()
                .and_then(|m| m.last())
                .map(ToString::to_string)
        })
        .is_some_and(|last| last.contains(what))
}

/// Esc stops the agent mid-reply (the model's connection is closed) and the conversation
/// goes on; under `NO_COLOR` nothing on the screen has a colour.
#[test]
fn esc_interrupts_the_agent_and_the_conversation_goes_on_without_colour() {
    let fake = FakeAnthropic::start();
    fake.require_key(SECRET);
    fake.push(Turn::HangMidStream {
        text: "Let me think about this at length".to_owned(),
    });
    fake.push(Turn::text("A short answer."));
    let project = CliProject::new();
    let env = anthropic_env(&project, &fake.url());
    let Some(mut tty) = Tty::start_with(
        &project,
        "exec {atomic} chat --provider anthropic --model claude-sonnet-4-5",
        100,
        30,
        false,
        &env,
    ) else {
        return;
    };
    tty.wait_for("the empty chat", |screen| screen.contains("anthropic"));
    say(&mut tty, "Think hard");
    tty.wait_for("the reply streaming", |screen| {
        screen.contains("at length") && screen.contains("Esc interrupts")
    });
    tty.type_keys("\u{1b}");
    tty.wait_for("the interruption", |screen| {
        screen.contains("Interrupted") && !screen.contains("Esc interrupts")
    });
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while fake.server().hang_ups() == 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "the interrupted call's connection was never closed"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    say(&mut tty, "Then briefly?");
    tty.wait_for("the next reply", |screen| {
        screen.contains("A short answer.")
    });
    let coloured = {
        let parser = tty.parser();
        let screen = parser.screen();
        let (rows, cols) = screen.size();
        (0..rows.get())
            .flat_map(|row| (0..cols.get()).map(move |col| (row, col)))
            .filter(|&(row, col)| {
                screen.cell(row, col).is_some_and(|cell| {
                    cell.fgcolor() != vt100::Color::Default
                        || cell.bgcolor() != vt100::Color::Default
                })
            })
            .count()
    };
    assert_eq!(coloured, 0, "NO_COLOR leaves no colour:\n{}", tty.text());
    quit(tty);
}

/// The real Gemini CLI and Codex CLI, each against its wire's fake (their key and endpoint
/// from the variables the CLIs read themselves): a reply rendered as markdown, its tokens in
/// the status line.
#[test]
fn gemini_and_codex_replies_render() {
    use crate::support::fake_gemini::{FakeGemini, Turn as GeminiTurn};
    use crate::support::fake_responses::{FakeResponses, Turn as ResponsesTurn};
    const REPLY: &str = "Two things:\n\n1. **read** the file\n2. fix `greeting`";
    let chat = |adapter: &str, model: &str, env: Vec<(String, String)>, project: &CliProject| {
        let Some(mut tty) = Tty::start_with(
            project,
            &format!("exec {{atomic}} chat --provider {adapter} --model {model}"),
            100,
            30,
            true,
            &env,
        ) else {
            return;
        };
        tty.wait_for("the empty chat", |screen| screen.contains(adapter));
        say(&mut tty, "What would you do?");
        let screen = tty.wait_for("the rendered reply", |screen| {
            screen.contains("fix greeting") && !screen.contains("working")
        });
        assert!(!screen.contains("**read**"), "{adapter}:\n{screen}");
        assert!(screen.contains("in /"), "{adapter}'s tokens:\n{screen}");
        quit(tty);
    };

    if let Some(gemini) = agent_cli("gemini", "@google/gemini-cli") {
        let fake = FakeGemini::start(vec![GeminiTurn::text(REPLY)]);
        let project = CliProject::new();
        let mut env = isolated_env(&project);
        env.push(("GEMINI_API_KEY".to_owned(), SECRET.to_owned()));
        env.push(("GOOGLE_GEMINI_BASE_URL".to_owned(), fake.url()));
        env.push(("PATH".to_owned(), with_cli_on_path(&gemini)));
        chat("gemini", "gemini-2.5-flash", env, &project);
    }
    if let Some(codex) = agent_cli("codex", "@openai/codex") {
        let fake = FakeResponses::start();
        fake.require_key(SECRET);
        fake.push(ResponsesTurn::text(REPLY));
        let project = CliProject::new();
        let mut env = isolated_env(&project);
        env.push(("OPENAI_API_KEY".to_owned(), SECRET.to_owned()));
        env.push(("OPENAI_BASE_URL".to_owned(), fake.base_url()));
        env.push(("PATH".to_owned(), with_cli_on_path(&codex)));
        chat("codex", "gpt-5", env, &project);
    }
}

/// `PATH` with the directory of the CLI at `bin` first.
fn with_cli_on_path(bin: &std::path::Path) -> String {
    let path = std::env::var("PATH").unwrap_or_default();
    let dir = bin
        .parent()
        .expect("the CLI's directory")
        .display()
        .to_string();
    format!("{dir}:{path}")
}

/// The terminal closing (SIGHUP) ends the chat the way quitting does: the OpenCode server it
/// started does not outlive it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hang_up_leaves_no_agent_server_behind() {
    let Some(opencode) = agent_cli("opencode", "opencode-ai") else {
        return;
    };
    let fake = FakeAnthropic::start();
    fake.set_fallback(Turn::text("Hello there."));
    let project = CliProject::new();
    project.write(
        "opencode.json",
        &json!({
            "autoupdate": false,
            "share": "disabled",
            "provider": {"anthropic": {"options": {
                "baseURL": format!("{}/v1", fake.url()),
                "apiKey": SECRET,
            }}},
        })
        .to_string(),
    );
    let mut env = isolated_env(&project);
    env.push(("PATH".to_owned(), with_cli_on_path(&opencode)));
    env.push(("OPENCODE_DISABLE_MODELS_FETCH".to_owned(), "1".to_owned()));
    env.push(("OPENCODE_DISABLE_LSP_DOWNLOAD".to_owned(), "1".to_owned()));
    tokio::task::spawn_blocking(move || {
        let tty = Tty::start_with(
            &project,
            "exec {atomic} chat --provider opencode --model anthropic/claude-sonnet-4-5",
            100,
            30,
            true,
            &env,
        );
        let Some(mut tty) = tty else { return };
        say(&mut tty, "Hi");
        tty.wait_for("the reply", |screen| {
            screen.contains("Hello there.") && !screen.contains("working")
        });
        let root = std::fs::canonicalize(project.path()).expect("the project");
        let running = working_in(&root);
        assert!(
            running
                .iter()
                .any(|(_, command)| command.contains("opencode")),
            "the OpenCode server runs in the project while the chat is open: {running:?}"
        );
        // Killing `script` closes the terminal: the chat gets SIGHUP.
        tty.child.kill().expect("kill script");
        let _ = tty.child.wait();
        let deadline = std::time::Instant::now() + Duration::from_secs(15);
        loop {
            let left = working_in(&root);
            if left.is_empty() {
                break;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "still running in the project after the hang-up: {left:?}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    })
    .await
    .expect("the chat ran");
}

/// The processes whose working directory is `dir` (their pid and command line).
fn working_in(dir: &std::path::Path) -> Vec<(u32, String)> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| std::fs::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|cwd| cwd == dir))
        .filter(|pid| {
            // A zombie is gone already; only its entry waits for its parent.
            std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
                !stat
                    .rsplit(')')
                    .next()
                    .unwrap_or("")
                    .trim_start()
                    .starts_with('Z')
            })
        })
        .map(|pid| {
            let command = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            (pid, String::from_utf8_lossy(&command).replace('\0', " "))
        })
        .collect()
}

/// A command's `` !`cmd` `` runs off the view's thread: while it runs the chat answers keys,
/// and Esc stops it, its process with it, before anything reaches the agent.
#[test]
fn a_slow_command_leaves_the_chat_alive_and_esc_stops_it() {
    let fake = FakeAnthropic::start();
    fake.require_key(SECRET);
    fake.set_fallback(Turn::text("Noted."));
    let project = CliProject::new();
    project.write(
        ".claude/commands/slow.md",
        "Context: !`sleep 24.713; echo late`\n",
    );
    let env = anthropic_env(&project, &fake.url());
    let Some(mut tty) = Tty::start_with(
        &project,
        "exec {atomic} chat --provider anthropic --model claude-sonnet-4-5",
        100,
        30,
        false,
        &env,
    ) else {
        return;
    };
    tty.wait_for("the empty chat", |screen| screen.contains("anthropic"));
    say(&mut tty, "/slow now");
    tty.wait_for("the command running", |screen| {
        screen.contains("running `/slow now`")
    });
    assert!(sleeping(), "the command's process runs");
    tty.type_keys("still here");
    tty.wait_for("the keys typed meanwhile", |screen| {
        screen.contains("still here")
    });
    tty.type_keys("\u{1b}");
    tty.wait_for("the command stopped", |screen| {
        screen.contains("stopped `/slow now`")
    });
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while sleeping() {
        assert!(
            std::time::Instant::now() < deadline,
            "the stopped command's process still runs"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // The text typed meanwhile is still there: the first Ctrl-C clears it.
    assert!(tty.text().contains("still here"), "{}", tty.text());
    tty.type_keys(CTRL_C);
    tty.wait_for("the input cleared", |screen| !screen.contains("still here"));
    quit(tty);
    assert!(
        fake.requests().is_empty(),
        "nothing reached the agent: {:?}",
        fake.requests().len()
    );
}

/// Whether the slow command's `sleep` runs.
fn sleeping() -> bool {
    std::fs::read_dir("/proc").is_ok_and(|entries| {
        entries.flatten().any(|entry| {
            std::fs::read(entry.path().join("cmdline"))
                .is_ok_and(|line| String::from_utf8_lossy(&line).contains("24.713"))
        })
    })
}
