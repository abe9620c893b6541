//! The full-screen session: the terminal taken (raw mode, alternate screen, hidden cursor)
//! by a [`Guard`] that gives it back on every way out — return, error, panic (a hook),
//! SIGTERM (it stops the loop), a terminal that hangs up — and the loop that draws the app when something
//! changed, reads keys, and carries out their commands (a step's diff is read from the
//! project's snapshots on the blocking pool, so git never holds up a key).

use std::io::{self, Stdout};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use ratatui::crossterm::event::{self, Event, KeyEventKind};
use ratatui::crossterm::{cursor, execute, terminal};

use super::app::{App, Command, Screen};
use super::draw;
use super::loader::{self, Loaded, Target};
use crate::cli::Exit;
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
    let signals = runtime.spawn(stop_on_signals(sender.clone()));
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

/// What the terminal has for the view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Input {
    /// Nothing within the wait.
    Nothing,
    /// Bytes to read.
    Ready,
    /// Its other end closed (the window, the SSH connection): reading it gives nothing,
    /// forever, so crossterm must not be asked to (it would spin).
    HungUp,
}

/// Waits at most `timeout` for the terminal (stdin) to have something.
#[cfg(unix)]
fn wait_for_keys(timeout: Duration) -> io::Result<Input> {
    use std::os::fd::AsFd;

    use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
    let stdin = io::stdin();
    let mut fds = [PollFd::new(stdin.as_fd(), PollFlags::POLLIN)];
    let millis = u16::try_from(timeout.as_millis()).unwrap_or(u16::MAX);
    match poll(&mut fds, PollTimeout::from(millis)) {
        Ok(0) | Err(nix::errno::Errno::EINTR) => Ok(Input::Nothing),
        Ok(_) => {
            let events = fds[0].revents().unwrap_or(PollFlags::empty());
            if events.intersects(PollFlags::POLLHUP | PollFlags::POLLERR | PollFlags::POLLNVAL) {
                Ok(Input::HungUp)
            } else {
                Ok(Input::Ready)
            }
        }
        Err(error) => Err(error.into()),
    }
}

/// Waits at most `timeout` for a key.
#[cfg(not(unix))]
fn wait_for_keys(timeout: Duration) -> io::Result<Input> {
    Ok(if event::poll(timeout)? {
        Input::Ready
    } else {
        Input::Nothing
    })
}

/// Asks the loop to stop on SIGTERM, so the terminal is given back. (SIGHUP keeps its
/// default: the terminal is gone, and the process with it.)
async fn stop_on_signals(sender: mpsc::Sender<Loaded>) {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            term.recv().await;
            let _ = sender.send(Loaded::Stop);
        }
    }
    #[cfg(not(unix))]
    drop(sender);
}

/// Whether the terminal is taken (raw mode, alternate screen), for the panic hook.
static TAKEN: AtomicBool = AtomicBool::new(false);

/// The terminal, taken; given back when dropped.
struct Guard {
    terminal: Terminal<CrosstermBackend<Stdout>>,
}

impl Guard {
    fn enter() -> io::Result<Self> {
        static HOOK: std::sync::Once = std::sync::Once::new();
        HOOK.call_once(|| {
            let previous = std::panic::take_hook();
            std::panic::set_hook(Box::new(move |info| {
                // Give the terminal back first, so the message is seen.
                give_back();
                previous(info);
            }));
        });
        terminal::enable_raw_mode()?;
        TAKEN.store(true, Ordering::SeqCst);
        // Cleared by an escape code, not `Terminal::clear`, which asks the terminal where its
        // cursor is and fails where nothing answers (a pty nobody reads the answer from).
        let taken = execute!(
            io::stdout(),
            terminal::EnterAlternateScreen,
            cursor::Hide,
            terminal::Clear(terminal::ClearType::All)
        )
        .and_then(|()| Terminal::new(CrosstermBackend::new(io::stdout())));
        match taken {
            Ok(terminal) => Ok(Self { terminal }),
            Err(error) => {
                give_back();
                Err(error)
            }
        }
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        give_back();
    }
}

/// Leaves the alternate screen, shows the cursor, ends raw mode (once).
fn give_back() {
    if TAKEN.swap(false, Ordering::SeqCst) {
        let _ = execute!(io::stdout(), terminal::LeaveAlternateScreen, cursor::Show);
        let _ = terminal::disable_raw_mode();
    }
}
