//! `tool`: run a command (argv; `sh -c` only with `shell=#true`) through the executor, its
//! output lines streamed as events, and map stdout, stderr and the exit code into state. A
//! `tool use="<name>"` node runs the custom tool's command instead, its `arg`s as one JSON
//! object on stdin, within the tool's own `timeout`.
//!
//! The interpreter renders the command and judges the result (`ok-codes`); the executor
//! runs it (locally: in its own process group, killed with everything it started when the
//! step is dropped — a timeout, a lost race, a cancelled run).

use std::sync::Arc;

use serde_json::json;

use super::mapping::{Raw, map_outputs};
use crate::ir::{ErrorClass, NodeIdx, OutputSource, Tool};
use crate::runtime::executor::{CommandError, CommandOutput, CommandSpec, OutputStream};
use crate::runtime::frame::{Frame, Write};
use crate::runtime::shared::Shared;
use crate::runtime::template::ScopeSource;
use crate::runtime::{NodeError, RunEvent};
use minijinja::Value as TemplateValue;

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
        Some(name) => custom_call(shared, &id, tool, &name.value, scope.value())?,
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
    let mut env: Vec<(String, String)> = shared
        .ctx
        .tool_env
        .iter()
        .map(|(name, value)| (name.to_owned(), value.to_owned()))
        .collect();
    for (name, template) in &tool.env {
        env.push((
            name.value.clone(),
            shared.program.templates.render(template, &scope)?,
        ));
    }
    drop(scope);
    if shared.ctx.dry_run {
        let out = super::canned::text(shared.workflow(), &tool.outputs);
        return writes(shared, id, tool, &out, "", Some(0));
    }
    let program = invocation.argv.first().cloned().unwrap_or_default();
    // Held to the command's end: the proxy and the temp directory go with it.
    let sandbox = match super::sandboxed::declared(shared, tool.sandbox.as_ref()) {
        Some(sandbox) => {
            let reach = super::sandboxed::reach(shared, frame, &id, sandbox, &[])?;
            Some(super::sandboxed::start(shared, &id, &reach).await?)
        }
        None => None,
    };
    if let Some(running) = &sandbox {
        env.extend(running.env.iter().cloned());
    }
    let spec = CommandSpec {
        argv: invocation.argv,
        shell: invocation.shell,
        cwd: match cwd {
            Some(dir) => shared.workspace(frame).resolve(dir),
            None => shared.workspace(frame).root().to_path_buf(),
        },
        env,
        stdin: invocation.stdin,
        capture_stdout: true,
        limit: invocation.limit,
        confine: sandbox
            .as_ref()
            .map(|running| running.confinement.as_ref().clone()),
    };
    let forward =
        shared.ctx.sink.is_some() && (shared.ctx.stream.events || shared.ctx.stream.debug);
    let lines = |stream: OutputStream, line: &str| {
        shared.emit(RunEvent::ToolOutput {
            node: id.clone(),
            stream,
            line: line.to_owned(),
        });
    };
    let output = shared
        .ctx
        .executor
        .run_command(&spec, forward.then_some(&lines as &_))
        .await
        .map_err(|error| command_error(&id, error))?;
    let CommandOutput {
        stdout,
        stderr,
        code,
    } = output;
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
        let tail: String = stderr
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
    writes(shared, id, tool, &stdout, &stderr, code)
}

/// A command that did not finish, as the step's failure.
fn command_error(id: &str, error: CommandError) -> NodeError {
    match error {
        CommandError::Empty => NodeError::fatal(format!("`{id}` has no command to run")),
        CommandError::TimedOut(limit) => NodeError::new(
            ErrorClass::Timeout,
            format!("`{id}` timed out after {limit:?} (its custom tool's `timeout`)"),
        ),
        other => NodeError::new(ErrorClass::ToolExit, format!("`{id}` {other}")),
    }
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
