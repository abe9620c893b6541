//! The language server's latency on a 5,000-line workflow (generated, valid):
//!
//! - `lsp/diagnostics-after-edit`: one incremental edit applied to the buffer, then what the
//!   server does before publishing — compile (parse, resolve, analyze, lower, with the
//!   project configuration looked up) and conversion to protocol diagnostics. Target
//!   ≤ 30 ms (the 50 ms debounce comes on top, by design). Freeing the analysis is left
//!   out: the server does it after publishing.
//! - `lsp/completion-after-edit`: what a completion request costs right after typing: a
//!   fresh snapshot (parse + index) of the buffer and the completion itself, inside `{{ }}`.
//!   Target ≤ 10 ms.
//! - `lsp/completion` and `lsp/hover` on an already parsed snapshot.
//! - `lsp/parts/*`: where the time of a check goes (compile, snapshot, parse).
//!
//! Run with `cargo bench --bench lsp`.

#[path = "support/gen.rs"]
mod generator;

use std::collections::HashMap;
use std::hint::black_box;
use std::path::Path;
use std::time::Duration;

use atomic::lsp::{Analysis, Snapshot};
use atomic::source::MemoryFiles;
use criterion::{Criterion, criterion_group, criterion_main};
use tower_lsp_server::ls_types::{Position, Range, TextDocumentContentChangeEvent};

const LINES: usize = 5_000;

/// A generated workflow of at least [`LINES`] lines, with one agent whose prompt is where
/// the edits and completions happen.
fn workflow() -> String {
    let mut nodes = 1_000;
    loop {
        let text = generator::generate_workflow(nodes);
        if text.lines().count() >= LINES {
            let body = text.trim_end().trim_end_matches('}');
            return format!(
                "{body}    agent \"edited\" provider=\"fake\" {{ prompt \"Summarise {{{{ state.count }}}}\"; }}\n}}\n"
            );
        }
        nodes += 250;
    }
}

/// The position just after `{{ state.` in the last agent's prompt.
fn completion_position(text: &str) -> Position {
    let offset = text.rfind("state.count").expect("the edited agent") + "state.".len();
    let line = text[..offset].matches('\n').count();
    let column = offset - text[..offset].rfind('\n').map_or(0, |at| at + 1);
    Position::new(line as u32, column as u32)
}

fn lsp(c: &mut Criterion) {
    let text = workflow();
    let path = Path::new("/bench/flow.kdl");
    let disk = MemoryFiles::new();
    let buffers = HashMap::new();
    let lines = text.lines().count();
    let first = Analysis::new(path, &text, 1, &buffers, &disk, None);
    assert!(
        !first.compiled.has_errors(),
        "the generated workflow checks without errors: {:?}",
        first
            .compiled
            .diagnostics
            .iter()
            .take(3)
            .collect::<Vec<_>>()
    );
    let at = completion_position(&text);
    assert!(lines >= LINES, "{lines} lines");

    let mut group = c.benchmark_group("lsp");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(8));
    // The server frees an analysis after publishing the next one's diagnostics, so the
    // drop is not part of the latency.
    group.bench_function("diagnostics-after-edit", |b| {
        let mut version = 1;
        b.iter_with_large_drop(|| {
            version += 1;
            let mut buffer = text.clone();
            // Type one character into the last prompt (`Summarise` → `Summarisex`).
            atomic::lsp::apply_change(
                &mut buffer,
                TextDocumentContentChangeEvent {
                    range: Some(Range::new(
                        Position::new(at.line, at.character - 10),
                        Position::new(at.line, at.character - 10),
                    )),
                    range_length: None,
                    text: "x".to_owned(),
                },
            );
            let analysis = Analysis::new(path, &buffer, version, &buffers, &disk, None);
            let published = analysis.diagnostics();
            (analysis, published)
        });
    });
    group.bench_function("completion-after-edit", |b| {
        b.iter(|| {
            let snapshot = Snapshot::new(path, black_box(&text), 2);
            black_box(atomic::lsp::completion(&snapshot, at))
        });
    });
    let snapshot = Snapshot::new(path, &text, 1);
    assert!(
        atomic::lsp::completion(&snapshot, at).is_some(),
        "state fields are offered"
    );
    group.bench_function("completion", |b| {
        b.iter(|| black_box(atomic::lsp::completion(&snapshot, black_box(at))));
    });
    group.bench_function("hover", |b| {
        b.iter(|| black_box(atomic::lsp::hover(&snapshot, black_box(at))));
    });
    // Where the time of a check goes.
    group.bench_function("parts/compile", |b| {
        b.iter(|| {
            let mut sources = atomic::source::Sources::new();
            let file = sources.add(path, black_box(text.as_str()));
            atomic::compile::compile(&mut sources, file, &disk, &atomic::compile::Config::new())
        });
    });
    group.bench_function("parts/snapshot", |b| {
        b.iter(|| Snapshot::new(path, black_box(&text), 2));
    });
    group.bench_function("parts/parse", |b| {
        b.iter(|| atomic::syntax::kdl::parse(black_box(&text), atomic::source::SourceId(0)));
    });
    group.finish();
}

criterion_group!(benches, lsp);
criterion_main!(benches);
