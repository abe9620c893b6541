//! The chat's loop: the terminal taken (as `atomic ui` takes it), a frame drawn when the
//! conversation, the workflow run or the keys changed something (at most one per
//! [`FRAME`], however fast a reply streams), keys turned into actions, and slash commands
//! carried out — a prompt to the agent, a switch of model or adapter, a workflow started
//! and followed, its wait answered.

use std::io;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use ratatui::crossterm::event::{self, Event, KeyEventKind};
use ratatui::crossterm::{execute, terminal};

use super::app::{Action, App, Asked};
use super::conversation::{ChatHandle, Command, Conversation, Setup};
use super::draw::{self, Rendered, Screen};
use super::render::Theme;
use super::runs::{self, RunUpdate, Runs};
use super::slash::{self, Catalogue};
use super::transcript::{Entry, Question, QuestionItem, QuestionOption, RunWait, Transcript};
use crate::cli::project::Project;
use crate::cli::tty::{Guard, Input, on_stop_signals, wait_for_keys};
use crate::view::RunPhase;

/// The shortest time between two frames.
const FRAME: Duration = Duration::from_millis(33);

/// What the loop needs besides the terminal.
pub(super) struct Chat {
    /// Where the chat runs.
    pub(super) project: Project,
    /// The conversation.
    pub(super) handle: ChatHandle,
    /// How it was opened (for `/resume`, which opens another).
    pub(super) setup: Setup,
    /// The slash commands.
    pub(super) catalogue: Catalogue,
    /// Where a command's `` !`cmd` `` runs (in the project's sandbox, where one is set).
    pub(super) shell: slash::Shell,
    /// The colours.
    pub(super) theme: Theme,
    /// Whether colour is on.
    pub(super) color: bool,
}

/// Runs the chat until the person quits.
///
/// # Errors
/// The terminal failed.
pub(super) fn run(runtime: &tokio::runtime::Runtime, chat: Chat) -> io::Result<()> {
    let mut chat = chat;
    let (stop_sender, stop) = mpsc::channel::<()>();
    let signals = runtime.spawn(on_stop_signals(move || {
        let _ = stop_sender.send(());
    }));
    let mut runs = Runs::new(chat.project.clone(), runtime.handle().clone());
    let result = Guard::enter().and_then(|mut guard| {
        // Pastes come whole (newlines kept, not sent as Enter).
        let _ = execute!(io::stdout(), event::EnableBracketedPaste);
        let result = event_loop(&mut guard, runtime, &mut chat, &mut runs, &stop);
        let _ = execute!(io::stdout(), event::DisableBracketedPaste);
        result
    });
    signals.abort();
    runs.cancel_live();
    // The session is saved as the conversation closes.
    let _ = runtime.block_on(chat.handle.close());
    result
}

