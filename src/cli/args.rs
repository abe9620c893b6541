//! The command-line grammar (clap derive).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// A declarative workflow compiler and interpreter for AI coding-agent workflows.
#[derive(Debug, Parser)]
#[command(name = "atomic", version, about, propagate_version = true)]
pub struct Cli {
    /// More log output on stderr (-v info, -vv debug, -vvv trace); RUST_LOG overrides.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
    /// The subcommand.
    #[command(subcommand)]
    pub command: Command,
}

/// Every subcommand.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Parse and check workflows; report every problem.
    Check(CheckArgs),
    /// Print the lowered graph that will execute, as Graphviz DOT or Mermaid.
    Graph(GraphArgs),
    /// Run the language server on stdin/stdout (for editors); logs go to stderr.
    Lsp,
    /// Serve the project's custom tools (`.atomic/tools/*.kdl`) as an MCP server on
    /// stdin/stdout (for Claude Code's `--mcp-config` and other MCP clients); logs go to stderr.
    Mcp(McpArgs),
    /// Check a workflow, then run it.
    Run(RunArgs),
    /// Continue a paused, crashed or cancelled run from its last committed step.
    Resume(ResumeArgs),
    /// List runs, or show one run's steps and events.
    Runs(RunsArgs),
    /// Stop a run from any terminal (its owner stops as on Ctrl-C); resumable later.
    Cancel(CancelArgs),
    /// Take a stopped run back to just after one of its steps — state and the workspace's
    /// files — paused there for `atomic resume`; `--undo` puts back what the last rewind
    /// replaced.
    Rewind(RewindArgs),
    /// Start a new run from another's history up to one of its steps, its files at that
    /// step in a git worktree of its own (or in place).
    Fork(ForkArgs),
    /// Watch runs: a full-screen terminal view, or (`--web`) a local web page.
    Ui(UiArgs),
    /// Talk to an agent in a full-screen chat; workflows, commands and skills are slash
    /// commands (`/ralph "build the parser"`).
    Chat(ChatArgs),
    /// Print atomic's JSON Schemas (events, cassettes).
    Schema(SchemaArgs),
    /// Explain a diagnostic code: when it fires, why it matters, what to do.
    Explain(ExplainArgs),
    /// List the workflows found by name (the project's, the user's and the built-ins), or
    /// the agents, skills, commands and custom tools workflows can use.
    List(ListArgs),
    /// Rewrite workflow files in canonical layout, keeping comments.
    Fmt(FmtArgs),
    /// Print a shell completion script (subcommands, options, and the workflow names this
    /// project finds).
    Completions(CompletionsArgs),
    /// Run workflows and their steps for runs started with `--temporal` (a Temporal worker;
    /// start any number, on any machines sharing the project's files).
    Worker(WorkerArgs),
}

/// Where runs on Temporal are: `--temporal`, else `ATOMIC_TEMPORAL`, else `temporal "…"`
/// in `.atomic/config.kdl`, else `127.0.0.1:7233`.
#[derive(Clone, Debug, Default, Args)]
pub struct TemporalArgs {
    /// Use the Temporal server at HOST:PORT (with no value: `ATOMIC_TEMPORAL`, the
    /// project's `temporal "…"`, or 127.0.0.1:7233).
    #[arg(long, value_name = "HOST:PORT", num_args = 0..=1, default_missing_value = "", global = true)]
    pub temporal: Option<String>,
    /// The Temporal namespace (default: the project's, else `default`).
    #[arg(long, value_name = "NAMESPACE", global = true)]
    pub namespace: Option<String>,
    /// The Temporal task queue workers poll (default: the project's, else `atomic`).
    #[arg(long, value_name = "QUEUE", global = true)]
    pub task_queue: Option<String>,
}

/// `atomic worker`.
#[derive(Debug, Args)]
pub struct WorkerArgs {
    /// The server, namespace and task queue.
    #[command(flatten)]
    pub temporal: TemporalArgs,
}

/// `atomic mcp`.
#[derive(Debug, Args)]
pub struct McpArgs {
    /// The project whose tools to serve (default: the one around the current directory).
    #[arg(long, value_name = "DIR")]
    pub project: Option<PathBuf>,
}

/// `atomic completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// `atomic fmt`.
#[derive(Debug, Args)]
pub struct FmtArgs {
    /// Workflow files; none: every workflow in the project's `.atomic/workflows/`.
    pub files: Vec<PathBuf>,
    /// Write nothing; list the files that would change and exit 1 if any would.
    #[arg(long, conflicts_with = "stdout")]
    pub check: bool,
    /// Print the formatted text instead of writing the files.
    #[arg(long)]
    pub stdout: bool,
}

