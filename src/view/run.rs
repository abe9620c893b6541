//! [`RunView`]: a run as people look at it, folded from its events — the graph's steps
//! with their states and attempts, what each agent said and did, the state as it changes,
//! tokens and cost per step and in all, and the events themselves.

use std::collections::HashMap;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::lower::Outline;
use crate::providers::{AgentEvent, Todo, Usage};
use crate::runtime::executor::OutputStream;
use crate::runtime::state::{Change, Delta, FieldChange};
use crate::runtime::{Choice, FilesChanged, RunEvent, StepOutcome};

/// How many events a view keeps (the oldest are dropped; the counts stay exact).
pub const EVENT_WINDOW: usize = 2_000;

/// How much of one step's output a view keeps, in items.
pub const OUTPUT_WINDOW: usize = 2_000;

/// Where a step is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum NodeState {
    /// Not reached yet.
    #[default]
    Pending,
    /// An attempt is running.
    Running,
    /// Finished.
    Done,
    /// Failed for good.
    Failed,
    /// Skipped after a failure (`on-error` skip).
    Skipped,
    /// Waiting for an answer.
    Waiting,
}

impl NodeState {
    /// Its name, as the views print it.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Running => "running",
            Self::Done => "done",
            Self::Failed => "failed",
            Self::Skipped => "skipped",
            Self::Waiting => "waiting",
        }
    }
}

/// One thing a step's agent or tool produced.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum OutputItem {
    /// Reply text (deltas of one message joined).
    Text {
        /// The text.
        text: String,
    },
    /// Visible thinking.
    Thinking {
        /// The text.
        text: String,
    },
    /// A tool call.
    ToolCall {
        /// The tool.
        name: String,
        /// Its input.
        input: Value,
    },
    /// A tool's result.
    ToolResult {
        /// The tool.
        name: String,
        /// A short summary.
        summary: String,
        /// Whether it failed.
        is_error: bool,
    },
    /// A line a tool node printed.
    Line {
        /// `stdout` or `stderr`.
        stream: OutputStream,
        /// The line.
        line: String,
    },
}

/// One step of the graph, as the run has it.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct NodeView {
    /// The step's key in the graph.
    pub key: String,
    /// The node id run events name (none for the start and the end).
    pub node: Option<String>,
    /// `agent`, `tool`, `decision`, ….
    pub kind: String,
    /// What the graph shows on it.
    pub label: String,
    /// Where it is.
    pub state: NodeState,
    /// Attempts started, over the whole run.
    pub attempts: u32,
    /// Times it finished (a loop's steps finish once per iteration).
    pub runs: u32,
    /// Tokens its agent calls used.
    pub usage: Usage,
    /// What its agent calls cost, where priced.
    pub cost_usd: Option<f64>,
    /// Time its committed steps took, in all, in milliseconds (none where the source does
    /// not record step times).
    pub elapsed_ms: Option<u64>,
    /// The last failure.
    pub error: Option<String>,
    /// What it produced, oldest first (the last [`OUTPUT_WINDOW`] items).
    pub output: Vec<OutputItem>,
    /// The files its last finished step changed (snapshots before and after it, the paths
    /// that differ), in a run that keeps snapshots of its workspace.
    pub files: Option<FilesChanged>,
    /// Its agent's plan as last reported by its latest step (empty when none was).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub plan: Vec<Todo>,
    /// The last text item is a complete message.
    #[serde(skip)]
    message_done: bool,
}

/// How the run stands.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RunPhase {
    /// Started, not ended.
    #[default]
    Running,
    /// Waiting for an answer.
    Paused,
    /// Finished.
    Completed,
    /// Failed.
    Failed,
    /// Cancelled.
    Cancelled,
}

impl RunPhase {
    /// Its name.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::Paused => "paused",
            Self::Completed => "completed",
            Self::Failed => "failed",
            Self::Cancelled => "cancelled",
        }
    }
}

