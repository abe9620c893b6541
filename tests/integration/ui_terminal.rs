//! `atomic ui` in a terminal, through a real pseudo-terminal (util-linux `script`, sized
//! with `stty`): keys are typed at the real binary and its output is parsed into a screen
//! of cells by a terminal emulator (`vt100`), on which the tests assert — steps and their
//! states, a step's output, a wait answered with keys, colours, small sizes, the terminal
//! given back. Every wait is bounded.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::cli_project::{CliProject, stderr, stdout};
use crate::support::tty::{SCREEN_TIMEOUT, Tty, emulator, save_capture};

/// A finished run: an agent on the in-process model, then a tool.
const REVIEW: &str = r#"workflow "review" {
    provider "bot" adapter="in-process" { option "reply" "All good: the tests pass and the diff is small."; }
    state {
        field "verdict" type="string" default=""
        field "echoed" type="string" default=""
    }
    agent "judge" provider="bot" {
        prompt "Review the change"
        output "verdict"
    }
    tool "announce" {
        run "sh" "-c" "echo announced-on-stdout"
        output "echoed"
    }
}
"#;

/// A run that pauses at a yes-no wait and ships on yes.
const GATE: &str = r#"workflow "gate" {
    state {
        field "notes" type="string" default=""
        field "ok" type="boolean" default=#false
        field "shipped" type="string" default=""
    }
    tool "draft" {
        run "sh" "-c" "echo notes-v1"
        output "notes"
    }
    wait "approve" prompt="Ship {{ state.notes | trim }}?" answer="yes-no" {
        output "ok"
    }
    decision "route" {
        when "state.ok" goto="ship"
        otherwise goto="end"
    }
    tool "ship" {
        run "sh" "-c" "echo shipped"
        output "shipped"
    }
}
"#;

/// A project with a finished `review` run and, newer, a `gate` run paused at `approve`.
fn project_with_runs() -> (CliProject, String, String) {
    let project = CliProject::new();
    project.write("review.kdl", REVIEW);
    project.write("gate.kdl", GATE);
    let done = project
        .atomic()
        .args(["run", "review.kdl", "--quiet"])
        .output()
        .expect("atomic run");
    assert_eq!(done.status.code(), Some(0), "{}", stderr(&done));
    let done = project.last_run();
    let paused = project
        .atomic()
        .args(["run", "gate.kdl", "--quiet"])
        .output()
        .expect("atomic run");
    assert_eq!(paused.status.code(), Some(4), "{}", stderr(&paused));
    let paused = project.last_run();
    assert_ne!(done, paused);
    (project, done, paused)
}

/// The row of the screen that holds `text`.
fn row_with<'a>(screen: &'a str, text: &str) -> &'a str {
    screen
        .lines()
        .find(|line| line.contains(text))
        .unwrap_or_else(|| panic!("no row holds {text:?}:\n{screen}"))
}

