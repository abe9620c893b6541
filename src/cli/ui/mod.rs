//! `atomic ui`: watch runs. Both faces — the full-screen terminal view (`terminal`) and the
//! local web page (`web`) — show the same [`RunView`](crate::view::RunView), read from the
//! project's store ([`Watch`]) without blocking a run that is writing it, or with
//! `--temporal` from a Temporal server (`temporal`), and act through the same commands a
//! person would type ([`actions`]).

pub(crate) mod actions;
#[cfg(feature = "temporal")]
mod temporal;
mod terminal;
mod watch;
mod web;

use super::Exit;
use super::args::UiArgs;

pub use terminal::TerminalView;
pub(crate) use watch::Watch;

/// Runs `atomic ui`.
pub(super) fn run(args: &UiArgs) -> Exit {
    let runtime = match crate::cli::execute::runtime() {
        Ok(runtime) => runtime,
        Err(exit) => return exit,
    };
    let watch = match Watch::open(args, &runtime) {
        Ok(watch) => watch,
        Err(exit) => return exit,
    };
    let exit = if args.web {
        web::run(&runtime, &watch, args)
    } else {
        terminal::run(&runtime, &watch, args)
    };
    // A read still going on (a store read, a query waiting for a worker) must not keep
    // the process.
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    exit
}