/// `atomic list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// What to list: the workflows `atomic run NAME` finds (the default), or the agents,
    /// skills, commands, custom tools and provider adapters workflows can use.
    #[arg(value_enum, default_value_t = ListKind::Workflows)]
    pub what: ListKind,
    /// Print a JSON array instead of a table.
    #[arg(long)]
    pub json: bool,
    /// With `models`: only the models this adapter runs, written as it needs them.
    #[arg(long, value_name = "ADAPTER", value_parser = adapter_name)]
    pub adapter: Option<String>,
}

/// What `atomic list` lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ListKind {
    /// Workflows, by name.
    Workflows,
    /// Agents (`use="agent:<name>"`).
    Agents,
    /// Skills (`use="skill:<name>"`).
    Skills,
    /// Commands (`use="command:<name>"`).
    Commands,
    /// Custom tools (`.atomic/tools/*.kdl`).
    Tools,
    /// Provider adapters (`adapter="…"`), with what each supports and the options it reads.
    Adapters,
    /// The model catalogue: each model's vendor, aliases, context window and prices, and
    /// the adapters that run it (`--adapter`: one adapter's, written as it needs them).
    Models,
}

/// `atomic check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Workflow files (or discovered workflow names); none: every workflow in the project.
    pub files: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Pretty)]
    pub format: Format,
    /// Also print the worst-case budget: agent calls, tool runs, wall time, cost.
    #[arg(long)]
    pub budget: bool,
    /// Print the reach of each agent and tool — sandbox, writable paths, hosts, secrets,
    /// tools, permission mode — instead of the diagnostics (JSON with `--format json`).
    #[arg(long)]
    pub reach: bool,
    /// Wrap pretty output at this width (default: the terminal's, or 100).
    #[arg(long)]
    pub width: Option<usize>,
}

/// Diagnostic output formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Human-readable reports with source excerpts.
    Pretty,
    /// A JSON array, one object per diagnostic.
    Json,
    /// SARIF 2.1.0, for code-scanning UIs.
    Sarif,
}

/// `atomic graph`.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("format").args(["dot", "mermaid"])))]
pub struct GraphArgs {
    /// The workflow file (or a discovered workflow name).
    pub file: PathBuf,
    /// Graphviz DOT (the default).
    #[arg(long)]
    pub dot: bool,
    /// Mermaid flowchart.
    #[arg(long)]
    pub mermaid: bool,
}

/// How a run reports itself: shared by `run` and `resume`.
#[derive(Debug, Args)]
pub struct OutputArgs {
    /// Print events as JSON lines on stdout: `values`, `updates`, `events`, `debug`
    /// (repeat the flag or separate with commas).
    #[arg(long, value_name = "MODES")]
    pub stream: Vec<String>,
    /// Print only the final summary.
    #[arg(short, long)]
    pub quiet: bool,
}

/// Where checkpoints go.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum StoreKind {
    /// The project's `.atomic/atomic.db` (durable, resumable).
    Sqlite,
    /// Nothing persisted (tests, benchmarks); the run cannot be resumed.
    Memory,
}

/// What a committed step survives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum DurabilityArg {
    /// A crash of the process (kill -9) at any instant.
    Normal,
    /// Also power loss: fsync per step.
    Full,
}

/// `atomic run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The workflow file (or a discovered workflow name).
    pub flow: PathBuf,
    /// Run every agent provider on this adapter instead of the one the workflow names
    /// (`claude-code`, `opencode`, `copilot`, `anthropic`, `openai`), checked as if written
    /// so; `adapter "…"` in `.atomic/config.kdl` sets a default.
    #[arg(long, value_name = "ADAPTER", value_parser = adapter_name)]
    pub provider: Option<String>,
    /// Run every agent provider on this model (`atomic list models`), written as the
    /// adapter that runs it needs (`sonnet` is `anthropic/claude-sonnet-4-5` for OpenCode).
    #[arg(long, value_name = "MODEL")]
    pub model: Option<String>,
    /// An input, `name=value` (repeatable); the value is converted to the input's type.
    #[arg(long = "input", short = 'i', value_name = "NAME=VALUE")]
    pub inputs: Vec<String>,
    /// A JSON object of inputs; `--input` overrides its entries.
    #[arg(long, value_name = "FILE")]
    pub input_file: Option<PathBuf>,
    /// Walk the graph with canned agent and tool results (nothing is called or started,
    /// nothing is stored) and print the route taken.
    #[arg(long)]
    pub dry_run: bool,
    /// Where checkpoints go.
    #[arg(long, value_enum, default_value_t = StoreKind::Sqlite)]
    pub store: StoreKind,
    /// What a committed step survives.
    #[arg(long, value_enum, default_value_t = DurabilityArg::Normal)]
    pub durability: DurabilityArg,
    /// Record every agent call into this cassette (secrets redacted), for the `replay`
    /// adapter.
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,
    /// Run on Temporal (see `atomic worker`).
    #[command(flatten)]
    pub temporal: TemporalArgs,
    /// With `--temporal`: print the run id and return at once instead of following it.
    #[arg(long, requires = "temporal")]
    pub detach: bool,
    /// Progress and event output.
    #[command(flatten)]
    pub output: OutputArgs,
}

