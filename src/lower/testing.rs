//! Test support: build IR in code with a compact builder, and sketch a plan as text.
//!
//! ```ignore
//! let workflow = workflow(|b| {
//!     b.agent("a").goto("c", None);
//!     b.loop_("l", Some(3), |b| { b.tool("t"); });
//!     b.decision("d", &[("state.ok", "a", None)], Some(("end", None)));
//! });
//! ```

use crate::ir::{
    Agent, AnswerType, Block, Branch, Decision, ForEach, Jump, Loop, Node, NodeIdx, NodeKind,
    OnError, Parallel, Retry, Route, Set, Strategy, Subgraph, Template, Tool, Wait, Workflow,
};
use crate::lower::{EdgeKind, Plan};
use crate::source::{SourceId, Span, Spanned};

/// A workflow built by `build`, with every jump target resolved by name.
pub(crate) fn workflow(build: impl FnOnce(&mut Builder)) -> Workflow {
    let mut builder = Builder {
        nodes: Vec::new(),
        frames: vec![Frame::Block(Vec::new(), None)],
        jumps: Vec::new(),
        offset: 10,
    };
    build(&mut builder);
    builder.finish()
}

/// A lowered workflow (diagnostics ignored).
pub(crate) fn plan(build: impl FnOnce(&mut Builder)) -> Plan {
    crate::lower::lower(workflow(build))
        .value
        .expect("lowering always returns a plan")
}

/// The plan's edges, one per line: `from -kind[≤max]-> to`, in step then priority order.
pub(crate) fn sketch(plan: &Plan) -> String {
    let mut out = String::new();
    for step in plan.steps() {
        for &edge in plan.out_edges(step) {
            let weight = plan.edge(edge);
            let kind = match weight.kind {
                EdgeKind::Next => "next".to_owned(),
                EdgeKind::Goto => "goto".to_owned(),
                EdgeKind::Route { index } => format!("route{index}"),
                EdgeKind::Otherwise => "otherwise".to_owned(),
                EdgeKind::LoopBody => "body".to_owned(),
                EdgeKind::LoopBack => "back".to_owned(),
                EdgeKind::LoopExit => "exit".to_owned(),
                EdgeKind::Branch { index } => format!("branch{index}"),
                EdgeKind::Skip { .. } => "skip".to_owned(),
                EdgeKind::Recover { .. } => "recover".to_owned(),
            };
            let bound = weight
                .bound
                .map(|bound| format!("≤{}", bound.max))
                .unwrap_or_default();
            out.push_str(&format!(
                "{} -{kind}{bound}-> {}\n",
                plan.step(step).key,
                plan.step(plan.target(edge)).key
            ));
        }
    }
    out
}

/// The codes of a lowering's diagnostics, in order.
pub(crate) fn codes(workflow: Workflow) -> Vec<&'static str> {
    crate::lower::lower(workflow)
        .diagnostics
        .iter()
        .map(|diagnostic| diagnostic.code.name())
        .collect()
}

/// A template spanning nothing in particular.
pub(crate) fn template(text: &str) -> Template {
    Template {
        source: text.to_owned(),
        span: Span::default(),
        exact: true,
        offset: 1,
        shifts: None,
    }
}

enum Frame {
    Block(Vec<NodeIdx>, Option<NodeIdx>),
    Parallel(Vec<Branch>, NodeIdx),
}

enum JumpSite {
    Goto,
    Route(usize),
    Otherwise,
    OnError,
}

pub(crate) struct Builder {
    nodes: Vec<Node>,
    frames: Vec<Frame>,
    jumps: Vec<(NodeIdx, JumpSite, String)>,
    offset: u32,
}

/// A node just added; set its options.
pub(crate) struct Handle<'a> {
    builder: &'a mut Builder,
    idx: NodeIdx,
}

