//! The `atomic` binary: everything happens in [`atomic::cli`].

use std::process::ExitCode;

fn main() -> ExitCode {
    // atomic started as the sandbox helper of one of its own steps: confine, then become
    // the step's program (see `process::confine`). Before anything else runs.
    let mut args = std::env::args_os();
    if args
        .nth(1)
        .is_some_and(|first| first == atomic::process::confine::HELPER)
    {
        let rest: Vec<String> = args.map(|arg| arg.to_string_lossy().into_owned()).collect();
        let code = atomic::process::confine::run_helper(&rest);
        return ExitCode::from(u8::try_from(code).unwrap_or(126));
    }
    // A reader that stops early (`atomic runs | head`) closes the pipe: the output is no
    // longer wanted, so atomic ends quietly as Unix tools do (exit 141, as if by SIGPIPE)
    // instead of reporting `println!`'s failure as a crash.
    let report = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !is_broken_pipe(info.payload()) {
            report(info);
        }
    }));
    match std::panic::catch_unwind(|| atomic::cli::main(std::env::args_os())) {
        Ok(code) => code,
        Err(payload) if is_broken_pipe(payload.as_ref()) => ExitCode::from(141),
        Err(payload) => std::panic::resume_unwind(payload),
    }
}

/// Whether a panic is the standard library's "failed printing to stdout" on a closed pipe.
fn is_broken_pipe(payload: &(dyn std::any::Any + Send)) -> bool {
    let message = payload
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| payload.downcast_ref::<&str>().copied())
        .unwrap_or_default();
    message.starts_with("failed printing to std") && message.contains("Broken pipe")
}
