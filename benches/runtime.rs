//! Engine overhead benchmarks (issue 3, W1–W3, W5), in memory as `atomic run --store
//! memory` runs: on a [`LatestStore`] (the latest checkpoint only), with no event log (the
//! CLI logs events only to a durable store) and no event sink. Workflows are built as IR in code (the KDL pipeline
//! is not on main yet) and lowered with `lower::lower`.
//!
//! `cargo bench --bench runtime`. Each figure is one whole run (setup, template
//! compilation, every step, every commit) divided by its steps or branches.

use std::sync::Arc;
use std::time::Duration;

use atomic::ir::*;
use atomic::lower::{Plan, lower};
use atomic::providers::{AgentReply, AgentRequest, EventSink, Provider, ProviderFuture};
use atomic::runtime::{Providers, RunContext, RunEnd, run};
use atomic::source::{SourceId, Span, Spanned};
use atomic::store::{LatestStore, MemoryStore};
use criterion::{Criterion, Throughput, criterion_group};
use serde_json::{Map, json};

fn sp<T>(value: T) -> Spanned<T> {
    Spanned::new(value, Span::new(SourceId(0), 0, 0))
}

fn t(source: &str) -> Template {
    Template {
        source: source.to_owned(),
        span: Span::new(SourceId(0), 0, 0),
        exact: false,
        offset: 0,
        shifts: None,
    }
}

fn node(id: &str, parent: Option<NodeIdx>, kind: NodeKind) -> Node {
    Node {
        id: sp(id.to_owned()),
        kind,
        parent,
        retry: None,
        timeout: None,
        on_error: None,
        recovery: false,
        idempotent: false,
        goto: None,
        span: Span::new(SourceId(0), 0, 0),
    }
}

fn field(name: &str, ty: ValueType, default: serde_json::Value, reducer: Reducer) -> StateField {
    StateField {
        name: sp(name.to_owned()),
        ty,
        default: Some(default),
        default_span: None,
        reducer,
        max_items: None,
        description: None,
        migrate: None,
        span: Span::new(SourceId(0), 0, 0),
    }
}

fn workflow(name: &str, state: Vec<StateField>) -> Workflow {
    Workflow {
        name: sp(name.to_owned()),
        version: None,
        min_atomic_version: None,
        description: None,
        aliases: vec![],
        inputs: vec![],
        env: vec![],
        state,
        state_version: None,
        providers: vec![],
        default_provider: None,
        default_model: None,
        limits: Limits::default(),
        workspace: None,
        sandbox: None,
        hooks: vec![],
        mcp: vec![],
        custom_tools: vec![],
        nodes: vec![],
        body: Block {
            nodes: vec![],
            span: Span::new(SourceId(0), 0, 0),
        },
        span: Span::new(SourceId(0), 0, 0),
    }
}

fn set(field: &str, value: &str) -> NodeKind {
    NodeKind::Set(Set {
        field: sp(field.to_owned()),
        value: t(value),
        is_expr: false,
    })
}

fn plan(wf: Workflow) -> Arc<Plan> {
    Arc::new(lower(wf).value.expect("a plan"))
}

/// W1: 1,000 `set` nodes in a row, each incrementing a counter.
fn w1() -> Arc<Plan> {
    let mut wf = workflow(
        "w1",
        vec![field("n", ValueType::Integer, json!(0), Reducer::Replace)],
    );
    for i in 0..1000u32 {
        wf.nodes.push(node(
            &format!("inc{i}"),
            None,
            set("n", "{{ state.n + 1 }}"),
        ));
        wf.body.nodes.push(NodeIdx(i));
    }
    plan(wf)
}

/// A parallel over `items` with one body statement `kind`.
fn fan(
    name: &str,
    state: Vec<StateField>,
    items: &str,
    max: Option<u32>,
    kind: NodeKind,
) -> Workflow {
    let mut wf = workflow(name, state);
    wf.nodes.push(node(
        "fan",
        None,
        NodeKind::Parallel(Box::new(Parallel {
            strategy: Strategy::All,
            max_concurrency: max.map(sp),
            for_each: Some(ForEach {
                items: t(items),
                as_: sp("item".to_owned()),
            }),
            isolation: atomic::ir::Isolation::Shared,
            branches: vec![Branch {
                name: sp("body".to_owned()),
                body: Block {
                    nodes: vec![NodeIdx(1)],
                    span: Span::new(SourceId(0), 0, 0),
                },
            }],
            tasks: None,
        })),
    ));
    wf.nodes.push(node("body", Some(NodeIdx(0)), kind));
    wf.body.nodes.push(NodeIdx(0));
    wf
}

/// W2: for-each over 1,000 items, each branch appending one item.
fn w2() -> Arc<Plan> {
    plan(fan(
        "w2",
        vec![
            field(
                "items",
                ValueType::Array,
                json!((0..1000).collect::<Vec<_>>()),
                Reducer::Replace,
            ),
            field("out", ValueType::Array, json!([]), Reducer::Append),
        ],
        "state.items",
        None,
        set("out", "{{ item }}"),
    ))
}

/// W3: a loop of 10,000 iterations: increment, then the tail's `until` check.
fn w3() -> Arc<Plan> {
    let mut wf = workflow(
        "w3",
        vec![field("n", ValueType::Integer, json!(0), Reducer::Replace)],
    );
    wf.nodes.push(node(
        "loop",
        None,
        NodeKind::Loop(Box::new(Loop {
            until: Some(t("state.n >= 10000")),
            while_: None,
            max: Some(sp(10_000)),
            body: Block {
                nodes: vec![NodeIdx(1)],
                span: Span::new(SourceId(0), 0, 0),
            },
        })),
    ));
    wf.nodes
        .push(node("inc", Some(NodeIdx(0)), set("n", "{{ state.n + 1 }}")));
    wf.body.nodes.push(NodeIdx(0));
    plan(wf)
}