/// A wait the run is paused at.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct WaitView {
    /// The wait's node.
    pub node: String,
    /// A short title shown above the question.
    pub header: Option<String>,
    /// Its question.
    pub prompt: String,
    /// The state field the answer goes to.
    pub answer: String,
    /// The answers offered, if it offers a choice, each with its label and description.
    pub choices: Vec<Choice>,
}

impl WaitView {
    /// The question on one line, its header first as a tag: `[Database] Which one?`.
    #[must_use]
    pub fn headed_prompt(&self) -> String {
        headed(self.header.as_deref(), &self.prompt)
    }
}

/// `prompt` after `header` as a tag (`[Database] Which one?`), for the places that show a
/// question on one line.
#[must_use]
pub fn headed(header: Option<&str>, prompt: &str) -> String {
    match header {
        Some(header) => format!("[{header}] {prompt}"),
        None => prompt.to_owned(),
    }
}

/// A run, folded from its events.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct RunView {
    /// The run id.
    pub run_id: String,
    /// The workflow's name.
    pub workflow: String,
    /// How the run stands.
    pub phase: RunPhase,
    /// The last step number seen.
    pub step: u64,
    /// The steps of the graph, in source order (steps seen in events but not in the graph
    /// are added at the end).
    pub nodes: Vec<NodeView>,
    /// The graph's edges.
    pub edges: Vec<crate::lower::OutlineEdge>,
    /// The state as its deltas have built it (top-level fields).
    pub state: Map<String, Value>,
    /// Tokens in all.
    pub usage: Usage,
    /// Cost in all, where priced.
    pub cost_usd: Option<f64>,
    /// The waits the run is paused at.
    pub waits: Vec<WaitView>,
    /// Why it failed.
    pub error: Option<String>,
    /// Events seen in all.
    pub event_count: u64,
    /// The last [`EVENT_WINDOW`] events.
    #[serde(skip)]
    pub events: std::collections::VecDeque<RunEvent>,
    /// Node id → index in `nodes`.
    #[serde(skip)]
    index: HashMap<String, usize>,
    /// What live events of uncommitted steps changed, to take back ([`RunView::overlay`]).
    #[serde(skip)]
    overlay: Option<Overlay>,
}

/// What a view was before live events were laid over it.
#[derive(Clone, Debug, Default, PartialEq)]
struct Overlay {
    /// The steps they changed, as they were.
    nodes: Vec<(usize, NodeView)>,
    /// How many steps there were (live events may add some).
    len: usize,
    step: u64,
    usage: Usage,
    cost_usd: Option<f64>,
}

impl RunView {
    /// A view of a run of the workflow `outline` describes (an empty outline when the
    /// workflow cannot be read: steps then appear as events name them).
    #[must_use]
    pub fn new(run_id: &str, outline: &Outline) -> Self {
        let mut view = Self {
            run_id: run_id.to_owned(),
            edges: outline.edges.clone(),
            ..Self::default()
        };
        for step in &outline.steps {
            if let Some(node) = &step.node {
                view.index.entry(node.clone()).or_insert(view.nodes.len());
            }
            view.nodes.push(NodeView {
                key: step.key.clone(),
                node: step.node.clone(),
                kind: step.kind.to_owned(),
                label: step.label.clone(),
                ..NodeView::default()
            });
        }
        view
    }

    /// The step running `node`, added when the graph does not have it.
    fn node_mut(&mut self, node: &str, kind: Option<&str>) -> &mut NodeView {
        let at = match self.index.get(node) {
            Some(&at) => at,
            None => {
                self.nodes.push(NodeView {
                    key: node.to_owned(),
                    node: Some(node.to_owned()),
                    kind: kind.unwrap_or("step").to_owned(),
                    label: node.to_owned(),
                    ..NodeView::default()
                });
                self.index.insert(node.to_owned(), self.nodes.len() - 1);
                self.nodes.len() - 1
            }
        };
        &mut self.nodes[at]
    }

    /// The step of `node`, if the view has it.
    #[must_use]
    pub fn node(&self, node: &str) -> Option<&NodeView> {
        self.index.get(node).map(|&at| &self.nodes[at])
    }

