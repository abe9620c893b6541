//! Nodes: the statements of a workflow and their options.

use serde::{Deserialize, Serialize};

use super::{Block, Duration, ErrorClass, Expr, NodeIdx, Template};
use crate::source::{Span, Spanned};

/// One statement.
///
/// Properties every node kind accepts (except where noted):
/// `timeout="10m"`, `recovery=#true` (may be the target of `on-error "goto"`),
/// `idempotent=#true` (safe to run again on retry/resume), `goto="<id>|end"` with optional
/// `goto-max=N` (after this node, jump instead of falling through; a backward jump needs
/// `goto-max`). Children every node kind accepts: `retry …`, `on-error …`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Node {
    /// The id (`agent "<id>"`); `set` nodes get `set-<field>` (`-2`, `-3`… if repeated)
    /// unless given `id="…"`. Unique in the workflow; `end` is reserved.
    pub id: Spanned<String>,
    /// What the node does.
    pub kind: NodeKind,
    /// The block statement containing this node, `None` at top level.
    pub parent: Option<NodeIdx>,
    /// `retry`.
    pub retry: Option<Box<Retry>>,
    /// `timeout=`.
    pub timeout: Option<Spanned<Duration>>,
    /// `on-error`.
    pub on_error: Option<Box<OnError>>,
    /// `recovery=#true`.
    pub recovery: bool,
    /// `idempotent=#true`.
    pub idempotent: bool,
    /// `goto=` with its resolution and `goto-max=`.
    pub goto: Option<Box<Route>>,
    /// The whole KDL node.
    pub span: Span,
}

/// The kinds of node.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum NodeKind {
    /// `agent`.
    Agent(Box<Agent>),
    /// `tool`.
    Tool(Box<Tool>),
    /// `decision`.
    Decision(Box<Decision>),
    /// `wait`.
    Wait(Box<Wait>),
    /// `subgraph`.
    Subgraph(Box<Subgraph>),
    /// `parallel`.
    Parallel(Box<Parallel>),
    /// `loop`.
    Loop(Box<Loop>),
    /// `set`.
    Set(Set),
    /// `emit`.
    Emit(Box<Emit>),
}

impl NodeKind {
    /// The keyword the node is written with.
    #[must_use]
    pub fn keyword(&self) -> NodeKeyword {
        match self {
            Self::Agent(_) => NodeKeyword::Agent,
            Self::Tool(_) => NodeKeyword::Tool,
            Self::Decision(_) => NodeKeyword::Decision,
            Self::Wait(_) => NodeKeyword::Wait,
            Self::Subgraph(_) => NodeKeyword::Subgraph,
            Self::Parallel(parallel) if parallel.tasks.is_some() => NodeKeyword::TaskLoop,
            Self::Parallel(_) => NodeKeyword::Parallel,
            Self::Loop(_) => NodeKeyword::Loop,
            Self::Set(_) => NodeKeyword::Set,
            Self::Emit(_) => NodeKeyword::Emit,
        }
    }

    /// The KDL node name.
    #[must_use]
    pub fn name(&self) -> &'static str {
        self.keyword().name()
    }

    /// The output mappings of the node, if its kind has any.
    #[must_use]
    pub fn outputs(&self) -> &[OutputMap] {
        match self {
            Self::Agent(agent) => &agent.outputs,
            Self::Tool(tool) => &tool.outputs,
            Self::Wait(wait) => &wait.outputs,
            _ => &[],
        }
    }
}

/// A node's kind without its options: the keyword it is written with. Small and `Copy`, so
/// run events (`step-started`) and renderers carry it instead of the node. Serialised as the
/// keyword (`task-loop`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NodeKeyword {
    /// `agent`.
    Agent,
    /// `tool`.
    Tool,
    /// `decision`.
    Decision,
    /// `wait`.
    Wait,
    /// `subgraph`.
    Subgraph,
    /// `parallel`.
    Parallel,
    /// `task-loop` (a [`Parallel`] over a tasks file).
    TaskLoop,
    /// `loop`.
    Loop,
    /// `set`.
    Set,
    /// `emit`.
    Emit,
}