/// Waits (bounded) until the store has `run` in `status`.
fn wait_for_status(project: &CliProject, run: &str, status: &str) {
    let deadline = Instant::now() + SCREEN_TIMEOUT;
    loop {
        let shown = project.show(run);
        if shown["run"]["status"] == status {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "the run never became {status}: {shown}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn the_view_shows_steps_and_output_and_a_wait_answered_with_keys_moves_the_run_on() {
    let (project, done, paused) = project_with_runs();
    let Some(mut tty) = Tty::start(
        &project,
        &format!("exec {{atomic}} ui {done}"),
        100,
        30,
        false,
    ) else {
        return;
    };
    // The finished run: every step done, the last one selected and followed (waited for
    // whole: a screen read mid-draw has only part of a frame).
    let screen = tty.wait_for("the finished run", |s| {
        s.contains("completed") && s.contains("›✓ announce") && s.contains("echoed \"announced-on")
    });
    assert!(row_with(&screen, "judge").contains("✓ judge"), "{screen}");
    assert!(row_with(&screen, "✓ judge").contains("done"), "{screen}");
    assert!(row_with(&screen, "✓ announce").contains("done"), "{screen}");
    assert!(
        row_with(&screen, "›✓ announce").contains("done"),
        "the last step is selected:\n{screen}"
    );
    // The state pane: the tool's output went to `echoed`.
    assert!(
        screen.contains("echoed \"announced-on"),
        "the state:\n{screen}"
    );
    // Up to the agent: its reply is shown.
    tty.type_keys("k");
    let screen = tty.wait_for("the agent's output", |s| {
        s.contains("All good: the tests pass and the diff is small.")
    });
    assert!(row_with(&screen, "›✓ judge").contains("done"), "{screen}");
    assert!(row_with(&screen, "State").contains("Events"), "{screen}");
    assert!(screen.contains("verdict"), "the state pane:\n{screen}");
    save_capture(
        "ui-terminal",
        "tests/integration/ui_terminal.rs",
        &screen.replace(&done, "01jz8k2m4q6rst"),
    );

    // The runs list, newest first: pick the paused run.
    tty.type_keys("r");
    let screen = tty.wait_for("the runs list", |s| {
        s.contains("STATUS") && s.contains(&paused)
    });
    let paused_row = screen.lines().position(|l| l.contains(&paused)).unwrap();
    let done_row = screen.lines().position(|l| l.contains(&done)).unwrap();
    assert!(paused_row < done_row, "newest first:\n{screen}");
    assert!(row_with(&screen, &paused).contains("paused"), "{screen}");
    assert!(row_with(&screen, &done).contains("completed"), "{screen}");
    tty.type_keys("g\r");
    let screen = tty.wait_for("the paused run", |s| s.contains("waiting at `approve`"));
    assert!(row_with(&screen, "approve").contains("waiting"), "{screen}");
    assert!(row_with(&screen, "✓ draft").contains("done"), "{screen}");
    assert!(row_with(&screen, "ship").contains("pending"), "{screen}");

    // Answer it: the prompt offers yes and no; typing `yes` and Enter resumes the run.
    tty.type_keys("a");
    let screen = tty.wait_for("the answer prompt", |s| s.contains("Ship notes-v1?"));
    assert!(screen.contains("choices: yes · no"), "{screen}");
    tty.type_keys("yes\r");
    let screen = tty.wait_for("the run completed", |s| {
        s.contains("completed") && s.contains("✓ ship")
    });
    assert!(row_with(&screen, "✓ approve").contains("done"), "{screen}");
    wait_for_status(&project, &paused, "completed");
    assert_eq!(project.show(&paused)["state"]["shipped"], "shipped\n");

    tty.type_keys("q");
    let (code, output) = tty.finish();
    assert_eq!(code, Some(0));
    let mut parser = emulator(30, 100);
    parser.process(&output);
    assert!(
        !parser.screen().alternate_screen(),
        "the alternate screen was left"
    );
}

/// A run whose tool step writes a file.
const WRITE: &str = r#"workflow "write" {
    tool "w" { run "sh" "-c" "echo hello > out.txt"; }
}
"#;

#[test]
fn a_steps_changed_files_are_listed_and_its_diff_opens_with_a_key() {
    let project = CliProject::new();
    project.write("write.kdl", WRITE);
    let ran = project
        .atomic()
        .args(["run", "write.kdl", "--quiet"])
        .output()
        .expect("atomic run");
    assert_eq!(ran.status.code(), Some(0), "{}", stderr(&ran));
    let run = project.last_run();
    let Some(mut tty) = Tty::start(
        &project,
        &format!("exec {{atomic}} ui {run}"),
        100,
        30,
        true,
    ) else {
        return;
    };
    // The step (the only one, selected) lists what it changed under its output.
    let screen = tty.wait_for("the step's files", |s| {
        s.contains("›✓ w") && s.contains("A out.txt")
    });
    assert!(row_with(&screen, "A out.txt").contains("+1 −0"), "{screen}");
    assert!(screen.contains("files · 1 changed · D: diff"), "{screen}");
    // The mark is green: an added file.
    let parser = tty.parser();
    let (row, line) = screen
        .lines()
        .enumerate()
        .find(|(_, line)| line.contains("A out.txt"))
        .expect("the row");
    let col = line[..line.find("A out.txt").unwrap()].chars().count();
    let cell = parser
        .screen()
        .cell(u16::try_from(row).unwrap(), u16::try_from(col).unwrap())
        .expect("a cell");
    assert_eq!(cell.contents(), "A");
    assert_eq!(cell.fgcolor(), vt100::Color::Idx(2), "green");

    // Opened, the details list them too; `D` opens the diff over the screen.
    tty.type_keys("\r");
    tty.wait_for("the opened step", |s| {
        s.contains("Esc/⏎ back") && s.contains("A out.txt")
    });
    tty.type_keys("D");
    let screen = tty.wait_for("the diff", |s| s.contains("+hello"));
    assert!(screen.contains("+++ b/out.txt"), "{screen}");
    assert!(screen.contains("@@ -0,0 +1 @@"), "{screen}");
    assert!(screen.contains("Esc/q close"), "{screen}");
    let parser = tty.parser();
    let row = screen
        .lines()
        .position(|line| line.contains("+hello"))
        .expect("the row");
    let line = screen.lines().nth(row).unwrap();
    let col = line[..line.find("+hello").unwrap()].chars().count();
    let cell = parser
        .screen()
        .cell(u16::try_from(row).unwrap(), u16::try_from(col).unwrap())
        .expect("a cell");
    assert_eq!(
        cell.fgcolor(),
        vt100::Color::Idx(2),
        "an added line is green"
    );
    // `q` closes the pane, not the view.
    tty.type_keys("q");
    tty.wait_for("the pane closed", |s| {
        !s.contains("+hello") && s.contains("A out.txt")
    });
    tty.type_keys("q");
    let (code, _) = tty.finish();
    assert_eq!(code, Some(0));
}

/// A run whose agent (a cassette) reports a plan twice: the view shows the latest.
const PLANNED: &str = r#"workflow "planned" {
    provider "tape" adapter="replay" cassette="plan.cassette.jsonl"
    agent "fix" provider="tape" { prompt "Fix the parser"; }
}
"#;

