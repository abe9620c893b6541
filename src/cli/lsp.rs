//! `atomic lsp`: the language server on stdin/stdout. Logs go to stderr (stdout carries the
//! protocol).

use super::Exit;

/// Runs the language server until the client exits.
#[allow(clippy::print_stderr)] // `cli` is the module that prints
pub(super) fn run() -> Exit {
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("error: cannot start the async runtime: {error}");
            return Exit::Fatal;
        }
    };
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    runtime.block_on(crate::lsp::serve_stdio(home));
    Exit::Ok
}
