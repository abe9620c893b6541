//! `agent`: render the prompt, call the provider (its events forwarded as [`RunEvent`]s),
//! map the reply into state. The node's context-window policy is applied around the call
//! (`runtime::context_window`).

use std::sync::Arc;

use serde_json::json;

use super::Halt;
use super::arguments::expand_arguments;
use super::mapping::{Raw, map_outputs};
use super::permission;
use crate::ir::{
    Agent, DefinitionKind, ErrorClass, NodeIdx, NodeKind, OutputMap, OutputSource, PermissionMode,
    ProviderDecl, Template, UsedDefinition, Workflow, adapter_info,
};
use crate::providers::agent_mcp_servers;
use crate::providers::{
    AgentEvent, AgentReply, AgentRequest, Approvals, CallHooks, CallId, CallSandbox, Continuation,
    Grants, Limits, Prompt, ProviderError, ToolGrant,
};
use crate::runtime::agent_hooks::AgentHooks;
use crate::runtime::context_window::{ContextWatch, Thresholds};
use crate::runtime::frame::{Frame, Write};
use crate::runtime::journal::StoreJournal;
use crate::runtime::shared::Shared;
use crate::runtime::walk::ScopePath;
use crate::runtime::{NodeError, RunEvent};

/// An agent's settings after following `use=` to other agent nodes (nearest wins).
struct Settings<'a> {
    chain: Vec<&'a Agent>,
}

impl<'a> Settings<'a> {
    fn resolve(shared: &'a Shared, agent: &'a Agent) -> Self {
        Self {
            chain: shared.workflow().agent_chain(agent),
        }
    }

    fn first<T: ?Sized>(&self, get: impl Fn(&'a Agent) -> Option<&'a T>) -> Option<&'a T> {
        self.chain.iter().find_map(|agent| get(agent))
    }

    fn prompt(&self) -> Option<&'a Template> {
        self.first(|agent| agent.prompt.as_ref())
    }

    fn system(&self) -> Option<&'a Template> {
        self.first(|agent| agent.system.as_ref())
    }

    /// The discovered agent, skill or command `use=` names, read at compile time.
    fn definition(&self) -> Option<&'a UsedDefinition> {
        self.first(|agent| agent.definition.as_ref())
    }

    fn outputs(&self) -> &'a [OutputMap] {
        self.chain
            .iter()
            .map(|agent| agent.outputs.as_slice())
            .find(|outputs| !outputs.is_empty())
            .unwrap_or(&[])
    }
}

/// The node's own system prompt, then a discovered agent's body (its role) or a skill's
/// (instructions), a blank line apart.
fn with_definition(system: Option<String>, definition: Option<&UsedDefinition>) -> Option<String> {
    let added = definition.and_then(|definition| match definition.kind {
        DefinitionKind::Agent => Some(definition.body.clone()),
        DefinitionKind::Skill => Some(format!(
            "Follow the instructions of the `{}` skill:\n\n{}",
            definition.name, definition.body
        )),
        DefinitionKind::Command => None,
    });
    match (system, added) {
        (Some(system), Some(added)) => Some(format!("{system}\n\n{added}")),
        (system, added) => system.or(added),
    }
}