const PLAN_CASSETTE: &str = r#"{"cassette":1}
{"node":"fix","call":0,"reply":{"text":"Patched; the tests run next.","turns":1},"events":[
 {"type":"session-start","session_id":"s-1","model":null},
 {"type":"tool-start","id":"t1","name":"TodoWrite","input":{"todos":[]}},
 {"type":"plan","todos":[{"content":"Read the parser","status":"in-progress","active_form":"Reading the parser"},{"content":"Fix the off-by-one","status":"pending"}]},
 {"type":"tool-complete","id":"t1","name":"TodoWrite","summary":"ok","is_error":false},
 {"type":"tool-start","id":"t2","name":"TodoWrite","input":{"todos":[]}},
 {"type":"plan","todos":[{"content":"Read the parser","status":"completed","active_form":"Reading the parser"},{"content":"Fix the off-by-one","status":"completed"},{"content":"Run the tests","status":"in-progress","active_form":"Running the tests"},{"content":"Port the shim","status":"cancelled"},{"content":"Update the docs","status":"pending"}]},
 {"type":"tool-complete","id":"t2","name":"TodoWrite","summary":"ok","is_error":false},
 {"type":"text-delta","text":"Patched; the tests run next."},
 {"type":"message-complete","text":"Patched; the tests run next."},
 {"type":"usage","usage":{"input_tokens":10,"output_tokens":5,"cache_read_tokens":0,"cache_write_tokens":0},"cost_usd":null},
 {"type":"session-end","session_id":"s-1"}]}
"#;