impl NodeKeyword {
    /// Every keyword, in the order of [`NodeKind`]'s variants.
    pub const ALL: [Self; 10] = [
        Self::Agent,
        Self::Tool,
        Self::Decision,
        Self::Wait,
        Self::Subgraph,
        Self::Parallel,
        Self::TaskLoop,
        Self::Loop,
        Self::Set,
        Self::Emit,
    ];

    /// The KDL node name.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Agent => "agent",
            Self::Tool => "tool",
            Self::Decision => "decision",
            Self::Wait => "wait",
            Self::Subgraph => "subgraph",
            Self::Parallel => "parallel",
            Self::TaskLoop => "task-loop",
            Self::Loop => "loop",
            Self::Set => "set",
            Self::Emit => "emit",
        }
    }
}

impl std::fmt::Display for NodeKeyword {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // `pad`, not `write_str`: renderers align it (`{kind:<8}`).
        f.pad(self.name())
    }
}

/// ```kdl
/// agent "<id>" provider="claude" model="…" use="<agent id or discovered name>"
///       permission="default|accept-edits|bypass|plan|ask" max-turns=10 budget-usd=1.5
///       session="<agent id>" {
///     system "You are …"                 // appended to the agent's system prompt
///     prompt "Review {{ input.target }}" // or prompt="…" on the node
///     tools "Read" "Edit" "Bash"         // tools granted (built-in names or custom tools)
///     output "findings" parse="json" schema="schemas/findings.json"
///     context warn=0.45 act=0.60 action="compact|fresh|none"
///     option "temperature" 0.2
///     mcp "files" { command "mcp-files" "." }   // an MCP server for this agent only
/// }
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Agent {
    /// `provider=`; resolved node → `use` source → workflow default.
    pub provider: Option<Spanned<String>>,
    /// `model=`; resolved node → workflow → provider default.
    pub model: Option<Spanned<String>>,
    /// `use=`: copy unset settings from another agent node or a discovered agent/skill/command.
    pub use_: Option<Spanned<String>>,
    /// `system`.
    pub system: Option<Template>,
    /// `prompt`. Required unless inherited through `use`.
    pub prompt: Option<Template>,
    /// `tools`.
    pub tools: Vec<Spanned<String>>,
    /// `permission=`.
    pub permission: Option<Spanned<PermissionMode>>,
    /// `max-turns=`.
    pub max_turns: Option<Spanned<u32>>,
    /// `budget-usd=`.
    pub budget_usd: Option<Spanned<f64>>,
    /// `session=`: continue the provider session of another agent node.
    pub session: Option<Spanned<String>>,
    /// `context`.
    pub context: Option<ContextPolicy>,
    /// `option "name" value` children, passed to the adapter.
    pub options: serde_json::Map<String, serde_json::Value>,
    /// `output` children.
    pub outputs: Vec<OutputMap>,
    /// `mcp` children: MCP servers for this agent only.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mcp: Vec<super::McpServer>,
    /// `sandbox`: its own; `None`: the workflow's (or the project's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<super::Sandbox>,
    /// `cwd`: where the agent works, below the workspace; `None`: the workspace's root.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<Template>,
    /// The discovered agent, skill or command `use=` names, filled in by compilation
    /// (`registry::agents`); absent for `use=` of a node and before discovery.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub definition: Option<super::UsedDefinition>,
}

/// Agent permission modes, passed through where the backend supports them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PermissionMode {
    /// Ask (or deny when unattended) for anything risky.
    Default,
    /// Accept file edits, ask for the rest.
    AcceptEdits,
    /// Allow everything.
    Bypass,
    /// Plan only, change nothing.
    Plan,
    /// Ask a person about every request the granted tools do not cover: on a terminal at
    /// once, otherwise the run pauses until `atomic resume RUN --answer allow|allow-run|deny`.
    Ask,
}

