//! The full-screen session: the terminal taken (raw mode, alternate screen, hidden cursor)
//! by a [`Guard`] that gives it back on every way out — return, error, panic (a hook),
//! SIGTERM (it stops the loop), a terminal that hangs up — and the loop that draws the app when something
//! changed, reads keys, and carries out their commands (a step's diff is read from the
//! project's snapshots on the blocking pool, so git never holds up a key).

use std::io::{self, Stdout};
use std::path::PathBuf;
use std::sync::mpsc;
use std::time::Duration;

use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use ratatui::crossterm::event::{self, Event, KeyEventKind};
use ratatui::crossterm::terminal;

use super::app::{App, Command, Screen};
use super::draw;
use super::loader::{self, Loaded, Target};
use crate::cli::Exit;
use crate::cli::tty::{Guard, Input, on_stop_signals, wait_for_keys};
use crate::cli::ui::{Watch, actions};
use crate::store::RunId;
use crate::workspace::snapshot::Snapshots;

/// The longest a key waits to be read while nothing else happens.
const KEY_WAIT: Duration = Duration::from_millis(50);

/// Runs the view of `run` (or of the newest run) until a key quits it.
pub(super) fn run(
    runtime: &tokio::runtime::Runtime,
    watch: &Watch,
    run: Option<RunId>,
    color: bool,
) -> Exit {
    let mut app = App::new(run.clone(), color);
    let (target, targets) = tokio::sync::watch::channel(Target { run, list: false });
    let (sender, loaded) = mpsc::channel();
    let reader = runtime.spawn(loader::poll(watch.clone(), targets, sender.clone()));
    let stopper = sender.clone();
    let signals = runtime.spawn(on_stop_signals(move || {
        let _ = stopper.send(Loaded::Stop);
    }));
    let actions = watch.actions();
    let diffs = Diffs {
        runtime: runtime.handle().clone(),
        root: actions.project.clone(),
        sender,
    };
    let result = Guard::enter().and_then(|mut guard| {
        event_loop(
            &mut guard.terminal,
            &mut app,
            &target,
            &loaded,
            &actions,
            &diffs,
        )
    });
    reader.abort();
    signals.abort();
    match result {
        Ok(()) => Exit::Ok,
        Err(error) => {
            eprintln!("error: the terminal failed: {error}");
            Exit::Fatal
        }
    }
}

fn event_loop(
    terminal: &mut Terminal<CrosstermBackend<Stdout>>,
    app: &mut App,
    target: &tokio::sync::watch::Sender<Target>,
    loaded: &mpsc::Receiver<Loaded>,
    actions: &actions::Actions,
    diffs: &Diffs,
) -> io::Result<()> {
    let mut dirty = true;
    loop {
        // Everything read since the last turn (a bounded backlog: a few a poll).
        while let Ok(message) = loaded.try_recv() {
            dirty = true;
            match message {
                Loaded::Runs(rows) => {
                    if let Some(run) = app.take_runs(rows) {
                        target.send_modify(|target| target.run = Some(run));
                    }
                }
                Loaded::View(run, view) => app.take_view(&run, view.map(|view| *view)),
                Loaded::Failed(error) => app.load_error = Some(error),
                Loaded::Patch {
                    before,
                    after,
                    patch,
                } => app.take_patch(&before, &after, patch),
                Loaded::Stop => return Ok(()),
            }
        }
        if dirty {
            app.height = terminal.size()?.height;
            terminal.draw(|frame| draw::draw(frame, app))?;
            dirty = false;
        }
        match wait_for_keys(KEY_WAIT)? {
            Input::HungUp => return Ok(()),
            Input::Nothing => {
                // A resize comes as a signal crossterm reads only when asked for events.
                let size = terminal::size()?;
                let area = terminal.get_frame().area();
                dirty |= (area.width, area.height) != size;
                continue;
            }
            Input::Ready => {}
        }
        // Everything typed so far (a paste is many keys), then draw.
        while event::poll(Duration::ZERO)? {
            match event::read()? {
                Event::Key(key) if key.kind != KeyEventKind::Release => {
                    dirty = true;
                    match app.key(key) {
                        None => {}
                        Some(Command::Quit) => return Ok(()),
                        Some(Command::Show(run)) => {
                            target.send_modify(|target| target.run = Some(run));
                        }
                        Some(Command::Answer { run, wait, answer }) => {
                            if let Err(error) = actions.answer(&run, wait.as_deref(), &answer) {
                                app.warn(error.to_string());
                            }
                        }
                        Some(Command::Cancel { run }) => {
                            if let Err(error) = actions.cancel(&run) {
                                app.warn(error.to_string());
                            }
                        }
                        Some(Command::Diff { before, after }) => diffs.read(before, after),
                    }
                    let list = app.screen == Screen::Runs;
                    if target.borrow().list != list {
                        target.send_modify(|target| target.list = list);
                    }
                }
                Event::Resize(..) => dirty = true,
                _ => {}
            }
        }
    }
}

/// Where a step's diff is read: the project's snapshots, on the blocking pool, the patch
/// sent back to the loop.
struct Diffs {
    runtime: tokio::runtime::Handle,
    root: PathBuf,
    sender: mpsc::Sender<Loaded>,
}

impl Diffs {
    fn read(&self, before: String, after: String) {
        let (root, sender) = (self.root.clone(), self.sender.clone());
        self.runtime.spawn_blocking(move || {
            let patch = Snapshots::open(&root)
                .and_then(|snapshots| snapshots.patch(&before, &after, false))
                .map_err(|error| error.to_string());
            let _ = sender.send(Loaded::Patch {
                before,
                after,
                patch,
            });
        });
    }
}