#[test]
fn an_agents_latest_plan_is_shown_with_its_step() {
    let project = CliProject::new();
    project.write("planned.kdl", PLANNED);
    project.write("plan.cassette.jsonl", PLAN_CASSETTE);
    let ran = project
        .atomic()
        .args(["run", "planned.kdl", "--quiet"])
        .output()
        .expect("atomic run");
    assert_eq!(ran.status.code(), Some(0), "{}", stderr(&ran));
    let run = project.last_run();
    let Some(mut tty) = Tty::start(
        &project,
        &format!("exec {{atomic}} ui {run}"),
        100,
        40,
        true,
    ) else {
        return;
    };
    // The selected step's pane: the latest plan under the output, the work under way in
    // its active form.
    let screen = tty.wait_for("the plan", |s| s.contains("plan 2/5 done"));
    assert!(
        screen.contains("plan 2/5 done · Running the tests"),
        "{screen}"
    );
    for line in [
        "☑ Read the parser",
        "☑ Fix the off-by-one",
        "◐ Running the tests",
        "☒ Port the shim",
        "☐ Update the docs",
    ] {
        assert!(screen.contains(line), "{line}:\n{screen}");
    }
    assert!(screen.contains("Patched; the tests run next."), "{screen}");
    // The earlier plan is gone from the pane (the events pane still says it came).
    assert!(!screen.contains("◐ Reading the parser"), "{screen}");
    assert!(
        screen.contains("fix · plan 0/2 done · Reading the parser"),
        "{screen}"
    );
    // Work under way looks like a running step: yellow.
    let parser = tty.parser();
    let (row, line) = screen
        .lines()
        .enumerate()
        .find(|(_, line)| line.contains("◐ Running the tests"))
        .expect("the row");
    let col = line[..line.find("◐ Running").unwrap()].chars().count();
    let cell = parser
        .screen()
        .cell(u16::try_from(row).unwrap(), u16::try_from(col).unwrap())
        .expect("a cell");
    assert_eq!(cell.fgcolor(), vt100::Color::Idx(3), "yellow");

    // Opened, the details show it too.
    tty.type_keys("\r");
    let screen = tty.wait_for("the opened step", |s| {
        s.contains("Esc/⏎ back") && s.contains("◐ Running the tests")
    });
    assert!(screen.contains("☐ Update the docs"), "{screen}");
    tty.type_keys("q");
    let (code, _) = tty.finish();
    assert_eq!(code, Some(0));
}

#[test]
fn quitting_gives_the_terminal_back() {
    let (project, done, _) = project_with_runs();
    // After the view: is the terminal cooked again (line editing and echo back)?
    let line = format!("{{atomic}} ui {done}; echo ui-exit=$?; stty -a");
    let Some(mut tty) = Tty::start(&project, &line, 100, 30, false) else {
        return;
    };
    tty.wait_for("the run", |s| s.contains("announce"));
    tty.type_keys("q");
    let (code, output) = tty.finish();
    assert_eq!(code, Some(0));
    let text = String::from_utf8_lossy(&output);
    assert!(text.contains("ui-exit=0"), "{text}");
    let settings = &text[text.find("ui-exit=0").unwrap()..];
    let words: Vec<&str> = settings.split_whitespace().collect();
    for on in ["icanon", "echo", "isig", "icrnl", "opost"] {
        assert!(words.contains(&on), "`{on}` after the view:\n{settings}");
    }
    assert!(!settings.contains("-icanon"), "{settings}");
    // Entered and left: the alternate screen and the cursor.
    assert!(
        text.contains("\u{1b}[?1049h") && text.contains("\u{1b}[?1049l"),
        "{text}"
    );
    assert!(text.contains("\u{1b}[?25h"), "the cursor is shown again");
    let mut parser = emulator(30, 100);
    parser.process(&output);
    assert!(!parser.screen().alternate_screen());
    assert!(!parser.screen().hide_cursor());
}

impl Tty {
    /// The pid of `atomic ui`: script's child, which the shell became (`exec`).
    fn view_pid(&self) -> u32 {
        let script = self.child.id();
        let children = std::fs::read_to_string(format!("/proc/{script}/task/{script}/children"))
            .expect("script's children");
        children
            .split_whitespace()
            .next()
            .and_then(|pid| pid.parse().ok())
            .expect("script runs the view")
    }
}

/// Whether process `pid` is still alive (not gone, not a zombie).
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        !stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z')
    })
}

