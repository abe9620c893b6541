//! The run, its steps and their attempts as spans; the agent calls inside them are in
//! `agent.rs`.

use std::sync::{Arc, Mutex, PoisonError};

use opentelemetry::trace::{SpanKind, Status, TraceContextExt, Tracer as _};
use opentelemetry::{Context, KeyValue};
use opentelemetry_sdk::trace::SdkTracer;

use crate::ir::NodeKeyword;
use crate::providers::{Redactor, Usage};
use crate::runtime::{FailAction, RunEvent};
use crate::telemetry::conventions as attr;

/// The spans of one run, built as its events arrive.
pub(crate) struct RunTrace {
    tracer: SdkTracer,
    pub(super) capture: bool,
    redactor: Redactor,
    state: Mutex<State>,
}

#[derive(Default)]
pub(super) struct State {
    run: Option<Context>,
    pub(super) steps: Vec<Step>,
}

/// An open step.
pub(super) struct Step {
    pub(super) node: Arc<str>,
    pub(super) branch: Option<u32>,
    /// A block whose steps run inside it.
    pub(super) block: bool,
    pub(super) span: Context,
    pub(super) attempt: Option<Context>,
    pub(super) call: Option<Call>,
}

/// An open agent call.
pub(super) struct Call {
    pub(super) span: Context,
    pub(super) tools: Vec<(String, Context)>,
}

/// A failure to record on a span.
pub(super) struct Failure<'a> {
    pub(super) class: &'a str,
    pub(super) message: &'a str,
}

impl RunTrace {
    /// Spans through `tracer`; prompts, replies and tool inputs only when `capture`, and
    /// every text through `redactor`.
    pub(crate) fn new(tracer: SdkTracer, capture: bool, redactor: Redactor) -> Self {
        Self {
            tracer,
            capture,
            redactor,
            state: Mutex::new(State::default()),
        }
    }

    pub(super) fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(super) fn start(
        &self,
        parent: &Context,
        name: String,
        kind: SpanKind,
        attributes: Vec<KeyValue>,
    ) -> Context {
        let span = self
            .tracer
            .span_builder(name)
            .with_kind(kind)
            .with_attributes(attributes)
            .start_with_context(&self.tracer, parent);
        parent.with_span(span)
    }

    pub(super) fn redact(&self, text: &str) -> String {
        self.redactor.redact(text).into_owned()
    }

    /// Marks `span` failed: status error, `error.type`, and an `exception` event.
    pub(super) fn fail(&self, span: &Context, failure: &Failure<'_>) {
        let message = self.redact(failure.message);
        let span = span.span();
        span.set_attribute(KeyValue::new(attr::ERROR_TYPE, failure.class.to_owned()));
        span.add_event(
            "exception",
            vec![
                KeyValue::new("exception.type", failure.class.to_owned()),
                KeyValue::new("exception.message", message.clone()),
            ],
        );
        span.set_status(Status::error(message));
    }

