//! `tool`: run a command (argv; `sh -c` only with `shell=#true`) in its own process group,
//! stream its output lines as events, capture stdout, stderr and the exit code. A `tool
//! use="<name>"` node runs the custom tool's command instead, its `arg`s as one JSON object
//! on stdin, within the tool's own `timeout`.
//!
//! Cancellation is by drop: when the step times out, loses a race or the run is
//! cancelled, the future is dropped and [`GroupKill`] kills the whole process group, so
//! grandchildren (pipelines, test runners) die with the child.

use std::process::Stdio;
use std::sync::Arc;

use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWriteExt, BufReader};
use tokio::process::Command;

use super::mapping::{Raw, map_outputs};
use crate::ir::{ErrorClass, NodeIdx, OutputSource, Tool};
use crate::runtime::frame::{Frame, Write};
use crate::runtime::process_group::GroupKill;
use crate::runtime::shared::Shared;
use crate::runtime::{NodeError, RunEvent};
use minijinja::Value as TemplateValue;

/// Most bytes of stdout or stderr kept (the rest is dropped, with a marker).
const MAX_CAPTURE: usize = 16 * 1024 * 1024;

pub(super) async fn execute(
    shared: &Arc<Shared>,
    frame: &Frame,
    node: NodeIdx,
    tool: &Tool,
    seq: u64,
) -> Result<Vec<Write>, NodeError> {
    let id = shared.id(node).clone();
    let scope = shared.scope(frame, Some(node), seq);
    let invocation = match &tool.use_ {
        Some(name) => custom_call(shared, &id, tool, &name.value, &scope)?,
        None => Invocation {
            argv: tool
                .run
                .iter()
                .map(|t| shared.program.templates.render(t, &scope))
                .collect::<Result<_, _>>()?,
            shell: tool.shell,
            stdin: tool
                .stdin
                .as_ref()
                .map(|t| shared.program.templates.render(t, &scope))
                .transpose()?,
            limit: None,
        },
    };
    let cwd = tool
        .cwd
        .as_ref()
        .map(|t| shared.program.templates.render(t, &scope))
        .transpose()?;
    let env: Vec<(String, String)> = tool
        .env
        .iter()
        .map(|(name, t)| {
            Ok((
                name.value.clone(),
                shared.program.templates.render(t, &scope)?,
            ))
        })
        .collect::<Result<_, NodeError>>()?;
    drop(scope);
    if shared.ctx.dry_run {
        let out = super::canned::text(shared.workflow(), &tool.outputs);
        return writes(shared, id, tool, &out, "", Some(0));
    }
    let dir = match cwd {
        Some(dir) => shared.ctx.working_dir.join(dir),
        None => shared.ctx.working_dir.clone(),
    };
    let Some(limit) = invocation.limit else {
        return spawn(shared, id, tool, invocation, &dir, env).await;
    };
    let run = spawn(shared, id.clone(), tool, invocation, &dir, env);
    // Dropping `run` on the deadline kills the command's whole process group.
    tokio::time::timeout(limit, run).await.map_err(|_elapsed| {
        NodeError::new(
            ErrorClass::Timeout,
            format!("`{id}` timed out after {limit:?} (its custom tool's `timeout`)"),
        )
    })?
}

/// What to start: argv (or one `sh -c` line), stdin, and a custom tool's own time limit.
struct Invocation {
    argv: Vec<String>,
    shell: bool,
    stdin: Option<String>,
    limit: Option<std::time::Duration>,
}

/// A `tool use="<name>"` node: the custom tool's command, with the rendered `arg`s as one
/// JSON object on stdin (each `arg` evaluated as JSON, so `"{{ state.n }}"` stays a number).
fn custom_call(
    shared: &Shared,
    id: &Arc<str>,
    tool: &Tool,
    name: &str,
    scope: &TemplateValue,
) -> Result<Invocation, NodeError> {
    let custom = shared.workflow().custom_tool(name).ok_or_else(|| {
        NodeError::fatal(format!(
            "`{id}` uses the custom tool `{name}`, which this run was not given"
        ))
    })?;
    let mut arguments = serde_json::Map::new();
    for (arg, template) in &tool.args {
        let value = shared.program.templates.eval_json(template, scope)?;
        arguments.insert(arg.value.clone(), typed(&custom.schema, &arg.value, value));
    }
    Ok(Invocation {
        argv: custom.command.clone(),
        shell: false,
        stdin: Some(serde_json::Value::Object(arguments).to_string()),
        limit: custom
            .timeout
            .as_ref()
            .map(|timeout| timeout.value.to_std()),
    })
}