pub(super) async fn execute(
    shared: &Arc<Shared>,
    frame: &Frame,
    node: NodeIdx,
    seq: u64,
    block: &ScopePath,
) -> Result<Vec<Write>, Halt> {
    let workflow = shared.workflow();
    let NodeKind::Agent(agent) = &workflow.node(node).kind else {
        return Err(NodeError::fatal("not an agent node").into());
    };
    let id = shared.id(node).clone();
    let settings = Settings::resolve(shared, agent);
    let provider_name = workflow
        .agent_provider_name(agent)
        .map(|name| name.value.as_str())
        .ok_or_else(|| {
            NodeError::new(
                ErrorClass::Provider,
                format!("`{id}` names no provider and the workflow has no default"),
            )
        })?;
    let declared = workflow.provider(provider_name);

    let scope = shared.scope(frame, Some(node), seq);
    let definition = settings.definition();
    let written = settings
        .prompt()
        .map(|template| shared.program.templates.render(template, &scope))
        .transpose()?;
    let mut prompt = match (definition, written) {
        // A command is the prompt; the node's own prompt is its arguments.
        (Some(command), arguments) if command.kind == DefinitionKind::Command => {
            expand_arguments(&command.body, arguments.as_deref().unwrap_or(""))
        }
        (_, Some(prompt)) => prompt,
        (_, None) => return Err(NodeError::fatal(format!("`{id}` has no prompt")).into()),
    };
    let written_system = settings
        .system()
        .map(|t| shared.program.templates.render(t, &scope))
        .transpose()?;
    drop(scope);
    let system = with_definition(written_system, definition);
    let model = settings
        .first(|agent| agent.model.as_ref().map(|m| m.value.as_str()))
        .or_else(|| definition.and_then(|d| d.model.as_deref()))
        .or_else(|| workflow.default_model.as_ref().map(|m| m.value.as_str()))
        .or_else(|| {
            declared
                .and_then(|p| p.model.as_ref())
                .map(|m| m.value.as_str())
        })
        .map(str::to_owned);
    let names: Vec<String> = settings
        .chain
        .iter()
        .map(|agent| &agent.tools)
        .find(|tools| !tools.is_empty())
        .map(|tools| tools.iter().map(|name| name.value.clone()).collect())
        // A definition's tools are defaults for backends that take tools at all: Claude
        // Code's tool names mean nothing to a plain chat model.
        .or_else(|| {
            definition
                .filter(|_| {
                    declared
                        .and_then(|p| adapter_info(&p.adapter.value))
                        .is_some_and(|info| info.tools)
                })
                .map(|d| d.tools.clone())
        })
        .unwrap_or_default();
    let tools = names
        .iter()
        .map(|name| grant(workflow, declared, name))
        .collect();
    let mut options = serde_json::Map::new();
    for agent in settings.chain.iter().rev() {
        options.extend(agent.options.iter().map(|(k, v)| (k.clone(), v.clone())));
    }
    let permission = settings
        .first(|agent| agent.permission.as_ref())
        .map(|p| p.value);
    // A person's answer to the request this agent paused at continues its session.
    let asking = (permission == Some(PermissionMode::Ask) && !shared.ctx.dry_run)
        .then(|| permission::asking(shared, block, &id));
    let session_of = agent.session.as_ref().map(|from| from.value.as_str());
    let (call_index, continued) = {
        let mut tally = shared.tally();
        let calls = tally.calls.entry(id.to_string()).or_insert(0);
        let index = *calls;
        *calls += 1;
        let can_compact =
            !shared.ctx.dry_run && shared.ctx.executor.can_compact(&shared.ctx, provider_name);
        (index, tally.continuation(session_of, can_compact))
    };
    if let (Some((action, fraction)), Some(from)) = (continued.action, session_of) {
        shared.emit(RunEvent::ContextAction {
            node: id.clone(),
            session_of: from.to_owned(),
            action,
            fraction,
        });
    }
    // A dry run calls no provider and keeps nothing.
    let journal = (!shared.ctx.dry_run).then(|| {
        Arc::new(
            StoreJournal::new(
                Arc::clone(&shared.ctx.store),
                shared.program.run_id.clone(),
                &id,
                call_index,
            )
            .with_files(shared.recorder(frame)),
        )
    });
    // The hooks on what the agent does inside the call (`agent.tool.before`, …).
    let hooks = AgentHooks::new(shared, node, seq, provider_name);
    let mut resume_session = continued.resume_session();
    let mut approvals = Approvals::default();
    if let Some(asking) = asking {
        approvals = asking.approvals;
        if let Some(continuation) = asking.continuation {
            prompt = continuation.prompt;
            resume_session = continuation.session_id.or(resume_session);
        }
    }
    // A fork's agent going on from a session the original run left must not extend that
    // session (the original may go on too): it continues a copy where the backend can
    // fork one, and starts afresh where it cannot.
    let mut fork_session = false;
    if resume_session
        .as_ref()
        .is_some_and(|session| shared.journal.inherited_sessions.contains(session))
    {
        let forks = declared
            .and_then(|provider| adapter_info(&provider.adapter.value))
            .is_some_and(|info| info.forks_sessions);
        if forks {
            fork_session = true;
        } else {
            resume_session = None;
        }
    }
    // The workflow's MCP servers reach agents whose adapter takes them; an agent's own
    // (nearest in its `use=` chain) add to or replace them by name.
    let mcp = match declared {
        Some(provider) if crate::ir::takes_mcp(&provider.adapter.value) => agent_mcp_servers(
            &workflow.mcp,
            settings
                .chain
                .iter()
                .rev()
                .flat_map(|agent| agent.mcp.iter()),
        ),
        _ => Vec::new(),
    };
    let request = AgentRequest {
        call: CallId {
            node_id: id.to_string(),
            index: call_index,
        },
        prompt: Prompt {
            text: prompt,
            system,
        },
        model: model.clone(),
        options,
        session: Continuation {
            resume: resume_session,
            compact: continued.compact(),
            fork: fork_session,
        },
        workspace: agent_workspace(shared, frame, &id, agent.cwd.as_ref(), seq, node)?,
        grants: Grants {
            approvals,
            mcp,
            tools,
            permission,
        },
        limits: Limits {
            max_turns: settings
                .first(|agent| agent.max_turns.as_ref())
                .map(|m| m.value),
            timeout: workflow
                .node(node)
                .timeout
                .as_ref()
                .map(|timeout| timeout.value.to_std()),
            // The step's retry applies to each model request too (HTTP adapters); a request
            // retried until it gave up is not re-run as a step (`NodeError::retried`).
            retry: crate::providers::RetryPolicy::of(workflow.node(node)),
            budget_usd: settings
                .first(|agent| agent.budget_usd.as_ref())
                .map(|budget| budget.value),
            // The provider's budget guard stops the call when it would pass either.
            run_budget_left_usd: workflow
                .limits
                .max_budget_usd
                .as_ref()
                .map(|budget| budget.value - shared.tally().cost_usd),
        },
        hooks: CallHooks {
            tool_guard: hooks.as_ref().and_then(AgentHooks::guard),
            journal: journal.as_ref().map(StoreJournal::handle),
        },
        sandbox: None,
    };
    // The call's sandbox: the agent's own (nearest in its `use=` chain), the workflow's or
    // the project's; its model endpoint reachable, its CLI's own home writable. Held until
    // the call ends: the proxy and the temp directory go with it.
    let mut request = request;
    let _sandbox_held = match super::sandboxed::declared(
        shared,
        settings.first(|agent| agent.sandbox.as_ref()),
    ) {
        Some(sandbox) if !shared.ctx.dry_run => {
            let adapter = declared.map_or("", |provider| provider.adapter.value.as_str());
            if adapter_info(adapter).is_some_and(|info| !info.sandboxes) {
                return Err(NodeError::fatal(format!(
                        "`{id}`: the `{adapter}` adapter cannot run in a sandbox yet, and a sandboxed step never runs unconfined: use another adapter, or `sandbox \"none\"` on the agent"
                    ))
                    .into());
            }
            let mut reach = super::sandboxed::reach(
                shared,
                frame,
                &id,
                sandbox,
                crate::sandbox::cli_home(adapter),
            )?;
            // With its key held by atomic, the agent reaches its model through atomic's
            // gateway (the adapter opens that port) and needs no route of its own: an
            // injected command cannot use the model's host to send anything out.
            reach = match declared {
                Some(provider) if provider.key_held() => reach,
                Some(provider) => {
                    let reach = match &provider.base_url {
                        Some(url) => reach.with_endpoint(&url.value),
                        None => reach.with_hosts(crate::sandbox::cli_endpoints(adapter)),
                    };
                    crate::sandbox::configured_endpoints(provider)
                        .iter()
                        .fold(reach, |reach, url| reach.with_endpoint(url))
                }
                None => reach,
            };
            let running = super::sandboxed::start(shared, &id, &reach).await?;
            request.sandbox = Some(CallSandbox {
                confinement: Arc::clone(&running.confinement),
                env: running.env.clone(),
                temp_dir: running.temp_dir().to_path_buf(),
                loopback: running.loopback.clone(),
            });
            Some(running)
        }
        _ => None,
    };

    let thresholds = Thresholds::of(settings.first(|agent| agent.context.as_ref()));
    let watch = ContextWatch::new(thresholds.warn);
    let watching = &watch;
    let forward = shared.wants_events();
    let sink_shared = shared.clone();
    let sink_id = id.clone();
    let hooking = hooks.as_ref();
    let sink = move |event: AgentEvent| {
        if let Some(hooks) = hooking {
            hooks.observe(&event);
        }
        // Watched whether or not events are forwarded: the policy needs the fraction.
        if let AgentEvent::ContextWindow { fraction } = event
            && watching.observe(fraction)
        {
            sink_shared.emit(RunEvent::ContextWarning {
                node: sink_id.clone(),
                fraction,
                warn: thresholds.warn,
            });
        }
        if forward {
            sink_shared.emit(RunEvent::Agent {
                node: sink_id.clone(),
                event,
            });
        }
    };
    let reply = if shared.ctx.dry_run {
        AgentReply {
            text: super::canned::text(workflow, settings.outputs()),
            ..AgentReply::default()
        }
    } else {
        let call = shared
            .ctx
            .executor
            .call_agent(&shared.ctx, provider_name, &request, &sink);
        match AgentHooks::around(hooks.as_ref(), call).await {
            Ok(reply) => reply,
            Err(ProviderError::AwaitingPermission {
                ask, session_id, ..
            }) => {
                return Err(Halt::Paused(vec![permission::pending(
                    shared, block, &id, *ask, session_id,
                )]));
            }
            Err(error) => return Err(NodeError::from(error).into()),
        }
    };
    // Kept after a failure: a resumed run continues the conversation instead of
    // repeating its tools.
    if let Some(journal) = &journal {
        journal.clear().await;
    }

    {
        let mut tally = shared.tally();
        tally.usage.add(reply.usage);
        tally.cost_usd += reply.cost_usd.unwrap_or(0.0);
        tally.settle(
            &id,
            &continued,
            reply.session_id.as_ref(),
            thresholds,
            watch.latest(),
        );
    }
    if let (Some(budget), Some(cost)) = (
        settings.first(|agent| agent.budget_usd.as_ref()),
        reply.cost_usd,
    ) && cost > budget.value
    {
        return Err(NodeError::new(
            ErrorClass::Budget,
            format!(
                "`{id}` cost ${cost:.4}, over its `budget-usd` of ${:.4}",
                budget.value
            ),
        )
        .into());
    }

    let mut writes = map_outputs(shared, settings.outputs(), |from| match from {
        OutputSource::Result => Ok(Raw::Text(&reply.text)),
        other => Err(NodeError::fatal(format!(
            "an agent's output has no `{}` (use `from=\"result\"`)",
            match other {
                OutputSource::Stderr => "stderr",
                _ => "exit-code",
            }
        ))),
    })?;
    writes.push(Write::Output(
        id,
        json!({
            "text": reply.text,
            "session_id": reply.session_id,
            "model": model,
            "turns": reply.turns,
            "usage": reply.usage,
            "cost_usd": reply.cost_usd,
        }),
    ));
    Ok(writes)
}

