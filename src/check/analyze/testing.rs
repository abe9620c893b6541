//! Test helpers: IR built in code, with unique spans, so rule tests need no parser.

use std::path::Path;

use crate::diagnostic::{Code, Diagnostic, Outcome};
use crate::ir::{
    Agent, AnswerType, Block, Branch, Decision, ForEach, Jump, Loop, Node, NodeIdx, NodeKind,
    OnError, OutputMap, Parallel, ProviderDecl, Reducer, Route, Set, StateField, Strategy,
    Subgraph, Template, Tool, ValueType, Wait, Workflow,
};
use crate::source::{MemoryFiles, SourceId, Sources, Span, Spanned};

use super::{AnalyzeContext, analyze};

/// A template at a fixed place (bytes 100.. of source 0), written as `"<text>"`.
pub(crate) fn template(text: &str) -> Template {
    Template {
        source: text.to_owned(),
        span: Span::new(SourceId(0), 100, 100 + text.len() + 2),
        exact: true,
        offset: 1,
        shifts: None,
    }
}

/// Builds a [`Workflow`] statement by statement. Statements go into the innermost open
/// block; `loop_`, `parallel` and `branch` open blocks for their closures.
pub(crate) struct Builder {
    workflow: Workflow,
    cursor: usize,
    blocks: Vec<Vec<NodeIdx>>,
    branches: Vec<Vec<Branch>>,
    parent_stack: Vec<NodeIdx>,
}

impl Builder {
    pub(crate) fn new() -> Self {
        let mut builder = Self {
            workflow: Workflow {
                name: Spanned::new("test".to_owned(), Span::default()),
                version: None,
                min_atomic_version: None,
                description: None,
                aliases: Vec::new(),
                inputs: Vec::new(),
                env: Vec::new(),
                state: Vec::new(),
                state_version: None,
                providers: Vec::new(),
                default_provider: None,
                default_model: None,
                limits: crate::ir::Limits::default(),
                workspace: None,
                sandbox: None,
                hooks: Vec::new(),
                mcp: Vec::new(),
                custom_tools: Vec::new(),
                nodes: Vec::new(),
                body: Block::default(),
                span: Span::default(),
            },
            cursor: 0,
            blocks: vec![Vec::new()],
            branches: Vec::new(),
            parent_stack: Vec::new(),
        };
        builder.workflow.name.span = builder.span(8);
        builder
    }

    /// A fresh span of `len` bytes, after every span handed out so far.
    pub(crate) fn span(&mut self, len: usize) -> Span {
        let start = self.cursor + 1;
        self.cursor = start + len;
        Span::new(SourceId(0), start, start + len)
    }

    pub(crate) fn name(&mut self, text: &str) -> Spanned<String> {
        let span = self.span(text.len() + 2);
        Spanned::new(text.to_owned(), span)
    }

    pub(crate) fn tpl(&mut self, text: &str) -> Template {
        Template {
            source: text.to_owned(),
            span: self.span(text.len() + 2),
            exact: true,
            offset: 1,
            shifts: None,
        }
    }

    pub(crate) fn field(
        &mut self,
        name: &str,
        ty: ValueType,
        default: Option<serde_json::Value>,
    ) -> &mut StateField {
        let field = StateField {
            name: self.name(name),
            ty,
            default,
            default_span: None,
            reducer: Reducer::Replace,
            max_items: None,
            description: None,
            migrate: None,
            span: self.span(20),
        };
        self.workflow.state.push(field);
        self.workflow.state.last_mut().expect("just pushed")
    }

    pub(crate) fn input(&mut self, name: &str, ty: ValueType, default: Option<serde_json::Value>) {
        let input = crate::ir::Input {
            name: self.name(name),
            ty,
            default,
            default_span: None,
            description: None,
            span: self.span(20),
        };
        self.workflow.inputs.push(input);
    }

    pub(crate) fn env(&mut self, name: &str) {
        let name = self.name(name);
        self.workflow.env.push(name);
    }

