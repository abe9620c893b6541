//! Names across the finished IR: node ids are unique, and every reference resolves —
//! `goto` / route / recovery targets, `use=` and `session=` agents, providers, and the
//! state fields that outputs and `set`s write.

use std::collections::HashMap;

use crate::diagnostic::{Code, Diagnostic, did_you_mean, expected_one_of};
use crate::ir::{Jump, NodeIdx, NodeKind, OnError, Route, Workflow};
use crate::source::Spanned;

/// Reports node ids used twice, pointing at the first definition.
pub(super) fn check_unique_ids(workflow: &Workflow, out: &mut Vec<Diagnostic>) {
    let mut first: HashMap<&str, &Spanned<String>> = HashMap::new();
    for node in &workflow.nodes {
        if node.id.value.is_empty() {
            continue;
        }
        if let Some(previous) = first.get(node.id.value.as_str()) {
            out.push(
                Diagnostic::new(
                    Code::DuplicateId,
                    node.id.span,
                    format!("node id `{}` is used twice", node.id.value),
                )
                .label("used again here")
                .with_label(previous.span, "first used here")
                .help("node ids are unique in a workflow: rename one of them"),
            );
        } else {
            first.insert(&node.id.value, &node.id);
        }
    }
}

/// Resolves every jump, then checks what each reference points at.
pub(super) fn resolve_names(workflow: &mut Workflow, out: &mut Vec<Diagnostic>) {
    let ids = id_map(workflow);
    let mut candidates: Vec<&str> = ids.keys().map(String::as_str).collect();
    candidates.sort_unstable();
    candidates.push("end");
    let mut jumps = Vec::new();
    for (index, node) in workflow.nodes.iter().enumerate() {
        let mut targets: Vec<&Spanned<String>> = Vec::new();
        targets.extend(node.goto.as_ref().and_then(|route| route.target.as_ref()));
        if let NodeKind::Decision(decision) = &node.kind {
            targets.extend(
                decision
                    .routes
                    .iter()
                    .chain(&decision.otherwise)
                    .filter_map(|route| route.target.as_ref()),
            );
        }
        if let Some(OnError::Goto { target, .. }) = node.on_error.as_deref() {
            targets.push(target);
        }
        for target in targets {
            jumps.push((index, target.span, jump(target, &ids, &candidates, out)));
        }
    }
    for (index, span, jump) in jumps {
        set_jump(&mut workflow.nodes[index], span, jump);
    }
    check_targets(workflow, &ids, out);
    check_fields(workflow, out);
    check_providers(workflow, out);
}

fn id_map(workflow: &Workflow) -> HashMap<String, NodeIdx> {
    let mut ids = HashMap::new();
    for (index, node) in workflow.nodes.iter().enumerate() {
        if !node.id.value.is_empty() {
            ids.entry(node.id.value.clone())
                .or_insert(NodeIdx(index as u32));
        }
    }
    ids
}

fn jump(
    target: &Spanned<String>,
    ids: &HashMap<String, NodeIdx>,
    candidates: &[&str],
    out: &mut Vec<Diagnostic>,
) -> Jump {
    if target.value == "end" {
        return Jump::End;
    }
    if let Some(&idx) = ids.get(&target.value) {
        return Jump::Node(idx);
    }
    out.push(undefined_node(
        target,
        candidates,
        "use an id defined in this workflow, or `end`",
    ));
    Jump::Next
}

fn undefined_node(target: &Spanned<String>, candidates: &[&str], otherwise: &str) -> Diagnostic {
    let near = did_you_mean(&target.value, candidates.iter().copied());
    Diagnostic::new(
        Code::UndefinedNode,
        target.span,
        format!("no node has the id `{}`", target.value),
    )
    .label("undefined node")
    .help(match near {
        Some(near) => format!("did you mean `{near}`?"),
        None => otherwise.to_owned(),
    })
    .maybe_replace_with(near.map(str::to_owned))
}

/// Stores a resolved jump on the route (or `on-error`) whose target is at `span`.
fn set_jump(node: &mut crate::ir::Node, span: crate::source::Span, resolved: Jump) {
    let matches = |route: &Route| {
        route
            .target
            .as_ref()
            .is_some_and(|target| target.span == span)
    };
    if let Some(route) = node.goto.as_mut().filter(|route| matches(route)) {
        route.jump = resolved;
        return;
    }
    if let NodeKind::Decision(decision) = &mut node.kind
        && let Some(route) = decision
            .routes
            .iter_mut()
            .chain(&mut decision.otherwise)
            .find(|route| matches(route))
    {
        route.jump = resolved;
        return;
    }
    if let Some(OnError::Goto { jump, target, .. }) = node.on_error.as_deref_mut()
        && target.span == span
    {
        *jump = resolved;
    }
}

