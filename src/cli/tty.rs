//! The terminal a full-screen face (`atomic ui`, `atomic chat`) takes: raw mode and the
//! alternate screen held by a [`Guard`] that gives them back on every way out — return,
//! error, panic (a hook) — and the wait for keys that sees a terminal hang up (crossterm
//! would spin reading nothing), and SIGTERM or a hang-up turned into a request to stop.

use std::io::{self, Stdout};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
#[cfg(not(unix))]
use ratatui::crossterm::event;
use ratatui::crossterm::{cursor, execute, terminal};

/// What the terminal has for the face.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Input {
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
pub(crate) fn wait_for_keys(timeout: Duration) -> io::Result<Input> {
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
pub(crate) fn wait_for_keys(timeout: Duration) -> io::Result<Input> {
    Ok(if event::poll(timeout)? {
        Input::Ready
    } else {
        Input::Nothing
    })
}

/// Calls `stop` on SIGTERM or SIGHUP (the terminal closed), so the loop ends, the terminal
/// is given back and what the face started is ended before it exits — killed by a hang-up,
/// a chat's agent server would outlive it.
pub(crate) async fn on_stop_signals(stop: impl FnOnce()) {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let (Ok(mut term), Ok(mut hangup)) = (
            signal(SignalKind::terminate()),
            signal(SignalKind::hangup()),
        ) else {
            return;
        };
        tokio::select! {
            _ = term.recv() => {}
            _ = hangup.recv() => {}
        }
        stop();
    }
    #[cfg(not(unix))]
    drop(stop);
}

/// Whether the terminal is taken (raw mode, alternate screen), for the panic hook.
static TAKEN: AtomicBool = AtomicBool::new(false);

/// The terminal, taken; given back when dropped.
pub(crate) struct Guard {
    /// The taken terminal.
    pub(crate) terminal: Terminal<CrosstermBackend<Stdout>>,
}

impl Guard {
    /// Takes the terminal.
    ///
    /// # Errors
    /// The terminal refused raw mode or the alternate screen.
    pub(crate) fn enter() -> io::Result<Self> {
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