/// `context warn=0.45 act=0.60 action="compact|fresh|none"`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ContextPolicy {
    /// Fraction of the context window at which a warning event is emitted.
    pub warn: f64,
    /// Fraction at which `action` is taken.
    pub act: f64,
    /// What is done once `act` is reached.
    pub action: ContextAction,
    /// The `context` node.
    pub span: Span,
}

impl ContextPolicy {
    /// `warn=` when not written, and the warning of an agent with no `context` child.
    pub const DEFAULT_WARN: f64 = 0.45;
    /// `act=` when not written.
    pub const DEFAULT_ACT: f64 = 0.60;
}

/// `context action=…`: what the next continuation of a session that filled its window does.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ContextAction {
    /// Summarise the session first where the adapter can (OpenCode), else start a fresh one.
    #[default]
    Compact,
    /// Start a new session instead of resuming.
    Fresh,
    /// Only warn.
    None,
}

/// `output "<state field>" parse="text|json|yes-no" schema="file.json" from="…" match="…"`:
/// maps a node's result into a state field through the field's reducer. `from` picks the
/// source: agents `text` (default); tools `stdout` (default), `stderr`, `exit-code`; waits
/// `answer`. `match` is a regular expression applied to the raw text before parsing.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OutputMap {
    /// The state field written.
    pub field: Spanned<String>,
    /// How the raw text is parsed.
    pub parse: ParseMode,
    /// `schema=`: a JSON Schema file the parsed value must satisfy.
    pub schema: Option<Spanned<String>>,
    /// `from=`.
    pub from: OutputSource,
    /// `match=`: a regular expression (Rust `regex` syntax, checked to compile) applied to the
    /// raw text before parsing; the first capture group, or the whole match when it has
    /// none, replaces the text. No match is a `bad-output` error.
    #[serde(default)]
    pub pattern: Option<Spanned<String>>,
    /// The `output` node.
    pub span: Span,
}

/// `parse=`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ParseMode {
    /// The text as a string (default).
    #[default]
    Text,
    /// JSON; a fenced ```json block or the first JSON value in the text is accepted.
    Json,
    /// `yes`/`no`, `y`/`n`, `true`/`false` (case-insensitive) → boolean.
    YesNo,
    /// An integer or decimal number.
    Number,
    /// Text split into lines (empty lines dropped) → array of strings.
    Lines,
}

/// `from=`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OutputSource {
    /// The node's main result: an agent's final text, a tool's stdout, a wait's answer.
    #[default]
    Result,
    /// A tool's stderr.
    Stderr,
    /// A tool's exit code (integer).
    ExitCode,
}

/// ```kdl
/// tool "<id>" shell=#false use="<custom tool>" {
///     run "cargo" "test" "{{ state.filter }}"   // argv; one string when shell=#true
///     cwd "{{ input.dir }}"
///     env "RUST_LOG" "debug"
///     stdin "{{ state.report }}"
///     arg "path" "{{ input.target }}"           // arguments of a custom tool (`use=`)
///     ok-codes 0 1
///     output "test_logs"
/// }
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Tool {
    /// `run` arguments: program then arguments, each a template.
    pub run: Vec<Template>,
    /// `shell=#true`: `run` has one string run by `sh -c`.
    pub shell: bool,
    /// `use=`: a custom tool declared in `.atomic/tools/`.
    pub use_: Option<Spanned<String>>,
    /// `arg "<name>" "<template>"` children for custom tools.
    pub args: Vec<(Spanned<String>, Template)>,
    /// `cwd`.
    pub cwd: Option<Template>,
    /// `env` children.
    pub env: Vec<(Spanned<String>, Template)>,
    /// `stdin`.
    pub stdin: Option<Template>,
    /// `ok-codes`; `[0]` when absent.
    pub ok_codes: Vec<i32>,
    /// `output` children.
    pub outputs: Vec<OutputMap>,
    /// `sandbox`: its own; `None`: the workflow's (or the project's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<super::Sandbox>,
}

