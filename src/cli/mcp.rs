//! `atomic mcp`: the project's custom tools served over MCP on stdin/stdout (see
//! `crate::mcp`). stdout carries only the protocol; problems in tool files and logs go to
//! stderr, and a broken tool file leaves the other tools served.

use std::path::PathBuf;
use std::time::Duration;

use super::Exit;
use super::args::McpArgs;
use super::disk::Disk;
use super::project::Project;
use super::render::pretty::{self, Style};
use crate::mcp::{ToolServer, discover, serve_stdio};
use crate::providers::{Environment, Redactor, ToolEnv};

/// Serves until the client closes stdin.
pub(super) fn run(args: &McpArgs) -> Exit {
    let project = match &args.project {
        Some(dir) => match dir.canonicalize() {
            Ok(root) if root.is_dir() => Project {
                root,
                home: std::env::var_os("HOME").map(PathBuf::from),
                adapter: None,
                model: None,
            },
            _ => {
                eprintln!(
                    "error: `--project {}` is not a directory; give the project's root (the directory holding `.atomic/`)",
                    dir.display()
                );
                return Exit::Usage;
            }
        },
        None => Project::discover(),
    };
    let user_dir = project.home.as_ref().map(|home| home.join(".atomic"));
    let found = discover(&Disk, &project.root, user_dir.as_deref());
    if !found.problems.is_empty() {
        eprint!(
            "{}",
            pretty::render(&found.sources, &found.problems, Style::plain(100))
        );
        if found.problems.iter().any(|problem| problem.is_error()) {
            eprintln!(
                "atomic mcp: the tools of the files above with errors are not served; fix them (`atomic check` shows them too) and restart the server"
            );
        }
    }
    // The one read of the process environment. Tools get it without any provider key (an
    // MCP client such as Claude Code starts this server with its own key), and what they
    // print is redacted of every secret-named variable's value and every key shape.
    let environment = Environment::from_process();
    let tool_env = ToolEnv {
        spawner: crate::process::local(),
        sandbox: None,
        env: environment.without_provider_keys([]),
        redactor: Redactor::for_workflow(&environment, &[]),
    };
    let (server, problems) = ToolServer::new(&found.tools, project.root.clone(), tool_env);
    for problem in problems {
        eprintln!("error: {problem}");
    }
    let names: Vec<&str> = server.names().collect();
    tracing::info!(root = %project.root.display(), tools = ?names, "serving custom tools over MCP");
    if names.is_empty() {
        eprintln!(
            "warning: no custom tools to serve in `{}` (add `.atomic/tools/<name>.kdl` files)",
            project.root.display()
        );
    }
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
    let served = runtime.block_on(serve_stdio(server));
    // stdin's reader is a blocking thread; it has seen EOF, but do not wait on it forever.
    runtime.shutdown_timeout(Duration::from_secs(2));
    match served {
        Ok(()) => Exit::Ok,
        Err(error) => {
            eprintln!("error: {error}");
            Exit::Fatal
        }
    }
}