    /// Lays the events of steps that have not committed yet (a run's live feed: an agent's
    /// text as it streams, its tool calls) over the view, replacing the last ones laid.
    /// They change what the steps show, not the event count or the events list, and are
    /// taken back before the view goes on ([`RunView::clear_overlay`]): the log's events
    /// of a step that committed are the record.
    pub fn overlay<'e>(&mut self, events: impl IntoIterator<Item = &'e RunEvent>) {
        self.clear_overlay();
        let mut saved = Overlay {
            nodes: Vec::new(),
            len: self.nodes.len(),
            step: self.step,
            usage: self.usage,
            cost_usd: self.cost_usd,
        };
        for event in events {
            if let Some(node) = live_node(event)
                && let Some(&at) = self.index.get(node)
                && !saved.nodes.iter().any(|(seen, _)| *seen == at)
            {
                saved.nodes.push((at, self.nodes[at].clone()));
            }
            self.fold(event);
        }
        self.overlay = Some(saved);
    }

    /// Takes back what [`RunView::overlay`] laid over the view.
    pub fn clear_overlay(&mut self) {
        let Some(saved) = self.overlay.take() else {
            return;
        };
        for (at, node) in saved.nodes {
            self.nodes[at] = node;
        }
        for node in self.nodes.drain(saved.len..) {
            if let Some(id) = node.node {
                self.index.remove(&id);
            }
        }
        self.step = saved.step;
        self.usage = saved.usage;
        self.cost_usd = saved.cost_usd;
    }

    /// Adds the time committed steps took to their nodes.
    pub fn apply_times(&mut self, steps: &[crate::store::StepTime]) {
        self.clear_overlay();
        for step in steps {
            let took = step.finished_at.0.saturating_sub(step.started_at.0);
            let node = self.node_mut(&step.node_id, None);
            node.elapsed_ms = Some(node.elapsed_ms.unwrap_or(0) + took);
        }
    }

    /// Takes one event.
    pub fn apply(&mut self, event: &RunEvent) {
        self.clear_overlay();
        self.event_count += 1;
        self.fold(event);
        if self.events.len() == EVENT_WINDOW {
            self.events.pop_front();
        }
        self.events.push_back(event.clone());
    }

    fn fold(&mut self, event: &RunEvent) {
        match event {
            RunEvent::RunStarted {
                run_id, workflow, ..
            } => {
                run_id.clone_into(&mut self.run_id);
                workflow.clone_into(&mut self.workflow);
                self.phase = RunPhase::Running;
                self.waits.clear();
                for node in &mut self.nodes {
                    if node.state == NodeState::Waiting {
                        node.state = NodeState::Pending;
                    }
                    if node.kind == "start" {
                        node.state = NodeState::Done;
                    }
                }
            }
            RunEvent::StepStarted {
                step, node, kind, ..
            } => {
                self.step = self.step.max(*step);
                let view = self.node_mut(node, Some(kind.name()));
                view.state = NodeState::Running;
                view.attempts += 1;
                view.error = None;
                // The plan shown is this step's agent's: an earlier step's is over.
                view.plan.clear();
            }
            RunEvent::StepFinished {
                step,
                node,
                status,
                delta,
                files,
                ..
            } => {
                self.step = self.step.max(*step);
                let skipped = *status == StepOutcome::Skipped;
                let view = self.node_mut(node, None);
                view.state = if skipped {
                    NodeState::Skipped
                } else {
                    NodeState::Done
                };
                view.runs += 1;
                view.files.clone_from(files);
                apply_delta(&mut self.state, delta);
            }
            RunEvent::Values {
                state: Value::Object(fields),
                ..
            } => self.state.clone_from(fields),
            RunEvent::Retrying { node, message, .. } => {
                self.node_mut(node, None).error = Some(message.clone());
            }
            RunEvent::NodeFailed { node, message, .. } => {
                let view = self.node_mut(node, None);
                view.state = NodeState::Failed;
                view.error = Some(message.clone());
            }
            RunEvent::Agent { node, event } => self.agent(node, event),
            RunEvent::ToolOutput { node, stream, line } => {
                push(
                    &mut self.node_mut(node, None).output,
                    OutputItem::Line {
                        stream: *stream,
                        line: line.clone(),
                    },
                );
            }
            RunEvent::RunPaused {
                node,
                header,
                prompt,
                answer,
                choices,
                ..
            } => {
                self.phase = RunPhase::Paused;
                self.node_mut(node, None).state = NodeState::Waiting;
                self.waits.retain(|wait| wait.node != node.as_ref());
                self.waits.push(WaitView {
                    node: node.to_string(),
                    header: header.clone(),
                    prompt: prompt.clone(),
                    answer: answer.clone(),
                    choices: choices.clone(),
                });
            }
            RunEvent::RunFinished {
                steps,
                usage,
                cost_usd,
                ..
            } => {
                self.phase = RunPhase::Completed;
                self.step = self.step.max(*steps);
                for node in self.nodes.iter_mut().filter(|node| node.kind == "end") {
                    node.state = NodeState::Done;
                }
                self.usage = *usage;
                self.cost_usd = Some(*cost_usd).filter(|cost| *cost > 0.0).or(self.cost_usd);
            }
            RunEvent::RunFailed { node, message, .. } => {
                self.phase = RunPhase::Failed;
                self.error = Some(message.clone());
                if let Some(node) = node {
                    let view = self.node_mut(node, None);
                    view.state = NodeState::Failed;
                    view.error.get_or_insert_with(|| message.clone());
                }
            }
            RunEvent::RunCancelled { .. } => {
                self.phase = RunPhase::Cancelled;
                for node in &mut self.nodes {
                    if node.state == NodeState::Running {
                        node.state = NodeState::Pending;
                    }
                }
            }
            _ => {}
        }
    }

    fn agent(&mut self, node: &str, event: &AgentEvent) {
        let mut total = None;
        let view = self.node_mut(node, Some("agent"));
        match event {
            AgentEvent::TextDelta { text } => {
                // A delta after a complete message starts the next one.
                let fresh = std::mem::take(&mut view.message_done);
                append_text(&mut view.output, text, false, fresh);
            }
            AgentEvent::ThinkingDelta { text } => append_text(&mut view.output, text, true, false),
            AgentEvent::MessageComplete { text } => {
                // The log keeps only complete messages; a live view has the deltas already.
                match view.output.last_mut() {
                    Some(OutputItem::Text { text: seen }) if !view.message_done => {
                        seen.clone_from(text);
                    }
                    _ => push(&mut view.output, OutputItem::Text { text: text.clone() }),
                }
                view.message_done = true;
            }
            AgentEvent::ToolStart { name, input, .. } => push(
                &mut view.output,
                OutputItem::ToolCall {
                    name: name.clone(),
                    input: input.clone(),
                },
            ),
            AgentEvent::ToolComplete {
                name,
                summary,
                is_error,
                ..
            } => push(
                &mut view.output,
                OutputItem::ToolResult {
                    name: name.clone(),
                    summary: summary.clone(),
                    is_error: *is_error,
                },
            ),
            AgentEvent::Plan { todos } => view.plan.clone_from(todos),
            AgentEvent::Usage { usage, cost_usd } => {
                // Usage events are cumulative for the call.
                let before = (view.usage, view.cost_usd);
                view.usage = *usage;
                view.cost_usd = cost_usd.or(view.cost_usd);
                total = Some((before, *usage, *cost_usd));
            }
            _ => {}
        }
        if let Some(((before, before_cost), usage, cost)) = total {
            self.usage.input_tokens += usage.input_tokens.saturating_sub(before.input_tokens);
            self.usage.output_tokens += usage.output_tokens.saturating_sub(before.output_tokens);
            self.usage.cache_read_tokens += usage
                .cache_read_tokens
                .saturating_sub(before.cache_read_tokens);
            self.usage.cache_write_tokens += usage
                .cache_write_tokens
                .saturating_sub(before.cache_write_tokens);
            if let Some(cost) = cost {
                let added = cost - before_cost.unwrap_or(0.0);
                self.cost_usd = Some(self.cost_usd.unwrap_or(0.0) + added.max(0.0));
            }
        }
    }
}

