//! Hooks on what an agent does inside its call: `agent.tool.before`, `agent.tool.after`,
//! `permission.request`, `message.complete`, `subagent.start` / `subagent.end` (from the
//! adapter's [`AgentEvent`]s) and `session.error` (the call failed).
//!
//! The adapter's events arrive on a synchronous sink; the hooks they fire are queued and run
//! in order, through the executor, while the call goes on, and the queue is drained before
//! the agent's step ends. Where atomic runs an agent's tool call (the HTTP adapters' tool
//! loop), the adapter asks the call's [`ToolGuard`]
//! before the tool runs: its `agent.tool.before` hooks go through the same queue, so they
//! run after the hooks of everything the agent did before, and a failing one refuses the
//! tool (the model is told why; the refused call gets no `agent.tool.after`). Elsewhere (and
//! on an engine that runs the call away from the interpreter, where the guard does not
//! travel) `agent.tool.before` is a notification when the tool starts, `can_block` false in
//! its payload.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::{Map, Value, json};
use tokio::sync::{mpsc, oneshot};

use super::event::RunEvent;
use super::hooks::{self, HookEvent, HookFailure};
use super::shared::Shared;
use crate::ir::NodeIdx;
use crate::providers::{AgentEvent, ProviderError, ToolCheck, ToolGuard, ToolGuardBackend};

/// A hook the queue runs.
enum Item {
    /// A notification: its failure is reported, nothing is blocked.
    Notify(HookEvent, Map<String, Value>),
    /// An `agent.tool.before` that may refuse the tool; the answer goes back to the adapter.
    Guard(Map<String, Value>, oneshot::Sender<Option<HookFailure>>),
}

/// The queue's sending side, shared by the sink and the guard; `None` once the call ended.
type Queue = Arc<Mutex<Option<mpsc::UnboundedSender<Item>>>>;

/// Tool-call ids the guard answered, with whether it let them run.
type Answered = Arc<Mutex<HashMap<String, bool>>>;

/// The agent hooks of one call.
pub(crate) struct AgentHooks {
    shared: Arc<Shared>,
    node: NodeIdx,
    /// `kind`, `step`, `provider` and `adapter`: in every payload.
    base: Map<String, Value>,
    queue: Queue,
    receiver: Mutex<Option<mpsc::UnboundedReceiver<Item>>>,
    answered: Answered,
    /// The adapter puts every tool to the guard before it runs (`hooks_block_tools`): the
    /// guard, not the tool's start, runs the `agent.tool.before` hooks, whichever the
    /// backend reports first.
    guarded: bool,
}

/// The agent-activity events, for [`AgentHooks::new`] to tell whether any is hooked.
const AGENT_EVENTS: [HookEvent; 7] = [
    HookEvent::AgentToolBefore,
    HookEvent::AgentToolAfter,
    HookEvent::PermissionRequest,
    HookEvent::MessageComplete,
    HookEvent::SubagentStart,
    HookEvent::SubagentEnd,
    HookEvent::SessionError,
];

impl AgentHooks {
    /// The hooks of the call step `seq` of `node` makes to `provider`; `None` (and nothing to
    /// pay) when the workflow hooks none of the agent events, and in a dry run.
    pub(crate) fn new(
        shared: &Arc<Shared>,
        node: NodeIdx,
        seq: u64,
        provider: &str,
    ) -> Option<Self> {
        let hooks = &shared.program.hooks;
        if shared.ctx.dry_run || !AGENT_EVENTS.iter().any(|event| hooks.wants(*event)) {
            return None;
        }
        let adapter = shared
            .workflow()
            .provider(provider)
            .map(|declared| declared.adapter.value.clone());
        let guarded = hooks.wants(HookEvent::AgentToolBefore)
            && adapter
                .as_deref()
                .and_then(crate::ir::adapter_info)
                .is_some_and(|info| info.hooks_block_tools);
        let mut base = Map::new();
        base.insert("kind".into(), "agent".into());
        base.insert("step".into(), seq.into());
        base.insert("provider".into(), provider.into());
        base.insert("adapter".into(), adapter.into());
        let (sender, receiver) = mpsc::unbounded_channel();
        Some(Self {
            shared: Arc::clone(shared),
            node,
            base,
            queue: Arc::new(Mutex::new(Some(sender))),
            receiver: Mutex::new(Some(receiver)),
            answered: Arc::default(),
            guarded,
        })
    }

    /// The guard the adapter asks before the agent's tool calls, when an `agent.tool.before`
    /// hook is declared.
    pub(crate) fn guard(&self) -> Option<ToolGuard> {
        self.shared
            .program
            .hooks
            .wants(HookEvent::AgentToolBefore)
            .then(|| {
                ToolGuard(Arc::new(Guard {
                    base: self.base.clone(),
                    queue: Arc::clone(&self.queue),
                    answered: Arc::clone(&self.answered),
                    shared: Arc::clone(&self.shared),
                    node: Arc::from(self.shared.workflow().node(self.node).id.value.as_str()),
                }))
            })
    }