/// ```kdl
/// decision "<id>" {
///     when "state.approved" goto="ship"
///     when "state.rounds < 3" goto="fix" max=3   // taken at most 3 times, then skipped
///     otherwise goto="end"                        // bare `otherwise`: the next statement
/// }
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Decision {
    /// `when` routes, tried in order; the first true one is taken.
    pub routes: Vec<Route>,
    /// `otherwise`; `None` is an error (`missing-otherwise`).
    pub otherwise: Option<Route>,
}

/// A guarded jump: a `when` route, an `otherwise`, or a node's `goto=`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Route {
    /// The condition (`None` for `otherwise` and `goto=`).
    pub when: Option<Expr>,
    /// The target as written (`None` for a bare `otherwise`).
    pub target: Option<Spanned<String>>,
    /// Where it goes.
    pub jump: Jump,
    /// `max=` / `goto-max=`: how often per run the route may be taken; after that it is
    /// skipped as if false.
    pub max: Option<Spanned<u32>>,
    /// The `when`/`otherwise` node, or the `goto=` property.
    pub span: Span,
}

/// A resolved jump target.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "to", content = "node")]
pub enum Jump {
    /// To a node.
    Node(NodeIdx),
    /// `end`: the workflow completes.
    End,
    /// The statement after the decision (bare `otherwise`).
    Next,
}

/// ```kdl
/// wait "<id>" header="Release" prompt="Ship it?"
///      answer="yes-no|string|integer|number|boolean|choice|json" schema="answer.json" {
///     choice "ship" label="Ship it" description="Tag and publish now"
///     choice "hold" label="Not yet"
///     output "approved"
///     auto-approve after="1h" answer="ship"
/// }
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Wait {
    /// `header=`: a short title shown above the prompt (plain text).
    pub header: Option<String>,
    /// `prompt`, shown to the person.
    pub prompt: Template,
    /// The answer's type (`choice` when choices are given and no `answer=`; `string`
    /// otherwise).
    pub answer: AnswerType,
    /// `choice` children.
    pub choices: Vec<WaitChoice>,
    /// `output` children (the answer, typed).
    pub outputs: Vec<OutputMap>,
    /// `auto-approve`.
    pub auto_approve: Option<AutoApprove>,
}

/// `answer=`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "type", content = "schema")]
pub enum AnswerType {
    /// Free text.
    String,
    /// A whole number.
    Integer,
    /// A number.
    Number,
    /// `true`/`false`.
    Boolean,
    /// yes/no → boolean.
    YesNo,
    /// One of the choices' values.
    Choice,
    /// JSON, optionally checked against `schema=`.
    Json(Option<Spanned<String>>),
}

/// `choice "<value>" label="…" description="…"`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WaitChoice {
    /// What the answer is when chosen.
    pub value: Spanned<String>,
    /// What the person sees.
    pub label: Option<String>,
    /// Longer text shown under the label.
    pub description: Option<String>,
}

/// `auto-approve after="1h" answer="…"`: answer on the person's behalf after a delay, for
/// unattended runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AutoApprove {
    /// The delay.
    pub after: Spanned<Duration>,
    /// The answer given.
    pub answer: Spanned<String>,
}

/// ```kdl
/// subgraph "<id>" workflow="./checks.kdl" {   // a path, or a discovered workflow name
///     input "target" "{{ input.target }}"       // callee input ← template
///     output "summary" from="report"            // caller state field ← callee state field
/// }
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Subgraph {
    /// `workflow=` as written.
    pub workflow: Spanned<String>,
    /// The file it resolved to (relative paths are relative to the calling file).
    pub path: Option<String>,
    /// `input` mappings.
    pub inputs: Vec<(Spanned<String>, Template)>,
    /// `output` mappings: (caller field, callee field).
    pub outputs: Vec<(Spanned<String>, Spanned<String>)>,
}

impl Subgraph {
    /// The called workflow's file, relative to the calling file's directory: the one it
    /// resolved to, else `workflow=` as written.
    #[must_use]
    pub fn file(&self) -> &str {
        self.path.as_deref().unwrap_or(&self.workflow.value)
    }
}

