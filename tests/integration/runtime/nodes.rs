//! Every node kind and reducer, each through a whole run.

use std::sync::Arc;
use std::time::Instant;

use atomic::ir::*;
use atomic::runtime::{Providers, RunContext, RunEnd, RunOutcome, run};
use serde_json::{Map, json};

use super::build::*;
use super::provider::TestProvider;

pub(crate) async fn go(wf: Wf, ctx: RunContext) -> RunOutcome {
    run(wf.plan(), Map::new(), ctx)
        .await
        .expect("the run starts")
}

#[tokio::test]
async fn a_chain_of_sets_counts_and_commits_every_step() {
    let mut wf = Wf::new("chain").field("n", ValueType::Integer, Some(json!(0)), Reducer::Replace);
    for i in 0..20 {
        wf.add(
            None,
            node(&format!("inc{i}"), set("n", "{{ state.n + 1 }}")),
        );
    }
    let ctx = RunContext::in_memory();
    let store = ctx.store.clone();
    let outcome = go(wf, ctx).await;
    assert_eq!(outcome.end, RunEnd::Completed);
    assert_eq!(outcome.state, json!({"n": 20}));
    assert_eq!(outcome.steps, 20);
    let checkpoint = store.checkpoint(&outcome.run_id).await.unwrap();
    assert_eq!(checkpoint.seq, 20);
    assert_eq!(checkpoint.state["n"], json!(20));
    assert_eq!(checkpoint.run.status, atomic::store::RunStatus::Completed);
}

#[tokio::test]
async fn every_reducer_combines_writes() {
    let mut wf = Wf::new("reducers")
        .field("log", ValueType::Array, Some(json!([])), Reducer::Append)
        .field(
            "obj",
            ValueType::Object,
            Some(json!({"a": 1})),
            Reducer::Merge,
        )
        .field(
            "items",
            ValueType::Array,
            Some(json!([{"id": 1, "v": "a"}])),
            Reducer::MergeBy("id".to_owned()),
        )
        .field("total", ValueType::Integer, Some(json!(0)), Reducer::Sum)
        .field("hi", ValueType::Number, None, Reducer::Max)
        .field("lo", ValueType::Number, None, Reducer::Min)
        .field("all", ValueType::Boolean, Some(json!(true)), Reducer::And)
        .field("any", ValueType::Boolean, Some(json!(false)), Reducer::Or)
        .field(
            "kept",
            ValueType::String,
            Some(json!("x")),
            Reducer::IfDefined,
        );
    wf.wf.state[0].max_items = Some(3);
    for (i, (field, value)) in [
        ("log", "{{ [1, 2] }}"),
        ("log", "{{ 3 }}"),
        ("log", "{{ [4] }}"),
        ("obj", "{{ {'b': 2} }}"),
        ("items", "{{ [{'id': 1, 'v': 'A'}, {'id': 2, 'v': 'b'}] }}"),
        ("total", "{{ 5 }}"),
        ("total", "7"),
        ("hi", "{{ 3 }}"),
        ("hi", "{{ 1 }}"),
        ("lo", "{{ 3 }}"),
        ("lo", "{{ 1 }}"),
        ("all", "{{ false }}"),
        ("all", "{{ true }}"),
        ("any", "{{ true }}"),
        ("any", "{{ false }}"),
        ("kept", "{{ none }}"),
    ]
    .into_iter()
    .enumerate()
    {
        wf.add(None, node(&format!("w{i}"), set(field, value)));
    }
    let outcome = go(wf, RunContext::in_memory()).await;
    assert_eq!(outcome.end, RunEnd::Completed);
    assert_eq!(
        outcome.state,
        json!({
            "log": [2, 3, 4],
            "obj": {"a": 1, "b": 2},
            "items": [{"id": 1, "v": "A"}, {"id": 2, "v": "b"}],
            "total": 12,
            "hi": 3, "lo": 1,
            "all": false, "any": true,
            "kept": "x",
        })
    );
}

#[tokio::test]
async fn a_write_the_reducer_refuses_fails_the_run_with_a_typed_end() {
    let mut wf = Wf::new("bad").field("n", ValueType::Integer, Some(json!(0)), Reducer::Sum);
    wf.add(None, node("oops", set("n", "not a number")));
    let outcome = go(wf, RunContext::in_memory()).await;
    let RunEnd::Failed {
        node,
        class,
        message,
    } = outcome.end
    else {
        panic!("{:?}", outcome.end)
    };
    assert_eq!((node.as_str(), class), ("oops", None));
    assert!(message.contains("`n`"), "{message}");
}