/// The step a live event changes (live feeds carry only events of one step).
fn live_node(event: &RunEvent) -> Option<&str> {
    match event {
        RunEvent::StepStarted { node, .. }
        | RunEvent::StepFinished { node, .. }
        | RunEvent::Agent { node, .. }
        | RunEvent::ToolOutput { node, .. }
        | RunEvent::Retrying { node, .. }
        | RunEvent::NodeFailed { node, .. }
        | RunEvent::ContextWarning { node, .. } => Some(node),
        _ => None,
    }
}

/// Appends a delta to the message being streamed, or starts one (`fresh`: always).
fn append_text(output: &mut Vec<OutputItem>, delta: &str, thinking: bool, fresh: bool) {
    match output.last_mut() {
        Some(OutputItem::Text { text }) if !thinking && !fresh => text.push_str(delta),
        Some(OutputItem::Thinking { text }) if thinking => text.push_str(delta),
        _ => push(
            output,
            if thinking {
                OutputItem::Thinking {
                    text: delta.to_owned(),
                }
            } else {
                OutputItem::Text {
                    text: delta.to_owned(),
                }
            },
        ),
    }
}

fn push(output: &mut Vec<OutputItem>, item: OutputItem) {
    if output.len() >= OUTPUT_WINDOW {
        output.remove(0);
    }
    output.push(item);
}

