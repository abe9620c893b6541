//! The benchmark workflows of issue 3 as KDL text, so the same files run in-process
//! (compiled with `atomic::compile`) and through the `atomic` binary.

// Each benchmark uses some of these.
#![allow(dead_code)]

/// W1: a chain of 1,000 `set` nodes, each incrementing a counter.
pub(crate) fn w1() -> String {
    let mut text =
        String::from("workflow \"w1\" {\n    state { field \"n\" type=\"integer\" default=0 }\n");
    for i in 0..1000 {
        text.push_str(&format!(
            "    set \"n\" expr=\"state.n + 1\" id=\"inc{i}\"\n"
        ));
    }
    text.push_str("}\n");
    text
}

/// W2: `for-each` over 1,000 items, each branch appending one item, then the join.
pub(crate) fn w2() -> String {
    let items: Vec<String> = (0..1000).map(|i| i.to_string()).collect();
    format!(
        r#"workflow "w2" {{
    state {{
        field "items" type="array" default="[{}]"
        field "out" type="array" reduce="append" default="[]"
    }}
    parallel "fan" for-each="state.items" as="item" {{
        set "out" "{{{{ item }}}}" id="body"
    }}
}}
"#,
        items.join(",")
    )
}

/// W3: a 2-node loop (increment, check) for `iterations` iterations, plus `extra` as
/// more state fields (W4 adds a 100 KB constant string).
pub(crate) fn loop_of(name: &str, iterations: u32, extra: &str) -> String {
    format!(
        r#"workflow "{name}" {{
    state {{
        field "n" type="integer" default=0
{extra}    }}
    loop "l" max={iterations} until="state.n >= {iterations}" {{
        set "n" expr="state.n + 1" id="inc"
    }}
}}
"#
    )
}

/// W3: 10,000 iterations.
pub(crate) fn w3() -> String {
    loop_of("w3", 10_000, "")
}

/// W4: W3 for 2,000 iterations with a 100 KB constant string in state.
pub(crate) fn w4() -> String {
    let big = "x".repeat(100 * 1024);
    loop_of(
        "w4",
        2_000,
        &format!("        field \"big\" type=\"string\" default=\"{big}\"\n"),
    )
}

/// W6: a step, a wait, a step.
pub(crate) fn w6() -> String {
    r#"workflow "w6" {
    state {
        field "n" type="integer" default=0
        field "ok" type="boolean" default=#false
    }
    set "n" expr="state.n + 1" id="before"
    wait "approve" prompt="Go on?" answer="yes-no" {
        output "ok"
    }
    set "n" expr="state.n + 1" id="after"
}
"#
    .to_owned()
}

/// W7: `for-each` over 1,000 items, 8 at a time, each branch one agent call of an
/// in-process model with no latency (a step with an effect, so each is committed in its
/// branch), appending the reply.
pub(crate) fn w7() -> String {
    let items: Vec<String> = (0..1000).map(|i| i.to_string()).collect();
    format!(
        r#"workflow "w7" {{
    provider "echo" adapter="in-process"
    state {{
        field "items" type="array" default="[{}]"
        field "out" type="array" reduce="append" default="[]"
    }}
    parallel "fan" for-each="state.items" as="item" max-concurrency=8 {{
        agent "body" provider="echo" {{
            prompt "{{{{ item }}}}"
            output "out"
        }}
    }}
}}
"#,
        items.join(",")
    )
}
