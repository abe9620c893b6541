//! A small IR builder for tests.

use std::sync::Arc;

use atomic::ir::*;
use atomic::lower::{Plan, lower};
use atomic::source::{SourceId, Span, Spanned};
use serde_json::Value;

pub(crate) fn span() -> Span {
    Span::new(SourceId(0), 0, 0)
}

pub(crate) fn sp<T>(value: T) -> Spanned<T> {
    Spanned::new(value, span())
}

pub(crate) fn t(source: &str) -> Template {
    Template {
        source: source.to_owned(),
        span: span(),
        exact: false,
        offset: 0,
        shifts: None,
    }
}

pub(crate) struct Wf {
    pub(crate) wf: Workflow,
}

pub(crate) fn node(id: &str, kind: NodeKind) -> Node {
    Node {
        id: sp(id.to_owned()),
        kind,
        parent: None,
        retry: None,
        timeout: None,
        on_error: None,
        recovery: false,
        idempotent: false,
        goto: None,
        span: span(),
    }
}

pub(crate) fn set(field: &str, value: &str) -> NodeKind {
    NodeKind::Set(Set {
        field: sp(field.to_owned()),
        value: t(value),
        is_expr: false,
    })
}

pub(crate) fn tool(argv: &[&str]) -> Tool {
    Tool {
        run: argv.iter().map(|a| t(a)).collect(),
        ..Tool::default()
    }
}

pub(crate) fn output(field: &str, parse: ParseMode) -> OutputMap {
    OutputMap {
        field: sp(field.to_owned()),
        parse,
        schema: None,
        pattern: None,
        from: OutputSource::Result,
        span: span(),
    }
}

pub(crate) fn agent(prompt: &str) -> Agent {
    Agent {
        prompt: Some(t(prompt)),
        ..Agent::default()
    }
}

pub(crate) fn route(when: Option<&str>, jump: Jump, max: Option<u32>) -> Route {
    Route {
        when: when.map(t),
        target: None,
        jump,
        max: max.map(sp),
        span: span(),
    }
}

impl Wf {
    pub(crate) fn new(name: &str) -> Self {
        Self {
            wf: Workflow {
                name: sp(name.to_owned()),
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
                limits: Limits::default(),
                workspace: None,
                sandbox: None,
                hooks: Vec::new(),
                mcp: Vec::new(),
                custom_tools: Vec::new(),
                nodes: Vec::new(),
                body: Block {
                    nodes: Vec::new(),
                    span: span(),
                },
                span: span(),
            },
        }
    }

    pub(crate) fn field(
        mut self,
        name: &str,
        ty: ValueType,
        default: Option<Value>,
        reducer: Reducer,
    ) -> Self {
        self.wf.state.push(StateField {
            name: sp(name.to_owned()),
            ty,
            default,
            default_span: None,
            reducer,
            max_items: None,
            description: None,
            migrate: None,
            span: span(),
        });
        self
    }

    pub(crate) fn provider(mut self, name: &str) -> Self {
        self.wf.providers.push(ProviderDecl {
            name: sp(name.to_owned()),
            adapter: sp("in-process".to_owned()),
            model: Some(sp("test-model".to_owned())),
            base_url: None,
            api_key_env: None,
            cassette: None,
            command: Vec::new(),
            options: serde_json::Map::new(),
            span: span(),
        });
        self
    }

    /// Adds a node under `parent` (top level when `None`, appended to the body); returns
    /// its index. Blocks list children with [`Wf::child`].
    pub(crate) fn add(&mut self, parent: Option<NodeIdx>, mut node: Node) -> NodeIdx {
        let idx = NodeIdx(self.wf.nodes.len() as u32);
        node.parent = parent;
        self.wf.nodes.push(node);
        if parent.is_none() {
            self.wf.body.nodes.push(idx);
        }
        idx
    }

    /// Adds a node as the next statement of a loop body or a parallel branch.
    pub(crate) fn child(&mut self, parent: NodeIdx, branch: usize, node: Node) -> NodeIdx {
        let idx = self.add(Some(parent), node);
        match &mut self.wf.nodes[parent.index()].kind {
            NodeKind::Loop(l) => l.body.nodes.push(idx),
            NodeKind::Parallel(p) => {
                while p.branches.len() <= branch {
                    let name = format!("b{}", p.branches.len());
                    p.branches.push(Branch {
                        name: sp(name),
                        body: Block {
                            nodes: Vec::new(),
                            span: span(),
                        },
                    });
                }
                p.branches[branch].body.nodes.push(idx);
            }
            _ => panic!("not a block"),
        }
        idx
    }

    pub(crate) fn node_mut(&mut self, idx: NodeIdx) -> &mut Node {
        &mut self.wf.nodes[idx.index()]
    }

    pub(crate) fn plan(self) -> Arc<Plan> {
        let outcome = lower(self.wf);
        let errors: Vec<_> = outcome
            .diagnostics
            .iter()
            .filter(|d| d.is_error())
            .collect();
        assert!(errors.is_empty(), "lowering failed: {errors:#?}");
        Arc::new(outcome.value.expect("a plan"))
    }
}

pub(crate) fn looped(until: Option<&str>, while_: Option<&str>, max: u32) -> NodeKind {
    NodeKind::Loop(Box::new(Loop {
        until: until.map(t),
        while_: while_.map(t),
        max: Some(sp(max)),
        body: Block {
            nodes: Vec::new(),
            span: span(),
        },
    }))
}

pub(crate) fn parallel(
    strategy: Strategy,
    max: Option<u32>,
    for_each: Option<(&str, &str)>,
) -> NodeKind {
    NodeKind::Parallel(Box::new(Parallel {
        strategy,
        max_concurrency: max.map(sp),
        for_each: for_each.map(|(items, name)| ForEach {
            items: t(items),
            as_: sp(name.to_owned()),
        }),
        isolation: atomic::ir::Isolation::Shared,
        branches: Vec::new(),
        tasks: None,
    }))
}