#[tokio::test]
async fn decisions_route_in_order_and_bounded_gotos_loop() {
    let mut wf = Wf::new("route")
        .field("n", ValueType::Integer, Some(json!(0)), Reducer::Replace)
        .field("path", ValueType::Array, Some(json!([])), Reducer::Append);
    let inc = wf.add(None, node("inc", set("n", "{{ state.n + 1 }}")));
    let decide = wf.add(None, node("gate", NodeKind::Decision(Box::default())));
    let big = wf.add(None, node("big", set("path", "big")));
    let small = wf.add(None, node("small", set("path", "small")));
    let NodeKind::Decision(d) = &mut wf.node_mut(decide).kind else {
        unreachable!()
    };
    d.routes = vec![
        route(Some("state.n >= 3"), Jump::Node(big), None),
        route(Some("state.n < 3"), Jump::Node(inc), Some(10)),
    ];
    d.otherwise = Some(route(None, Jump::Node(small), None));
    wf.node_mut(big).goto = Some(Box::new(route(None, Jump::End, None)));
    let outcome = go(wf, RunContext::in_memory()).await;
    assert_eq!(outcome.end, RunEnd::Completed);
    assert_eq!(outcome.state, json!({"n": 3, "path": ["big"]}));
}

#[tokio::test]
async fn loops_honour_until_while_max_and_count_iterations() {
    let mut wf = Wf::new("loops")
        .field("n", ValueType::Integer, Some(json!(0)), Reducer::Replace)
        .field("seen", ValueType::Array, Some(json!([])), Reducer::Append)
        .field("w", ValueType::Integer, Some(json!(0)), Reducer::Sum)
        .field("m", ValueType::Integer, Some(json!(0)), Reducer::Sum);
    let until = wf.add(None, node("until", looped(Some("state.n >= 4"), None, 10)));
    wf.child(until, 0, node("inc", set("n", "{{ state.n + 1 }}")));
    wf.child(until, 0, node("note", set("seen", "{{ run.iteration }}")));
    let while_ = wf.add(None, node("while", looped(None, Some("state.w < 2"), 10)));
    wf.child(while_, 0, node("w1", set("w", "{{ 1 }}")));
    let max = wf.add(None, node("max", looped(Some("false"), None, 5)));
    wf.child(max, 0, node("m1", set("m", "{{ 1 }}")));
    let outcome = go(wf, RunContext::in_memory()).await;
    assert_eq!(outcome.end, RunEnd::Completed);
    assert_eq!(
        outcome.state,
        json!({"n": 4, "seen": [1, 2, 3, 4], "w": 2, "m": 5})
    );
}

#[tokio::test]
async fn tools_run_argv_shell_stdin_env_cwd_and_map_outputs() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("marker.txt"), "here").unwrap();
    let mut wf = Wf::new("tools")
        .field(
            "name",
            ValueType::String,
            Some(json!("world")),
            Reducer::Replace,
        )
        .field("out", ValueType::String, None, Reducer::Replace)
        .field("err", ValueType::String, None, Reducer::Replace)
        .field("code", ValueType::Integer, None, Reducer::Replace)
        .field("json", ValueType::Any, None, Reducer::Replace)
        .field("lines", ValueType::Array, None, Reducer::Replace);
    let mut echo = tool(&["printf", "%s", "hello {{ state.name }}"]);
    echo.outputs = vec![output("out", ParseMode::Text)];
    wf.add(None, node("echo", NodeKind::Tool(Box::new(echo))));
    let mut shell = tool(&["cat; echo \"$GREETING\" >&2; cat marker.txt; exit 3"]);
    shell.shell = true;
    shell.stdin = Some(t("from stdin\n"));
    shell.env = vec![(sp("GREETING".to_owned()), t("hi {{ state.name }}"))];
    shell.ok_codes = vec![3];
    let mut code = output("code", ParseMode::Text);
    code.from = OutputSource::ExitCode;
    let mut err = output("err", ParseMode::Text);
    err.from = OutputSource::Stderr;
    shell.outputs = vec![output("lines", ParseMode::Lines), err, code];
    wf.add(None, node("shell", NodeKind::Tool(Box::new(shell))));
    let mut json_tool = tool(&["echo", "Result: {\"ok\": true}"]);
    json_tool.outputs = vec![output("json", ParseMode::Json)];
    wf.add(None, node("json", NodeKind::Tool(Box::new(json_tool))));
    let mut ctx = RunContext::in_memory();
    ctx.workspace = atomic::workspace::Workspace::new(dir.path().to_path_buf());
    let outcome = go(wf, ctx).await;
    assert_eq!(outcome.end, RunEnd::Completed, "{:?}", outcome.end);
    assert_eq!(outcome.state["out"], json!("hello world"));
    assert_eq!(outcome.state["lines"], json!(["from stdin", "here"]));
    assert_eq!(outcome.state["err"], json!("hi world\n"));
    assert_eq!(outcome.state["code"], json!(3));
    assert_eq!(outcome.state["json"], json!({"ok": true}));
}