/// Applies a step's changes to the state's top-level fields as their reducers did: a set
/// replaces, an append extends the list, a merge adds keys; objects merged by key are
/// appended (the view does not know the key; the store's state is exact).
fn apply_delta(state: &mut Map<String, Value>, delta: &Delta) {
    for FieldChange { field, change } in &delta.fields {
        let current = state.entry(field.to_string()).or_insert(Value::Null);
        match change {
            Change::Set(value) => *current = value.clone(),
            Change::Append(items) | Change::MergeBy(items) => match current {
                Value::Array(list) => list.extend(items.iter().cloned()),
                _ => *current = Value::Array(items.clone()),
            },
            Change::Merge(keys) => match current {
                Value::Object(object) => {
                    object.extend(keys.iter().map(|(k, v)| (k.clone(), v.clone())));
                }
                _ => *current = Value::Object(keys.clone()),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;

    use super::*;
    use crate::lower::{OutlineEdge, OutlineStep};

    fn outline() -> Outline {
        let step = |key: &str, kind: &'static str| OutlineStep {
            key: key.to_owned(),
            node: Some(key.to_owned()),
            kind,
            label: key.to_owned(),
        };
        Outline {
            steps: vec![
                step("plan", "agent"),
                step("approve", "wait"),
                step("ship", "tool"),
            ],
            edges: vec![OutlineEdge {
                from: "plan".to_owned(),
                to: "approve".to_owned(),
                label: None,
                style: "plain",
                backward: false,
            }],
        }
    }

    fn node(id: &str) -> Arc<str> {
        Arc::from(id)
    }

    fn agent(id: &str, event: AgentEvent) -> RunEvent {
        RunEvent::Agent {
            node: node(id),
            event,
        }
    }

    #[test]
    fn a_run_folds_into_states_output_usage_and_waits() {
        let mut view = RunView::new("r1", &outline());
        view.apply(&RunEvent::RunStarted {
            run_id: "r1".to_owned(),
            workflow: "ship-it".to_owned(),
            resumed: false,
            from_step: 0,
        });
        view.apply(&RunEvent::StepStarted {
            step: 1,
            node: node("plan"),
            kind: crate::ir::NodeKeyword::Agent,
            attempt: 1,
            branch: None,
        });
        assert_eq!(view.node("plan").unwrap().state, NodeState::Running);
        for piece in ["Hel", "lo."] {
            view.apply(&agent(
                "plan",
                AgentEvent::TextDelta {
                    text: piece.to_owned(),
                },
            ));
        }
        view.apply(&agent(
            "plan",
            AgentEvent::MessageComplete {
                text: "Hello.".to_owned(),
            },
        ));
        view.apply(&agent(
            "plan",
            AgentEvent::ToolStart {
                id: "t1".to_owned(),
                name: "Read".to_owned(),
                input: json!({"path": "a.rs"}),
            },
        ));
        view.apply(&agent(
            "plan",
            AgentEvent::TextDelta {
                text: "Done.".to_owned(),
            },
        ));
        let usage = Usage {
            input_tokens: 10,
            output_tokens: 4,
            ..Usage::default()
        };
        view.apply(&agent(
            "plan",
            AgentEvent::Usage {
                usage,
                cost_usd: Some(0.5),
            },
        ));
        view.apply(&agent(
            "plan",
            AgentEvent::Usage {
                usage: Usage {
                    input_tokens: 12,
                    output_tokens: 6,
                    ..Usage::default()
                },
                cost_usd: Some(0.75),
            },
        ));
        let mut delta = Delta::default();
        delta.fields.push(FieldChange {
            field: Arc::from("plan"),
            change: Change::Set(json!("ship it")),
        });
        view.apply(&RunEvent::StepFinished {
            step: 1,
            node: node("plan"),
            status: StepOutcome::Completed,
            delta,
            files: None,
            branch: None,
        });
        let plan = view.node("plan").unwrap();
        assert_eq!(plan.state, NodeState::Done);
        assert_eq!((plan.attempts, plan.runs), (1, 1));
        assert_eq!(
            plan.output,
            [
                OutputItem::Text {
                    text: "Hello.".to_owned()
                },
                OutputItem::ToolCall {
                    name: "Read".to_owned(),
                    input: json!({"path": "a.rs"})
                },
                OutputItem::Text {
                    text: "Done.".to_owned()
                },
            ]
        );
        // Usage events are cumulative per call: the totals count each token once.
        assert_eq!((view.usage.input_tokens, view.usage.output_tokens), (12, 6));
        assert_eq!(view.cost_usd, Some(0.75));
        assert_eq!(view.state["plan"], "ship it");
        view.apply(&RunEvent::RunPaused {
            run_id: "r1".to_owned(),
            step: 2,
            node: node("approve"),
            wait: None,
            header: None,
            prompt: "Ship?".to_owned(),
            answer: "ok".to_owned(),
            choices: Vec::new(),
        });
        assert_eq!(view.phase, RunPhase::Paused);
        assert_eq!(view.node("approve").unwrap().state, NodeState::Waiting);
        assert_eq!(view.waits[0].prompt, "Ship?");
        assert_eq!(view.node("ship").unwrap().state, NodeState::Pending);
        assert_eq!(view.event_count, 11);
    }

    #[test]
    fn failures_and_unknown_nodes_are_shown() {
        let mut view = RunView::new("r2", &outline());
        view.apply(&RunEvent::NodeFailed {
            node: node("elsewhere"),
            class: crate::runtime::FailureClass::Class(crate::ir::ErrorClass::Timeout),
            message: "timed out".to_owned(),
            action: crate::runtime::FailAction::FailRun,
        });
        let failed = view.node("elsewhere").expect("added");
        assert_eq!(failed.state, NodeState::Failed);
        assert_eq!(failed.error.as_deref(), Some("timed out"));
        assert_eq!(view.nodes.len(), 4);
    }

    #[test]
    fn a_step_keeps_the_files_its_last_finished_step_changed() {
        use crate::workspace::snapshot::{Change as FileChange, ChangeStatus};
        let finished = |step: u64, files: Option<FilesChanged>| RunEvent::StepFinished {
            step,
            node: node("ship"),
            status: StepOutcome::Completed,
            delta: Delta::default(),
            files,
            branch: None,
        };
        let files = |after: &str, path: &str, status: ChangeStatus| FilesChanged {
            before: "b0".to_owned(),
            after: after.to_owned(),
            changed: vec![FileChange {
                path: path.to_owned(),
                status,
                added: Some(1),
                removed: Some(0),
            }],
        };
        let mut view = RunView::new("r4", &outline());
        assert_eq!(view.node("ship").unwrap().files, None);
        view.apply(&finished(
            1,
            Some(files("a1", "out.txt", ChangeStatus::Added)),
        ));
        let ship = view.node("ship").unwrap();
        assert_eq!(ship.files.as_ref().unwrap().after, "a1");
        assert_eq!(ship.files.as_ref().unwrap().changed[0].path, "out.txt");
        // Serialised for the web page with the step's other fields.
        let json = serde_json::to_value(ship).unwrap();
        assert_eq!(json["files"]["after"], "a1");
        assert_eq!(json["files"]["changed"][0]["status"], "added");
        assert_eq!(json["files"]["changed"][0]["added"], 1);
        // A loop's step finishes again: the last one's files.
        view.apply(&finished(
            2,
            Some(files("a2", "out.txt", ChangeStatus::Modified)),
        ));
        let ship = view.node("ship").unwrap();
        assert_eq!(ship.files.as_ref().unwrap().after, "a2");
        assert_eq!(ship.runs, 2);
        // A step of a run without snapshots has none.
        view.apply(&finished(3, None));
        assert_eq!(view.node("ship").unwrap().files, None);
        // Live events of a step laid over the view are taken back with it.
        view.overlay(&[finished(
            4,
            Some(files("a4", "new.txt", ChangeStatus::Added)),
        )]);
        assert_eq!(
            view.node("ship").unwrap().files.as_ref().unwrap().after,
            "a4"
        );
        view.clear_overlay();
        assert_eq!(view.node("ship").unwrap().files, None);
    }

    #[test]
    fn a_step_shows_its_agents_latest_plan_live_and_committed() {
        use crate::providers::TodoStatus;
        let todo = |content: &str, status| Todo {
            content: content.to_owned(),
            status,
            active_form: None,
        };
        let plan = |todos: Vec<Todo>| agent("plan", AgentEvent::Plan { todos });
        let started = |step| RunEvent::StepStarted {
            step,
            node: node("plan"),
            kind: crate::ir::NodeKeyword::Agent,
            attempt: 1,
            branch: None,
        };
        let mut view = RunView::new("r4", &outline());
        view.apply(&started(1));
        view.apply(&plan(vec![todo("Read", TodoStatus::InProgress)]));
        view.apply(&plan(vec![
            todo("Read", TodoStatus::Completed),
            todo("Write", TodoStatus::Pending),
        ]));
        assert_eq!(
            view.node("plan").unwrap().plan,
            [
                todo("Read", TodoStatus::Completed),
                todo("Write", TodoStatus::Pending)
            ]
        );
        // The next step of the node starts with no plan; its live plan is laid over the
        // view and taken back.
        let live = [
            started(2),
            plan(vec![todo("Again", TodoStatus::InProgress)]),
        ];
        view.overlay(&live);
        assert_eq!(
            view.node("plan").unwrap().plan,
            [todo("Again", TodoStatus::InProgress)]
        );
        view.clear_overlay();
        assert_eq!(view.node("plan").unwrap().plan.len(), 2);
        view.apply(&started(2));
        assert!(view.node("plan").unwrap().plan.is_empty());
    }

    #[test]
    fn the_event_window_is_bounded() {
        let mut view = RunView::new("r3", &outline());
        for step in 0..(EVENT_WINDOW as u64 + 10) {
            view.apply(&RunEvent::Route {
                node: node("plan"),
                to: format!("#{step}"),
            });
        }
        assert_eq!(view.events.len(), EVENT_WINDOW);
        assert_eq!(view.event_count, EVENT_WINDOW as u64 + 10);
    }
}