/// Text given for an argument its schema declares a number, boolean, array or object
/// (`arg "jobs" "4"`) is passed as that JSON value when it parses as one.
fn typed(schema: &serde_json::Value, name: &str, value: serde_json::Value) -> serde_json::Value {
    let declared = schema["properties"][name]["type"].as_str();
    match (&value, declared) {
        (serde_json::Value::String(text), Some(ty)) if ty != "string" => {
            serde_json::from_str(text).unwrap_or(value)
        }
        _ => value,
    }
}

/// Starts the command in its own process group, streams and captures its output, and maps
/// the result.
async fn spawn(
    shared: &Arc<Shared>,
    id: Arc<str>,
    tool: &Tool,
    invocation: Invocation,
    dir: &std::path::Path,
    env: Vec<(String, String)>,
) -> Result<Vec<Write>, NodeError> {
    let Invocation {
        argv, shell, stdin, ..
    } = invocation;
    let mut command = if shell {
        let mut command = Command::new("sh");
        command.arg("-c").arg(argv.join(" "));
        command
    } else {
        let Some((program, args)) = argv.split_first() else {
            return Err(NodeError::fatal(format!("`{id}` has no command to run")));
        };
        let mut command = Command::new(program);
        command.args(args);
        command
    };
    command
        .current_dir(dir)
        .env_clear()
        .envs(shared.ctx.tool_env.iter())
        .envs(env)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // Not `kill_on_drop`: the group guard ends the whole group, SIGTERM first.
    #[cfg(unix)]
    command.process_group(0);

    let program = argv.first().cloned().unwrap_or_default();
    let mut child = command.spawn().map_err(|error| {
        NodeError::new(
            ErrorClass::ToolExit,
            format!("`{id}` could not start `{program}`: {error}"),
        )
    })?;
    let mut guard = GroupKill::new(child.id());

    let feed = async {
        if let (Some(text), Some(mut pipe)) = (stdin, child.stdin.take()) {
            // A child that exits without reading its input is not an error of ours.
            let _ = pipe.write_all(text.as_bytes()).await;
            // Closed, so a tool reading its input to the end sees the end.
            drop(pipe);
        }
    };
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let ((), out, err) = tokio::join!(
        feed,
        capture(shared, &id, "stdout", stdout),
        capture(shared, &id, "stderr", stderr),
    );
    let status = child.wait().await.map_err(|error| {
        NodeError::new(
            ErrorClass::ToolExit,
            format!("`{id}` could not be waited for: {error}"),
        )
    })?;
    guard.disarm();
    let code = status.code();
    let ok_codes: &[i32] = if tool.ok_codes.is_empty() {
        &[0]
    } else {
        &tool.ok_codes
    };
    if !code.is_some_and(|code| ok_codes.contains(&code)) {
        let how = code.map_or_else(
            || "was killed by a signal".to_owned(),
            |c| format!("exited with code {c}"),
        );
        let tail: String = err
            .lines()
            .rev()
            .take(5)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect::<Vec<_>>()
            .join("\n");
        let message = if tail.is_empty() {
            format!("`{id}` ({program}) {how}")
        } else {
            format!("`{id}` ({program}) {how}: {tail}")
        };
        return Err(NodeError::new(ErrorClass::ToolExit, message));
    }
    writes(shared, id, tool, &out, &err, code)
}

/// Maps a finished command's results into state writes and the node's output.
fn writes(
    shared: &Shared,
    id: Arc<str>,
    tool: &Tool,
    out: &str,
    err: &str,
    code: Option<i32>,
) -> Result<Vec<Write>, NodeError> {
    let exit_code = json!(code);
    let mut writes = map_outputs(shared, &tool.outputs, |from| {
        Ok(match from {
            OutputSource::Result => Raw::Text(out),
            OutputSource::Stderr => Raw::Text(err),
            OutputSource::ExitCode => Raw::Typed(exit_code.clone()),
        })
    })?;
    writes.push(Write::Output(
        id,
        json!({"stdout": out, "stderr": err, "exit_code": code}),
    ));
    Ok(writes)
}

/// Reads a pipe to its end, line by line, emitting each line and keeping the text.
async fn capture(
    shared: &Shared,
    id: &Arc<str>,
    stream: &'static str,
    pipe: Option<impl AsyncRead + Unpin>,
) -> String {
    let Some(pipe) = pipe else {
        return String::new();
    };
    let forward =
        shared.ctx.sink.is_some() && (shared.ctx.stream.events || shared.ctx.stream.debug);
    let mut reader = BufReader::new(pipe);
    let mut text = String::new();
    let mut line = Vec::new();
    loop {
        line.clear();
        match reader.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {
                let chunk = String::from_utf8_lossy(&line);
                if forward {
                    shared.emit(RunEvent::ToolOutput {
                        node: id.clone(),
                        stream,
                        line: chunk.trim_end_matches(['\n', '\r']).to_owned(),
                    });
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