impl Handle<'_> {
    fn node(&mut self) -> &mut Node {
        &mut self.builder.nodes[self.idx.index()]
    }

    /// `goto="<target>"` (`end` for the end) with optional `goto-max`.
    pub(crate) fn goto(mut self, target: &str, max: Option<u32>) -> Self {
        let span = self.builder.span();
        let max_span = self.builder.span();
        self.node().goto = Some(Box::new(Route {
            when: None,
            target: Some(Spanned::new(target.to_owned(), span)),
            jump: Jump::Next,
            max: max.map(|max| Spanned::new(max, max_span)),
            span,
        }));
        self.builder
            .jumps
            .push((self.idx, JumpSite::Goto, target.to_owned()));
        self
    }

    /// `on-error "skip"`.
    pub(crate) fn on_error_skip(mut self) -> Self {
        let span = self.builder.span();
        self.node().on_error = Some(Box::new(OnError::Skip {
            fallback: Vec::new(),
            span,
        }));
        self
    }

    /// `on-error "goto" "<target>"`.
    pub(crate) fn on_error_goto(mut self, target: &str) -> Self {
        let span = self.builder.span();
        self.node().on_error = Some(Box::new(OnError::Goto {
            target: Spanned::new(target.to_owned(), span),
            jump: Jump::Next,
            span,
        }));
        self.builder
            .jumps
            .push((self.idx, JumpSite::OnError, target.to_owned()));
        self
    }

    /// `on-error "abort"`.
    pub(crate) fn on_error_abort(mut self) -> Self {
        let span = self.builder.span();
        self.node().on_error = Some(Box::new(OnError::Abort { span }));
        self
    }

    /// `recovery=#true`.
    pub(crate) fn recovery(mut self) -> Self {
        self.node().recovery = true;
        self
    }

    /// `timeout="<ms>ms"`.
    pub(crate) fn timeout_ms(mut self, ms: u64) -> Self {
        let span = self.builder.span();
        self.node().timeout = Some(Spanned::new(crate::ir::Duration(ms), span));
        self
    }

    /// `retry attempts=N backoff="<ms>ms"`.
    pub(crate) fn retry(mut self, attempts: u32, backoff_ms: u64) -> Self {
        let span = self.builder.span();
        self.node().retry = Some(Box::new(Retry {
            attempts,
            backoff: crate::ir::Duration(backoff_ms),
            factor: 2.0,
            max_backoff: None,
            jitter: false,
            on: Vec::new(),
            span,
        }));
        self
    }

    /// `budget-usd=` on an agent.
    pub(crate) fn budget_usd(mut self, usd: f64) -> Self {
        let span = self.builder.span();
        if let NodeKind::Agent(agent) = &mut self.node().kind {
            agent.budget_usd = Some(Spanned::new(usd, span));
        }
        self
    }
}

impl Builder {
    fn span(&mut self) -> Span {
        let span = Span::new(SourceId(0), self.offset as usize, self.offset as usize + 5);
        self.offset += 10;
        span
    }

    fn parent(&self) -> Option<NodeIdx> {
        match self.frames.last() {
            Some(Frame::Block(_, parent)) => *parent,
            Some(Frame::Parallel(_, parallel)) => Some(*parallel),
            None => None,
        }
    }

