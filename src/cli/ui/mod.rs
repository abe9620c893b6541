//! `atomic ui`: watch runs. Both faces — the full-screen terminal view (`terminal`) and the
//! local web page (`web`) — show the same [`RunView`](crate::view::RunView), read from the
//! project's store ([`Watch`]) without blocking a run that is writing it, and act through
//! the same commands a person would type ([`actions`]).

mod actions;
mod terminal;
mod watch;
mod web;

use super::Exit;
use super::args::UiArgs;

pub use terminal::TerminalView;
pub(crate) use watch::Watch;

/// Runs `atomic ui`.
pub(super) fn run(args: &UiArgs) -> Exit {
    let watch = match Watch::open() {
        Ok(watch) => watch,
        Err(exit) => return exit,
    };
    if args.web {
        web::run(&watch, args)
    } else {
        terminal::run(&watch, args)
    }
}
