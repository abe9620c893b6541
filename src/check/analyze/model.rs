//! The facts every rule needs, computed once per workflow: every template with what it
//! reads (a [`Site`]), which names are in scope at each node, which `parallel` branch each
//! node sits in, and which state fields each node writes.
//!
//! Nothing here reports a problem; rules read the model and decide.

use std::collections::HashMap;

use crate::ir::{Agent, Jump, NodeIdx, NodeKind, OnError, Reducer, Template, Workflow};
use crate::source::Spanned;

use super::read_cache::ReadCache;
use super::reads::{Read, TemplateError};

/// Where in a node a template sits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Role {
    /// An agent's `system`.
    System,
    /// An agent's `prompt`.
    Prompt,
    /// A tool's `run` argument (0 is the program, or the whole script with `shell=#true`).
    Run(usize),
    /// A tool's `cwd`.
    Cwd,
    /// A tool's `env` value.
    Env,
    /// A tool's `stdin`.
    Stdin,
    /// A custom tool's `arg` value.
    Arg,
    /// A `set` value.
    Value,
    /// A fallback `set` of `on-error "skip"`.
    Fallback,
    /// A decision's `when` condition.
    When,
    /// A loop's `until` (tested after each iteration).
    Until,
    /// A loop's `while` (tested before each iteration).
    While,
    /// A parallel's `for-each` list (evaluated before the branches start).
    ForEach,
    /// A task-loop's `file` (rendered before each task is picked).
    TasksFile,
    /// A task-loop's `max-iterations` (evaluated when the loop starts).
    MaxIterations,
    /// A wait's `prompt`.
    Question,
    /// A subgraph `input` mapping.
    SubgraphInput,
}

impl Role {
    /// How messages name it: "the prompt of `review`".
    pub(crate) fn describe(self) -> String {
        match self {
            Self::System => "system prompt".to_owned(),
            Self::Prompt | Self::Question => "prompt".to_owned(),
            Self::Run(0) => "command".to_owned(),
            Self::Run(index) => format!("argument {index}"),
            Self::Cwd => "working directory".to_owned(),
            Self::Env => "environment value".to_owned(),
            Self::Stdin => "stdin".to_owned(),
            Self::Arg => "tool argument".to_owned(),
            Self::Value => "value".to_owned(),
            Self::Fallback => "fallback value".to_owned(),
            Self::When => "condition".to_owned(),
            Self::Until => "`until` condition".to_owned(),
            Self::While => "`while` condition".to_owned(),
            Self::ForEach => "`for-each` list".to_owned(),
            Self::TasksFile => "`file` of the task-loop".to_owned(),
            Self::MaxIterations => "`max-iterations`".to_owned(),
            Self::SubgraphInput => "input mapping".to_owned(),
        }
    }
}

/// One template or expression of the workflow and what it reads.
#[derive(Debug)]
pub(crate) struct Site<'w> {
    /// The node it belongs to.
    pub node: NodeIdx,
    /// Its place in the node.
    pub role: Role,
    /// The text.
    pub template: &'w Template,
    /// Whether it is an expression rather than a template.
    pub is_expr: bool,
    /// What it reads, or why it does not parse.
    pub reads: Result<Vec<Read>, TemplateError>,
    /// Whether the text belongs to another agent, whose `prompt`/`system` this node inherits
    /// through `use=`: it runs here, but rules about the text itself report it at its owner.
    pub inherited: bool,
}

impl Site<'_> {
    /// The reads, or nothing for a template that does not parse.
    pub(crate) fn reads(&self) -> &[Read] {
        self.reads.as_deref().unwrap_or(&[])
    }
}

/// Names in scope at a node beyond `input`, `state`, `outputs`, `run` and `env`.
#[derive(Clone, Debug, Default)]
pub(crate) struct Scope {
    /// Enclosing `for-each` parallels (outermost first) and their item variable names.
    pub items: Vec<(NodeIdx, String)>,
    /// Whether the node is, or is inside, a node marked `recovery=#true` or targeted by an
    /// `on-error "goto"` (`error` is defined).
    pub recovery: bool,
}

/// A state field written by a node, and how.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Write<'w> {
    /// The field name as written at the writing site.
    pub field: &'w Spanned<String>,
    /// Whether it is an `on-error "skip"` fallback (written only when the node fails).
    pub fallback: bool,
}