    /// Takes one event of the run.
    pub(crate) fn observe(&self, event: &RunEvent) {
        let mut state = self.state();
        match event {
            RunEvent::RunStarted {
                run_id,
                workflow,
                resumed,
                from_step,
            } => {
                let run = self.start(
                    &Context::new(),
                    format!("run {workflow}"),
                    SpanKind::Internal,
                    vec![
                        KeyValue::new(attr::RUN_ID, run_id.clone()),
                        KeyValue::new(attr::WORKFLOW, workflow.clone()),
                        KeyValue::new(attr::RESUMED, *resumed),
                        KeyValue::new("atomic.run.from_step", i64_of(*from_step)),
                    ],
                );
                state.run = Some(run);
            }
            RunEvent::StepStarted {
                step,
                node,
                kind,
                attempt,
                branch,
            } => self.step_started(&mut state, *step, node, *kind, *attempt, *branch),
            RunEvent::Retrying {
                node,
                class,
                message,
                attempt,
                delay_ms,
            } => {
                if let Some(index) = state.find(node, None) {
                    let step = &mut state.steps[index];
                    if let Some(attempt_span) = &step.attempt {
                        attempt_span.span().set_attribute(KeyValue::new(
                            "atomic.retry.delay_ms",
                            i64_of(*delay_ms),
                        ));
                        attempt_span.span().set_attribute(KeyValue::new(
                            "atomic.retry.next_attempt",
                            i64::from(*attempt),
                        ));
                    }
                    let failure = Failure {
                        class: class.name(),
                        message,
                    };
                    self.end_attempt(step, Some(&failure));
                }
            }
            RunEvent::NodeFailed {
                node,
                class,
                message,
                action,
            } => {
                if let Some(index) = state.find(node, None) {
                    let failure = Failure {
                        class: class.name(),
                        message,
                    };
                    let step = &mut state.steps[index];
                    self.end_attempt(step, Some(&failure));
                    step.span
                        .span()
                        .set_attribute(KeyValue::new(attr::FAIL_ACTION, action.as_str()));
                    // Skip and recover go on: `step-finished` ends the step.
                    if matches!(action, FailAction::FailBranch | FailAction::FailRun) {
                        let step = state.steps.remove(index);
                        self.fail(&step.span, &failure);
                        step.span.span().end();
                    }
                }
            }
            RunEvent::StepFinished {
                node,
                status,
                branch,
                ..
            } => {
                if let Some(index) = state.find(node, Some(*branch)) {
                    let mut step = state.steps.remove(index);
                    self.end_attempt(&mut step, None);
                    step.span
                        .span()
                        .set_attribute(KeyValue::new(attr::STEP_STATUS, status.as_str()));
                    step.span.span().end();
                }
            }
            RunEvent::Agent { node, event } => self.agent_event(&mut state, node, event),
            RunEvent::Route { node, to } => state.step_event(
                node,
                "atomic.route",
                vec![KeyValue::new("atomic.route.to", to.clone())],
            ),
            RunEvent::HookFailed {
                event,
                node,
                message,
                blocked,
                ..
            } => {
                let at = node
                    .as_ref()
                    .and_then(|node| state.find(node, None))
                    .map(|index| state.steps[index].span.clone())
                    .or_else(|| state.run.clone());
                if let Some(at) = at {
                    at.span().add_event(
                        "atomic.hook_failed",
                        vec![
                            KeyValue::new("atomic.hook.event", event.name()),
                            KeyValue::new("atomic.hook.blocked", *blocked),
                            KeyValue::new("exception.message", self.redact(message)),
                        ],
                    );
                }
            }
            RunEvent::SandboxDenied {
                node,
                target,
                reason,
            } => state.step_event(
                node,
                "atomic.sandbox_denied",
                vec![
                    KeyValue::new("atomic.sandbox.target", target.clone()),
                    KeyValue::new("atomic.sandbox.reason", reason.clone()),
                ],
            ),
            RunEvent::ToolBlocked {
                node,
                tool,
                tool_id,
                reason,
            } => state.step_event(
                node,
                "atomic.tool_blocked",
                vec![
                    KeyValue::new("gen_ai.tool.name", tool.clone()),
                    KeyValue::new("gen_ai.tool.call.id", tool_id.clone()),
                    KeyValue::new("atomic.tool.blocked_reason", self.redact(reason)),
                ],
            ),
            RunEvent::RunPaused { node, .. } => {
                if let Some(index) = state.find(node, None) {
                    state.steps[index]
                        .span
                        .span()
                        .set_attribute(KeyValue::new(attr::STEP_STATUS, "waiting"));
                }
                self.end_run(&mut state, "paused", None);
            }
            RunEvent::RunFinished {
                steps,
                usage,
                cost_usd,
                ..
            } => {
                if let Some(run) = &state.run {
                    let span = run.span();
                    span.set_attribute(KeyValue::new(attr::STEPS, i64_of(*steps)));
                    for value in usage_attributes(*usage) {
                        span.set_attribute(value);
                    }
                    span.set_attribute(KeyValue::new(attr::COST_USD, *cost_usd));
                    span.set_status(Status::Ok);
                }
                self.end_run(&mut state, "completed", None);
            }
            RunEvent::RunFailed {
                node,
                class,
                message,
                ..
            } => {
                if let (Some(run), Some(node)) = (&state.run, node) {
                    run.span()
                        .set_attribute(KeyValue::new("atomic.run.failed_node", node.to_string()));
                }
                let failure = Failure {
                    class: class.name(),
                    message,
                };
                self.end_run(&mut state, "failed", Some(&failure));
            }
            RunEvent::RunCancelled { .. } => self.end_run(&mut state, "cancelled", None),
            _ => {}
        }
    }

