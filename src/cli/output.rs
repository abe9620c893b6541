//! How `run` and `resume` report: the progress display on stderr (live tree on a
//! terminal, plain lines otherwise, nothing with `--quiet`), JSONL on stdout for
//! `--stream`, colours only on a terminal without `NO_COLOR`.

use std::io::IsTerminal;

use super::args::OutputArgs;
use super::progress::{Display, Paint};
use crate::runtime::StreamModes;

/// The resolved output settings.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Output {
    pub(crate) display: Display,
    pub(crate) stream: Option<StreamModes>,
    pub(crate) quiet: bool,
    pub(crate) paint: Paint,
    /// Whether a person is at the terminal (stdin and stderr are terminals).
    pub(crate) interactive: bool,
}

impl Output {
    /// Reads the flags and the terminal.
    ///
    /// # Errors
    /// An unknown `--stream` mode.
    pub(crate) fn from_args(args: &OutputArgs) -> Result<Self, String> {
        let stream = if args.stream.is_empty() {
            None
        } else {
            let mut modes = StreamModes::default();
            for text in &args.stream {
                let more = StreamModes::parse(text)?;
                modes.values |= more.values;
                modes.updates |= more.updates;
                modes.events |= more.events;
                modes.debug |= more.debug;
            }
            Some(modes)
        };
        let tty = std::io::stderr().is_terminal();
        let display = if args.quiet {
            Display::Quiet
        } else if tty && std::env::var_os("TERM").is_none_or(|term| term != "dumb") {
            Display::Tree
        } else {
            Display::Plain
        };
        Ok(Self {
            display,
            stream,
            quiet: args.quiet,
            paint: Paint {
                on: tty && std::env::var_os("NO_COLOR").is_none(),
            },
            interactive: tty && std::io::stdin().is_terminal(),
        })
    }
}