/// Recovery targets, `use=` and `session=` point at the right kind of node.
fn check_targets(workflow: &Workflow, ids: &HashMap<String, NodeIdx>, out: &mut Vec<Diagnostic>) {
    let agents: Vec<&str> = workflow
        .nodes
        .iter()
        .filter(|node| matches!(node.kind, NodeKind::Agent(_)))
        .map(|node| node.id.value.as_str())
        .collect();
    for (index, node) in workflow.nodes.iter().enumerate() {
        if let Some(OnError::Goto { target, jump, .. }) = node.on_error.as_deref() {
            let recovery = match jump {
                Jump::Node(idx) => Some(workflow.node(*idx)),
                _ => None,
            };
            if target.value == "end" || recovery.is_some_and(|target| !target.recovery) {
                let mut diagnostic = Diagnostic::new(
                    Code::NotARecoveryNode,
                    target.span,
                    format!("`{}` is not a recovery node", target.value),
                )
                .label("on-error target");
                if let Some(recovery) = recovery {
                    diagnostic = diagnostic
                        .with_label(recovery.id.span, "defined here without `recovery=#true`")
                        .help(format!(
                            "mark `{}` with `recovery=#true`, or route the error elsewhere",
                            target.value
                        ));
                } else {
                    diagnostic = diagnostic.help("to continue after a failure use `on-error \"skip\"`; to recover, jump to a node marked `recovery=#true`");
                }
                out.push(diagnostic);
            }
        }
        let NodeKind::Agent(agent) = &node.kind else {
            continue;
        };
        if let Some(used) = &agent.use_ {
            check_use(workflow, ids, &agents, index, used, out);
        }
        if let Some(session) = &agent.session {
            match ids.get(&session.value) {
                None => out.push(undefined_node(
                    session,
                    &agents,
                    "name an agent node of this workflow",
                )),
                Some(idx) if idx.index() == index => out.push(
                    Diagnostic::new(
                        Code::InvalidValue,
                        session.span,
                        "an agent cannot continue its own session",
                    )
                    .label("this agent")
                    .help("name an earlier agent whose session this one continues"),
                ),
                Some(idx) => {
                    let other = workflow.node(*idx);
                    if !matches!(other.kind, NodeKind::Agent(_)) {
                        out.push(
                            Diagnostic::new(
                                Code::InvalidValue,
                                session.span,
                                format!(
                                    "`session` must name an agent, `{}` is a `{}`",
                                    session.value,
                                    other.kind.name()
                                ),
                            )
                            .label("not an agent")
                            .with_label(
                                other.id.span,
                                format!("`{}` node defined here", other.kind.name()),
                            )
                            .help("name the agent node whose session this one continues"),
                        );
                    }
                }
            }
        }
    }
}

/// `use="<name>"`: `agent:`/`skill:`/`command:` names are discovered (not checked here);
/// anything else is an agent node of this workflow that does not itself `use` another.
fn check_use(
    workflow: &Workflow,
    ids: &HashMap<String, NodeIdx>,
    agents: &[&str],
    index: usize,
    used: &Spanned<String>,
    out: &mut Vec<Diagnostic>,
) {
    if used.value.contains(':') {
        return;
    }
    let Some(&idx) = ids.get(&used.value) else {
        out.push(undefined_node(
            used,
            agents,
            "name an agent node of this workflow, or a discovered one as `agent:<name>`, `skill:<name>` or `command:<name>`",
        ));
        return;
    };
    let other = workflow.node(idx);
    let problem = match &other.kind {
        _ if idx.index() == index => Some((
            "an agent cannot use itself".to_owned(),
            "name another agent node",
        )),
        NodeKind::Agent(source) if source.use_.is_some() => Some((
            format!("`{}` itself uses another agent", used.value),
            "`use` copies settings one level deep: name the agent it uses instead",
        )),
        NodeKind::Agent(_) => None,
        kind => Some((
            format!(
                "`use` must name an agent, `{}` is a `{}`",
                used.value,
                kind.name()
            ),
            "name an agent node",
        )),
    };
    if let Some((message, help)) = problem {
        out.push(
            Diagnostic::new(Code::InvalidUse, used.span, message)
                .label("`use` target")
                .with_label(other.id.span, format!("`{}` defined here", other.id.value))
                .help(help),
        );
    }
}

