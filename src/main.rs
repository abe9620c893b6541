//! The `atomic` binary: everything happens in [`atomic::cli`].

fn main() -> std::process::ExitCode {
    atomic::cli::main(std::env::args_os())
}
