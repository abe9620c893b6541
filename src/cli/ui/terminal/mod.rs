//! `atomic ui` in a terminal: a full-screen view of a run (ratatui on crossterm: plain
//! escape codes and keys, so it works over SSH) — its steps with live states, the selected
//! step's output as it streams, the files it changed, its state and events — with keys to
//! move, follow the running step, open a step, read its diff, answer a wait and cancel.
//! When stdout is not a terminal the run is printed once as text instead.
//!
//! `app` holds the state and what keys do, `draw` paints it, `loader` reads the store in
//! the background, `session` owns the terminal and the loop, `summary` is the text form,
//! `files` the text of what a step changed (its files, its diff), `plan` the text of an
//! agent's plan.

mod app;
mod draw;
mod files;
mod loader;
mod plan;
mod session;
mod summary;
mod text;

use std::io::IsTerminal;

use ratatui::Frame;

use super::Watch;
use crate::cli::Exit;
use crate::cli::args::UiArgs;
use crate::view::RunView;

/// Shows the run `args.run` (or the newest, and each newer one as it starts).
pub(super) fn run(runtime: &tokio::runtime::Runtime, watch: &Watch, args: &UiArgs) -> Exit {
    // Keys come from stdin: both ends must be the terminal for the full-screen view.
    let terminal = std::io::stdout().is_terminal() && std::io::stdin().is_terminal();
    // A named run is looked up before the screen is taken, so a typo is a plain error.
    let run = match &args.run {
        Some(prefix) => match runtime.block_on(watch.resolve(Some(prefix))) {
            Ok(run) => Some(run),
            Err(error) => return watch.report(error),
        },
        None if terminal => None,
        None => match runtime.block_on(watch.resolve(None)) {
            Ok(run) => Some(run),
            Err(error) => return watch.report(error),
        },
    };
    match run {
        Some(run) if !terminal => match runtime.block_on(watch.view(&run)) {
            Ok(view) => {
                // The answer hint is the command to type: for a run elsewhere it says
                // where (`--temporal …`), as `atomic run --temporal` says it.
                let text = summary::render(&view, watch.command_flags());
                print!("{text}");
                Exit::Ok
            }
            Err(error) => watch.report(error),
        },
        run => {
            let color = std::env::var_os("NO_COLOR").is_none();
            session::run(runtime, watch, run, color)
        }
    }
}

/// The terminal view of one run as `atomic ui RUN` first draws it: the running (or
/// waiting, or failed, or last) step selected and followed. Public for the benchmark of
/// drawing (`benches/ui.rs`); `atomic ui` itself is the way to use it.
pub struct TerminalView {
    app: app::App,
}

impl TerminalView {
    /// The view of `view`, in colour or (`color: false`, as under `NO_COLOR`) without.
    #[must_use]
    pub fn new(view: RunView, color: bool) -> Self {
        Self {
            app: app::App::showing(view, color),
        }
    }

    /// Draws it into `frame`.
    pub fn draw(&self, frame: &mut Frame<'_>) {
        draw::draw(frame, &self.app);
    }

    /// Draws it into `area` of `frame`.
    pub fn draw_in(&self, frame: &mut Frame<'_>, area: ratatui::layout::Rect) {
        draw::draw_in(frame, &self.app, area);
    }
}
