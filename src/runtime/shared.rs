//! [`Shared`]: one run as its walks see it, in four parts — the [`Program`] (the plan, its
//! compiled templates, schemas and patterns, the bound inputs: fixed once built), the
//! [`RunContext`] (providers, store, sink, executor), the [`Journal`] (step numbering, events
//! waiting for the next commit, what a resume recovered) and the [`Tallies`] (usage, cost,
//! calls, sessions, steps). Built once per run by [`Shared::new`]; a subgraph's run has its
//! own program and tallies and shares its caller's journal numbering.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use futures_util::FutureExt;
use minijinja::Value as TemplateValue;
use serde_json::{Map, Value};

use super::cursor::Cursor;
use super::frame::Frame;
use super::hooks::Hooks;
use super::pattern::Patterns;
use super::state::{State, StateSchema, coerce};
use super::template::{LazyScope, Role, RunInfo, Scope, Templates};
use super::walk::Recovery;
use super::{PendingContextAction, RunContext, RunError, RunEvent, Schemas};
use crate::ir::{AnswerType, NodeIdx, NodeKind, OnError, Workflow};
use crate::lower::{CounterIdx, Plan, StepIdx, StepKind};
use crate::providers::Usage;
use crate::store::{Json, RunId};
use crate::workspace::Workspace;
use crate::workspace::snapshot::Snapshots;

/// Run-wide tallies, persisted in the cursor.
#[derive(Debug, Default)]
pub(crate) struct Tally {
    pub(crate) usage: Usage,
    pub(crate) cost_usd: f64,
    pub(crate) calls: BTreeMap<String, u32>,
    pub(crate) sessions: BTreeMap<String, String>,
    /// Actions waiting for the next continuation of a session, by session id.
    pub(crate) context_actions: BTreeMap<String, PendingContextAction>,
    /// Tools a person allowed for the rest of the run.
    pub(crate) allowed_tools: Vec<String>,
    /// The workspace snapshot of the last step that recorded files (see `Cursor::files`).
    pub(crate) files: Option<String>,
}

/// The run's step numbers: the last one committed, and the turn to commit the next (walks
/// of parallel branches commit concurrently; the store takes steps in order).
#[derive(Debug, Default)]
pub(crate) struct Ledger {
    last: AtomicU64,
    turn: tokio::sync::Mutex<()>,
}

impl Ledger {
    /// The last committed step's number.
    pub(crate) fn last(&self) -> u64 {
        self.last.load(Ordering::Acquire)
    }

    /// Starts the numbering after step `seq` (on resume).
    pub(crate) fn start_after(&self, seq: u64) {
        self.last.store(seq, Ordering::Release);
    }

    /// Waits for the turn to commit; the step committed while it is held gets
    /// [`Self::last`]` + 1`, recorded with [`Self::committed`].
    pub(crate) async fn turn(&self) -> tokio::sync::MutexGuard<'_, ()> {
        self.turn.lock().await
    }

    /// Records that step `seq` was committed (with the turn held).
    pub(crate) fn committed(&self, seq: u64) {
        self.last.store(seq, Ordering::Release);
    }
}

/// A timer any number of steps can await.
pub(crate) type Deadline =
    futures_util::future::Shared<futures_util::future::BoxFuture<'static, ()>>;

/// What a run executes, fixed once built: the plan, its compiled templates, schemas and
/// patterns, the bound inputs and environment, and lookups derived from the plan.
pub(crate) struct Program {
    pub(crate) plan: Arc<Plan>,
    pub(crate) templates: Templates,
    pub(crate) schemas: Schemas,
    /// `output match=` patterns, compiled once.
    pub(crate) patterns: Patterns,
    pub(crate) schema: Arc<StateSchema>,
    pub(crate) run_id: RunId,
    pub(crate) run_id_str: Arc<str>,
    pub(crate) input: TemplateValue,
    pub(crate) input_json: Value,
    pub(crate) env: TemplateValue,
    /// Node ids by `NodeIdx`.
    pub(crate) ids: Vec<Arc<str>>,
    /// The iteration counter of each node's innermost enclosing loop.
    pub(crate) loop_of: Vec<Option<CounterIdx>>,
    /// The workflow's `on "<event>"` hooks.
    pub(crate) hooks: Hooks,
    /// The timer of the run's `limits timeout`, started with the run (one timer, awaited
    /// by every step that may outlast it).
    pub(crate) deadline: Option<Deadline>,
}

