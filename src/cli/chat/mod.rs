//! `atomic chat`: a full-screen conversation with any agent adapter, where discovered
//! workflows, commands and skills are slash commands (`/ralph "build the parser"`).
//!
//! `transcript` is the conversation as the chat shows and saves it; `conversation` talks
//! to the agent (a task that owns the provider) and saves sessions in the project's store;
//! `slash` turns a typed line into what the chat does, with completion; `render` draws
//! replies (markdown), tool calls and edits (diffs); `runs` starts and follows a workflow;
//! `app` is the screen state and the keys, `draw` paints it, `session` is the loop.

mod app;
mod conversation;
mod draw;
mod input;
mod render;
mod runs;
mod session;
mod slash;
mod transcript;

use std::io::IsTerminal;

use crate::cli::Exit;
use crate::cli::args::ChatArgs;
use crate::cli::project::Project;

/// Runs `atomic chat`.
pub(super) fn run(args: &ChatArgs) -> Exit {
    let project = Project::discover();
    if args.resume.as_deref() == Some("") {
        return match crate::cli::execute::runtime() {
            Ok(runtime) => list_sessions(&runtime, &project),
            Err(exit) => exit,
        };
    }
    if !(std::io::stdin().is_terminal() && std::io::stdout().is_terminal()) {
        eprintln!(
            "error: `atomic chat` needs a terminal on stdin and stdout\n  help: to run an agent without one, write a workflow and use `atomic run`"
        );
        return Exit::Usage;
    }
    let runtime = match crate::cli::execute::runtime() {
        Ok(runtime) => runtime,
        Err(exit) => return exit,
    };
    let setup = conversation::Setup {
        project: project.clone(),
        adapter: args.provider.clone(),
        model: args.model.clone(),
        resume: args.resume.clone(),
    };
    let handle = match conversation::Conversation::open(setup.clone(), runtime.handle().clone()) {
        Ok(handle) => handle,
        Err(error) => {
            eprintln!("error: {error}");
            return Exit::Problems;
        }
    };
    let color = std::env::var_os("NO_COLOR").is_none();
    let theme = render::Theme::pick(
        &args.theme,
        !color,
        std::env::var("COLORFGBG").ok().as_deref(),
    );
    let shell = match runtime.block_on(slash::Shell::for_project(&project)) {
        Ok(shell) => shell,
        Err(error) => {
            eprintln!("error: {error}");
            return Exit::Problems;
        }
    };
    let catalogue = session::catalogue(&runtime, &project);
    let chat = session::Chat {
        project,
        handle,
        setup,
        catalogue,
        shell,
        theme,
        color,
    };
    let result = session::run(&runtime, chat);
    // The conversation saves the session as it quits; its agent's processes end with it.
    runtime.shutdown_timeout(std::time::Duration::from_secs(5));
    crate::process::settle();
    match result {
        Ok(()) => Exit::Ok,
        Err(error) => {
            eprintln!("error: the terminal failed: {error}");
            Exit::Fatal
        }
    }
}

/// `atomic chat --resume` without a session: the saved sessions, newest first.
fn list_sessions(runtime: &tokio::runtime::Runtime, project: &Project) -> Exit {
    match runtime.block_on(conversation::list_sessions(project)) {
        Ok(sessions) if sessions.is_empty() => {
            println!("no saved chat sessions in this project yet; start one with `atomic chat`");
            Exit::Ok
        }
        Ok(sessions) => {
            for session in &sessions {
                println!("{}", session_line(session));
            }
            println!("\ngo on with one: atomic chat --resume ID");
            Exit::Ok
        }
        Err(error) => {
            eprintln!("error: {error}");
            Exit::Problems
        }
    }
}

/// A saved session on one line: `ID  2026-11-29 07:40  claude-code  3 turns  Fix the…`.
fn session_line(session: &conversation::SessionSummary) -> String {
    let turns = match session.turns {
        1 => "1 turn".to_owned(),
        n => format!("{n} turns"),
    };
    format!(
        "{}  {}  {}  {turns}  {}",
        session.id,
        crate::store::utc(session.updated_at),
        session.adapter,
        session.title
    )
}