    /// Queues the hooks an adapter's event fires (called from the call's event sink).
    pub(crate) fn observe(&self, event: &AgentEvent) {
        let answered = |id: &str| {
            self.answered
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .get(id)
                .copied()
        };
        let (hook, fields) = match event {
            AgentEvent::ToolStart { id, name, input } => {
                // Asked through the guard (already, or when the backend asks it).
                if self.guarded || answered(id).is_some() {
                    return;
                }
                (
                    HookEvent::AgentToolBefore,
                    tool_fields(id, name, input, false),
                )
            }
            AgentEvent::ToolComplete {
                id,
                name,
                summary,
                is_error,
            } => {
                // A refused tool did not run.
                if answered(id) == Some(false) {
                    return;
                }
                let fields = json!({
                    "tool": name,
                    "tool_id": id,
                    "ok": !is_error,
                    "result": summary,
                });
                (HookEvent::AgentToolAfter, fields)
            }
            AgentEvent::PermissionRequest { tool, granted } => (
                HookEvent::PermissionRequest,
                json!({"tool": tool, "granted": granted}),
            ),
            AgentEvent::MessageComplete { text } => {
                (HookEvent::MessageComplete, json!({"text": text}))
            }
            AgentEvent::SubagentStart { name } => {
                (HookEvent::SubagentStart, json!({"subagent": name}))
            }
            AgentEvent::SubagentEnd { name } => (HookEvent::SubagentEnd, json!({"subagent": name})),
            _ => return,
        };
        if self.shared.program.hooks.wants(hook) {
            self.push(Item::Notify(hook, self.with_base(fields)));
        }
    }

    /// Runs `call` while the hooks its events fire run, then the rest of them, and
    /// `session.error` if it failed. Just `call` without hooks.
    pub(crate) async fn around<T>(
        hooks: Option<&Self>,
        call: impl Future<Output = Result<T, ProviderError>>,
    ) -> Result<T, ProviderError> {
        let Some(hooks) = hooks else {
            return call.await;
        };
        let receiver = hooks
            .receiver
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        let call = async {
            let result = call.await;
            // A call stopped for a person's answer has not failed.
            if let Err(error) = &result
                && !matches!(error, ProviderError::AwaitingPermission { .. })
                && hooks.shared.program.hooks.wants(HookEvent::SessionError)
            {
                let fields = json!({
                    "ok": false,
                    "error": error.to_string(),
                    "class": error.class().name(),
                });
                hooks.push(Item::Notify(
                    HookEvent::SessionError,
                    hooks.with_base(fields),
                ));
            }
            // The last sender goes: the queue ends once what is in it has run.
            hooks
                .queue
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take();
            result
        };
        let drain = async {
            let Some(mut receiver) = receiver else {
                return;
            };
            while let Some(item) = receiver.recv().await {
                hooks.run(item).await;
            }
        };
        let (result, ()) = futures_util::join!(call, drain);
        result
    }

    fn push(&self, item: Item) {
        if let Some(sender) = self
            .queue
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
        {
            // The receiver lives until the queue is closed.
            let _ = sender.send(item);
        }
    }

    async fn run(&self, item: Item) {
        let node = Some(self.node);
        match item {
            Item::Notify(event, fields) => {
                hooks::fire_as(&self.shared, event, node, fields, false).await;
            }
            Item::Guard(fields, answer) => {
                let failure =
                    hooks::fire_as(&self.shared, HookEvent::AgentToolBefore, node, fields, true)
                        .await;
                // The adapter may have given up on the call meanwhile.
                let _ = answer.send(failure);
            }
        }
    }

    fn with_base(&self, fields: Value) -> Map<String, Value> {
        with_base(&self.base, fields)
    }
}

/// The payload fields of an agent's tool call.
fn tool_fields(id: &str, name: &str, input: &Value, can_block: bool) -> Value {
    json!({"tool": name, "tool_id": id, "input": input, "can_block": can_block})
}

fn with_base(base: &Map<String, Value>, fields: Value) -> Map<String, Value> {
    let mut map = base.clone();
    if let Value::Object(fields) = fields {
        map.extend(fields);
    }
    map
}

/// The [`ToolGuard`] of a call: its `agent.tool.before` hooks, run in the call's queue.
struct Guard {
    base: Map<String, Value>,
    queue: Queue,
    answered: Answered,
    /// Where a refusal is reported (`tool-blocked`), and for which node.
    shared: Arc<Shared>,
    node: Arc<str>,
}

impl ToolGuardBackend for Guard {
    fn check<'a>(
        &'a self,
        call: &'a ToolCheck,
    ) -> Pin<Box<dyn Future<Output = Result<(), String>> + Send + 'a>> {
        Box::pin(async move {
            let (answer, answered) = oneshot::channel();
            let fields = with_base(
                &self.base,
                tool_fields(&call.id, &call.name, &call.input, true),
            );
            let queued = self
                .queue
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .as_ref()
                .is_some_and(|sender| sender.send(Item::Guard(fields, answer)).is_ok());
            // Only a call that has already ended has no queue; nothing runs for it.
            let failure = if queued {
                answered.await.ok().flatten()
            } else {
                None
            };
            self.answered
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .insert(call.id.clone(), failure.is_none());
            match failure {
                None => Ok(()),
                Some(failure) => {
                    let reason = failure.to_string();
                    self.shared.emit(RunEvent::ToolBlocked {
                        node: Arc::clone(&self.node),
                        tool: call.name.clone(),
                        tool_id: call.id.clone(),
                        reason: reason.clone(),
                    });
                    Err(reason)
                }
            }
        })
    }
}