/// The model of one workflow.
#[derive(Debug)]
pub(crate) struct Model<'w> {
    /// The workflow.
    pub workflow: &'w Workflow,
    /// Every template, by node in arena order.
    pub sites: Vec<Site<'w>>,
    /// Per node: the names in scope.
    pub scopes: Vec<Scope>,
    /// Per node: the `parallel` branches it is inside, outermost first, as
    /// (parallel, branch index).
    pub branches: Vec<Vec<(NodeIdx, usize)>>,
    /// Per node: where its sites start in `sites` (they are contiguous); one extra entry
    /// at the end.
    site_starts: Vec<usize>,
    /// Node ids, for lookups in constant time.
    ids: HashMap<&'w str, NodeIdx>,
    /// Per node: the agent whose `output`s it applies (itself, or the nearest agent up its
    /// `use=` chain with outputs, as the runtime does).
    outputs_from: Vec<NodeIdx>,
}

impl<'w> Model<'w> {
    /// Builds the model: parses every template once.
    pub(crate) fn new(workflow: &'w Workflow) -> Self {
        let count = workflow.nodes.len();
        let mut direct_branch: Vec<Option<usize>> = vec![None; count];
        for node in &workflow.nodes {
            if let NodeKind::Parallel(parallel) = &node.kind {
                for (index, branch) in parallel.branches.iter().enumerate() {
                    for child in &branch.body.nodes {
                        if let Some(slot) = direct_branch.get_mut(child.index()) {
                            *slot = Some(index);
                        }
                    }
                }
            }
        }
        // Targets of `on-error "goto"` see `error` (the resolver reports targets not marked
        // `recovery=#true`; reading `error` there is not a second problem).
        let mut recovery: Vec<bool> = workflow.nodes.iter().map(|node| node.recovery).collect();
        for node in &workflow.nodes {
            if let Some(OnError::Goto {
                jump: Jump::Node(target),
                ..
            }) = node.on_error.as_deref()
                && let Some(slot) = recovery.get_mut(target.index())
            {
                *slot = true;
            }
        }
        let mut scopes = Vec::with_capacity(count);
        let mut branches = Vec::with_capacity(count);
        for index in 0..count {
            let (scope, chain) =
                ancestry(workflow, NodeIdx(index as u32), &direct_branch, &recovery);
            scopes.push(scope);
            branches.push(chain);
        }
        let mut ids = HashMap::with_capacity(count);
        for (index, node) in workflow.nodes.iter().enumerate() {
            ids.entry(node.id.value.as_str())
                .or_insert(NodeIdx(index as u32));
        }
        let mut sites = Vec::new();
        let mut cache = ReadCache::default();
        let mut site_starts = Vec::with_capacity(count + 1);
        let mut outputs_from = Vec::with_capacity(count);
        for index in 0..count {
            let idx = NodeIdx(index as u32);
            let chain = use_chain(workflow, &ids, idx);
            site_starts.push(sites.len());
            collect_sites(workflow, idx, &chain, &mut cache, &mut sites);
            let from = chain
                .iter()
                .find(|(_, agent)| !agent.outputs.is_empty())
                .map_or(idx, |&(owner, _)| owner);
            outputs_from.push(from);
        }
        site_starts.push(sites.len());
        Self {
            workflow,
            sites,
            scopes,
            branches,
            site_starts,
            ids,
            outputs_from,
        }
    }