/// `atomic resume`.
#[derive(Debug, Args)]
pub struct ResumeArgs {
    /// The run id (or a unique prefix of it).
    pub run: String,
    /// The answer to the `wait` the run is paused at (asked interactively on a terminal).
    #[arg(long)]
    pub answer: Option<String>,
    /// Which wait `--answer` answers, when several are pending (in parallel branches or
    /// subgraphs): its id, or the name `atomic runs show` gives it (`fan@3#1/review`).
    #[arg(long, value_name = "WAIT", requires = "answer")]
    pub wait: Option<String>,
    /// Resume even if the workflow file changed since the run started (or files changed
    /// while it was stopped: see `--keep-changes`).
    #[arg(long)]
    pub force: bool,
    /// Go on with the workspace's files as they are when some changed while the run was
    /// stopped by none of its steps (a person's edit); otherwise the resume lists them and
    /// refuses.
    #[arg(long)]
    pub keep_changes: bool,
    /// The adapter the run was started on with `atomic run --provider`.
    #[arg(long, value_name = "ADAPTER", value_parser = adapter_name)]
    pub provider: Option<String>,
    /// The model the run was started on with `atomic run --model`.
    #[arg(long, value_name = "MODEL")]
    pub model: Option<String>,
    /// Set a state field back to its declared default (unset without one) before
    /// continuing, losing what it holds: for an edit after which it no longer fits.
    #[arg(long, value_name = "FIELD", requires = "force")]
    pub reset: Vec<String>,
    /// What a committed step survives.
    #[arg(long, value_enum, default_value_t = DurabilityArg::Normal)]
    pub durability: DurabilityArg,
    /// A run on Temporal.
    #[command(flatten)]
    pub temporal: TemporalArgs,
    /// Progress and event output.
    #[command(flatten)]
    pub output: OutputArgs,
}

/// `atomic runs`.
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct RunsArgs {
    /// `show RUN`; none: list runs.
    #[command(subcommand)]
    pub action: Option<RunsAction>,
    /// Only runs of this workflow.
    #[arg(long)]
    pub workflow: Option<String>,
    /// Only runs with this status (`running`, `paused`, `completed`, `failed`, `cancelled`).
    #[arg(long)]
    pub status: Option<String>,
    /// At most this many runs (newest first).
    #[arg(long, default_value_t = 20)]
    pub limit: usize,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Runs on Temporal.
    #[command(flatten)]
    pub temporal: TemporalArgs,
}

/// `atomic runs …` subcommands.
#[derive(Debug, Subcommand)]
pub enum RunsAction {
    /// A run's steps (with their state changes), events, errors and final state.
    Show {
        /// The run id (or a unique prefix of it).
        run: String,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
        /// Print only the run's event log, one JSON object per line (JSONL), as
        /// `atomic run --stream events` printed it.
        #[arg(long, conflicts_with = "json")]
        events: bool,
    },
    /// What the run's steps changed in the workspace's files: a unified diff of one step
    /// (by number or node id) or of the whole run.
    Diff {
        /// The run id (or a unique prefix of it).
        run: String,
        /// The step: its number in `atomic runs show`, or a node id (its last run).
        step: Option<String>,
        /// One line per file with its added and removed lines, instead of the diff.
        #[arg(long)]
        stat: bool,
        /// The files and the diff as JSON.
        #[arg(long, conflicts_with = "stat")]
        json: bool,
    },
    /// Delete runs: their history, step log, live feed and workspace snapshot refs. A run
    /// a live process is running is refused (stop it with `atomic cancel` first).
    Delete {
        /// The run ids (or unique prefixes of them).
        #[arg(required = true, num_args = 1..)]
        runs: Vec<String>,
    },
    /// Delete the runs that match every filter given (at least one), never one a live
    /// process is running; prints what went and the space freed.
    Prune {
        /// Only runs last changed longer ago than this: `90m`, `12h`, `30d`, `2w`.
        #[arg(long, value_name = "AGE")]
        older_than: Option<String>,
        /// Keep the N newest runs (of those with the statuses given): only older ones go.
        #[arg(long, value_name = "N")]
        keep: Option<usize>,
        /// Only runs with one of these statuses, comma-separated
        /// (`completed,failed,cancelled`).
        #[arg(long, value_name = "STATUS", value_delimiter = ',')]
        status: Vec<String>,
        /// List the runs that would go, and delete nothing.
        #[arg(long)]
        dry_run: bool,
    },
}