fn event_loop(
    guard: &mut Guard,
    runtime: &tokio::runtime::Runtime,
    chat: &mut Chat,
    runs: &mut Runs,
    stop: &mpsc::Receiver<()>,
) -> io::Result<()> {
    let terminal = &mut guard.terminal;
    let mut app = App::default();
    let rendered = Rendered::default();
    let mut changed = chat.handle.changed();
    let mut watching = chat.handle.session_id().to_owned();
    let mut snapshot = Transcript::default();
    let mut stale = true;
    let mut dirty = true;
    let mut drawn = Instant::now() - FRAME;
    let mut tick = 0usize;
    let mut run_wait: Option<RunWait> = None;
    let mut asked_before: Option<Asked> = None;
    let mut expanding: Option<Expanding> = None;
    loop {
        if stop.try_recv().is_ok() {
            return Ok(());
        }
        // `/resume` swaps the conversation: its changes are the ones to watch.
        if chat.handle.session_id() != watching {
            watching = chat.handle.session_id().to_owned();
            changed = chat.handle.changed();
            stale = true;
        }
        if changed.has_changed().unwrap_or(false) {
            changed.mark_unchanged();
            stale = true;
        }
        // Copied only when it changed: a long conversation is not cloned every frame.
        if stale {
            snapshot = chat
                .handle
                .transcript()
                .lock()
                .map(|t| t.clone())
                .unwrap_or_default();
            stale = false;
            dirty = true;
        }
        if expanding.as_ref().is_some_and(|e| e.task.is_finished())
            && let Some(mut done) = expanding.take()
        {
            dirty = true;
            let parsed = runtime.block_on(&mut done.task).unwrap_or_else(|error| {
                Err(slash::SlashError::new(format!(
                    "`{}` stopped: {error}",
                    done.line
                )))
            });
            if let Some(quit) = act(runtime, chat, runs, &mut app, &done.line, parsed) {
                return quit;
            }
        }
        for update in runs.updates() {
            dirty = true;
            follow_run(chat, runs, update, &mut run_wait);
        }
        let asked = Asked::of(&snapshot, run_wait.as_ref());
        if asked != asked_before {
            app.reset_answer();
            asked_before.clone_from(&asked);
        }
        if snapshot.busy {
            dirty = true;
        }
        if dirty && drawn.elapsed() >= FRAME {
            tick = tick.wrapping_add(1);
            let live_view = if runs.is_live() { runs.view() } else { None };
            let screen = Screen {
                app: &app,
                transcript: &snapshot,
                asked: asked.as_ref(),
                run: live_view,
                theme: &chat.theme,
                color: chat.color,
                tick,
                session: chat.handle.session_id(),
            };
            terminal.draw(|frame| draw::draw(frame, &screen, &rendered))?;
            drawn = Instant::now();
            dirty = false;
        }
        match wait_for_keys(FRAME)? {
            Input::HungUp => return Ok(()),
            Input::Nothing => {
                let size = terminal::size()?;
                let area = terminal.get_frame().area();
                dirty |= (area.width, area.height) != size;
                continue;
            }
            Input::Ready => {}
        }
        while event::poll(Duration::ZERO)? {
            let action = match event::read()? {
                Event::Key(key) if key.kind != KeyEventKind::Release => app.key(
                    key,
                    asked.as_ref(),
                    snapshot.busy || expanding.is_some(),
                    &chat.catalogue,
                ),
                Event::Paste(text) => {
                    app.paste(&text, &chat.catalogue);
                    None
                }
                _ => None,
            };
            dirty = true;
            let Some(action) = action else { continue };
            match action {
                Action::Quit => return Ok(()),
                // Esc stops a command's `!cmd` still running (its processes end with it)
                // before it stops the agent.
                Action::Interrupt => match expanding.take() {
                    Some(stopped) => {
                        stopped.task.abort();
                        chat.handle.send(Command::Note(Entry::Notice {
                            text: format!("stopped `{}`", stopped.line),
                            error: false,
                        }));
                    }
                    None => chat.handle.send(Command::Interrupt),
                },
                Action::Permission(answer) => chat.handle.send(Command::Permission(answer)),
                Action::Answer(answers) => chat.handle.send(Command::Answer(answers)),
                Action::AnswerWait { wait, answer } => match runs.answer(&wait, &answer) {
                    Ok(()) => {
                        chat.handle.send(Command::Note(Entry::Notice {
                            text: format!("answered `{wait}`: {answer}"),
                            error: false,
                        }));
                        run_wait = None;
                    }
                    Err(message) => app.flash = Some(message),
                },
                Action::Send(line) if expanding.is_some() => {
                    app.flash = Some(format!(
                        "`{}` is still running its commands: wait, or Esc to stop it",
                        expanding.as_ref().map_or("", |e| e.line.as_str())
                    ));
                    app.input.insert(&line);
                }
                Action::Send(line) => match start(runtime, chat, line) {
                    Started::Done(line, parsed) => {
                        if let Some(quit) = act(runtime, chat, runs, &mut app, &line, parsed) {
                            return quit;
                        }
                    }
                    Started::Running(running) => {
                        app.flash = Some(format!("running `{}`… (Esc stops it)", running.line));
                        expanding = Some(running);
                    }
                },
            }
        }
    }
}

/// What a line typed means, still being worked out: a command whose `` !`cmd` `` runs (up
/// to the shell's time limit) off the view's thread, so the screen and Esc stay alive.
struct Expanding {
    line: String,
    task: tokio::task::JoinHandle<Result<slash::Action, slash::SlashError>>,
}

