//! `atomic chat`: a full-screen conversation with any agent adapter, where discovered
//! workflows, commands and skills are slash commands.
//!
//! `transcript` is the conversation as the chat shows and saves it.

// Parts are wired in one by one; until the view uses them all, some are unused.
#![allow(dead_code)]

mod render;
mod transcript;

use crate::cli::Exit;
use crate::cli::args::ChatArgs;

/// Runs `atomic chat`.
pub(super) fn run(args: &ChatArgs) -> Exit {
    let _ = args;
    eprintln!("error: `atomic chat` is being built in this revision");
    Exit::Fatal
}