#[tokio::test]
async fn a_tool_exit_outside_ok_codes_is_a_tool_exit_error() {
    let mut wf = Wf::new("exit");
    wf.add(
        None,
        node(
            "fails",
            NodeKind::Tool(Box::new(tool(&["sh", "-c", "echo boom >&2; exit 2"]))),
        ),
    );
    let outcome = go(wf, RunContext::in_memory()).await;
    let RunEnd::Failed { class, message, .. } = outcome.end else {
        panic!()
    };
    assert_eq!(class, Some(ErrorClass::ToolExit));
    assert!(
        message.contains("exited with code 2") && message.contains("boom"),
        "{message}"
    );
}

#[tokio::test]
async fn a_tool_timeout_kills_the_whole_process_group() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("grandchild.pid");
    let mut wf = Wf::new("timeout");
    let script = format!("sleep 30 & echo $! > {}; wait", pidfile.display());
    let mut slow = tool(&[&script]);
    slow.shell = true;
    let id = wf.add(None, node("slow", NodeKind::Tool(Box::new(slow))));
    wf.node_mut(id).timeout = Some(sp(Duration(300)));
    let started = Instant::now();
    let outcome = go(wf, RunContext::in_memory()).await;
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    let RunEnd::Failed { class, .. } = outcome.end else {
        panic!("{:?}", outcome.end)
    };
    assert_eq!(class, Some(ErrorClass::Timeout));
    let pid = std::fs::read_to_string(&pidfile).unwrap().trim().to_owned();
    // The grandchild `sleep 30` was in the group and must be gone (allow it to be reaped).
    let mut alive = true;
    for _ in 0..50 {
        let status = std::process::Command::new("kill")
            .args(["-0", &pid])
            .status()
            .unwrap();
        let zombie = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map_or(true, |s| s.contains(") Z"));
        if !status.success() || zombie {
            alive = false;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(!alive, "grandchild {pid} survived the timeout");
}

#[tokio::test]
async fn agents_render_prompts_parse_json_and_record_outputs() {
    let mut wf = Wf::new("agent")
        .provider("fake")
        .field("findings", ValueType::Array, None, Reducer::Replace)
        .field("summary", ValueType::String, None, Reducer::Replace);
    let mut review = agent("Review {{ input.target }}");
    review.outputs = vec![output("findings", ParseMode::Json)];
    wf.add(None, node("review", NodeKind::Agent(Box::new(review))));
    wf.add(
        None,
        node(
            "sum",
            set(
                "summary",
                "{{ outputs.review.text }} ({{ state.findings | length }})",
            ),
        ),
    );
    wf.wf.inputs.push(Input {
        name: sp("target".to_owned()),
        ty: ValueType::String,
        default: Some(json!("src/")),
        default_span: None,
        description: None,
        span: span(),
    });
    let provider = TestProvider::new(|request, _| {
        assert_eq!(request.prompt.text, "Review src/");
        assert_eq!(request.model.as_deref(), Some("test-model"));
        Ok("```json\n[{\"file\": \"a.rs\"}]\n```".to_owned())
    });
    let mut ctx = RunContext::in_memory();
    ctx.providers = Providers::new().with("fake", provider);
    let outcome = go(wf, ctx).await;
    assert_eq!(outcome.end, RunEnd::Completed, "{:?}", outcome.end);
    assert_eq!(outcome.state["findings"], json!([{"file": "a.rs"}]));
    assert_eq!(
        outcome.state["summary"],
        json!("```json\n[{\"file\": \"a.rs\"}]\n``` (1)")
    );
    assert_eq!(outcome.usage.input_tokens, 10);
}

#[tokio::test]
async fn schema_failures_are_typed_and_skip_applies_fallbacks() {
    let mut files = atomic::source::MemoryFiles::new();
    files.insert("/wf/list.json", r#"{"type": "array"}"#);
    let mut wf = Wf::new("schema").provider("fake").field(
        "out",
        ValueType::Any,
        Some(json!("unset")),
        Reducer::Replace,
    );
    let mut review = agent("give me a list");
    let mut out = output("out", ParseMode::Json);
    out.schema = Some(sp("list.json".to_owned()));
    review.outputs = vec![out];
    let id = wf.add(None, node("review", NodeKind::Agent(Box::new(review))));
    wf.node_mut(id).on_error = Some(Box::new(OnError::Skip {
        fallback: vec![Set {
            field: sp("out".to_owned()),
            value: t("{{ 'fallback' }}"),
            is_expr: false,
        }],
        span: span(),
    }));
    let mut ctx = RunContext::in_memory();
    ctx.files = Arc::new(files);
    ctx.base_dir = "/wf".into();
    ctx.providers = Providers::new().with(
        "fake",
        TestProvider::new(|_, _| Ok("{\"not\": \"a list\"}".to_owned())),
    );
    let outcome = go(wf, ctx).await;
    assert_eq!(outcome.end, RunEnd::Completed);
    assert_eq!(outcome.state["out"], json!("fallback"));
}

#[tokio::test]
async fn a_missing_schema_file_is_a_setup_error() {
    let mut wf = Wf::new("noschema").field("out", ValueType::Any, None, Reducer::Replace);
    let mut echo = tool(&["true"]);
    let mut out = output("out", ParseMode::Json);
    out.schema = Some(sp("missing.json".to_owned()));
    echo.outputs = vec![out];
    wf.add(None, node("t", NodeKind::Tool(Box::new(echo))));
    let error = run(wf.plan(), Map::new(), RunContext::in_memory())
        .await
        .unwrap_err();
    assert!(error.to_string().contains("missing.json"), "{error}");
}

#[tokio::test]
async fn inputs_are_required_typed_and_known() {
    let make = || {
        let mut wf = Wf::new("inputs").field("n", ValueType::Integer, None, Reducer::Replace);
        wf.wf.inputs.push(Input {
            name: sp("count".to_owned()),
            ty: ValueType::Integer,
            default: None,
            default_span: None,
            description: None,
            span: span(),
        });
        wf.add(None, node("s", set("n", "{{ input.count * 2 }}")));
        wf.plan()
    };
    let missing = run(make(), Map::new(), RunContext::in_memory())
        .await
        .unwrap_err();
    assert!(
        missing.to_string().contains("input `count` is required"),
        "{missing}"
    );
    let mut bad = Map::new();
    bad.insert("count".to_owned(), json!("x"));
    assert!(run(make(), bad, RunContext::in_memory()).await.is_err());
    let mut unknown = Map::new();
    unknown.insert("cuont".to_owned(), json!(1));
    assert!(
        run(make(), unknown, RunContext::in_memory())
            .await
            .unwrap_err()
            .to_string()
            .contains("`count`")
    );
    let mut good = Map::new();
    good.insert("count".to_owned(), json!("21"));
    let outcome = run(make(), good, RunContext::in_memory()).await.unwrap();
    assert_eq!(outcome.state["n"], json!(42));
}

#[tokio::test]
async fn env_exposes_only_declared_variables() {
    let mut wf = Wf::new("env").field("v", ValueType::String, None, Reducer::Replace);
    wf.wf.env.push(sp("TOKEN".to_owned()));
    wf.add(
        None,
        node("s", set("v", "{{ env.TOKEN }}-{{ env.SECRET is defined }}")),
    );
    let mut ctx = RunContext::in_memory();
    ctx.env.insert("TOKEN".to_owned(), "t1".to_owned());
    ctx.env.insert("SECRET".to_owned(), "s".to_owned());
    let outcome = go(wf, ctx).await;
    assert_eq!(outcome.state["v"], json!("t1-False"));
}

#[tokio::test]
async fn subgraphs_run_the_callee_with_mapped_inputs_and_outputs() {
    struct Loader(Arc<atomic::lower::Plan>);
    impl atomic::runtime::SubgraphLoader for Loader {
        fn load(&self, path: &std::path::Path) -> Result<Arc<atomic::lower::Plan>, String> {
            assert!(path.ends_with("child.kdl"), "{}", path.display());
            Ok(self.0.clone())
        }
    }
    let mut child = Wf::new("child").field("doubled", ValueType::Integer, None, Reducer::Replace);
    child.wf.inputs.push(Input {
        name: sp("x".to_owned()),
        ty: ValueType::Integer,
        default: None,
        default_span: None,
        description: None,
        span: span(),
    });
    child.add(None, node("double", set("doubled", "{{ input.x * 2 }}")));
    let mut parent = Wf::new("parent")
        .field("x", ValueType::Integer, Some(json!(21)), Reducer::Replace)
        .field("result", ValueType::Integer, None, Reducer::Replace);
    parent.add(
        None,
        node(
            "call",
            NodeKind::Subgraph(Box::new(Subgraph {
                workflow: sp("child.kdl".to_owned()),
                path: None,
                inputs: vec![(sp("x".to_owned()), t("{{ state.x }}"))],
                outputs: vec![(sp("result".to_owned()), sp("doubled".to_owned()))],
            })),
        ),
    );
    let mut ctx = RunContext::in_memory();
    ctx.subgraphs = Some(Arc::new(Loader(child.plan())));
    let outcome = go(parent, ctx).await;
    assert_eq!(outcome.end, RunEnd::Completed, "{:?}", outcome.end);
    assert_eq!(outcome.state["result"], json!(42));
}