/// Waits (bounded) for `pid` to end.
fn ends(pid: u32) -> bool {
    let deadline = Instant::now() + Duration::from_secs(10);
    while alive(pid) {
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    true
}

#[test]
fn sigterm_gives_the_terminal_back_and_a_hang_up_ends_the_view() {
    let (project, done, _) = project_with_runs();
    let Some(tty) = Tty::start(
        &project,
        &format!("exec {{atomic}} ui {done}"),
        100,
        30,
        false,
    ) else {
        return;
    };
    tty.wait_for("the run", |s| s.contains("announce"));
    let pid = tty.view_pid();
    let killed = Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .expect("kill");
    assert!(killed.success());
    let (code, output) = tty.finish();
    assert_eq!(code, Some(0), "a terminated view still ends cleanly");
    let mut parser = emulator(30, 100);
    parser.process(&output);
    assert!(
        !parser.screen().alternate_screen(),
        "the alternate screen was left"
    );
    assert!(!parser.screen().hide_cursor(), "the cursor is shown again");

    // The terminal goes away under the view (a closed window, a dropped SSH connection):
    // the view ends instead of spinning on a terminal that reads nothing — even when the
    // hang-up signal is ignored (`nohup`, `trap '' HUP`), so only the terminal tells.
    let Some(mut tty) = Tty::start(
        &project,
        &format!("trap '' HUP; exec {{atomic}} ui {done}"),
        100,
        30,
        false,
    ) else {
        return;
    };
    tty.wait_for("the run", |s| s.contains("announce"));
    let pid = tty.view_pid();
    tty.child.kill().expect("kill script");
    let _ = tty.child.wait();
    let ended = ends(pid);
    if !ended {
        let _ = Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status();
    }
    assert!(ended, "`atomic ui` outlived its terminal");
}

/// Whether any cell of the screen has a colour.
fn coloured_cells(tty: &Tty) -> usize {
    let parser = tty.parser();
    let screen = parser.screen();
    let (rows, cols) = screen.size();
    let mut coloured = 0;
    for row in 0..rows.get() {
        for col in 0..cols.get() {
            if let Some(cell) = screen.cell(row, col)
                && (cell.fgcolor() != vt100::Color::Default
                    || cell.bgcolor() != vt100::Color::Default)
            {
                coloured += 1;
            }
        }
    }
    coloured
}

#[test]
fn no_color_leaves_no_colour_on_the_screen() {
    let (project, _, paused) = project_with_runs();
    for color in [true, false] {
        let Some(mut tty) = Tty::start(
            &project,
            &format!("exec {{atomic}} ui {paused}"),
            100,
            30,
            color,
        ) else {
            return;
        };
        tty.wait_for("the paused run", |s| s.contains("waiting at `approve`"));
        // The help box too.
        tty.type_keys("?");
        tty.wait_for("the keys", |s| s.contains("cancel the run"));
        let coloured = coloured_cells(&tty);
        if color {
            assert!(coloured > 0, "colours are on without NO_COLOR");
        } else {
            assert_eq!(coloured, 0, "NO_COLOR:\n{}", tty.text());
            // Selection still shows: reverse video is not a colour.
            let parser = tty.parser();
            assert!(
                (0..30).any(|row| parser
                    .screen()
                    .cell(row, 1)
                    .is_some_and(vt100::Cell::inverse)),
                "the selected row is in reverse video"
            );
        }
        tty.type_keys("?q");
        let (code, _) = tty.finish();
        assert_eq!(code, Some(0));
    }
}

#[test]
fn small_terminals_get_a_compact_list_and_tiny_ones_do_not_break_it() {
    let (project, _, paused) = project_with_runs();
    let Some(mut tty) = Tty::start(
        &project,
        &format!("exec {{atomic}} ui {paused}"),
        40,
        12,
        false,
    ) else {
        return;
    };
    let screen = tty.wait_for("the compact list", |s| s.contains("approve"));
    assert!(!screen.contains("Steps"), "no panes below 60×15:\n{screen}");
    assert!(row_with(&screen, "draft").contains("done"), "{screen}");
    assert!(row_with(&screen, "approve").contains("waiting"), "{screen}");
    assert!(row_with(&screen, "gate").contains("paused"), "{screen}");
    tty.type_keys("q");
    assert_eq!(tty.finish().0, Some(0));

    for (cols, rows) in [(20, 6), (10, 3), (1, 1)] {
        let Some(mut tty) = Tty::start(
            &project,
            &format!("exec {{atomic}} ui {paused}"),
            cols,
            rows,
            false,
        ) else {
            return;
        };
        if cols >= 10 {
            tty.wait_for("the run", |s| s.contains("paused"));
        } else {
            std::thread::sleep(Duration::from_millis(500));
        }
        // Every key and overlay at this size.
        tty.type_keys("jjkk\r\r?");
        tty.type_keys("x");
        tty.type_keys("a");
        tty.type_keys("\u{1b}");
        tty.type_keys("c");
        tty.type_keys("n");
        tty.type_keys("r");
        tty.type_keys("\u{1b}");
        tty.type_keys("q");
        let (code, output) = tty.finish();
        let text = String::from_utf8_lossy(&output);
        assert_eq!(code, Some(0), "{cols}×{rows}: {text}");
        assert!(!text.contains("panicked"), "{cols}×{rows}: {text}");
    }
}

#[test]
fn a_run_started_elsewhere_replaces_the_newest_live_and_can_be_cancelled() {
    let project = CliProject::new();
    project.write("review.kdl", REVIEW);
    let first = project
        .atomic()
        .args(["run", "review.kdl", "--quiet"])
        .output()
        .expect("atomic run");
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    project.write(
        "slow.kdl",
        r#"workflow "slow" {
    state { field "seen" type="string" default="" }
    tool "tick" {
        run "sh" "-c" "echo tick-one; sleep 1; echo tick-two"
        output "seen"
    }
    wait "hold" prompt="Keep going?" answer="yes-no"
    tool "tock" { run "sh" "-c" "echo tock"; }
}
"#,
    );
    let Some(mut tty) = Tty::start(&project, "exec {atomic} ui", 100, 30, false) else {
        return;
    };
    // No run named: the newest is shown.
    tty.wait_for("the newest run", |s| {
        s.contains("review") && s.contains("announce")
    });
    // `atomic run` in another terminal: the view switches to it and follows it.
    let mut run = project
        .spawn_command()
        .args(["run", "slow.kdl", "--quiet"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("atomic run");
    let screen = tty.wait_for("the new run", |s| s.contains("slow") && s.contains("tick"));
    assert!(screen.contains("tick"), "{screen}");
    let screen = tty.wait_for("the wait", |s| s.contains("waiting at `hold`"));
    assert!(
        row_with(&screen, "›? hold").contains("waiting"),
        "followed:\n{screen}"
    );
    assert!(row_with(&screen, "✓ tick").contains("done"), "{screen}");
    let deadline = Instant::now() + SCREEN_TIMEOUT;
    let status = loop {
        if let Some(status) = run.try_wait().expect("poll run") {
            break status;
        }
        assert!(Instant::now() < deadline, "`atomic run` did not pause");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(status.code(), Some(4));
    let id = project.last_run();

    // Cancel asks first: `n` keeps it.
    tty.type_keys("c");
    tty.wait_for("the question", |s| s.contains(&format!("Cancel run {id}?")));
    tty.type_keys("n");
    tty.wait_for("the answer", |s| s.contains("not cancelled"));
    assert_eq!(project.show(&id)["run"]["status"], "paused");
    tty.type_keys("c");
    tty.type_keys("y");
    tty.wait_for("the cancelled run", |s| {
        row_with(s, "slow").contains("cancelled")
    });
    wait_for_status(&project, &id, "cancelled");
    tty.type_keys("q");
    assert_eq!(tty.finish().0, Some(0));
}

#[test]
fn without_a_terminal_the_run_is_printed_once() {
    let (project, done, paused) = project_with_runs();
    let output = project.atomic().arg("ui").output().expect("atomic ui");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let text = stdout(&output);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        format!("gate {paused} (paused) · step 2"),
        "{text}"
    );
    assert!(
        lines.iter().any(|l| l.contains("✓ done     draft")),
        "{text}"
    );
    assert!(
        lines.iter().any(|l| l.contains("? waiting  approve")),
        "{text}"
    );
    assert!(
        text.contains(&format!("atomic resume {paused} --answer <ANSWER>")),
        "{text}"
    );
    let output = project
        .atomic()
        .args(["ui", &done])
        .output()
        .expect("atomic ui");
    let text = stdout(&output);
    assert!(
        text.starts_with(&format!("review {done} (completed)")),
        "{text}"
    );
    assert!(text.contains("✓ done     judge"), "{text}");
    let output = project
        .atomic()
        .args(["ui", "nope"])
        .output()
        .expect("atomic ui");
    assert_ne!(output.status.code(), Some(0));
}