    pub(crate) fn provider(&mut self, name: &str, adapter: &str) -> &mut ProviderDecl {
        let provider = ProviderDecl {
            name: self.name(name),
            adapter: self.name(adapter),
            model: None,
            base_url: None,
            api_key_env: None,
            cassette: None,
            command: Vec::new(),
            options: serde_json::Map::new(),
            span: self.span(30),
        };
        self.workflow.providers.push(provider);
        self.workflow.providers.last_mut().expect("just pushed")
    }

    pub(crate) fn workflow_mut(&mut self) -> &mut Workflow {
        &mut self.workflow
    }

    pub(crate) fn node_mut(&mut self, idx: NodeIdx) -> &mut Node {
        &mut self.workflow.nodes[idx.index()]
    }

    /// An output mapping into `field`.
    pub(crate) fn output(&mut self, field: &str) -> OutputMap {
        OutputMap {
            field: self.name(field),
            parse: crate::ir::ParseMode::Text,
            schema: None,
            from: crate::ir::OutputSource::Result,
            pattern: None,
            span: self.span(10),
        }
    }

    /// Adds a statement to the innermost open block.
    pub(crate) fn node(&mut self, id: &str, kind: NodeKind) -> NodeIdx {
        let idx = NodeIdx(u32::try_from(self.workflow.nodes.len()).expect("small test"));
        let parent = self.parent_stack.last().copied();
        let node = Node {
            id: self.name(id),
            kind,
            parent,
            retry: None,
            timeout: None,
            on_error: None,
            recovery: false,
            idempotent: false,
            goto: None,
            span: self.span(40),
        };
        self.workflow.nodes.push(node);
        self.blocks.last_mut().expect("a block is open").push(idx);
        idx
    }

    pub(crate) fn agent(&mut self, id: &str, prompt: &str) -> NodeIdx {
        let agent = Agent {
            prompt: Some(self.tpl(prompt)),
            ..Agent::default()
        };
        self.node(id, NodeKind::Agent(Box::new(agent)))
    }

    /// An agent writing its reply into `field`.
    pub(crate) fn agent_to(&mut self, id: &str, prompt: &str, field: &str) -> NodeIdx {
        let output = self.output(field);
        let agent = Agent {
            prompt: Some(self.tpl(prompt)),
            outputs: vec![output],
            ..Agent::default()
        };
        self.node(id, NodeKind::Agent(Box::new(agent)))
    }

    pub(crate) fn tool(&mut self, id: &str, run: &[&str]) -> NodeIdx {
        let run = run.iter().map(|arg| self.tpl(arg)).collect();
        self.node(
            id,
            NodeKind::Tool(Box::new(Tool {
                run,
                ..Tool::default()
            })),
        )
    }

    pub(crate) fn tool_mut(&mut self, idx: NodeIdx) -> &mut Tool {
        match &mut self.node_mut(idx).kind {
            NodeKind::Tool(tool) => tool,
            _ => panic!("not a tool"),
        }
    }

    pub(crate) fn agent_mut(&mut self, idx: NodeIdx) -> &mut Agent {
        match &mut self.node_mut(idx).kind {
            NodeKind::Agent(agent) => agent,
            _ => panic!("not an agent"),
        }
    }

    pub(crate) fn set(&mut self, field: &str, value: &str) -> NodeIdx {
        let set = Set {
            field: self.name(field),
            value: self.tpl(value),
            is_expr: false,
        };
        self.node(&format!("set-{field}"), NodeKind::Set(set))
    }

    pub(crate) fn set_expr(&mut self, field: &str, expr: &str) -> NodeIdx {
        let set = Set {
            field: self.name(field),
            value: self.tpl(expr),
            is_expr: true,
        };
        self.node(&format!("set-{field}"), NodeKind::Set(set))
    }

    pub(crate) fn wait(&mut self, id: &str, answer: AnswerType, field: Option<&str>) -> NodeIdx {
        let outputs = field.map(|field| self.output(field)).into_iter().collect();
        let wait = Wait {
            header: None,
            prompt: self.tpl("ok?"),
            answer,
            choices: Vec::new(),
            outputs,
            auto_approve: None,
        };
        self.node(id, NodeKind::Wait(Box::new(wait)))
    }