/// Every written state field is declared.
fn check_fields(workflow: &Workflow, out: &mut Vec<Diagnostic>) {
    let fields: Vec<&str> = workflow
        .state
        .iter()
        .map(|field| field.name.value.as_str())
        .collect();
    let mut written: Vec<&Spanned<String>> = Vec::new();
    for node in &workflow.nodes {
        written.extend(node.kind.outputs().iter().map(|output| &output.field));
        match &node.kind {
            NodeKind::Set(set) => written.push(&set.field),
            NodeKind::Subgraph(subgraph) => {
                written.extend(subgraph.outputs.iter().map(|(field, _)| field))
            }
            _ => {}
        }
        if let Some(OnError::Skip { fallback, .. }) = node.on_error.as_deref() {
            written.extend(fallback.iter().map(|set| &set.field));
        }
    }
    for field in written {
        if field.value.is_empty() || fields.contains(&field.value.as_str()) {
            continue;
        }
        let declare = format!("declare it: `state {{ field \"{}\" … }}`", field.value);
        let near = did_you_mean(&field.value, fields.iter().copied());
        out.push(
            Diagnostic::new(
                Code::UndefinedStateField,
                field.span,
                format!("no state field is named `{}`", field.value),
            )
            .label("undeclared field")
            .help(match near {
                Some(near) => format!("did you mean `{near}`? or {declare}"),
                None => declare,
            })
            .maybe_replace_with(near.map(str::to_owned)),
        );
    }
}

/// Providers named by agents and the workflow default are declared.
fn check_providers(workflow: &Workflow, out: &mut Vec<Diagnostic>) {
    let names: Vec<&str> = workflow
        .providers
        .iter()
        .map(|provider| provider.name.value.as_str())
        .collect();
    let agents = workflow.nodes.iter().filter_map(|node| match &node.kind {
        NodeKind::Agent(agent) => agent.provider.as_ref(),
        _ => None,
    });
    for provider in workflow.default_provider.iter().chain(agents) {
        if names.contains(&provider.value.as_str()) {
            continue;
        }
        let declare = format!(
            "declare it: `provider \"{}\" adapter=\"…\"`",
            provider.value
        );
        let near = did_you_mean(&provider.value, names.iter().copied());
        out.push(
            Diagnostic::new(
                Code::UndefinedProvider,
                provider.span,
                format!("no provider is named `{}`", provider.value),
            )
            .label("undeclared provider")
            .help(match near {
                Some(near) => format!("did you mean `{near}`?"),
                None if names.is_empty() => declare,
                None => format!("{declare}; declared: {}", expected_one_of(&names)),
            })
            .maybe_replace_with(near.map(str::to_owned)),
        );
    }
}

#[cfg(test)]
mod tests {
    use crate::check::testing::{codes, only};
    use crate::diagnostic::Code;

    fn flow(body: &str) -> String {
        format!(
            "workflow \"w\" provider=\"p\" {{\nprovider \"p\" adapter=\"claude-code\"\nagent \"base\" {{ prompt \"x\"; }}\n{body}\n}}"
        )
    }

    #[test]
    fn use_targets() {
        assert_eq!(codes(&flow("agent \"a\" use=\"base\"")), []);
        assert_eq!(
            codes(&flow("agent \"a\" use=\"skill:review\" prompt=\"x\"")),
            []
        );
        assert_eq!(
            codes(&flow("agent \"a\" use=\"bse\"")),
            [Code::UndefinedNode]
        );
        assert_eq!(codes(&flow("agent \"a\" use=\"a\"")), [Code::InvalidUse]);
        let (diagnostic, _) = only(
            &flow("agent \"a\" use=\"base\"\nagent \"b\" use=\"a\""),
            Code::InvalidUse,
        );
        assert_eq!(diagnostic.message, "`a` itself uses another agent");
        assert_eq!(diagnostic.labels.len(), 1);
    }

    #[test]
    fn session_targets() {
        assert_eq!(
            codes(&flow("agent \"a\" session=\"base\" { prompt \"y\"; }")),
            []
        );
        assert_eq!(
            codes(&flow("agent \"a\" session=\"a\" { prompt \"y\"; }")),
            [Code::InvalidValue]
        );
        assert_eq!(
            codes(&flow(
                "tool \"t\" { run \"x\"; }\nagent \"a\" session=\"t\" { prompt \"y\"; }"
            )),
            [Code::InvalidValue]
        );
        assert_eq!(
            codes(&flow("agent \"a\" session=\"nope\" { prompt \"y\"; }")),
            [Code::UndefinedNode]
        );
    }

    #[test]
    fn providers_and_defaults() {
        let (_, at) = only(
            "workflow \"w\" provider=\"q\" {\nprovider \"p\" adapter=\"replay\" cassette=\"c\"\nagent \"a\" provider=\"p\" { prompt \"x\"; }\n}",
            Code::UndefinedProvider,
        );
        assert_eq!(at, "\"q\"");
    }

    #[test]
    fn every_jump_target_is_checked() {
        let text = flow(
            "decision \"d\" { when \"true\" goto=\"bas\"; otherwise goto=\"nowhere\"; }\nagent \"z\" goto=\"d2\" { prompt \"x\"; }",
        );
        assert_eq!(
            codes(&text),
            [
                Code::UndefinedNode,
                Code::UndefinedNode,
                Code::UndefinedNode
            ]
        );
    }
}