/// What a run records: its step numbering, the events waiting for the next commit, and
/// what a resume recovered of the blocks it was inside.
pub(crate) struct Journal {
    /// The run's step numbering, shared by every walk of the run.
    pub(crate) ledger: Arc<Ledger>,
    /// What a resumed run recovered of the blocks it was inside.
    pub(crate) recovery: Arc<Recovery>,
    /// Events waiting to be committed with the next step, still typed: only a durable
    /// store serialises them.
    pub(crate) log: Mutex<Vec<Json>>,
    /// A subgraph's run: its events are not logged.
    pub(crate) nested: bool,
    /// In a fork (`atomic fork`): the sessions its agents inherited from the original run,
    /// which they must not extend (see `exec::agent`).
    pub(crate) inherited_sessions: Arc<std::collections::BTreeSet<String>>,
}

/// What a run has used, persisted in its cursors.
#[derive(Debug, Default)]
pub(crate) struct Tallies {
    pub(crate) spent: Mutex<Tally>,
    /// Action steps run (for `max-steps`).
    pub(crate) steps_taken: AtomicU64,
}

/// One run as its walks see it: the program, the context it runs in, its journal and its
/// tallies.
pub(crate) struct Shared {
    pub(crate) program: Program,
    pub(crate) ctx: RunContext,
    pub(crate) journal: Journal,
    pub(crate) tallies: Tallies,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared")
            .field("run_id", &self.program.run_id)
            .finish_non_exhaustive()
    }
}

impl Shared {
    /// Compiles everything the run needs: templates, schemas, inputs, env.
    ///
    /// A subgraph's run (`caller` is the run that calls it) shares its caller's step
    /// numbering and recovery.
    pub(crate) fn new(
        plan: Arc<Plan>,
        ctx: RunContext,
        run_id: RunId,
        inputs: &Map<String, Value>,
        caller: Option<&Shared>,
    ) -> Result<Self, RunError> {
        let workflow = plan.workflow();
        let schema = Arc::new(StateSchema::new(&workflow.state));
        let templates = compile_templates(workflow)?;
        let schemas = Schemas::load(schema_paths(workflow), &ctx.base_dir, ctx.files.as_ref())
            .map_err(RunError::Setup)?;
        let patterns = Patterns::compile(workflow).map_err(RunError::Setup)?;
        let input_json = Value::Object(bind_inputs(workflow, inputs)?);
        check_inputs(workflow, &input_json, &schemas)?;
        let env: Map<String, Value> = workflow
            .env
            .iter()
            .filter_map(|name| {
                let value = ctx.env.get(&name.value)?;
                Some((name.value.clone(), Value::String(value.clone())))
            })
            .collect();
        let ids = workflow
            .nodes
            .iter()
            .map(|node| Arc::from(node.id.value.as_str()))
            .collect();
        let loop_of = enclosing_loops(&plan);
        let hooks = Hooks::new(workflow);
        let deadline = workflow
            .limits
            .timeout
            .as_ref()
            .map(|timeout| ctx.executor.timer(timeout.value.to_std()).shared());
        Ok(Self {
            program: Program {
                input: TemplateValue::from(minijinja::value::Serde(&input_json)),
                input_json,
                env: TemplateValue::from(minijinja::value::Serde(Value::Object(env))),
                run_id_str: Arc::from(run_id.as_str()),
                run_id,
                plan,
                templates,
                schemas,
                patterns,
                schema,
                ids,
                loop_of,
                hooks,
                deadline,
            },
            ctx,
            journal: Journal {
                ledger: caller.map_or_else(Arc::default, |caller| caller.journal.ledger.clone()),
                recovery: caller
                    .map_or_else(Arc::default, |caller| caller.journal.recovery.clone()),
                log: Mutex::new(Vec::new()),
                nested: caller.is_some(),
                inherited_sessions: caller.map_or_else(Arc::default, |caller| {
                    caller.journal.inherited_sessions.clone()
                }),
            },
            tallies: Tallies::default(),
        })
    }