/// ```kdl
/// parallel "<id>" strategy="all|race|any" max-concurrency=4 {
///     agent "security" { … }              // each statement is a branch
///     branch "perf" { tool …; agent … }   // or a named branch of several statements
/// }
/// parallel "<id>" for-each="input.files" as="file" max-concurrency=8 {
///     agent "review-file" { prompt "Review {{ file }} ({{ index }})" }
/// }
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Parallel {
    /// `strategy=`.
    pub strategy: Strategy,
    /// `max-concurrency=`; unbounded when absent.
    pub max_concurrency: Option<Spanned<u32>>,
    /// `for-each=`: one copy of the single branch per item.
    pub for_each: Option<ForEach>,
    /// `isolation=`: where the branches' agents and tools change files.
    #[serde(default, skip_serializing_if = "Isolation::is_shared")]
    pub isolation: Isolation,
    /// The branches (for `for-each`, exactly one: the body).
    pub branches: Vec<Branch>,
    /// A `task-loop`: the items are the ready tasks of a tasks file, read again before
    /// each task starts, and `for_each.items` is the file's path template (`file=`), not
    /// an expression. `None` for a `parallel`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tasks: Option<Box<TaskLoop>>,
}

/// ```kdl
/// task-loop "<id>" file="tasks.json" as="task" max-concurrency=2 max-iterations="input.max"
///           left-in-progress="passing|failing" {
///     agent "implement" { prompt "Implement {{ task.id }}: {{ task.title }}" }
/// }
/// ```
/// Runs the body once per ready task of a JSON tasks file (`{"tasks": [...]}` or a bare
/// list): a task is ready when its status is `pending` (or absent), or `in_progress` (left
/// so by a run that died), and every task it depends on is `passing` or `skipped`; the
/// lowest `priority` goes first (none last), then file order. Each task is marked
/// `in_progress` before its body starts, and its outcome is written back when the body
/// ends. Resolved into a [`Parallel`] whose `for_each` names the task variable, so the
/// checker and the lowering treat the body as a for-each body.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TaskLoop {
    /// `max-iterations=`: the most tasks started in one run of the loop, a whole number
    /// or an expression evaluated when the loop starts (`max-iterations="input.max"`; a
    /// number is kept as its text); unbounded (each task still runs at most once) when
    /// absent.
    pub max_iterations: Option<Expr>,
    /// `left-in-progress=`: the status of a task whose body succeeded but left it
    /// `in_progress` (a body that changed the status itself keeps its status).
    pub left_in_progress: TaskStatus,
}

/// A status written back to a tasks file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TaskStatus {
    /// Done.
    #[default]
    Passing,
    /// Tried and not done.
    Failing,
}

impl TaskStatus {
    /// The status as the tasks file spells it.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Passing => "passing",
            Self::Failing => "failing",
        }
    }
}

/// `strategy=`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Strategy {
    /// Wait for every branch; any failure fails the parallel.
    #[default]
    All,
    /// The first branch to finish (success or failure) wins; the rest are cancelled.
    Race,
    /// The first branch to succeed wins; the rest are cancelled; fails only if all fail.
    Any,
}

/// `isolation=`: where a parallel's branches change files.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Isolation {
    /// In the run's workspace, all at once.
    #[default]
    Shared,
    /// Each in a git worktree of its own made from the files before the parallel; their
    /// changes are merged back, in branch order, when it ends.
    Worktree,
}

impl Isolation {
    /// Whether branches share the run's workspace (the default).
    #[must_use]
    pub fn is_shared(&self) -> bool {
        *self == Self::Shared
    }
}

/// `for-each="<expr>" as="<name>"`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ForEach {
    /// The list expression.
    pub items: Expr,
    /// The item's variable name (`item` by default); `index` holds its position.
    pub as_: Spanned<String>,
}

/// One branch of a `parallel`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Branch {
    /// The branch name: `branch "<name>"`, or the id of its single statement.
    pub name: Spanned<String>,
    /// Its statements.
    pub body: Block,
}

