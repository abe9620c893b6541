//! Running a command in this process, started by the executor's [`Spawner`] in its own
//! process group (so a `sh -c` pipeline or a test runner's workers end with it), its whole
//! environment given, its input fed and closed, its output captured (bounded) and streamed
//! line by line. When the command ends, or the future is dropped (a timeout, a lost race, a
//! cancelled run), whatever is left of its group is ended by the process module's rule.

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWriteExt, BufReader};

use super::{CommandError, CommandOutput, CommandSpec, LineSink, OutputStream};
use crate::process::{Launch, Spawner, Stdio};

/// Most bytes of stdout or stderr kept (the rest is dropped, with a marker).
const MAX_CAPTURE: usize = 16 * 1024 * 1024;

/// Runs `spec` to its end, or ends it at its limit.
pub(super) async fn run(
    spawner: &dyn Spawner,
    spec: &CommandSpec,
    lines: Option<&LineSink<'_>>,
) -> Result<CommandOutput, CommandError> {
    let run = start_and_capture(spawner, spec, lines);
    match spec.limit {
        // Dropping `run` on the deadline ends the command's whole process group.
        Some(limit) => tokio::time::timeout(limit, run)
            .await
            .map_err(|_elapsed| CommandError::TimedOut(limit))?,
        None => run.await,
    }
}

async fn start_and_capture(
    spawner: &dyn Spawner,
    spec: &CommandSpec,
    lines: Option<&LineSink<'_>>,
) -> Result<CommandOutput, CommandError> {
    let launch = if spec.shell {
        Launch::new("sh").args(["-c".to_owned(), spec.argv.join(" ")])
    } else {
        let Some((program, args)) = spec.argv.split_first() else {
            return Err(CommandError::Empty);
        };
        Launch::new(program).args(args.iter().cloned())
    };
    let launch = launch
        .confined(spec.confine.clone().map(std::sync::Arc::new))
        .cwd(&spec.cwd)
        .envs(spec.env.iter().cloned())
        .stdin(if spec.stdin.is_some() {
            Stdio::Pipe
        } else {
            Stdio::Null
        })
        .stdout(if spec.capture_stdout {
            Stdio::Pipe
        } else {
            Stdio::Null
        })
        .stderr(Stdio::Pipe);
    // Dropping `child` (a timeout, a lost race, a cancelled run) ends its whole group.
    let mut child = spawner.spawn(launch).map_err(|error| CommandError::Start {
        program: spec.argv.first().cloned().unwrap_or_default(),
        reason: error.reason(),
    })?;

    let stdin = child.take_stdin();
    let feed = async {
        if let (Some(text), Some(mut pipe)) = (&spec.stdin, stdin) {
            // A child that exits without reading its input is not an error of ours.
            let _ = pipe.write_all(text.as_bytes()).await;
            // Closed, so a command reading its input to the end sees the end.
            drop(pipe);
        }
    };
    let stdout = child.take_stdout();
    let stderr = child.take_stderr();
    let (mut out, mut err) = (String::new(), String::new());
    let status = {
        let reading = async {
            tokio::join!(
                capture(OutputStream::Stdout, stdout, lines, &mut out),
                capture(OutputStream::Stderr, stderr, lines, &mut err),
            );
        };
        let waiting = async {
            feed.await;
            child.wait().await
        };
        crate::process::read_until_exit(reading, waiting).await
    };
    let status = status.map_err(|error| CommandError::Wait(error.to_string()))?;
    Ok(CommandOutput {
        stdout: out,
        stderr: err,
        code: status.code(),
    })
}

/// Reads a pipe to its end, line by line, passing each line on and keeping the text in
/// `text` (what was read stays there if reading is stopped early).
async fn capture(
    stream: OutputStream,
    pipe: Option<impl AsyncRead + Unpin>,
    lines: Option<&LineSink<'_>>,
    text: &mut String,
) {
    let Some(pipe) = pipe else {
        return;
    };
    let mut reader = BufReader::new(pipe);
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
}