    pub(crate) fn subgraph(&mut self, id: &str, workflow: &str) -> NodeIdx {
        let subgraph = Subgraph {
            workflow: self.name(workflow),
            path: None,
            inputs: Vec::new(),
            outputs: Vec::new(),
        };
        self.node(id, NodeKind::Subgraph(Box::new(subgraph)))
    }

    pub(crate) fn subgraph_mut(&mut self, idx: NodeIdx) -> &mut Subgraph {
        match &mut self.node_mut(idx).kind {
            NodeKind::Subgraph(subgraph) => subgraph,
            _ => panic!("not a subgraph"),
        }
    }

    /// A route to `target` (a node id or `end`), resolved by [`Builder::finish`].
    pub(crate) fn route(&mut self, when: Option<&str>, target: &str) -> Route {
        Route {
            when: when.map(|when| self.tpl(when)),
            target: Some(self.name(target)),
            jump: Jump::End,
            max: None,
            span: self.span(20),
        }
    }

    /// `decision` with `when` routes and an `otherwise` (`"next"` for a bare one).
    pub(crate) fn decision(
        &mut self,
        id: &str,
        routes: &[(&str, &str)],
        otherwise: Option<&str>,
    ) -> NodeIdx {
        let routes = routes
            .iter()
            .map(|(when, target)| self.route(Some(when), target))
            .collect();
        let otherwise = otherwise.map(|target| {
            if target == "next" {
                Route {
                    when: None,
                    target: None,
                    jump: Jump::Next,
                    max: None,
                    span: self.span(9),
                }
            } else {
                self.route(None, target)
            }
        });
        self.node(
            id,
            NodeKind::Decision(Box::new(Decision { routes, otherwise })),
        )
    }

    /// `goto=` on a node.
    pub(crate) fn goto(&mut self, idx: NodeIdx, target: &str, max: Option<u32>) {
        let mut route = self.route(None, target);
        route.max = max.map(|max| Spanned::new(max, route.span));
        self.node_mut(idx).goto = Some(Box::new(route));
    }

    pub(crate) fn on_error(&mut self, idx: NodeIdx, on_error: OnError) {
        self.node_mut(idx).on_error = Some(Box::new(on_error));
    }

    /// `loop` with `until`/`while` and `max`, its body built by `body`.
    pub(crate) fn loop_(
        &mut self,
        id: &str,
        until: Option<&str>,
        while_: Option<&str>,
        max: u32,
        body: impl FnOnce(&mut Self),
    ) -> NodeIdx {
        let until = until.map(|text| self.tpl(text));
        let while_ = while_.map(|text| self.tpl(text));
        let span = self.span(3);
        let idx = self.node(
            id,
            NodeKind::Loop(Box::new(Loop {
                until,
                while_,
                max: Some(Spanned::new(max, span)),
                body: Block::default(),
            })),
        );
        let block = self.within(idx, body);
        if let NodeKind::Loop(lp) = &mut self.node_mut(idx).kind {
            lp.body = block;
        }
        idx
    }

    /// `parallel`; `branches` calls [`Builder::branch`] for each branch.
    pub(crate) fn parallel(
        &mut self,
        id: &str,
        strategy: Strategy,
        for_each: Option<(&str, &str)>,
        branches: impl FnOnce(&mut Self),
    ) -> NodeIdx {
        let for_each = for_each.map(|(items, as_)| ForEach {
            items: self.tpl(items),
            as_: self.name(as_),
        });
        let idx = self.node(
            id,
            NodeKind::Parallel(Box::new(Parallel {
                strategy,
                max_concurrency: None,
                for_each,
                isolation: crate::ir::Isolation::Shared,
                branches: Vec::new(),
                tasks: None,
            })),
        );
        self.branches.push(Vec::new());
        self.parent_stack.push(idx);
        branches(self);
        self.parent_stack.pop();
        let list = self.branches.pop().expect("pushed above");
        if let NodeKind::Parallel(parallel) = &mut self.node_mut(idx).kind {
            parallel.branches = list;
        }
        idx
    }