/// An agent backend that sleeps, then echoes.
#[derive(Debug)]
struct Sleepy(Duration);

impl Provider for Sleepy {
    fn adapter(&self) -> &'static str {
        "in-process"
    }
    fn run<'a>(
        &'a self,
        request: &'a AgentRequest,
        _events: &'a dyn EventSink,
    ) -> ProviderFuture<'a> {
        Box::pin(async move {
            tokio::time::sleep(self.0).await;
            Ok(AgentReply {
                text: request.prompt.text.clone(),
                ..AgentReply::default()
            })
        })
    }
}

/// W5: 200 agent calls on a 50 ms provider, at most 16 at a time.
fn w5() -> Arc<Plan> {
    let mut wf = fan(
        "w5",
        vec![field(
            "items",
            ValueType::Array,
            json!((0..200).collect::<Vec<_>>()),
            Reducer::Replace,
        )],
        "state.items",
        Some(16),
        NodeKind::Agent(Box::new(Agent {
            prompt: Some(t("item {{ item }}")),
            provider: Some(sp("p".to_owned())),
            ..Agent::default()
        })),
    );
    wf.providers.push(ProviderDecl {
        name: sp("p".to_owned()),
        adapter: sp("in-process".to_owned()),
        model: None,
        base_url: None,
        api_key_env: None,
        cassette: None,
        command: vec![],
        options: Map::new(),
        span: Span::new(SourceId(0), 0, 0),
    });
    plan(wf)
}

/// A context as `--store memory` builds it.
fn in_memory() -> RunContext {
    let mut ctx = RunContext::new(Arc::new(LatestStore::new()));
    ctx.log_events = false;
    ctx
}

fn once(rt: &tokio::runtime::Runtime, plan: &Arc<Plan>, ctx: RunContext) {
    let outcome = rt
        .block_on(run(plan.clone(), Map::new(), ctx))
        .expect("runs");
    assert_eq!(outcome.end, RunEnd::Completed);
}

fn benches(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let mut group = c.benchmark_group("runtime");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(5));

    let plan = w1();
    group.throughput(Throughput::Elements(1000));
    group.bench_function("w1_set_chain_1000", |b| {
        b.iter(|| once(&rt, &plan, in_memory()))
    });

    let plan = w2();
    group.throughput(Throughput::Elements(1000));
    group.bench_function("w2_for_each_append_1000", |b| {
        b.iter(|| once(&rt, &plan, in_memory()))
    });

    let plan = w3();
    group.throughput(Throughput::Elements(20_000));
    group.bench_function("w3_loop_10000x2", |b| {
        b.iter(|| once(&rt, &plan, in_memory()))
    });

    let plan = w5();
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(8));
    group.throughput(Throughput::Elements(200));
    group.bench_function("w5_200_agents_50ms_c16", |b| {
        b.iter(|| {
            let mut ctx = in_memory();
            ctx.providers = Providers::new().with("p", Arc::new(Sleepy(Duration::from_millis(50))));
            once(&rt, &plan, ctx);
        });
    });
    // The floor W5 is judged against: the same 200 sleeps of 50 ms under a 16-permit
    // semaphore as bare tokio tasks, no engine. tokio's timer has millisecond ticks and
    // rounds a sleep's deadline up, so each wave ends about 1 ms late; this line shows how
    // much of W5's distance from the ideal 650 ms is the timer's and how much atomic's.
    group.bench_function("w5_floor_bare_tokio_tasks", |b| {
        b.iter(|| {
            rt.block_on(async {
                let permits = Arc::new(tokio::sync::Semaphore::new(16));
                let tasks: Vec<_> = (0..200)
                    .map(|_| {
                        let permits = permits.clone();
                        tokio::spawn(async move {
                            let _permit = permits.acquire().await.expect("open semaphore");
                            tokio::time::sleep(Duration::from_millis(50)).await;
                        })
                    })
                    .collect();
                for task in tasks {
                    task.await.expect("the task finishes");
                }
            });
        });
    });
    group.finish();
}

criterion_group!(runtime, benches);

/// `ATOMIC_BENCH_ONCE=w1|w2|w3 target/release/deps/runtime-…` runs that workload once and
/// exits, for instruction counts under `valgrind --tool=callgrind` (wall time is too noisy
/// on a shared machine to compare small changes). `ATOMIC_BENCH_STORE=history` runs it on
/// the [`MemoryStore`] that keeps every step, with events logged, as tests do.
fn main() {
    if let Ok(which) = std::env::var("ATOMIC_BENCH_ONCE") {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        let plan = match which.as_str() {
            "w1" => w1(),
            "w2" => w2(),
            "w3" => w3(),
            other => panic!("ATOMIC_BENCH_ONCE: unknown workload `{other}`"),
        };
        let ctx = match std::env::var("ATOMIC_BENCH_STORE").as_deref() {
            Ok("history") => RunContext::new(Arc::new(MemoryStore::new())),
            _ => in_memory(),
        };
        once(&rt, &plan, ctx);
        return;
    }
    runtime();
    Criterion::default().configure_from_args().final_summary();
}
