//! Fuzzes the whole static pipeline (`compile`: parse → resolve → analyze → lower) on
//! arbitrary bytes, read as UTF-8 with invalid sequences replaced. It must never panic;
//! every diagnostic span (primary and labels) and every span in the resolved workflow must
//! lie within its file, on char boundaries, with `start <= end`; a built plan must render
//! (DOT, Mermaid) and budget without panicking.
//!
//! The input is compiled as `examples/fuzz.kdl`, next to the examples' schema and subgraph
//! files (held in memory), so `schema=` and `workflow=` references resolve as they do in the
//! examples.
//!
//! Run: `cargo +nightly fuzz run compile fuzz/corpus/compile-seed -- -max_total_time=600`
//! in the crate root, after seeding `fuzz/corpus/compile-seed` with the examples and fixtures
//! (see fuzz/README.md).

#![no_main]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use atomic::compile::{Config, compile};
use atomic::lower;
use atomic::source::{MemoryFiles, Sources, Span};
use libfuzzer_sys::fuzz_target;

/// The examples' side files (schemas, subgraphs), keyed as `examples/<rel>`.
fn files() -> &'static MemoryFiles {
    static FILES: OnceLock<MemoryFiles> = OnceLock::new();
    FILES.get_or_init(|| {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut files = MemoryFiles::new();
        for dir in ["examples/schemas", "examples/subgraphs"] {
            let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
                continue;
            };
            for entry in entries.flatten() {
                let path = entry.path();
                if let (Some(name), Ok(text)) = (path.file_name(), std::fs::read_to_string(&path)) {
                    files.insert(Path::new(dir).join(name), text);
                }
            }
        }
        files
    })
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data).into_owned();
    let mut sources = Sources::new();
    let file = sources.add("examples/fuzz.kdl", text);
    let compiled = compile(&mut sources, file, files(), &Config::new());

    for diagnostic in &compiled.diagnostics {
        check(&sources, diagnostic.span, &diagnostic.message);
        for label in &diagnostic.labels {
            check(&sources, label.span, &diagnostic.message);
        }
    }
    if let Some(workflow) = compiled.workflow() {
        let value = serde_json::to_value(workflow).expect("the IR serialises");
        check_ir_spans(&sources, &value);
    }
    if let Some(plan) = &compiled.plan {
        let _ = lower::budget(plan);
        let _ = lower::dot(plan);
        let _ = lower::mermaid(plan);
    }
});

fn check(sources: &Sources, span: Span, what: &str) {
    assert!(
        (span.source.0 as usize) < sources.len(),
        "span {span:?} of {what:?} names no file"
    );
    let text = &sources.get(span.source).text;
    assert!(span.start <= span.end, "reversed span {span:?} of {what:?}");
    assert!(
        span.end as usize <= text.len(),
        "span {span:?} of {what:?} past the end ({} bytes)",
        text.len()
    );
    assert!(
        text.is_char_boundary(span.start as usize) && text.is_char_boundary(span.end as usize),
        "span {span:?} of {what:?} splits a char"
    );
}

/// Every `{source, start, end}` object in the serialised workflow is a span to check.
fn check_ir_spans(sources: &Sources, value: &serde_json::Value) {
    match value {
        serde_json::Value::Object(map) => {
            if map.len() == 3
                && let (Some(source), Some(start), Some(end)) = (
                    map.get("source").and_then(serde_json::Value::as_u64),
                    map.get("start").and_then(serde_json::Value::as_u64),
                    map.get("end").and_then(serde_json::Value::as_u64),
                )
            {
                let span = Span {
                    source: atomic::source::SourceId(source as u32),
                    start: start as u32,
                    end: end as u32,
                };
                check(sources, span, "an IR span");
                return;
            }
            // Option maps and defaults hold the user's JSON, which may look like anything.
            map.iter()
                .filter(|(key, _)| !matches!(key.as_str(), "options" | "default"))
                .for_each(|(_, v)| check_ir_spans(sources, v));
        }
        serde_json::Value::Array(items) => items.iter().for_each(|v| check_ir_spans(sources, v)),
        _ => {}
    }
}