    /// The workflow.
    pub(crate) fn workflow(&self) -> &Workflow {
        self.program.plan.workflow()
    }

    /// A node's id.
    pub(crate) fn id(&self, node: NodeIdx) -> &Arc<str> {
        &self.program.ids[node.index()]
    }

    /// The tallies (a poisoned lock only means a panic elsewhere; the data is plain).
    pub(crate) fn tally(&self) -> MutexGuard<'_, Tally> {
        self.tallies
            .spent
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The template context for a step of `frame`.
    pub(crate) fn scope(&self, frame: &Frame, node: Option<NodeIdx>, step: u64) -> LazyScope {
        let iteration = node
            .and_then(|node| self.program.loop_of[node.index()])
            .map_or(0, |counter| frame.counters.get(counter));
        Scope {
            input: self.program.input.clone(),
            env: self.program.env.clone(),
            state: frame.state.clone(),
            outputs: frame.outputs.clone(),
            run: RunInfo {
                id: self.program.run_id_str.clone(),
                step,
                iteration,
            },
            locals: frame.locals(),
        }
        .lazy()
    }

    /// Sends an event to the sink (if it wants it) and to the run log (if logged).
    pub(crate) fn emit(&self, event: RunEvent) {
        if let Some(sink) = &self.ctx.sink
            && event.selected_by(self.ctx.stream)
        {
            sink.emit(&event);
        }
        if self.ctx.log_events && !self.journal.nested && event.is_logged() {
            self.journal
                .log
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push(Json::lazy(Arc::new(event)));
        }
    }

    /// Whether anyone would see an event selected by `events`/`debug` (to skip building it).
    pub(crate) fn wants_events(&self) -> bool {
        (self.ctx.sink.is_some() && (self.ctx.stream.events || self.ctx.stream.debug))
            || (self.ctx.log_events && !self.journal.nested)
    }