    fn push(&mut self, id: &str, kind: NodeKind) -> Handle<'_> {
        let span = self.span();
        let id_span = self.span();
        let idx = NodeIdx(u32::try_from(self.nodes.len()).expect("small"));
        self.nodes.push(Node {
            id: Spanned::new(id.to_owned(), id_span),
            kind,
            parent: self.parent(),
            retry: None,
            timeout: None,
            on_error: None,
            recovery: false,
            idempotent: false,
            goto: None,
            span,
        });
        match self.frames.last_mut() {
            Some(Frame::Block(nodes, _)) => nodes.push(idx),
            Some(Frame::Parallel(branches, _)) => branches.push(Branch {
                name: Spanned::new(id.to_owned(), id_span),
                body: Block {
                    nodes: vec![idx],
                    span,
                },
            }),
            None => {}
        }
        Handle { builder: self, idx }
    }

    fn block(&mut self, parent: NodeIdx, build: impl FnOnce(&mut Builder)) -> Block {
        self.frames.push(Frame::Block(Vec::new(), Some(parent)));
        build(self);
        let span = self.span();
        match self.frames.pop() {
            Some(Frame::Block(nodes, _)) => Block { nodes, span },
            _ => unreachable!("frames are balanced"),
        }
    }

    pub(crate) fn agent(&mut self, id: &str) -> Handle<'_> {
        let agent = Agent {
            prompt: Some(template("do it")),
            ..Agent::default()
        };
        self.push(id, NodeKind::Agent(Box::new(agent)))
    }

    pub(crate) fn tool(&mut self, id: &str) -> Handle<'_> {
        let tool = Tool {
            run: vec![template("true")],
            ok_codes: vec![0],
            ..Tool::default()
        };
        self.push(id, NodeKind::Tool(Box::new(tool)))
    }

    pub(crate) fn wait(&mut self, id: &str) -> Handle<'_> {
        let wait = Wait {
            header: None,
            prompt: template("ok?"),
            answer: AnswerType::YesNo,
            choices: Vec::new(),
            outputs: Vec::new(),
            auto_approve: None,
        };
        self.push(id, NodeKind::Wait(Box::new(wait)))
    }

    pub(crate) fn set(&mut self, id: &str) -> Handle<'_> {
        let span = self.span();
        let set = Set {
            field: Spanned::new("x".to_owned(), span),
            value: template("{{ 1 }}"),
            is_expr: false,
        };
        self.push(id, NodeKind::Set(set))
    }

    pub(crate) fn subgraph(&mut self, id: &str) -> Handle<'_> {
        let span = self.span();
        let subgraph = Subgraph {
            workflow: Spanned::new("child.kdl".to_owned(), span),
            path: None,
            inputs: Vec::new(),
            outputs: Vec::new(),
        };
        self.push(id, NodeKind::Subgraph(Box::new(subgraph)))
    }

    /// A decision with `when` routes `(condition, target, max)` and an optional
    /// `otherwise` `(target, max)`; target `"next"` is a bare `otherwise`.
    pub(crate) fn decision(
        &mut self,
        id: &str,
        routes: &[(&str, &str, Option<u32>)],
        otherwise: Option<(&str, Option<u32>)>,
    ) -> Handle<'_> {
        let mut decision = Decision::default();
        let mut targets = Vec::new();
        for (index, (when, target, max)) in routes.iter().enumerate() {
            let span = self.span();
            decision.routes.push(Route {
                when: Some(template(when)),
                target: Some(Spanned::new((*target).to_owned(), span)),
                jump: Jump::Next,
                max: max.map(|max| Spanned::new(max, span)),
                span,
            });
            targets.push((JumpSite::Route(index), (*target).to_owned()));
        }
        if let Some((target, max)) = otherwise {
            let span = self.span();
            decision.otherwise = Some(Route {
                when: None,
                target: (target != "next").then(|| Spanned::new(target.to_owned(), span)),
                jump: Jump::Next,
                max: max.map(|max| Spanned::new(max, span)),
                span,
            });
            targets.push((JumpSite::Otherwise, target.to_owned()));
        }
        let handle = self.push(id, NodeKind::Decision(Box::new(decision)));
        let idx = handle.idx;
        for (site, target) in targets {
            handle.builder.jumps.push((idx, site, target));
        }
        Handle {
            builder: handle.builder,
            idx,
        }
    }

    /// `loop "<id>" max=N { … }`.
    pub(crate) fn loop_(
        &mut self,
        id: &str,
        max: Option<u32>,
        build: impl FnOnce(&mut Builder),
    ) -> Handle<'_> {
        self.loop_with(id, max, None, None, build)
    }

    /// `loop "<id>" max=N until="…" while="…" { … }`.
    pub(crate) fn loop_with(
        &mut self,
        id: &str,
        max: Option<u32>,
        until: Option<&str>,
        while_: Option<&str>,
        build: impl FnOnce(&mut Builder),
    ) -> Handle<'_> {
        let max_span = self.span();
        let ir = Loop {
            until: until.map(template),
            while_: while_.map(template),
            max: max.map(|max| Spanned::new(max, max_span)),
            body: Block::default(),
        };
        let idx = self.push(id, NodeKind::Loop(Box::new(ir))).idx;
        let body = self.block(idx, build);
        if let NodeKind::Loop(ir) = &mut self.nodes[idx.index()].kind {
            ir.body = body;
        }
        Handle { builder: self, idx }
    }

    /// `parallel "<id>" { … }`: each statement a branch, or `branch` blocks.
    pub(crate) fn parallel(&mut self, id: &str, build: impl FnOnce(&mut Builder)) -> Handle<'_> {
        self.parallel_with(id, None, None, build)
    }

    /// `parallel "<id>" max-concurrency=N for-each="…" { … }`.
    pub(crate) fn parallel_with(
        &mut self,
        id: &str,
        max_concurrency: Option<u32>,
        for_each: Option<&str>,
        build: impl FnOnce(&mut Builder),
    ) -> Handle<'_> {
        let span = self.span();
        let ir = Parallel {
            strategy: Strategy::All,
            max_concurrency: max_concurrency.map(|max| Spanned::new(max, span)),
            for_each: for_each.map(|items| ForEach {
                items: template(items),
                as_: Spanned::new("item".to_owned(), span),
            }),
            branches: Vec::new(),
            isolation: crate::ir::Isolation::Shared,
            tasks: None,
        };
        let idx = self.push(id, NodeKind::Parallel(Box::new(ir))).idx;
        self.frames.push(Frame::Parallel(Vec::new(), idx));
        build(self);
        let branches = match self.frames.pop() {
            Some(Frame::Parallel(branches, _)) => branches,
            _ => unreachable!("frames are balanced"),
        };
        if let NodeKind::Parallel(ir) = &mut self.nodes[idx.index()].kind {
            ir.branches = branches;
        }
        Handle { builder: self, idx }
    }

    /// `branch "<name>" { … }` inside a `parallel`.
    pub(crate) fn branch(&mut self, name: &str, build: impl FnOnce(&mut Builder)) {
        let Some(Frame::Parallel(_, parallel)) = self.frames.last() else {
            panic!("`branch` outside a parallel");
        };
        let parallel = *parallel;
        let name_span = self.span();
        let body = self.block(parallel, build);
        if let Some(Frame::Parallel(branches, _)) = self.frames.last_mut() {
            branches.push(Branch {
                name: Spanned::new(name.to_owned(), name_span),
                body,
            });
        }
    }

    fn finish(mut self) -> Workflow {
        let body = match self.frames.pop() {
            Some(Frame::Block(nodes, None)) => Block {
                nodes,
                span: Span::new(SourceId(0), 0, 1_000_000),
            },
            _ => unreachable!("frames are balanced"),
        };
        let resolve = |nodes: &[Node], target: &str| match target {
            "end" => Jump::End,
            "next" => Jump::Next,
            name => Jump::Node(NodeIdx(
                u32::try_from(
                    nodes
                        .iter()
                        .position(|node| node.id.value == name)
                        .unwrap_or_else(|| panic!("no node `{name}`")),
                )
                .expect("small"),
            )),
        };
        for (idx, site, target) in std::mem::take(&mut self.jumps) {
            let jump = resolve(&self.nodes, &target);
            let node = &mut self.nodes[idx.index()];
            match (site, &mut node.kind) {
                (JumpSite::Goto, _) => node.goto.as_mut().expect("goto set").jump = jump,
                (JumpSite::OnError, _) => {
                    if let Some(OnError::Goto { jump: slot, .. }) = node.on_error.as_deref_mut() {
                        *slot = jump;
                    }
                }
                (JumpSite::Route(index), NodeKind::Decision(decision)) => {
                    decision.routes[index].jump = jump;
                }
                (JumpSite::Otherwise, NodeKind::Decision(decision)) => {
                    decision.otherwise.as_mut().expect("otherwise set").jump = jump;
                }
                _ => unreachable!("routes belong to decisions"),
            }
        }
        Workflow {
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
            nodes: self.nodes,
            body,
            span: Span::new(SourceId(0), 0, 1_000_000),
        }
    }
}