    fn step_started(
        &self,
        state: &mut State,
        number: u64,
        node: &Arc<str>,
        kind: NodeKeyword,
        attempt: u32,
        branch: Option<u32>,
    ) {
        let index = match state.find(node, Some(branch)).filter(|_| attempt > 1) {
            Some(index) => index,
            None => {
                let parent = state.parent_of_new_step();
                let mut attributes = vec![
                    KeyValue::new(attr::NODE, node.to_string()),
                    KeyValue::new(attr::KIND, kind.name()),
                    KeyValue::new(attr::STEP, i64_of(number)),
                ];
                if let Some(branch) = branch {
                    attributes.push(KeyValue::new(attr::BRANCH, i64::from(branch)));
                }
                let span = self.start(
                    &parent,
                    format!("step {node}"),
                    SpanKind::Internal,
                    attributes,
                );
                state.steps.push(Step {
                    node: Arc::clone(node),
                    branch,
                    block: matches!(
                        kind,
                        NodeKeyword::Parallel | NodeKeyword::TaskLoop | NodeKeyword::Subgraph
                    ),
                    span,
                    attempt: None,
                    call: None,
                });
                state.steps.len() - 1
            }
        };
        let step = &mut state.steps[index];
        self.end_attempt(step, None);
        step.attempt = Some(self.start(
            &step.span,
            format!("attempt {node}"),
            SpanKind::Internal,
            vec![
                KeyValue::new(attr::NODE, node.to_string()),
                KeyValue::new(attr::ATTEMPT, i64::from(attempt)),
            ],
        ));
    }

    /// Ends the step's attempt and its agent call, failed with `failure` if given.
    fn end_attempt(&self, step: &mut Step, failure: Option<&Failure<'_>>) {
        if let Some(call) = step.call.take() {
            self.end_call(call, failure);
        }
        if let Some(attempt) = step.attempt.take() {
            match failure {
                Some(failure) => self.fail(&attempt, failure),
                None => attempt.span().set_status(Status::Ok),
            }
            attempt.span().end();
        }
    }

    /// Ends every open step and the run span.
    fn end_run(&self, state: &mut State, status: &str, failure: Option<&Failure<'_>>) {
        for mut step in state.steps.drain(..).rev() {
            self.end_attempt(&mut step, None);
            step.span.span().end();
        }
        if let Some(run) = state.run.take() {
            run.span()
                .set_attribute(KeyValue::new(attr::RUN_STATUS, status.to_owned()));
            if let Some(failure) = failure {
                self.fail(&run, failure);
            }
            run.span().end();
        }
    }

    /// Ends whatever is still open (the run stopped without an end event).
    pub(crate) fn close(&self) {
        let mut state = self.state();
        self.end_run(&mut state, "stopped", None);
    }
}

impl State {
    /// Adds event `name` to the newest span of `node`'s step, if one is open.
    fn step_event(&self, node: &str, name: &'static str, attributes: Vec<KeyValue>) {
        if let Some(index) = self.find(node, None) {
            self.steps[index].span.span().add_event(name, attributes);
        }
    }

    /// The latest open step of `node` (in `branch`, when given).
    pub(super) fn find(&self, node: &str, branch: Option<Option<u32>>) -> Option<usize> {
        self.steps.iter().rposition(|step| {
            &*step.node == node && branch.is_none_or(|branch| step.branch == branch)
        })
    }

    /// Where a step that starts now goes: the latest open block's attempt, or the run.
    fn parent_of_new_step(&self) -> Context {
        self.steps
            .iter()
            .rev()
            .filter(|step| step.block)
            .find_map(|step| step.attempt.clone())
            .or_else(|| self.run.clone())
            .unwrap_or_default()
    }
}

pub(super) fn usage_attributes(usage: Usage) -> [KeyValue; 4] {
    [
        KeyValue::new(attr::INPUT_TOKENS, i64_of(usage.input_tokens)),
        KeyValue::new(attr::OUTPUT_TOKENS, i64_of(usage.output_tokens)),
        KeyValue::new(attr::CACHE_READ_TOKENS, i64_of(usage.cache_read_tokens)),
        KeyValue::new(attr::CACHE_WRITE_TOKENS, i64_of(usage.cache_write_tokens)),
    ]
}

pub(super) fn i64_of(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}