    /// Takes the buffered log events.
    pub(crate) fn take_log(&self) -> Vec<Json> {
        std::mem::take(
            &mut *self
                .journal
                .log
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    }

    /// The cursor for continuing at `next` with `frame`'s counters.
    pub(crate) fn cursor(&self, frame: &Frame, next: Option<StepIdx>, waiting: bool) -> Cursor {
        let tally = self.tally();
        Cursor {
            next,
            next_key: next.map(|step| self.program.plan.step(step).key.clone()),
            waiting,
            auto_answer_at: None,
            counters: frame.counters.clone(),
            calls: tally.calls.clone(),
            sessions: tally.sessions.clone(),
            context_actions: tally.context_actions.clone(),
            allowed_tools: tally.allowed_tools.clone(),
            usage: tally.usage,
            cost_usd: tally.cost_usd,
            steps_taken: self.tallies.steps_taken.load(Ordering::Relaxed),
            files: match &frame.tree {
                Some(tree) => tree.committed(),
                None => tally.files.clone(),
            },
            error: frame.error.clone(),
            state_version: self.workflow().state_version.as_ref().map(|v| v.value),
            local: 0,
            writes: Vec::new(),
        }
    }

    /// Where `frame`'s agents and tools work: its branch's worktree, or the run's
    /// workspace.
    pub(crate) fn workspace<'a>(&'a self, frame: &'a Frame) -> &'a Workspace {
        frame
            .tree
            .as_ref()
            .map_or(&self.ctx.workspace, |tree| &tree.workspace)
    }

    /// Where `frame`'s steps record the files, and on which chain: its branch's worktree
    /// on the branch's chain, or the run's workspace on the run's; `None` when the run
    /// keeps no snapshots.
    pub(crate) fn recorder(&self, frame: &Frame) -> Option<(Arc<Snapshots>, String)> {
        match &frame.tree {
            Some(tree) => Some((tree.workspace.snapshots()?, tree.chain.clone())),
            None => Some((
                self.ctx.executor.snapshots(&self.ctx)?,
                self.program.run_id.to_string(),
            )),
        }
    }

    /// Restores the tallies from a cursor (on resume).
    pub(crate) fn restore(&self, cursor: &Cursor) {
        let mut tally = self.tally();
        tally.usage = cursor.usage;
        tally.cost_usd = cursor.cost_usd;
        tally.calls = cursor.calls.clone();
        tally.sessions = cursor.sessions.clone();
        tally.context_actions = cursor.context_actions.clone();
        tally.allowed_tools = cursor.allowed_tools.clone();
        tally.files.clone_from(&cursor.files);
        self.tallies
            .steps_taken
            .store(cursor.steps_taken, Ordering::Relaxed);
    }

    /// A new run's initial state (defaults).
    pub(crate) fn initial_state(&self) -> State {
        State::new(self.program.schema.clone())
    }
}

/// Compiles every template and expression of the workflow.
fn compile_templates(workflow: &Workflow) -> Result<Templates, RunError> {
    let mut templates = Templates::new();
    for field in &workflow.state {
        if let Some(migrate) = &field.migrate {
            templates.add(migrate, Role::Expr)?;
        }
    }
    for node in &workflow.nodes {
        match &node.kind {
            NodeKind::Agent(agent) => {
                for template in agent.system.iter().chain(&agent.prompt).chain(&agent.cwd) {
                    templates.add(template, Role::Text)?;
                }
            }
            NodeKind::Tool(tool) => {
                for template in tool.run.iter().chain(&tool.cwd).chain(&tool.stdin) {
                    templates.add(template, Role::Text)?;
                }
                for (_, template) in tool.env.iter().chain(&tool.args) {
                    templates.add(template, Role::Text)?;
                }
            }
            NodeKind::Decision(decision) => {
                for route in decision.routes.iter().chain(&decision.otherwise) {
                    if let Some(when) = &route.when {
                        templates.add(when, Role::Expr)?;
                    }
                }
            }
            NodeKind::Wait(wait) => templates.add(&wait.prompt, Role::Text)?,
            NodeKind::Subgraph(subgraph) => {
                for (_, template) in &subgraph.inputs {
                    templates.add(template, Role::Value)?;
                }
            }
            NodeKind::Parallel(parallel) => {
                if let Some(for_each) = &parallel.for_each {
                    // A task-loop's `items` is its file's path: a template.
                    let role = if parallel.tasks.is_some() {
                        Role::Text
                    } else {
                        Role::Expr
                    };
                    templates.add(&for_each.items, role)?;
                }
                if let Some(max) = parallel
                    .tasks
                    .as_ref()
                    .and_then(|t| t.max_iterations.as_ref())
                {
                    templates.add(max, Role::Expr)?;
                }
            }
            NodeKind::Loop(ir) => {
                for expr in ir.until.iter().chain(&ir.while_) {
                    templates.add(expr, Role::Expr)?;
                }
            }
            NodeKind::Emit(emit) => {
                for (_, template) in &emit.data {
                    templates.add(template, Role::Value)?;
                }
            }
            NodeKind::Set(set) => {
                templates.add(
                    &set.value,
                    if set.is_expr { Role::Expr } else { Role::Value },
                )?;
            }
        }
        if let Some(OnError::Skip { fallback, .. }) = node.on_error.as_deref() {
            for set in fallback {
                templates.add(
                    &set.value,
                    if set.is_expr { Role::Expr } else { Role::Value },
                )?;
            }
        }
    }
    Ok(templates)
}

/// Every schema file the run may validate against.
fn schema_paths(workflow: &Workflow) -> Vec<&str> {
    let mut paths = Vec::new();
    let declared = workflow
        .inputs
        .iter()
        .map(|input| &input.ty)
        .chain(workflow.state.iter().map(|field| &field.ty));
    for ty in declared {
        if let crate::ir::ValueType::Schema(schema) = ty {
            paths.push(schema.value.as_str());
        }
    }
    for node in &workflow.nodes {
        for output in node.kind.outputs() {
            if let Some(schema) = &output.schema {
                paths.push(schema.value.as_str());
            }
        }
        if let NodeKind::Wait(wait) = &node.kind
            && let AnswerType::Json(Some(schema)) = &wait.answer
        {
            paths.push(schema.value.as_str());
        }
    }
    paths
}

/// Each input declared with a schema matches it, before the first step.
fn check_inputs(workflow: &Workflow, bound: &Value, schemas: &Schemas) -> Result<(), RunError> {
    for input in &workflow.inputs {
        let (crate::ir::ValueType::Schema(path), Some(value)) =
            (&input.ty, bound.get(&input.name.value))
        else {
            continue;
        };
        let problems = schemas
            .problems(&path.value, value)
            .map_err(|error| RunError::Setup(error.message))?;
        if !problems.is_empty() {
            return Err(RunError::Setup(format!(
                "input `{}` does not match `{}`: {}",
                input.name.value,
                path.value,
                problems.join("; ")
            )));
        }
    }
    Ok(())
}

/// The inputs with defaults applied and values coerced to their declared types.
fn bind_inputs(
    workflow: &Workflow,
    given: &Map<String, Value>,
) -> Result<Map<String, Value>, RunError> {
    let mut bound = Map::new();
    for (name, _) in given {
        if workflow.input(name).is_none() {
            let known: Vec<&str> = workflow
                .inputs
                .iter()
                .map(|input| input.name.value.as_str())
                .collect();
            return Err(RunError::Setup(format!(
                "the workflow has no input `{name}`{}",
                if known.is_empty() {
                    String::new()
                } else {
                    format!(
                        ": expected one of {}",
                        known
                            .iter()
                            .map(|k| format!("`{k}`"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                }
            )));
        }
    }
    for input in &workflow.inputs {
        let name = &input.name.value;
        let value = match (given.get(name), &input.default) {
            (Some(value), _) => value.clone(),
            (None, Some(default)) => default.clone(),
            (None, None) => {
                return Err(RunError::Setup(format!(
                    "input `{name}` is required: pass `--input {name}=…`"
                )));
            }
        };
        // `--input config={…}` arrives as text: for an input with a schema, text that is a
        // JSON object or array is that value.
        let value = match (&input.ty, value) {
            (crate::ir::ValueType::Schema(_), Value::String(text)) => {
                match serde_json::from_str::<Value>(text.trim()) {
                    Ok(parsed @ (Value::Object(_) | Value::Array(_))) => parsed,
                    _ => Value::String(text),
                }
            }
            (_, value) => value,
        };
        let value = coerce(&input.ty, value)
            .map_err(|message| RunError::Setup(format!("input `{name}`: {message}")))?;
        bound.insert(name.clone(), value);
    }
    Ok(bound)
}

/// For each node, the iteration counter of its innermost enclosing loop.
fn enclosing_loops(plan: &Plan) -> Vec<Option<CounterIdx>> {
    let workflow = plan.workflow();
    let counter_of = |idx: NodeIdx| match plan.step_of(idx).map(|step| plan.step(step).kind) {
        Some(StepKind::LoopHead { counter, .. }) => Some(counter),
        _ => None,
    };
    let mut cache: HashMap<NodeIdx, Option<CounterIdx>> = HashMap::new();
    (0..workflow.nodes.len())
        .map(|index| {
            let mut parent = workflow.nodes[index].parent;
            while let Some(p) = parent {
                if let Some(found) = cache.get(&p) {
                    return *found;
                }
                if matches!(workflow.node(p).kind, NodeKind::Loop(_)) {
                    let counter = counter_of(p);
                    cache.insert(p, counter);
                    return counter;
                }
                parent = workflow.node(p).parent;
            }
            None
        })
        .collect()
}