    /// The fields `node` itself writes (not its children): its outputs (inherited through
    /// `use=` for agents without their own), `set`, subgraph `output` mappings, and
    /// `on-error "skip"` fallbacks.
    pub(crate) fn writes(&self, node: NodeIdx) -> Vec<Write<'w>> {
        let workflow = self.workflow;
        let Some(this) = workflow.nodes.get(node.index()) else {
            return Vec::new();
        };
        let owner = self
            .outputs_from
            .get(node.index())
            .and_then(|owner| workflow.nodes.get(owner.index()))
            .unwrap_or(this);
        let mut writes: Vec<Write<'w>> = owner
            .kind
            .outputs()
            .iter()
            .map(|output| Write {
                field: &output.field,
                fallback: false,
            })
            .collect();
        match &this.kind {
            NodeKind::Set(set) => writes.push(Write {
                field: &set.field,
                fallback: false,
            }),
            NodeKind::Subgraph(subgraph) => {
                writes.extend(subgraph.outputs.iter().map(|(field, _)| Write {
                    field,
                    fallback: false,
                }));
            }
            _ => {}
        }
        if let Some(OnError::Skip { fallback, .. }) = this.on_error.as_deref() {
            writes.extend(fallback.iter().map(|set| Write {
                field: &set.field,
                fallback: true,
            }));
        }
        writes
    }

    /// The node with this id (the first, if the resolver let a duplicate through).
    pub(crate) fn node(&self, id: &str) -> Option<NodeIdx> {
        self.ids.get(id).copied()
    }

    /// The sites of one node.
    pub(crate) fn sites_of(&self, node: NodeIdx) -> &[Site<'w>] {
        match (
            self.site_starts.get(node.index()),
            self.site_starts.get(node.index() + 1),
        ) {
            (Some(&start), Some(&end)) => &self.sites[start..end],
            _ => &[],
        }
    }

    /// The scope at `node`.
    pub(crate) fn scope(&self, node: NodeIdx) -> &Scope {
        &self.scopes[node.index()]
    }

    /// The innermost `parallel` in which `a` and `b` sit in different branches, with the
    /// branch of each.
    pub(crate) fn sibling_branches(
        &self,
        a: NodeIdx,
        b: NodeIdx,
    ) -> Option<(NodeIdx, usize, usize)> {
        let chain_a = &self.branches[a.index()];
        let chain_b = &self.branches[b.index()];
        let mut found = None;
        for (&(pa, ba), &(pb, bb)) in chain_a.iter().zip(chain_b) {
            if pa != pb {
                break;
            }
            if ba != bb {
                found = Some((pa, ba, bb));
                break;
            }
        }
        found
    }
}

/// Whether writes to a field with this reducer replace the value, so two concurrent writes
/// race.
pub(crate) fn replaces(reducer: &Reducer) -> bool {
    matches!(reducer, Reducer::Replace | Reducer::IfDefined)
}

/// Whether `outputs.<id>` of this kind of node holds a value: an agent's reply, a tool's
/// result, a wait's answer, a subgraph's final state, a parallel's summary (`branches`,
/// `winner`).
pub(crate) fn has_output(kind: &NodeKind) -> bool {
    matches!(
        kind,
        NodeKind::Agent(_)
            | NodeKind::Tool(_)
            | NodeKind::Wait(_)
            | NodeKind::Subgraph(_)
            | NodeKind::Parallel(_)
    )
}

fn ancestry(
    workflow: &Workflow,
    node: NodeIdx,
    direct_branch: &[Option<usize>],
    recovery: &[bool],
) -> (Scope, Vec<(NodeIdx, usize)>) {
    let mut scope = Scope::default();
    let mut chain = Vec::new();
    let mut child = node;
    let mut steps = 0;
    scope.recovery = recovery.get(node.index()).copied().unwrap_or(false);
    while let Some(parent) = workflow.nodes.get(child.index()).and_then(|n| n.parent) {
        steps += 1;
        let Some(parent_node) = workflow.nodes.get(parent.index()) else {
            break;
        };
        if steps > workflow.nodes.len() {
            break;
        }
        scope.recovery |= recovery.get(parent.index()).copied().unwrap_or(false);
        if let NodeKind::Parallel(parallel) = &parent_node.kind {
            if let Some(branch) = direct_branch.get(child.index()).copied().flatten() {
                chain.push((parent, branch));
            }
            if let Some(for_each) = &parallel.for_each {
                scope.items.push((parent, for_each.as_.value.clone()));
            }
        }
        child = parent;
    }
    scope.items.reverse();
    chain.reverse();
    (scope, chain)
}

/// An agent node and the agents its `use=` chain reaches, nearest first (the runtime's
/// order); empty for other kinds. Bounded and cycle-safe.
fn use_chain<'w>(
    workflow: &'w Workflow,
    ids: &HashMap<&str, NodeIdx>,
    node: NodeIdx,
) -> Vec<(NodeIdx, &'w Agent)> {
    let mut chain = Vec::new();
    let mut current = Some(node);
    while let Some(idx) = current {
        let Some(NodeKind::Agent(agent)) = workflow.nodes.get(idx.index()).map(|n| &n.kind) else {
            break;
        };
        if chain.len() > 16 || chain.iter().any(|&(seen, _)| seen == idx) {
            break;
        }
        chain.push((idx, &**agent));
        current = agent
            .use_
            .as_ref()
            .and_then(|name| ids.get(name.value.as_str()).copied());
    }
    chain
}