/// What an agent is granted for the tool `name`: on adapters whose tools are custom tools
/// (`anthropic`, `openai`), the custom tool's command, description and argument schema;
/// elsewhere just the name, one of the backend's own tools.
fn grant(workflow: &Workflow, provider: Option<&ProviderDecl>, name: &str) -> ToolGrant {
    let custom = provider
        .and_then(|provider| adapter_info(&provider.adapter.value))
        .is_some_and(|info| info.custom_tools)
        .then(|| workflow.custom_tool(name))
        .flatten();
    match custom {
        Some(tool) => ToolGrant {
            name: name.to_owned(),
            description: tool.description.clone(),
            input_schema: Some(tool.schema.clone()),
            command: tool.command.clone(),
            timeout: tool.timeout.as_ref().map(|timeout| timeout.value.to_std()),
        },
        None => ToolGrant {
            name: name.to_owned(),
            description: None,
            input_schema: None,
            command: Vec::new(),
            timeout: None,
        },
    }
}

/// Where the agent works: its `cwd` below the workspace (checked to be a directory), or the
/// workspace's root.
fn agent_workspace(
    shared: &Shared,
    frame: &Frame,
    id: &str,
    cwd: Option<&crate::ir::Template>,
    seq: u64,
    node: NodeIdx,
) -> Result<crate::workspace::Workspace, NodeError> {
    let workspace = shared.workspace(frame);
    let Some(cwd) = cwd else {
        return Ok(workspace.clone());
    };
    let scope = shared.scope(frame, Some(node), seq);
    let dir = workspace.resolve(shared.program.templates.render(cwd, &scope)?);
    if !dir.is_dir() {
        return Err(NodeError::fatal(format!(
            "`{id}`: its `cwd` {} is not a directory: create it first, or fix the path (relative to the workspace {})",
            dir.display(),
            workspace.root().display()
        )));
    }
    Ok(crate::workspace::Workspace::new(dir))
}