/// ```kdl
/// loop "<id>" until="state.findings | length == 0" max=5 { … }
/// loop "<id>" while="state.pending" max=100 { … }
/// ```
/// `until` is tested after each iteration, `while` before each; with neither the body runs
/// `max` times. Exceeding `max` ends the loop (it does not fail).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Loop {
    /// `until=`.
    pub until: Option<Expr>,
    /// `while=`.
    pub while_: Option<Expr>,
    /// `max=`; `None` is an error (`missing-loop-max`).
    pub max: Option<Spanned<u32>>,
    /// The statements repeated.
    pub body: Block,
}

/// ```kdl
/// set "rounds" "{{ state.rounds + 1 }}"     // a template; a lone `{{ expr }}` keeps its type
/// set "rounds" expr="state.rounds + 1"       // an expression, typed result
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Set {
    /// The state field written (through its reducer).
    pub field: Spanned<String>,
    /// The value: a template, or an expression when `is_expr`.
    pub value: Template,
    /// Whether `value` came from `expr=`.
    pub is_expr: bool,
}

/// `emit "<event>" { data "<key>" "<template>" … }`: a custom event in the run's `events`
/// stream and stored log.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Emit {
    /// The event's name.
    pub event: Spanned<String>,
    /// The data: keys and value templates, in order.
    pub data: Vec<(Spanned<String>, Template)>,
}

/// `retry "<class>"… attempts=3 backoff="2s" factor=2.0 max-backoff="1m" jitter=#true`;
/// with no classes the transient ones are retried.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Retry {
    /// Total attempts including the first.
    pub attempts: u32,
    /// Delay before the first retry.
    pub backoff: Duration,
    /// Multiplier per retry.
    pub factor: f64,
    /// Upper bound of one delay.
    pub max_backoff: Option<Duration>,
    /// Randomise delays by ±50%.
    pub jitter: bool,
    /// Classes retried; empty means the transient ones.
    pub on: Vec<ErrorClass>,
    /// The `retry` node.
    pub span: Span,
}

/// `on-error "retry|skip|abort|goto" ["<recovery id>"] { set "<field>" "<template>" }`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "kebab-case")]
pub enum OnError {
    /// Retry within the `retry` policy (3 attempts with default backoff if none), then abort.
    Retry {
        /// The `on-error` node.
        span: Span,
    },
    /// Continue with the next statement; the `set` children give fallback state.
    Skip {
        /// Fallback writes.
        fallback: Vec<Set>,
        /// The `on-error` node.
        span: Span,
    },
    /// Fail the run (the default).
    Abort {
        /// The `on-error` node.
        span: Span,
    },
    /// Jump to a node marked `recovery=#true`; `error` holds the failure there.
    Goto {
        /// The target.
        target: Spanned<String>,
        /// Where it resolved.
        jump: Jump,
        /// The `on-error` node.
        span: Span,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The arena holds one `Node` per statement for the whole check and run: rare and large
    /// parts are boxed (BENCHMARKS.md, "peak memory of `check`").
    #[cfg(target_pointer_width = "64")]
    #[test]
    fn nodes_stay_small() {
        assert_eq!(size_of::<NodeKind>(), 104);
        assert_eq!(size_of::<Node>(), 224);
    }

    /// A keyword is spelled the same by `name`, by serde (run events) and by the grammar.
    #[test]
    fn keywords_are_the_grammars_node_names() {
        let grammar: serde_json::Value =
            serde_json::from_str(include_str!("../../grammar/atomic.grammar.json")).unwrap();
        let nodes = grammar["nodes"].as_array().unwrap();
        for keyword in NodeKeyword::ALL {
            let name = keyword.name();
            assert!(
                nodes.iter().any(|node| node["id"] == name),
                "the grammar has no `{name}`"
            );
            assert_eq!(serde_json::to_value(keyword).unwrap(), name);
            assert_eq!(
                serde_json::from_value::<NodeKeyword>(name.into()).unwrap(),
                keyword
            );
        }
    }
}