fn collect_sites<'w>(
    workflow: &'w Workflow,
    idx: NodeIdx,
    chain: &[(NodeIdx, &'w Agent)],
    cache: &mut ReadCache<'w>,
    sites: &mut Vec<Site<'w>>,
) {
    let node = workflow.node(idx);
    let mut add = |role: Role, template: &'w Template, is_expr: bool, inherited: bool| {
        let reads = cache.reads(template, is_expr);
        sites.push(Site {
            node: idx,
            role,
            template,
            is_expr,
            reads,
            inherited,
        });
    };
    let first = |get: fn(&'w Agent) -> Option<&'w Template>| {
        chain
            .iter()
            .find_map(|&(owner, agent)| get(agent).map(|template| (template, owner != idx)))
    };
    match &node.kind {
        NodeKind::Agent(_) => {
            if let Some((system, inherited)) = first(|agent| agent.system.as_ref()) {
                add(Role::System, system, false, inherited);
            }
            if let Some((prompt, inherited)) = first(|agent| agent.prompt.as_ref()) {
                add(Role::Prompt, prompt, false, inherited);
            }
        }
        NodeKind::Tool(tool) => {
            for (index, arg) in tool.run.iter().enumerate() {
                add(Role::Run(index), arg, false, false);
            }
            for (_, value) in &tool.args {
                add(Role::Arg, value, false, false);
            }
            if let Some(cwd) = &tool.cwd {
                add(Role::Cwd, cwd, false, false);
            }
            for (_, value) in &tool.env {
                add(Role::Env, value, false, false);
            }
            if let Some(stdin) = &tool.stdin {
                add(Role::Stdin, stdin, false, false);
            }
        }
        NodeKind::Decision(decision) => {
            for route in &decision.routes {
                if let Some(when) = &route.when {
                    add(Role::When, when, true, false);
                }
            }
        }
        NodeKind::Wait(wait) => add(Role::Question, &wait.prompt, false, false),
        NodeKind::Subgraph(subgraph) => {
            for (_, value) in &subgraph.inputs {
                add(Role::SubgraphInput, value, false, false);
            }
        }
        NodeKind::Parallel(parallel) => {
            if let Some(for_each) = &parallel.for_each {
                if let Some(tasks) = &parallel.tasks {
                    add(Role::TasksFile, &for_each.items, false, false);
                    if let Some(max) = &tasks.max_iterations {
                        add(Role::MaxIterations, max, true, false);
                    }
                } else {
                    add(Role::ForEach, &for_each.items, true, false);
                }
            }
        }
        NodeKind::Loop(lp) => {
            if let Some(while_) = &lp.while_ {
                add(Role::While, while_, true, false);
            }
            if let Some(until) = &lp.until {
                add(Role::Until, until, true, false);
            }
        }
        NodeKind::Set(set) => add(Role::Value, &set.value, set.is_expr, false),
        NodeKind::Emit(emit) => {
            for (_, value) in &emit.data {
                add(Role::Value, value, false, false);
            }
        }
    }
    if let Some(OnError::Skip { fallback, .. }) = node.on_error.as_deref() {
        for set in fallback {
            add(Role::Fallback, &set.value, set.is_expr, false);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::analyze::testing::Builder;
    use crate::ir::Strategy;

    #[test]
    fn scopes_follow_for_each_and_recovery() {
        let mut b = Builder::new();
        b.parallel("fan", Strategy::All, Some(("input.files", "file")), |b| {
            b.branch("body", |b| {
                b.agent("review", "{{ file }}");
            });
        });
        let fix = b.agent("fix", "{{ error }}");
        b.node_mut(fix).recovery = true;
        let workflow = b.finish();
        let model = Model::new(&workflow);
        let review = workflow.find_node("review").unwrap();
        assert_eq!(model.scope(review).items[0].1, "file");
        assert!(model.scope(NodeIdx(0)).items.is_empty());
        assert!(model.scope(fix).recovery);
        assert!(!model.scope(review).recovery);
        assert_eq!(model.branches[review.index()], [(NodeIdx(0), 0)]);
        assert_eq!(model.sites.len(), 3);
        assert_eq!(model.sites[0].role, Role::ForEach);
    }

    #[test]
    fn sibling_branches_are_found_at_the_innermost_split() {
        let mut b = Builder::new();
        b.parallel("p", Strategy::All, None, |b| {
            b.branch("a", |b| {
                b.agent("a1", "x");
            });
            b.branch("b", |b| {
                b.agent("b1", "x");
            });
        });
        let workflow = b.finish();
        let model = Model::new(&workflow);
        let a1 = workflow.find_node("a1").unwrap();
        let b1 = workflow.find_node("b1").unwrap();
        assert_eq!(model.sibling_branches(a1, b1), Some((NodeIdx(0), 0, 1)));
        assert_eq!(model.sibling_branches(a1, a1), None);
    }
}