/// `atomic rewind`.
#[derive(Debug, Args)]
pub struct RewindArgs {
    /// The run (a unique prefix of its id is enough).
    pub run: String,
    /// The step to go back to: its number in `atomic runs show`, or a node id (its last
    /// step).
    #[arg(
        long,
        value_name = "STEP",
        required_unless_present = "undo",
        conflicts_with = "undo"
    )]
    pub to: Option<String>,
    /// Put back the run and the files the last rewind replaced.
    #[arg(long)]
    pub undo: bool,
}

/// `atomic fork`.
#[derive(Debug, Args)]
pub struct ForkArgs {
    /// The run to fork (a unique prefix of its id is enough).
    pub run: String,
    /// The step the fork starts after: its number in `atomic runs show`, or a node id.
    #[arg(long, value_name = "STEP")]
    pub at: String,
    /// Put the fork point's files in the project's own working tree (the original run
    /// must be stopped), instead of a new git worktree.
    #[arg(long, conflicts_with = "worktree")]
    pub in_place: bool,
    /// Where the fork's git worktree goes (default: `.atomic/worktrees/<fork>`).
    #[arg(long, value_name = "DIR")]
    pub worktree: Option<std::path::PathBuf>,
    /// An input of the fork, `name=value` (repeatable): the run's own inputs with these
    /// over them, for the steps after the fork point.
    #[arg(long = "input", short = 'i', value_name = "NAME=VALUE")]
    pub inputs: Vec<String>,
    /// The workflow the fork goes on with (an edited copy, or the file edited in place),
    /// checked against the fork point as `resume --force` would; default: the run's.
    #[arg(value_name = "FILE")]
    pub workflow: Option<std::path::PathBuf>,
}

/// `atomic cancel`.
#[derive(Debug, Args)]
pub struct CancelArgs {
    /// The run (a unique prefix of its id is enough).
    pub run: String,
    /// A run on Temporal (its whole id).
    #[command(flatten)]
    pub temporal: TemporalArgs,
}

/// `atomic ui`.
#[derive(Debug, Args)]
pub struct UiArgs {
    /// The run to open (a unique prefix of its id); none: the latest run.
    pub run: Option<String>,
    /// Serve a web page instead of the terminal view.
    #[arg(long)]
    pub web: bool,
    /// The web page's port (0: any free port).
    #[arg(long, default_value_t = 0, requires = "web")]
    pub port: u16,
    /// The address to serve on; anything but a loopback address needs the access token
    /// printed at start.
    #[arg(long, default_value = "127.0.0.1", requires = "web")]
    pub bind: std::net::IpAddr,
    /// Watch the runs on a Temporal server instead of the project's store.
    #[command(flatten)]
    pub temporal: TemporalArgs,
}

/// `atomic chat`.
#[derive(Debug, Args)]
pub struct ChatArgs {
    /// The adapter to talk to (`claude-code`, `opencode`, `codex`, `gemini`, `copilot`,
    /// `acp`, `anthropic`, `openai`); `adapter "…"` in `.atomic/config.kdl` sets a
    /// default, else `claude-code`.
    #[arg(long, value_name = "ADAPTER", value_parser = adapter_name)]
    pub provider: Option<String>,
    /// The model (`atomic list models`); none: the adapter's default.
    #[arg(long, value_name = "MODEL")]
    pub model: Option<String>,
    /// Go on with a saved session (a unique prefix of its id); without a value, list the
    /// saved sessions to pick one.
    #[arg(long, value_name = "SESSION", num_args = 0..=1, default_missing_value = "")]
    pub resume: Option<String>,
    /// The colours: `dark`, `light`, or `auto` (the terminal's background, where it says).
    /// `NO_COLOR` turns colour off whatever this says.
    #[arg(long, value_name = "THEME", default_value = "auto", value_parser = ["auto", "dark", "light"])]
    pub theme: String,
}

/// `atomic explain`.
#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// The code (`type-mismatch` or `atomic::type-mismatch`); none: list every code.
    pub code: Option<String>,
}

/// `atomic schema`.
#[derive(Debug, Args)]
pub struct SchemaArgs {
    /// The schema to print (`events`, `cassette`); none: list them.
    pub name: Option<String>,
}

/// An adapter's name (`--provider`).
fn adapter_name(name: &str) -> Result<String, String> {
    if crate::ir::adapter_info(name).is_some() {
        return Ok(name.to_owned());
    }
    let names: Vec<&str> = crate::ir::ADAPTERS.iter().map(|info| info.name).collect();
    Err(format!(
        "not an adapter; expected one of {}",
        names.join(", ")
    ))
}