    /// One branch of the innermost `parallel`.
    pub(crate) fn branch(&mut self, name: &str, body: impl FnOnce(&mut Self)) {
        let name = self.name(name);
        let parent = *self.parent_stack.last().expect("inside parallel");
        let block = self.within(parent, body);
        self.branches
            .last_mut()
            .expect("inside parallel")
            .push(Branch { name, body: block });
    }

    fn within(&mut self, parent: NodeIdx, body: impl FnOnce(&mut Self)) -> Block {
        self.blocks.push(Vec::new());
        self.parent_stack.push(parent);
        body(self);
        self.parent_stack.pop();
        let nodes = self.blocks.pop().expect("pushed above");
        Block {
            nodes,
            span: self.span(2),
        }
    }

    /// Resolves route targets by id and returns the workflow.
    pub(crate) fn finish(mut self) -> Workflow {
        self.workflow.body = Block {
            nodes: self.blocks.pop().expect("top block"),
            span: self.workflow.name.span,
        };
        let ids: Vec<String> = self
            .workflow
            .nodes
            .iter()
            .map(|node| node.id.value.clone())
            .collect();
        let resolve = |route: &mut Route| {
            if let Some(target) = &route.target {
                route.jump = match ids.iter().position(|id| *id == target.value) {
                    Some(index) => Jump::Node(NodeIdx(index as u32)),
                    None => Jump::End,
                };
            }
        };
        for node in &mut self.workflow.nodes {
            if let Some(route) = &mut node.goto {
                resolve(route);
            }
            if let NodeKind::Decision(decision) = &mut node.kind {
                decision.routes.iter_mut().for_each(resolve);
                if let Some(route) = &mut decision.otherwise {
                    resolve(route);
                }
            }
            if let Some(OnError::Goto { target, jump, .. }) = node.on_error.as_deref_mut()
                && let Some(index) = ids.iter().position(|id| *id == target.value)
            {
                *jump = Jump::Node(NodeIdx(index as u32));
            }
        }
        self.workflow
    }
}

/// Runs [`analyze`] on `workflow` as `flow.kdl` with `files`; `callees` are the workflows
/// other files resolve to (each also added to the files, as empty text).
pub(crate) fn run_full(
    workflow: &Workflow,
    files: &MemoryFiles,
    callees: &[(&str, Workflow)],
) -> Vec<Diagnostic> {
    let mut files = files.clone();
    for (path, _) in callees {
        files.insert(*path, "");
    }
    let load = |sources: &mut Sources, path: &Path, text: String| {
        sources.add(path, text);
        let found = callees
            .iter()
            .find(|(callee, _)| Path::new(callee) == path)
            .map(|(_, workflow)| workflow.clone());
        Outcome::new(found, Vec::new())
    };
    let mut sources = Sources::new();
    let file = sources.add("flow.kdl", "");
    let mut cx =
        AnalyzeContext::new(&mut sources, file, Path::new("flow.kdl"), &files).with_loader(&load);
    analyze(workflow, &mut cx)
}

/// Runs [`analyze`] with these other files.
pub(crate) fn run_with(workflow: &Workflow, files: &MemoryFiles) -> Vec<Diagnostic> {
    run_full(workflow, files, &[])
}

/// Runs [`analyze`] with these called workflows.
pub(crate) fn run_with_callees(
    workflow: &Workflow,
    callees: &[(&str, Workflow)],
) -> Vec<Diagnostic> {
    run_full(workflow, &MemoryFiles::new(), callees)
}

/// Runs [`analyze`] with no other files.
pub(crate) fn run(workflow: &Workflow) -> Vec<Diagnostic> {
    run_full(workflow, &MemoryFiles::new(), &[])
}

/// The diagnostics of one code.
pub(crate) fn only(diagnostics: Vec<Diagnostic>, code: Code) -> Vec<Diagnostic> {
    diagnostics
        .into_iter()
        .filter(|diagnostic| diagnostic.code == code)
        .collect()
}

/// The messages of the diagnostics of one code.
pub(crate) fn messages(diagnostics: &[Diagnostic], code: Code) -> Vec<String> {
    diagnostics
        .iter()
        .filter(|diagnostic| diagnostic.code == code)
        .map(|diagnostic| diagnostic.message.clone())
        .collect()
}