/// Quitting while a command runs stops it too.
impl Drop for Expanding {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// How working out a line began.
enum Started {
    /// At once (a message, a built-in, a workflow, a command without `` !`cmd` ``).
    Done(String, Result<slash::Action, slash::SlashError>),
    /// Its commands run.
    Running(Expanding),
}

/// Works out what `line` means: polled once here, and left to run on the runtime when it
/// has commands to run.
fn start(runtime: &tokio::runtime::Runtime, chat: &Chat, line: String) -> Started {
    let (catalogue, shell, typed) = (chat.catalogue.clone(), chat.shell.clone(), line.clone());
    let mut parsing = Box::pin(async move { slash::parse(&typed, &catalogue, &shell).await });
    // Entered: a command's process is started on the runtime's reactor.
    let ready = {
        let _entered = runtime.enter();
        futures_util::FutureExt::now_or_never(parsing.as_mut())
    };
    match ready {
        Some(parsed) => Started::Done(line, parsed),
        None => Started::Running(Expanding {
            line,
            task: runtime.spawn(parsing),
        }),
    }
}

/// Carries out a line typed, worked out: a message to the agent, or a slash command.
/// `Some` ends the chat.
fn act(
    runtime: &tokio::runtime::Runtime,
    chat: &mut Chat,
    runs: &mut Runs,
    app: &mut App,
    line: &str,
    parsed: Result<slash::Action, slash::SlashError>,
) -> Option<io::Result<()>> {
    let note = |chat: &Chat, text: String, error: bool| {
        chat.handle
            .send(Command::Note(Entry::Notice { text, error }));
    };
    let action = match parsed {
        Ok(action) => action,
        Err(error) => {
            note(chat, error.to_string(), true);
            return None;
        }
    };
    match action {
        slash::Action::Prompt(told) => chat.handle.send(Command::Prompt {
            shown: line.to_owned(),
            told,
        }),
        slash::Action::Model(Some(model)) => chat.handle.send(Command::Model(model)),
        slash::Action::Provider(Some(adapter)) => chat.handle.send(Command::Provider(adapter)),
        slash::Action::Model(None) | slash::Action::Provider(None) => {
            let status = chat
                .handle
                .transcript()
                .lock()
                .map(|t| t.status.clone())
                .unwrap_or_default();
            note(
                chat,
                format!("talking to {}", draw::status_text(&status)),
                false,
            );
        }
        slash::Action::Clear => chat.handle.send(Command::Clear),
        slash::Action::Compact => chat.handle.send(Command::Compact),
        slash::Action::Help => note(chat, help(&chat.catalogue), false),
        slash::Action::Reload => {
            chat.catalogue = catalogue(runtime, &chat.project);
            note(
                chat,
                "workflows, commands and skills found again".to_owned(),
                false,
            );
        }
        slash::Action::Quit => return Some(Ok(())),
        slash::Action::Resume(None) => {
            let listed = runtime.block_on(super::conversation::list_sessions(&chat.project));
            let text = match listed {
                Ok(sessions) if sessions.is_empty() => "no saved sessions yet".to_owned(),
                Ok(sessions) => {
                    let mut text = "saved sessions (/resume ID):".to_owned();
                    for session in sessions.iter().take(20) {
                        text.push_str(&format!("\n  {}", super::session_line(session)));
                    }
                    text
                }
                Err(error) => error.to_string(),
            };
            note(chat, text, false);
        }
        slash::Action::Resume(Some(id)) => {
            let setup = Setup {
                resume: Some(id),
                ..chat.setup.clone()
            };
            match Conversation::open(setup.clone(), runtime.handle().clone()) {
                Ok(handle) => {
                    let previous = std::mem::replace(&mut chat.handle, handle);
                    // The session left is saved before the next is shown.
                    let _ = runtime.block_on(previous.close());
                    chat.setup = setup;
                    app.scroll = 0;
                }
                Err(error) => note(chat, error.to_string(), true),
            }
        }
        slash::Action::Workflow { name, path, inputs } => {
            match runs.start(&name, &runs::runnable(&name, &path), &inputs) {
                Ok(()) => chat.handle.send(Command::Note(Entry::Run {
                    run_id: String::new(),
                    workflow: name,
                    status: "starting".to_owned(),
                    outcome: None,
                })),
                Err(message) => note(chat, message, true),
            }
        }
    }
    None
}

/// Folds an update of the workflow run into the conversation: its entry's status and
/// outcome, and its wait asked in the chat.
fn follow_run(chat: &Chat, runs: &mut Runs, update: RunUpdate, run_wait: &mut Option<RunWait>) {
    match update {
        RunUpdate::Started { run_id } => chat.handle.send(Command::UpdateRun {
            run_id,
            status: "running".to_owned(),
            outcome: None,
        }),
        RunUpdate::Failed(message) => {
            runs.drop_failed();
            *run_wait = None;
            chat.handle.send(Command::Note(Entry::Notice {
                text: message,
                error: true,
            }));
        }
        RunUpdate::View(view) => {
            *run_wait = match (view.phase, view.waits.first()) {
                (RunPhase::Paused, Some(wait)) => Some(RunWait {
                    run_id: view.run_id.clone(),
                    wait: wait.node.clone(),
                    question: Question {
                        items: vec![QuestionItem {
                            header: wait.header.clone(),
                            text: wait.prompt.clone(),
                            options: wait
                                .choices
                                .iter()
                                .map(|choice| QuestionOption {
                                    label: choice.value.clone(),
                                    description: match (&choice.label, &choice.description) {
                                        (Some(label), Some(description)) => {
                                            Some(format!("{label} — {description}"))
                                        }
                                        (label, description) => {
                                            description.clone().or_else(|| label.clone())
                                        }
                                    },
                                })
                                .collect(),
                            multi: false,
                        }],
                    },
                }),
                _ => None,
            };
            chat.handle.send(Command::UpdateRun {
                run_id: view.run_id.clone(),
                status: view.phase.name().to_owned(),
                outcome: runs::outcome(&view),
            });
        }
    }
}

/// `/help`: the keys, then the commands.
fn help(catalogue: &Catalogue) -> String {
    format!(
        "Keys: Enter sends · Alt+Enter or Ctrl-J adds a line · Esc interrupts the agent · \
         Ctrl-O shows tool calls and thinking whole · PgUp/PgDn scroll · Up recalls · \
         Ctrl-C twice quits\n\n{}",
        catalogue.help()
    )
}

/// The slash commands of `project`, with its saved sessions for `/resume`.
pub(super) fn catalogue(runtime: &tokio::runtime::Runtime, project: &Project) -> Catalogue {
    let sessions = runtime
        .block_on(super::conversation::list_sessions(project))
        .unwrap_or_default()
        .into_iter()
        .map(|session| slash::Choice {
            value: session.id,
            description: Some(session.title),
        })
        .collect();
    Catalogue::discover(project).with_sessions(sessions)
}
