//! Running a command in this process: in its own process group (so a `sh -c` pipeline or
//! a test runner's workers end with it), its whole environment given, its input fed and
//! closed, its output captured (bounded) and streamed line by line. Dropping the future —
//! a timeout, a lost race, a cancelled run — ends the whole group ([`GroupKill`]: SIGTERM,
//! then SIGKILL after a grace period).

use std::process::Stdio;

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWriteExt, BufReader};
use tokio::process::Command;

use super::{CommandError, CommandOutput, CommandSpec, LineSink, OutputStream};
use crate::runtime::process_group::GroupKill;

/// Most bytes of stdout or stderr kept (the rest is dropped, with a marker).
const MAX_CAPTURE: usize = 16 * 1024 * 1024;

/// Runs `spec` to its end, or ends it at its limit.
pub(super) async fn run(
    spec: &CommandSpec,
    lines: Option<&LineSink<'_>>,
) -> Result<CommandOutput, CommandError> {
    let run = start_and_capture(spec, lines);
    match spec.limit {
        // Dropping `run` on the deadline ends the command's whole process group.
        Some(limit) => tokio::time::timeout(limit, run)
            .await
            .map_err(|_elapsed| CommandError::TimedOut(limit))?,
        None => run.await,
    }
}

async fn start_and_capture(
    spec: &CommandSpec,
    lines: Option<&LineSink<'_>>,
) -> Result<CommandOutput, CommandError> {
    let mut command = if spec.shell {
        let mut command = Command::new("sh");
        command.arg("-c").arg(spec.argv.join(" "));
        command
    } else {
        let Some((program, args)) = spec.argv.split_first() else {
            return Err(CommandError::Empty);
        };
        let mut command = Command::new(program);
        command.args(args);
        command
    };
    command
        .current_dir(&spec.cwd)
        .env_clear()
        .envs(spec.env.iter().map(|(name, value)| (name, value)))
        .stdin(if spec.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(if spec.capture_stdout {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stderr(Stdio::piped());
    // Not `kill_on_drop`: the group guard ends the whole group, SIGTERM first.
    #[cfg(unix)]
    command.process_group(0);
    let mut child = command.spawn().map_err(|error| CommandError::Start {
        program: spec.argv.first().cloned().unwrap_or_default(),
        reason: error.to_string(),
    })?;
    let mut guard = GroupKill::new(child.id());

    let feed = async {
        if let (Some(text), Some(mut pipe)) = (&spec.stdin, child.stdin.take()) {
            // A child that exits without reading its input is not an error of ours.
            let _ = pipe.write_all(text.as_bytes()).await;
            // Closed, so a command reading its input to the end sees the end.
            drop(pipe);
        }
    };
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let ((), stdout, stderr) = tokio::join!(
        feed,
        capture(OutputStream::Stdout, stdout, lines),
        capture(OutputStream::Stderr, stderr, lines),
    );
    let status = child
        .wait()
        .await
        .map_err(|error| CommandError::Wait(error.to_string()))?;
    guard.disarm();
    Ok(CommandOutput {
        stdout,
        stderr,
        code: status.code(),
    })
}

/// Reads a pipe to its end, line by line, passing each line on and keeping the text.
async fn capture(
    stream: OutputStream,
    pipe: Option<impl AsyncRead + Unpin>,
    lines: Option<&LineSink<'_>>,
) -> String {
    let Some(pipe) = pipe else {
        return String::new();
    };
    let mut reader = BufReader::new(pipe);
    let mut text = String::new();
    let mut line = Vec::new();
    loop {
        line.clear();
        match reader.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {
                let chunk = String::from_utf8_lossy(&line);
                if let Some(lines) = lines {
                    lines(stream, chunk.trim_end_matches(['\n', '\r']));
                }
                if text.len() + chunk.len() <= MAX_CAPTURE {
                    text.push_str(&chunk);
                } else if !text.ends_with("[output truncated]\n") {
                    text.push_str("\n[output truncated]\n");
                }
            }
        }
    }
    text
}
